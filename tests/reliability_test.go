package tests

// Reliability tests (issue 8, docs/reliability.md): crash safety under
// kill -9, hostile wire input on every transport, disk trouble (full,
// read-only, truncated state file), concurrent writers on one workspace
// through the shared daemon, and a client that stops reading. The soak
// test is in soak_test.go; the tests talk through tests/lsptest, which
// survives hostile input on its own side of the wire.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/tests/lsptest"
)

// maxMessageBytes is the documented largest message body (lsp.DefaultMaxMessageBytes).
const maxMessageBytes = 8 << 20

// testSeed returns the seed in the environment variable name, else a new
// one, and logs it so that a failure can be replayed.
func testSeed(t testing.TB, name string) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(name); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", name, s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with %s=%d)", seed, name, seed)
	return seed
}

// ---------------------------------------------------------------------------
// 1. Crash safety

// crashWrite is one write the crash test sent: its list and the session
// revision it makes when it commits.
type crashWrite struct {
	items []item
	rev   uint64
}

// TestCrashSafetyKill9 drives the real binary with a writer (TodoList writes
// and agentd.todo.set, each list different) and kills it with SIGKILL at a
// random moment, 50 times, some of them while it is still opening the store.
// After every restart: the store opened cleanly (no file moved aside, no
// recovery message); the list is the last acknowledged write or the one
// write sent after it; the revision is exactly that write's, so it never
// goes back and no acknowledged write is lost; and the newest history event
// carries the same revision (the session and its event commit together).
func TestCrashSafetyKill9(t *testing.T) {
	t.Parallel()
	const rounds = 50
	rng := rand.New(rand.NewPCG(testSeed(t, "AGENTD_CRASH_SEED"), 8))
	e := newEnv(t)

	var (
		mu        sync.Mutex
		sent      []crashWrite // every write ever sent, in order
		lastAcked = -1         // index in sent of the newest acknowledged write
		rev       uint64       // the session's revision after the newest committed write
	)
	findWrite := func(items []item) int {
		for j := len(sent) - 1; j >= 0; j-- {
			if slices.Equal(sent[j].items, items) {
				return j
			}
		}
		return -1
	}
	writes := 0
	for round := range rounds {
		pr := e.start()
		if rng.IntN(8) == 0 { // kill while it starts and opens the store
			time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
			pr.Cmd.Process.Kill()
			pr.waitExit()
			continue
		}
		c := pr.connect()
		c.InitializeRoot(e.ws, nil)
		st := c.stateIn("")

		// The store opened cleanly.
		if m, _ := filepath.Glob(filepath.Join(e.stateDir, "workspaces", "*", "*.corrupt-*")); len(m) > 0 {
			t.Fatalf("round %d: state file moved aside as corrupt: %v\nstderr:\n%s", round, m, pr.Stderr.String())
		}
		if n := c.NotesOf("window/showMessage"); len(n) > 0 {
			t.Fatalf("round %d: unexpected message to the user: %s", round, n[0])
		}

		// Every acknowledged write is there: the list is the last acknowledged
		// one or the one sent after it, at exactly its revision.
		mu.Lock()
		j := findWrite(st.Todos.Items)
		switch {
		case lastAcked < 0 && len(st.Todos.Items) == 0 && (len(sent) == 0 || st.Revision == 0):
			// nothing committed yet
		case j < 0:
			t.Fatalf("round %d: the stored list %v is none of the writes sent", round, st.Todos.Items)
		case j < lastAcked:
			t.Fatalf("round %d: lost acknowledged writes: the list is write %d, but write %d was acknowledged", round, j, lastAcked)
		case j > lastAcked+1:
			t.Fatalf("round %d: the list is write %d, but only write %d could be in flight", round, j, lastAcked+1)
		case st.Revision != sent[j].rev:
			t.Fatalf("round %d: revision %d with the list of write %d, which committed at revision %d", round, st.Revision, j, sent[j].rev)
		}
		if st.Revision < rev {
			t.Fatalf("round %d: revision went back from %d to %d", round, rev, st.Revision)
		}
		rev = st.Revision
		if j >= 0 {
			lastAcked = max(lastAcked, j) // a committed write is as good as acknowledged from now on
		}
		sent = sent[:max(0, lastAcked+1)] // forget a write that never committed
		mu.Unlock()
		if st.Todos.Revision != st.Revision {
			t.Fatalf("round %d: todos.revision %d, revision %d: only todo writes happened", round, st.Todos.Revision, st.Revision)
		}
		var hist struct {
			Events []struct{ Seq uint64 } `json:"events"`
		}
		c.MustExec("agentd.history", map[string]any{"limit": 1}, &hist)
		if st.Revision > 0 && (len(hist.Events) != 1 || hist.Events[0].Seq != st.Revision) {
			t.Fatalf("round %d: newest history event %v, want seq %d (the revision)", round, hist.Events, st.Revision)
		}

		// Write until killed.
		todosRev := st.Todos.Revision
		writerDone := make(chan struct{})
		go func() {
			defer close(writerDone)
			for k := 0; ; k++ {
				mu.Lock()
				n := len(sent)
				w := crashWrite{rev: rev + 1}
				for i := range 1 + n%13 {
					w.items = append(w.items, item{Title: fmt.Sprintf("write %d item %d x%s", n, i, strings.Repeat("x", (n*31+i*17)%300)), Status: []string{"pending", "in_progress", "done"}[i%3]})
				}
				sent = append(sent, w)
				mu.Unlock()
				var err error
				if k%2 == 0 {
					var res toolResult
					err = c.Exec("agentd.callTool", map[string]any{"name": "TodoList", "input": map[string]any{"todos": w.items}}, &res)
					if err == nil && res.IsError {
						t.Errorf("TodoList write refused: %+v", res)
						return
					}
				} else {
					var got relState
					err = c.Exec("agentd.todo.set", map[string]any{"items": w.items, "expectedRevision": todosRev}, &got)
					if err == nil && got.Revision != w.rev {
						t.Errorf("agentd.todo.set answered revision %d, want %d", got.Revision, w.rev)
						return
					}
				}
				if err != nil {
					var we *lsptest.Error
					if errors.As(err, &we) {
						t.Errorf("write %d answered an error: %v", n, err)
					}
					return // killed
				}
				mu.Lock()
				lastAcked, rev, todosRev = n, w.rev, w.rev
				writes++
				mu.Unlock()
			}
		}()
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
		pr.Cmd.Process.Kill()
		<-writerDone
		pr.waitExit()
		if t.Failed() {
			return
		}
	}
	t.Logf("%d rounds, %d acknowledged writes", rounds, writes)
	if writes < 10 {
		t.Errorf("only %d writes were acknowledged in %d rounds; the test did not exercise much", writes, rounds)
	}
}

// ---------------------------------------------------------------------------
// 3. Hostile wire input

// transport is how a hostile test reaches agentd.
type transport struct {
	name string
	// open returns a fresh, initialized connection and whether the server
	// side ends with it (stdio) or lives on (daemon).
	open func(t *testing.T) *client
	// check runs after each case: the server is still there and other
	// connections still work.
	check func(t *testing.T)
	// afterEOF checks what ending the input did to the server side.
	afterEOF func(t *testing.T, c *client)
	// stdio is the process behind the last connection opened, when there is
	// one per connection.
	stdio *proc
}

// TestHostileWireInput sends, on each transport (a stdio process, a direct
// connection to the shared daemon's socket, and the --remote=auto
// forwarder): a Content-Length that counts characters instead of bytes, ids
// beyond 32 and 64 bits, a batch, a body over the 8 MiB limit (and one of
// exactly 8 MiB), deep nesting, binary garbage, a 1 MB header line without a
// newline, and input that ends inside a message. Each gets a clear error or
// a clean close, the connection goes on where it can, the process never
// dies, and on the daemon another connection is never disturbed.
func TestHostileWireInput(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("sends tens of megabytes")
	}
	t.Run("stdio", func(t *testing.T) {
		e := newEnv(t)
		tr := &transport{name: "stdio"}
		tr.open = func(t *testing.T) *client {
			tr.stdio = e.start()
			c := tr.stdio.connectWith(hostile)
			c.InitializeRoot(e.ws, nil)
			return c
		}
		tr.check = func(t *testing.T) {}
		tr.afterEOF = func(t *testing.T, c *client) {
			if code := tr.stdio.waitExit(); code != 1 {
				t.Errorf("exit code %d after end of input, want 1 (no shutdown came, docs/protocol.md §2)", code)
			}
			if s := tr.stdio.Stderr.String(); strings.Contains(s, "panic") || strings.Contains(s, "goroutine ") {
				t.Errorf("stderr shows a crash:\n%s", s)
			}
		}
		runHostile(t, e, tr)
	})
	for _, via := range []string{"socket", "forwarder"} {
		t.Run(via, func(t *testing.T) {
			e := newEnv(t)
			d := startDaemon(t, e, agentdBin)
			observer := dialSocket(t, e.socketPath(), lsptest.Options{Name: "observer"})
			observer.InitializeRoot(e.ws, nil)
			tr := &transport{name: via}
			tr.open = func(t *testing.T) *client {
				var c *client
				if via == "socket" {
					c = dialSocket(t, e.socketPath(), hostile)
				} else {
					tr.stdio = e.start("--remote=auto")
					c = tr.stdio.connectWith(hostile)
				}
				c.InitializeRoot(e.ws, nil)
				return c
			}
			n := 0
			tr.check = func(t *testing.T) {
				t.Helper()
				if !alive(d.pid) {
					t.Fatalf("the daemon died; stderr:\n%s", d.Stderr.String())
				}
				n++
				title := fmt.Sprintf("observer %d", n)
				observer.MustExec("agentd.todo.set", map[string]any{"session": "observer", "items": []item{{title, "pending"}}}, nil)
				observer.Await("agentd/todoChanged", func(raw json.RawMessage) bool { return strings.Contains(string(raw), title) })
			}
			tr.afterEOF = func(t *testing.T, c *client) {
				if tr.stdio != nil {
					tr.stdio.waitExit()
				}
				tr.check(t)
			}
			runHostile(t, e, tr)
			if s := d.Stderr.String(); strings.Contains(s, "panic") {
				t.Errorf("daemon stderr shows a panic:\n%s", s)
			}
		})
	}
}

// hostile are the options of a client that sends hostile input: the
// answers carry ids go.lsp.dev/jsonrpc2 cannot represent (null, beyond 32
// bits), so that check is off.
var hostile = lsptest.Options{Name: "hostile", Lenient: true}

// runHostile runs every hostile case over tr.
func runHostile(t *testing.T, e *env, tr *transport) {
	c := tr.open(t)
	good := func(t *testing.T, what string) {
		t.Helper()
		var tools struct{ Tools []any }
		if err := c.Exec("agentd.tools", nil, &tools); err != nil || len(tools.Tools) == 0 {
			t.Fatalf("after %s, a well-formed request got %v (%d tools)", what, err, len(tools.Tools))
		}
		tr.check(t)
	}
	// expectStrays checks the id-null errors a case produced: at least one
	// unless zeroOK, each with one of codes and a message containing text.
	expectStrays := func(t *testing.T, what string, zeroOK bool, text string, codes ...int64) {
		t.Helper()
		strays := c.TakeStrays()
		if len(strays) == 0 && !zeroOK {
			t.Errorf("%s: no error answered", what)
		}
		for _, m := range strays {
			if m.Error == nil || !slices.Contains(codes, m.Error.Code) || string(m.ID) != "null" || !strings.Contains(m.Error.Message, text) {
				t.Errorf("%s: answered %s %+v, want an error %v with id null saying %q", what, m.ID, m.Error, codes, text)
			}
		}
	}

	t.Run("content-length in characters", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":"chars","method":"workspace/executeCommand","params":{"command":"agentd.todo.set","arguments":[{"items":[{"title":"café crème brûlée","status":"pending"}]}]}}`
		c.Write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", utf8.RuneCountInString(body), body))
		good(t, "a body shorter than its bytes")
		expectStrays(t, "a Content-Length counting characters", false, "parse error", -32700)
		if st := c.stateIn(""); len(st.Todos.Items) != 0 {
			t.Errorf("the truncated request was applied: %v", st.Todos.Items)
		}
		// The same body with its length in bytes is a normal request.
		ch := c.Expect(`"bytes"`)
		c.SendBody(strings.Replace(body, `"chars"`, `"bytes"`, 1))
		if m, err := c.Wait(ch, "the request counted in bytes"); err != nil || m.Error != nil {
			t.Fatalf("got %v %v", m, err)
		}
		if st := c.stateIn(""); len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "café crème brûlée" {
			t.Errorf("list after the byte-counted request: %v", st.Todos.Items)
		}
	})

	t.Run("large ids", func(t *testing.T) {
		for _, id := range []string{"4294967296", "18446744073709551615", "18446744073709551616", "123456789012345678901234567890", "-9223372036854775809", "1e400", "0.5", `"` + strings.Repeat("i", 5000) + `"`} {
			ch := c.Expect(id)
			c.SendBody(`{"jsonrpc":"2.0","id":` + id + `,"method":"workspace/executeCommand","params":{"command":"agentd.tools"}}`)
			m, err := c.Wait(ch, "id "+id[:min(len(id), 40)])
			if err != nil {
				t.Fatal(err)
			}
			if m.Error != nil || m.Result == nil {
				t.Errorf("id %.40s: got %+v, want a result", id, m.Error)
			}
		}
		good(t, "large ids")
	})

	t.Run("batch", func(t *testing.T) {
		c.SendBody(`[{"jsonrpc":"2.0","id":1,"method":"workspace/executeCommand","params":{"command":"agentd.tools"}},{"jsonrpc":"2.0","method":"initialized","params":{}}]`)
		good(t, "a batch")
		expectStrays(t, "a batch", false, "batch", -32600)
	})

	t.Run("over the size limit", func(t *testing.T) {
		const size = 10 << 20
		body := `{"jsonrpc":"2.0","id":"huge","method":"workspace/executeCommand","params":{"command":"agentd.tools","pad":"` + strings.Repeat("p", size-200) + `"}}`
		body += strings.Repeat(" ", size-len(body))
		if err := c.Write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)); err != nil {
			t.Fatal(err)
		}
		good(t, "a 10 MB body")
		expectStrays(t, "a 10 MB body", false, fmt.Sprintf("exceeds the limit of %d bytes", maxMessageBytes), -32600)
	})

	t.Run("exactly the size limit", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":"limit","method":"workspace/executeCommand","params":{"command":"agentd.tools"}}`
		body += strings.Repeat(" ", maxMessageBytes-len(body))
		ch := c.Expect(`"limit"`)
		if err := c.SendBody(body); err != nil {
			t.Fatal(err)
		}
		if m, err := c.Wait(ch, "an 8 MiB request"); err != nil || m.Error != nil {
			t.Fatalf("a body of exactly %d bytes: %v %+v", maxMessageBytes, err, m)
		}
		good(t, "an 8 MiB body")
	})

	t.Run("deep nesting", func(t *testing.T) {
		// Deeper than the JSON decoder's limit: the body cannot be read, not
		// even its id.
		const depth = 200_000
		c.SendBody(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		c.SendBody(`{"jsonrpc":"2.0","id":76,"method":"workspace/executeCommand","params":{"command":"agentd.state","arguments":[` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `]}}`)
		good(t, "deep nesting")
		if strays := c.TakeStrays(); len(strays) != 2 || strays[0].Error == nil || strays[0].Error.Code != -32700 || strays[1].Error == nil || strays[1].Error.Code != -32700 {
			t.Errorf("two bodies nested beyond the decoder's depth: got %d answers (%+v), want two -32700 with id null", len(strays), strays)
		}
		// Deep, but readable: the id is answered with an argument error.
		ch := c.Expect("77")
		c.SendBody(`{"jsonrpc":"2.0","id":77,"method":"workspace/executeCommand","params":{"command":"agentd.state","arguments":[` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `]}}`)
		m, err := c.Wait(ch, "deeply nested arguments")
		if err != nil {
			t.Fatal(err)
		}
		if m.Error == nil || m.Error.Code != -32602 {
			t.Errorf("deeply nested arguments: got %+v, want -32602", m.Error)
		}
		good(t, "deeply nested arguments")
	})

	t.Run("binary garbage", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for range 5 {
			junk := make([]byte, 8<<10)
			for i := range junk {
				junk[i] = byte(rng.UintN(256))
			}
			if strings.Contains(strings.ToLower(string(junk)), "content-length") {
				continue
			}
			c.Write(string(junk))
			good(t, "binary garbage")
			expectStrays(t, "binary garbage", true, "parse error", -32700)
		}
	})

	t.Run("1 MB header line", func(t *testing.T) {
		c.Write("X-Padding: " + strings.Repeat("a", 1<<20))
		good(t, "a 1 MB header line")
		expectStrays(t, "a 1 MB header line", true, "parse error", -32700)
		c.Write(strings.Repeat("b", 1<<20) + "\r\n\r\n")
		good(t, "a 1 MB line without a colon")
		expectStrays(t, "a 1 MB line without a colon", false, "parse error", -32700)
	})

	c.Close()
	if tr.stdio != nil {
		tr.stdio.waitExit()
	}

	for _, tc := range []struct{ name, input string }{
		{"header without body then EOF", "Content-Length: 500\r\n\r\n{\"jsonrpc\":\"2.0\""},
		{"headers then EOF", "Content-Length: 50\r\nContent-Type: application/vscode-jsonrpc"},
		{"1 MB header line then EOF", "X-Padding: " + strings.Repeat("z", 1<<20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tr.open(t)
			c.Write(tc.input)
			c.Close()
			c.AwaitClosed(tc.name)
			tr.afterEOF(t, c)
		})
	}
}

// daemonProc is a shared daemon a test started itself.
type daemonProc struct {
	pid    int
	Cmd    *exec.Cmd
	Stderr *lsptest.Buffer
}

// startDaemon runs `bin serve --listen=unix:<the env's auto socket>
// --listen.timeout=0` (forwarders of the env find it) and waits until it
// answers. It is stopped with SIGTERM when the test ends.
func startDaemon(t testing.TB, e *env, bin string) *daemonProc {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--listen=unix:"+e.socketPath(), "--listen.timeout=0", "--state-dir", e.stateDir, "--log-level", "warn")
	cmd.Env = e.environ()
	d := &daemonProc{Cmd: cmd, Stderr: &lsptest.Buffer{}}
	cmd.Stderr = d.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.pid = cmd.Process.Pid
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("daemon stderr:\n%s", d.Stderr.String())
		}
	})
	deadline := time.Now().Add(waitLimit)
	for {
		if conn, err := net.Dial("unix", e.socketPath()); err == nil {
			conn.Close()
			return d
		}
		select {
		case <-exited:
			t.Fatalf("the daemon exited at start; stderr:\n%s", d.Stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not answer on %s", e.socketPath())
		}
	}
}

// ---------------------------------------------------------------------------
// 4. Disk trouble

// mountTmpfs mounts a tmpfs of size bytes on a new directory, or skips the
// test when mounting is not allowed here (not root, no CAP_SYS_ADMIN). The
// workspace tests cover commit failures without it (TestCommitFailure).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	mountTmpfsOn(t, dir, size)
	return dir
}

// mountTmpfsOn mounts a tmpfs of size bytes over the existing directory
// dir until the end of the test, or skips the test when mounting is not
// allowed here.
func mountTmpfsOn(t *testing.T, dir string, size int) {
	t.Helper()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d,mode=0700", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s)", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
}

// fillDisk writes a file in dir until the file system is full and returns
// its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			return path
		}
	}
}

func bigList(tag string, n, size int) []item {
	out := make([]item, n)
	for i := range out {
		out[i] = item{Title: fmt.Sprintf("%s %d %s", tag, i, strings.Repeat("d", size)), Status: "pending"}
	}
	return out
}

// TestDiskFull: with the state directory on a full file system, writes
// answer a JSON-RPC error that says the change was not saved and why, reads
// (agentd.state, a TodoList read, history) keep working, and nothing is
// half-written: once space is freed the state is the last acknowledged
// write, the next write works, and a restart opens the store cleanly.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.stateDir = mountTmpfs(t, 4<<20)
	pr := e.start()
	c := pr.connect()
	c.InitializeRoot(e.ws, nil)
	acked := []item{{"before the disk filled", "in_progress"}}
	c.MustExec("agentd.todo.set", map[string]any{"items": acked}, nil)
	want := c.stateIn("")

	filler := fillDisk(t, e.stateDir)
	failed := 0
	for i := range 6 {
		list := bigList(fmt.Sprintf("full %d", i), 60, 300)
		var err error
		if i%2 == 0 {
			err = c.Exec("agentd.callTool", map[string]any{"name": "TodoList", "input": map[string]any{"todos": list}}, nil)
		} else {
			err = c.Exec("agentd.todo.set", map[string]any{"items": list}, nil)
		}
		if err == nil { // bbolt found room in pages it had freed: a real, acknowledged write
			acked = list
			want = c.stateIn("")
			continue
		}
		failed++
		var we *lsptest.Error
		if !errors.As(err, &we) || !strings.Contains(we.Message, "not saved") || !strings.Contains(we.Message, "no space left on device") {
			t.Fatalf("write on a full disk: got %v, want a JSON-RPC error saying the change was not saved because no space is left", err)
		}
		// Reads keep working and show the last acknowledged state.
		if st := c.stateIn(""); !slices.Equal(st.Todos.Items, acked) || st.Revision != want.Revision {
			t.Fatalf("read after a failed write: revision %d %v, want revision %d %v", st.Revision, st.Todos.Items, want.Revision, acked)
		}
		var res toolResult
		c.MustExec("agentd.callTool", map[string]any{"name": "TodoList", "input": map[string]any{}}, &res)
		if res.IsError || !strings.Contains(res.Output, acked[0].Title) {
			t.Fatalf("TodoList read on a full disk: %+v", res)
		}
		c.MustExec("agentd.history", nil, nil)
		c.MustExec("agentd.state", map[string]any{"session": "never written"}, nil)
	}
	if failed == 0 {
		t.Fatal("no write failed on the full file system; the test did not test anything")
	}
	// The first TodoList read of a session records that the list was used
	// (docs/runtime.md §1.1). bbolt may fit a few such small records in pages it
	// freed earlier; once they are used up the record cannot be stored, and
	// the read must still answer.
	for i := range 20 {
		var res toolResult
		if err := c.Exec("agentd.callTool", map[string]any{"name": "TodoList", "session": fmt.Sprintf("fresh %d", i), "input": map[string]any{}}, &res); err != nil || res.IsError || res.Output != "Todo list is empty." {
			t.Fatalf("first TodoList read of session %d on a full disk: %v %+v, want the empty list", i, err, res)
		}
		if err := c.Exec("agentd.callTool", map[string]any{"name": "GetGoal", "session": fmt.Sprintf("goal %d", i), "input": map[string]any{}}, &res); err != nil || res.IsError || !strings.Contains(res.Output, `"goal": null`) {
			t.Fatalf("GetGoal in session %d on a full disk: %v %+v, want no goal", i, err, res)
		}
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if st := c.stateIn(""); !slices.Equal(st.Todos.Items, acked) || st.Revision != want.Revision {
		t.Fatalf("after freeing space: revision %d %v, want revision %d %v", st.Revision, st.Todos.Items, want.Revision, acked)
	}
	next := []item{{"after freeing space", "done"}}
	var st relState
	c.MustExec("agentd.todo.set", map[string]any{"items": next}, &st)
	if st.Revision != want.Revision+1 {
		t.Errorf("revision of the first write after freeing space: %d, want %d", st.Revision, want.Revision+1)
	}
	c.Close()
	pr.waitExit()

	pr = e.start()
	c = pr.connect()
	c.InitializeRoot(e.ws, nil)
	if st := c.stateIn(""); !slices.Equal(st.Todos.Items, next) || st.Revision != want.Revision+1 {
		t.Errorf("after a restart: revision %d %v, want %d %v", st.Revision, st.Todos.Items, want.Revision+1, next)
	}
	if strings.Contains(pr.Stderr.String(), "corrupt") || len(c.NotesOf("window/showMessage")) > 0 {
		t.Errorf("the store did not open cleanly after the disk was full:\n%s", pr.Stderr.String())
	}
}

// TestReadOnlyStateDir: a state directory that is read-only when agentd
// starts (a read-only bind mount; chmod does not stop root). The folder
// cannot be opened: the user is told why (window/showMessage naming the
// read-only file system), commands on it answer that error, other commands
// work, and once the directory is writable again the next command opens the
// folder with its state intact. A file system that turns read-only under a
// running agentd cannot be made here (remount refuses while bbolt holds
// the file open for writing); that case is a failed commit like a full
// disk (TestDiskFull, workspace.TestCommitFailure).
func TestReadOnlyStateDir(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.stateDir = mountTmpfs(t, 8<<20)
	before := []item{{"written before the state dir became read-only", "pending"}}
	out, errOut, code := e.cli("tool", "TodoList", mustJSON(map[string]any{"todos": before}), "--workspace", e.ws)
	if code != 0 {
		t.Fatalf("agentd tool: %d %s %s", code, out, errOut)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", e.stateDir).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v: %s", err, out)
	}
	readOnly := true
	makeWritable := func() {
		if readOnly {
			if out, err := exec.Command("mount", "-o", "remount,rw", e.stateDir).CombinedOutput(); err != nil {
				t.Fatalf("remount read-write: %v: %s", err, out)
			}
			readOnly = false
		}
	}
	t.Cleanup(makeWritable)

	pr := e.start()
	c := pr.connect()
	c.InitializeRoot(e.ws, nil)
	msg := c.Await("window/showMessage", nil)
	if !strings.Contains(string(msg), "read-only file system") {
		t.Errorf("message to the user: %s, want it to say the file system is read-only", msg)
	}
	err := c.Exec("agentd.state", nil, nil)
	var we *lsptest.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, "read-only file system") {
		t.Errorf("agentd.state on a read-only state dir: got %v, want an error naming the read-only file system", err)
	}
	c.MustExec("agentd.tools", nil, nil)

	makeWritable()
	if st := c.stateIn(""); !slices.Equal(st.Todos.Items, before) {
		t.Errorf("after the state dir became writable: %v, want %v", st.Todos.Items, before)
	}
	c.MustExec("agentd.todo.set", map[string]any{"items": []item{{"writable again", "done"}}}, nil)
}

// TestStateDirNotWritable: a state directory agentd cannot write, as
// another user's directory or a path under a regular file, for a user who
// cannot write it (agentd runs as nobody: root, which the tests run as,
// writes any directory whatever its mode). The CLI exits 1, the hook exits
// 0 with nothing on stdout (the agent goes on), and the shared daemon,
// through a forwarder, tells the editor (window/showMessage) and answers
// each command on the folder with the error, and goes on serving; every
// message names the path and the problem, and nothing hangs.
func TestStateDirNotWritable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run agentd as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	const nobody = 65534
	// A folder every user may enter: agentd and agentd-hook side by side,
	// the workspace, and each case's runtime directory (nobody's own).
	shared := t.TempDir()
	for _, d := range []string{filepath.Dir(shared), shared} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(shared, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{agentdBin, hookBin} {
		data, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		writeExecutable(t, filepath.Join(bin, filepath.Base(b)), data)
	}
	ws := filepath.Join(shared, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(shared, "a-file")
	if err := os.WriteFile(file, []byte("not a folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rootsDir := filepath.Join(shared, "roots")
	if err := os.Mkdir(rootsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name, stateDir, problem string
	}{
		{"another user's directory", rootsDir, "permission denied"},
		{"under a regular file", filepath.Join(file, "state"), "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.ws, e.stateDir = ws, tc.stateDir
			e.runDir = filepath.Join(shared, fmt.Sprintf("run%d", i))
			if err := os.Mkdir(e.runDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(e.runDir, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			e.stopDaemonsAtEnd()
			asNobody := func(ctx context.Context, program string, args ...string) *exec.Cmd {
				cmd := exec.CommandContext(ctx, setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--", filepath.Join(bin, program)}, append(args, "--state-dir", tc.stateDir)...)...)
				cmd.Env = e.environ()
				return cmd
			}
			// run runs a command as nobody; a hang is killed at waitLimit.
			run := func(stdin, program string, args ...string) (string, string, int) {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				defer cancel()
				cmd := asNobody(ctx, program, args...)
				cmd.Stdin = strings.NewReader(stdin)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				err := cmd.Run()
				var exitErr *exec.ExitError
				if ctx.Err() != nil || err != nil && !errors.As(err, &exitErr) {
					t.Fatalf("%s %q did not end by itself (%v); stderr:\n%s", program, args, err, errb.String())
				}
				return out.String(), errb.String(), cmd.ProcessState.ExitCode()
			}
			names := func(msg string) bool { return strings.Contains(msg, tc.stateDir) || strings.Contains(msg, file) }

			out, errOut, code := run("", "agentd", "goal", "create", "Ship it", "--workspace", ws)
			if code != 1 || !strings.Contains(errOut, "agentd goal create: ") || !names(errOut) || !strings.Contains(errOut, tc.problem) {
				t.Errorf("agentd goal create: exit %d, stdout %q, stderr %q; want exit 1 and the path and %q", code, out, errOut, tc.problem)
			}

			event := `{"session_id":"s1","transcript_path":"","cwd":"` + jsonText(ws) + `","hook_event_name":"UserPromptSubmit","prompt":"go"}`
			out, errOut, code = run(event, "agentd-hook", "claude", "--workspace", ws)
			cursors := filepath.Join(tc.stateDir, "hooks")
			if code != 0 || out != "" || !strings.Contains(errOut, "the hook keeps its cursor in "+cursors+", and the state directory must be writable") || !strings.Contains(errOut, tc.problem) {
				t.Errorf("agentd-hook: exit %d, stdout %q, stderr %q; want exit 0, nothing, and a line naming %s and %q", code, out, errOut, cursors, tc.problem)
			}

			p := e.run(asNobody(context.Background(), "agentd", "--remote=auto"))
			c := p.connect()
			c.InitializeRoot(ws, nil)
			if msg := string(c.Await("window/showMessage", nil)); !names(msg) || !strings.Contains(msg, tc.problem) {
				t.Errorf("message to the user: %s, want the path and %q", msg, tc.problem)
			}
			err := c.Exec("agentd.todo.set", map[string]any{"items": []item{{"a", "pending"}}}, nil)
			var we *lsptest.Error
			if !errors.As(err, &we) || !names(we.Message) || !strings.Contains(we.Message, tc.problem) {
				t.Errorf("agentd.todo.set: %v, want an error naming the path and %q", err, tc.problem)
			}
			c.MustExec("agentd.tools", nil, nil)
			if code := c.shutdown(); code != 0 {
				t.Errorf("the forwarder exited %d after shutdown, want 0", code)
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestTruncatedStateFileRecovered: a state file cut to half its size is
// moved aside and a fresh state started; the user is told with
// window/showMessage, only after initialized; the fresh state works and
// survives a restart, which tells the user nothing more.
func TestTruncatedStateFileRecovered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pr := e.start()
	c := pr.connect()
	c.InitializeRoot(e.ws, nil)
	for i := range 30 {
		c.MustExec("agentd.todo.set", map[string]any{"items": bigList(fmt.Sprint(i), 20, 200)}, nil)
	}
	c.Close()
	pr.waitExit()
	files, _ := filepath.Glob(filepath.Join(e.stateDir, "workspaces", "*", "state.db"))
	if len(files) != 1 {
		t.Fatalf("state files: %v", files)
	}
	fi, err := os.Stat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(files[0], fi.Size()/2); err != nil {
		t.Fatal(err)
	}

	pr = e.start()
	c = pr.connect()
	m, err := c.Request("initialize", map[string]any{"processId": nil, "rootUri": fileURI(e.ws), "capabilities": map[string]any{}})
	if err != nil || m.Error != nil {
		t.Fatalf("initialize: %v %+v", err, m)
	}
	// Before initialized, nothing is sent: a request answered now comes
	// after any message the server had queued.
	c.MustExec("agentd.tools", nil, nil)
	if n := c.NotesOf("window/showMessage"); len(n) > 0 {
		t.Fatalf("window/showMessage before initialized: %s", n[0])
	}
	c.SendBody(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	msg := c.Await("window/showMessage", nil)
	for _, want := range []string{"moved aside", ".corrupt-", "fresh state"} {
		if !strings.Contains(string(msg), want) {
			t.Errorf("message to the user %s does not say %q", msg, want)
		}
	}
	if m, _ := filepath.Glob(files[0] + ".corrupt-*"); len(m) != 1 {
		t.Errorf("files moved aside: %v, want one", m)
	}
	if st := c.stateIn(""); len(st.Todos.Items) != 0 || st.Revision != 0 {
		t.Errorf("state after recovery: revision %d, %d items; want a fresh state", st.Revision, len(st.Todos.Items))
	}
	fresh := []item{{"after recovery", "pending"}}
	c.MustExec("agentd.todo.set", map[string]any{"items": fresh}, nil)
	c.Close()
	pr.waitExit()

	pr = e.start()
	c = pr.connect()
	c.InitializeRoot(e.ws, nil)
	if st := c.stateIn(""); !slices.Equal(st.Todos.Items, fresh) || st.Revision != 1 {
		t.Errorf("after a restart: revision %d %v, want 1 %v", st.Revision, st.Todos.Items, fresh)
	}
	if n := c.NotesOf("window/showMessage"); len(n) > 0 {
		t.Errorf("a second message after a clean restart: %s", n[0])
	}
}

// ---------------------------------------------------------------------------
// 5. Concurrency through the shared daemon

// raceBin builds agentd with the race detector, once per test binary, for
// the tests that run the daemon under it; "" when it cannot be built here
// (no cgo): the tests then use the plain binary and say so.
var raceBin = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(agentdBin), "agentd-race") // removed with agentdBin by TestMain
	out, err := exec.Command("go", "build", "-race", "-o", bin, "../cmd/agentd").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build -race: %v: %s", err, out)
	}
	return bin, nil
})

func daemonBinary(t testing.TB) string {
	t.Helper()
	if os.Getenv("AGENTD_TEST_NO_RACE_DAEMON") != "" {
		return agentdBin
	}
	bin, err := raceBin()
	if err != nil {
		t.Logf("the daemon runs without the race detector: %v", err)
		return agentdBin
	}
	t.Logf("the daemon runs with the race detector (%s)", bin)
	return bin
}

// sharedCap is how many items the shared list keeps (the newest); each
// append drops the oldest beyond it.
const sharedCap = 10

// TestConcurrentWritersNoLostUpdate: 16 clients on one workspace through
// the shared daemon (built with -race when possible), 500 writes each: a
// third are compare-and-set appends to one shared session (agentd.todo.set
// with expectedRevision, retried on todo.conflict with the state the
// conflict carries), the others TodoList writes, some read back, in each
// client's own session. Checks: every acknowledged append is at its own revision, the
// revisions of the shared session are exactly 1..N with no gap or repeat,
// each acknowledged state is the state before plus that append (no lost
// update), the final list is the newest appends; every client got every
// agentd/todoChanged of every session, in strictly increasing revision
// order, with no gap; and the daemon reported no race.
func TestConcurrentWritersNoLostUpdate(t *testing.T) {
	t.Parallel()
	clients, perClient := 16, 500
	if testing.Short() {
		clients, perClient = 8, 100
	}
	e := newEnv(t)
	e.stateDir = fastStateDir(t)
	d := startDaemon(t, e, daemonBinary(t))

	type ack struct {
		rev   uint64
		title string
		items []item
	}
	var (
		mu      sync.Mutex
		acks    []ack
		notes   = make([]map[string][]uint64, clients)
		ownRevs = make([]uint64, clients)
	)
	peers := make([]*client, clients)
	for i := range peers {
		notes[i] = map[string][]uint64{}
		p := dialSocket(t, e.socketPath(), lsptest.Options{Name: fmt.Sprintf("client %d", i), OnBody: func(body []byte) bool {
			session, rev, ok := todoChangedFast(body)
			if ok {
				mu.Lock()
				notes[i][session] = append(notes[i][session], rev)
				mu.Unlock()
			}
			return ok
		}})
		p.InitializeRoot(e.ws, nil)
		peers[i] = p
	}

	var conflicts atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 99))
			own := fmt.Sprintf("own-%d", i)
			var cur relState
			if err := p.Exec("agentd.state", map[string]any{"session": "shared"}, &cur); err != nil {
				t.Error(err)
				return
			}
			for j := range perClient {
				if j%3 != 0 { // a TodoList write, sometimes read back, in the client's own session
					list := []item{{fmt.Sprintf("%d own %d", i, j), "in_progress"}}
					var res toolResult
					if err := p.Exec("agentd.callTool", map[string]any{"session": own, "name": "TodoList", "input": map[string]any{"todos": list}}, &res); err != nil || res.IsError {
						t.Errorf("client %d TodoList write: %v %+v", i, err, res)
						return
					}
					ownRevs[i]++
					if rng.IntN(2) == 0 {
						var got relState
						if err := p.Exec("agentd.state", map[string]any{"session": own}, &got); err != nil || !slices.Equal(got.Todos.Items, list) || got.Revision != ownRevs[i] {
							t.Errorf("client %d reads its own session: %v %+v, want revision %d %v", i, err, got, ownRevs[i], list)
							return
						}
					}
					continue
				}
				title := fmt.Sprintf("%d-%d", i, j)
				for attempt := 0; ; attempt++ {
					next := append(slices.Clone(cur.Todos.Items), item{title, "pending"})
					if len(next) > sharedCap {
						next = next[len(next)-sharedCap:]
					}
					var got relState
					err := p.Exec("agentd.todo.set", map[string]any{"session": "shared", "items": next, "expectedRevision": cur.Todos.Revision}, &got)
					var we *lsptest.Error
					if errors.As(err, &we) && we.DataCode() == "todo.conflict" {
						var data struct{ State relState }
						if json.Unmarshal(we.Data, &data) != nil || data.State.Todos.Revision <= cur.Todos.Revision {
							t.Errorf("client %d: conflict without a newer state: %s", i, we.Data)
							return
						}
						cur = data.State
						conflicts.Add(1)
						// Back off, as a client should: contention stays,
						// thrashing does not.
						time.Sleep(time.Duration(rng.IntN(1+min(attempt, 6))) * 300 * time.Microsecond)
						if attempt > 10000 {
							t.Errorf("client %d: append %s never got through", i, title)
							return
						}
						continue
					}
					if err != nil {
						t.Errorf("client %d append %s: %v", i, title, err)
						return
					}
					if !slices.Equal(got.Todos.Items, next) || got.Todos.Revision != got.Revision || got.Revision <= cur.Todos.Revision {
						t.Errorf("client %d append %s: stored %+v, want %v after revision %d", i, title, got, next, cur.Todos.Revision)
						return
					}
					mu.Lock()
					acks = append(acks, ack{got.Revision, title, got.Todos.Items})
					mu.Unlock()
					cur = got
					break
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d clients × %d writes in %v; %d compare-and-set conflicts retried", clients, perClient, time.Since(start).Round(time.Millisecond), conflicts.Load())
	if t.Failed() {
		return
	}

	// The shared session: revisions 1..N, one acknowledged append each, each
	// state the previous plus its append.
	slices.SortFunc(acks, func(a, b ack) int { return int(a.rev) - int(b.rev) })
	var list []item
	for k, a := range acks {
		if a.rev != uint64(k+1) {
			t.Fatalf("shared session: acknowledged revisions jump from %d to %d", k, a.rev)
		}
		list = append(list, item{a.title, "pending"})
		if len(list) > sharedCap {
			list = list[len(list)-sharedCap:]
		}
		if !slices.Equal(list, a.items) {
			t.Fatalf("revision %d: stored %v, want %v (an update was lost or applied twice)", a.rev, a.items, list)
		}
	}
	wantAppends := clients * ((perClient + 2) / 3)
	if len(acks) != wantAppends {
		t.Fatalf("%d appends acknowledged, want %d", len(acks), wantAppends)
	}
	final := peers[0].stateIn("shared")
	if final.Revision != uint64(len(acks)) || !slices.Equal(final.Todos.Items, list) {
		t.Fatalf("final shared state: revision %d %v; want %d %v", final.Revision, final.Todos.Items, len(acks), list)
	}

	// Notifications: every client saw every revision of every session, in
	// order. The last one may still be in flight: wait for it.
	for i := range peers {
		waitFor(t, fmt.Sprintf("client %d to get the last notification", i), func() bool {
			mu.Lock()
			defer mu.Unlock()
			n := notes[i]["shared"]
			return len(n) > 0 && n[len(n)-1] == final.Revision
		})
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range peers {
		for session, revs := range notes[i] {
			want := uint64(len(acks))
			if session != "shared" {
				k, _ := strconv.Atoi(strings.TrimPrefix(session, "own-"))
				want = ownRevs[k]
			}
			for k, r := range revs {
				if r != uint64(k+1) {
					t.Fatalf("client %d, session %s: notification %d has revision %d, want %d (out of order or missing)", i, session, k, r, k+1)
				}
			}
			if uint64(len(revs)) != want {
				t.Errorf("client %d, session %s: %d notifications, want %d", i, session, len(revs), want)
			}
		}
		if len(notes[i]) != clients+1 {
			t.Errorf("client %d got notifications of %d sessions, want %d", i, len(notes[i]), clients+1)
		}
	}
	if s := d.Stderr.String(); strings.Contains(s, "WARNING: DATA RACE") || strings.Contains(s, "panic") {
		t.Errorf("the daemon reported a race or a panic:\n%s", s)
	}
}

// todoChangedFast reads the session and revision of an agentd/todoChanged
// body without decoding it (16 clients get 128,000 of them). It relies on
// the daemon's field order: method, then params {workspace, session,
// revision, ...}; anything else is left to the full decoder.
func todoChangedFast(body []byte) (session string, rev uint64, ok bool) {
	const method, sess, revKey = `"method":"agentd/todoChanged"`, `"session":"`, `"revision":`
	if !bytes.Contains(body[:min(len(body), 64)], []byte(method)) {
		return "", 0, false
	}
	i := bytes.Index(body, []byte(sess))
	if i < 0 {
		return "", 0, false
	}
	rest := body[i+len(sess):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return "", 0, false
	}
	session, rest = string(rest[:j]), rest[j:]
	k := bytes.Index(rest, []byte(revKey))
	if k < 0 {
		return "", 0, false
	}
	digits := rest[k+len(revKey):]
	end := 0
	for end < len(digits) && '0' <= digits[end] && digits[end] <= '9' {
		end++
	}
	rev, err := strconv.ParseUint(string(digits[:end]), 10, 64)
	return session, rev, err == nil
}

// TestStuckClientDoesNotBlockOthers: a client of the shared daemon that
// opens the workspace and then never reads what the daemon sends must not
// hold up the other clients: their writes and notifications go on.
func TestStuckClientDoesNotBlockOthers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.stateDir = fastStateDir(t)
	d := startDaemon(t, e, agentdBin)

	stuck, err := net.Dial("unix", e.socketPath())
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":` + strconv.Quote(fileURI(e.ws)) + `,"capabilities":{}}}`
	initd := `{"jsonrpc":"2.0","method":"initialized","params":{}}`
	fmt.Fprintf(stuck, "Content-Length: %d\r\n\r\n%sContent-Length: %d\r\n\r\n%s", len(init), init, len(initd), initd)
	// Read the initialize response only: from now on it reads nothing.
	if _, err := lsptest.ReadFrame(bufio.NewReader(io.LimitReader(stuck, 64<<10))); err != nil {
		t.Fatal(err)
	}

	w := dialSocket(t, e.socketPath(), lsptest.Options{Name: "writer", OnNote: func(*lsptest.Message) {}})
	w.InitializeRoot(e.ws, nil)
	list := bigList("busy", 20, 30) // about 1 KB per notification
	const writes = 4600             // more than the socket buffer and the daemon's queue of 4096 messages
	start := time.Now()
	for i := range writes {
		list[0].Title = fmt.Sprintf("write %d", i)
		done := make(chan error, 1)
		go func() { done <- w.Exec("agentd.todo.set", map[string]any{"items": list}, nil) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
		case <-time.After(waitLimit): // a blocked write never completes; a loaded machine only slows it
			t.Fatalf("write %d did not complete within %v: a client that reads nothing blocks the others (daemon threads/fds/RSS: %+v)", i, waitLimit, readProcStats(t, d.pid))
		}
	}
	t.Logf("%d writes in %v with a stuck client", writes, time.Since(start).Round(time.Millisecond))
	if s := readProcStats(t, d.pid); s.RSSKiB > 512<<10 {
		t.Errorf("daemon RSS %d KiB with one stuck client", s.RSSKiB)
	}
}

// relState is the State of docs/protocol.md §3 as these tests read it.
type relState struct {
	Revision uint64 `json:"revision"`
	Todos    struct {
		Items    []item `json:"items"`
		Revision uint64 `json:"revision"`
	} `json:"todos"`
}

// stateIn is agentd.state of session ("": the default session).
func (c *client) stateIn(session string) relState {
	c.T.Helper()
	var st relState
	args := map[string]any{}
	if session != "" {
		args["session"] = session
	}
	c.MustExec("agentd.state", args, &st)
	return st
}

// procStats are what a test can see of a process from outside.
type procStats struct {
	Threads int
	FDs     int
	RSSKiB  int
	PeakKiB int // VmHWM, the most RSSKiB has been
}

func readProcStats(t testing.TB, pid int) procStats {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading /proc/%d/status: %v", pid, err)
	}
	var s procStats
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		switch k {
		case "Threads":
			s.Threads, _ = strconv.Atoi(fields[0])
		case "VmRSS":
			s.RSSKiB, _ = strconv.Atoi(fields[0])
		case "VmHWM":
			s.PeakKiB, _ = strconv.Atoi(fields[0])
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("reading /proc/%d/fd: %v", pid, err)
	}
	s.FDs = len(fds)
	return s
}

// fastStateDir is a state directory on tmpfs (/dev/shm) when there is one:
// the load tests measure agentd, not the disk's fsync latency. It falls
// back to a temporary directory.
func fastStateDir(t testing.TB) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "agentd-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}
