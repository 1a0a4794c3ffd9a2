-- Pure text of the history buffer and of undo (agentd.history), on events shaped as
-- agentd.history answers them (docs/protocol.md §3.2).
local history = require("agentd.history")

local function goal(over)
  return vim.tbl_deep_extend("force", {
    objective = "Port the parser", status = "active", turnsUsed = 2, tokensUsed = 1500, wallClockMs = 65000,
    terminalReason = vim.NIL, completionCriterion = vim.NIL,
  }, over or {})
end

local at = "2026-03-01T09:00:05.123Z"

local todo_write = {
  seq = 2, at = at, actor = "model", kind = "todo.write", revision = 2,
  before = { items = { { title = "plan", status = "pending" } } },
  payload = { items = { { title = "plan", status = "done" }, { title = "build", status = "in_progress" } }, agent = "main" },
}

local pause = {
  seq = 4, at = at, actor = "user", kind = "goal.pause", reason = "lunch", revision = 4,
  before = { goal = goal() },
  payload = { { kind = "pause", status = "paused", reason = "lunch", actor = "user", goal = goal({ status = "paused", terminalReason = "lunch" }) } },
}

local cancel = {
  seq = 5, at = at, actor = "user", kind = "goal.cancel", reason = "cancelled by the user", revision = 5,
  before = { goal = goal({ status = "paused" }) },
  payload = { { kind = "cancel", status = "", actor = "user", goal = goal({ status = "paused" }) } },
}

test("a line says when, who and what changed", function()
  H.eq("2026-03-01 09:00:05  the agent  todo list written (2 items)", history.line(todo_write))
  H.eq("2026-03-01 09:00:05  you        goal paused: lunch", history.line(pause))
  local create = { seq = 1, at = at, actor = "user", kind = "goal.create", payload = { { kind = "create", status = "active", goal = goal() } } }
  H.eq("goal created: Port the parser", history.summary(create))
  H.eq("goal.advance", history.summary({ seq = 9, at = at, actor = "runtime", kind = "goal.advance" }))
end)

test("before and after of a todo and a goal event", function()
  H.eq({ before = { "[ ] plan" }, after = { "[x] plan", "[~] build" } }, history.sides(todo_write))
  local s = history.sides(pause)
  H.eq({ "objective: Port the parser", "status: active", "used: 2 turns · 1.5k tokens" }, s.before)
  H.eq({ "objective: Port the parser", "status: paused", "reason: lunch", "used: 2 turns · 1.5k tokens" }, s.after)
  H.eq({ "no goal" }, history.sides(cancel).after, "a cancel leaves no goal")
end)

test("an event of an older agentd says its before was not recorded; JSON null reads as none", function()
  local old = { seq = 1, at = at, actor = "user", kind = "todo.set", before = vim.NIL, payload = { items = {} } }
  H.eq({ before = { "(not recorded: this change was stored by an older agentd)" }, after = { "todo list is empty" } }, history.sides(old))
  local created = { seq = 1, at = at, actor = "user", kind = "goal.create", before = { goal = vim.NIL },
    payload = { { kind = "create", status = "active", goal = goal() } } }
  H.eq({ "no goal" }, history.sides(created).before)
end)

test("the detail lines and the undo message", function()
  H.eq({ "#4 goal.pause by you at 2026-03-01 09:00:05", "lunch", "", "Before", "  objective: Port the parser", "  status: active",
    "  used: 2 turns · 1.5k tokens", "After", "  objective: Port the parser", "  status: paused", "  reason: lunch",
    "  used: 2 turns · 1.5k tokens" }, history.detail_lines(pause))
  H.eq('undid "goal paused: lunch" (#4, by you)', history.undone_message(pause))
end)
