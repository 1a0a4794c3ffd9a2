-- End to end: `settings = {}` (an empty Lua table, which Neovim sends as the JSON
-- array `[]`) is an empty object to agentd, in initializationOptions.settings and in
-- workspace/didChangeConfiguration {settings: {agentd: []}}: the client connects and
-- no "settings not applied" message comes.
local agentd = require("agentd")

local conn = H.enter_workspace()

local function describe()
  local c = conn()
  return "sidebar:\n" .. H.sidebar_text() .. "\nconn: " .. vim.inspect(c and { status = c.status, error = c.error, revision = c.store.revision })
    .. "\nnotifications:\n" .. H.notifications_text()
end

agentd.setup({ cmd = { "agentd", "--remote=auto" }, settings = {} })

test("settings = {} connects and shows the state", function()
  H.eq("[]", vim.json.encode({}), "an empty Lua table goes on the wire as []")
  vim.cmd("AgentdToggle")
  H.wait(function()
    return conn() and conn().status == "ready" and H.sidebar_text():find("Todos  empty", 1, true)
  end, "the connection and the empty list", 15000, describe)
  H.tool("TodoList", { todos = { { title = "seen with empty settings", status = "pending" } } })
  H.wait(function()
    return H.sidebar_text():find("[ ] seen with empty settings", 1, true)
  end, "the item pushed by the daemon", 10000, describe)
  H.eq(nil, H.find_notification("settings not applied"), "no settings refusal")
  H.eq(nil, H.find_notification("must be an object"), "no settings refusal")
end)
