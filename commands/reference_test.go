package commands

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"
)

var update = flag.Bool("update", false, "rewrite the generated parts of the docs the tests check")

// TestReference fails when docs/commands.md drifts from the command table:
// the advertised ids, the dispatcher and the docs come from one declaration
// (docs/conventions.md, "Protocol edge").
func TestReference(t *testing.T) {
	checkGenerated(t, "../docs/commands.md", "TestReference", Reference())
}

// checkGenerated fails when the part of the doc at path (relative to
// commands/) between the markers of test (an HTML comment naming the
// command that regenerates it) is not content, and rewrites it under
// -update.
func checkGenerated(t *testing.T, path, test, content string) {
	t.Helper()
	begin := "<!-- BEGIN GENERATED: go test ./commands -run " + test + " -update -->\n"
	const end = "<!-- END GENERATED -->\n"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), begin)
	_, after, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the generated-section markers %q … %q", path, begin, end)
	}
	want := before + begin + content + end + after
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(doc) != want {
		t.Errorf("%s is out of date; run go test ./commands -run %s -update. The generated part should read:\n%s", path, test, content)
	}
}

// TestIDsUnique: every command id is declared once and is an agentd.* id,
// never clashing with the editor extension's own ids (docs/conventions.md).
func TestIDsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, id := range IDs() {
		if seen[id] || !strings.HasPrefix(id, "agentd.") {
			t.Errorf("command id %q is duplicated or not under agentd.", id)
		}
		seen[id] = true
	}
}

// TestResultTypeDeclared: a command's Result is the type its handler
// returns (the compiler holds the handler to it), and a command declared
// with other ARGS than the protocol's table names is refused when the
// table is built.
func TestResultTypeDeclared(t *testing.T) {
	cmd := def[protocol.State](protocol.CmdState, func(ctx context.Context, c *call, a *protocol.NoArgs) (protocol.State, error) {
		return protocol.State{Session: "s"}, nil
	})
	args, err := cmd.decode(json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := cmd.run(context.Background(), &call{}, args)
	if st, ok := res.(protocol.State); err != nil || !ok || st.Session != "s" {
		t.Errorf("run = %v, %v; want the handler's State", res, err)
	}
	if cmd.Result != reflect.TypeFor[protocol.State]() {
		t.Errorf("Result = %v, want protocol.State", cmd.Result)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "agentd.state is declared with protocol.HistoryArgs") {
			t.Errorf("def with the wrong ARGS: recover() = %v, want a panic naming the command and both types", r)
		}
	}()
	def[protocol.State](protocol.CmdState, func(ctx context.Context, c *call, a *protocol.HistoryArgs) (protocol.State, error) {
		return protocol.State{}, nil
	})
}

// TestEveryProtocolCommandServed: the commands served are the protocol's
// table, in its order, each with its own ARGS: a command the protocol
// declares without a handler, or a handler for an id it does not declare,
// fails here.
func TestEveryProtocolCommandServed(t *testing.T) {
	var served, declared []protocol.CommandID
	for _, c := range Commands {
		served = append(served, c.ID)
	}
	for _, s := range protocol.Commands {
		declared = append(declared, s.ID)
	}
	if !reflect.DeepEqual(served, declared) {
		t.Errorf("served %v, the protocol declares %v", served, declared)
	}
}
