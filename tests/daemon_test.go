package tests

// End-to-end tests of the shared daemon (docs/protocol.md §1): `agentd serve
// --listen=unix:PATH`, the stdio forwarder `agentd --remote=auto`, and the
// shell commands going through it. Every env has its own XDG_RUNTIME_DIR,
// so each test has its own auto socket and daemon; the daemons a test
// started are stopped when it ends.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/lsptest"
)

// forwardedTests marks the tests TestForwarded runs through the daemon:
// their env's start() runs `agentd --remote=auto` instead of `agentd`.
var forwardedTests sync.Map // *testing.T → struct{}

func forwarded(t testing.TB) bool {
	_, ok := forwardedTests.Load(t)
	return ok
}

// useDaemon makes start() run forwarders, and stops the env's daemon at the
// end of the test (after the forwarders, whose cleanups run first),
// checking that there was one.
func (e *env) useDaemon() {
	e.remote = true
	e.t.Cleanup(func() {
		if len(e.daemonPids()) == 0 {
			e.t.Errorf("no shared daemon served %s: the test did not run through one", e.socketPath())
		}
		e.stopDaemons()
	})
}

// TestForwarded runs a selection of the core end-to-end tests through
// `agentd --remote=auto` and the shared daemon it starts.
func TestForwarded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"TodoListModes", TestTodoListModes},
		{"TodoSetCompareAndSet", TestTodoSetCompareAndSet},
		{"TodoChangedNotification", TestTodoChangedNotification},
		{"LifecycleGate", TestLifecycleGate},
		{"ExitWithoutShutdown", TestExitWithoutShutdown},
		{"EndOfInputReleasesState", TestEndOfInputReleasesState},
		{"ParentDeathEndsProcess", TestParentDeathEndsProcess},
		{"MalformedBodyAndHeaderCase", TestMalformedBodyAndHeaderCase},
		{"UnknownMethods", TestUnknownMethods},
		{"CancelRequestNumericID", TestCancelRequestNumericID},
		{"CancelRequestStringID", TestCancelRequestStringID},
		{"SlowRequestDoesNotDelayQuickOne", TestSlowRequestDoesNotDelayQuickOne},
		{"GoalToolsEndToEnd", TestGoalToolsEndToEnd},
		{"LoopGoalRunsToTurnBudget", TestLoopGoalRunsToTurnBudget},
		{"LoopDisconnectMidTurnPauses", TestLoopDisconnectMidTurnPauses},
		{"PipelinedWritesInOrder", TestPipelinedWritesInOrder},
		{"PipelinedTurnsAllCounted", TestPipelinedTurnsAllCounted},
		{"AwaitChangeAlongsideOrderedWrites", TestAwaitChangeAlongsideOrderedWrites},
		{"WaitOnOneSessionDoesNotHoldAnother", TestWaitOnOneSessionDoesNotHoldAnother},
		{"SlowFolderDoesNotHoldAnother", TestSlowFolderDoesNotHoldAnother},
		{"CancelQueuedRequest", TestCancelQueuedRequest},
		{"ShutdownAnswersEarlierRequests", TestShutdownAnswersEarlierRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forwardedTests.Store(t, struct{}{})
			defer forwardedTests.Delete(t)
			tc.run(t)
		})
	}
}

// socketPath is the env's auto socket.
func (e *env) socketPath() string { return filepath.Join(e.runDir, "agentd", "daemon.sock") }

// forwarder starts `agentd --remote=auto` and connects a client to it.
func (e *env) forwarder() (*proc, *client) {
	e.t.Helper()
	e.stopDaemonsAtEnd()
	p := e.start("--remote=auto")
	return p, p.connect()
}

// daemonPids lists the live processes serving socket (zombies excluded).
func daemonPids(socket string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte("\x00--listen=unix:"+socket+"\x00")) || !alive(pid) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}

func (e *env) daemonPids() []int { return daemonPids(e.socketPath()) }

// oneDaemon returns the pid of the env's one daemon, or fails.
func (e *env) oneDaemon() int {
	e.t.Helper()
	pids := e.daemonPids()
	if len(pids) != 1 {
		e.t.Fatalf("%d daemons serve %s (%v), want 1", len(pids), e.socketPath(), pids)
	}
	return pids[0]
}

// stopDaemonsAtEnd stops the env's daemons at the end of the test, after
// every process started so far or later has been closed: it is registered
// once, before the first client that may start a daemon (cleanups run last
// first), so that no client still open starts another.
func (e *env) stopDaemonsAtEnd() {
	if !e.stopsDaemons {
		e.stopsDaemons = true
		e.t.Cleanup(e.stopDaemons)
	}
}

// stopDaemons ends the env's daemons: SIGTERM, then SIGKILL after 5 s.
func (e *env) stopDaemons() {
	for _, pid := range e.daemonPids() {
		kill(pid, syscall.SIGTERM)
		if !waitGone(pid, 5*time.Second) {
			kill(pid, syscall.SIGKILL)
			waitGone(pid, 5*time.Second)
		}
	}
	if e.t.Failed() {
		if log, err := os.ReadFile(filepath.Join(e.runDir, "agentd", "daemon.log")); err == nil {
			e.t.Logf("daemon.log:\n%s", log)
		}
	}
}

// waitGone polls until pid no longer runs.
func waitGone(pid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for alive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// waitFor polls cond until it holds, or fails the test after waitLimit.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// todoNote is the params of agentd/todoChanged.
type todoNote struct {
	Workspace string
	Session   string
	Revision  uint64
	Items     []item
	Actor     string
}

func (c *client) todoNotes() []todoNote {
	var out []todoNote
	for _, raw := range c.NotesOf("agentd/todoChanged") {
		var n todoNote
		json.Unmarshal(raw, &n)
		out = append(out, n)
	}
	return out
}

// awaitTodo waits for an agentd/todoChanged of folder with a first item
// titled title.
func (c *client) awaitTodo(folder, title string) todoNote {
	c.T.Helper()
	var n todoNote
	json.Unmarshal(c.Await("agentd/todoChanged", func(raw json.RawMessage) bool {
		var p todoNote
		return json.Unmarshal(raw, &p) == nil && p.Workspace == fileURI(folder) && len(p.Items) > 0 && p.Items[0].Title == title
	}), &n)
	return n
}

// writeIn replaces the todo list of folder (as the model) with one item.
func (c *client) writeIn(folder, title string) {
	c.T.Helper()
	var res toolResult
	c.MustExec("agentd.callTool", map[string]any{"name": "TodoList", "workspace": folder,
		"input": map[string]any{"todos": []item{{title, "pending"}}}}, &res)
	if res.IsError {
		c.T.Fatalf("TodoList write in %s: %+v", folder, res)
	}
}

// notesFor returns the todoChanged notifications c got about folder.
func (c *client) notesFor(folder string) []todoNote {
	var out []todoNote
	for _, n := range c.todoNotes() {
		if n.Workspace == fileURI(folder) {
			out = append(out, n)
		}
	}
	return out
}

// TestDaemonTwoClientsOneWorkspace: two editors, each through its own
// forwarder, share one daemon: a write on one reaches the other, both read
// the same revision, and a client of another folder is told nothing.
func TestDaemonTwoClientsOneWorkspace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := filepath.Join(filepath.Dir(e.ws), "other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	_, a := e.forwarder()
	a.Initialize(nil, e.ws)
	_, b := e.forwarder()
	b.Initialize(nil, e.ws)
	_, c := e.forwarder()
	c.Initialize(nil, other)
	e.oneDaemon()

	a.tool("TodoList", map[string]any{"todos": []item{{"from a", "in_progress"}}})
	if n := b.awaitTodo(e.ws, "from a"); n.Revision != 1 || n.Actor != "model" || n.Session != "default" {
		t.Fatalf("b got %+v, want revision 1 by the model", n)
	}
	var sb state
	b.MustExec("agentd.todo.set", map[string]any{"items": []item{{"from a", "done"}}, "expectedRevision": 1}, &sb)
	if n := a.awaitTodo(e.ws, "from a"); n.Revision != 1 {
		t.Fatalf("a's first todoChanged = %+v", n)
	}
	a.Await("agentd/todoChanged", revisionAtLeast(2))
	if sa := a.state(); sa.Revision != sb.Revision || sa.Revision != 2 || sa.Todos.Items[0].Status != "done" {
		t.Fatalf("a reads revision %d %+v, b wrote revision %d; want both 2", sa.Revision, sa.Todos, sb.Revision)
	}
	// b's own write is notified to b too, possibly after its answer
	// (docs/protocol.md §2.3: the answer may come first).
	b.Await("agentd/todoChanged", revisionAtLeast(2))
	var revs []uint64
	for _, n := range b.todoNotes() {
		revs = append(revs, n.Revision)
	}
	if len(revs) != 2 || revs[0] != 1 || revs[1] != 2 {
		t.Errorf("b's todoChanged revisions = %v, want [1 2] in order", revs)
	}
	// c's own write is fanned out after a's and b's: had c been sent
	// theirs, they would have come first.
	c.tool("TodoList", map[string]any{"todos": []item{{"mine", "pending"}}})
	c.awaitTodo(other, "mine")
	if got := c.todoNotes(); len(got) != 1 {
		t.Fatalf("c (another folder) got %+v, want its own change only", got)
	}
	if got := a.notesFor(other); len(got) != 0 {
		t.Fatalf("a got changes of a folder it has not open: %+v", got)
	}
}

// TestDaemonIdleTimeout: a daemon with no client exits after
// --listen.timeout and removes its socket.
func TestDaemonIdleTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sock := e.socketPath()
	p := e.start("serve", "--listen=unix:"+sock, "--listen.timeout=1s")
	waitFor(t, "the daemon's socket", func() bool {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	c := connectSocket(t, sock)
	c.Initialize(nil, e.ws)
	c.tool("TodoList", map[string]any{"todos": []item{{"kept", "pending"}}})
	c.Release()
	if code := p.waitExit(); code != 0 {
		t.Fatalf("daemon exit code %d, want 0; stderr:\n%s", code, p.Stderr.String())
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket still there after the idle exit: %v", err)
	}
	if !strings.Contains(p.Stderr.String(), "no connection") {
		t.Errorf("daemon log does not say why it stopped:\n%s", p.Stderr.String())
	}
	out, _, code := e.cli("state", "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "[pending] kept") {
		t.Fatalf("state after the daemon exited: code %d, %q", code, out)
	}
}

// TestDaemonClientGoneWithMessagesUnread: a client that closes its socket
// before reading all the daemon sent it (agentd hook after its answer, when
// a notification follows, docs/hooks.md) makes the daemon's next read fail
// with ECONNRESET; that is a client gone, logged at debug level, not a
// warning, and the daemon goes on serving.
func TestDaemonClientGoneWithMessagesUnread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sock := e.socketPath()
	p := e.start("serve", "--listen=unix:"+sock, "--listen.timeout=0", "--log-level=debug")
	t.Cleanup(func() { p.Cmd.Process.Signal(syscall.SIGTERM); p.waitExit() })
	var conn net.Conn
	waitFor(t, "the daemon's socket", func() bool {
		var err error
		conn, err = net.Dial("unix", sock)
		return err == nil
	})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`
	fmt.Fprintf(conn, "Content-Length: %d\r\n\r\n%s", len(init), init)
	conn.SetReadDeadline(time.Now().Add(waitLimit))
	if _, err := conn.Read(make([]byte, 1)); err != nil { // the answer has come; the rest of it stays unread
		t.Fatalf("reading the start of the initialize answer: %v", err)
	}
	conn.Close()
	waitFor(t, "the daemon to log the connection's end", func() bool {
		return strings.Contains(p.Stderr.String(), "connection ended")
	})
	for _, line := range strings.Split(p.Stderr.String(), "\n") {
		if strings.Contains(line, "connection ended") && !strings.Contains(line, "level=DEBUG") {
			t.Errorf("daemon log: %s\nwant the client's end at debug level", line)
		}
	}
	c := connectSocket(t, sock)
	c.Initialize(nil, e.ws)
	c.tool("TodoList", map[string]any{"todos": []item{{"still served", "pending"}}})
}

// TestDaemonRacingForwardersShareOne: forwarders started at the same
// moment end with one daemon, and see each other's writes.
func TestDaemonRacingForwardersShareOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.t.Cleanup(e.stopDaemons)
	const n = 4
	procs := make([]*proc, n)
	var wg sync.WaitGroup
	for i := range procs { // as close to the same moment as exec allows
		cmd := e.command("--remote=auto")
		wg.Go(func() {
			lp, err := lsptest.Start(cmd)
			if err != nil {
				t.Error(err)
				return
			}
			procs[i] = &proc{Process: lp, t: t}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.Stdin.Close()
			<-p.Exited()
			if t.Failed() {
				t.Logf("forwarder stderr: %s", p.Stderr.String())
			}
		}
	})
	clients := make([]*client, n)
	for i, p := range procs {
		clients[i] = p.connect()
	}
	for _, c := range clients {
		wg.Go(func() { c.Initialize(nil, e.ws) })
	}
	wg.Wait()
	e.oneDaemon()
	clients[0].tool("TodoList", map[string]any{"todos": []item{{"shared", "pending"}}})
	for _, c := range clients[1:] {
		c.awaitTodo(e.ws, "shared")
	}
}

// TestDaemonKilled: when the daemon dies, its forwarders exit non-zero
// saying so; a new forwarder starts a fresh daemon that has every
// acknowledged write.
func TestDaemonKilled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pa, a := e.forwarder()
	a.Initialize(nil, e.ws)
	pb, b := e.forwarder()
	b.Initialize(nil, e.ws)
	a.tool("TodoList", map[string]any{"todos": []item{{"acknowledged", "in_progress"}}})
	b.MustExec("agentd.todo.set", map[string]any{"items": []item{{"acknowledged", "in_progress"}, {"second", "pending"}}}, nil)
	old := e.oneDaemon()
	if err := kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*proc{pa, pb} {
		if code := p.waitExit(); code == 0 {
			t.Errorf("forwarder exit code 0 after the daemon died, want non-zero")
		}
		if msg := p.Stderr.String(); !strings.Contains(msg, "agentd: lost the shared daemon at "+e.socketPath()) {
			t.Errorf("forwarder stderr = %q, want it to say it lost the shared daemon at %s", msg, e.socketPath())
		}
	}
	waitGone(old, waitLimit)
	_, c := e.forwarder()
	c.Initialize(nil, e.ws)
	if pid := e.oneDaemon(); pid == old {
		t.Fatalf("the new forwarder uses pid %d, the killed daemon", pid)
	}
	st := c.state()
	if st.Revision != 2 || len(st.Todos.Items) != 2 || st.Todos.Items[1].Title != "second" {
		t.Fatalf("state after the restart = %+v, want both acknowledged writes (revision 2)", st)
	}
}

// TestDaemonShellCommands: `agentd tool`, `agentd state` and `agentd goal`
// go through a running daemon: its clients see their changes, refusals keep
// their exit codes.
func TestDaemonShellCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, a := e.forwarder()
	a.Initialize(nil, e.ws)

	out, errOut, code := e.cli("tool", "TodoList", `{"todos":[{"title":"from shell","status":"in_progress"}]}`, "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "[in_progress] from shell") {
		t.Fatalf("agentd tool: code %d out %q err %q", code, out, errOut)
	}
	if n := a.awaitTodo(e.ws, "from shell"); n.Revision != 1 || n.Actor != "model" {
		t.Fatalf("the daemon's client got %+v, want revision 1 by the model", n)
	}
	// A refusal: stdout is the tool's output, as documented; stderr names
	// the folder and says what failed, for a person at a shell.
	out, errOut, code = e.cli("tool", "TodoList", `{"todos":[{"title":"x","status":"completed"}]}`, "--workspace", e.ws)
	if code != 1 || !strings.Contains(out, `"completed"`) || strings.Contains(out, "agentd") {
		t.Fatalf("agentd tool with a bad status: code %d out %q, want 1 and the tool's output alone", code, out)
	}
	if want := "agentd: workspace " + e.ws + "\nagentd tool: TodoList answered an error: " + strings.TrimSpace(out) + "\n"; errOut != want {
		t.Fatalf("agentd tool with a bad status: stderr %q, want %q", errOut, want)
	}
	out, _, code = e.cli("state", "--json", "--workspace", e.ws)
	var st state
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Revision != 1 || st.Todos.Items[0].Title != "from shell" {
		t.Fatalf("agentd state --json: code %d out %q", code, out)
	}
	out, _, code = e.cli("goal", "create", "ship it", "--workspace", e.ws, "--session", "other")
	if code != 0 {
		t.Fatalf("agentd goal create: code %d out %q", code, out)
	}
	_, errOut, code = e.cli("goal", "create", "again", "--workspace", e.ws, "--session", "other")
	if code != 1 || !strings.Contains(errOut, "already") {
		t.Fatalf("second agentd goal create: code %d err %q, want 1 and the daemon's refusal", code, errOut)
	}
	a.Await("agentd/goalChanged", func(raw json.RawMessage) bool {
		var p struct{ Session string }
		return json.Unmarshal(raw, &p) == nil && p.Session == "other"
	})
	if _, _, code := e.cli("goal", "status", "--exit-code", "--workspace", e.ws, "--session", "other"); code != 2 {
		t.Fatalf("agentd goal status --exit-code: %d, want 2 (active)", code)
	}
}

// TestDaemonLocksOutPlainStdio: a plain `agentd` on a folder the daemon
// holds answers workspace.locked within about 2 s, naming the daemon's pid
// and --remote=auto, and tells the user after initialized.
func TestDaemonLocksOutPlainStdio(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, a := e.forwarder()
	a.Initialize(nil, e.ws)
	pid := e.oneDaemon()

	c := e.start().connect()
	start := time.Now()
	c.Initialize(nil, e.ws)
	msg := string(c.Await("window/showMessage", nil))
	for _, want := range []string{"pid " + strconv.Itoa(pid), "--remote=auto"} {
		if !strings.Contains(msg, want) {
			t.Errorf("showMessage %s does not say %q", msg, want)
		}
	}
	before := time.Now()
	err := c.Exec("agentd.state", nil, nil)
	took := time.Since(before)
	re, ok := err.(*lsptest.Error)
	if !ok || re.Code != -32803 || string(re.DataField("code")) != `"workspace.locked"` || !strings.Contains(re.Message, "pid "+strconv.Itoa(pid)) || !strings.Contains(re.Message, "--remote=auto") {
		t.Fatalf("agentd.state on a folder the daemon holds: %v, want -32803 workspace.locked naming pid %d and --remote=auto", err, pid)
	}
	if took > 4*time.Second {
		t.Errorf("workspace.locked took %v (initialize and showMessage %v), want about 1 s", took, before.Sub(start))
	}
}

// TestDaemonMultiRoot: folders of one connection, the workspace argument,
// folder changes, and two connections whose folders overlap: each change
// goes to the connections that have its folder open, and only to them.
func TestDaemonMultiRoot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := filepath.Dir(e.ws)
	w1, w2, w3 := filepath.Join(base, "w1"), filepath.Join(base, "w2"), filepath.Join(base, "w3")
	for _, d := range []string{w1, w2, w3} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	_, a := e.forwarder()
	a.Initialize(nil, w1, w2)
	_, b := e.forwarder()
	b.Initialize(nil, w2, w3)

	err := a.Exec("agentd.state", nil, nil)
	if re, ok := err.(*lsptest.Error); !ok || string(re.DataField("code")) != `"workspace.unknown"` || !strings.Contains(re.Message, "workspace") {
		t.Fatalf("agentd.state with two folders and no workspace argument: %v, want workspace.unknown", err)
	}
	err = a.Exec("agentd.state", map[string]any{"workspace": w3}, nil)
	if re, ok := err.(*lsptest.Error); !ok || string(re.DataField("code")) != `"workspace.unknown"` {
		t.Fatalf("agentd.state on a folder a has not open: %v, want workspace.unknown", err)
	}

	a.writeIn(w1, "a in w1")   // a only
	a.writeIn(w2, "a in w2")   // a and b
	b.writeIn(w3, "b in w3")   // b only
	b.writeIn(w2, "b in w2")   // a and b
	a.awaitTodo(w1, "a in w1") // a's own folders, by URI or path
	b.awaitTodo(w2, "a in w2") // shared
	b.awaitTodo(w2, "b in w2") // after w1's write: none of w1 came
	a.awaitTodo(w2, "b in w2") // after w3's write: none of w3 came
	if got := b.notesFor(w1); len(got) != 0 {
		t.Errorf("b got changes of w1, which it has not open: %+v", got)
	}
	if got := a.notesFor(w3); len(got) != 0 {
		t.Errorf("a got changes of w3, which it has not open: %+v", got)
	}
	var st state
	a.MustExec("agentd.state", map[string]any{"workspace": fileURI(w2)}, &st)
	if st.Workspace != fileURI(w2) || st.Revision != 2 || st.Todos.Items[0].Title != "b in w2" {
		t.Fatalf("a's state of w2 (by URI) = %+v", st)
	}
	a.MustExec("agentd.state", map[string]any{"workspace": w1}, &st)
	if st.Todos.Items[0].Title != "a in w1" {
		t.Fatalf("a's state of w1 (by path) = %+v", st)
	}

	// b drops w2 and adds w1.
	b.MustNotify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added":   []any{map[string]any{"uri": fileURI(w1), "name": "w1"}},
		"removed": []any{map[string]any{"uri": fileURI(w2), "name": "w2"}},
	}})
	b.MustExec("agentd.state", map[string]any{"workspace": w1}, nil) // handled after the change
	err = b.Exec("agentd.state", map[string]any{"workspace": w2}, nil)
	if re, ok := err.(*lsptest.Error); !ok || string(re.DataField("code")) != `"workspace.unknown"` {
		t.Fatalf("b's removed folder: %v, want workspace.unknown", err)
	}
	a.writeIn(w2, "after removal")
	a.writeIn(w1, "after add")
	b.awaitTodo(w1, "after add")
	for _, n := range b.notesFor(w2) {
		if n.Items[0].Title == "after removal" {
			t.Fatalf("b got a change of w2 after removing it: %+v", n)
		}
	}
	a.awaitTodo(w2, "after removal")
}

// TestDaemonCommandLine: flag errors of serve and --remote are clear.
func TestDaemonCommandLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--listen=tcp:1"}, 2, "unix:PATH"},
		{[]string{"serve", "--listen=unix:/x", "--remote=auto"}, 2, "cannot go with"},
		{[]string{"--remote=tcp:1"}, 2, "auto or unix:PATH"},
		{[]string{"--remote=unix:" + filepath.Join(e.runDir, "none.sock")}, 1, "agentd serve --listen=unix:"},
	} {
		_, errOut, code := e.cli(tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("agentd %v: code %d, stderr %q; want %d and %q", tt.args, code, errOut, tt.code, tt.want)
		}
	}
	// The auto socket's directory must be private.
	dir := filepath.Join(e.runDir, "agentd")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	p := e.start("--remote=auto")
	p.Stdin.Close()
	if code := p.waitExit(); code != 1 || !strings.Contains(p.Stderr.String(), "chmod 700") {
		t.Fatalf("forwarder with a 0755 socket dir: code %d, stderr %q; want 1 and a hint to chmod 700", code, p.Stderr.String())
	}
	if pids := e.daemonPids(); len(pids) != 0 {
		t.Fatalf("a daemon started on a socket dir that is not private: %v", pids)
	}
}

// TestDaemonReopenIsNoRestart: a daemon that reopens a folder its last
// client released keeps the goal active when no other process left a turn
// live there meanwhile (TestRestartDaemonReopenEndsLeftTurn is the other
// case).
func TestDaemonReopenIsNoRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := filepath.Join(filepath.Dir(e.ws), "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	_, a := e.forwarder()
	a.Initialize(nil, other) // the daemon runs, without e.ws open
	if _, errOut, code := e.cli("goal", "create", "stay active", "--workspace", e.ws); code != 0 {
		t.Fatalf("goal create through the daemon: %d %s", code, errOut)
	}
	for i := 0; i < 2; i++ {
		if _, _, code := e.cli("goal", "status", "--exit-code", "--workspace", e.ws); code != 2 {
			t.Fatalf("status after reopen %d: exit %d, want 2 (active)", i+1, code)
		}
	}
}

// runBounded runs cmd and returns its stdout, stderr, exit code and how
// long it took; after waitLimit it kills cmd and marks the test failed
// (code -1). It may run on any goroutine.
func runBounded(t *testing.T, cmd *exec.Cmd) (string, string, int, time.Duration) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Error(err)
		return "", "", -1, 0
	}
	began := time.Now()
	timer := time.AfterFunc(waitLimit, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	took := time.Since(began)
	if !timer.Stop() {
		t.Errorf("%v still ran after %v: stderr %q", cmd.Args, waitLimit, errb.String())
		return out.String(), errb.String(), -1, took
	}
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Error(err)
		code = -1
	}
	return out.String(), errb.String(), code, took
}

// TestDaemonSocketRemovedIsMadeAgain: a daemon whose socket file was
// removed under it (a cleaner of /tmp) makes it again, so that a new
// forwarder reaches the same daemon and shares its state.
func TestDaemonSocketRemovedIsMadeAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, a := e.forwarder()
	a.Initialize(nil, e.ws)
	a.tool("TodoList", map[string]any{"todos": []item{{"shared", "in_progress"}}})
	pid := e.oneDaemon()
	if err := os.Remove(e.socketPath()); err != nil {
		t.Fatal(err)
	}
	_, b := e.forwarder()
	b.Initialize(nil, e.ws)
	// Unless the socket was back already, the new forwarder found none and
	// started a daemon; that one finds the lock held and exits once the
	// socket answers again (docs/shared-daemon.md, "Troubleshooting"),
	// which may be after b reached the running daemon.
	waitFor(t, "the daemon the new forwarder started to exit", func() bool { return len(e.daemonPids()) == 1 })
	if got := e.oneDaemon(); got != pid {
		t.Fatalf("the new forwarder reached pid %d, want the running daemon %d", got, pid)
	}
	if st := b.state(); st.Revision != 1 || st.Todos.Items[0].Title != "shared" {
		t.Fatalf("the new client reads %+v, want the first client's revision 1", st)
	}
	b.tool("TodoList", map[string]any{"todos": []item{{"from b", "pending"}}})
	a.awaitTodo(e.ws, "from b")
	if fi, err := os.Lstat(e.socketPath()); err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket after it was made again: %v %v, want a socket with mode 0600", fi, err)
	}
	out, errOut, code := e.cli("state", "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "from b") {
		t.Fatalf("agentd state after the socket was made again: code %d out %q err %q", code, out, errOut)
	}
}
