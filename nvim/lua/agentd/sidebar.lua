-- agentd.sidebar: the `:AgentdToggle` view. A scratch buffer in a vertical split that
-- shows one workspace's goal, its queue (Up next) and todo list (text from agentd.render),
-- re-rendered on every state change, with buffer-local keys that edit the list through
-- agentd.client (agentd.todo.set with expectedRevision), edit the queue
-- (agentd.goal.queue.*) and open the task file.
local client = require("agentd.client")
local config = require("agentd.config")
local protocol = require("agentd.protocol")
local render = require("agentd.render")

local M = {}
local ns = vim.api.nvim_create_namespace("agentd.sidebar")
local uv = vim.uv or vim.loop

---@type integer|nil
M.buf = nil
---@type table|nil last render result (lines, items, item_lines, task_file_line)
M.layout = nil
-- want_item: the index the cursor goes to once the user's edit is shown;
-- want_after: the session revision when the edit was made. Only a state newer
-- than that shows the edit: a notification of an earlier change that arrives
-- after it (the daemon may answer a write before it notifies) must not take
-- the cursor there.
local want_item, want_after = nil, nil
-- want_queued: {id, pos}: the cursor goes to that queued goal once the state shows it at
-- 1-based position pos (after a move).
local want_queued = nil
local timer = nil

local highlight_links = {
  AgentdTitle = "Title",
  AgentdSection = "Statement",
  AgentdLabel = "Identifier",
  AgentdMuted = "Comment",
  AgentdError = "DiagnosticError",
  AgentdWarn = "DiagnosticWarn",
  AgentdGoalActive = "DiagnosticOk",
  AgentdGoalPaused = "DiagnosticWarn",
  AgentdGoalWaiting = "DiagnosticHint",
  AgentdGoalBlocked = "DiagnosticError",
  AgentdGoalComplete = "DiagnosticInfo",
  AgentdTodoPending = "Comment",
  AgentdTodoInProgress = "DiagnosticWarn",
  AgentdTodoDone = "DiagnosticOk",
  AgentdTodoDoneText = "Comment",
  AgentdTaskFile = "Directory",
  AgentdBudgetWarn = "DiagnosticWarn",
  AgentdBudgetError = "DiagnosticError",
  AgentdStalled = "DiagnosticWarn",
  AgentdCheckRunning = "DiagnosticWarn",
  AgentdCheckPassed = "DiagnosticOk",
  AgentdCheckFailed = "DiagnosticError",
}

function M.define_highlights()
  for group, link in pairs(highlight_links) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end

local function buf_valid()
  return M.buf ~= nil and vim.api.nvim_buf_is_valid(M.buf)
end

--- Windows of the current tab page that show the sidebar.
local function wins()
  local out = {}
  if not buf_valid() then
    return out
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == M.buf then
      table.insert(out, w)
    end
  end
  return out
end

local function all_wins()
  return buf_valid() and vim.fn.win_findbuf(M.buf) or {}
end

function M.is_open()
  return #wins() > 0
end

local function conn_of_sidebar()
  if not buf_valid() then
    return nil
  end
  local root = vim.b[M.buf].agentd_root
  return root and client.conns[root] or nil
end

--- The cursor goes to item idx once the state shows the edit being made now.
local function want(idx)
  local conn = conn_of_sidebar()
  want_item = idx
  want_after = conn and conn.store.revision or -1
end

M.conn = conn_of_sidebar

local function stop_timer()
  if timer then
    timer:stop()
    timer:close()
    timer = nil
  end
end

local function help_line()
  local cfg = config.get().sidebar
  if not cfg.show_help_line then
    return false
  end
  local k = cfg.keys
  local parts = {}
  local function part(key, label)
    if key then
      table.insert(parts, key .. " " .. label)
    end
  end
  part(k.cycle, "cycle")
  part(k.add, "add")
  part(k.rename, "rename")
  part(k.delete, "del")
  part(k.help, "more")
  return table.concat(parts, "  ")
end

--- Re-renders the sidebar from its connection's state, keeping the cursor on its item.
function M.render()
  if not buf_valid() then
    stop_timer()
    return
  end
  local conn = conn_of_sidebar()
  local state = conn and conn.store.state
  local old = M.layout
  local cursor_item = {}
  for _, w in ipairs(all_wins()) do
    local lnum = vim.api.nvim_win_get_cursor(w)[1]
    local idx = old and old.items[lnum]
    cursor_item[w] = { idx = idx, title = idx and old.titles[idx], lnum = lnum }
  end
  local res = render.sidebar(state, {
    root = vim.b[M.buf].agentd_root,
    session = config.session(),
    connection = conn and conn.status or "stopped",
    error = conn and conn.error,
    elapsed_since_ms = conn and (uv.now() - conn.received_at) or 0,
    help_line = help_line(),
    activate_key = config.get().sidebar.keys.activate or nil,
  })
  vim.bo[M.buf].modifiable = true
  vim.api.nvim_buf_set_lines(M.buf, 0, -1, false, res.lines)
  vim.bo[M.buf].modifiable = false
  vim.bo[M.buf].modified = false
  vim.api.nvim_buf_clear_namespace(M.buf, ns, 0, -1)
  for _, h in ipairs(res.highlights) do
    pcall(vim.api.nvim_buf_set_extmark, M.buf, ns, h[1], h[2], { end_col = h[3], hl_group = h[4] })
  end
  res.titles = {}
  for i, it in ipairs(state and state.todos and state.todos.items or {}) do
    res.titles[i] = it.title
  end
  M.layout = res
  local rev = conn and conn.store.revision or -1
  local shows_edit = want_item and (not want_after or rev > want_after) and res.item_lines[want_item]
  for w, c in pairs(cursor_item) do
    local target
    if shows_edit then
      target = res.item_lines[want_item]
    elseif c.idx then
      -- Follow the item by its title if it moved, else stay at its index.
      if res.titles[c.idx] ~= c.title then
        for i, t in ipairs(res.titles) do
          if t == c.title then
            target = res.item_lines[i]
            break
          end
        end
      end
      target = target or res.item_lines[c.idx] or res.item_lines[#res.item_lines]
    end
    target = target or math.min(c.lnum, #res.lines)
    pcall(vim.api.nvim_win_set_cursor, w, { math.max(1, target), 0 })
  end
  if shows_edit then
    want_item, want_after = nil, nil
  end
  local queued = state and state.queue and state.queue.items or {}
  if want_queued and queued[want_queued.pos] and queued[want_queued.pos].id == want_queued.id then
    for _, w in ipairs(all_wins()) do
      pcall(vim.api.nvim_win_set_cursor, w, { res.queue_lines[want_queued.pos], 0 })
    end
    want_queued = nil
  end
  -- Tick the elapsed time while an active goal is on screen.
  local goal = state and state.goal
  if goal and render.clock_runs(goal.status) and #all_wins() > 0 then
    if not timer then
      timer = uv.new_timer()
      timer:start(1000, 1000, vim.schedule_wrap(function()
        M.render()
      end))
    end
  else
    stop_timer()
  end
end

local function item_at_cursor()
  if not M.layout then
    return nil
  end
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  local idx = M.layout.items[lnum]
  if not idx then
    return nil
  end
  local conn = conn_of_sidebar()
  local items = conn and conn.store.state and conn.store.state.todos.items or {}
  return idx, items[idx]
end

--- Queues fn(items, i) -> items for the todo that had index idx and this title when
--- the user acted; found again by title if queued edits moved it, refused if gone.
local function edit_item_at(idx, title, fn)
  local conn = conn_of_sidebar()
  if not conn then
    return
  end
  client.edit_todos(conn, function(items)
    local at = idx
    if not items[at] or items[at].title ~= title then
      at = nil
      for i, it in ipairs(items) do
        if it.title == title then
          at = i
          break
        end
      end
      if not at then
        error("the todo item is gone: " .. title, 0)
      end
    end
    return fn(items, at)
  end)
end

--- fn(items, i) -> items for the item under the cursor.
local function edit_item(fn)
  local idx, item = item_at_cursor()
  if not idx then
    vim.notify("agentd: no todo item under the cursor", vim.log.levels.INFO)
    return
  end
  edit_item_at(idx, item.title, fn)
end

local function trim(s)
  return (s or ""):gsub("^%s+", ""):gsub("%s+$", "")
end

--- The queued goal under the cursor (an Up next line): its 1-based position and item.
local function queued_at_cursor()
  if not M.layout then
    return nil
  end
  local idx = M.layout.queue[vim.api.nvim_win_get_cursor(0)[1]]
  local conn = conn_of_sidebar()
  local items = conn and conn.store.state and conn.store.state.queue.items or {}
  if idx and items[idx] then
    return idx, items[idx]
  end
  return nil
end

--- Runs a queue command (agentd.goal.queue.*) on the sidebar's connection and shows its State.
local function queue_command(command, args)
  local conn = conn_of_sidebar()
  if not conn then
    return
  end
  client.execute(conn, command, args, function(err, result)
    if err then
      vim.notify("agentd: " .. client.describe_error(err), vim.log.levels.ERROR)
    else
      client._take_state(conn, result)
    end
  end)
end

--- The sidebar's connection once its state has been read; else nil, after warning that
--- what ("the todo list", "the state": what the action needs) has not been read yet.
local function read_conn_of_sidebar(what)
  local conn = conn_of_sidebar()
  if not conn or not conn.store.state then
    vim.notify("agentd: " .. what .. " has not been read yet", vim.log.levels.WARN)
    return nil
  end
  return conn
end

M.actions = {}

function M.actions.cycle()
  edit_item(function(items, i)
    return render.cycle(items, i)
  end)
end

function M.actions.delete()
  local _, queued = queued_at_cursor()
  if queued then
    return queue_command(protocol.commands.goal_queue_remove, { id = queued.id })
  end
  edit_item(function(items, i)
    return render.delete(items, i)
  end)
end

function M.actions.rename()
  local idx, item = item_at_cursor()
  if not idx then
    vim.notify("agentd: no todo item under the cursor", vim.log.levels.INFO)
    return
  end
  vim.ui.input({ prompt = "Rename todo: ", default = item.title }, function(input)
    input = trim(input)
    if input == "" or input == item.title then
      return
    end
    want(idx)
    edit_item_at(idx, item.title, function(items, i)
      return render.rename(items, i, input)
    end)
  end)
end

function M.actions.add()
  local conn = read_conn_of_sidebar("the todo list")
  if not conn then
    return
  end
  local idx = item_at_cursor()
  vim.ui.input({ prompt = "New todo: " }, function(input)
    input = trim(input)
    if input == "" then
      return
    end
    want(idx and idx + 1 or (#conn.store.state.todos.items + 1))
    client.edit_todos(conn, function(items)
      return render.add(items, input, idx and math.min(idx, #items) or nil)
    end)
  end)
end

local function move(delta)
  local qi, queued = queued_at_cursor()
  if queued then
    local n = #conn_of_sidebar().store.state.queue.items
    if qi + delta >= 1 and qi + delta <= n then
      want_queued = { id = queued.id, pos = qi + delta }
      queue_command(protocol.commands.goal_queue_move, { id = queued.id, index = qi + delta - 1 })
    end
    return
  end
  edit_item(function(items, i)
    local out, to = render.move(items, i, delta)
    want(to)
    return out
  end)
end

function M.actions.move_down()
  move(1)
end

function M.actions.move_up()
  move(-1)
end

--- Asks for a goal (objective, then optional criterion and check) and queues it.
function M.actions.queue_add()
  if not read_conn_of_sidebar("the state") then
    return
  end
  vim.ui.input({ prompt = "Queue goal: " }, function(objective)
    objective = trim(objective)
    if objective == "" then
      return
    end
    vim.ui.input({ prompt = "Done when (optional): " }, function(criterion)
      if criterion == nil then
        return
      end
      vim.ui.input({ prompt = "Check command (optional): " }, function(check)
        if check == nil then
          return
        end
        local args = { objective = objective }
        if trim(criterion) ~= "" then
          args.completionCriterion = trim(criterion)
        end
        if trim(check) ~= "" then
          args.check = trim(check)
        end
        queue_command(protocol.commands.goal_queue_add, args)
      end)
    end)
  end)
end

--- Turns auto-advance of the goal queue off when it is on, and on when it is off.
function M.actions.auto_advance()
  local conn = conn_of_sidebar()
  local q = conn and conn.store.state and conn.store.state.queue
  if q then
    queue_command(protocol.commands.goal_queue_set_auto_advance, { on = q.autoAdvance == false })
  end
end

function M.actions.refresh()
  local conn = conn_of_sidebar()
  if conn then
    if conn.status == "stopped" then
      client.ensure(M.buf)
    else
      client.refresh(conn)
    end
  end
end

function M.actions.open_task_file()
  local conn = conn_of_sidebar()
  local goal = conn and conn.store.state and conn.store.state.goal
  local tf = goal and goal.taskFile
  if not tf or not tf.path or tf.path == vim.NIL then
    vim.notify("agentd: the goal has no task file", vim.log.levels.INFO)
    return
  end
  local path = tf.path
  if path:sub(1, 7) == "file://" then
    path = vim.uri_to_fname(path)
  elseif path:sub(1, 1) ~= "/" then
    path = conn.root .. "/" .. path
  end
  M.open_file(path)
end

--- Opens a file in the window the user came from (or a new split beside the sidebar).
function M.open_file(path)
  local target
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= 0 and vim.api.nvim_win_get_buf(prev) ~= M.buf then
    target = prev
  else
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if vim.api.nvim_win_get_buf(w) ~= M.buf and vim.api.nvim_win_get_config(w).relative == "" then
        target = w
        break
      end
    end
  end
  if target then
    vim.api.nvim_set_current_win(target)
    vim.cmd.edit(vim.fn.fnameescape(path))
  else
    local side = config.get().sidebar.position == "left" and "belowright" or "aboveleft"
    vim.cmd(side .. " vsplit " .. vim.fn.fnameescape(path))
    for _, w in ipairs(wins()) do
      vim.api.nvim_win_set_width(w, config.get().sidebar.width)
    end
  end
end

--- Runs the goal's check now (agentd.goal.runCheck), as :AgentdCheck does.
function M.actions.run_check()
  require("agentd").goal_check()
end

function M.actions.activate()
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  if M.layout and M.layout.team_lines[lnum] then
    return require("agentd").team_accept()
  end
  if M.layout and M.layout.approve_lines[lnum] then
    return require("agentd").goal_approve_check()
  end
  if M.layout and M.layout.task_file_line == lnum then
    return M.actions.open_task_file()
  end
  if M.layout and M.layout.check_line == lnum then
    return M.actions.run_check()
  end
  if M.layout and M.layout.items[lnum] then
    return M.actions.cycle()
  end
end

--- Undoes the newest change of the section under the cursor: the goal above the
--- Todos line, the todo list from it down (docs/runtime.md §6).
function M.actions.undo()
  local conn = conn_of_sidebar()
  if not conn then
    return
  end
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  local scope = (M.layout and M.layout.todos_line and lnum < M.layout.todos_line) and "goal" or "todo"
  require("agentd.history").undo(conn, scope)
end

function M.actions.close()
  M.close()
end

function M.actions.help()
  local k = config.get().sidebar.keys
  local rows = {
    { k.cycle, "cycle status: [ ] pending -> [~] in progress -> [x] done" },
    { k.activate, "cycle the item, open the task file, run, approve the check or accept the team file on its line" },
    { k.add, "add a todo below the cursor" },
    { k.rename, "rename the todo" },
    { k.delete, "delete the todo" },
    { k.move_down, "move the todo down" },
    { k.move_up, "move the todo up" },
    { k.open_task_file, "open the goal's task file" },
    { k.run_check, "run the goal's check now (also <CR> on its line)" },
    { k.queue_add, "queue a goal (Up next); on an Up next line dd, J, K remove and move it" },
    { k.auto_advance, "turn auto-advance of the queue on or off" },
    { k.refresh, "re-read the state from agentd" },
    { k.undo, "undo the newest change of the goal or the todo list (the section under the cursor)" },
    { k.close, "close the sidebar" },
  }
  local lines = { "agentd sidebar keys:" }
  for _, r in ipairs(rows) do
    if r[1] then
      table.insert(lines, string.format("  %-6s %s", r[1], r[2]))
    end
  end
  vim.notify(table.concat(lines, "\n"), vim.log.levels.INFO)
end

local function set_keymaps(buf)
  local keys = config.get().sidebar.keys
  for name, lhs in pairs(keys) do
    if lhs and M.actions[name] then
      vim.keymap.set("n", lhs, M.actions[name], { buffer = buf, nowait = true, silent = true, desc = "agentd: " .. name })
    end
  end
end

local function create_buf(root)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].buflisted = false
  pcall(vim.api.nvim_buf_set_name, buf, "agentd://sidebar")
  vim.b[buf].agentd_root = root
  vim.bo[buf].filetype = "agentd"
  vim.bo[buf].modifiable = false
  set_keymaps(buf)
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    callback = function()
      M.buf = nil
      M.layout = nil
      stop_timer()
    end,
  })
  return buf
end

--- Opens the sidebar for a connection (in the current tab page).
---@param conn agentd.Conn
function M.open(conn)
  M.define_highlights()
  if not buf_valid() then
    M.buf = create_buf(conn.root)
  elseif vim.b[M.buf].agentd_root ~= conn.root then
    vim.b[M.buf].agentd_root = conn.root
    M.layout = nil
  end
  local existing = wins()
  if #existing > 0 then
    vim.api.nvim_set_current_win(existing[1])
  else
    local cfg = config.get().sidebar
    local cmd = (cfg.position == "left" and "topleft" or "botright") .. " vertical " .. cfg.width .. "split"
    vim.cmd(cmd)
    local win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, M.buf)
    local wo = vim.wo[win]
    wo.number = false
    wo.relativenumber = false
    wo.signcolumn = "no"
    wo.foldcolumn = "0"
    wo.wrap = true
    wo.linebreak = true
    wo.breakindent = true
    wo.breakindentopt = "shift:4"
    wo.list = false
    wo.spell = false
    wo.cursorline = true
    wo.winfixwidth = true
  end
  M.render()
  if M.layout and M.layout.item_lines[1] and vim.api.nvim_win_get_cursor(0)[1] == 1 then
    pcall(vim.api.nvim_win_set_cursor, 0, { M.layout.item_lines[1], 0 })
  end
end

function M.close()
  for _, w in ipairs(wins()) do
    if #vim.api.nvim_tabpage_list_wins(0) > 1 then
      vim.api.nvim_win_close(w, true)
    end
  end
  stop_timer()
end

---@param conn agentd.Conn
function M.toggle(conn)
  if M.is_open() then
    M.close()
  else
    M.open(conn)
  end
end

--- Puts the cursor on the todo with index idx (used by tests and commands).
function M.focus_item(idx)
  if M.layout and M.layout.item_lines[idx] then
    for _, w in ipairs(wins()) do
      vim.api.nvim_win_set_cursor(w, { M.layout.item_lines[idx], 0 })
    end
    return true
  end
  return false
end

client.on_change(function(conn)
  if buf_valid() and vim.b[M.buf].agentd_root == conn.root then
    M.render()
  end
end)

return M
