-- Test helpers: assertions, waiting on conditions (never fixed sleeps), captured
-- notifications, and (for end-to-end tests) the agentd binary and a private workspace.
local M = {}

local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end

function M.begin_test(name)
  M.current = name
  notes = {}
end

function M.end_test()
  local sidebar = package.loaded["agentd.sidebar"]
  if sidebar and sidebar.is_open() then
    sidebar.close()
  end
end

function M.finish()
  local client = package.loaded["agentd.client"]
  if client then
    client.stop_all()
    vim.wait(3000, function()
      return #vim.lsp.get_clients({ name = "agentd" }) == 0
    end, 20)
  end
end

function M.callback_errors()
  local e = vim.v.errmsg
  if e ~= nil and e ~= "" then
    return e
  end
  return nil
end

function M.notifications()
  return notes
end

function M.notifications_text()
  local out = {}
  for _, n in ipairs(notes) do
    table.insert(out, string.format("  [%s] %s", tostring(n.level), n.msg))
  end
  return table.concat(out, "\n")
end

function M.clear_notifications()
  notes = {}
end

--- The first captured notification whose text contains `pattern` (plain).
function M.find_notification(pattern, level)
  for _, n in ipairs(notes) do
    if n.msg:find(pattern, 1, true) and (level == nil or n.level == level) then
      return n
    end
  end
  return nil
end

local function show(x)
  return vim.inspect(x)
end

function M.eq(want, got, msg)
  if not vim.deep_equal(want, got) then
    error(string.format("%sgot %s, want %s", msg and (msg .. ": ") or "", show(got), show(want)), 2)
  end
end

function M.ok(cond, msg)
  if not cond then
    error(msg or "assertion failed", 2)
  end
  return cond
end

function M.contains(haystack, needle, msg)
  if type(haystack) == "table" then
    haystack = table.concat(haystack, "\n")
  end
  if not tostring(haystack):find(needle, 1, true) then
    error(string.format("%sgot %s, want it to contain %q", msg and (msg .. ": ") or "", show(haystack), needle), 2)
  end
end

function M.not_contains(haystack, needle, msg)
  if type(haystack) == "table" then
    haystack = table.concat(haystack, "\n")
  end
  if tostring(haystack):find(needle, 1, true) then
    error(string.format("%sgot %s, want it not to contain %q", msg and (msg .. ": ") or "", show(haystack), needle), 2)
  end
end

function M.raises(fn, pattern)
  local ok, err = pcall(fn)
  if ok then
    error("expected an error", 2)
  end
  if pattern and not tostring(err):find(pattern, 1, true) then
    error(string.format("error %q does not contain %q", tostring(err), pattern), 2)
  end
end

--- Set by a test file: returns a reason to stop waiting at once (e.g. the client is
--- down for good), so a broken server fails fast instead of timing out everywhere.
M.abort = nil

--- Waits until cond() is truthy; fails with msg (and describe()) after timeout ms
--- (30 s unless given). The bound is only a hang guard: the conditions come from
--- the daemon's notifications and the client's own timers (a reconnection waits up
--- to 8 s), which a loaded machine (2 cores shared by many jobs) makes later.
function M.wait(cond, msg, timeout, describe)
  local last
  local aborted
  local ok = vim.wait(timeout or 30000, function()
    if M.abort then
      aborted = M.abort()
      if aborted then
        return true
      end
    end
    local good, res = pcall(cond)
    if good then
      last = res
      return res
    end
    last = res
    return false
  end, 20)
  if aborted then
    local extra = describe and ("\n" .. tostring(describe())) or ""
    error(string.format("gave up waiting for %s: %s%s", msg or "condition", aborted, extra), 2)
  end
  if not ok then
    local extra = describe and ("\n" .. tostring(describe())) or ""
    error(string.format("timed out waiting for %s (last: %s)%s", msg or "condition", show(last), extra), 2)
  end
  return last
end

-- End-to-end helpers -------------------------------------------------------------

M.bin = os.getenv("AGENTD_BIN")

--- An abort hook for M.abort: the connection of `root` stopped and will not restart.
function M.abort_when_down(root)
  return function()
    local client = package.loaded["agentd.client"]
    local conn = client and client.conns[vim.fs.normalize(root)]
    local cfg = require("agentd.config").get()
    if conn and conn.status == "stopped" and (conn.restarts >= cfg.max_restarts or not cfg.auto_restart) then
      return "agentd is not connected (" .. tostring(conn.error) .. ")"
    end
    return nil
  end
end
M.ws = os.getenv("AGENTD_TEST_WS")

--- Makes M.ws a project root and the current directory, fails the test fast when
--- agentd goes down, and returns a function giving the client's connection there.
function M.enter_workspace()
  vim.fn.mkdir(M.ws .. "/.git", "p")
  vim.cmd.cd(vim.fn.fnameescape(M.ws))
  M.abort = M.abort_when_down(M.ws)
  return function()
    return require("agentd.client").conns[vim.fs.normalize(M.ws)]
  end
end

--- Runs `agentd ARGS...` (same environment as this nvim: the private daemon);
--- returns {code, stdout, stderr}.
function M.agentd(args, timeout)
  local cmd = { M.bin }
  vim.list_extend(cmd, args)
  local res = vim.system(cmd, { text = true }):wait(timeout or 15000)
  return res
end

--- `agentd state --json --workspace WS` decoded.
function M.daemon_state(ws, session)
  local args = { "state", "--json", "--workspace", ws or M.ws }
  if session then
    vim.list_extend(args, { "--session", session })
  end
  local res = M.agentd(args)
  if res.code ~= 0 then
    error(string.format("agentd state failed (%d): %s%s", res.code, res.stderr or "", res.stdout or ""))
  end
  return vim.json.decode(res.stdout, { luanil = { object = true, array = true } })
end

--- `agentd tool NAME JSON --workspace WS` as another client would.
function M.tool(name, input, ws, session)
  local args = { "tool", name, vim.json.encode(input), "--workspace", ws or M.ws }
  if session then
    vim.list_extend(args, { "--session", session })
  end
  local res = M.agentd(args)
  if res.code ~= 0 then
    error(string.format("agentd tool %s failed (%d): %s%s", name, res.code, res.stderr or "", res.stdout or ""))
  end
  return res.stdout
end

--- Sidebar buffer lines.
function M.sidebar_lines()
  local sidebar = require("agentd.sidebar")
  if not sidebar.buf or not vim.api.nvim_buf_is_valid(sidebar.buf) then
    return {}
  end
  return vim.api.nvim_buf_get_lines(sidebar.buf, 0, -1, false)
end

function M.sidebar_text()
  return table.concat(M.sidebar_lines(), "\n")
end

--- Waits until the sidebar shows text (plain, not a pattern); fails with msg (default
--- "sidebar to show TEXT") and describe() after 10 s.
function M.wait_sidebar(text, msg, describe)
  M.wait(function()
    return M.sidebar_text():find(text, 1, true) ~= nil
  end, msg or ("sidebar to show " .. text), 10000, describe)
end

--- Feeds keys as typed by the user and runs them.
function M.feed(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "xt", false)
end

return M
