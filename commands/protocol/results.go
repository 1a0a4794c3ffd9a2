package protocol

// The results of the tools, the steps and the team acceptance; those that
// show a session are in state.go.

// Injection is text agentd adds to the model's context before a step
// (docs/protocol.md §3, agentd.step.begin and agentd.step.end). Text is always
// wrapped in <system-reminder> and </system-reminder> lines.
type Injection struct {
	Variant string `json:"variant"`
	Text    string `json:"text"`
}

// StepBeginResult is the answer of agentd.step.begin: what to inject before
// the model call, in order.
type StepBeginResult struct {
	Injections []Injection `json:"injections"`
}

// StepEndResult is the answer of agentd.step.end. GraceStep: run exactly one
// more step with Injections (the goal_budget_stop notice); StopTurn: end the
// turn now.
type StepEndResult struct {
	StopTurn   bool        `json:"stopTurn"`
	GraceStep  bool        `json:"graceStep"`
	Injections []Injection `json:"injections"`
}

// StepNextResult is the answer of agentd.step.next: what agentd.step.end
// and then agentd.step.begin would have answered, in one commit. Begin is
// null when End.StopTurn (no next step was begun).
type StepNextResult struct {
	End   StepEndResult    `json:"end"`
	Begin *StepBeginResult `json:"begin"`
}

// ToolResult is a tool call's answer (docs/protocol.md §3): the answer of
// agentd.callTool, for every tool. A model-facing refusal is a ToolResult
// with IsError and ErrorCode, never a JSON-RPC error.
type ToolResult struct {
	Output      string `json:"output"`
	IsError     bool   `json:"isError"`
	ErrorCode   string `json:"errorCode,omitempty"`
	Description string `json:"description"`
	StopTurn    bool   `json:"stopTurn"`
	StopBatch   bool   `json:"stopBatch"`
}

// ToolInfo is one entry of agentd.tools, {name, description, inputSchema,
// readOnly?}: what a host hands to its model. InputSchema is JSON Schema
// with additionalProperties false.
type ToolInfo struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	// ReadOnly: the tool changes nothing (GetGoal), so a host may run it
	// without asking the user.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// ToolsResult is the answer of agentd.tools.
type ToolsResult struct {
	Tools []ToolInfo `json:"tools"`
}

// ToolDescription is the answer of agentd.describeTool.
type ToolDescription struct {
	Description string `json:"description"`
	Display     any    `json:"display,omitempty"`
}

// TeamAcceptResult is the answer of agentd.team.accept (docs/team.md,
// "Accepting a team file").
type TeamAcceptResult struct {
	Path   string `json:"path"` // the team file, relative to the folder: ".agentd/team.json"
	ID     string `json:"id"`   // the team id it names
	SHA256 string `json:"sha256"`
	// Endpoints are the etcd endpoints the file names, now accepted.
	Endpoints []string `json:"endpoints"`
	// SendsTo are the endpoints this daemon dials for the team, and so
	// sends this machine's etcd credentials to: the machine's own
	// (--etcd-endpoints, AGENTD_ETCD_ENDPOINTS), else Endpoints.
	SendsTo []string `json:"sendsTo"`
	// Reopened: the daemon had the folder open from this machine's state;
	// every client moves to the team's state at its next command, and is
	// sent agentd/storeChanged {stale: false} to read it again.
	Reopened bool `json:"reopened"`
}
