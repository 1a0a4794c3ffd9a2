-- agentd.render: pure functions from the server's State to text.
-- Turns a State (docs/protocol.md §3) into sidebar lines, highlights and a line -> todo map,
-- formats numbers the way the runtime does (docs/runtime.md §2.8), builds the statusline
-- summary, and edits todo lists as values. Must not touch buffers, windows or the
-- client: everything here is testable without a server.
local protocol = require("agentd.protocol")
local v = require("agentd.store").value

local M = {}

-- Per status of the protocol (agentd.protocol): tests/unit/status_spec.lua checks that
-- every todo and goal status has an entry in each table below, and nothing else.
M.markers = { pending = "[ ]", in_progress = "[~]", done = "[x]" }
M.next_status = { pending = "in_progress", in_progress = "done", done = "pending" }
M.todo_hl = { pending = "AgentdTodoPending", in_progress = "AgentdTodoInProgress", done = "AgentdTodoDone" }
--- hl: highlight of the status word; clock_runs: the goal's active time moves on.
M.goal_status = {
  active = { hl = "AgentdGoalActive", clock_runs = true },
  paused = { hl = "AgentdGoalPaused", clock_runs = false },
  blocked = { hl = "AgentdGoalBlocked", clock_runs = false },
  complete = { hl = "AgentdGoalComplete", clock_runs = false },
  waiting = { hl = "AgentdGoalWaiting", clock_runs = false },
}

--- Whether the active time of a goal with this status moves on (false for an unknown status).
function M.clock_runs(status)
  local s = M.goal_status[status]
  return s ~= nil and s.clock_runs
end

--- Highlight of a budget's used/limit per level (docs/runtime.md §2.4.4); "none" has none.
M.budget_hl = { warning = "AgentdBudgetWarn", error = "AgentdBudgetError" }

--- How far a budget is spent: "error" from limits.final_budget_warning % of its limit,
--- "warning" from limits.first_budget_warning %, else "none" (also without a limit). The
--- server warns at the same thresholds, counted the same way (used * 100 >= limit * percent).
---@param used number
---@param limit number|nil
---@return string "none"|"warning"|"error"
function M.budget_level(used, limit)
  used, limit = tonumber(used) or 0, tonumber(limit)
  if not limit then
    return "none"
  end
  if used * 100 >= limit * protocol.limits.final_budget_warning then
    return "error"
  end
  return used * 100 >= limit * protocol.limits.first_budget_warning and "warning" or "none"
end

--- "3/7 checked" of a task file's checkboxes, or nil when it has none or is missing
--- (docs/task-files.md, "Checkboxes").
function M.checkboxes(tf)
  local c = tf and v(tf.checkboxes)
  if not c or v(tf.exists) == false or (tonumber(c.total) or 0) == 0 then
    return nil
  end
  return string.format("%d/%d checked", c.checked, c.total)
end

local DONE, COMPLETE = protocol.todo_statuses[3], protocol.goal_statuses[4]

--- The plan line of a goal: its progress from the todo list the sidebar holds (live: a
--- todo change updates it without a goal change) and the task file's checkboxes, and what
--- completion waits for (docs/runtime.md §2.12). Returns the text after "plan " and the
--- note's highlight group, or nil without a list.
function M.plan(goal, items)
  items = v(items) or {}
  if #items == 0 then
    return nil
  end
  local open = 0
  for _, it in ipairs(items) do
    if v(it.status) ~= DONE then
      open = open + 1
    end
  end
  local text = string.format("%d/%d done", #items - open, #items)
  local boxes = M.checkboxes(v(goal.taskFile))
  if boxes then
    text = text .. " · " .. boxes
  end
  if v(goal.requireTodos) == false then
    return text .. "  not required", "AgentdMuted"
  end
  if open > 0 and v(goal.status) ~= COMPLETE then
    return text .. "  completion waits", "AgentdWarn"
  end
  return text, nil
end

local function tenths(t)
  return string.format("%d.%d", math.floor(t / 10), t % 10)
end

--- Tokens as the runtime writes them (goal.FormatTokens): raw below 1000, x.xk below 1M,
--- else x.xM, the decimal truncated (1999 is 1.9k, 999999 is 999.9k). Negative counts are 0.
--- Shared vectors: goal/testdata/format.json (tests/unit/vectors_spec.lua).
---@param n number|nil
---@return string
function M.tokens(n)
  n = math.max(0, math.floor(tonumber(v(n)) or 0))
  if n < 1000 then
    return string.format("%d", n)
  end
  if n < 1000000 then
    return tenths(math.floor(n / 100)) .. "k"
  end
  return tenths(math.floor(n / 100000)) .. "M"
end

--- Elapsed time as the runtime writes it (goal.FormatElapsed): Ns, MmSSs, HhMMm;
--- negative times are 0s. Shared vectors: goal/testdata/format.json.
---@param ms number|nil
---@return string
function M.duration(ms)
  local s = math.floor(math.max(0, tonumber(v(ms)) or 0) / 1000)
  if s < 60 then
    return string.format("%ds", s)
  end
  if s < 3600 then
    return string.format("%dm%02ds", math.floor(s / 60), s % 60)
  end
  return string.format("%dh%02dm", math.floor(s / 3600), math.floor((s % 3600) / 60))
end

--- A budget limit in time, short: 90s, 5m, 1h30m.
function M.duration_limit(ms)
  local s = math.floor((tonumber(v(ms)) or 0) / 1000)
  if s < 60 or s % 60 ~= 0 then
    if s >= 60 then
      return M.duration(ms)
    end
    return string.format("%ds", s)
  end
  local m = s / 60
  if m < 60 then
    return string.format("%dm", m)
  end
  if m % 60 == 0 then
    return string.format("%dh", m / 60)
  end
  return string.format("%dh%02dm", math.floor(m / 60), m % 60)
end

--- One line of text for a buffer line: no newlines, no control characters.
local function oneline(s)
  s = tostring(v(s) or "")
  s = s:gsub("\r\n", " "):gsub("[\r\n]", " "):gsub("%c", " ")
  return s
end
M.oneline = oneline

--- The goal's elapsed wall clock, extrapolated while active.
---@param goal table
---@param elapsed_since_ms number|nil ms since the snapshot was received
function M.goal_elapsed(goal, elapsed_since_ms)
  local ms = tonumber(v(goal.wallClockMs)) or 0
  if M.clock_runs(goal.status) and elapsed_since_ms and elapsed_since_ms > 0 then
    ms = ms + elapsed_since_ms
  end
  return ms
end

--- Status-line summary of the goal, e.g. "goal active 3/20 turns 1.2k tok" ("goal active
--- stalled ..." for a stalled goal, "goal active approve-check ..." while its check waits for
--- approval); "" when no goal.
---@param state table|nil State
---@param opts table|nil {elapsed_since_ms}
---@return string
function M.statusline(state, opts)
  opts = opts or {}
  local goal = state and v(state.goal)
  if not goal then
    return ""
  end
  local b = v(goal.budget) or {}
  local parts = { "goal", oneline(goal.status or "?") }
  if v(goal.stalled) then
    table.insert(parts, "stalled")
  end
  if M.check_waits(goal.check) then
    table.insert(parts, "approve-check")
  end
  local turns = tonumber(v(goal.turnsUsed)) or 0
  if v(b.turnBudget) then
    table.insert(parts, string.format("%d/%d turns", turns, b.turnBudget))
  else
    table.insert(parts, string.format("%d %s", turns, turns == 1 and "turn" or "turns"))
  end
  if v(b.tokenBudget) then
    table.insert(parts, M.tokens(goal.tokensUsed) .. "/" .. M.tokens(b.tokenBudget) .. " tok")
  else
    table.insert(parts, M.tokens(goal.tokensUsed) .. " tok")
  end
  if v(b.wallClockBudgetMs) then
    table.insert(
      parts,
      M.duration(M.goal_elapsed(goal, opts.elapsed_since_ms)) .. "/" .. M.duration_limit(b.wallClockBudgetMs)
    )
  end
  return table.concat(parts, " ")
end

--- Parses the arguments of :AgentdBudget into agentd.goal.setBudget fields.
--- Units: turns, tokens, seconds, minutes, hours (and ms, singular and short forms).
--- A value of none/off/unset removes that budget (JSON null).
---@param value string|number
---@param unit string
---@return table|nil args, string|nil err
function M.parse_budget(value, unit)
  local units = {
    turn = "turns", turns = "turns",
    token = "tokens", tokens = "tokens", tok = "tokens",
    ms = "ms", millisecond = "ms", milliseconds = "ms",
    s = "s", sec = "s", secs = "s", second = "s", seconds = "s",
    m = "m", min = "m", mins = "m", minute = "m", minutes = "m",
    h = "h", hr = "h", hrs = "h", hour = "h", hours = "h",
  }
  local u = units[(unit or ""):lower()]
  if not u then
    return nil, string.format("unknown unit %q (use turns, tokens, seconds, minutes or hours)", tostring(unit))
  end
  local field = (u == "turns" and "turns") or (u == "tokens" and "tokens") or "wallClockMs"
  local sv = tostring(value or ""):lower()
  if sv == "none" or sv == "off" or sv == "unset" or sv == "null" then
    return { [field] = vim.NIL }
  end
  local n = tonumber(value)
  if not n or n ~= n or n <= 0 or n == math.huge then
    return nil, string.format("budget must be a number > 0 (or none), got %q", tostring(value))
  end
  if field == "turns" or field == "tokens" then
    return { [field] = math.max(1, math.floor(n + 0.5)) }
  end
  local factor = ({ ms = 1, s = 1000, m = 60000, h = 3600000 })[u]
  return { wallClockMs = math.floor(n * factor + 0.5) }
end

M.budget_units = { "turns", "tokens", "seconds", "minutes", "hours" }

-- Todo list edits: each returns a fresh list of {title, status}; the input is untouched.

local function copy_items(items)
  local out = {}
  for _, it in ipairs(items or {}) do
    table.insert(out, { title = it.title, status = it.status })
  end
  return out
end
M.copy_items = copy_items

local function check_index(items, idx)
  if type(idx) ~= "number" or idx < 1 or idx > #items then
    error(string.format("no todo item %s", tostring(idx)), 0)
  end
end

function M.cycle(items, idx)
  local out = copy_items(items)
  check_index(out, idx)
  out[idx].status = M.next_status[out[idx].status] or "pending"
  return out
end

function M.set_status(items, idx, status)
  local out = copy_items(items)
  check_index(out, idx)
  out[idx].status = status
  return out
end

function M.rename(items, idx, title)
  local out = copy_items(items)
  check_index(out, idx)
  out[idx].title = title
  return out
end

function M.delete(items, idx)
  local out = copy_items(items)
  check_index(out, idx)
  table.remove(out, idx)
  return out
end

--- Adds a pending item after position `after` (0 = first; nil = at the end).
function M.add(items, title, after)
  local out = copy_items(items)
  local pos = after and math.max(0, math.min(after, #out)) or #out
  table.insert(out, pos + 1, { title = title, status = "pending" })
  return out
end

--- Moves item idx by delta (-1 up, +1 down); returns the list and the new index.
function M.move(items, idx, delta)
  local out = copy_items(items)
  check_index(out, idx)
  local to = math.max(1, math.min(#out, idx + delta))
  local it = table.remove(out, idx)
  table.insert(out, to, it)
  return out, to
end

-- Consent: a check waiting for approval, a team file waiting for acceptance.

-- Characters that change how text looks without showing themselves: control characters
-- other than tab and newline, C1 controls, bidirectional marks, embeddings, overrides and
-- isolates, zero-width characters, the Unicode line and paragraph separators (UTF-8 bytes).
local hidden_chars = {
  "[%z\1-\8\11-\31\127]",
  "\194[\128-\159]", -- U+0080..U+009F
  "\216\156", -- U+061C
  "\226\128[\139-\143]", -- U+200B..U+200F
  "\226\128[\168-\174]", -- U+2028..U+202E
  "\226\129[\160-\164]", -- U+2060..U+2064
  "\226\129[\166-\169]", -- U+2066..U+2069
  "\239\187\191", -- U+FEFF
}

local function codepoint(c)
  local b1, b2, b3 = c:byte(1, 3)
  if #c == 1 then
    return b1
  elseif #c == 2 then
    return (b1 % 32) * 64 + b2 % 64
  end
  return (b1 % 16) * 4096 + (b2 % 64) * 64 + b3 % 64
end

--- `s` with every character that could hide or reorder what it says written as
--- <U+XXXX>: a person approves the command they read, not one that a right-to-left
--- override or a carriage return disguises. The VS Code extension writes them alike
--- (visibleText). Tabs and newlines stay.
---@param s string
---@return string
function M.visible(s)
  s = tostring(v(s) or "")
  for _, pat in ipairs(hidden_chars) do
    s = s:gsub(pat, function(c)
      return string.format("<U+%04X>", codepoint(c))
    end)
  end
  return s
end

--- M.visible on one line: newlines and tabs become spaces (names, endpoints, hosts).
local function visible_line(s)
  return (M.visible(s):gsub("[\n\t]", " "))
end

--- Who set a check (docs/runtime.md §2.10), "alice on laptop"; "someone unknown (an
--- older record)" when agentd has no record of it. A teammate chooses these strings:
--- each is shown on one line with its hidden characters made visible.
function M.set_by(set_by)
  set_by = v(set_by)
  if type(set_by) ~= "table" then
    return "someone unknown (an older record)"
  end
  local user, host = visible_line(set_by.user), visible_line(set_by.host)
  return (user ~= "" and user or "?") .. " on " .. (host ~= "" and host or "?")
end

--- Whether a check waits for this machine's person's approval: agentd does not run it,
--- and refuses UpdateGoal complete (goal.check_unapproved), until they approve this exact
--- command. Only an explicit approved = false counts: an agentd from before approvals
--- sends no such field.
function M.check_waits(check)
  check = v(check)
  return type(check) == "table" and v(check.approved) == false
end

--- The question of :AgentdApproveCheck (vim.fn.confirm): the command in full, hidden
--- characters made visible, and who set it.
function M.approve_check_prompt(check)
  return table.concat({
    "Approve the goal check?",
    "",
    "agentd will run this command on this machine, as you (sh -c in the workspace folder), before the agent may complete the goal:",
    "",
    M.visible(check.command),
    "",
    "Set by " .. M.set_by(check.setBy) .. ".",
    "Approve only a command you have read and trust. The approval is kept on this machine for this exact text; a changed command asks again.",
  }, "\n")
end

--- The question of :AgentdTeamAccept (vim.fn.confirm): the file, every etcd endpoint it
--- names, and that this machine's etcd credentials will be sent there (docs/team.md).
function M.team_accept_prompt(tf)
  local lines = {
    "Accept this folder's team file (" .. visible_line(tf.path) .. ")?",
    "",
    "agentd will share this folder's goal, queue and todo list through the etcd it names:",
    "",
  }
  for _, e in ipairs(v(tf.endpoints) or {}) do
    table.insert(lines, "  " .. visible_line(e))
  end
  vim.list_extend(lines, {
    "",
    "The etcd credentials configured on this machine will be sent to these endpoints.",
    "Checks set by teammates there still wait for your approval before they run here.",
    "",
    string.format("Team %s, file sha256 %s. A changed file asks again.", visible_line(tf.id), visible_line(tf.sha256)),
  })
  return table.concat(lines, "\n")
end

--- What the plugin adds to a refusal's message, by error code: how to get past it.
M.error_hints = {
  [protocol.errors.goal_already_exists] = "use :AgentdGoal! to replace it",
  [protocol.errors.goal_check_unapproved] = "the goal's check waits for your approval: :AgentdApproveCheck shows it",
  [protocol.errors.caller_agent_shell] = "agentd took this request for an agent's shell: start Neovim from your own terminal, not from inside an agent's shell tool",
}

-- Sidebar rendering.


M.help_line = "x cycle  a add  r rename  dd del  g? more"

--- Lines of a check's output tail the sidebar shows under its last result.
M.check_tail_lines = 4

--- A check run in a few words (docs/runtime.md §2.10): "passed in 12s", "failed: exit 1
--- after 2s", "did not finish (ran 10m00s)" for a run killed or not started (exit -1).
---@param run table {exitCode, durationMs, at, outputTail}
function M.check_summary(run)
  local took = M.duration(tonumber(v(run.durationMs)) or 0)
  local code = tonumber(v(run.exitCode)) or -1
  if code == 0 then
    return "passed in " .. took
  elseif code < 0 then
    return "did not finish (ran " .. took .. ")"
  end
  return string.format("failed: exit %d after %s", code, took)
end

--- "HH:MM:SS" of an RFC 3339 time as the daemon wrote it (its clock's zone), or "".
function M.clock_time(at)
  return type(at) == "string" and at:match("T(%d%d:%d%d:%d%d)") or ""
end

--- The state of a goal's check: "running", "passed", "failed" or "not_run".
function M.check_state(check)
  if v(check.running) then
    return "running"
  end
  local run = v(check.lastRun)
  if not run then
    return "not_run"
  end
  return (tonumber(v(run.exitCode)) == 0) and "passed" or "failed"
end

M.check_hl = { running = "AgentdCheckRunning", passed = "AgentdCheckPassed", failed = "AgentdCheckFailed", not_run = "AgentdMuted" }

--- The sidebar's lines of a team file waiting for acceptance (State.teamFile,
--- docs/team.md), under the header: the file, every etcd endpoint, and the command that
--- accepts it; each line is in res.team_lines (<CR> on one accepts, after a question).
local function team_file_lines(tf, add, res, key_hint)
  if type(tf) ~= "table" then
    return
  end
  if tf.status == "invalid" then
    add("team file not used: " .. visible_line(tf.path) .. " (" .. visible_line(v(tf.error) or "it is not a team file") .. "); local state only", "AgentdWarn")
    return
  end
  res.team_lines[add("team file not accepted: " .. visible_line(tf.path), "AgentdWarn")] = true
  for _, e in ipairs(v(tf.endpoints) or {}) do
    res.team_lines[add("  etcd " .. visible_line(e), "AgentdWarn")] = true
  end
  res.team_lines[add("  local state only until :AgentdTeamAccept" .. key_hint, "AgentdMuted")] = true
end

--- The goal's lines of a check waiting for approval: the words, every line of the
--- command in full (hidden characters made visible: the person must see what they
--- approve), who set it and the command that approves it; each in res.approve_lines.
local function approval_lines(check, add, hl, res, key_hint)
  local l = add("  check waiting for your approval")
  hl(l, 2, 7, "AgentdLabel")
  hl(l, 8, #"  check waiting for your approval", "AgentdWarn")
  res.approve_lines[l] = true
  for i, line in ipairs(vim.split(M.visible(check.command), "\n", { plain = true })) do
    res.approve_lines[add((i == 1 and "        $ " or "          ") .. line)] = true
  end
  res.approve_lines[add("        set by " .. M.set_by(check.setBy), "AgentdMuted")] = true
  res.approve_lines[add("        approve: :AgentdApproveCheck" .. key_hint, "AgentdMuted")] = true
end

--- Renders the sidebar.
---@param state table|nil State, nil when not read yet
---@param opts table|nil {root, connection = "ready"|"starting"|"stopped", error, elapsed_since_ms, help_line, activate_key}
---@return table {lines, highlights = {{line0, col0, col_end, group}}, items = {[lnum] = idx}, item_lines = {[idx] = lnum}, queue = {[lnum] = idx}, queue_lines = {[idx] = lnum}, task_file_line, task_file, check_line, approve_lines = {[lnum] = true}, team_lines = {[lnum] = true}}
function M.sidebar(state, opts)
  opts = opts or {}
  local lines, hls, items, item_lines = {}, {}, {}, {}
  local res = { lines = lines, highlights = hls, items = items, item_lines = item_lines, queue = {}, queue_lines = {}, approve_lines = {}, team_lines = {} }

  local function add(text, group)
    text = oneline(text)
    table.insert(lines, text)
    if group then
      table.insert(hls, { #lines - 1, 0, #text, group })
    end
    return #lines
  end
  local function hl(lnum, s, e, group)
    table.insert(hls, { lnum - 1, s, e, group })
  end

  local name = opts.root and vim.fn.fnamemodify(opts.root, ":t") or "agentd"
  if name == "" then
    name = opts.root or "agentd"
  end
  local session = (state and v(state.session)) or opts.session or "default"
  local head = string.format("agentd  %s  [%s]", name, session)
  -- A team folder whose etcd does not answer: the last state agentd saw
  -- (State.stale; docs/protocol.md §4.3).
  local stale = state and v(state.stale) == true
  if stale then
    head = head .. "  stale"
  end
  local l = add(head)
  hl(l, 0, 6, "AgentdTitle")
  if stale then
    hl(l, #head - 5, #head, "AgentdWarn")
  end
  -- "(or <CR> here)": the sidebar's activate key, which approves or accepts on these lines.
  local key_hint = opts.activate_key and (" (or " .. opts.activate_key .. " here)") or ""
  team_file_lines(state and v(state.teamFile), add, res, key_hint)

  local conn = opts.connection or "ready"
  if conn ~= "ready" then
    local msg = conn == "starting" and "connecting..." or "not connected"
    if opts.error then
      msg = msg .. ": " .. oneline(opts.error)
    end
    add(msg, conn == "starting" and "AgentdMuted" or "AgentdError")
  end
  if not state then
    if conn == "ready" then
      add("reading state...", "AgentdMuted")
    end
    return res
  end
  add("")

  -- Goal.
  local goal = v(state.goal)
  if not goal then
    l = add("Goal  none")
    hl(l, 0, 4, "AgentdSection")
    hl(l, 6, 10, "AgentdMuted")
  else
    local status = oneline(goal.status or "?")
    l = add("Goal  " .. status)
    hl(l, 0, 4, "AgentdSection")
    hl(l, 6, 6 + #status, (M.goal_status[status] or {}).hl or "AgentdMuted")
    for _, ol in ipairs(vim.split(tostring(v(goal.objective) or ""), "\n", { plain = true })) do
      add("  " .. ol)
    end
    if v(goal.completionCriterion) then
      l = add("  done when: " .. goal.completionCriterion)
      hl(l, 2, 12, "AgentdLabel")
    end
    if v(goal.terminalReason) then
      l = add("  reason: " .. goal.terminalReason)
      hl(l, 2, 9, "AgentdLabel")
    end
    if v(goal.wait) then -- what a waiting goal waits for is its reason (docs/runtime.md §2.13)
      l = add(string.format("  waiting since %s (asked by %s; the wall clock %s)", tostring(goal.wait.since), tostring(goal.wait.by), tostring(goal.wait.wallClock)))
      hl(l, 2, 15, "AgentdLabel")
    end
    if v(goal.stalled) then
      l = add("  stalled: no change to the todo list or task file")
      hl(l, 2, 9, "AgentdStalled")
    end
    local elapsed = M.goal_elapsed(goal, opts.elapsed_since_ms)
    local turns = tonumber(v(goal.turnsUsed)) or 0
    add(string.format("  %d %s · %s tokens · %s", turns, turns == 1 and "turn" or "turns", M.tokens(goal.tokensUsed), M.duration(elapsed)))
    local plan, note_hl = M.plan(goal, v(state.todos) and state.todos.items)
    if plan then
      l = add("  plan " .. plan)
      hl(l, 2, 6, "AgentdLabel")
      if note_hl then
        local note = plan:match("  ([%a ]+)$")
        hl(l, #plan + 7 - #note, #plan + 7, note_hl)
      end
    end
    local b = v(goal.budget) or {}
    local rows = {}
    if v(b.turnBudget) then
      table.insert(rows, {
        "turns",
        string.format("%d/%d", turns, b.turnBudget),
        v(b.remainingTurns) and string.format("%d left", b.remainingTurns),
        v(b.turnBudgetReached),
        M.budget_level(turns, b.turnBudget),
      })
    end
    if v(b.tokenBudget) then
      table.insert(rows, {
        "tokens",
        M.tokens(goal.tokensUsed) .. "/" .. M.tokens(b.tokenBudget),
        v(b.remainingTokens) and (M.tokens(b.remainingTokens) .. " left"),
        v(b.tokenBudgetReached),
        M.budget_level(goal.tokensUsed, b.tokenBudget),
      })
    end
    if v(b.wallClockBudgetMs) then
      local remaining = v(b.remainingWallClockMs)
      if remaining and M.clock_runs(goal.status) and opts.elapsed_since_ms then
        remaining = math.max(0, remaining - opts.elapsed_since_ms)
      end
      table.insert(rows, {
        "time",
        M.duration(elapsed) .. "/" .. M.duration_limit(b.wallClockBudgetMs),
        remaining and (M.duration(remaining) .. " left"),
        v(b.wallClockBudgetReached),
        M.budget_level(elapsed, b.wallClockBudgetMs),
      })
    end
    for i, row in ipairs(rows) do
      local prefix = i == 1 and "  budget " or "         "
      local text = string.format("%s%-6s %s", prefix, row[1], row[2])
      if row[3] then
        text = text .. "  " .. row[3]
      end
      if row[4] then
        text = text .. "  reached"
      end
      l = add(text)
      if i == 1 then
        hl(l, 2, 8, "AgentdLabel")
      end
      if M.budget_hl[row[5]] then
        local col = #prefix + 7 -- after the padded name and its space
        hl(l, col, col + #row[2], M.budget_hl[row[5]])
      end
      if row[4] then
        hl(l, #text - 7, #text, "AgentdError")
      end
    end
    local tf = v(goal.taskFile)
    if tf and v(tf.path) then
      local text = "  task file " .. oneline(tf.path)
      local boxes = M.checkboxes(tf)
      if boxes then
        text = text .. "  " .. boxes
      end
      local note
      if v(tf.exists) == false then
        note = "(missing)"
      elseif v(tf.changedSinceLastTurn) then
        note = "(changed)"
      end
      if note then
        text = text .. "  " .. note
      end
      l = add(text)
      hl(l, 2, 11, "AgentdLabel")
      hl(l, 12, 12 + #oneline(tf.path), "AgentdTaskFile")
      if boxes then
        hl(l, 14 + #oneline(tf.path), 14 + #oneline(tf.path) + #boxes, "AgentdMuted")
      end
      if note then
        hl(l, #text - #note, #text, note == "(missing)" and "AgentdError" or "AgentdWarn")
      end
      res.task_file_line = l
      res.task_file = tf.path
    end
    local check = v(goal.check)
    if check and v(check.command) and M.check_waits(check) then
      approval_lines(check, add, hl, res, key_hint)
    elseif check and v(check.command) then
      l = add("  check " .. check.command)
      hl(l, 2, 7, "AgentdLabel")
      res.check_line = l
      local st = M.check_state(check)
      local run = v(check.lastRun)
      local text
      if st == "running" then
        text = "running..."
      elseif run then
        text = M.check_summary(run)
        local at = M.clock_time(v(run.at))
        if at ~= "" then
          text = text .. " · " .. at
        end
      else
        text = "not run yet"
      end
      l = add("        " .. text)
      hl(l, 8, #lines[l], M.check_hl[st])
      if st ~= "running" and run and v(run.outputTail) then
        local tail = vim.split(tostring(run.outputTail):gsub("\n$", ""), "\n", { plain = true })
        for i = math.max(1, #tail - M.check_tail_lines + 1), #tail do
          add("        | " .. tail[i], "AgentdMuted")
        end
      end
      local who = {}
      if v(check.setBy) then
        table.insert(who, "set by " .. M.set_by(check.setBy))
      end
      if v(check.approved) == true then
        table.insert(who, "approved")
      end
      if #who > 0 then
        add("        " .. table.concat(who, " · "), "AgentdMuted")
      end
    end
  end
  add("")

  -- Up next: the goal queue (docs/runtime.md §2.9). Every line of an item maps to it.
  local q = v(state.queue) or {}
  local queued = v(q.items) or {}
  local summary = (#queued == 0 and "none" or (#queued .. " queued")) .. " · auto-advance " .. (v(q.autoAdvance) == false and "off" or "on")
  l = add("Up next  " .. summary)
  hl(l, 0, 7, "AgentdSection")
  hl(l, 9, #lines[l], "AgentdMuted")
  for i, it in ipairs(queued) do
    local prefix = string.format("  %d. ", i)
    l = add(prefix .. oneline(it.objective))
    hl(l, 2, #prefix - 1, "AgentdLabel")
    res.queue[l], res.queue_lines[i] = i, l
    if v(it.completionCriterion) then
      l = add("     done when: " .. it.completionCriterion)
      hl(l, 5, 15, "AgentdLabel")
      res.queue[l] = i
    end
    if v(it.check) then
      l = add("     check: " .. it.check)
      hl(l, 5, 11, "AgentdLabel")
      res.queue[l] = i
    end
  end
  add("")

  -- Todos.
  local todos = v(state.todos) or {}
  local list = v(todos.items) or {}
  local done = 0
  for _, it in ipairs(list) do
    if it.status == "done" then
      done = done + 1
    end
  end
  if #list == 0 then
    l = add("Todos  empty")
    hl(l, 0, 5, "AgentdSection")
    hl(l, 7, 12, "AgentdMuted")
  else
    local summary = string.format("%d/%d done", done, #list)
    l = add("Todos  " .. summary)
    hl(l, 0, 5, "AgentdSection")
    hl(l, 7, 7 + #summary, "AgentdMuted")
  end
  res.todos_line = l
  -- A subagent's list under the item it is linked to; the others after the list
  -- (docs/runtime.md §1.3). Their lines map to no item: only the list is edited.
  local subs, shown = v(todos.subagentLists) or {}, {}
  local function todo_line(indent, it)
    local marker = M.markers[it.status] or ("[" .. oneline(it.status) .. "]")
    l = add(indent .. marker .. " " .. oneline(it.title))
    hl(l, #indent, #indent + #marker, M.todo_hl[it.status] or "AgentdMuted")
    if it.status == "done" then
      hl(l, #indent + 1 + #marker, #lines[l], "AgentdTodoDoneText")
    end
  end
  local function sublists(title, indent)
    for k, sl in ipairs(subs) do
      if not shown[k] and (title == nil or v(sl.parentItem) == title) then
        shown[k] = true
        add(indent .. "subagent " .. oneline(sl.agent), "AgentdMuted")
        for _, it in ipairs(v(sl.items) or {}) do
          todo_line(indent .. "  ", it)
        end
      end
    end
  end
  for i, it in ipairs(list) do
    todo_line("  ", it)
    items[l] = i
    item_lines[i] = l
    sublists(it.title, "      ")
  end
  sublists(nil, "  ")

  local help = opts.help_line
  if help == nil then
    help = M.help_line
  end
  if help and help ~= "" then
    add("")
    add(help, "AgentdMuted")
  end
  return res
end

return M
