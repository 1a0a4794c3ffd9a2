package protocol

// CommandID is the id of a workspace/executeCommand command
// (docs/protocol.md §3).
type CommandID string

// The commands, in the order of docs/protocol.md §3 (Commands).
const (
	CmdTools        CommandID = "agentd.tools"
	CmdCallTool     CommandID = "agentd.callTool"
	CmdDescribeTool CommandID = "agentd.describeTool"

	CmdState       CommandID = "agentd.state"
	CmdSessions    CommandID = "agentd.sessions"
	CmdHistory     CommandID = "agentd.history"
	CmdTodoSet     CommandID = "agentd.todo.set"
	CmdAwaitChange CommandID = "agentd.awaitChange"

	CmdGoalCreate       CommandID = "agentd.goal.create"
	CmdGoalPause        CommandID = "agentd.goal.pause"
	CmdGoalResume       CommandID = "agentd.goal.resume"
	CmdGoalWait         CommandID = "agentd.goal.wait"
	CmdGoalCancel       CommandID = "agentd.goal.cancel"
	CmdGoalSetCheck     CommandID = "agentd.goal.setCheck"
	CmdGoalApproveCheck CommandID = "agentd.goal.approveCheck"
	CmdGoalRunCheck     CommandID = "agentd.goal.runCheck"
	CmdGoalSetBudget    CommandID = "agentd.goal.setBudget"

	CmdQueueAdd            CommandID = "agentd.goal.queue.add"
	CmdQueueList           CommandID = "agentd.goal.queue.list"
	CmdQueueRemove         CommandID = "agentd.goal.queue.remove"
	CmdQueueMove           CommandID = "agentd.goal.queue.move"
	CmdQueueSetAutoAdvance CommandID = "agentd.goal.queue.setAutoAdvance"

	CmdUndo CommandID = "agentd.undo"

	CmdTeamAccept CommandID = "agentd.team.accept"

	CmdTurnBegin CommandID = "agentd.turn.begin"
	CmdStepBegin CommandID = "agentd.step.begin"
	CmdStepEnd   CommandID = "agentd.step.end"
	CmdStepNext  CommandID = "agentd.step.next"
	CmdTurnEnd   CommandID = "agentd.turn.end"
)
