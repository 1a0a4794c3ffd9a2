package tests

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/lsptest"
)

// Byte limits (docs/reliability.md, Limits).
const (
	maxListBytes        = 256 << 10 // one todo list as JSON (todo.MaxListBytes)
	maxHistoryBytes     = 4 << 20   // a session's stored history (workspace.MaxHistoryBytes)
	maxHistoryPageBytes = 1 << 20   // the events of one agentd.history reply (workspace.MaxHistoryPageBytes)
	stateFileBound      = 16 << 20  // the state file of a folder with one session
	noteQueueBytes      = 8 << 20   // notifications queued for one connection
	replyQueueBytes     = 16 << 20  // everything queued for one connection
)

// largestList is a list of 200 items just under maxListBytes as JSON:
// titles of 420 three-byte characters (within the 500-character limit).
func largestList(tag string) []item {
	out := make([]item, 200)
	for i := range out {
		out[i] = item{Title: tag + strings.Repeat("日", 420), Status: "pending"}
	}
	return out
}

// historyEvent is an agentd.history event as these tests read it.
type historyEvent struct {
	Seq      uint64          `json:"seq"`
	Revision uint64          `json:"revision"`
	Kind     string          `json:"kind"`
	Actor    string          `json:"actor"`
	Reason   string          `json:"reason"`
	Before   json.RawMessage `json:"before"`
	Payload  json.RawMessage `json:"payload"`
}

// readHistory pages through a session's whole history with `before`,
// checking that each reply holds at most 1 MiB of events (or a single
// event) and says `more` exactly when older events follow. It returns the
// events, newest first, and the bytes they took in the replies.
func readHistory(t testing.TB, p *client, session string) (events []historyEvent, size int) {
	t.Helper()
	var before uint64
	for {
		args := map[string]any{"session": session, "limit": 20_000}
		if before > 0 {
			args["before"] = before
		}
		m, err := p.Request("workspace/executeCommand", map[string]any{"command": "agentd.history", "arguments": []any{args}})
		if err != nil || m.Error != nil {
			t.Fatalf("agentd.history before %d: %v %v", before, err, m.Error)
		}
		var page struct {
			Events []json.RawMessage `json:"events"`
			More   *bool             `json:"more"`
		}
		if err := json.Unmarshal(m.Result, &page); err != nil || page.More == nil {
			t.Fatalf("agentd.history reply %.200s: %v (want events and more)", m.Result, err)
		}
		pageBytes := 0
		for _, raw := range page.Events {
			pageBytes += len(raw)
			var ev historyEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatal(err)
			}
			events = append(events, ev)
		}
		size += pageBytes
		if pageBytes > maxHistoryPageBytes && len(page.Events) > 1 {
			t.Errorf("an agentd.history reply holds %d events of %d bytes, over %d", len(page.Events), pageBytes, maxHistoryPageBytes)
		}
		if len(m.Result) > maxHistoryPageBytes+64<<10 && len(page.Events) > 1 {
			t.Errorf("an agentd.history reply of %d bytes", len(m.Result))
		}
		if !*page.More {
			return events, size
		}
		if len(page.Events) == 0 {
			t.Fatal("agentd.history: an empty page says more")
		}
		before = events[len(events)-1].Seq
	}
}

// checkNewestHistory checks that events (newest first) are the newest
// events of a session at revision rev: contiguous seqs ending at rev.
func checkNewestHistory(t testing.TB, events []historyEvent, rev uint64) {
	t.Helper()
	for i, ev := range events {
		if ev.Seq != rev-uint64(i) {
			t.Fatalf("history event %d has seq %d, want %d (contiguous, newest first, from revision %d)", i, ev.Seq, rev-uint64(i), rev)
		}
	}
}

// stateFileSize is the size of the env's one state file.
func stateFileSize(t testing.TB, e *env) int64 {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(e.stateDir, "workspaces", "*", "state.db"))
	if len(files) != 1 {
		t.Fatalf("state files %v", files)
	}
	fi, err := os.Stat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestStateFileBoundEndToEnd: writes of the largest lists (from a panel and
// from the model) keep a session's history within 4 MiB and the state file
// within 16 MiB; agentd.history answers at most 1 MiB of events per reply,
// with `more` and `before` to page through all that is kept.
func TestStateFileBoundEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes 80 lists of 260 KB")
	}
	e := newEnv(t)
	e.stateDir = fastStateDir(t)
	startDaemon(t, e, agentdBin)
	w := dialSocket(t, e.socketPath(), lsptest.Options{Name: "writer", OnBody: func(body []byte) bool { _, _, ok := todoChangedFast(body); return ok }})
	w.InitializeRoot(e.ws, nil)
	const writes = 80
	for i := range writes {
		list := largestList(fmt.Sprint(i))
		if i%2 == 0 {
			w.MustExec("agentd.todo.set", map[string]any{"items": list}, nil)
			continue
		}
		var res toolResult
		w.MustExec("agentd.callTool", map[string]any{"name": "TodoList", "input": map[string]any{"todos": list}}, &res)
		if res.IsError {
			t.Fatalf("write %d refused: %s", i, res.Output)
		}
	}
	size := stateFileSize(t, e)
	t.Logf("state file after %d writes of %d-byte lists: %d bytes", writes, len(mustJSON(largestList("0"))), size)
	if size > stateFileBound {
		t.Errorf("the state file has %d bytes after %d writes, over the bound of %d", size, writes, stateFileBound)
	}

	p := dialSocket(t, e.socketPath(), lsptest.Options{Name: "reader"})
	p.InitializeRoot(e.ws, nil)
	events, held := readHistory(t, p, "")
	checkNewestHistory(t, events, writes)
	// Each event holds its list and the list before it (docs/runtime.md §6).
	if len(events) < 7 || held > maxHistoryBytes {
		t.Errorf("history keeps %d events of %d bytes; want at least 7 of the largest, within %d bytes", len(events), held, maxHistoryBytes)
	}
	if st := p.stateIn(""); st.Revision != writes || len(st.Todos.Items) != 200 {
		t.Errorf("state at revision %d with %d items, want %d and 200", st.Revision, len(st.Todos.Items), writes)
	}
}

// TestByteLimitsRefused: input over a byte limit is refused with a code and
// a message naming the limit and the size, and nothing is stored.
func TestByteLimitsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.tool("TodoList", map[string]any{"todos": []item{{"keep me", "pending"}}})
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it"}, nil)
	before := c.state()

	over := make([]item, 200) // 200 titles of 500 characters, 306,401 bytes as JSON
	for i := range over {
		over[i] = item{strings.Repeat("日", 500), "pending"}
	}
	res := c.tool("TodoList", map[string]any{"todos": over})
	if !res.IsError || res.ErrorCode != "todo.invalid" || !strings.Contains(res.Output, "306401 bytes as JSON; at most 262144") {
		t.Errorf("TodoList over 256 KiB: %+v, want todo.invalid naming the size and the limit", res)
	}
	err := c.Exec("agentd.todo.set", map[string]any{"items": over}, nil)
	var re *lsptest.Error
	if !errors.As(err, &re) || re.Code != -32803 || !strings.Contains(re.Message, "at most 262144") || string(re.DataField("code")) != `"todo.invalid"` {
		t.Errorf("agentd.todo.set over 256 KiB: %v, want -32803 todo.invalid naming the limit", err)
	}
	err = c.Exec("agentd.goal.pause", map[string]any{"reason": strings.Repeat("r", 501)}, nil)
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "501 characters long; at most 500") {
		t.Errorf("agentd.goal.pause with a 501-character reason: %v, want -32602 naming the limit", err)
	}
	err = c.Exec("agentd.turn.begin", map[string]any{"turnId": strings.Repeat("t", 257), "origin": "user"}, nil)
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "257 bytes long; at most 256") {
		t.Errorf("agentd.turn.begin with a 257-byte turnId: %v, want -32602 naming the limit", err)
	}
	after := c.state()
	if after.Revision != before.Revision || len(after.Todos.Items) != 1 || !strings.Contains(string(after.Goal), `"status":"active"`) {
		t.Errorf("state after the refusals: revision %d (was %d), %d items, goal %s", after.Revision, before.Revision, len(after.Todos.Items), after.Goal)
	}
}

// stuckConn opens a raw connection to the daemon that initializes with the
// env's folder, reads the initialize response and then reads nothing until
// the test reads from the returned reader.
func stuckConn(t *testing.T, e *env) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("unix", e.socketPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":` + strconv.Quote(fileURI(e.ws)) + `,"capabilities":{}}}`
	initd := `{"jsonrpc":"2.0","method":"initialized","params":{}}`
	fmt.Fprintf(conn, "Content-Length: %d\r\n\r\n%sContent-Length: %d\r\n\r\n%s", len(init), init, len(initd), initd)
	r := bufio.NewReaderSize(conn, 64<<10)
	if _, err := lsptest.ReadFrame(r); err != nil {
		t.Fatal(err)
	}
	return conn, r
}

// TestStuckClientQueueBounded: what the daemon holds for a client that has
// stopped reading is bounded in bytes, not only in messages: while other
// clients write 16 MiB of the largest lists, the stuck client is queued at
// most 8 MiB of notifications (plus what the socket buffers). When it reads
// again it finds a revision gap, and its next read of the state has the
// last write.
func TestStuckClientQueueBounded(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes 64 lists of 260 KB")
	}
	e := newEnv(t)
	e.stateDir = fastStateDir(t)
	startDaemon(t, e, agentdBin)
	stuck, r := stuckConn(t, e)

	w := dialSocket(t, e.socketPath(), lsptest.Options{Name: "writer", OnBody: func(body []byte) bool { _, _, ok := todoChangedFast(body); return ok }})
	w.InitializeRoot(e.ws, nil)
	list := largestList("w")
	const writes = 64 // 64 notifications of about 260 KB to the stuck client
	for i := range writes {
		list[0].Title = fmt.Sprintf("write %d", i)
		w.MustExec("agentd.todo.set", map[string]any{"items": list}, nil)
	}

	// The reply to this request is queued behind every notification kept.
	req := `{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"agentd.state"}}`
	fmt.Fprintf(stuck, "Content-Length: %d\r\n\r\n%s", len(req), req)
	stuck.SetReadDeadline(time.Now().Add(waitLimit))
	var noteBytes int
	var revs []uint64
	for {
		body, err := lsptest.ReadFrame(r)
		if err != nil {
			t.Fatalf("reading what the daemon queued: %v", err)
		}
		if _, rev, ok := todoChangedFast(body); ok {
			noteBytes += len(body)
			revs = append(revs, rev)
			continue
		}
		var m lsptest.Message
		if json.Unmarshal(body, &m) == nil && string(m.ID) == "2" {
			var st relState
			if err := json.Unmarshal(m.Result, &st); err != nil || st.Revision != writes {
				t.Errorf("agentd.state after reading again: %s %v, want revision %d", m.Result, err, writes)
			}
			break
		}
	}
	t.Logf("the stuck client received %d notifications of %d bytes (revisions %v)", len(revs), noteBytes, revs)
	if noteBytes > noteQueueBytes+1<<20 {
		t.Errorf("the daemon queued %d bytes of notifications for a client that read nothing, over %d (and 1 MiB of socket buffers)", noteBytes, noteQueueBytes)
	}
	gap := len(revs) == 0 || revs[len(revs)-1] != writes
	for i := 1; i < len(revs); i++ {
		gap = gap || revs[i] != revs[i-1]+1
	}
	if !gap {
		t.Errorf("revisions %v have no gap: nothing was dropped", revs)
	}
}

// TestStuckClientRepliesCloseConnection: a client that sends requests and
// reads none of their replies is disconnected once its replies would take
// more than 16 MiB; the daemon logs why and serves the others on. The
// client finds at most those 16 MiB (plus what the socket buffered: up to
// two replies of 1 MiB), then the end of the connection.
func TestStuckClientRepliesCloseConnection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.stateDir = fastStateDir(t)
	d := startDaemon(t, e, agentdBin)
	w := dialSocket(t, e.socketPath(), lsptest.Options{Name: "writer", OnBody: func(body []byte) bool { _, _, ok := todoChangedFast(body); return ok }})
	w.InitializeRoot(e.ws, nil)
	for i := range 6 { // a history of 6 × 260 KB: each history reply takes 1 MiB
		w.MustExec("agentd.todo.set", map[string]any{"items": largestList(fmt.Sprint(i))}, nil)
	}

	stuck, r := stuckConn(t, e)
	const requests = 40 // 40 MiB of replies
	var sending sync.WaitGroup
	sending.Go(func() {
		for i := range requests {
			req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"workspace/executeCommand","params":{"command":"agentd.history","arguments":[{"limit":50}]}}`, 10+i)
			if _, err := fmt.Fprintf(stuck, "Content-Length: %d\r\n\r\n%s", len(req), req); err != nil {
				return // closed by the daemon
			}
		}
	})
	// Wait until the daemon says it closed the connection, reading nothing.
	for deadline := time.Now().Add(waitLimit); !strings.Contains(d.Stderr.String(), "the peer is not reading; closing the connection"); {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not close a connection with %d MiB of unread replies; stderr:\n%s", requests, d.Stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	stuck.SetReadDeadline(time.Now().Add(waitLimit))
	received := 0
	var err error
	for err == nil {
		var body []byte
		if body, err = lsptest.ReadFrame(r); err == nil {
			received += len(body)
		}
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !isConnReset(err) {
		t.Errorf("after the replies: %v, want the end of the connection", err)
	}
	t.Logf("the stuck client received %d bytes of replies, then %v", received, err)
	if received > replyQueueBytes+2<<20 {
		t.Errorf("the stuck client received %d bytes of replies, over %d (and 2 MiB of socket buffers)", received, replyQueueBytes)
	}
	sending.Wait()
	if st := w.stateIn(""); st.Revision != 6 {
		t.Errorf("the other client reads revision %d, want 6", st.Revision)
	}
}

// isConnReset says whether err is the peer's reset of a connection.
func isConnReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}
