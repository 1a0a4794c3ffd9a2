-- Every status the server declares (agentd.protocol, generated from the Go source) has
-- its own answer in every place of the plugin that switches on a status, and those
-- places know no status the server does not: adding a status fails here until the
-- plugin shows it, and every highlight group named for a status is one the sidebar defines.
local protocol = require("agentd.protocol")
local render = require("agentd.render")
local sidebar = require("agentd.sidebar")

local function set(list)
  local s = {}
  for _, v in ipairs(list) do
    s[v] = true
  end
  return s
end

local function keys_are(tbl, statuses, what)
  for k in pairs(tbl) do
    assert(statuses[k], string.format("%s has an entry for %q, which is not a status of agentd.protocol", what, k))
  end
end

local function goal_state(status)
  return {
    workspace = "file:///w", session = "default", revision = 1,
    todos = { revision = 1, items = {} },
    goal = { objective = "o", status = status, turnsUsed = 0, tokensUsed = 0, wallClockMs = 0, budget = {} },
  }
end

test("every goal status has a highlight and a clock rule", function()
  assert(#protocol.goal_statuses > 0, "no goal statuses")
  for _, status in ipairs(protocol.goal_statuses) do
    local look = render.goal_status[status]
    assert(look, "render.goal_status has no entry for " .. status)
    H.eq("boolean", type(look.clock_runs), status .. ": clock_runs")
    local res = render.sidebar(goal_state(status), { connection = "ready" })
    local found
    for _, h in ipairs(res.highlights) do
      if res.lines[h[1] + 1] == "Goal  " .. status and h[2] == 6 then
        found = h[4]
      end
    end
    H.eq(look.hl, found, status .. ": highlight of the status word")
    assert(found ~= "AgentdMuted", status .. " falls back to the default highlight")
  end
  keys_are(render.goal_status, set(protocol.goal_statuses), "render.goal_status")
  H.eq(true, render.clock_runs("active"))
  H.eq(false, render.clock_runs("no such status"))
end)

test("every todo status has a marker, a highlight and a next status", function()
  assert(#protocol.todo_statuses > 0, "no todo statuses")
  local statuses = set(protocol.todo_statuses)
  for _, status in ipairs(protocol.todo_statuses) do
    local st = goal_state("active")
    st.todos.items = { { title = "t", status = status } }
    local res = render.sidebar(st, { connection = "ready" })
    local line = res.lines[res.item_lines[1]]
    H.eq("  " .. render.markers[status] .. " t", line, status .. ": row")
    assert(render.markers[status] ~= "[" .. status .. "]", status .. " falls back to the default marker")
    assert(render.todo_hl[status], status .. " has no highlight")
    assert(statuses[render.next_status[status]], status .. ": next status is not a status of agentd.protocol")
  end
  keys_are(render.markers, statuses, "render.markers")
  keys_are(render.todo_hl, statuses, "render.todo_hl")
  keys_are(render.next_status, statuses, "render.next_status")
end)

test("every highlight group named for a status is defined by the sidebar", function()
  sidebar.define_highlights()
  local function defined(group, what)
    assert(next(vim.api.nvim_get_hl(0, { name = group })) ~= nil,
      string.format("%s names the highlight group %s, which sidebar.lua's highlight_links does not define", what, group))
  end
  for _, status in ipairs(protocol.goal_statuses) do
    defined(render.goal_status[status].hl, "render.goal_status." .. status)
  end
  for _, status in ipairs(protocol.todo_statuses) do
    defined(render.todo_hl[status], "render.todo_hl." .. status)
  end
  for level, group in pairs(render.budget_hl) do
    defined(group, "render.budget_hl." .. level)
  end
  defined("AgentdStalled", "the stall line of render.sidebar")
end)
