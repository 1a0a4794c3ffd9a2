package tests

// Resource tests (issue 8, docs/reliability.md): a soak of the shared
// daemon measured from outside through /proc, and the history bound end to
// end. AGENTD_SOAK=1 runs the long soak (100,000 commands, 1,000
// connections, several minutes); without it a short one runs (5,000
// commands, 100 connections).

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/loop"
	"github.com/agentd/agentd/tests/lsptest"
)

// TestSoak runs a mixed load on one shared daemon (long-lived clients
// calling every kind of command, TodoList writes of varying size, goal
// turns and steps) while other clients connect and disconnect (clean
// shutdown, abrupt close, or gone before initialized). It samples the
// daemon's threads, open files and anonymous memory from /proc once warmed
// up and at the end: open files must come back to the warm count, threads
// stay within a few of it, and memory stays flat (within 32 MiB or half the
// warm size). The session all writers share ends with its history within
// workspace.MaxHistory (checked when the long soak goes past the bound).
func TestSoak(t *testing.T) {
	t.Parallel()
	commands, connects := 5_000, 100
	long := os.Getenv("AGENTD_SOAK") != ""
	if long {
		commands, connects = 100_000, 1_000
	} else if testing.Short() {
		commands, connects = 1_000, 20
	}
	e := newEnv(t)
	if !long {
		e.stateDir = fastStateDir(t)
	}
	d := startDaemon(t, e, agentdBin)
	other := filepath.Join(filepath.Dir(e.ws), "other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	start := time.Now()

	const workers = 4
	var (
		done      atomic.Int64 // commands completed
		connected atomic.Int64 // connections completed
		warm      procStats
		warmOnce  sync.Once
		warmed    = make(chan struct{})
	)
	checkWarm := func() {
		if done.Load() >= int64(commands/5) && connected.Load() >= int64(connects/5) {
			warmOnce.Do(func() {
				warm = readProcStats(t, d.pid)
				warm.RSSKiB = rssAnon(t, d.pid)
				t.Logf("warm after %v: %+v (RSS = anonymous KiB)", time.Since(start).Round(time.Millisecond), warm)
				close(warmed)
			})
		}
	}

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			p := dialSocket(t, e.socketPath(), lsptest.Options{Name: fmt.Sprintf("worker %d", w), OnNote: func(*lsptest.Message) {}})
			p.InitializeRoot(e.ws, map[string]any{"session": fmt.Sprintf("w%d", w)})
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			agent := &soakAgent{h: &loop.Host{Executor: p.Conn}}
			for j, k := 0, w; k < commands; j, k = j+1, k+workers {
				if err := soakCommand(p, rng, j, agent); err != nil {
					t.Errorf("worker %d command %d: %v", w, k, err)
					return
				}
				done.Add(1)
				checkWarm()
			}
		})
	}
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(42, 42))
		for i := range connects {
			if err := soakConnect(t, e, other, rng, i); err != nil {
				t.Errorf("connection %d: %v", i, err)
				return
			}
			connected.Add(1)
			checkWarm()
		}
	})
	wg.Wait()
	if t.Failed() {
		return
	}
	select {
	case <-warmed:
	default:
		t.Fatal("never warmed up")
	}
	t.Logf("%d commands and %d connections in %v", commands, connects, time.Since(start).Round(time.Millisecond))

	// Open files come back once the last connections are cleaned up.
	var end procStats
	deadline := time.Now().Add(waitLimit)
	for {
		end = readProcStats(t, d.pid)
		if end.FDs <= warm.FDs+2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	end.RSSKiB = rssAnon(t, d.pid)
	t.Logf("end: %+v", end)
	if end.FDs > warm.FDs+2 {
		t.Errorf("open files: %d at the end, %d when warm: descriptors leak", end.FDs, warm.FDs)
	}
	if end.Threads > warm.Threads+8 {
		t.Errorf("threads: %d at the end, %d when warm", end.Threads, warm.Threads)
	}
	if limit := warm.RSSKiB + max(32<<10, warm.RSSKiB/2); end.RSSKiB > limit {
		t.Errorf("anonymous memory: %d KiB at the end, %d KiB when warm (limit %d KiB): memory grows", end.RSSKiB, warm.RSSKiB, limit)
	}
	if s := d.Stderr.String(); strings.Contains(s, "panic") || strings.Contains(s, "level=ERROR") {
		t.Errorf("daemon log shows errors:\n%s", s)
	}

	p := dialSocket(t, e.socketPath(), lsptest.Options{Name: "check"})
	p.InitializeRoot(e.ws, nil)
	events, size := readHistory(t, p, "soak")
	st := p.stateIn("soak")
	checkNewestHistory(t, events, st.Revision)
	// Well under the byte budget nothing is dropped for bytes: the history
	// holds every event up to the count bound.
	if want := min(int(st.Revision), maxHistory); len(events) > want || size < maxHistoryBytes*3/4 && len(events) != want {
		t.Errorf("history of the shared session: %d events of %d bytes at revision %d, want %d", len(events), size, st.Revision, want)
	}
}

// maxHistory is workspace.MaxHistory (docs/protocol.md §3, docs/reliability.md).
const maxHistory = 10_000

func rssAnon(t testing.TB, pid int) int {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			var n int
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &n)
			return n
		}
	}
	t.Fatal("no RssAnon in /proc status")
	return 0
}

// soakCommand runs the k-th command of a worker: a mix of every kind of call.
func soakCommand(p *client, rng *rand.Rand, k int, agent *soakAgent) error {
	switch k % 12 {
	case 0, 1, 2: // TodoList writes of varying size into the shared session
		n := rng.IntN(30)
		list := make([]item, n)
		for i := range list {
			list[i] = item{fmt.Sprintf("soak %d.%d %s", k, i, strings.Repeat("s", rng.IntN(200))), []string{"pending", "in_progress", "done"}[rng.IntN(3)]}
		}
		var res toolResult
		if err := p.Exec("agentd.callTool", map[string]any{"session": "soak", "name": "TodoList", "input": map[string]any{"todos": list}}, &res); err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("TodoList write refused: %s", res.Output)
		}
	case 3:
		return p.Exec("agentd.callTool", map[string]any{"name": "TodoList", "input": map[string]any{}}, nil)
	case 4:
		return p.Exec("agentd.state", map[string]any{"session": "soak"}, nil)
	case 5:
		return p.Exec("agentd.history", map[string]any{"session": "soak", "limit": 20}, nil)
	case 6:
		return p.Exec("agentd.todo.set", map[string]any{"items": []item{{fmt.Sprintf("own %d", k), "pending"}}}, nil)
	case 7, 8, 9: // one step of a goal-driven agent loop
		return agent.next()
	case 10:
		return p.Exec("agentd.sessions", nil, nil)
	case 11: // a stale compare-and-set is refused (case 6 wrote before)
		err := p.Exec("agentd.todo.set", map[string]any{"items": []item{{"stale", "done"}}, "expectedRevision": 0}, nil)
		var we *lsptest.Error
		if !errors.As(err, &we) || we.DataCode() != "todo.conflict" {
			return fmt.Errorf("a stale agentd.todo.set: got %v, want todo.conflict", err)
		}
	}
	return nil
}

// soakAgent is a worker's goal-driven agent loop (loop.Host), played one
// command at a time between the worker's other commands: turn.begin (with
// a new goal every 20 turns), step.begin, a GetGoal call, step.end,
// turn.end.
type soakAgent struct {
	h     *loop.Host
	turn  string // the turn begun last
	turns int    // turns begun
	phase int    // the next command, 0..4
}

func (a *soakAgent) next() error {
	ctx, cancel := limit()
	defer cancel()
	var err error
	switch a.phase {
	case 0:
		if a.turns%20 == 0 {
			if err = a.h.Exec(ctx, protocol.CmdGoalCreate, &protocol.GoalCreateArgs{Objective: fmt.Sprintf("soak goal %d", a.turns), Replace: true}, nil); err != nil {
				return err
			}
		}
		a.turns++
		a.turn, _, err = a.h.BeginTurn(ctx, "user")
	case 1:
		_, err = a.h.BeginStep(ctx, a.turn)
	case 2:
		_, err = a.h.CallTool(ctx, a.turn, "GetGoal", map[string]any{})
	case 3:
		_, err = a.h.EndStep(ctx, a.turn, 100, "stop")
	case 4:
		_, err = a.h.EndTurn(ctx, a.turn, "completed", nil)
	}
	a.phase = (a.phase + 1) % 5
	return err
}

// soakConnect is one short-lived connection: it opens the workspace (or
// another folder), runs a command, and leaves in one of three ways.
func soakConnect(t *testing.T, e *env, other string, rng *rand.Rand, i int) error {
	p := dialSocket(t, e.socketPath(), lsptest.Options{Name: fmt.Sprintf("conn %d", i)})
	defer p.Close()
	folder := e.ws
	if i%4 == 3 {
		folder = other
	}
	switch i % 3 {
	case 0: // clean: shutdown and exit
		p.InitializeRoot(folder, nil)
		if err := p.Exec("agentd.state", nil, nil); err != nil {
			return err
		}
		if m, err := p.Request("shutdown", nil); err != nil || m.Error != nil {
			return fmt.Errorf("shutdown: %v %v", err, m)
		}
		p.SendBody(`{"jsonrpc":"2.0","method":"exit"}`)
	case 1: // abrupt: close the socket in the middle of a turn
		p.InitializeRoot(folder, nil)
		id := fmt.Sprintf("abandoned-%d", i)
		if err := p.Exec("agentd.turn.begin", map[string]any{"turnId": id, "origin": "user", "session": "churn"}, nil); err != nil {
			return err
		}
		if rng.IntN(2) == 0 {
			p.Exec("agentd.callTool", map[string]any{"name": "TodoList", "session": "churn", "input": map[string]any{"todos": []item{{fmt.Sprint(i), "pending"}}}}, nil)
		}
	default: // gone before initialized
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"processId": nil, "rootUri": fileURI(folder), "capabilities": map[string]any{}}})
		p.SendBody(string(body))
	}
	p.Close()
	select {
	case <-p.Done():
		return nil
	case <-time.After(waitLimit):
		return fmt.Errorf("the daemon did not close the connection")
	}
}

// TestHistoryBoundEndToEnd: past workspace.MaxHistory changes (small ones,
// well within the history's byte budget even with the list before each one
// that its event keeps), a session's history holds exactly
// the newest MaxHistory events (read page by page with agentd.history), and
// the state file stops growing: bbolt reuses the pages of the events it
// drops.
func TestHistoryBoundEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes 12,500 changes")
	}
	e := newEnv(t)
	e.stateDir = fastStateDir(t)
	startDaemon(t, e, agentdBin)
	// One connection with several requests in flight: the session's lock
	// orders them, and one client's notifications cost little.
	w := dialSocket(t, e.socketPath(), lsptest.Options{Name: "writer", OnBody: func(body []byte) bool { _, _, ok := todoChangedFast(body); return ok }, OnNote: func(*lsptest.Message) {}})
	w.InitializeRoot(e.ws, nil)
	const inFlight = 8
	write := func(from, to int) {
		var wg sync.WaitGroup
		for g := range inFlight {
			wg.Go(func() {
				for k := from + g; k < to; k += inFlight {
					if err := w.Exec("agentd.todo.set", map[string]any{"items": bigList(fmt.Sprint(k), 1, 30)}, nil); err != nil {
						t.Errorf("write %d: %v", k, err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	write(0, maxHistory+500)
	atBound := stateFileSize(t, e)
	write(maxHistory+500, maxHistory+2500)
	after := stateFileSize(t, e)

	p := dialSocket(t, e.socketPath(), lsptest.Options{Name: "reader"})
	p.InitializeRoot(e.ws, nil)
	events, _ := readHistory(t, p, "")
	st := p.stateIn("")
	if st.Revision != maxHistory+2500 || len(events) != maxHistory {
		t.Fatalf("revision %d, %d events; want %d and %d", st.Revision, len(events), maxHistory+2500, maxHistory)
	}
	checkNewestHistory(t, events, st.Revision)
	t.Logf("state file: %d bytes at the bound, %d bytes 2,000 changes later", atBound, after)
	if after > atBound+atBound/10 {
		t.Errorf("the state file grew from %d to %d bytes past the history bound", atBound, after)
	}
}
