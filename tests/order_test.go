package tests

// End-to-end tests of the order of pipelined requests (docs/protocol.md
// §2.2): a client that does not wait for replies sees its
// requests on one session take effect in the order it sent them, waits and
// other sessions and folders are not held up by them, and `shutdown` is
// answered only after every request received before it.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"
)

// execBody is a workspace/executeCommand request with id and one ARGS object.
func execBody(id, command string, args map[string]any) string {
	return mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand",
		"params": map[string]any{"command": command, "arguments": []any{args}}})
}

// pipeline writes the bodies back to back in one write, without waiting
// for any reply, and reads a response for each of them (see responses).
func (r *raw) pipeline(bodies ...string) (byID map[string]map[string]any, arrived []string) {
	r.t.Helper()
	r.write(framed(bodies))
	return r.responses(len(bodies))
}

// responses reads the next n responses, which must carry string ids, and
// returns them by id, and the ids in the order the responses arrived.
func (r *raw) responses(n int) (byID map[string]map[string]any, arrived []string) {
	r.t.Helper()
	byID = map[string]map[string]any{}
	for len(byID) < n {
		m := r.readResponse()
		id, ok := m["id"].(string)
		if !ok {
			r.t.Fatalf("response without a string id: %v", m)
		}
		if _, dup := byID[id]; dup {
			r.t.Fatalf("two responses for id %s", id)
		}
		byID[id] = m
		arrived = append(arrived, id)
	}
	return byID, arrived
}

// framed frames each body with its Content-Length, back to back.
func framed(bodies []string) string {
	var b strings.Builder
	for _, body := range bodies {
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	return b.String()
}

// resultOf decodes the result of a response into out, failing the test on
// an error response.
func resultOf(t testing.TB, m map[string]any, out any) {
	t.Helper()
	if m["error"] != nil {
		t.Fatalf("response %v: got an error, want a result", m)
	}
	b, err := json.Marshal(m["result"])
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		t.Fatalf("decoding the result of %v: %v", m, err)
	}
}

func todoInput(title string) map[string]any {
	return map[string]any{"todos": []item{{Title: title, Status: "pending"}}}
}

func titles(items []item) string {
	var ts []string
	for _, it := range items {
		ts = append(ts, it.Title)
	}
	return strings.Join(ts, ",")
}

// TestPipelinedWritesInOrder: ten TodoList writes sent back to back end on
// the last one; an agentd.state read sent after each write sees that write,
// and an agentd.sessions sent after them sees the last (docs/protocol.md
// §2.2). The old handlers raced, so each round runs on a
// fresh session and 20 rounds of each kind make a race show.
func TestPipelinedWritesInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.start().raw()
	r.initRaw(e.ws)
	write := func(id, session string, k int) string {
		todos := make([]item, k) // list k has k items, "list k #1" first
		for j := range todos {
			todos[j] = item{Title: fmt.Sprintf("list %d #%d", k, j+1), Status: "pending"}
		}
		return execBody(id, "agentd.callTool", map[string]any{"session": session, "name": "TodoList", "input": map[string]any{"todos": todos}})
	}
	isList := func(items []item, k int) bool {
		return len(items) == k && items[0].Title == fmt.Sprintf("list %d #1", k)
	}
	for round := range 20 {
		session := fmt.Sprintf("writes-%d", round)
		var bodies []string
		for k := 1; k <= 10; k++ {
			bodies = append(bodies, write(fmt.Sprintf("w%d", k), session, k))
		}
		got, _ := r.pipeline(bodies...)
		for k := 1; k <= 10; k++ {
			var tr toolResult
			if resultOf(t, got[fmt.Sprintf("w%d", k)], &tr); tr.IsError {
				t.Fatalf("round %d: write %d answered %+v", round, k, tr)
			}
		}
		got, _ = r.pipeline(execBody("read", "agentd.state", map[string]any{"session": session}))
		var st state
		if resultOf(t, got["read"], &st); !isList(st.Todos.Items, 10) || st.Revision != 10 {
			t.Fatalf("round %d: after ten pipelined writes the list is %q at revision %d, want list 10 at revision 10", round, titles(st.Todos.Items), st.Revision)
		}
	}
	for round := range 20 {
		session := fmt.Sprintf("reads-%d", round)
		var bodies []string
		for k := 1; k <= 10; k++ {
			bodies = append(bodies, write(fmt.Sprintf("w%d", k), session, k),
				execBody(fmt.Sprintf("r%d", k), "agentd.state", map[string]any{"session": session}))
		}
		bodies = append(bodies, execBody("sessions", "agentd.sessions", map[string]any{}))
		got, _ := r.pipeline(bodies...)
		for k := 1; k <= 10; k++ {
			var st state
			resultOf(t, got[fmt.Sprintf("r%d", k)], &st)
			if !isList(st.Todos.Items, k) || st.Revision != uint64(k) {
				t.Fatalf("round %d: the read sent after write %d sees %q at revision %d, want list %d at revision %d",
					round, k, titles(st.Todos.Items), st.Revision, k, k)
			}
		}
		var list struct {
			Sessions []struct {
				Session   string
				TodoCount int
			}
		}
		resultOf(t, got["sessions"], &list)
		count := -1
		for _, s := range list.Sessions {
			if s.Session == session {
				count = s.TodoCount
			}
		}
		if count != 10 {
			t.Fatalf("round %d: agentd.sessions sent after the writes lists %+v, want %s with 10 todos", round, list.Sessions, session)
		}
	}
}

// TestPipelinedTurnsAllCounted: 20 turns sent as pipelined turn.begin,
// step.begin, step.end and turn.end calls are all answered without an error
// and all counted on a goal without a budget, with the sum of their tokens.
func TestPipelinedTurnsAllCounted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.start().raw()
	r.initRaw(e.ws)
	for round := range 3 {
		session := fmt.Sprintf("round-%d", round)
		got, _ := r.pipeline(execBody("goal", "agentd.goal.create", map[string]any{"session": session, "objective": "count every turn"}))
		resultOf(t, got["goal"], &state{})
		var bodies []string
		wantTokens := int64(0)
		for i := 1; i <= 20; i++ {
			turn := fmt.Sprintf("turn-%d", i)
			origin := "continuation"
			if i == 1 {
				origin = "user"
			}
			wantTokens += int64(i)
			on := func(args map[string]any) map[string]any {
				args["session"], args["turnId"] = session, turn
				return args
			}
			bodies = append(bodies,
				execBody(turn+"/turn.begin", "agentd.turn.begin", on(map[string]any{"origin": origin})),
				execBody(turn+"/step.begin", "agentd.step.begin", on(map[string]any{})),
				execBody(turn+"/step.end", "agentd.step.end", on(map[string]any{"outputTokens": i, "finishReason": "stop"})),
				execBody(turn+"/turn.end", "agentd.turn.end", on(map[string]any{"outcome": "completed"})))
		}
		got, _ = r.pipeline(bodies...)
		for id, m := range got {
			if m["error"] != nil {
				t.Fatalf("round %d: %s answered %v", round, id, m["error"])
			}
		}
		var end protocol.TurnEndResult
		resultOf(t, got["turn-20/turn.end"], &end)
		got, _ = r.pipeline(execBody("state", "agentd.state", map[string]any{"session": session}))
		var st struct{ Goal *goalSnap }
		resultOf(t, got["state"], &st)
		if g := st.Goal; g == nil || g.TurnsUsed != 20 || g.TokensUsed != wantTokens || g.Status != "active" {
			t.Fatalf("round %d: goal after 20 pipelined turns = %+v, want active with 20 turns and %d tokens", round, g, wantTokens)
		}
		if end.Goal == nil || end.Goal.TurnsUsed != 20 {
			t.Fatalf("round %d: the last turn.end answered %+v, want 20 turns used", round, end.Goal)
		}
	}
}

// TestAwaitChangeAlongsideOrderedWrites: an agentd.awaitChange sent before
// writes on its own session does not hold them up (a wait runs alongside the
// session's queue): it is answered with the state of the write that moved
// the revision past afterRevision.
func TestAwaitChangeAlongsideOrderedWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.start().raw()
	r.initRaw(e.ws)
	bodies := []string{execBody("wait", "agentd.awaitChange", map[string]any{"afterRevision": 4, "timeoutMs": 300000})}
	for k := 1; k <= 5; k++ {
		bodies = append(bodies, execBody(fmt.Sprintf("w%d", k), "agentd.callTool", map[string]any{"name": "TodoList", "input": todoInput(fmt.Sprintf("list %d", k))}))
	}
	got, _ := r.pipeline(bodies...)
	for k := 1; k <= 5; k++ {
		var tr toolResult
		resultOf(t, got[fmt.Sprintf("w%d", k)], &tr)
	}
	var st state
	resultOf(t, got["wait"], &st)
	if st.Revision != 5 || titles(st.Todos.Items) != "list 5" {
		t.Fatalf("awaitChange after revision 4 answered %q at revision %d, want list 5 at revision 5", titles(st.Todos.Items), st.Revision)
	}
}

// TestWaitOnOneSessionDoesNotHoldAnother: while an agentd.awaitChange waits
// on session a, pipelined writes and reads on session b are answered, in
// order; the wait ends with the write on a that follows them.
func TestWaitOnOneSessionDoesNotHoldAnother(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.start().raw()
	r.initRaw(e.ws)
	bodies := []string{execBody("wait-a", "agentd.awaitChange", map[string]any{"session": "a", "afterRevision": 0, "timeoutMs": 300000})}
	for k := 1; k <= 5; k++ {
		bodies = append(bodies,
			execBody(fmt.Sprintf("b%d", k), "agentd.callTool", map[string]any{"session": "b", "name": "TodoList", "input": todoInput(fmt.Sprintf("b %d", k))}),
			execBody(fmt.Sprintf("rb%d", k), "agentd.state", map[string]any{"session": "b"}))
	}
	r.write(framed(bodies))
	got, _ := r.responses(10)
	if m, ended := got["wait-a"]; ended {
		t.Fatalf("the wait on session a ended before any change to a: %v", m)
	}
	for k := 1; k <= 5; k++ {
		resultOf(t, got[fmt.Sprintf("b%d", k)], &toolResult{})
		var st state
		resultOf(t, got[fmt.Sprintf("rb%d", k)], &st)
		if want := fmt.Sprintf("b %d", k); titles(st.Todos.Items) != want {
			t.Fatalf("read %d on session b sees %q, want %q", k, titles(st.Todos.Items), want)
		}
	}
	r.write(framed([]string{execBody("a1", "agentd.callTool", map[string]any{"session": "a", "name": "TodoList", "input": todoInput("a 1")})}))
	got, _ = r.responses(2)
	resultOf(t, got["a1"], &toolResult{})
	var st state
	resultOf(t, got["wait-a"], &st)
	if st.Session != "a" || titles(st.Todos.Items) != "a 1" {
		t.Fatalf("the wait on a answered %+v, want the state after the write on a", st)
	}
}

// TestSlowFolderDoesNotHoldAnother: requests on a folder whose state another
// process holds are slow (each waits about 1 s for the file lock, then
// answers workspace.locked); pipelined before a write and a read on a second
// folder of the same connection, they do not hold those up.
func TestSlowFolderDoesNotHoldAnother(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	holder := e.start("--stdio").connect() // a plain stdio agentd, also in forwarded mode
	holder.Initialize(nil, e.ws)
	other := t.TempDir()
	r := e.start().raw()
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"processId":null,"capabilities":{},"workspaceFolders":[` +
		fmt.Sprintf(`{"uri":%q,"name":"a"},{"uri":%q,"name":"b"}`, fileURI(e.ws), fileURI(other)) + `]}}`)
	if m := r.readResponse(); m["result"] == nil {
		t.Fatalf("initialize failed: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	var bodies []string
	for k := 1; k <= 3; k++ {
		bodies = append(bodies, execBody(fmt.Sprintf("locked%d", k), "agentd.state", map[string]any{"workspace": e.ws}))
	}
	bodies = append(bodies,
		execBody("write", "agentd.callTool", map[string]any{"workspace": other, "name": "TodoList", "input": todoInput("other")}),
		execBody("read", "agentd.state", map[string]any{"workspace": other}))
	got, arrived := r.pipeline(bodies...)
	for k := 1; k <= 3; k++ {
		m := got[fmt.Sprintf("locked%d", k)]
		if e, _ := m["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["data"]), "workspace.locked") {
			t.Fatalf("a request on the held folder answered %v, want workspace.locked", m)
		}
	}
	resultOf(t, got["write"], &toolResult{})
	var st state
	resultOf(t, got["read"], &st)
	if titles(st.Todos.Items) != "other" {
		t.Fatalf("the read on the second folder sees %q, want the write before it", titles(st.Todos.Items))
	}
	if last := arrived[len(arrived)-1]; last != "locked3" {
		t.Fatalf("responses arrived in the order %v: the requests on the free folder waited for the held one", arrived)
	}
}

// TestCancelQueuedRequest: $/cancelRequest for a request still queued
// behind a slow one on its session answers -32800 at once, without waiting
// for the slow one, and the request after it still runs after the slow one.
// A request reusing the slow one's id is refused at once and takes no place
// in the queue. The slow requests are on a folder whose state another
// process holds.
func TestCancelQueuedRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	holder := e.start("--stdio").connect() // a plain stdio agentd, also in forwarded mode
	holder.Initialize(nil, e.ws)
	r := e.start().raw()
	r.initRaw(e.ws)
	r.write(framed([]string{
		execBody("slow", "agentd.state", map[string]any{}),
		execBody("queued", "agentd.callTool", map[string]any{"name": "TodoList", "input": todoInput("cancelled")}),
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"queued"}}`,
		execBody("slow", "agentd.state", map[string]any{}),
		execBody("after", "agentd.state", map[string]any{}),
	}))
	var got []string
	for range 4 {
		m := r.readResponse()
		summary := fmt.Sprint(m["id"], " ", errCode(m))
		if e, _ := m["error"].(map[string]any); e != nil && strings.Contains(fmt.Sprint(e["data"]), "workspace.locked") {
			summary = fmt.Sprint(m["id"], " locked")
		}
		got = append(got, summary)
	}
	if first := got[0] + "," + got[1]; first != "queued -32800,slow -32600" && first != "slow -32600,queued -32800" {
		t.Fatalf("responses %v: want the cancelled request (-32800) and the reused id (-32600) answered first", got)
	}
	if rest := got[2] + "," + got[3]; rest != "slow locked,after locked" {
		t.Fatalf("responses %v: want then the slow request and the one after it, in order, both workspace.locked", got)
	}
}

// TestShutdownAnswersEarlierRequests: requests piped just before `shutdown`
// (a write and a wait) are finished and answered before its reply, the
// write is stored, and a request after `shutdown` is refused with -32600
// and not applied. Five processes, because the old code lost the write to
// the `exit` piped after `shutdown` in most runs.
func TestShutdownAnswersEarlierRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for trial := range 5 {
		p := e.start()
		r := p.raw()
		r.initRaw(e.ws)
		kept := fmt.Sprintf("kept %d", trial)
		r.write(framed([]string{
			execBody("write", "agentd.callTool", map[string]any{"name": "TodoList", "input": todoInput(kept)}),
			execBody("wait", "agentd.awaitChange", map[string]any{"session": "idle", "afterRevision": 0, "timeoutMs": 300000}),
			`{"jsonrpc":"2.0","id":"shutdown","method":"shutdown"}`,
			execBody("late", "agentd.callTool", map[string]any{"name": "TodoList", "input": todoInput("after shutdown")}),
			`{"jsonrpc":"2.0","method":"exit"}`,
		}))
		got, arrived := r.responses(4)
		var tr toolResult
		resultOf(t, got["write"], &tr)
		if tr.IsError || !strings.Contains(tr.Output, kept) {
			t.Fatalf("trial %d: the write before shutdown answered %+v", trial, tr)
		}
		var st state
		resultOf(t, got["wait"], &st)
		if st.Session != "idle" || st.Revision != 0 {
			t.Fatalf("trial %d: the wait before shutdown answered %+v, want the unchanged state of session idle", trial, st)
		}
		if got["shutdown"]["error"] != nil {
			t.Fatalf("trial %d: shutdown answered %v", trial, got["shutdown"])
		}
		if want := []string{"shutdown", "late"}; strings.Join(arrived[2:], ",") != strings.Join(want, ",") {
			t.Fatalf("trial %d: responses arrived in the order %v, want the write and the wait before shutdown", trial, arrived)
		}
		if code := errCode(got["late"]); code != -32600 {
			t.Fatalf("trial %d: a request after shutdown answered %v, want -32600", trial, got["late"])
		}
		if code := p.waitExit(); code != 0 {
			t.Fatalf("trial %d: exit code %d after shutdown and exit, want 0", trial, code)
		}
		out, errOut, code := e.cli("state", "--workspace", e.ws)
		if code != 0 || !strings.Contains(out, "[pending] "+kept) || strings.Contains(out, "after shutdown") {
			t.Fatalf("trial %d: agentd state after exit: code %d, out %q, err %q; want the write before shutdown alone", trial, code, out, errOut)
		}
	}
}

// TestShutdownSendsEarlierNotifications: a script that pipes its whole
// session at once (initialize, initialized, a write, `shutdown`, `exit`)
// gets the agentd/todoChanged of its write before the reply to `shutdown`
// (docs/protocol.md §2.2). Ten fresh folders, because the old code
// answered `shutdown` before the fan-out reached the connection, which
// then dropped the notification, in most runs.
func TestShutdownSendsEarlierNotifications(t *testing.T) {
	t.Parallel()
	for trial := range 10 {
		e := newEnv(t)
		p := e.start()
		r := p.raw()
		r.write(framed([]string{
			`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"processId":null,"rootUri":` + mustJSON(fileURI(e.ws)) + `,"capabilities":{}}}`,
			`{"jsonrpc":"2.0","method":"initialized","params":{}}`,
			execBody("write", "agentd.callTool", map[string]any{"name": "TodoList", "input": todoInput("noted")}),
			`{"jsonrpc":"2.0","id":"shutdown","method":"shutdown"}`,
			`{"jsonrpc":"2.0","method":"exit"}`,
		}))
		var seen []string
		noted := false
		for {
			m := r.read()
			if m["id"] == "shutdown" {
				break
			}
			if method, _ := m["method"].(string); method != "" {
				seen = append(seen, method)
				noted = noted || method == "agentd/todoChanged"
			} else {
				seen = append(seen, fmt.Sprint(m["id"]))
			}
		}
		if !noted {
			t.Fatalf("trial %d: before the reply to shutdown came %v, want the agentd/todoChanged of the write among them", trial, seen)
		}
		if code := p.waitExit(); code != 0 {
			t.Fatalf("trial %d: exit code %d after shutdown and exit, want 0", trial, code)
		}
	}
}
