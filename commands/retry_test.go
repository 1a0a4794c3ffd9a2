package commands_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/workspace"
	"github.com/agentd/agentd/workspace/storetest"
	"github.com/google/go-cmp/cmp"
)

// TestHandlersSafeToRetry runs every handler case (a success and a
// refusal of every command of the table, handlerCases) twice: on a store
// as it is, and on one that refuses every first commit as a conflict
// (storetest.FailFirst), so that the update function of each change runs
// twice, as it may in team mode (storage.Interface). The result and the
// state after it (every session's state and history) must be the same.
func TestHandlersSafeToRetry(t *testing.T) {
	var conflicts int64
	for _, tc := range handlerCases {
		t.Run(tc.name, func(t *testing.T) {
			plain := runCase(t, tc, nil)
			ff := &storetest.FailFirst{}
			retried := runCase(t, tc, ff)
			conflicts += ff.Conflicts()
			if diff := cmp.Diff(plain, retried); diff != "" {
				t.Errorf("with every first commit refused (%d refusals), %s differs (-plain +retried):\n%s", ff.Conflicts(), tc.cmd.id, diff)
			}
		})
	}
	if conflicts == 0 {
		t.Error("no commit was refused: the wrapper is not in the path")
	}
}

// outcome is what a client sees of a handler case: the command's result
// or refusal, then the folder's sessions with their state and history.
type outcome struct {
	Result string
	Code   string
	State  map[string]string
}

// runCase runs tc on a fresh client, its store wrapped by ff unless nil.
func runCase(t *testing.T, tc handlerCase, ff *storetest.FailFirst) outcome {
	t.Helper()
	cl, root := newTestClient(t, func(o *workspace.Options) {
		if ff != nil {
			o.WrapStore = ff.Wrap
		}
	})
	cmd := tc.cmd
	if tc.teamFile {
		cmd.args = strings.ReplaceAll(cmd.args, "$TEAMSHA", pendingTeamFile(t, cl, root).SHA256)
	}
	for _, r := range tc.setup {
		if _, err := cl.Execute(context.Background(), r.id, json.RawMessage("["+r.args+"]")); err != nil {
			t.Fatalf("setup %s %s: %v", r.id, r.args, err)
		}
	}
	var out outcome
	res, err := cl.Execute(context.Background(), cmd.id, json.RawMessage("["+withQueuedID(t, cl, cmd.args)+"]"))
	if err != nil {
		out.Code, out.Result = protocol.ErrorCode(err), normalized(t, err.Error())
	} else {
		out.Result = normalized(t, res)
	}
	// The state as it reads after the command (a folder that became a
	// team folder on no reachable cluster reads as its refusal).
	out.State = map[string]string{}
	raw := execute(t, cl, "agentd.sessions", `{}`)
	var sessions struct {
		Sessions []struct{ Session string }
	}
	if err := json.Unmarshal([]byte(raw), &sessions); err != nil {
		out.State[""] = raw
	}
	for _, s := range sessions.Sessions {
		arg := `{"session":` + quote(s.Session) + `}`
		out.State[s.Session] = execute(t, cl, "agentd.state", arg) + "\n" + execute(t, cl, "agentd.history", arg)
	}
	return out
}

// execute runs a command and returns its result's JSON, or its
// refusal's code and message, normalized.
func execute(t *testing.T, cl *commands.Client, id, args string) string {
	t.Helper()
	res, err := cl.Execute(context.Background(), id, json.RawMessage("["+args+"]"))
	if err != nil {
		return normalized(t, protocol.ErrorCode(err)+": "+err.Error())
	}
	return normalized(t, res)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// What differs between two runs whatever the handler: times (quoted, or in
// a reason's text) and the wall
// clock a goal has used (the retry's pause adds to it) and a check run took,
// ids (a check run's too), hashes of files that hold ids, and the folder's
// temporary path.
var normalizations = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d)`), `TIME`}, // a reason's too ("waiting until …")
	{regexp.MustCompile(`((?i)(wallClockMs|durationMs)\\?"):\d+`), `$1:MS`},
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "UUID"},
	{regexp.MustCompile(`\b[0-9a-f]{64}\b`), "SHA256"},
	{regexp.MustCompile(`(runId\\?":\\?"|run )[A-Z2-7]{10}\b`), "${1}RUNID"},
	{regexp.MustCompile(`/[^"\s]*/work\b`), "/FOLDER"},
}

func normalized(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	for _, n := range normalizations {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}
