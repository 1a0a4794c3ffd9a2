-- End to end: a configured session is the only one shown and edited.
local agentd = require("agentd")

local conn = H.enter_workspace()

local function describe()
  local c = conn()
  return "sidebar:\n" .. H.sidebar_text() .. "\nconn: " .. vim.inspect(c and { status = c.status, error = c.error, revision = c.store.revision })
    .. "\nnotifications:\n" .. H.notifications_text()
end

agentd.setup({ cmd = { "agentd", "--remote=auto" }, session = "alpha" })

test("the sidebar shows the configured session only", function()
  vim.cmd("AgentdToggle")
  H.wait(function()
    return H.sidebar_text():find("[alpha]", 1, true) and H.sidebar_text():find("Todos  empty", 1, true)
  end, "the alpha session's empty list", 15000, describe)
  H.eq("alpha", conn().store.state.session)
  H.tool("TodoList", { todos = { { title = "beta item", status = "pending" } } }, nil, "beta")
  H.tool("TodoList", { todos = { { title = "alpha item", status = "pending" } } }, nil, "alpha")
  H.wait(function()
    return H.sidebar_text():find("[ ] alpha item", 1, true)
  end, "the alpha item", 10000, describe)
  H.not_contains(H.sidebar_text(), "beta item")
  -- Another session's changes after ours must not replace what is shown either.
  H.tool("TodoList", { todos = { { title = "beta again", status = "done" } } }, nil, "beta")
  H.tool("TodoList", { todos = { { title = "alpha item", status = "done" } } }, nil, "alpha")
  H.wait(function()
    return H.sidebar_text():find("[x] alpha item", 1, true)
  end, "the alpha item done", 10000, describe)
  H.not_contains(H.sidebar_text(), "beta again")
end)

test("commands act on the configured session", function()
  vim.cmd("AgentdTodoAdd from the editor")
  H.wait(function()
    local items = H.daemon_state(nil, "alpha").todos.items or {}
    return #items == 2 and items[2].title == "from the editor"
  end, "alpha to get the todo", 10000, describe)
  local beta = H.daemon_state(nil, "beta").todos.items
  H.eq({ { title = "beta again", status = "done" } }, beta, "beta untouched")
  vim.cmd("AgentdGoal Alpha goal")
  H.wait(function()
    local g = H.daemon_state(nil, "alpha").goal
    return g and g.objective == "Alpha goal"
  end, "alpha to get the goal", 10000, describe)
  H.eq(nil, H.daemon_state(nil, "beta").goal, "beta has no goal")
  H.wait(function()
    return require("agentd").statusline() == "goal active 0 turns 0 tok"
  end, "statusline for alpha's goal", 10000, describe)
end)
