-- End to end: a team folder (.agentd/team.json, docs/team.md) served by a real etcd
-- member that this test starts, stops and starts again (tests/etcdtest's
-- etcdtest-server, built by nvim/ci.sh). The sidebar shows the state; with etcd stopped
-- its header says "stale" and it keeps the last state; with etcd back the mark goes and
-- a new write shows up.
local agentd = require("agentd")

local conn = H.enter_workspace()

local server_bin = assert(os.getenv("AGENTD_ETCDTEST_SERVER"), "AGENTD_ETCDTEST_SERVER not set (nvim/ci.sh builds it)")

--- Lines the etcd server printed ("ready URL", "stopped", ...), and its stderr.
local lines, errs = {}, {}
local etcd = vim.system({ server_bin, "-dir", vim.fn.tempname() }, {
  stdin = true,
  stdout = function(_, data)
    for l in (data or ""):gmatch("[^\n]+") do
      table.insert(lines, l)
    end
  end,
  stderr = function(_, data)
    table.insert(errs, data or "")
  end,
})
vim.api.nvim_create_autocmd("VimLeavePre", { callback = function()
  -- End of its stdin: it stops the member and exits.
  pcall(function()
    etcd:write(nil)
    etcd:wait(10000)
  end)
end })

local function describe()
  local c = conn()
  return "sidebar:\n" .. H.sidebar_text() .. "\nconn: " .. vim.inspect(c and { status = c.status, error = c.error, revision = c.store.revision })
    .. "\netcd: " .. table.concat(lines, " | ") .. " " .. table.concat(errs)
    .. "\nnotifications:\n" .. H.notifications_text()
end

--- Waits for the etcd server's next line after `n` lines starting with `prefix`.
local function await_line(n, prefix)
  return H.wait(function()
    local l = lines[n + 1]
    return l and l:sub(1, #prefix) == prefix and l
  end, "etcd server to print " .. prefix, 30000, describe)
end

local url = await_line(0, "ready "):sub(#"ready " + 1)
vim.fn.mkdir(H.ws .. "/.agentd", "p")
local f = assert(io.open(H.ws .. "/.agentd/team.json", "w"))
f:write(vim.json.encode({ id = "3d0c6b7e-8f1a-4c2b-9e5d-7a6b1c2d3e40", etcd = { url } }))
f:close()
H.agentd({ "team", "accept", "--workspace", H.ws }) -- this machine's person accepts it (docs/team.md)

agentd.setup({ cmd = { "agentd", "--remote=auto" } })

local function header()
  return H.sidebar_lines()[1] or ""
end

local function wait_header(pred, msg)
  H.wait(function()
    return pred(header())
  end, msg, 15000, describe)
end

local function stale(h)
  return h:find("  stale", 1, true) ~= nil
end

test("the sidebar shows the team folder's state", function()
  H.wait(function()
    return conn() and conn().status == "ready" and conn().store.state ~= nil
  end, "state read", 15000, describe)
  vim.cmd("AgentdToggle")
  H.tool("TodoList", { todos = { { title = "before the outage", status = "pending" } } })
  H.wait_sidebar("[ ] before the outage", nil, describe)
  H.ok(not stale(header()), "no stale mark while etcd answers: " .. header())
end)

test("with etcd stopped the header says stale and the last state stays", function()
  vim.cmd("AgentdToggle")
  H.wait_sidebar("[ ] before the outage", nil, describe)
  local n = #lines
  etcd:write("stop\n")
  await_line(n, "stopped")
  wait_header(stale, "the sidebar header to say stale")
  H.eq(true, conn().store.state.stale, "the client's State is marked stale")
  H.contains(H.sidebar_text(), "[ ] before the outage", "the last state is still shown")
end)

test("with etcd back the stale mark goes and a write shows up", function()
  vim.cmd("AgentdToggle")
  wait_header(stale, "the sidebar header to say stale (still)")
  local n = #lines
  etcd:write("start\n")
  await_line(n, "ready ")
  wait_header(function(h)
    return h:find("agentd", 1, true) == 1 and not stale(h)
  end, "the stale mark to go")
  H.tool("TodoList", { todos = { { title = "before the outage", status = "done" }, { title = "after the outage", status = "pending" } } })
  H.wait_sidebar("[ ] after the outage", nil, describe)
  H.wait_sidebar("[x] before the outage", nil, describe)
  H.ok(not stale(header()), "no stale mark: " .. header())
end)
