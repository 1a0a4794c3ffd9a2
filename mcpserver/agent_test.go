package mcpserver

import "testing"

// TestTakeAgent: a TodoList input's lone string "agent" is taken out and
// names the caller (docs/runtime.md §1.3); anything else is left for the
// tool's strict decoder, which refuses it.
func TestTakeAgent(t *testing.T) {
	for _, c := range []struct{ in, out, agent string }{
		{`{"agent":"a-1","todos":[{"title":"x","status":"pending"}]}`, `{"todos":[{"title":"x","status":"pending"}]}`, "a-1"},
		{`{"todos":[],"agent":"a-1"}`, `{"todos":[]}`, "a-1"},
		{`{"agent":"a-1"}`, `{}`, "a-1"},
		{`{"todos":[]}`, `{"todos":[]}`, ""},
		{`{"agent":7,"todos":[]}`, `{"agent":7,"todos":[]}`, ""},
		{`{"agent":"","todos":[]}`, `{"agent":"","todos":[]}`, ""},
		{`{"agent":"a","agent":"b"}`, `{"agent":"a","agent":"b"}`, ""},
		{`{"todos":[],"todos":[]}`, `{"todos":[],"todos":[]}`, ""},
		{`[1]`, `[1]`, ""},
	} {
		out, agent := takeAgent([]byte(c.in))
		if string(out) != c.out || agent != c.agent {
			t.Errorf("takeAgent(%s) = %s, %q; want %s, %q", c.in, out, agent, c.out, c.agent)
		}
	}
}
