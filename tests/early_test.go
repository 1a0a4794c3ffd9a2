package tests

import (
	"encoding/json"
	"testing"
)

// TestNotificationsHeldUntilInitialized: a change committed between the
// answer to `initialize` and the client's `initialized` (another client's
// write, or this client's own) reaches the client right after
// `initialized`, never lost (docs/protocol.md §2.3), and nothing is sent
// before it. Before, only goal notifications were held and a todoChanged of
// that window was dropped, so a panel that read the state before
// `initialized` stayed stale.
func TestNotificationsHeldUntilInitialized(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pr := e.start()
	c := pr.connect()
	m, err := c.Request("initialize", map[string]any{"processId": nil, "rootUri": fileURI(e.ws), "capabilities": map[string]any{}})
	if err != nil || m.Error != nil {
		t.Fatalf("initialize: %v %+v", err, m)
	}
	c.MustExec("agentd.callTool", map[string]any{"name": "TodoList", "input": map[string]any{"todos": []item{{"early", "pending"}}}}, nil)
	if n := c.NotesOf("agentd/todoChanged"); len(n) > 0 {
		t.Fatalf("agentd/todoChanged before initialized: %s", n[0])
	}
	c.SendBody(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	note := c.Await("agentd/todoChanged", revisionAtLeast(1))
	var p struct {
		Revision uint64 `json:"revision"`
		Items    []item `json:"items"`
	}
	if err := json.Unmarshal(note, &p); err != nil || p.Revision != 1 || len(p.Items) != 1 || p.Items[0].Title != "early" {
		t.Fatalf("todoChanged after initialized: %s (%v), want revision 1 with the item early", note, err)
	}
	c.MustExec("agentd.callTool", map[string]any{"name": "TodoList", "input": map[string]any{"todos": []item{{"late", "pending"}}}}, nil)
	c.Await("agentd/todoChanged", revisionAtLeast(2))
	if got := c.NotesOf("agentd/todoChanged"); len(got) != 2 {
		t.Fatalf("got %d todoChanged, want one per revision: %s", len(got), got)
	}
	c.Shutdown()
}
