-- End to end: real Neovim, real `agentd --remote=auto` (private daemon). Goal turns run
-- over the plugin's own connection (lifecycle commands, settings stallTurns = 2): the
-- sidebar shows the task file's checkboxes, a stalled goal, and colours a budget from
-- 50 % (AgentdBudgetWarn) and 80 % (AgentdBudgetError) (docs/runtime.md §2.4.4, §2.4.5).
local agentd = require("agentd")
local client = require("agentd.client")
local render = require("agentd.render")
local sidebar = require("agentd.sidebar")

local ws = H.ws
local conn = H.enter_workspace()

local function describe()
  return "sidebar:\n" .. H.sidebar_text() .. "\nnotifications:\n" .. H.notifications_text()
end

local function wait_sidebar(text, msg)
  H.wait_sidebar(text, msg, describe)
end

local function exec(command, args)
  local done, err, res = false, nil, nil
  client.execute(conn(), command, args, function(e, r)
    done, err, res = true, e, r
  end)
  H.wait(function()
    return done
  end, command .. " to answer", 10000, describe)
  H.ok(err == nil, command .. ": " .. vim.inspect(err))
  return res
end

local seq = 0
--- One goal turn of one step that changes nothing.
local function turn()
  seq = seq + 1
  local id = "nvim-turn-" .. seq
  exec("agentd.turn.begin", { turnId = id, origin = seq == 1 and "user" or "continuation" })
  exec("agentd.step.begin", { turnId = id })
  exec("agentd.step.end", { turnId = id, outputTokens = 5, finishReason = "stop" })
  exec("agentd.turn.end", { turnId = id, outcome = "completed" })
end

--- The highlight groups on the sidebar line that contains text.
local function groups_on(text)
  local out = {}
  for lnum, line in ipairs(H.sidebar_lines()) do
    if line:find(text, 1, true) then
      for _, h in ipairs(sidebar.layout.highlights) do
        if h[1] == lnum - 1 then
          out[h[4]] = line:sub(h[2] + 1, h[3])
        end
      end
      return out
    end
  end
  error("no sidebar line with " .. text .. "\n" .. describe())
end

test("checkboxes, a stalled goal and budget colours in the sidebar", function()
  vim.fn.writefile({ "# Task", "- [x] lex", "- [ ] parse", "```", "- [ ] not counted", "```" }, ws .. "/TASK.md")
  agentd.setup({ cmd = { "agentd", "--remote=auto" }, settings = { stallTurns = 2 } })
  vim.cmd("AgentdGoal! Work through @TASK.md")
  vim.cmd("AgentdToggle")
  wait_sidebar("task file TASK.md  1/2 checked")
  H.eq("1/2 checked", groups_on("task file TASK.md").AgentdMuted, "the counts are muted")
  exec("agentd.goal.setBudget", { turns = 5 })
  wait_sidebar("budget turns  0/5")

  turn()
  turn() -- 2 quiet turns: stalled; 2/5 = 40 %: no colour yet
  wait_sidebar("stalled: no change to the todo list or task file")
  H.eq("stalled", groups_on("stalled: no change").AgentdStalled, "highlight of the stall line")
  H.contains(render.statusline(conn().store.state), "goal active stalled")
  local g = groups_on("budget turns")
  H.ok(g.AgentdBudgetWarn == nil and g.AgentdBudgetError == nil, "no budget colour at 40 %: " .. vim.inspect(g))

  turn() -- 3/5 = 60 %
  wait_sidebar("budget turns  3/5")
  H.eq("3/5", groups_on("budget turns").AgentdBudgetWarn, "warning colour at 60 %")
  turn() -- 4/5 = 80 %
  wait_sidebar("budget turns  4/5")
  H.eq("4/5", groups_on("budget turns").AgentdBudgetError, "error colour at 80 %")
  H.eq("active", conn().store.state.goal.status)

  -- Ticking a checkbox is progress: the stall ends, the counts follow the file.
  vim.fn.writefile({ "# Task", "- [x] lex", "- [X] parse", "```", "- [ ] not counted", "```" }, ws .. "/TASK.md")
  wait_sidebar("task file TASK.md  2/2 checked")
  H.wait(function()
    return not H.sidebar_text():find("stalled:", 1, true)
  end, "the stall line to go", 10000, describe)
  H.eq(false, H.daemon_state().goal.stalled, "the daemon's goal is no longer stalled")
  H.not_contains(render.statusline(conn().store.state), "stalled")
  vim.cmd("AgentdGoalCancel")
end)
