-- agentd: Neovim client for the agentd workspace daemon.
-- Entry points: setup(), the functions behind the :Agentd* commands, statusline().
-- Wiring only: connections live in agentd.client, text in agentd.render, the view in
-- agentd.sidebar.
local client = require("agentd.client")
local config = require("agentd.config")
local render = require("agentd.render")
local protocol = require("agentd.protocol")
local v = require("agentd.store").value

local M = {}
local configured = false
local augroup = nil
local uv = vim.uv or vim.loop

local function notify(msg, level)
  vim.notify("agentd: " .. msg, level or vim.log.levels.INFO)
end

local function supported()
  if vim.fn.has("nvim-0.10") == 1 then
    return true
  end
  notify("Neovim 0.10 or newer is needed (vim.lsp.start with root_dir, vim.fs.root, vim.system)", vim.log.levels.ERROR)
  return false
end

--- Configures the plugin and (with autostart) starts or attaches the client of the
--- current workspace root.
---@param opts table|nil see :help agentd-config
function M.setup(opts)
  if not supported() then
    return
  end
  local prev_session = configured and config.session() or nil
  config.set(opts)
  configured = true
  if prev_session and prev_session ~= config.session() then
    -- A different session: the running clients carry the old one in initializationOptions.
    client.stop_all()
  end
  augroup = vim.api.nvim_create_augroup("agentd", { clear = true })
  vim.api.nvim_create_autocmd("ColorScheme", {
    group = augroup,
    callback = function()
      require("agentd.sidebar").define_highlights()
    end,
  })
  if config.get().autostart then
    vim.api.nvim_create_autocmd("DirChanged", {
      group = augroup,
      callback = function()
        M.start()
      end,
    })
    if vim.v.vim_did_enter == 1 then
      M.start()
    else
      vim.api.nvim_create_autocmd("VimEnter", { group = augroup, once = true, callback = function()
        M.start()
      end })
    end
  end
end

local function ensure_setup()
  if not configured then
    M.setup({ autostart = false })
  end
end

--- Starts or attaches the client of the buffer's workspace; returns the connection.
---@param bufnr integer|nil
function M.start(bufnr)
  if not supported() then
    return nil
  end
  ensure_setup()
  return client.ensure(bufnr)
end

--- The connection of the current workspace (started when needed).
function M.conn()
  return M.start(0)
end

--- Runs a goal command and takes the State it returns. cb(err, state) optional.
--- opts.any_revision: take it whatever its revision (the folder may have changed stores).
local function goal_command(command, args, done_msg, cb, opts)
  local conn = M.conn()
  if not conn then
    return
  end
  client.execute(conn, command, args, function(err, result)
    if err then
      local msg = client.describe_error(err)
      local hint = render.error_hints[client.error_code(err)]
      if hint then
        msg = msg .. " (" .. hint .. ")"
      end
      notify(msg, vim.log.levels.ERROR)
    else
      client._take_state(conn, result, opts and opts.any_revision)
      if done_msg then
        notify(done_msg)
      end
    end
    if cb then
      cb(err, result)
    end
  end)
end

--- The objective of a goal typed after :{command}, trimmed; nil (after showing the
--- command's usage) when it is blank.
local function objective_arg(objective, command)
  objective = vim.trim(objective or "")
  if objective == "" then
    notify("usage: :" .. command .. " {objective}", vim.log.levels.WARN)
    return nil
  end
  return objective
end

--- :AgentdGoal {objective} — agentd.goal.create (replace with bang).
function M.goal_create(objective, replace, cb)
  objective = objective_arg(objective, "AgentdGoal")
  if not objective then
    return
  end
  goal_command(protocol.commands.goal_create, { objective = objective, replace = replace or nil }, "goal created", cb)
end

function M.goal_pause(reason, cb)
  reason = vim.trim(reason or "")
  goal_command(protocol.commands.goal_pause, { reason = reason ~= "" and reason or nil }, "goal paused", cb)
end

--- :AgentdGoalWait {duration|time} [path...] — agentd.goal.wait (docs/runtime.md §2.13): the
--- first word is how long (`30m`, `2h`) or until when (`14:00`, RFC 3339); the others, files or
--- folders of the workspace whose change wakes the goal (a first word that is neither is a path).
function M.goal_wait(fargs, cb)
  local args = { paths = {} }
  for i, word in ipairs(fargs or {}) do
    if i == 1 and word:match("^[%d.]+[hms][%d.hms]*$") then
      args["for"] = word
    elseif i == 1 and word:match("^%d+:%d") then
      args["until"] = word
    else
      table.insert(args.paths, word)
    end
  end
  if #args.paths == 0 then
    args.paths = nil
  end
  goal_command(protocol.commands.goal_wait, args, "goal waiting", cb)
end

function M.goal_resume(cb)
  goal_command(protocol.commands.goal_resume, {}, "goal resumed", cb)
end

function M.goal_cancel(cb)
  goal_command(protocol.commands.goal_cancel, {}, "goal cancelled", cb)
end

--- :AgentdBudget {value} {unit} — agentd.goal.setBudget {turns|tokens|wallClockMs}.
function M.goal_budget(value, unit, cb)
  local args, err = render.parse_budget(value, unit)
  if not args then
    notify(err .. "; usage: :AgentdBudget {value} {turns|tokens|seconds|minutes|hours}", vim.log.levels.WARN)
    return
  end
  goal_command(protocol.commands.goal_set_budget, args, "budget set", cb)
end

--- :AgentdSetCheck {command} — agentd.goal.setCheck: the goal's verification command
--- (docs/runtime.md §2.10); clear (:AgentdSetCheck!) removes it.
function M.goal_set_check(command, clear, cb)
  command = vim.trim(command or "")
  if clear then
    goal_command(protocol.commands.goal_set_check, { command = vim.NIL }, "check removed", cb)
    return
  end
  if command == "" then
    notify("usage: :AgentdSetCheck {command} (:AgentdSetCheck! removes the check)", vim.log.levels.WARN)
    return
  end
  goal_command(protocol.commands.goal_set_check, { command = command }, "check set", cb)
end

--- :AgentdCheck — agentd.goal.runCheck: runs the goal's check now, without completing
--- the goal; the sidebar shows it running, then its result. Waits as long as the check
--- runs (the daemon's time limit), not timeout_ms.
function M.goal_check(cb)
  goal_command(protocol.commands.goal_run_check, {}, nil, function(err, result)
    if not err and result and result.run then
      local what = "check " .. render.check_summary(result.run)
      notify(what, result.passed and vim.log.levels.INFO or vim.log.levels.WARN)
    end
    if cb then
      cb(err, result)
    end
  end)
end

--- Asks a yes/no question with vim.fn.confirm; true only for yes.
local function confirm(question, yes)
  return vim.fn.confirm(question, "&" .. yes .. "\n&Cancel", 2, "Question") == 1
end

--- :AgentdApproveCheck — agentd.goal.approveCheck after a question that shows the command
--- in full and who set it (docs/runtime.md §2.10). Sends exactly the text shown, so a
--- check changed in between is refused by agentd, never approved unseen.
function M.goal_approve_check(cb)
  local conn = M.conn()
  local goal = conn and conn.store.state and conn.store.state.goal
  local check = goal and v(goal.check)
  if not check then
    notify("the goal has no check to approve")
    return
  end
  if not render.check_waits(check) then
    notify("the goal's check is already approved on this machine")
    return
  end
  if not confirm(render.approve_check_prompt(check), "Approve") then
    notify("the check was not approved")
    return
  end
  goal_command(protocol.commands.goal_approve_check, { command = check.command }, "check approved: agentd runs it before the agent may complete the goal", cb)
end

--- :AgentdTeamAccept — agentd.team.accept after a question that lists the team file's
--- etcd endpoints and says that this machine's etcd credentials go there (docs/team.md).
--- Sends the hash of the file shown (a changed file is refused); the folder may then be
--- served by the team store, so its State is taken whatever its revision, and read again.
function M.team_accept(cb)
  local conn = M.conn()
  local tf = conn and conn.store.state and v(conn.store.state.teamFile)
  if not tf or tf.status ~= "pending" then
    notify(tf and ("this folder's team file cannot be used: " .. tostring(v(tf.error))) or "this folder has no team file waiting for acceptance")
    return
  end
  if not confirm(render.team_accept_prompt(tf), "Accept") then
    notify("the team file was not accepted")
    return
  end
  -- The answer is {path, id, sha256, endpoints, sendsTo, reopened}, not a State:
  -- the folder may now be served by the team store, read again whatever its revision.
  client.execute(conn, protocol.commands.team_accept, { sha256 = tf.sha256 }, function(err, result)
    if err then
      notify(client.describe_error(err), vim.log.levels.ERROR)
    else
      notify("team file accepted: this folder is shared through etcd at " .. table.concat(v(result.sendsTo) or {}, ", "))
    end
    conn.take_any_revision = true
    client.refresh(conn)
    if cb then
      cb(err, result)
    end
  end)
end

--- :AgentdQueueAdd {objective} — agentd.goal.queue.add; opts {criterion, check} optional.
function M.queue_add(objective, opts, cb)
  objective = objective_arg(objective, "AgentdQueueAdd")
  opts = opts or {}
  if not objective then
    return
  end
  local args = { objective = objective }
  if opts.criterion and vim.trim(opts.criterion) ~= "" then
    args.completionCriterion = vim.trim(opts.criterion)
  end
  if opts.check and vim.trim(opts.check) ~= "" then
    args.check = vim.trim(opts.check)
  end
  goal_command(protocol.commands.goal_queue_add, args, "goal queued", cb)
end

--- The queued goal at 1-based position n of the shown queue, or nil after telling the user.
local function queued_at(n)
  local conn = M.conn()
  local items = conn and conn.store.state and conn.store.state.queue.items or {}
  local it = items[tonumber(n) or 0]
  if not it then
    notify(string.format("no queued goal %s; the queue has %d", tostring(n), #items), vim.log.levels.WARN)
  end
  return it
end

--- :AgentdQueueRemove {n} — agentd.goal.queue.remove of the n-th queued goal (1 is first).
function M.queue_remove(n, cb)
  local it = queued_at(n)
  if it then
    goal_command(protocol.commands.goal_queue_remove, { id = it.id }, "removed from the queue", cb)
  end
end

--- :AgentdQueueMove {n} {to} — agentd.goal.queue.move: the n-th queued goal to position to (1-based).
function M.queue_move(n, to, cb)
  local it = queued_at(n)
  to = tonumber(to)
  if not it then
    return
  end
  if not to then
    notify("usage: :AgentdQueueMove {n} {to}", vim.log.levels.WARN)
    return
  end
  goal_command(protocol.commands.goal_queue_move, { id = it.id, index = to - 1 }, nil, cb)
end

--- :AgentdQueueAutoAdvance on|off — agentd.goal.queue.setAutoAdvance.
function M.queue_auto_advance(on, cb)
  goal_command(protocol.commands.goal_queue_set_auto_advance, { on = on }, "auto-advance " .. (on and "on" or "off"), cb)
end

--- :AgentdTodoAdd {title} — appends a pending todo (agentd.todo.set with expectedRevision).
function M.todo_add(title, cb)
  title = vim.trim(title or "")
  if title == "" then
    notify("usage: :AgentdTodoAdd {title}", vim.log.levels.WARN)
    return
  end
  local conn = M.conn()
  if not conn then
    return
  end
  local function go()
    client.edit_todos(conn, function(items)
      return render.add(items, title)
    end, cb)
  end
  if conn.store.state then
    go()
  else
    client.refresh(conn, function(err)
      if not err then
        go()
      elseif cb then
        cb(err)
      end
    end)
  end
end

--- :AgentdUndo [todo|goal] — agentd.undo of the newest change of that scope (none:
--- of either), compare-and-set on the revision shown (docs/runtime.md §6).
function M.undo(scope, cb)
  scope = vim.trim(scope or "")
  if scope ~= "" and scope ~= "todo" and scope ~= "goal" then
    notify("usage: :AgentdUndo [todo|goal]", vim.log.levels.WARN)
    return
  end
  local conn = M.conn()
  if conn then
    require("agentd.history").undo(conn, scope ~= "" and scope or nil, cb)
  end
end

--- :AgentdHistory — the session's history in a buffer, newest first.
function M.history()
  local conn = M.conn()
  if conn then
    require("agentd.history").open(conn)
  end
end

--- :AgentdToggle — opens or closes the sidebar for the current workspace.
function M.toggle()
  local sidebar = require("agentd.sidebar")
  if sidebar.is_open() then
    sidebar.close()
    return
  end
  local conn = M.conn()
  if conn then
    sidebar.open(conn)
  end
end

--- :AgentdRefresh — re-reads agentd.state.
function M.refresh(cb)
  local conn = M.conn()
  if conn then
    client.refresh(conn, cb)
  end
end

--- :AgentdTaskFile — opens the goal's task file.
function M.open_task_file()
  local conn = M.conn()
  local goal = conn and conn.store.state and conn.store.state.goal
  local tf = goal and goal.taskFile
  if not tf or type(tf.path) ~= "string" then
    notify("the goal has no task file")
    return
  end
  local path = tf.path
  if path:sub(1, 1) ~= "/" then
    path = conn.root .. "/" .. path
  end
  vim.cmd.edit(vim.fn.fnameescape(path))
end

--- The current state of the current workspace, or nil (never starts a client).
function M.state()
  local conn = M.current_conn()
  return conn and conn.store.state or nil
end

-- Buffer -> root, so a statusline redraw does not search the file system each time.
local root_cache = {}

--- The connection shown for the current buffer without starting one.
function M.current_conn()
  local only, n = nil, 0
  for _, c in pairs(client.conns) do
    only, n = c, n + 1
  end
  if n == 0 then
    return nil
  end
  if n == 1 then
    return only
  end
  local buf = vim.api.nvim_get_current_buf()
  local key = vim.api.nvim_buf_get_name(buf) .. "\0" .. vim.fn.getcwd()
  local hit = root_cache[buf]
  if not hit or hit.key ~= key then
    hit = { key = key, root = client.root_for(buf) }
    root_cache[buf] = hit
  end
  return client.conns[hit.root]
end

--- Goal summary for a statusline, e.g. "goal active 3/20 turns 1.2k tok"; "" when
--- there is no goal (or no connection).
function M.statusline()
  local ok, res = pcall(function()
    local conn = M.current_conn()
    if not conn or not conn.store.state then
      return ""
    end
    return render.statusline(conn.store.state, { elapsed_since_ms = uv.now() - conn.received_at })
  end)
  return ok and res or ""
end

--- Completion for :AgentdBudget: units for the second argument.
function M.complete_budget(arglead, cmdline, _)
  local args = vim.split(cmdline, "%s+", { trimempty = false })
  -- args[1] is the command; the argument being completed is the last one.
  local n = #args - 1
  local list
  if n <= 1 then
    list = { "none" }
  elseif n == 2 then
    list = render.budget_units
  else
    return {}
  end
  return vim.tbl_filter(function(s)
    return s:sub(1, #arglead) == arglead
  end, list)
end

return M
