-- End to end: the client re-reads agentd.state after a revision gap and after the
-- server process exits and is started again.
local agentd = require("agentd")
local client = require("agentd.client")

local conn = H.enter_workspace()

local function describe()
  local c = conn()
  return "sidebar:\n" .. H.sidebar_text() .. "\nconn: " .. vim.inspect(c and { status = c.status, error = c.error, revision = c.store.revision, client_id = c.client_id })
    .. "\nnotifications:\n" .. H.notifications_text()
end

local function wait_sidebar(text)
  H.wait_sidebar(text, nil, describe)
end

--- Counts agentd.state reads.
local reads = 0
local orig_refresh = client.refresh
client.refresh = function(...)
  reads = reads + 1
  return orig_refresh(...)
end

agentd.setup({ cmd = { "agentd", "--remote=auto" } })

test("the first state read follows initialize", function()
  H.wait(function()
    return conn() and conn().status == "ready" and conn().store.state ~= nil
  end, "state read", 15000, describe)
  H.ok(reads >= 1, "agentd.state was read")
  vim.cmd("AgentdToggle")
  wait_sidebar("Todos  empty")
end)

test("a revision gap re-reads agentd.state", function()
  H.tool("TodoList", { todos = { { title = "one", status = "pending" } } })
  wait_sidebar("[ ] one")
  local c = conn()
  -- Pretend the editor missed changes: its copy is older and lacks what they did.
  c.store.revision = c.store.revision - 3
  c.store.state.todos = { revision = c.store.revision, items = {} }
  c.store.state.goal = { objective = "stale local goal", status = "active", budget = {} }
  local before = reads
  H.tool("TodoList", { todos = { { title = "one", status = "done" }, { title = "two", status = "pending" } } })
  H.wait(function()
    return reads > before
  end, "a re-read after the gap", 10000, describe)
  wait_sidebar("[ ] two")
  H.wait(function()
    return not H.sidebar_text():find("stale local goal", 1, true)
  end, "the re-read state replaces the stale goal", 10000, describe)
  H.eq(H.daemon_state().revision, conn().store.revision)
end)

test("after the server exits the client starts again and re-reads the state", function()
  local c = conn()
  local old_id = c.client_id
  local pids = {}
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    local p = vim.api.nvim_get_proc(pid)
    if p and p.name and p.name:find("agentd", 1, true) then
      table.insert(pids, pid)
    end
  end
  H.eq(1, #pids, "one agentd child of nvim (the --remote=auto forwarder)")
  -- Counted before the exit: the restart (250 ms later) and its re-read may come
  -- while the `agentd tool` below still runs.
  local before = reads
  vim.uv.kill(pids[1], "sigterm")
  H.wait(function()
    return c.status == "stopped" or c.client_id ~= old_id
  end, "the client to notice the exit", 10000, describe)
  -- Changed while this editor was disconnected (or, on a slow machine, just after it
  -- reconnected: then the notification brings it).
  H.tool("TodoList", { todos = { { title = "changed while away", status = "in_progress" } } })
  H.wait(function()
    return c.status == "ready" and c.client_id and c.client_id ~= old_id
  end, "a new client", 15000, describe)
  H.wait(function()
    return reads > before
  end, "a re-read after the restart", 10000, describe)
  wait_sidebar("[~] changed while away")
  H.eq(1, #vim.lsp.get_clients({ name = "agentd" }), "exactly one agentd client")
end)

--- Pids of the shared daemon serving this test (its socket is under our private
--- XDG_RUNTIME_DIR, so it can only be the one this test started).
local function daemon_pids()
  local runtime = os.getenv("XDG_RUNTIME_DIR")
  local out = {}
  for name, kind in vim.fs.dir("/proc") do
    if kind == "directory" and name:match("^%d+$") then
      local f = io.open("/proc/" .. name .. "/cmdline", "rb")
      if f then
        local cmdline = (f:read("*a") or ""):gsub("%z", " ")
        f:close()
        if cmdline:find("serve", 1, true) and cmdline:find("--listen=unix:" .. runtime, 1, true) then
          table.insert(out, tonumber(name))
        end
      end
    end
  end
  return out
end

-- No turn was live when the daemon ended, so the goal stays active (the restart rule,
-- docs/runtime.md §2.3.2, pauses only a goal whose agent was mid-turn).
test("after the shared daemon restarts the client reconnects and shows the goal still active", function()
  local c = conn()
  vim.cmd("AgentdToggle")
  vim.cmd("AgentdGoal Survive a daemon restart")
  H.wait(function()
    return H.sidebar_text():find("Goal  active", 1, true)
  end, "active goal shown", 10000, describe)
  local pids = daemon_pids()
  H.eq(1, #pids, "one shared daemon under this test's XDG_RUNTIME_DIR")
  local old_id = c.client_id
  local before = reads
  vim.uv.kill(pids[1], "sigterm")
  H.wait(function()
    return c.status == "ready" and c.client_id ~= old_id and reads > before
  end, "a new client that re-read the state", 20000, describe)
  H.wait(function()
    return H.sidebar_text():find("Goal  active", 1, true)
  end, "the goal shown active after the daemon restart", 10000, describe)
  H.contains(H.sidebar_text(), "Survive a daemon restart")
  H.eq("active", H.daemon_state().goal.status)
  H.eq(1, #daemon_pids(), "a new daemon serves the workspace")
end)

-- A stopped daemon (SIGSTOP: hung, not gone): a command gets no answer, and after
-- timeout_ms the plugin says so, naming the command; the daemon continued, the command's
-- answer is still taken (it was not cancelled) and the sidebar shows it.
test("a command without an answer after timeout_ms is said, and its late answer taken", function()
  require("agentd.config").get().timeout_ms = 300
  local pids = daemon_pids()
  H.eq(1, #pids, "one shared daemon under this test's XDG_RUNTIME_DIR")
  vim.uv.kill(pids[1], "sigstop")
  local continued = false
  local function continue()
    if not continued then
      continued = true
      vim.uv.kill(pids[1], "sigcont")
    end
  end
  local ok, err = pcall(function()
    vim.cmd("AgentdGoalPause lunch")
    H.wait(function()
      return H.notifications_text():find("agentd.goal.pause has had no answer for 300 ms; still waiting", 1, true)
    end, "the warning of a command with no answer", 10000, describe)
    H.ok(not H.sidebar_text():find("paused", 1, true), "the sidebar shows no pause before the daemon answered")
  end)
  continue()
  assert(ok, err)
  H.wait(function()
    return H.sidebar_text():find("Goal  paused", 1, true)
  end, "the late answer shown", 10000, describe)
  H.eq("paused", H.daemon_state().goal.status)
end)
