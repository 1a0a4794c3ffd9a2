-- Client-side state rules (agentd.store): revision gaps, stale notifications, sessions,
-- and the rebase rule of queued todo edits.
local store = require("agentd.store")

local function base(rev)
  local s = store.new("default")
  store.set_state(s, {
    workspace = "file:///w", session = "default", revision = rev,
    todos = { revision = rev, items = { { title = "a", status = "pending" } } },
  })
  return s
end

test("value reads a JSON null (vim.NIL) as nil and keeps every other value", function()
  H.eq(nil, store.value(vim.NIL))
  H.eq(nil, store.value(nil))
  H.eq(false, store.value(false))
  H.eq(0, store.value(0))
  H.eq("x", store.value("x"))
end)

test("before the first read every notification asks for a read", function()
  local s = store.new("default")
  H.eq("gap", store.classify(s, { session = "default", revision = 1, items = {} }))
end)

test("next revision applies, same applies, older is stale, a jump is a gap", function()
  local s = base(5)
  H.eq("apply", store.classify(s, { session = "default", revision = 6 }))
  H.eq("apply", store.classify(s, { session = "default", revision = 5 }))
  H.eq("stale", store.classify(s, { session = "default", revision = 4 }))
  H.eq("gap", store.classify(s, { session = "default", revision = 8 }))
  H.eq("gap", store.classify(s, { session = "default" }))
  H.eq("ignore", store.classify(s, { session = "other", revision = 6 }))
  H.eq("ignore", store.classify(s, nil))
end)

test("apply: todoChanged, goalChanged, taskFileChanged", function()
  local s = base(5)
  store.apply(s, "agentd/todoChanged", { session = "default", revision = 6, items = { { title = "b", status = "done" } }, actor = "model" })
  H.eq(6, s.revision)
  H.eq({ revision = 6, items = { { title = "b", status = "done" } } }, s.state.todos)
  store.apply(s, "agentd/goalChanged", { session = "default", revision = 7, goal = { objective = "x", status = "active" }, change = { kind = "created", actor = "user" } })
  H.eq("x", s.state.goal.objective)
  H.eq(7, s.state.revision)
  H.eq(6, s.state.todos.revision, "a goal change leaves todos.revision")
  store.apply(s, "agentd/taskFileChanged", { session = "default", revision = 7, path = "T.md", exists = false, changedAt = "t" })
  H.eq({ path = "T.md", exists = false, changedAt = "t" }, s.state.goal.taskFile)
  store.apply(s, "agentd/goalChanged", { session = "default", revision = 8, goal = vim.NIL })
  H.eq(nil, s.state.goal)
end)

test("apply: todoChanged carries the subagent lists (docs/runtime.md §1.3), and drops them when absent", function()
  local s = base(5)
  local lists = { { agent = "agent-7", parentItem = "b", items = { { title = "c", status = "pending" } } } }
  store.apply(s, "agentd/todoChanged", { session = "default", revision = 6, items = { { title = "b", status = "in_progress" } }, actor = "model", subagentLists = lists })
  H.eq(lists, s.state.todos.subagentLists)
  store.apply(s, "agentd/todoChanged", { session = "default", revision = 7, items = {}, actor = "user" })
  H.eq(nil, s.state.todos.subagentLists)
end)

test("set_state keeps the newer state unless forced", function()
  local s = base(5)
  H.eq(false, store.set_state(s, { revision = 4, todos = { revision = 4, items = {} } }))
  H.eq(5, s.revision)
  H.eq(true, store.set_state(s, { revision = 4, todos = { revision = 4, items = {} } }, true))
  H.eq(4, s.revision)
  H.eq(true, store.set_state(s, { revision = 9, todos = vim.NIL, goal = vim.NIL }))
  H.eq({ items = {}, revision = 0 }, s.state.todos)
  H.eq(nil, s.state.goal)
end)

test("queued edits rebase only over our own writes", function()
  local s = base(5)
  H.eq(true, store.edit_applies(s, 5))
  -- Our write 5 -> 6, then a key pressed while the list still showed 5.
  store.record_own_write(s, 5, 6)
  store.set_state(s, { revision = 6, todos = { revision = 6, items = {} } })
  H.eq(true, store.edit_applies(s, 5))
  H.eq(true, store.edit_applies(s, 6))
  -- Someone else writes 7: an edit based on 5 or 6 no longer applies.
  store.set_state(s, { revision = 7, todos = { revision = 7, items = {} } })
  H.eq(false, store.edit_applies(s, 5))
  H.eq(false, store.edit_applies(s, 6))
  H.eq(true, store.edit_applies(s, 7))
end)

test("apply: queueChanged replaces the queue, the goal and todos stay; a state without a queue reads as empty", function()
  local s = base(5)
  H.eq({ items = {}, autoAdvance = true }, s.state.queue, "a State without a queue")
  local todos = s.state.todos
  store.apply(s, "agentd/queueChanged", {
    session = "default", revision = 6, actor = "user", autoAdvance = false,
    items = { { id = "q1", objective = "docs", addedAt = "t" } },
  })
  H.eq({ items = { { id = "q1", objective = "docs", addedAt = "t" } }, autoAdvance = false }, s.state.queue)
  H.eq(6, s.revision)
  H.eq(todos, s.state.todos, "a queue change leaves the todos")
end)
