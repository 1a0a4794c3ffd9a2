package commands_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// FuzzUnwrapArguments: for any raw `arguments`, UnwrapArguments answers
// either one JSON object or an args.invalid error with a message; it never
// panics.
func FuzzUnwrapArguments(f *testing.F) {
	for _, s := range []string{``, `null`, `[]`, `[{}]`, `[[]]`, `[null]`, `[{"a":1}]`, `{"a":1}`, `[1]`,
		`[{}, {}]`, `[{"a":`, ` [ { } ] `, `["x"]`, `[[1]]`, "[\xff]", `[{"a":1}] x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := commands.UnwrapArguments(raw)
		if err != nil {
			if protocol.ErrorCode(err) != protocol.CodeArgsInvalid || err.Error() == "" {
				t.Fatalf("UnwrapArguments(%q): error %v with code %q, want args.invalid", raw, err, protocol.ErrorCode(err))
			}
			return
		}
		var obj map[string]json.RawMessage
		if len(got) == 0 || got[0] != '{' || json.Unmarshal(got, &obj) != nil {
			t.Fatalf("UnwrapArguments(%q) = %q, not a JSON object", raw, got)
		}
	})
}

// fuzzIDs is every command id in a stable order, so that corpus entries keep
// naming the same command when commands are added at the end of a group.
var fuzzIDs = func() []string {
	ids := commands.IDs()
	slices.Sort(ids)
	return ids
}()

// fuzzCommandID maps the fuzzer's byte to a command id; 255 is an unknown one.
func fuzzCommandID(which uint8) string {
	if which == 255 {
		return "agentd.nope"
	}
	return fuzzIDs[int(which)%len(fuzzIDs)]
}

// FuzzExecute runs every command with arbitrary `arguments` through
// Client.Execute on a real registry in a temporary state directory (one per
// fuzzing process; state accumulates across inputs, as in a long-lived
// daemon). Invariants: no panic; every call answers either a result that
// encodes as JSON (a ToolResult with a description for callTool) or an error
// with a stable code and a message. The only uncoded error allowed is the
// caller's own deadline (agentd.awaitChange waits on it).
func FuzzExecute(f *testing.F) {
	dir := f.TempDir()
	root := filepath.Join(dir, "work")
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o700); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "TASK.md"), []byte("the task\n"), 0o600); err != nil {
		f.Fatal(err)
	}
	svc := service.New(workspace.Options{StateDir: filepath.Join(dir, "state")}, service.Daemon)
	f.Cleanup(func() { svc.Close() })
	cl := commands.NewClient(svc, commands.Defaults{})
	f.Cleanup(cl.Close)
	if err := cl.AddFolder(root); err != nil {
		f.Fatal(err)
	}

	for _, seed := range fuzzExecuteSeeds(root) {
		f.Add(seed.which, []byte(seed.args))
	}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		id := fuzzCommandID(which)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		res, err := cl.Execute(ctx, id, args)
		if err != nil {
			code := protocol.ErrorCode(err)
			if code == "" && !(ctx.Err() != nil && errors.Is(err, ctx.Err())) {
				t.Fatalf("%s %q: uncoded error %T: %v", id, args, err, err)
			}
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatalf("%s %q: error %q without a message", id, args, code)
			}
			return
		}
		if res == nil {
			t.Fatalf("%s %q: nil result and nil error", id, args)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("%s %q: result does not encode: %v", id, args, err)
		}
		if tr, ok := res.(protocol.ToolResult); ok {
			if tr.Description == "" || tr.IsError && tr.ErrorCode == "" && !strings.HasPrefix(tr.Output, "Not run") {
				t.Fatalf("%s %q: tool result %+v", id, args, tr)
			}
		}
	})
}

type fuzzSeed struct {
	which uint8
	args  string
}

// fuzzExecuteSeeds are well-formed and badly-formed arguments of every
// command (the corpus in testdata/fuzz/FuzzExecute holds more).
func fuzzExecuteSeeds(root string) []fuzzSeed {
	index := func(id string) uint8 { return uint8(slices.Index(fuzzIDs, id)) }
	var out []fuzzSeed
	add := func(id string, args ...string) {
		for _, a := range args {
			out = append(out, fuzzSeed{index(id), a})
		}
	}
	ws, _ := json.Marshal(wsfolder.URIFromPath(root))
	add("agentd.tools", ``, `[]`, `[{"session":"s"}]`)
	add("agentd.callTool",
		`[{"name":"TodoList","input":{"todos":[{"title":"a","status":"pending"}]}}]`,
		`[{"name":"TodoList","input":{}}]`,
		`[{"name":"TodoList","input":{"todos":[{"title":"a","status":"completed"}]}}]`,
		`[{"name":"CreateGoal","input":{"objective":"read TASK.md and do it"},"turnId":"t1"}]`,
		`[{"name":"CreateGoal","input":{"objective":"x","taskFile":"../outside"}}]`,
		`[{"name":"SetGoalBudget","input":{"value":2,"unit":"seconds"}}]`,
		`[{"name":"UpdateGoal","input":{"status":"complete"},"agent":"sub"}]`,
		`[{"name":"GetGoal","input":null,"workspace":`+string(ws)+`}]`,
		`[{"name":"Nope","input":{}}]`,
		`[{"name":"TodoList","input":"x"}]`)
	add("agentd.describeTool", `[{"name":"CreateGoal","input":{"objective":"o","completionCriterion":"c"}}]`, `[{"name":"SetGoalBudget","input":{"value":1,"unit":"hours"}}]`)
	add("agentd.state", `[{"session":"other"}]`, `[{"workspace":"file:///elsewhere"}]`, `[{"workspace":"vscode-vfs://x/y"}]`, `[{"session":1}]`)
	add("agentd.sessions", `[{}]`)
	add("agentd.history", `[{"limit":3}]`, `[{"limit":-1}]`, `[{"limit":1e99}]`)
	add("agentd.todo.set", `[{"items":[{"title":"b","status":"done"}],"expectedRevision":0}]`, `[{"items":[]}]`, `[{}]`, `[{"items":[{"title":"","status":"done"}]}]`)
	add("agentd.goal.create", `[{"objective":"ship","completionCriterion":"tests pass","replace":true}]`, `[{"objective":""}]`, `[{"objective":"x","taskFile":"docs/none.md"}]`)
	add("agentd.goal.pause", `[{"reason":"lunch"}]`)
	add("agentd.goal.resume", ``)
	add("agentd.goal.cancel", ``)
	add("agentd.goal.setBudget", `[{"turns":3,"tokens":null,"wallClockMs":60000}]`, `[{"turns":0.5}]`, `[{"wallClockMs":"x"}]`)
	add("agentd.turn.begin", `[{"turnId":"t1","origin":"user"}]`, `[{"turnId":"","origin":"user"}]`, `[{"turnId":"t2","origin":"bogus"}]`)
	add("agentd.step.begin", `[{"turnId":"t1"}]`, `[{"turnId":"zz"}]`)
	add("agentd.step.end", `[{"turnId":"t1","outputTokens":100,"finishReason":"tool_calls"}]`, `[{"turnId":"t1","outputTokens":-1,"finishReason":"stop"}]`, `[{"turnId":"t1","outputTokens":9223372036854775807,"finishReason":"stop"}]`)
	add("agentd.turn.end", `[{"turnId":"t1","outcome":"completed"}]`, `[{"turnId":"t1","outcome":"failed","error":{"kind":"api","message":"boom"}}]`)
	add("agentd.awaitChange", `[{"afterRevision":0,"timeoutMs":1}]`, `[{"afterRevision":1000000,"timeoutMs":5}]`, `[{"timeoutMs":-3}]`)
	out = append(out, fuzzSeed{255, `[]`}, fuzzSeed{0, `{"a":1}`}, fuzzSeed{1, `[{},{}]`}, fuzzSeed{2, `[{"unknown":true}]`}, fuzzSeed{3, "[{\"session\":\"\xff\"}]"})
	return out
}
