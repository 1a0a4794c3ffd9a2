-- agentd.client: one language client per workspace root, started with vim.lsp.start.
-- Owns the connections (client id, lifecycle, restarts), the notification handlers,
-- the per-connection store (agentd.store) and the todo edit queue; sends
-- `workspace/executeCommand`. Knows nothing about windows or rendering: views
-- subscribe with `on_change`.
local config = require("agentd.config")
local store_mod = require("agentd.store")
local protocol = require("agentd.protocol")

local M = {}

---@class agentd.Conn
---@field root string
---@field client_id integer|nil
---@field status "starting"|"ready"|"stopped"
---@field error string|nil
---@field store agentd.Store
---@field received_at integer uv.now() when the goal snapshot was last taken
---@field server_info table|nil
---@field protocol_version integer|nil
---@field waiting function[] requests queued until the client is initialized
---@field edits table[] queued todo edits
---@field editing boolean
---@field refreshing boolean
---@field want_revision integer|nil
---@field restarts integer
---@field stopping boolean
---@field started_at integer

---@type table<string, agentd.Conn>
M.conns = {}
local listeners = {}

local uv = vim.uv or vim.loop

local function notify(msg, level)
  vim.notify("agentd: " .. msg, level or vim.log.levels.INFO)
end

--- client.request / client:request across 0.10 and 0.11+.
local function request(client, method, params, handler)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:request(method, params, handler)
  end
  return client.request(method, params, handler)
end

local function is_alive(client)
  if not client then
    return false
  end
  if vim.fn.has("nvim-0.11") == 1 then
    return not client:is_stopped()
  end
  return not client.is_stopped()
end

--- Registers fn(conn) to run after any change of a connection's state or status.
function M.on_change(fn)
  table.insert(listeners, fn)
  return function()
    for i, f in ipairs(listeners) do
      if f == fn then
        table.remove(listeners, i)
        return
      end
    end
  end
end

local function emit(conn)
  for _, fn in ipairs(listeners) do
    local ok, err = pcall(fn, conn)
    if not ok then
      vim.notify("agentd: view update failed: " .. tostring(err), vim.log.levels.ERROR)
    end
  end
  pcall(vim.api.nvim_exec_autocmds, "User", {
    pattern = "AgentdStateChanged",
    modeline = false,
    data = { root = conn.root, status = conn.status, revision = conn.store.revision },
  })
  pcall(vim.cmd, "redrawstatus")
end
M._emit = emit

local function normalize(path)
  path = vim.fn.fnamemodify(path, ":p")
  path = vim.fs.normalize(path)
  if #path > 1 then
    path = path:gsub("/+$", "")
  end
  return path
end

--- The workspace root for a buffer: the sidebar's own root, the configured root_dir,
--- the nearest folder with a root marker, else the current directory.
---@param bufnr integer|nil
---@return string
function M.root_for(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local ok, pinned = pcall(vim.api.nvim_buf_get_var, bufnr, "agentd_root")
  if ok and type(pinned) == "string" and pinned ~= "" then
    return pinned
  end
  local cfg = config.get()
  local root
  if type(cfg.root_dir) == "function" then
    root = cfg.root_dir(bufnr)
  elseif type(cfg.root_dir) == "string" then
    root = cfg.root_dir
  elseif vim.bo[bufnr].buftype == "" and vim.api.nvim_buf_get_name(bufnr) ~= "" then
    root = vim.fs.root(bufnr, cfg.root_markers)
  end
  if not root or root == "" then
    root = vim.fs.root(vim.fn.getcwd(), cfg.root_markers) or vim.fn.getcwd()
  end
  return normalize(root)
end

local function new_conn(root)
  return {
    root = root,
    status = "stopped",
    store = store_mod.new(config.session()),
    received_at = uv.now(),
    waiting = {},
    edits = {},
    editing = false,
    refreshing = false,
    refresh_waiters = {},
    restarts = 0,
    stopping = false,
    started_at = uv.now(),
  }
end

local function conn_for_client(client_id)
  for _, conn in pairs(M.conns) do
    if conn.client_id == client_id then
      return conn
    end
  end
end

--- Takes a full State (from agentd.state, a command result or a conflict).
local function take_state(conn, state, force)
  if store_mod.set_state(conn.store, state, force) then
    conn.received_at = uv.now()
    emit(conn)
    return true
  end
  return false
end
M._take_state = take_state

--- The domain error code of a JSON-RPC error (err.data.code, e.g. "todo.conflict"), or
--- nil when it carries none.
function M.error_code(err)
  return type(err.data) == "table" and err.data.code or nil
end

--- After a todo.conflict error (agentd.todo.set, agentd.undo; docs/protocol.md §3): takes
--- the current State the error carries in data.state, or re-reads it when there is none.
function M.take_conflict_state(conn, err)
  if type(err.data.state) == "table" then
    take_state(conn, err.data.state, true)
  else
    M.refresh(conn)
  end
end

--- Sends workspace/executeCommand `command` with ARGS `args`; cb(err, result).
--- Waits for the client to be initialized; fails at once when it is not running.
---@param conn agentd.Conn
function M.execute(conn, command, args, cb)
  cb = cb or function() end
  args = args or {}
  local cfg = config.get()
  if args.session == nil and cfg.session then
    args.session = cfg.session
  end
  if next(args) == nil then
    args = vim.empty_dict()
  end
  local function send()
    local client = conn.client_id and vim.lsp.get_client_by_id(conn.client_id)
    if not is_alive(client) then
      cb({ code = -32099, message = "agentd is not connected" .. (conn.error and (" (" .. conn.error .. ")") or "") })
      return
    end
    local answered = false
    -- A daemon that does not answer is said, once, after timeout_ms; the request is
    -- not cancelled (a write may still land) and its answer is still taken. A check
    -- runs as long as agentd lets it, so agentd.goal.runCheck is not timed.
    if cfg.timeout_ms > 0 and command ~= protocol.commands.goal_run_check then
      vim.defer_fn(function()
        if not answered then
          notify(string.format("%s has had no answer for %d ms; still waiting (the daemon is busy or stopped; a restart of it brings the client back)",
            command, cfg.timeout_ms), vim.log.levels.WARN)
        end
      end, cfg.timeout_ms)
    end
    local ok = request(client, "workspace/executeCommand", { command = command, arguments = { args } }, function(err, result)
      answered = true
      cb(err, result)
    end)
    if not ok then
      cb({ code = -32099, message = "agentd: request could not be sent" })
    end
  end
  if conn.status == "starting" then
    table.insert(conn.waiting, send)
  else
    send()
  end
end

--- Re-reads agentd.state (after a revision gap, a start or a restart).
function M.refresh(conn, cb)
  if conn.refreshing then
    if cb then
      table.insert(conn.refresh_waiters, cb)
    end
    return
  end
  conn.refreshing = true
  conn.refresh_waiters = cb and { cb } or {}
  M.execute(conn, protocol.commands.state, {}, function(err, result)
    conn.refreshing = false
    local waiters = conn.refresh_waiters
    conn.refresh_waiters = {}
    if err then
      conn.error = err.message
      emit(conn)
    else
      -- After agentd/storeChanged the folder may be served by another store (a
      -- team file accepted: docs/team.md), whose revisions are its own.
      take_state(conn, result, conn.take_any_revision)
      conn.take_any_revision = nil
      if conn.want_revision and conn.store.revision < conn.want_revision then
        conn.want_revision = nil
        M.refresh(conn)
      end
    end
    for _, w in ipairs(waiters) do
      w(err, result)
    end
  end)
end

local function on_notification(method)
  return function(_, params, ctx)
    local conn = conn_for_client(ctx.client_id)
    if not conn or type(params) ~= "table" then
      return
    end
    if method == protocol.notifications.store_changed then
      conn.take_any_revision = true
      M.refresh(conn)
      return
    end
    local kind = store_mod.classify(conn.store, params)
    if kind == "apply" then
      store_mod.apply(conn.store, method, params)
      if method == protocol.notifications.goal_changed then
        conn.received_at = uv.now()
      end
      emit(conn)
    elseif kind == "gap" then
      local rev = tonumber(params.revision)
      if rev then
        conn.want_revision = math.max(conn.want_revision or -1, rev)
      end
      M.refresh(conn)
    end
  end
end

M.handlers = {}
for _, method in pairs(protocol.notifications) do
  M.handlers[method] = on_notification(method)
end

local start_client

local function on_exit(code, signal, client_id)
  vim.schedule(function()
    local conn = conn_for_client(client_id)
    if not conn then
      return
    end
    conn.client_id = nil
    conn.status = "stopped"
    conn.refreshing = false
    local waiting = conn.waiting
    conn.waiting = {}
    for _, send in ipairs(waiting) do
      send()
    end
    if conn.stopping then
      conn.error = nil
      emit(conn)
      return
    end
    conn.error = string.format("server exited (code %s%s)", tostring(code), (signal and signal ~= 0) and (", signal " .. signal) or "")
    local cfg = config.get()
    if uv.now() - conn.started_at > 30000 then
      conn.restarts = 0
    end
    local exiting = vim.v.exiting ~= vim.NIL
    if cfg.auto_restart and not exiting and conn.restarts < cfg.max_restarts then
      conn.restarts = conn.restarts + 1
      local delay = math.min(8000, 250 * 2 ^ (conn.restarts - 1))
      conn.error = conn.error .. string.format("; restarting (%d/%d)", conn.restarts, cfg.max_restarts)
      emit(conn)
      vim.defer_fn(function()
        if conn.status == "stopped" and not conn.stopping and M.conns[conn.root] == conn then
          start_client(conn)
        end
      end, delay)
    else
      emit(conn)
    end
  end)
end

--- Starts (or attaches to) the language client of conn.root via vim.lsp.start.
---@param conn agentd.Conn
---@param bufnr integer|nil buffer to attach (default: the current one)
start_client = function(conn, bufnr)
  local cfg = config.get()
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local init_options = {}
  if cfg.session then
    init_options.session = cfg.session
  end
  if cfg.agent then
    init_options.agent = cfg.agent
  end
  if cfg.settings then
    init_options.settings = cfg.settings
  end
  if next(init_options) == nil then
    init_options = vim.empty_dict()
  end
  conn.status = "starting"
  conn.stopping = false
  conn.started_at = uv.now()
  if conn.store.session ~= config.session() then
    conn.store = store_mod.new(config.session())
  else
    -- Keep showing the last state until the new client has read it again.
    conn.store.revision = -1
    conn.store.own_prev = {}
  end
  conn.edits = {}
  conn.editing = false
  local root = conn.root
  local id = vim.lsp.start({
    name = "agentd",
    cmd = cfg.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = init_options,
    settings = cfg.settings and { agentd = cfg.settings } or nil,
    handlers = M.handlers,
    on_init = function(client, result)
      local c = M.conns[root]
      if not c or c.client_id ~= client.id then
        return
      end
      c.status = "ready"
      c.error = nil
      c.server_info = result and result.serverInfo
      local exp = result and result.capabilities and result.capabilities.experimental
      c.protocol_version = exp and exp.agentd and exp.agentd.protocolVersion
      local waiting = c.waiting
      c.waiting = {}
      emit(c)
      M.refresh(c)
      for _, send in ipairs(waiting) do
        send()
      end
    end,
    on_exit = on_exit,
  }, {
    bufnr = bufnr,
    silent = true,
    reuse_client = function(client, conf)
      return client.name == conf.name and client.config.root_dir == conf.root_dir and is_alive(client)
    end,
  })
  if not id then
    conn.status = "stopped"
    local exe = type(cfg.cmd) == "table" and cfg.cmd[1] or "agentd"
    conn.error = string.format("could not start %s", table.concat(type(cfg.cmd) == "table" and cfg.cmd or { exe }, " "))
    if type(cfg.cmd) == "table" and vim.fn.executable(exe) == 0 then
      conn.error = string.format("%s not found on PATH (see :checkhealth agentd)", exe)
    end
    emit(conn)
    return nil
  end
  local client = vim.lsp.get_client_by_id(id)
  conn.client_id = id
  if client and client.initialized then
    -- Reused a client that was already running.
    conn.status = "ready"
    M.refresh(conn)
  end
  emit(conn)
  return id
end

--- The connection of the buffer's workspace, started when needed.
---@param bufnr integer|nil
---@return agentd.Conn
function M.ensure(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local root = M.root_for(bufnr)
  local conn = M.conns[root]
  if not conn then
    conn = new_conn(root)
    M.conns[root] = conn
  end
  local client = conn.client_id and vim.lsp.get_client_by_id(conn.client_id)
  if is_alive(client) then
    if vim.bo[bufnr].buftype == "" and vim.api.nvim_buf_is_loaded(bufnr) then
      vim.lsp.buf_attach_client(bufnr, conn.client_id)
    end
    return conn
  end
  conn.restarts = 0
  start_client(conn, bufnr)
  return conn
end

--- The connection of the buffer's workspace if there is one (never starts a client).
function M.get(bufnr)
  return M.conns[M.root_for(bufnr)]
end

--- Stops a connection's client without restarting it.
function M.stop(conn)
  conn.stopping = true
  local client = conn.client_id and vim.lsp.get_client_by_id(conn.client_id)
  if client then
    if vim.fn.has("nvim-0.11") == 1 then
      client:stop()
    else
      client.stop()
    end
  end
end

function M.stop_all()
  for _, conn in pairs(M.conns) do
    M.stop(conn)
  end
end

--- Queues a todo edit: fn(items) -> new items. Sent as agentd.todo.set with
--- expectedRevision = the list's revision; a todo.conflict refreshes from the
--- error's state and tells the user, never overwrites. cb(err, state) optional.
---@param conn agentd.Conn
---@param fn fun(items: table): table
function M.edit_todos(conn, fn, cb)
  if not conn.store.state then
    notify("the todo list has not been read yet", vim.log.levels.WARN)
    if cb then
      cb({ message = "state not read yet" })
    end
    return
  end
  table.insert(conn.edits, { fn = fn, base = conn.store.state.todos.revision, cb = cb })
  M._pump(conn)
end

function M._pump(conn)
  if conn.editing or #conn.edits == 0 then
    return
  end
  local e = table.remove(conn.edits, 1)
  local st = conn.store.state
  if not store_mod.edit_applies(conn.store, e.base) then
    conn.edits = {}
    notify("the todo list changed elsewhere; your edit was not applied", vim.log.levels.WARN)
    if e.cb then
      e.cb({ message = "todo list changed", data = { code = protocol.errors.todo_conflict } })
    end
    return
  end
  local ok, items = pcall(e.fn, st.todos.items)
  if not ok then
    notify(tostring(items), vim.log.levels.WARN)
    if e.cb then
      e.cb({ message = tostring(items) })
    end
    return M._pump(conn)
  end
  local before = st.todos.revision
  conn.editing = true
  M.execute(conn, protocol.commands.todo_set, { items = items, expectedRevision = before }, function(err, result)
    conn.editing = false
    if err then
      if M.error_code(err) == protocol.errors.todo_conflict then
        conn.edits = {}
        M.take_conflict_state(conn, err)
        notify("the todo list was changed elsewhere; showing the current list (your edit was not applied)", vim.log.levels.WARN)
      else
        notify("todo edit failed: " .. M.describe_error(err), vim.log.levels.ERROR)
      end
    else
      if type(result) == "table" and type(result.todos) == "table" then
        store_mod.record_own_write(conn.store, before, result.todos.revision)
      end
      take_state(conn, result)
    end
    if e.cb then
      e.cb(err, result)
    end
    M._pump(conn)
  end)
end

--- A one-line description of a JSON-RPC error, with the domain code when present.
function M.describe_error(err)
  if type(err) ~= "table" then
    return tostring(err)
  end
  local msg = err.message or "unknown error"
  local code = M.error_code(err)
  if code and code ~= vim.NIL and not msg:find(code, 1, true) then
    msg = msg .. " [" .. code .. "]"
  end
  return msg
end

return M
