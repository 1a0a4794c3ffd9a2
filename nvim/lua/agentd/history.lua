-- agentd.history: a session's history in a buffer (:AgentdHistory) and undo
-- (:AgentdUndo, `u` in the sidebar; docs/runtime.md §6).
-- The text functions at the top are pure (unit tested on plain tables); the buffer
-- and the commands below them talk to the client.
local protocol = require("agentd.protocol")
local render = require("agentd.render")
local v = require("agentd.store").value

local M = {}

local actors = { user = "you", model = "the agent", runtime = "agentd", system = "agentd" }

local kind_text = {
  ["todo.write"] = "todo list written",
  ["todo.set"] = "todo list edited",
  ["todo.undo"] = "todo list change undone",
  ["todo.subagentWrite"] = "a subagent's todo list written",
  ["goal.create"] = "goal created",
  ["goal.replace"] = "goal replaced",
  ["goal.cancel"] = "goal cancelled",
  ["goal.pause"] = "goal paused",
  ["goal.resume"] = "goal resumed",
  ["goal.block"] = "goal blocked",
  ["goal.complete"] = "goal completed",
  ["goal.budget"] = "goal budget changed",
  ["goal.taskFile"] = "task file changed",
  ["goal.progress"] = "goal progress",
  ["goal.undo"] = "goal change undone",
}

--- The actor as the history says it: "you", "the agent", "agentd".
function M.actor(actor)
  return actors[actor] or tostring(actor)
end

--- An event's time, "YYYY-MM-DD HH:MM:SS" as agentd sent it (UTC).
function M.time(at)
  local d, t = tostring(at or ""):match("^(%d%d%d%d%-%d%d%-%d%d)T(%d%d:%d%d:%d%d)")
  return d and (d .. " " .. t) or tostring(at)
end

local function is_todo(ev)
  return tostring(ev.kind):sub(1, 5) == "todo."
end

local function items_of(x)
  local list = type(v(x)) == "table" and v(x.items)
  return type(list) == "table" and list or nil
end

local function last_change(ev)
  local p = v(ev.payload)
  if type(p) == "table" and #p > 0 then
    return p[#p]
  end
  return nil
end

local function first_line(s)
  return (tostring(s):gsub("\n.*", ""))
end

--- What an event changed, in one line: "goal paused: lunch", "todo list written (2 items)".
function M.summary(ev)
  local text = kind_text[ev.kind] or tostring(ev.kind)
  if is_todo(ev) then
    local after = items_of(ev.payload)
    if after then
      return string.format("%s (%d item%s)", text, #after, #after == 1 and "" or "s")
    end
    return text
  end
  local last = last_change(ev)
  local detail = v(ev.reason)
  if ev.kind == "goal.create" then
    detail = last and v(last.goal) and v(last.goal.objective)
  end
  return detail and (text .. ": " .. first_line(detail)) or text
end

--- One line of the history buffer: time, actor, what changed.
function M.line(ev)
  return string.format("%s  %-9s  %s", M.time(ev.at), M.actor(ev.actor), M.summary(ev))
end

local function todo_lines(list)
  if #list == 0 then
    return { "todo list is empty" }
  end
  local out = {}
  for _, it in ipairs(list) do
    table.insert(out, (render.markers[it.status] or ("[" .. tostring(it.status) .. "]")) .. " " .. tostring(it.title))
  end
  return out
end

local function goal_lines(goal)
  goal = v(goal)
  if type(goal) ~= "table" then
    return { "no goal" }
  end
  local out = { "objective: " .. first_line(v(goal.objective) or ""), "status: " .. tostring(v(goal.status)) }
  if v(goal.terminalReason) then
    table.insert(out, "reason: " .. first_line(goal.terminalReason))
  end
  if v(goal.completionCriterion) then
    table.insert(out, "done when: " .. first_line(goal.completionCriterion))
  end
  local turns = tonumber(v(goal.turnsUsed)) or 0
  table.insert(out, string.format("used: %d %s · %s tokens", turns, turns == 1 and "turn" or "turns", render.tokens(v(goal.tokensUsed) or 0)))
  return out
end

local not_recorded = { "(not recorded: this change was stored by an older agentd)" }

--- The list or goal before and after an event: { before = {lines}, after = {lines} }.
--- The goal after a goal event is that of its last change; none when that change
--- cleared the goal (its status is empty: a cancel, or an undo of a create).
function M.sides(ev)
  if is_todo(ev) then
    local before, after = items_of(ev.before), items_of(ev.payload)
    return { before = before and todo_lines(before) or not_recorded, after = after and todo_lines(after) or not_recorded }
  end
  local b = v(ev.before)
  local last = last_change(ev)
  local after = not_recorded
  if last then
    local status = v(last.status)
    after = goal_lines((status and status ~= "") and last.goal or nil)
  end
  return { before = (type(b) == "table" and b.goal ~= nil) and goal_lines(b.goal) or not_recorded, after = after }
end

--- The detail buffer's lines of an event: a header, then the two sections.
function M.detail_lines(ev)
  local out = { string.format("#%d %s by %s at %s", ev.seq, tostring(ev.kind), M.actor(ev.actor), M.time(ev.at)) }
  if v(ev.reason) then
    table.insert(out, first_line(ev.reason))
  end
  local s = M.sides(ev)
  table.insert(out, "")
  table.insert(out, "Before")
  for _, l in ipairs(s.before) do
    table.insert(out, "  " .. l)
  end
  table.insert(out, "After")
  for _, l in ipairs(s.after) do
    table.insert(out, "  " .. l)
  end
  return out
end

--- What an undo says it did: `undid "goal paused: lunch" (#4, by you)`.
function M.undone_message(ev)
  return string.format('undid "%s" (#%d, by %s)', M.summary(ev), ev.seq, M.actor(ev.actor))
end

-- Undo and the history buffer ------------------------------------------------------

local function notify(msg, level)
  vim.notify("agentd: " .. msg, level or vim.log.levels.INFO)
end

--- agentd.undo of the newest change of scope ("todo", "goal", or nil for either), with
--- expectedRevision = the revision shown, so only a change the user has seen is
--- undone. A todo.conflict shows the current state and warns: nothing was undone.
--- cb(err, result) optional.
function M.undo(conn, scope, cb)
  local client = require("agentd.client")
  local shown = conn.store.state
  local args = { scope = scope, expectedRevision = shown and v(shown.revision) or nil }
  client.execute(conn, protocol.commands.undo, args, function(err, result)
    if err then
      if client.error_code(err) == protocol.errors.todo_conflict then
        client.take_conflict_state(conn, err)
        notify("nothing was undone, a newer change came in: " .. client.describe_error(err), vim.log.levels.WARN)
      else
        notify("undo: " .. client.describe_error(err), vim.log.levels.ERROR)
      end
    else
      client._take_state(conn, result)
      notify(M.undone_message(result.undone))
    end
    if cb then
      cb(err, result)
    end
  end)
end

-- The history buffer: one per Neovim, showing the connection it was opened for.
M.buf = nil
M.conn = nil
M.events = {}
M.more = false
local loaded_rev = nil
local generation = 0
local PAGE = 50

local function buf_valid()
  return M.buf ~= nil and vim.api.nvim_buf_is_valid(M.buf)
end

local function show()
  if not buf_valid() then
    return
  end
  local lines = { string.format("agentd history  [%s]  newest first  <CR> before/after  R refresh  q close", M.conn and M.conn.store.session or "?") }
  for _, ev in ipairs(M.events) do
    table.insert(lines, M.line(ev))
  end
  if #M.events == 0 then
    table.insert(lines, "no changes yet")
  end
  if M.more then
    table.insert(lines, "-- older changes: <CR> here to load them --")
  end
  vim.bo[M.buf].modifiable = true
  vim.api.nvim_buf_set_lines(M.buf, 0, -1, false, lines)
  vim.bo[M.buf].modifiable = false
  vim.bo[M.buf].modified = false
end

local function fetch(before, cb)
  local client = require("agentd.client")
  local gen = generation
  client.execute(M.conn, protocol.commands.history, { limit = PAGE, before = before }, function(err, result)
    if gen ~= generation then
      return
    end
    if err then
      notify("history: " .. client.describe_error(err), vim.log.levels.ERROR)
    elseif type(result) == "table" then
      cb(type(result.events) == "table" and result.events or {}, result.more == true)
    end
  end)
end

--- Reads the newest page again (on open, R, and every change of the shown revision).
function M.reload(force)
  if not buf_valid() or not M.conn then
    return
  end
  local rev = M.conn.store.revision
  if not force and rev == loaded_rev then
    return
  end
  loaded_rev = rev
  generation = generation + 1
  fetch(nil, function(events, more)
    M.events, M.more = events, more
    show()
  end)
end

--- Loads the next page of older events.
function M.load_older()
  local last = M.events[#M.events]
  if not M.more or not last then
    return
  end
  fetch(last.seq, function(events, more)
    vim.list_extend(M.events, events)
    M.more = more
    show()
  end)
end

--- <CR>: the event under the cursor in a split below, before and after; on the last
--- line, the older page.
function M.activate()
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  local ev = M.events[lnum - 1]
  if not ev then
    if M.more and lnum == #M.events + 2 then
      M.load_older()
    end
    return
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, "agentd://history/" .. tostring(ev.seq))
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.detail_lines(ev))
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = "agentd-history"
  vim.keymap.set("n", "q", "<cmd>close<CR>", { buffer = buf, nowait = true, silent = true, desc = "agentd: close" })
  vim.cmd("belowright split")
  vim.api.nvim_win_set_buf(0, buf)
end

local subscribed = false

--- :AgentdHistory — opens the history of conn's session in a buffer, newest first.
function M.open(conn)
  M.conn = conn
  if not buf_valid() then
    M.buf = vim.api.nvim_create_buf(false, true)
    vim.bo[M.buf].buftype = "nofile"
    vim.bo[M.buf].bufhidden = "hide"
    vim.bo[M.buf].swapfile = false
    pcall(vim.api.nvim_buf_set_name, M.buf, "agentd://history")
    vim.bo[M.buf].filetype = "agentd-history"
    local function map(lhs, fn, desc)
      vim.keymap.set("n", lhs, fn, { buffer = M.buf, nowait = true, silent = true, desc = "agentd: " .. desc })
    end
    map("<CR>", M.activate, "before and after")
    map("R", function()
      M.reload(true)
    end, "refresh history")
    map("q", "<cmd>close<CR>", "close")
  end
  if not subscribed then
    subscribed = true
    require("agentd.client").on_change(function(c)
      if c == M.conn then
        vim.schedule(function()
          M.reload(false)
        end)
      end
    end)
  end
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, M.buf)
  show()
  M.reload(true)
end

return M
