// agentd's opencode plugin, written by `agentd setup opencode` (agentd's docs/hooks.md, "opencode"):
// running setup again replaces it, and `agentd setup opencode --remove` deletes it.
//
// opencode has no command hooks; this plugin is the adapter. It runs agentd's hook program once
// per event, without a shell, with one JSON event on stdin, and does what the answer says:
// `context` goes to the model, `prompt` continues the session, `stop` stops it, `deny` refuses a
// tool. Whatever goes wrong, opencode goes on as if the plugin were not there.
import { spawn } from "node:child_process"

const COMMAND = __AGENTD_HOOK_COMMAND__
const TIMEOUT_MS = 10000
const MAX_MESSAGES = 32 // within the 64 the hook remembers, so none is counted twice

// `opencode run` exits when its session first goes idle, so a continuation sent then would never
// run: there agentd is told the session cannot continue. (Its plugins run in its own process,
// whose arguments are bun's, the entry's, then opencode's: `run`, its flags and the prompt.)
const ONE_SHOT = process.argv.slice(2).includes("run")

function hook(event) {
  return new Promise((resolve) => {
    let out = ""
    let child
    try {
      child = spawn(COMMAND[0], COMMAND.slice(1), { stdio: ["pipe", "pipe", "ignore"], timeout: TIMEOUT_MS })
    } catch {
      return resolve({})
    }
    child.on("error", () => resolve({}))
    child.stdout.on("data", (b) => (out += b))
    child.on("close", () => {
      try {
        resolve(out.trim() ? JSON.parse(out) : {})
      } catch {
        resolve({})
      }
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(event))
  })
}

// The completed assistant messages: one per model call, with its output tokens.
function responses(messages) {
  return messages
    .filter((m) => m.info?.role === "assistant" && m.info.time?.completed)
    .slice(-MAX_MESSAGES)
    .map((m) => ({ id: m.info.id, outputTokens: (m.info.tokens?.output ?? 0) + (m.info.tokens?.reasoning ?? 0) }))
}

export const AgentdPlugin = async ({ client, directory }) => {
  const parents = new Map() // a subagent's session id -> its parent's
  const queues = new Map() // a session's events run one after another, in order
  const serial = (sessionID, fn) => {
    const next = (queues.get(sessionID) ?? Promise.resolve()).then(fn, fn)
    queues.set(sessionID, next.catch(() => {}))
    return next
  }
  const history = async (id) => {
    const res = await client.session.messages({ path: { id } })
    return responses(res.data ?? [])
  }
  // send runs the hook on event in its session's turn; withHistory adds the session's responses,
  // read when the event's turn comes.
  const send = (event, withHistory) => {
    const parent = parents.get(event.session_id)
    return serial(event.session_id, async () => {
      const messages = withHistory ? await history(event.session_id) : event.messages
      return hook({ ...event, messages, parent_id: parent, cwd: directory })
    })
  }
  // tell shows the person agentd's reason: on stderr in `opencode run`, else in the TUI.
  const tell = async (text) => {
    if (ONE_SHOT) return process.stderr.write(text + "\n")
    await client.tui.showToast({ body: { message: text, variant: "warning" } })
  }
  const stop = async (id, reason) => {
    await tell(reason).catch(() => {})
    await client.session.abort({ path: { id } })
  }
  // safe runs a hook so that nothing it throws reaches opencode.
  const safe = (fn) => async (...args) => {
    try {
      await fn(...args)
    } catch {}
  }
  return {
    "chat.message": safe(async (input, output) => {
      const id = input.sessionID
      const answer = await send({ event: "prompt", session_id: id, id: output.message.id }, true)
      if (answer.context) {
        const last = output.parts[output.parts.length - 1]
        output.parts.push({ id: (last?.id ?? "prt_") + "agentd", sessionID: id, messageID: output.message.id, type: "text", text: answer.context, synthetic: true })
      }
    }),
    "experimental.chat.messages.transform": safe(async (_input, output) => {
      const id = output.messages[output.messages.length - 1]?.info?.sessionID
      if (!id) return
      const answer = await send({ event: "model", session_id: id, messages: responses(output.messages) })
      if (answer.stop) return stop(id, answer.stop)
      if (answer.context) {
        const last = output.messages[output.messages.length - 1].info
        const info = { id: last.id + "agentd", sessionID: id, role: "user", time: { created: Date.now() }, agent: last.agent, model: last.model }
        output.messages.push({ info, parts: [{ id: "prt_" + last.id.slice(4) + "agentd", sessionID: id, messageID: info.id, type: "text", text: answer.context, synthetic: true }] })
      }
    }),
    // The one hook that throws: a refusal is the tool's error, which the model reads.
    "tool.execute.before": async (input) => {
      let answer = {}
      try {
        answer = await send({ event: "tool", session_id: input.sessionID, id: input.callID, tool: input.tool })
      } catch {}
      if (answer.deny) throw new Error(answer.deny)
    },
    "tool.execute.after": safe(async (input) => {
      if (input.tool !== "todowrite") return
      await send({ event: "todos", session_id: input.sessionID, id: input.callID, todos: input.args?.todos ?? [] })
    }),
    event: safe(async ({ event }) => {
      const p = event.properties ?? {}
      if ((event.type === "session.created" || event.type === "session.updated") && p.info?.parentID) {
        parents.set(p.info.id, p.info.parentID)
      } else if (event.type === "session.idle") {
        const answer = await send({ event: "idle", session_id: p.sessionID, one_shot: ONE_SHOT }, true)
        if (answer.stop) await tell(answer.stop)
        if (answer.prompt) await client.session.promptAsync({ path: { id: p.sessionID }, body: { parts: [{ type: "text", text: answer.prompt }] } })
      } else if (event.type === "session.error" && p.sessionID) {
        const error = { name: p.error?.name ?? "", message: p.error?.data?.message ?? "" }
        await send({ event: "error", session_id: p.sessionID, error }, true)
      } else if (event.type === "session.deleted" && p.info?.id) {
        await send({ event: "end", session_id: p.info.id })
      }
    }),
  }
}
