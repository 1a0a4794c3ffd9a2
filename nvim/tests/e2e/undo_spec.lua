-- End to end: undo from the sidebar (`u`) and :AgentdUndo, a conflict when the view is
-- stale, and :AgentdHistory (newest first, refreshed on notifications, <CR> shows before
-- and after), against the real daemon (docs/runtime.md §6).
local agentd = require("agentd")
local sidebar = require("agentd.sidebar")
local history = require("agentd.history")

local ws = H.ws
local conn = H.enter_workspace()

local function describe()
  local c = conn()
  local hist = history.buf and vim.api.nvim_buf_is_valid(history.buf) and vim.api.nvim_buf_get_lines(history.buf, 0, -1, false) or {}
  return "sidebar:\n" .. H.sidebar_text() .. "\nhistory:\n" .. table.concat(hist, "\n") .. "\nconn: "
    .. vim.inspect(c and { status = c.status, error = c.error, revision = c.store.revision })
    .. "\nnotifications:\n" .. H.notifications_text()
end

local function goal_status()
  local g = H.daemon_state().goal
  return g and g.status
end

local function wait_note(text, level)
  return H.wait(function()
    return H.find_notification(text, level)
  end, "a notification containing " .. text, 10000, describe)
end

local function sidebar_line(pred)
  for lnum, line in ipairs(H.sidebar_lines()) do
    if pred(line, lnum) then
      return lnum
    end
  end
  error("no such sidebar line\n" .. describe())
end

agentd.setup({ cmd = { "agentd", "--remote=auto" } })

test("u on a todo undoes the agent's list write; u on the goal undoes the goal change", function()
  H.wait(function()
    return conn() and conn().status == "ready" and conn().store.state ~= nil
  end, "client ready", 15000, describe)
  vim.cmd("AgentdToggle")
  H.tool("TodoList", { todos = { { title = "an agent plan", status = "in_progress" } } })
  H.wait(function()
    return H.sidebar_text():find("[~] an agent plan", 1, true)
  end, "the agent's list in the sidebar", 10000, describe)
  local win = vim.fn.bufwinid(sidebar.buf)
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { sidebar_line(function(_, l)
    return sidebar.layout.items[l] ~= nil
  end), 0 })
  H.feed("u")
  H.wait(function()
    return #(H.daemon_state().todos.items or {}) == 0 and H.sidebar_text():find("Todos  empty", 1, true)
  end, "the list before the write (empty)", 10000, describe)
  wait_note('undid "todo list written (1 item)" (#1, by the agent)')

  vim.cmd("AgentdGoal Make the build green")
  vim.cmd("AgentdGoalPause lunch")
  H.wait(function()
    return goal_status() == "paused" and H.sidebar_text():find("Goal  paused", 1, true)
  end, "a paused goal", 10000, describe)
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { sidebar_line(function(line)
    return line:find("^Goal  ")
  end), 0 })
  H.feed("u")
  H.wait(function()
    return goal_status() == "active" and H.sidebar_text():find("Goal  active", 1, true)
  end, "the goal active again", 10000, describe)
  wait_note('undid "goal paused: lunch"')
  H.eq(0, #(H.daemon_state().todos.items or {}), "a goal undo leaves the list")
end)

test(":AgentdUndo goal redoes; a stale view gets the conflict and undoes nothing", function()
  vim.cmd("AgentdUndo goal")
  H.wait(function()
    return goal_status() == "paused"
  end, "the undo undone (paused again)", 10000, describe)
  wait_note('undid "goal change undone')

  local c = conn()
  local stale = vim.deepcopy(c.store.state)
  H.agentd({ "goal", "resume", "--workspace", ws })
  H.wait(function()
    return c.store.state.goal.status == "active"
  end, "the shell resume in the view", 10000, describe)
  -- The view set back to the state before the resume, as if its notification were late.
  c.store.state, c.store.revision = stale, stale.revision
  H.clear_notifications()
  vim.cmd("AgentdUndo goal")
  local note = wait_note("nothing was undone", vim.log.levels.WARN)
  H.contains(note.msg, "goal.resume")
  H.contains(note.msg, "todo.conflict")
  H.eq("active", goal_status(), "the shell resume stays")
  H.wait(function()
    return c.store.revision == stale.revision + 1 and c.store.state.goal.status == "active"
  end, "the view to show the current state from the conflict", 10000, describe)

  H.clear_notifications()
  vim.cmd("AgentdUndo goals")
  wait_note("usage: :AgentdUndo [todo|goal]", vim.log.levels.WARN)
  H.eq({ "todo", "goal" }, vim.fn.getcompletion("AgentdUndo ", "cmdline"))
end)

test(":AgentdHistory lists the changes newest first, follows new ones, and <CR> shows before and after", function()
  vim.cmd("AgentdHistory")
  local function lines()
    return vim.api.nvim_buf_get_lines(history.buf, 0, -1, false)
  end
  H.wait(function()
    return #lines() > 5 and lines()[2]:find("you        goal resumed: resumed by the user", 1, true)
  end, "the newest change first", 10000, describe)
  H.ok(lines()[2]:match("^%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d  "), "time first: " .. lines()[2])
  H.contains(lines()[#lines()], "the agent  todo list written (1 item)", "the oldest change last")

  H.tool("TodoList", { todos = { { title = "new plan", status = "pending" } } })
  H.wait(function()
    return lines()[2]:find("the agent  todo list written (1 item)", 1, true) and #lines() > 7
  end, "the history to follow the notification", 10000, describe)

  local hwin = vim.fn.bufwinid(history.buf)
  vim.api.nvim_set_current_win(hwin)
  for lnum, line in ipairs(lines()) do
    if line:find("goal paused: lunch", 1, true) then
      vim.api.nvim_win_set_cursor(hwin, { lnum, 0 })
      break
    end
  end
  H.feed("<CR>")
  local detail = H.wait(function()
    local b = vim.api.nvim_get_current_buf()
    return vim.api.nvim_buf_get_name(b):find("agentd://history/", 1, true) and vim.api.nvim_buf_get_lines(b, 0, -1, false)
  end, "the detail buffer", 10000, describe)
  local text = table.concat(detail, "\n")
  H.contains(text, "goal.pause by you")
  H.contains(text, "Before\n  objective: Make the build green\n  status: active\n")
  H.contains(text, "After\n  objective: Make the build green\n  status: paused\n  reason: lunch\n")
end)
