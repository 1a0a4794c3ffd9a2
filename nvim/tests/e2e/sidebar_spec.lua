-- End to end: real Neovim, real `agentd --remote=auto` (private daemon), a temporary
-- workspace. The sidebar fills from state, follows changes made by another client,
-- and its keys change the daemon's state; a stale edit is refused, not overwritten.
local agentd = require("agentd")
local client = require("agentd.client")
local sidebar = require("agentd.sidebar")

local ws = H.ws
local conn = H.enter_workspace()

local function daemon_items()
  local st = H.daemon_state()
  local out = {}
  for _, it in ipairs(st.todos.items or {}) do
    table.insert(out, { title = it.title, status = it.status })
  end
  return out
end

local function describe()
  local c = conn()
  return "sidebar:\n" .. H.sidebar_text() .. "\nconn: " .. vim.inspect(c and { status = c.status, error = c.error, revision = c.store.revision })
    .. "\nnotifications:\n" .. H.notifications_text()
end

local function wait_sidebar(text, msg)
  H.wait_sidebar(text, msg, describe)
end

local function focus_sidebar_item(title)
  local win = vim.fn.bufwinid(sidebar.buf)
  H.ok(win ~= -1, "sidebar window is open")
  vim.api.nvim_set_current_win(win)
  for lnum, line in ipairs(H.sidebar_lines()) do
    if sidebar.layout.items[lnum] and line:find(title, 1, true) then
      vim.api.nvim_win_set_cursor(win, { lnum, 0 })
      return lnum
    end
  end
  error("no sidebar line for " .. title .. "\n" .. describe())
end

test("the sidebar fills from the state already stored for the workspace", function()
  -- Written before any editor runs: no daemon yet, the shell command opens the state itself.
  H.tool("TodoList", { todos = {
    { title = "read the spec", status = "done" },
    { title = "write the client", status = "in_progress" },
    { title = "write the tests", status = "pending" },
  } })
  agentd.setup({ cmd = { "agentd", "--remote=auto" } })
  H.eq(vim.fs.normalize(ws), client.root_for(0))
  vim.cmd("AgentdToggle")
  H.ok(sidebar.is_open(), "sidebar opened")
  wait_sidebar("[x] read the spec")
  local text = H.sidebar_text()
  H.contains(text, "[~] write the client")
  H.contains(text, "[ ] write the tests")
  H.contains(text, "Todos  1/3 done")
  H.contains(text, "Goal  none")
  H.eq("ready", conn().status)
  H.ok(conn().server_info and conn().server_info.name == "agentd", "serverInfo.name is agentd: " .. vim.inspect(conn().server_info))
  H.eq(1, conn().protocol_version, "capabilities.experimental.agentd.protocolVersion")
end)

test("a change made by another client shows up live", function()
  vim.cmd("AgentdToggle")
  H.ok(sidebar.is_open())
  wait_sidebar("write the tests")
  local before = conn().store.revision
  H.tool("TodoList", { todos = {
    { title = "read the spec", status = "done" },
    { title = "write the client", status = "done" },
    { title = "write the tests", status = "in_progress" },
    { title = "ship it", status = "pending" },
  } })
  wait_sidebar("[ ] ship it")
  H.contains(H.sidebar_text(), "[x] write the client")
  H.contains(H.sidebar_text(), "[~] write the tests")
  H.ok(conn().store.revision > before, "revision moved on")
end)

test("x in the sidebar cycles the item in the daemon", function()
  vim.cmd("AgentdToggle")
  wait_sidebar("[ ] ship it")
  focus_sidebar_item("ship it")
  H.feed("x")
  H.wait(function()
    return daemon_items()[4].status == "in_progress"
  end, "daemon to have 'ship it' in_progress", 10000, describe)
  wait_sidebar("[~] ship it")
  -- Pressed twice quickly: both edits apply in order (the second rebases on our first).
  focus_sidebar_item("ship it")
  H.feed("xx")
  H.wait(function()
    return daemon_items()[4].status == "pending"
  end, "daemon to have 'ship it' back to pending after done", 10000, describe)
  wait_sidebar("[ ] ship it")
  H.eq(nil, H.find_notification("not applied"), "no conflict for our own quick edits")
end)

test("a, r, dd, J add, rename, delete and move todos in the daemon", function()
  vim.cmd("AgentdToggle")
  wait_sidebar("ship it")
  focus_sidebar_item("ship it")
  H.feed("anew item<CR>")
  H.wait(function()
    local items = daemon_items()
    return #items == 5 and items[5].title == "new item" and items[5].status == "pending"
  end, "daemon to have the added item", 10000, describe)
  wait_sidebar("[ ] new item")

  focus_sidebar_item("new item")
  H.feed("r<C-u>renamed item<CR>")
  H.wait(function()
    return daemon_items()[5].title == "renamed item"
  end, "daemon to have the renamed item", 10000, describe)
  wait_sidebar("renamed item")

  focus_sidebar_item("renamed item")
  H.feed("K")
  H.wait(function()
    local items = daemon_items()
    return items[4].title == "renamed item" and items[5].title == "ship it"
  end, "daemon to have the item moved up", 10000, describe)
  wait_sidebar("renamed item")
  H.contains(vim.api.nvim_get_current_line(), "renamed item", "cursor follows the moved item")

  focus_sidebar_item("renamed item")
  H.feed("dd")
  H.wait(function()
    local items = daemon_items()
    return #items == 4 and items[4].title == "ship it"
  end, "daemon to have the item deleted", 10000, describe)
  H.wait(function()
    return not H.sidebar_text():find("renamed item", 1, true)
  end, "sidebar to drop the deleted item", 10000, describe)
end)

test("a stale edit is refused with todo.conflict: refreshed, user told, nothing overwritten", function()
  vim.cmd("AgentdToggle")
  wait_sidebar("ship it")
  -- What the editor saw before an agent's write reached it.
  local c = conn()
  local seen_state = vim.deepcopy(c.store.state)
  local seen_rev = c.store.revision
  H.tool("TodoList", { todos = {
    { title = "agent rewrote the list", status = "in_progress" },
    { title = "ship it", status = "pending" },
  } })
  wait_sidebar("agent rewrote the list")
  -- Put the editor back to the list it had seen, as if the notification were late.
  c.store.state = seen_state
  c.store.revision = seen_rev
  sidebar.render()
  H.not_contains(H.sidebar_text(), "agent rewrote the list")
  focus_sidebar_item("read the spec")
  H.clear_notifications()
  H.feed("x")
  H.wait(function()
    return H.find_notification("not applied", vim.log.levels.WARN) ~= nil
  end, "a warning that the edit was not applied", 10000, describe)
  wait_sidebar("[~] agent rewrote the list", "sidebar to show the list from the conflict's state")
  H.eq({
    { title = "agent rewrote the list", status = "in_progress" },
    { title = "ship it", status = "pending" },
  }, daemon_items(), "the daemon kept the agent's list")
end)

test("gf on the task file line opens it", function()
  vim.fn.writefile({ "# Task", "do the thing" }, ws .. "/TASK.md")
  local done = false
  agentd.goal_create("Follow TASK.md", true, function()
    done = true
  end)
  H.wait(function()
    return done
  end, "goal create to answer", 10000, describe)
  vim.cmd("AgentdToggle")
  wait_sidebar("task file TASK.md")
  local win = vim.fn.bufwinid(sidebar.buf)
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { sidebar.layout.task_file_line, 0 })
  H.feed("gf")
  H.eq(vim.fs.normalize(ws .. "/TASK.md"), vim.fs.normalize(vim.api.nvim_buf_get_name(0)))
  H.ok(vim.api.nvim_get_current_win() ~= win, "opened outside the sidebar")
  H.ok(sidebar.is_open(), "sidebar stays open")
  vim.cmd("AgentdGoalCancel")
end)

test("<CR> cycles a todo, J moves it down, R re-reads, q closes", function()
  H.tool("TodoList", { todos = {
    { title = "first", status = "pending" },
    { title = "second", status = "pending" },
  } })
  vim.cmd("AgentdToggle")
  wait_sidebar("[ ] second")
  focus_sidebar_item("first")
  H.feed("<CR>")
  H.wait(function()
    return daemon_items()[1].status == "in_progress"
  end, "daemon to have 'first' in_progress", 10000, describe)
  focus_sidebar_item("first")
  H.feed("J")
  H.wait(function()
    local items = daemon_items()
    return items[1].title == "second" and items[2].title == "first"
  end, "daemon to have 'first' moved down", 10000, describe)
  wait_sidebar("[ ] second\n  [~] first")
  H.contains(vim.api.nvim_get_current_line(), "first", "cursor follows the moved item")
  local c = conn()
  local reads = 0
  local orig = client.refresh
  client.refresh = function(...)
    reads = reads + 1
    return orig(...)
  end
  H.feed("R")
  client.refresh = orig
  H.eq(1, reads, "R re-reads the state")
  H.feed("q")
  H.eq(false, sidebar.is_open(), "q closes the sidebar")
  H.eq("ready", c.status)
end)

test("J keeps the cursor on the moved item when an earlier change's notification comes after the edit", function()
  -- The daemon may answer a write before it notifies: the notification of the
  -- change before the move (same revision as the list the move was made on)
  -- arrives after the move was sent, before its answer.
  H.tool("TodoList", { todos = {
    { title = "alpha", status = "pending" },
    { title = "beta", status = "pending" },
  } })
  if not sidebar.is_open() then
    vim.cmd("AgentdToggle")
  end
  wait_sidebar("[ ] beta")
  local c = conn()
  local late = {
    workspace = vim.uri_from_fname(ws), session = c.store.session or "default",
    revision = c.store.revision, items = vim.deepcopy(c.store.state.todos.items), actor = "model",
  }
  local orig = client.execute
  client.execute = function(cn, command, args, cb)
    if command ~= "agentd.todo.set" then
      return orig(cn, command, args, cb)
    end
    return orig(cn, command, args, function(err, result)
      client.handlers["agentd/todoChanged"](nil, late, { client_id = cn.client_id })
      cb(err, result)
    end)
  end
  focus_sidebar_item("alpha")
  H.feed("J")
  H.wait(function()
    local items = daemon_items()
    return items[1].title == "beta" and items[2].title == "alpha"
  end, "daemon to have 'alpha' moved down", 10000, describe)
  wait_sidebar("[ ] beta\n  [ ] alpha")
  client.execute = orig
  H.contains(vim.api.nvim_get_current_line(), "alpha", "cursor follows the moved item")
end)

test(":AgentdTaskFile opens the goal's task file", function()
  vim.fn.writefile({ "notes" }, ws .. "/NOTES.md")
  vim.cmd("AgentdGoal! Keep @NOTES.md tidy")
  H.wait(function()
    local g = conn().store.state.goal
    return g and g.taskFile and g.taskFile.path == "NOTES.md"
  end, "goal with NOTES.md as task file", 10000, describe)
  vim.cmd("AgentdTaskFile")
  H.eq(vim.fs.normalize(ws .. "/NOTES.md"), vim.fs.normalize(vim.api.nvim_buf_get_name(0)))
  vim.cmd("AgentdGoalCancel")
end)

test("Up next: A queues, K and dd reorder and remove, T toggles auto-advance; a completion advances to the first", function()
  vim.cmd("AgentdGoal! Finish the parser")
  H.wait(function()
    local g = conn().store.state.goal
    return g and g.objective == "Finish the parser"
  end, "the goal", 10000, describe)
  if not sidebar.is_open() then
    vim.cmd("AgentdToggle")
  end
  wait_sidebar("Up next  none · auto-advance on")
  local win = vim.fn.bufwinid(sidebar.buf)
  vim.api.nvim_set_current_win(win)
  H.feed("ADocument the parser<CR>docs build<CR>make docs<CR>")
  vim.cmd("AgentdQueueAdd Tag the release")
  H.agentd({ "goal", "queue", "add", "Announce it", "--workspace", ws })
  wait_sidebar("Up next  3 queued · auto-advance on\n  1. Document the parser\n     done when: docs build\n     check: make docs\n  2. Tag the release\n  3. Announce it")
  local function queued()
    local out = {}
    for _, it in ipairs(H.daemon_state().queue.items) do
      table.insert(out, it.objective)
    end
    return out
  end
  H.eq("make docs", H.daemon_state().queue.items[1].check, "the check reached the daemon")

  local function focus_queued(n)
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_cursor(win, { sidebar.layout.queue_lines[n], 0 })
  end
  focus_queued(3)
  H.feed("K")
  H.wait(function()
    return vim.deep_equal(queued(), { "Document the parser", "Announce it", "Tag the release" })
  end, "daemon to have Announce it moved up", 10000, describe)
  wait_sidebar("  2. Announce it\n  3. Tag the release")
  H.wait(function()
    return vim.api.nvim_get_current_line() == "  2. Announce it"
  end, "cursor follows the moved queued goal", 10000, describe)
  vim.cmd("AgentdQueueMove 1 3")
  H.wait(function()
    return vim.deep_equal(queued(), { "Announce it", "Tag the release", "Document the parser" })
  end, "daemon to have Document the parser moved last", 10000, describe)
  wait_sidebar("  1. Announce it\n  2. Tag the release\n  3. Document the parser")
  focus_queued(1)
  H.feed("dd")
  H.wait(function()
    return vim.deep_equal(queued(), { "Tag the release", "Document the parser" })
  end, "daemon to have Announce it removed", 10000, describe)
  wait_sidebar("Up next  2 queued")
  vim.cmd("AgentdQueueMove 2 1")
  wait_sidebar("  1. Document the parser")

  vim.api.nvim_set_current_win(win)
  H.feed("T")
  wait_sidebar("Up next  2 queued · auto-advance off")
  H.eq(false, H.daemon_state().queue.autoAdvance, "auto-advance off in the daemon")
  vim.cmd("AgentdQueueAutoAdvance on")
  wait_sidebar("Up next  2 queued · auto-advance on")

  -- The model finishes its plan (the goal waits for its items,
  -- docs/runtime.md §2.12), then completes the goal: the first queued goal
  -- becomes the goal.
  local items = {}
  for _, it in ipairs(H.daemon_state().todos.items) do
    items[#items + 1] = { title = it.title, status = "done" }
  end
  if #items > 0 then
    H.tool("TodoList", { todos = items })
  end
  H.tool("UpdateGoal", { status = "complete" })
  wait_sidebar("Goal  active\n  Document the parser\n  done when: docs build")
  wait_sidebar("Up next  1 queued · auto-advance on\n  1. Tag the release")

  vim.cmd("AgentdQueueRemove 1")
  wait_sidebar("Up next  none")
  vim.cmd("AgentdGoalCancel")
end)
