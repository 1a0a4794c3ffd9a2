-- agentd.store: the client-side copy of one session's State and the rules that keep it
-- in step with the server (docs/protocol.md §4): which notification applies, which is stale,
-- which reveals a revision gap (so the caller re-reads `agentd.state`), and whether a
-- queued todo edit still matches the list it was made against.
-- Pure Lua on plain tables: no client, no buffers, no timers.
local protocol = require("agentd.protocol")

local M = {}

--- JSON null arrives as vim.NIL inside arrays (and nil inside objects): value(x) is nil
--- for both, else x. Every module that reads the server's State reads nulls with it.
function M.value(x)
  if x == vim.NIL then
    return nil
  end
  return x
end
local v = M.value

---@class agentd.Store
---@field session string session whose notifications apply
---@field state table|nil last known State
---@field revision integer session revision of `state` (-1 before the first read)
---@field own_prev table<integer, integer> todos.revision after one of our writes -> todos.revision before it

---@param session string
---@return agentd.Store
function M.new(session)
  return { session = session, state = nil, revision = -1, own_prev = {} }
end

--- What a notification means for the store.
---@return "apply"|"stale"|"gap"|"ignore"
function M.classify(store, params)
  if type(params) ~= "table" then
    return "ignore"
  end
  local session = v(params.session)
  if session and store.session and session ~= store.session then
    return "ignore"
  end
  local rev = tonumber(v(params.revision))
  if not rev or not store.state then
    return "gap"
  end
  if rev < store.revision then
    return "stale"
  end
  if rev == store.revision or rev == store.revision + 1 then
    return "apply"
  end
  return "gap"
end

--- Replaces the state with a full State if it is not older than the one held.
---@return boolean taken
function M.set_state(store, state, force)
  if type(state) ~= "table" then
    return false
  end
  local rev = tonumber(v(state.revision)) or -1
  if not force and store.state and rev < store.revision then
    return false
  end
  state.goal = v(state.goal)
  state.todos = v(state.todos) or { items = {}, revision = 0 }
  state.todos.items = v(state.todos.items) or {}
  state.queue = v(state.queue) or { items = {}, autoAdvance = true }
  state.queue.items = v(state.queue.items) or {}
  store.state = state
  store.revision = rev
  return true
end

--- Applies a notification already classified "apply".
---@param method string one of protocol.notifications
function M.apply(store, method, params)
  local st = store.state
  local rev = tonumber(v(params.revision)) or store.revision
  if method == protocol.notifications.todo_changed then
    st.todos = { items = v(params.items) or {}, revision = rev, subagentLists = v(params.subagentLists) }
  elseif method == protocol.notifications.goal_changed then
    st.goal = v(params.goal)
  elseif method == protocol.notifications.queue_changed then
    st.queue = { items = v(params.items) or {}, autoAdvance = v(params.autoAdvance) ~= false }
  elseif method == protocol.notifications.task_file_changed then
    if st.goal then
      local tf = v(st.goal.taskFile) or {}
      tf.path = v(params.path) or tf.path
      tf.exists = v(params.exists)
      tf.sha256 = v(params.sha256)
      tf.changedAt = v(params.changedAt)
      st.goal.taskFile = tf
    end
  end
  st.revision = rev
  store.revision = rev
end

--- Remembers that our own todo write moved the list from `before` to `after`.
function M.record_own_write(store, before, after)
  if before and after and after ~= before then
    store.own_prev[after] = before
  end
end

--- Whether an edit made while the list was at todos.revision `base` may be applied
--- to the list now held: yes when nothing changed, or when every change since was
--- one of our own writes (keys pressed faster than the server answered).
function M.edit_applies(store, base)
  if not store.state then
    return false
  end
  local cur = store.state.todos.revision
  local guard = 0
  while cur ~= base do
    cur = store.own_prev[cur]
    guard = guard + 1
    if cur == nil or guard > 1000 then
      return false
    end
  end
  return true
end

return M
