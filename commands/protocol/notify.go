package protocol

// Notification methods (docs/protocol.md §4); the params of each are the
// type named after it (commands.TodoChanged, commands.GoalChanged,
// commands.TaskFileChanged, commands.QueueChanged, StoreChanged).
const (
	MethodTodoChanged     = "agentd/todoChanged"
	MethodGoalChanged     = "agentd/goalChanged"
	MethodTaskFileChanged = "agentd/taskFileChanged"
	MethodQueueChanged    = "agentd/queueChanged"
	MethodStoreChanged    = "agentd/storeChanged"
)

// StoreChanged is the params of agentd/storeChanged (docs/protocol.md §4.3):
// the store of a team folder (docs/team.md) became unreachable, so what the
// client shows may be behind (stale), or reachable again.
type StoreChanged struct {
	Workspace string `json:"workspace"`
	Stale     bool   `json:"stale"` // true: etcd does not answer; reads serve the last state seen, writes fail with workspace.unavailable
}
