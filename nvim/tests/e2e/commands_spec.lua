-- End to end: the :Agentd* commands against the real daemon, checked with
-- `agentd state --json`; the statusline; goal changes from a shell; :checkhealth.
local agentd = require("agentd")
local client = require("agentd.client")
local sidebar = require("agentd.sidebar")

local ws = H.ws
local conn = H.enter_workspace()

local function describe()
  local c = conn()
  return "sidebar:\n" .. H.sidebar_text() .. "\nconn: " .. vim.inspect(c and { status = c.status, error = c.error, revision = c.store.revision, goal = c.store.state and c.store.state.goal })
    .. "\nnotifications:\n" .. H.notifications_text()
end

local function goal()
  return H.daemon_state().goal
end

local function wait_goal(pred, msg)
  return H.wait(function()
    local g = goal()
    return pred(g) and (g or true)
  end, msg, 10000, describe)
end

local function wait_statusline(want)
  H.wait(function()
    return agentd.statusline() == want
  end, "statusline " .. vim.inspect(want), 10000, function()
    return "statusline: " .. vim.inspect(agentd.statusline()) .. "\n" .. describe()
  end)
end

agentd.setup({ cmd = { "agentd", "--remote=auto" } })

test("setup starts the client for the workspace root with vim.lsp.start", function()
  H.wait(function()
    return conn() and conn().status == "ready" and conn().store.state ~= nil
  end, "client ready and state read", 15000, describe)
  local clients = vim.lsp.get_clients({ name = "agentd" })
  H.eq(1, #clients)
  H.eq(vim.fs.normalize(ws), clients[1].config.root_dir)
  H.eq("", agentd.statusline(), "no goal, empty statusline")
end)

test(":AgentdTodoAdd appends a pending todo", function()
  vim.cmd("AgentdTodoAdd first thing")
  H.wait(function()
    local items = H.daemon_state().todos.items or {}
    return #items == 1 and items[1].title == "first thing" and items[1].status == "pending"
  end, "daemon to have the todo", 10000, describe)
  vim.cmd("AgentdTodoAdd second thing")
  H.wait(function()
    local items = H.daemon_state().todos.items or {}
    return #items == 2 and items[2].title == "second thing"
  end, "daemon to have both todos in order", 10000, describe)
end)

test(":AgentdGoal creates a goal; sidebar and statusline show it", function()
  vim.cmd("AgentdToggle")
  vim.cmd("AgentdGoal Make the build green")
  local g = wait_goal(function(x)
    return x and x.status == "active"
  end, "an active goal")
  H.eq("Make the build green", g.objective)
  H.wait(function()
    return H.sidebar_text():find("Goal  active", 1, true) and H.sidebar_text():find("Make the build green", 1, true)
  end, "sidebar to show the goal", 10000, describe)
  wait_statusline("goal active 0 turns 0 tok")
  -- A second create without ! is refused and the user is told.
  H.clear_notifications()
  vim.cmd("AgentdGoal Something else")
  H.wait(function()
    return H.find_notification("goal.already_exists", vim.log.levels.ERROR) ~= nil
  end, "goal.already_exists error shown", 10000, describe)
  H.eq("Make the build green", goal().objective)
  vim.cmd("AgentdGoal! Replace with this")
  wait_goal(function(x)
    return x and x.objective == "Replace with this" and x.status == "active"
  end, "the goal replaced")
end)

test(":AgentdBudget sets turns, tokens and wall-clock budgets", function()
  vim.cmd("AgentdBudget 20 turns")
  wait_goal(function(x)
    return x and x.budget and x.budget.turnBudget == 20
  end, "turn budget 20")
  wait_statusline("goal active 0/20 turns 0 tok")
  vim.cmd("AgentdBudget 5000 tokens")
  wait_goal(function(x)
    return x and x.budget.tokenBudget == 5000
  end, "token budget 5000")
  vim.cmd("AgentdBudget 30 minutes")
  wait_goal(function(x)
    return x and x.budget.wallClockBudgetMs == 1800000
  end, "wall-clock budget 30 minutes")
  vim.cmd("AgentdBudget 2 hours")
  wait_goal(function(x)
    return x and x.budget.wallClockBudgetMs == 7200000
  end, "wall-clock budget 2 hours")
  vim.cmd("AgentdBudget 90 seconds")
  wait_goal(function(x)
    return x and x.budget.wallClockBudgetMs == 90000
  end, "wall-clock budget 90 seconds")
  H.wait(function()
    return agentd.statusline():find("^goal active 0/20 turns 0/5%.0k tok %d+s/1m30s$") ~= nil
  end, "statusline with all budgets", 10000, function()
    return agentd.statusline()
  end)
  vim.cmd("AgentdToggle")
  H.wait(function()
    local t = H.sidebar_text()
    return t:find("budget turns  0/20  20 left", 1, true) and t:find("tokens 0/5.0k  5.0k left", 1, true)
  end, "budgets in the sidebar", 10000, describe)
  vim.cmd("AgentdBudget none tokens")
  wait_goal(function(x)
    return x and x.budget.tokenBudget == nil
  end, "token budget removed")
  -- A bad unit never reaches the server.
  H.clear_notifications()
  vim.cmd("AgentdBudget 3 parsecs")
  H.ok(H.find_notification("unknown unit", vim.log.levels.WARN), "bad unit reported")
end)

test(":AgentdGoalPause, :AgentdGoalResume, :AgentdGoalCancel", function()
  vim.cmd("AgentdGoalPause lunch")
  local g = wait_goal(function(x)
    return x and x.status == "paused"
  end, "goal paused")
  H.contains(g.terminalReason or "", "lunch", "pause reason kept")
  H.wait(function()
    return agentd.statusline():find("^goal paused 0/20 turns 0 tok %d+s/1m30s$") ~= nil
  end, "paused statusline", 10000, function()
    return agentd.statusline()
  end)
  vim.cmd("AgentdToggle")
  H.wait(function()
    return H.sidebar_text():find("Goal  paused", 1, true) and H.sidebar_text():find("reason: ", 1, true)
  end, "sidebar shows paused with reason", 10000, describe)
  vim.cmd("AgentdGoalResume")
  wait_goal(function(x)
    return x and x.status == "active"
  end, "goal active again")
  vim.cmd("AgentdGoalWait 2h build")
  g = wait_goal(function(x)
    return x and x.status == "waiting"
  end, "goal waiting")
  H.ok(g.wait and g.wait.paths and g.wait.paths[1] == "build", "the wait names the path")
  H.wait(function()
    return H.sidebar_text():find("waiting since ", 1, true) ~= nil
  end, "sidebar shows since when the goal waits", 10000, describe)
  vim.cmd("AgentdGoalResume")
  wait_goal(function(x)
    return x and x.status == "active"
  end, "goal active after the wait")
  vim.cmd("AgentdGoalCancel")
  wait_goal(function(x)
    return x == nil
  end, "goal cleared")
  wait_statusline("")
  H.wait(function()
    return H.sidebar_text():find("Goal  none", 1, true)
  end, "sidebar shows no goal", 10000, describe)
end)

test("a goal created from a shell shows up live", function()
  vim.cmd("AgentdToggle")
  local res = H.agentd({ "goal", "create", "Shell made goal", "--workspace", ws })
  H.eq(0, res.code, "agentd goal create: " .. (res.stderr or "") .. (res.stdout or ""))
  H.wait(function()
    return H.sidebar_text():find("Shell made goal", 1, true)
  end, "sidebar to show the shell's goal", 10000, describe)
  wait_statusline("goal active 0 turns 0 tok")
  res = H.agentd({ "goal", "cancel", "--workspace", ws })
  H.eq(0, res.code, "agentd goal cancel: " .. (res.stderr or "") .. (res.stdout or ""))
  wait_statusline("")
end)

test("a task file change reaches the sidebar", function()
  vim.fn.writefile({ "v1" }, ws .. "/PLAN.md")
  vim.cmd("AgentdGoal! Work through @PLAN.md")
  wait_goal(function(x)
    return x and x.taskFile and x.taskFile.path
  end, "goal with a task file")
  vim.cmd("AgentdToggle")
  H.wait(function()
    return H.sidebar_text():find("task file PLAN.md", 1, true)
  end, "sidebar to show the task file", 10000, describe)
  local rev = conn().store.revision
  local seen = {}
  local orig = client.handlers["agentd/taskFileChanged"]
  client.handlers["agentd/taskFileChanged"] = function(err, params, ctx)
    table.insert(seen, params)
    return orig(err, params, ctx)
  end
  vim.fn.writefile({ "v2", "more" }, ws .. "/PLAN.md")
  H.wait(function()
    return #seen > 0
  end, "agentd/taskFileChanged", 10000, describe)
  client.handlers["agentd/taskFileChanged"] = orig
  H.ok(seen[1].path and seen[1].revision and seen[1].session, "params carry path, revision, session: " .. vim.inspect(seen[1]))
  H.wait(function()
    return conn().store.revision > rev
  end, "revision after the task file change", 10000, describe)
  os.remove(ws .. "/PLAN.md")
  H.wait(function()
    return H.sidebar_text():find("task file PLAN.md  (missing)", 1, true)
  end, "sidebar to mark the task file missing", 10000, describe)
  vim.cmd("AgentdGoalCancel")
  wait_statusline("")
end)

test(":AgentdSetCheck, then C in the sidebar runs the check: running, then its result and output", function()
  vim.cmd("AgentdGoal! Check the checks")
  wait_goal(function(x)
    return x and x.objective == "Check the checks"
  end, "the goal")
  local release = vim.fn.tempname()
  local command = "echo \"checking $AGENTD_GOAL_ID\"; while [ ! -f '" .. release .. "' ]; do sleep 0.05; done; echo 'FAIL: parser_test.go:12'; exit 1"
  vim.cmd("AgentdSetCheck " .. command)
  wait_goal(function(x)
    return x and x.check and x.check.command == command
  end, "the check in the daemon")
  if not sidebar.is_open() then
    vim.cmd("AgentdToggle")
  end
  H.wait(function()
    return H.sidebar_text():find("  check echo", 1, true) and H.sidebar_text():find("not run yet", 1, true)
  end, "sidebar to show the check", 10000, describe)
  vim.api.nvim_set_current_win(vim.fn.bufwinid(sidebar.buf))
  H.clear_notifications()
  H.feed("C")
  H.wait(function()
    return H.sidebar_text():find("        running...", 1, true)
  end, "sidebar to show the check running", 10000, describe)
  H.ok(H.daemon_state().goal.check.running, "the daemon says it runs")
  vim.fn.writefile({}, release)
  H.wait(function()
    return H.sidebar_text():find("        failed: exit 1 after %d+s · %d%d:%d%d:%d%d") ~= nil
  end, "sidebar to show the failed run", 10000, describe)
  local text = H.sidebar_text()
  H.contains(text, "        | checking " .. goal().goalId)
  H.contains(text, "        | FAIL: parser_test.go:12")
  H.wait(function()
    return H.find_notification("check failed: exit 1", vim.log.levels.WARN) ~= nil
  end, "the failed run notified", 10000, describe)
  H.eq("active", goal().status, "a check on demand does not change the status")
  vim.cmd("AgentdSetCheck test -d .")
  vim.cmd("AgentdCheck")
  H.wait(function()
    return H.sidebar_text():find("        passed in %d+s") ~= nil
  end, "sidebar to show the passed run", 10000, describe)
  vim.cmd("AgentdSetCheck!")
  wait_goal(function(x)
    return x and x.check == nil
  end, "the check removed")
  H.wait(function()
    return not H.sidebar_text():find("  check ", 1, true)
  end, "sidebar without the check", 10000, describe)
  vim.cmd("AgentdGoalCancel")
  wait_statusline("")
end)

test(":checkhealth agentd reports binary, version and connection", function()
  vim.cmd("checkhealth agentd")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  H.contains(text, "OK Neovim 0.1")
  H.contains(text, "configured cmd: agentd --remote=auto")
  H.contains(text, "found `agentd`: ")
  H.contains(text, "OK `agentd version`: agentd")
  H.contains(text, "connected (client ")
  H.contains(text, "protocol 1")
  H.not_contains(text, "ERROR")
  vim.cmd("bwipe!")
end)
