-- agentd user commands. Loading this file starts nothing: the client starts on
-- require("agentd").setup() (with autostart) or on the first :Agentd* command.
if vim.g.loaded_agentd then
  return
end
vim.g.loaded_agentd = true

if vim.fn.has("nvim-0.10") == 0 then
  vim.api.nvim_echo({ { "agentd: Neovim 0.10 or newer is needed", "WarningMsg" } }, true, {})
  return
end

local function a()
  return require("agentd")
end

local cmd = vim.api.nvim_create_user_command

--- Warns with a command's usage (text, e.g. ":AgentdQueueMove {n} {to}").
local function usage(text)
  vim.notify("agentd: usage: " .. text, vim.log.levels.WARN)
end

cmd("AgentdToggle", function()
  a().toggle()
end, { desc = "agentd: toggle the goal and todo sidebar" })

cmd("AgentdGoal", function(o)
  a().goal_create(o.args, o.bang)
end, { nargs = "+", bang = true, desc = "agentd: create a goal (! replaces the current one)" })

cmd("AgentdGoalPause", function(o)
  a().goal_pause(o.args)
end, { nargs = "*", desc = "agentd: pause the goal [reason]" })

cmd("AgentdGoalWait", function(o)
  a().goal_wait(o.fargs)
end, { nargs = "+", complete = "file", desc = "agentd: the goal waits {30m|14:00} [path...]" })

cmd("AgentdGoalResume", function()
  a().goal_resume()
end, { nargs = 0, desc = "agentd: resume the goal" })

cmd("AgentdGoalCancel", function()
  a().goal_cancel()
end, { nargs = 0, desc = "agentd: cancel the goal" })

cmd("AgentdBudget", function(o)
  if #o.fargs ~= 2 then
    return usage(":AgentdBudget {value} {turns|tokens|seconds|minutes|hours}")
  end
  a().goal_budget(o.fargs[1], o.fargs[2])
end, {
  nargs = "+",
  complete = function(...)
    return require("agentd").complete_budget(...)
  end,
  desc = "agentd: set a goal budget ({value|none} {unit})",
})

cmd("AgentdSetCheck", function(o)
  a().goal_set_check(o.args, o.bang)
end, { nargs = "*", bang = true, desc = "agentd: set the goal's check command (! removes it)" })

cmd("AgentdCheck", function()
  a().goal_check()
end, { nargs = 0, desc = "agentd: run the goal's check now" })

cmd("AgentdApproveCheck", function()
  a().goal_approve_check()
end, { nargs = 0, desc = "agentd: approve the goal's check on this machine (shows the command first)" })

cmd("AgentdTeamAccept", function()
  a().team_accept()
end, { nargs = 0, desc = "agentd: accept this folder's team file (shows its etcd endpoints first)" })
cmd("AgentdQueueAdd", function(o)
  a().queue_add(o.args)
end, { nargs = "+", desc = "agentd: queue a goal (started when the current one completes)" })

cmd("AgentdQueueRemove", function(o)
  a().queue_remove(o.args)
end, { nargs = 1, desc = "agentd: remove the n-th queued goal" })

cmd("AgentdQueueMove", function(o)
  if #o.fargs ~= 2 then
    return usage(":AgentdQueueMove {n} {to}")
  end
  a().queue_move(o.fargs[1], o.fargs[2])
end, { nargs = "+", desc = "agentd: move the n-th queued goal to position {to}" })

cmd("AgentdQueueAutoAdvance", function(o)
  if o.args ~= "on" and o.args ~= "off" then
    return usage(":AgentdQueueAutoAdvance on|off")
  end
  a().queue_auto_advance(o.args == "on")
end, {
  nargs = 1,
  complete = function()
    return { "on", "off" }
  end,
  desc = "agentd: turn advancing to the first queued goal on or off",
})

cmd("AgentdTodoAdd", function(o)
  a().todo_add(o.args)
end, { nargs = "+", desc = "agentd: add a todo" })

cmd("AgentdRefresh", function()
  a().refresh()
end, { nargs = 0, desc = "agentd: re-read the state" })

cmd("AgentdTaskFile", function()
  a().open_task_file()
end, { nargs = 0, desc = "agentd: open the goal's task file" })

cmd("AgentdUndo", function(o)
  a().undo(o.args)
end, {
  nargs = "?",
  complete = function()
    return { "todo", "goal" }
  end,
  desc = "agentd: undo the newest change [todo|goal] (none: of either)",
})

cmd("AgentdHistory", function()
  a().history()
end, { nargs = 0, desc = "agentd: the session's history, newest first" })
