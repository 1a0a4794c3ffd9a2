package protocol

import "reflect"

// Scope is the state a command reads or changes, which its request is
// ordered by (docs/protocol.md §2.2).
type Scope int

// The scopes of the commands.
const (
	// ScopeSession: the command reads or changes one session of a
	// workspace folder, in the order of the requests on it.
	ScopeSession Scope = iota
	// ScopeFolder: the command reads every session of the folder
	// (agentd.sessions), in order with the requests on any of them.
	ScopeFolder
	// ScopeWait: the command waits on a session of a folder
	// (agentd.awaitChange) alongside the ordered requests.
	ScopeWait
	// ScopeNone: the command reads no state and needs no workspace folder
	// (agentd.tools, agentd.describeTool).
	ScopeNone
)

// Spec is the metadata of one command (id, args, result, doc, scope): what the dispatcher, the command
// reference (docs/commands.md) and the clients' generated protocol files
// take from the protocol.
type Spec struct {
	ID   CommandID
	Args reflect.Type // the Args struct (embeds Common)
	// Result is the type of a successful answer, sent as its JSON
	// encoding: a struct of wire values (commands/protocolgen writes it as
	// the command's result type for the clients).
	Result reflect.Type
	Doc    string // one line: what it does and what it returns
	Scope  Scope
	// ArgsDoc is the ARGS fields besides the common ones, as in
	// docs/protocol.md §3 ("-" for none).
	ArgsDoc string
}

// Commands is every command agentd serves, in the order of
// docs/protocol.md §3.
var Commands = []Spec{
	{ID: CmdTools, Args: reflect.TypeFor[NoArgs](), Result: reflect.TypeFor[ToolsResult](), Scope: ScopeNone,
		ArgsDoc: "-",
		Doc:     "`{tools: [{name, description, inputSchema, readOnly?}]}`: the model-facing tools; `readOnly: true` marks a tool that changes nothing (GetGoal)."},
	{ID: CmdCallTool, Args: reflect.TypeFor[CallToolArgs](), Result: reflect.TypeFor[ToolResult](), Scope: ScopeSession,
		ArgsDoc: "`name`, `input` (object), `turnId?`",
		Doc:     "Runs a tool as the model; returns `ToolResult` (refusals are `isError: true`). Without `turnId` the call belongs to the session's open turn of the agent, if any."},
	{ID: CmdDescribeTool, Args: reflect.TypeFor[DescribeToolArgs](), Result: reflect.TypeFor[ToolDescription](), Scope: ScopeNone,
		ArgsDoc: "`name`, `input`",
		Doc:     "`{description, display?}` for a host's UI, without running the tool."},
	{ID: CmdState, Args: reflect.TypeFor[NoArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "-",
		Doc:     "The session's `State`: todo list, goal snapshot, revision."},
	{ID: CmdSessions, Args: reflect.TypeFor[NoArgs](), Result: reflect.TypeFor[SessionsResult](), Scope: ScopeFolder,
		ArgsDoc: "-",
		Doc:     "`{sessions: [{session, updatedAt, todoCount, goalStatus}]}` of the workspace folder."},
	{ID: CmdHistory, Args: reflect.TypeFor[HistoryArgs](), Result: reflect.TypeFor[HistoryResult](), Scope: ScopeSession,
		ArgsDoc: "`limit?` (default 50), `before?` (a `seq`)",
		Doc:     "`{events: [{seq, at, actor, kind, reason?, revision, before?, payload?}], more}`, newest first, only events older than `before` when given; at most 1 MiB of events per reply (at least one event); `more`: older events exist, ask again with `before` = the last `seq`."},
	{ID: CmdTodoSet, Args: reflect.TypeFor[TodoSetArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "`items`, `expectedRevision?`",
		Doc:     "Replaces the todo list as the user (compare-and-set on `todos.revision`); returns `State`; a stale revision answers `todo.conflict` with `data.state`."},
	{ID: CmdAwaitChange, Args: reflect.TypeFor[AwaitChangeArgs](), Result: reflect.TypeFor[State](), Scope: ScopeWait,
		ArgsDoc: "`afterRevision`, `timeoutMs?` (absent or 0: the default 30000; at most 300000)",
		Doc:     "Waits until the session's revision is above `afterRevision`, the timeout passes, the connection is shut down, or the request is cancelled; returns `State`."},
	{ID: CmdGoalCreate, Args: reflect.TypeFor[GoalCreateArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "`objective`, `completionCriterion?`, `replace?`, `taskFile?`, `check?`, `requireTodos?`, `requestId?`",
		Doc:     "Creates a goal as the user (docs/runtime.md §2.2), `check`: its verification command (§2.10), approved on this machine (§2.10.4); `requireTodos` (default true): completion waits for the todo list's items (§2.12); returns `State`."},
	{ID: CmdGoalPause, Args: reflect.TypeFor[GoalPauseArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "`reason?`",
		Doc:     "Pauses the active goal as the user; returns `State`."},
	{ID: CmdGoalResume, Args: reflect.TypeFor[NoArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "-",
		Doc:     "Resumes a paused, blocked or waiting goal as the user; returns `State`."},
	{ID: CmdGoalWait, Args: reflect.TypeFor[GoalWaitArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "`until?`, `for?`, `paths?`, `checkPasses?`, `note?`, `wallClock?` (`counts`, the default, or `stops`)",
		Doc:     "Puts the active goal in the waiting state until a condition holds (docs/runtime.md §2.13); from an agent's shell it acts as the model; returns `State`."},
	{ID: CmdGoalCancel, Args: reflect.TypeFor[NoArgs](), Result: reflect.TypeFor[CancelResult](), Scope: ScopeSession,
		ArgsDoc: "-",
		Doc:     "Clears the goal as the user; returns `State` and `cancelled`: the goal as it ended."},
	{ID: CmdGoalSetCheck, Args: reflect.TypeFor[GoalSetCheckArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "`command` (a shell command, or `null` to remove the check)",
		Doc:     "Sets or removes the goal's verification command as the user (docs/runtime.md §2.10), approving it on this machine (§2.10.4); returns `State`."},
	{ID: CmdGoalApproveCheck, Args: reflect.TypeFor[GoalApproveCheckArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "`command` (the check's exact text, as shown)",
		Doc:     "Approves the goal's check on this machine, so that it may run here (docs/runtime.md §2.10.4); `command` must be the current check (else `goal.check_changed`, nothing approved); returns `State`."},
	{ID: CmdGoalRunCheck, Args: reflect.TypeFor[GoalRunCheckArgs](), Result: reflect.TypeFor[CheckResult](), Scope: ScopeSession,
		ArgsDoc: "`requestId?`",
		Doc:     "Runs the goal's check now, as the user, without completing the goal (docs/runtime.md §2.10); a check not approved on this machine is refused with `goal.check_unapproved` (§2.10.4); answers when it has ended: `State`, `run` `{exitCode, durationMs, at, outputTail}` and `passed`; a `requestId` the client chooses makes the start safe to send again: the copy the session applied starts no second run and answers the run the first copy started (docs/team.md, \"What a write acknowledges\")."},
	{ID: CmdGoalSetBudget, Args: reflect.TypeFor[GoalSetBudgetArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "`turns?`, `tokens?`, `wallClockMs?` (each a number, or `null` to remove)",
		Doc:     "Sets or removes budget limits as the user; returns `State`."},
	{ID: CmdQueueAdd, Args: reflect.TypeFor[QueueAddArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "`objective`, `completionCriterion?`, `check?`, `id?`, `turns?`, `tokens?`, `wallClockMs?`",
		Doc:     "Appends a goal to the session's queue as the user (docs/runtime.md §2.9); its `check` is approved on this machine (§2.10.4); its budgets, as for `agentd.goal.setBudget`, become the person's limits of the goal it starts (§2.9.1); an `id` the client chooses makes the add safe to send again (docs/team.md, \"What a write acknowledges\"); returns `State`."},
	{ID: CmdQueueList, Args: reflect.TypeFor[NoArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "-",
		Doc:     "The session's `State`, whose `queue` lists the upcoming goals."},
	{ID: CmdQueueRemove, Args: reflect.TypeFor[QueueIDArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "`id`",
		Doc:     "Removes the queued goal `id`; returns `State`."},
	{ID: CmdQueueMove, Args: reflect.TypeFor[QueueMoveArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "`id`, `index` (0 is first)",
		Doc:     "Moves the queued goal `id` to `index`; returns `State`."},
	{ID: CmdQueueSetAutoAdvance, Args: reflect.TypeFor[QueueAutoAdvanceArgs](), Result: reflect.TypeFor[State](), Scope: ScopeSession,
		ArgsDoc: "`on`",
		Doc:     "Turns advancing to the first queued goal on completion on or off; returns `State`."},
	{ID: CmdUndo, Args: reflect.TypeFor[UndoArgs](), Result: reflect.TypeFor[UndoResult](), Scope: ScopeSession,
		ArgsDoc: "`scope?` (`\"todo\"` or `\"goal\"`; absent: the newest change of either), `expectedRevision?`, `requestId?`",
		Doc:     "Reverts the newest change of the todo list or the goal as the user (docs/runtime.md §6); returns `State` and `undone`: the history event it reverted; a change newer than `expectedRevision`, or one that came in between, answers `todo.conflict` with `data.state`; a `requestId` the client chooses makes the undo safe to send again: the copy the session applied answers the state as it is and the change it reverted (docs/team.md, \"What a write acknowledges\")."},
	{ID: CmdTeamAccept, Args: reflect.TypeFor[TeamAcceptArgs](), Result: reflect.TypeFor[TeamAcceptResult](), Scope: ScopeSession,
		ArgsDoc: "`sha256` (of the team file as shown to the person: `State.teamFile.sha256`)",
		Doc:     "Accepts the folder's `.agentd/team.json` on this machine, as the person (docs/team.md): the file must still have that `sha256`; the folder is then served from the team's etcd; `{path, id, sha256, endpoints, sendsTo, reopened}`."},
	{ID: CmdTurnBegin, Args: reflect.TypeFor[TurnBeginArgs](), Result: reflect.TypeFor[TurnBeginResult](), Scope: ScopeSession,
		ArgsDoc: "`turnId`, `origin` (`user`/`continuation`/`resume`), `detached?`",
		Doc:     "Starts a turn; `{goalDriven, goal}` (docs/runtime.md §2.4). A `detached` turn is not ended when the connection that began it closes (docs/hooks.md)."},
	{ID: CmdStepBegin, Args: reflect.TypeFor[StepBeginArgs](), Result: reflect.TypeFor[StepBeginResult](), Scope: ScopeSession,
		ArgsDoc: "`turnId`",
		Doc:     "Before a model call: `{injections}` (goal_cancelled, goal, goal_wrap_up, todo_list_reminder; docs/runtime.md §2.7.1)."},
	{ID: CmdStepEnd, Args: reflect.TypeFor[StepEndArgs](), Result: reflect.TypeFor[StepEndResult](), Scope: ScopeSession,
		ArgsDoc: "`turnId`, `outputTokens`, `finishReason` (`stop`/`tool_calls`)",
		Doc:     "After a step's tools ran: `{stopTurn, graceStep, injections}` (docs/runtime.md §2.4)."},
	{ID: CmdStepNext, Args: reflect.TypeFor[StepNextArgs](), Result: reflect.TypeFor[StepNextResult](), Scope: ScopeSession,
		ArgsDoc: "`turnId`, `outputTokens`, `finishReason` (`tool_calls`)",
		Doc:     "At a step boundary: `agentd.step.end` then, unless it stops the turn, `agentd.step.begin`, in one commit; `{end, begin}`, `begin` null after a `stopTurn` (docs/protocol.md §3)."},
	{ID: CmdTurnEnd, Args: reflect.TypeFor[TurnEndArgs](), Result: reflect.TypeFor[TurnEndResult](), Scope: ScopeSession,
		ArgsDoc: "`turnId`, `outcome` (`completed`/`cancelled`/`failed`/`blocked`/`stepLimit`), `error?: {kind, message}`",
		Doc:     "Ends a turn: `{continuation: {variant, prompt} or null, goal}` (docs/runtime.md §2.5, §2.6)."},
}

// Lookup returns the metadata of command id.
func Lookup(id CommandID) (Spec, bool) {
	for _, s := range Commands {
		if s.ID == id {
			return s, true
		}
	}
	return Spec{}, false
}
