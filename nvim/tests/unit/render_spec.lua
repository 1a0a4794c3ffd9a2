-- Pure rendering and formatting (agentd.render).
local render = require("agentd.render")

local function goal(over)
  local g = {
    goalId = "g1",
    objective = "Ship the parser",
    status = "active",
    turnsUsed = 3,
    tokensUsed = 1234,
    wallClockMs = 252000,
    budget = {
      tokenBudget = vim.NIL, turnBudget = 20, wallClockBudgetMs = vim.NIL,
      remainingTokens = vim.NIL, remainingTurns = 17, remainingWallClockMs = vim.NIL,
      tokenBudgetReached = false, turnBudgetReached = false, wallClockBudgetReached = false, overBudget = false,
    },
    createdAt = "2026-01-01T00:00:00Z", updatedAt = "2026-01-01T00:00:00Z", lastActor = "user",
  }
  return vim.tbl_deep_extend("force", g, over or {})
end

local function state(over)
  return vim.tbl_deep_extend("force", {
    workspace = "file:///w", session = "default", revision = 7,
    todos = { revision = 5, items = {
      { title = "write parser", status = "done" },
      { title = "write tests", status = "in_progress" },
      { title = "docs", status = "pending" },
    } },
    goal = goal(),
  }, over or {})
end

test("tokens: raw below 1000, x.xk below 1M, else x.xM", function()
  H.eq("0", render.tokens(0))
  H.eq("999", render.tokens(999))
  H.eq("1.0k", render.tokens(1000))
  H.eq("1.2k", render.tokens(1234))
  H.eq("999.9k", render.tokens(999949))
  H.eq("999.9k", render.tokens(999950))
  H.eq("2.5M", render.tokens(2500000))
  H.eq("0", render.tokens(vim.NIL))
end)

test("duration: Ns, MmSSs, HhMMm", function()
  H.eq("0s", render.duration(0))
  H.eq("59s", render.duration(59999))
  H.eq("1m00s", render.duration(60000))
  H.eq("4m12s", render.duration(252000))
  H.eq("1h00m", render.duration(3600000))
  H.eq("2h05m", render.duration(7500000))
  H.eq("30m", render.duration_limit(1800000))
  H.eq("1h", render.duration_limit(3600000))
  H.eq("1h30m", render.duration_limit(5400000))
  H.eq("45s", render.duration_limit(45000))
end)

test("statusline: goal summary, empty without goal", function()
  H.eq("", render.statusline(nil))
  H.eq("", render.statusline(state({ goal = vim.NIL })))
  local s = state()
  s.goal = nil
  H.eq("", render.statusline(s))
  H.eq("goal active 3/20 turns 1.2k tok", render.statusline(state()))
  local g = state()
  g.goal.budget.turnBudget = vim.NIL
  g.goal.budget.tokenBudget = 50000
  g.goal.status = "paused"
  H.eq("goal paused 3 turns 1.2k/50.0k tok", render.statusline(g))
  local t = state()
  t.goal.budget.wallClockBudgetMs = 3600000
  H.eq("goal active 3/20 turns 1.2k tok 4m12s/1h", render.statusline(t))
  -- Elapsed time runs on while active.
  H.eq("goal active 3/20 turns 1.2k tok 4m22s/1h", render.statusline(t, { elapsed_since_ms = 10000 }))
end)

test("parse_budget: units to setBudget fields", function()
  H.eq({ turns = 20 }, render.parse_budget("20", "turns"))
  H.eq({ turns = 1 }, render.parse_budget("0.2", "turn"))
  H.eq({ tokens = 50000 }, render.parse_budget("50000", "tokens"))
  H.eq({ wallClockMs = 90000 }, render.parse_budget("90", "seconds"))
  H.eq({ wallClockMs = 1800000 }, render.parse_budget("30", "minutes"))
  H.eq({ wallClockMs = 5400000 }, render.parse_budget("1.5", "hours"))
  H.eq({ wallClockMs = 7200000 }, render.parse_budget("2", "h"))
  H.eq({ turns = vim.NIL }, render.parse_budget("none", "turns"))
  local args, err = render.parse_budget("10", "parsecs")
  H.eq(nil, args)
  H.contains(err, "unknown unit")
  args, err = render.parse_budget("-3", "turns")
  H.eq(nil, args)
  H.contains(err, "> 0")
  args, err = render.parse_budget("abc", "turns")
  H.eq(nil, args)
  H.contains(err, "abc")
end)

test("todo edits return new lists and leave the input alone", function()
  local items = { { title = "a", status = "pending", extra = 1 }, { title = "b", status = "done" } }
  local snapshot = vim.deepcopy(items)
  H.eq({ { title = "a", status = "in_progress" }, { title = "b", status = "done" } }, render.cycle(items, 1))
  H.eq("pending", render.cycle(items, 2)[2].status)
  H.eq("done", render.cycle(render.cycle(items, 1), 1)[1].status)
  H.eq({ { title = "A", status = "pending" }, { title = "b", status = "done" } }, render.rename(items, 1, "A"))
  H.eq({ { title = "b", status = "done" } }, render.delete(items, 1))
  H.eq("c", render.add(items, "c")[3].title)
  H.eq("pending", render.add(items, "c")[3].status)
  H.eq("c", render.add(items, "c", 1)[2].title)
  H.eq("c", render.add(items, "c", 0)[1].title)
  local moved, to = render.move(items, 1, 1)
  H.eq({ "b", "a" }, { moved[1].title, moved[2].title })
  H.eq(2, to)
  local _, to2 = render.move(items, 1, -1)
  H.eq(1, to2)
  H.eq(snapshot, items)
  H.raises(function()
    render.cycle(items, 3)
  end, "no todo item 3")
end)

test("sidebar: a stale state (team store unreachable) says so in the header", function()
  local st = state()
  st.stale = true
  local res = render.sidebar(st, { root = "/home/u/proj", connection = "ready" })
  H.eq("agentd  proj  [default]  stale", res.lines[1])
  local warned = false
  for _, h in ipairs(res.highlights) do
    if h[1] == 0 and h[4] == "AgentdWarn" then
      warned = res.lines[1]:sub(h[2] + 1, h[3]) == "stale"
    end
  end
  H.ok(warned, "the word stale is highlighted AgentdWarn")
  H.eq("agentd  proj  [default]", render.sidebar(state(), { root = "/home/u/proj", connection = "ready" }).lines[1])
end)

test("sidebar: goal block and todo list with markers and a line map", function()
  local res = render.sidebar(state(), { root = "/home/u/proj", connection = "ready" })
  local text = table.concat(res.lines, "\n")
  H.contains(res.lines[1], "agentd  proj  [default]")
  H.contains(text, "Goal  active")
  H.contains(text, "  Ship the parser")
  H.contains(text, "3 turns · 1.2k tokens · 4m12s")
  H.contains(text, "budget turns  3/20  17 left")
  H.contains(text, "Todos  1/3 done")
  H.contains(text, "  [x] write parser")
  H.contains(text, "  [~] write tests")
  H.contains(text, "  [ ] docs")
  H.eq(3, vim.tbl_count(res.items))
  for idx, lnum in pairs(res.item_lines) do
    H.eq(idx, res.items[lnum])
  end
  H.contains(res.lines[res.item_lines[2]], "write tests")
  for _, l in ipairs(res.lines) do
    H.ok(not l:find("\n"), "no newline inside a line")
  end
  for _, h in ipairs(res.highlights) do
    H.ok(h[1] >= 0 and h[1] < #res.lines, "highlight line in range")
    H.ok(h[2] >= 0 and h[3] <= #res.lines[h[1] + 1], "highlight columns in range: " .. vim.inspect(h))
  end
end)

test("sidebar: a subagent's list nested under its item, unlinked ones after the list", function()
  local st = state()
  st.todos.subagentLists = {
    { agent = "agent-7", parentItem = "write tests", items = { { title = "read the grammar", status = "done" } } },
    { agent = "agent-8", items = { { title = "look around", status = "pending" } } },
  }
  local res = render.sidebar(st, { root = "/home/u/proj", connection = "ready" })
  local text = table.concat(res.lines, "\n")
  H.contains(text, "  [~] write tests\n      subagent agent-7\n        [x] read the grammar\n  [ ] docs\n  subagent agent-8\n    [ ] look around")
  H.eq(3, vim.tbl_count(res.items))
end)

test("sidebar: reason, criterion, all budgets, task file", function()
  local s = state()
  s.goal.status = "blocked"
  s.goal.completionCriterion = "all tests pass"
  s.goal.terminalReason = "turn budget reached (20)"
  s.goal.budget.tokenBudget = 2000
  s.goal.budget.remainingTokens = 766
  s.goal.budget.wallClockBudgetMs = 3600000
  s.goal.budget.remainingWallClockMs = 3348000
  s.goal.budget.turnBudgetReached = true
  s.goal.taskFile = { path = "TASK.md", exists = true, changedSinceLastTurn = true }
  local res = render.sidebar(s, { root = "/w" })
  local text = table.concat(res.lines, "\n")
  H.contains(text, "Goal  blocked")
  H.contains(text, "done when: all tests pass")
  H.contains(text, "reason: turn budget reached (20)")
  H.contains(text, "tokens 1.2k/2.0k  766 left")
  H.contains(text, "time   4m12s/1h  55m48s left")
  H.contains(text, "3/20  17 left  reached")
  H.contains(text, "task file TASK.md  (changed)")
  H.eq("TASK.md", res.task_file)
  H.contains(res.lines[res.task_file_line], "TASK.md")
  s.goal.taskFile = { path = "gone.md", exists = false }
  H.contains(table.concat(render.sidebar(s, {}).lines, "\n"), "task file gone.md  (missing)")
end)

--- The highlight groups of the line of res that contains text, as {group = highlighted text}.
local function groups_on(res, text)
  for lnum, line in ipairs(res.lines) do
    if line:find(text, 1, true) then
      local out = {}
      for _, h in ipairs(res.highlights) do
        if h[1] == lnum - 1 then
          out[h[4]] = line:sub(h[2] + 1, h[3])
        end
      end
      return out
    end
  end
  error("no line with " .. text)
end

test("budget_level: warning from 50 %, error from 80 %, as the server warns", function()
  H.eq("none", render.budget_level(4, 10))
  H.eq("warning", render.budget_level(5, 10))
  H.eq("warning", render.budget_level(7, 10))
  H.eq("error", render.budget_level(8, 10))
  H.eq("none", render.budget_level(1000, nil))
  H.eq("none", render.budget_level(1000, vim.NIL))
end)

test("sidebar: budgets coloured by level; stall line; checkbox counts", function()
  local s = state()
  s.goal.turnsUsed = 10 -- of 20: 50 %
  s.goal.tokensUsed = 900
  s.goal.budget.tokenBudget = 1000 -- 90 %
  s.goal.budget.remainingTokens = 100
  s.goal.budget.wallClockBudgetMs = 3600000 -- 4m12s of 1h: 7 %
  s.goal.budget.remainingWallClockMs = 3348000
  s.goal.stalled = true
  s.goal.taskFile = { path = "TASK.md", exists = true, changedSinceLastTurn = true, checkboxes = { checked = 3, total = 7 } }
  local res = render.sidebar(s, { root = "/w" })
  H.eq("10/20", groups_on(res, "budget turns").AgentdBudgetWarn)
  H.eq("900/1.0k", groups_on(res, "tokens 900/1.0k").AgentdBudgetError)
  local time = groups_on(res, "time   4m12s/1h")
  H.ok(time.AgentdBudgetWarn == nil and time.AgentdBudgetError == nil, "no colour at 7 %")
  H.eq("stalled", groups_on(res, "stalled: no change to the todo list or task file").AgentdStalled)
  local tf = groups_on(res, "task file TASK.md  3/7 checked  (changed)")
  H.eq("3/7 checked", tf.AgentdMuted)
  H.eq("(changed)", tf.AgentdWarn)
  H.eq("goal active stalled 10/20 turns 900/1.0k tok 4m12s/1h", render.statusline(s))
  s.goal.stalled = false
  s.goal.taskFile = { path = "TASK.md", exists = false, checkboxes = { checked = 3, total = 7 } }
  local text = table.concat(render.sidebar(s, {}).lines, "\n")
  H.not_contains(text, "stalled")
  H.not_contains(text, "checked", "no counts for a missing file")
  H.eq(nil, render.checkboxes({ path = "x", exists = true }))
end)

test("sidebar: no goal, empty list, multi-line text kept on one line each", function()
  local s = state({ goal = vim.NIL })
  s.goal = nil
  s.todos = { revision = 0, items = {} }
  local res = render.sidebar(s, { root = "/w" })
  local text = table.concat(res.lines, "\n")
  H.contains(text, "Goal  none")
  H.contains(text, "Todos  empty")
  H.eq({}, res.items)
  s.todos.items = { { title = "two\nlines", status = "pending" } }
  s.goal = goal({ objective = "line one\nline two" })
  res = render.sidebar(s, {})
  text = table.concat(res.lines, "\n")
  H.contains(text, "[ ] two lines")
  H.contains(text, "  line one\n  line two")
end)

test("sidebar: connection states", function()
  local res = render.sidebar(nil, { root = "/w", connection = "starting" })
  H.contains(table.concat(res.lines, "\n"), "connecting...")
  res = render.sidebar(nil, { root = "/w", connection = "stopped", error = "agentd not found on PATH" })
  H.contains(table.concat(res.lines, "\n"), "not connected: agentd not found on PATH")
  res = render.sidebar(state(), { root = "/w", connection = "stopped", error = "server exited (code 1)" })
  local text = table.concat(res.lines, "\n")
  H.contains(text, "not connected: server exited (code 1)")
  H.contains(text, "[x] write parser", "the last state stays visible")
end)

test("check: summary of a run, and the sidebar lines of a check", function()
  H.eq("passed in 12s", render.check_summary({ exitCode = 0, durationMs = 12000 }))
  H.eq("failed: exit 2 after 1m01s", render.check_summary({ exitCode = 2, durationMs = 61000 }))
  H.eq("did not finish (ran 10m00s)", render.check_summary({ exitCode = -1, durationMs = 600000 }))
  local function lines(check)
    local res = render.sidebar(state({ goal = goal({ check = check }) }), { help_line = false })
    return table.concat(res.lines, "\n"), res
  end
  local text, res = lines({ command = "go test ./..." })
  H.contains(text, "  check go test ./...\n        not run yet")
  H.eq("  check go test ./...", res.lines[res.check_line])
  text = lines({ command = "make", running = true, lastRun = { exitCode = 1, durationMs = 2000, at = "2026-03-01T09:00:05+01:00", outputTail = "old\n" } })
  H.contains(text, "  check make\n        running...")
  H.not_contains(text, "old", "no stale tail while it runs")
  local tail = "1\n2\n3\n4\n5\n--- FAIL: TestX\n"
  text = lines({ command = "make lint", lastRun = { exitCode = 1, durationMs = 2000, at = "2026-03-01T09:00:05+01:00", outputTail = tail } })
  H.contains(text, "  check make lint\n        failed: exit 1 after 2s · 09:00:05\n        | 3\n        | 4\n        | 5\n        | --- FAIL: TestX")
  H.not_contains(text, "| 2")
  local _, r = lines({ command = "make", lastRun = { exitCode = 0, durationMs = 0, at = "2026-03-01T09:00:05Z", outputTail = "" } })
  local found
  for _, h in ipairs(r.highlights) do
    if h[1] == r.check_line and h[4] == "AgentdCheckPassed" then
      found = true
    end
  end
  H.ok(found, "the passed run is highlighted AgentdCheckPassed: " .. vim.inspect(r.highlights))
  H.not_contains(table.concat(render.sidebar(state(), {}).lines, "\n"), "check", "no check lines without a check")
end)

test("sidebar: Up next lists the queue between the goal and the todos, each line mapped to its item", function()
  local s = state({ queue = { autoAdvance = false, items = {
    { id = "q1", objective = "Document the parser", completionCriterion = "docs build", check = "make docs", addedAt = "t" },
    { id = "q2", objective = "Tag the release", addedAt = "t" },
  } } })
  local res = render.sidebar(s, { root = "/w" })
  local text = table.concat(res.lines, "\n")
  H.contains(text, "Up next  2 queued · auto-advance off\n  1. Document the parser\n     done when: docs build\n     check: make docs\n  2. Tag the release\n")
  local up = text:find("Up next", 1, true)
  H.ok(text:find("Goal  active", 1, true) < up and up < text:find("Todos", 1, true), "Up next sits between Goal and Todos")
  local first = res.queue_lines[1]
  H.eq("  1. Document the parser", res.lines[first])
  H.eq(1, res.queue[first + 1], "the criterion line belongs to item 1")
  H.eq(1, res.queue[first + 2], "the check line belongs to item 1")
  H.eq(2, res.queue[res.queue_lines[2]])
  H.eq(nil, res.items[first], "a queue line is no todo line")
  local empty = table.concat(render.sidebar(state({ queue = { items = {}, autoAdvance = true } }), {}).lines, "\n")
  H.contains(empty, "Up next  none · auto-advance on")
end)

test("sidebar: the plan line counts the todo list live and says what completion waits for", function()
  local s = state()
  s.goal.requireTodos = true
  s.goal.taskFile = { path = "TASK.md", exists = true, checkboxes = { checked = 3, total = 7 } }
  local res = render.sidebar(s, { root = "/w" })
  local line = groups_on(res, "plan 1/3 done · 3/7 checked  completion waits")
  H.eq("plan", line.AgentdLabel)
  H.eq("completion waits", line.AgentdWarn)
  -- A todo change the sidebar holds updates the line without a goal change.
  for _, it in ipairs(s.todos.items) do
    it.status = "done"
  end
  H.eq("3/3 done · 3/7 checked", render.plan(s.goal, s.todos.items))
  s.todos.items[3].status = "pending"
  s.goal.requireTodos = false
  local text, group = render.plan(s.goal, s.todos.items)
  H.eq("2/3 done · 3/7 checked  not required", text)
  H.eq("AgentdMuted", group)
  s.goal.requireTodos = true
  s.goal.status = "complete"
  H.eq("2/3 done · 3/7 checked", render.plan(s.goal, s.todos.items))
  H.eq(nil, render.plan(s.goal, {}))
  s.todos.items = {}
  H.not_contains(table.concat(render.sidebar(s, {}).lines, "\n"), "plan ")
end)
