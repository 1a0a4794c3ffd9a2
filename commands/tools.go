package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"sort"
	"strings"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/jsonin"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace"
)

// tool is one model-facing tool. prepare decodes an input object once
// (strictly, with the one decoder jsonin) into what the call would do and
// how to run it.
type tool struct {
	info    protocol.ToolInfo
	prepare func(c *call, input json.RawMessage) (toolCall, error)
}

// toolCall is one call of a tool, its input decoded: desc for the host UI
// (agentd.describeTool) and the result, run to run it on the session as
// agentd.callTool read it (cur: a read is answered from it). A call whose
// input did not decode runs into the tool's refusal.
type toolCall struct {
	desc protocol.ToolDescription
	run  func(ctx context.Context, c *call, cur workspace.Session, turnID string) (protocol.ToolResult, error)
}

// tools is every tool, in the order agentd.tools lists them.
var tools = append([]tool{todoTool}, goalTools()...)

// Tools is the model-facing tools, in the order agentd.tools lists them,
// for hosts that register them (agentd mcp). The schemas are shared: read
// them, never change them.
func Tools() []protocol.ToolInfo {
	infos := make([]protocol.ToolInfo, len(tools))
	for i, t := range tools {
		infos[i] = t.info
	}
	return infos
}

func toolNamed(name string) (*tool, error) {
	for i := range tools {
		if tools[i].info.Name == name {
			return &tools[i], nil
		}
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.info.Name
	}
	sort.Strings(names)
	return nil, argsErrorf("unknown tool %q; tools are %s", name, strings.Join(names, ", "))
}

// toolInput checks the shape of a tool input: omitted, null or [] (an
// empty Lua table) is {}, any other non-object is args.invalid.
func toolInput(cmd protocol.CommandID, raw json.RawMessage) (json.RawMessage, error) {
	t := strings.TrimSpace(string(raw))
	switch {
	case t == "" || t == "null" || jsonin.IsEmptyArray(raw):
		return json.RawMessage("{}"), nil
	case t[0] != '{':
		return nil, argsErrorf("%s: field \"input\" must be an object, got %s", cmd, jsonin.Kind(raw))
	}
	return raw, nil
}

var toolCommands = []Command{
	def[protocol.ToolsResult](protocol.CmdTools,
		func(ctx context.Context, c *call, a *protocol.NoArgs) (protocol.ToolsResult, error) {
			return protocol.ToolsResult{Tools: Tools()}, nil
		}),
	def[protocol.ToolResult](protocol.CmdCallTool,
		func(ctx context.Context, c *call, a *protocol.CallToolArgs) (protocol.ToolResult, error) {
			t, err := toolNamed(a.Name)
			if err != nil {
				return protocol.ToolResult{}, err
			}
			input, err := toolInput(protocol.CmdCallTool, a.Input)
			if err != nil {
				return protocol.ToolResult{}, err
			}
			tc, err := t.prepare(c, input)
			if err != nil {
				return protocol.ToolResult{}, err
			}
			s, err := c.folder.ws.View(c.session)
			if err != nil {
				return protocol.ToolResult{}, err
			}
			turnID := a.TurnID
			if turnID == "" {
				// A host that cannot name the turn (an MCP client) calls
				// within the session's open turn (docs/hooks.md).
				turnID = s.Goal.OpenTurn(c.agent)
			}
			if turnID != "" && s.Goal.InGraceStep(turnID) {
				return goal.GraceStepRefusal(tc.desc.Description), nil
			}
			return tc.run(ctx, c, s, turnID)
		}),
	def[protocol.ToolDescription](protocol.CmdDescribeTool,
		func(ctx context.Context, c *call, a *protocol.DescribeToolArgs) (protocol.ToolDescription, error) {
			t, err := toolNamed(a.Name)
			if err != nil {
				return protocol.ToolDescription{}, err
			}
			input, err := toolInput(protocol.CmdDescribeTool, a.Input)
			if err != nil {
				return protocol.ToolDescription{}, err
			}
			tc, err := t.prepare(c, input)
			if err != nil {
				return protocol.ToolDescription{}, err
			}
			return tc.desc, nil
		}),
}

// todoTool is TodoList (docs/runtime.md §1).
var todoTool = tool{
	info: protocol.ToolInfo{Name: todo.ToolName, Description: todo.ToolDescription, InputSchema: todo.InputSchema},
	prepare: func(c *call, input json.RawMessage) (toolCall, error) {
		in, err := todo.DecodeInput(input)
		if err != nil {
			desc := "Updating todo list"
			return toolCall{desc: protocol.ToolDescription{Description: desc}, run: func(context.Context, *call, workspace.Session, string) (protocol.ToolResult, error) {
				return refusal(todo.CodeInvalid, desc, fmt.Sprintf("%v. Send {\"todos\": [{\"title\": \"...\", \"status\": \"pending\"}]} to replace the list, or no arguments to read it.", err)), nil
			}}, nil
		}
		desc := todo.Describe(in)
		return toolCall{desc: protocol.ToolDescription{Description: desc}, run: func(ctx context.Context, c *call, cur workspace.Session, turnID string) (protocol.ToolResult, error) {
			return runTodo(c, in, desc, cur, turnID)
		}}, nil
	},
}

// runTodo runs a TodoList call whose input decoded as in on the session
// read as cur, in turnID ("" outside a turn).
func runTodo(c *call, in todo.Input, desc string, cur workspace.Session, turnID string) (protocol.ToolResult, error) {
	plan, err := todo.PlanCall(in)
	if err != nil {
		return refusal(todo.CodeInvalid, desc, fmt.Sprintf("The todo list was not changed: %v.", err)), nil
	}
	s, err := c.svc.CallTodo(c.folder.ws, c.session, c.agent, turnID, plan, cur)
	if protocol.ErrorCode(err) == protocol.CodeTurnEnded {
		return goal.TurnEndedRefusal(desc), nil
	}
	if e := (*goal.Error)(nil); errors.As(err, &e) && e.Code == goal.CodeTodosOpen {
		return refusal(e.Code, desc, goal.DropRefusal(e)), nil
	}
	if err != nil {
		return protocol.ToolResult{}, err
	}
	return protocol.ToolResult{Output: plan.Output(service.AgentTodos(s, c.agent)), Description: desc}, nil
}

// refusal is a model-facing refusal (docs/protocol.md §3: inside agentd.callTool a
// refusal is a normal result with isError).
func refusal(code, desc, output string) protocol.ToolResult {
	return protocol.ToolResult{Output: output, IsError: true, ErrorCode: code, Description: desc}
}
