package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/tests/lsptest"
)

// remote measures a TodoList write and query through an `agentd
// --remote=unix:SOCK` forwarder on pipes, as editors run it, to the shared
// daemon (`agentd serve --listen=unix:SOCK`), against the floors of the same
// exchange over a direct pipe: the forwarder's hop counts against agentd.
func (b *bench) remote() error {
	b.rep.section("shared daemon; clients are `agentd --remote=unix:SOCK` forwarders")
	d, err := b.serveDaemon("remote")
	if err != nil {
		return b.noDaemon(err, "forwarder", "remote_write_p50_us", "remote_read_p50_us")
	}
	defer d.stop()
	c, err := b.remoteClient(d, "", "fan", b.folder("remote"))
	if err != nil {
		return err
	}
	defer c.close()
	if err := b.useFloor("floor-daemon.db"); err != nil {
		return err
	}
	fw, err := b.figure("TodoList write via forwarder", "remote_write", c, items, writes("fan", items)...)
	if err != nil {
		return err
	}
	fr, err := b.figure("TodoList query via forwarder", "remote_read", c, 0, tool("fan", "TodoList", map[string]any{}))
	if err != nil {
		return err
	}
	return b.measure(fw, fr)
}

// fanout measures, on the shared daemon with forwarder clients, the time
// from a write's reply (to the writer) to the last of N other clients
// receiving its agentd/todoChanged, for N = 1, 8 and 32, and the writer's
// own latency meanwhile, against its latency with N = 1. The three run
// interleaved in one daemon, on three folders the writer has open: folder
// "fanN" is also open in N of the 32 other clients (client 1 has all three,
// clients 2–8 fan8 and fan32, the rest fan32 alone), so that a write
// notifies exactly N of them besides the writer.
func (b *bench) fanout() error {
	b.rep.section("fan-out: the shared daemon, clients are forwarders")
	d, err := b.serveDaemon("fanout")
	if err != nil {
		return b.noDaemon(err, "fan-out", "fanout_1_p50_us", "fanout_1_p99_us", "fanout_8_p50_us", "fanout_8_p99_us",
			"fanout_32_p50_us", "fanout_32_p99_us", "fanout_32_write_ratio")
	}
	defer d.stop()
	counts := []int{1, 8, 32}
	folders := map[int]string{}
	var all []string
	for _, n := range counts {
		folders[n] = b.folder(fmt.Sprintf("fan%d", n))
		all = append(all, folders[n])
	}
	var clients []*client
	defer func() {
		for _, c := range clients {
			c.close()
		}
	}()
	writer, err := b.remoteClient(d, "", "fan", all...)
	if err != nil {
		return err
	}
	clients = append(clients, writer)
	for k := 1; k <= counts[len(counts)-1]; k++ {
		var open []string
		for _, n := range counts {
			if k <= n {
				open = append(open, folders[n])
			}
		}
		c, err := b.remoteClient(d, "fan", "fan", open...)
		if err != nil {
			return err
		}
		clients = append(clients, c)
	}
	var ops []*op
	for _, n := range counts {
		ops = append(ops, fanOp(n, writer, writesIn(folders[n], "fan", items), clients[1:n+1]))
	}
	if err := b.interleave(block, ops...); err != nil {
		return err
	}
	var one time.Duration
	for i, n := range counts {
		watching := fmt.Sprintf("%d clients", n)
		if n == 1 {
			watching = "1 client"
		}
		b.rep.latency(watching+": write reply → last client notified", fmt.Sprintf("fanout_%d", n), ops[i].alsoSamples, "", 0)
		p50 := b.rep.latency(watching+": the writer's TodoList write", fmt.Sprintf("fanout_%d_write", n), ops[i].samples, "1 client", one)
		if n == 1 {
			one = p50
		}
	}
	return nil
}

// fanOp is fanout's op for n watchers: writer makes one of the writes w,
// and the op's also is the time from its reply to the last of watchers
// receiving its agentd/todoChanged.
func fanOp(n int, writer *client, w []json.RawMessage, watchers []*client) *op {
	var fan time.Duration
	i := 0
	return &op{label: fmt.Sprintf("write with %d clients watching", n), inner: true, also: func() time.Duration { return fan },
		fn: func() (json.RawMessage, error) {
			i++
			t0 := time.Now()
			raw, err := writer.exec(w[i%2])
			reply := time.Now()
			if err == nil {
				err = toolError(raw)
			}
			last := time.Time{}
			for _, o := range watchers {
				if err != nil {
					return nil, err
				}
				select {
				case at := <-o.notes:
					if at.After(last) {
						last = at
					}
				case <-time.After(callLimit):
					err = errors.New("a client never received agentd/todoChanged")
				}
			}
			fan = last.Sub(reply)
			return fmt.Appendf(nil, `{"ns":%d}`, reply.Sub(t0)), err
		}}
}

// writers is the number of concurrent writers of concurrent, and perWriter
// the writes each makes in one block.
const writers, perWriter = 16, 8

// concurrent measures throughput in one folder of the shared daemon: the
// same writers×perWriter TodoList writes made by one forwarder client one
// after the other, and by writers forwarder clients at once (perWriter
// each, each client its own session), one block of each per round. Each
// writer is its own process and connection, as agents and editors are
// (each agent its own `agentd mcp` or forwarder; the daemon serves each
// connection's requests as they come, whoever sends them); every one of
// them has the folder open, so each write also notifies all of them. A
// sample is the block's wall time divided by its writes (µs per write);
// the speedup is the ratio of the medians.
func (b *bench) concurrent() error {
	b.rep.section(fmt.Sprintf("concurrent writers: one folder of the shared daemon, %d forwarder clients", writers))
	d, err := b.serveDaemon("concurrent")
	if err != nil {
		return b.noDaemon(err, "concurrent writers", "concurrent_16_speedup")
	}
	defer d.stop()
	folder := b.folder("concurrent")
	clients := make([]*client, writers)
	w := make([][]json.RawMessage, writers)
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.close()
			}
		}
	}()
	for k := range clients {
		session := fmt.Sprintf("w%02d", k)
		if clients[k], err = b.remoteClient(d, "", session, folder); err != nil {
			return err
		}
		w[k] = writes(session, items)
	}
	// run makes k's warm-up writes (checked), waits for start, then makes
	// count writes.
	run := func(k, count int, ready *sync.WaitGroup, start <-chan struct{}) error {
		var err error
		for j := 0; j < blockWarm && err == nil; j++ {
			err = clients[k].checked(w[k][j%2])
		}
		ready.Done()
		<-start
		for j := 0; j < count && err == nil; j++ {
			_, err = clients[k].exec(w[k][j%2])
		}
		return err
	}
	// Who spends the CPU of a block: the daemon, the forwarders, the bench
	// (its clients' reads and writes).
	pids := [3][]int{{d.proc.Cmd.Process.Pid}, nil, {os.Getpid()}}
	for _, c := range clients {
		pids[1] = append(pids[1], c.proc.Cmd.Process.Pid)
	}
	batch := func(n int, sp *cpuSpent) func() (json.RawMessage, error) {
		return func() (json.RawMessage, error) {
			var ready, done sync.WaitGroup
			start, errs := make(chan struct{}), make([]error, n)
			ready.Add(n)
			for k := range n {
				done.Go(func() { errs[k] = run(k, writers*perWriter/n, &ready, start) })
			}
			ready.Wait()
			var c0 [3]time.Duration
			for i := range pids {
				c0[i] = cpuTime(pids[i]...)
			}
			t0 := time.Now()
			close(start)
			done.Wait()
			wall := time.Since(t0)
			for i := range pids {
				sp.cpu[i] += cpuTime(pids[i]...) - c0[i]
			}
			sp.writes += writers * perWriter
			return fmt.Appendf(nil, `{"ns":%d}`, wall/(writers*perWriter)), errors.Join(errs...)
		}
	}
	var spentOne, spentMany cpuSpent
	one := &op{label: "1 writer", inner: true, fn: batch(1, &spentOne)}
	many := &op{label: fmt.Sprintf("%d writers", writers), inner: true, fn: batch(writers, &spentMany)}
	if err := interleaveRounds(1, max(b.n/40, 10), 1, one, many); err != nil {
		return err
	}
	b.reportConcurrent(one, many, spentOne, spentMany)
	return nil
}

// cpuSpent is the CPU time the processes of concurrent spent in its
// blocks, by the daemon, the forwarders and the bench, and the writes made.
type cpuSpent struct {
	cpu    [3]time.Duration
	writes int
}

// reportConcurrent reports concurrent's figures: the time per write of 1
// writer (one) and of writers at once (many), the speedup, the CPU every
// write costs and the ceiling on the speedup that this CPU sets.
func (b *bench) reportConcurrent(one, many *op, spentOne, spentMany cpuSpent) {
	p1 := b.rep.latency(fmt.Sprintf("1 writer, %d writes one after the other: µs per write", writers*perWriter), "concurrent_1_write", one.samples, "", 0)
	pN := b.rep.latency(fmt.Sprintf("%d writers at once, %d writes each: µs per write (wall time / writes)", writers, perWriter),
		fmt.Sprintf("concurrent_%d_write", writers), many.samples, "1 writer", p1)
	speedup := math.Round(float64(p1)/float64(pN)*100) / 100
	b.rep.value(fmt.Sprintf("throughput, %d writers against 1", writers), fmt.Sprintf("concurrent_%d_speedup", writers), speedup,
		fmt.Sprintf("%.2f× (%.0f against %.0f writes/s)", speedup, float64(time.Second)/float64(pN), float64(time.Second)/float64(p1)))
	// The CPU every write costs the machine bounds the throughput of any
	// number of writers: at most cores / (CPU per write) writes per second.
	perWrite := func(label, key string, sp cpuSpent) time.Duration {
		var all time.Duration
		for _, c := range sp.cpu {
			all += c
		}
		w := time.Duration(max(sp.writes, 1))
		us := func(d time.Duration) float64 { return math.Round(float64(d/w)/100) / 10 }
		b.rep.value(label, key, us(all), fmt.Sprintf("%.1f µs (daemon %.1f, forwarders %.1f, bench clients %.1f)",
			us(all), us(sp.cpu[0]), us(sp.cpu[1]), us(sp.cpu[2])))
		return all / w
	}
	perWrite("1 writer: CPU per write, all processes", "concurrent_1_cpu_us_per_write", spentOne)
	cpuN := perWrite(fmt.Sprintf("%d writers: CPU per write, all processes", writers), fmt.Sprintf("concurrent_%d_cpu_us_per_write", writers), spentMany)
	cores := runtime.NumCPU()
	ceiling := math.Round(float64(cores)*float64(p1)/float64(cpuN)*100) / 100
	b.rep.value(fmt.Sprintf("CPU ceiling on %d cores: %d writers' best throughput against 1 writer's", cores, writers),
		fmt.Sprintf("concurrent_%d_cpu_ceiling_speedup", writers), ceiling,
		fmt.Sprintf("%.2f× (%d cores / %.1f µs per write = %.0f writes/s)", ceiling, cores, float64(cpuN)/1e3, float64(cores)*float64(time.Second)/float64(cpuN)))
}

// cpuTime is the CPU time the processes pids have run so far, all their
// threads (the first field of /proc/PID/task/TID/schedstat, in ns); 0 for a
// process that is gone.
func cpuTime(pids ...int) time.Duration {
	var sum time.Duration
	for _, pid := range pids {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
		for _, t := range tasks {
			raw, err := os.ReadFile(t)
			if f := strings.Fields(string(raw)); err == nil && len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				sum += time.Duration(ns)
			}
		}
	}
	return sum
}

// mcp measures a TodoList write made as an MCP tools/call through `agentd
// mcp` (the real binary on pipes, newline-delimited JSON-RPC) against the
// same input as agentd.callTool through an `agentd --remote` forwarder, both
// to the same shared daemon, on the same folder (each its own session),
// interleaved: both are one process between the client and the daemon.
func (b *bench) mcp() error {
	b.rep.section("MCP: `agentd mcp` against a forwarder, both to the shared daemon")
	d, err := b.serveDaemon("mcp")
	if err != nil {
		return b.noDaemon(err, "agentd mcp", "mcp_call_ratio")
	}
	defer d.stop()
	folder := b.folder("mcp")
	fwd, err := b.remoteClient(d, "", "fwd", folder)
	if err != nil {
		return err
	}
	defer fwd.close()
	m, err := startMCP(b.agentd(d.stateDir, "mcp", "--remote=unix:"+d.sock, "--workspace", folder, "--session", "mcp"), b.log)
	if err != nil {
		return err
	}
	defer m.close()
	var calls []json.RawMessage
	for _, in := range todoInputs(items) {
		raw, err := json.Marshal(map[string]any{"name": "TodoList", "arguments": in})
		if err != nil {
			return err
		}
		calls = append(calls, raw)
	}
	i := 0
	call := &op{label: "MCP tools/call TodoList", fn: func() (json.RawMessage, error) {
		i++
		return m.call("tools/call", calls[i%2])
	}}
	viaFwd := execOp("agentd.callTool via forwarder", fwd, writes("fwd", items)...)
	if err := b.interleave(block, viaFwd, call); err != nil {
		return err
	}
	floor := b.rep.latency("TodoList write, agentd.callTool via forwarder", "mcp_forwarder_call", viaFwd.samples, "", 0)
	b.rep.latency("TodoList write, MCP tools/call via agentd mcp", "mcp_call", call.samples, "forwarder", floor)
	return nil
}

// sharedMemory reads VmRSS of the shared daemon with 100 folders open and
// 32 forwarder clients connected, each with its share of the folders open
// (folder i in client i mod 32) and having read the state of each, 500 ms
// after the last read. The state files exist (a stdio agentd opened every
// folder before), as after any restart.
func (b *bench) sharedMemory() error {
	const nFolders, nClients = 100, 32
	b.rep.section("memory of the shared daemon")
	key := fmt.Sprintf("rss_%d_ws_%d_clients_kib", nFolders, nClients)
	folders := make([]string, nFolders)
	for i := range folders {
		folders[i] = b.folder(fmt.Sprintf("rss/f%03d", i))
	}
	c, err := b.startAgentd(filepath.Join(b.tmp, "rss-state"), folders...) // the daemon's, below

	if err != nil {
		return err
	}
	c.close()
	d, err := b.serveDaemon("rss")
	if err != nil {
		return b.noDaemon(err, "shared daemon memory", key)
	}
	defer d.stop()
	var clients []*client
	defer func() {
		for _, c := range clients {
			c.close()
		}
	}()
	for k := range nClients {
		var open []string
		for i := k; i < nFolders; i += nClients {
			open = append(open, folders[i])
		}
		c, err := b.remoteClient(d, "", "default", open...)
		if err != nil {
			return err
		}
		clients = append(clients, c)
	}
	time.Sleep(500 * time.Millisecond)
	rss, err := vmRSS(d.proc.Cmd.Process.Pid)
	if err != nil {
		return err
	}
	b.rep.value(fmt.Sprintf("VmRSS of the daemon, %d folders open, %d clients", nFolders, nClients), key, rss, fmt.Sprintf("%d KiB", rss))
	return nil
}

// memory reads VmRSS of an idle stdio agentd with 1 and 50 folders open on
// its connection, on its second start (state files exist, as after any
// restart), and times that initialize once.
func (b *bench) memory() error {
	b.rep.section("memory (idle stdio agentd) and initialize with many folders")
	stateDir := filepath.Join(b.tmp, "mem-state")
	for _, k := range []int{1, 50} {
		folders := make([]string, k)
		for i := range folders {
			folders[i] = b.folder(fmt.Sprintf("mem%d/f%02d", k, i))
		}
		var rss int64
		var init time.Duration
		for range 2 {
			t0 := time.Now()
			c, err := b.startAgentd(stateDir, folders...)
			if err != nil {
				return err
			}
			init = time.Since(t0)
			_, err = c.exec(command(string(protocol.CmdState), map[string]any{"workspace": folders[0]}))
			time.Sleep(500 * time.Millisecond)
			if err == nil {
				rss, err = vmRSS(c.proc.Cmd.Process.Pid)
			}
			c.close()
			if err != nil {
				return err
			}
		}
		b.rep.value(fmt.Sprintf("VmRSS, %d folder(s) open", k), fmt.Sprintf("rss_%d_ws_kib", k), rss, fmt.Sprintf("%d KiB", rss))
		b.rep.value(fmt.Sprintf("exec → initialize reply, %d existing folder(s), n=1", k), fmt.Sprintf("init_%d_ws_us", k), us(init), fmt.Sprintf("%.1f", us(init)))
	}
	return nil
}

func vmRSS(pid int) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	_, rest, _ := strings.Cut(string(status), "VmRSS:")
	if f := strings.Fields(rest); err == nil && len(f) > 0 {
		return strconv.ParseInt(f[0], 10, 64)
	}
	return 0, fmt.Errorf("no VmRSS for pid %d (%v)", pid, err)
}

// startup times exec → initialize reply of a stdio agentd (with one existing
// folder, and with none) against exec → exit of a trivial Go program, one
// of each per round.
func (b *bench) startup() error {
	folder, stateDir := b.folder("startup"), filepath.Join(b.tmp, "startup-state")
	start := func(label string, folders ...string) *op {
		return &op{label: label, inner: true, fn: func() (json.RawMessage, error) {
			t0 := time.Now()
			c, err := spawn(b.agentd(stateDir), b.log, "")
			if err != nil {
				return nil, err
			}
			defer c.close()                // not timed
			err = c.initialize(folders...) // timed to its reply: initialized is only queued
			return json.RawMessage(fmt.Sprintf(`{"ns":%d}`, time.Since(t0))), err
		}}
	}
	trivial := &op{label: "exec → exit, trivial Go program", fn: func() (json.RawMessage, error) { return nil, exec.Command(b.trivial).Run() }}
	withFolder, bare := start("agentd exec → initialize reply, 1 folder", folder), start("agentd exec → initialize reply, no folder")
	if err := b.interleave(1, trivial, withFolder, bare); err != nil {
		return err
	}
	b.rep.section("start-up")
	floor := b.rep.latency(trivial.label, "exec_trivial", trivial.samples, "", 0)
	b.rep.latency(withFolder.label, "startup", withFolder.samples, "exec", floor)
	b.rep.latency(bare.label, "startup_no_folder", bare.samples, "exec", floor)
	return nil
}

// hookEvent times one `agentd-hook claude` event (what agentd setup
// installs, docs/hooks.md), exec to exit, against exec to exit of a trivial
// Go program, one of each per round: a PostToolBatch (one agentd.step.next
// of a detached turn: the step's end and the next one's begin) through a
// shared daemon that a client (an agent's MCP server) keeps the folder open
// in, and a PreToolUse outside a grace step (the tool's gate: the hook's
// cursor only, no connection).
func (b *bench) hookEvent() error {
	d, err := b.serveDaemon("hook", "--listen.timeout=0")
	if err != nil {
		return err
	}
	defer d.stop()
	folder := b.folder("hook")
	keeper, err := b.remoteClient(d, "", "bench", folder)
	if err != nil {
		return err
	}
	defer keeper.close()
	n := 0
	event := func(body string) (json.RawMessage, error) {
		cmd := exec.Command(b.hookBin, "claude", "--remote=unix:"+d.sock, "--workspace", folder, "--state-dir", d.stateDir)
		cmd.Env = b.env
		cmd.Stdin = strings.NewReader(`{"session_id":"bench","transcript_path":"","cwd":` + strconv.Quote(folder) + `,` + body + `}`)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || strings.Contains(errb.String(), "not handled") {
			return nil, fmt.Errorf("agentd-hook: %v %s", err, errb.String())
		}
		return nil, nil
	}
	if _, err := event(`"hook_event_name":"UserPromptSubmit","prompt":"go"`); err != nil {
		b.rep.missing("agentd-hook", "this agentd-hook does not answer a hook event", "hook_p50_us", "hook_p99_us", "hook_ratio")
		return nil
	}
	batch := &op{label: "agentd-hook claude PostToolBatch, exec → exit", fn: func() (json.RawMessage, error) {
		n++
		return event(fmt.Sprintf(`"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Read","tool_input":{},"tool_use_id":"toolu_%d"}]`, n))
	}}
	// The tool's gate, outside a grace step: the cursor only, no daemon.
	gate := &op{label: "agentd-hook claude PreToolUse, exec → exit", fn: func() (json.RawMessage, error) {
		n++
		return event(fmt.Sprintf(`"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{},"tool_use_id":"toolu_g%d"`, n))
	}}
	trivial := &op{label: "exec → exit, trivial Go program", fn: func() (json.RawMessage, error) { return nil, exec.Command(b.trivial).Run() }}
	if err := b.interleave(1, trivial, batch, gate); err != nil {
		return err
	}
	b.rep.section("agent hooks")
	floor := b.rep.latency(trivial.label, "exec_trivial_hook", trivial.samples, "", 0)
	b.rep.latency(batch.label, "hook", batch.samples, "exec", floor)
	b.rep.latency(gate.label, "hook_gate", gate.samples, "exec", floor)
	return nil
}

// errNoListen is serveDaemon's error for an agentd that did not listen.
var errNoListen = errors.New("this agentd does not serve --listen=unix:PATH")

// daemon is a running shared daemon.
type daemon struct {
	sock, stateDir string
	proc           *lsptest.Process
}

// serveDaemon starts `agentd serve --listen=unix:SOCK` with args, its
// socket run/NAME.sock and its state directory NAME-state in the run's
// directory, and waits up to 5 s for it to listen; errNoListen when it
// exited or did not listen by then.
func (b *bench) serveDaemon(name string, args ...string) (*daemon, error) {
	d := &daemon{sock: filepath.Join(b.tmp, "run", name+".sock"), stateDir: filepath.Join(b.tmp, name+"-state")}
	c, err := spawn(b.agentd(d.stateDir, append([]string{"serve", "--listen=unix:" + d.sock}, args...)...), b.log, "")
	if err != nil {
		return nil, err
	}
	d.proc = c.proc
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("unix", d.sock); err == nil {
			c.Close()
			return d, nil
		}
		select {
		case <-d.proc.Exited():
			return nil, errNoListen
		default:
		}
	}
	d.stop()
	return nil, errNoListen
}

// stop interrupts the daemon and waits for it to end.
func (d *daemon) stop() {
	d.proc.Cmd.Process.Signal(os.Interrupt)
	<-d.proc.Exited()
}

// noDaemon reports keys as not measured (null) when serveDaemon's err is
// errNoListen, and returns any other error.
func (b *bench) noDaemon(err error, label string, keys ...string) error {
	if errors.Is(err, errNoListen) {
		b.rep.missing(label, err.Error(), keys...)
		return nil
	}
	return err
}

// remoteClient starts an `agentd --remote=unix:SOCK` forwarder to d with
// folders open (watch: see spawn) and reads the state of session in each
// folder: a reply after initialized, so the client is ready.
func (b *bench) remoteClient(d *daemon, watch, session string, folders ...string) (*client, error) {
	c, err := spawn(b.agentd(d.stateDir, "--remote=unix:"+d.sock), b.log, watch)
	if err != nil {
		return nil, err
	}
	err = c.initialize(folders...)
	for _, f := range folders {
		if err == nil {
			_, err = c.exec(command(string(protocol.CmdState), map[string]any{"session": session, "workspace": f}))
		}
	}
	if err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}
