package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// fanout runs the shared daemon (`agentd serve --listen=unix:SOCK`) with
// clients that are `agentd --remote=unix:SOCK` forwarders on pipes, as
// editors run them. It measures a write and a read through a forwarder
// against their floors, then, with N more clients on the same folder, the
// time from a write's reply (to the writer) to the last of the N receiving
// its agentd/todoChanged.
func (b *bench) fanout() error {
	defer b.floors.close()
	b.rep.section("shared daemon; clients are `agentd --remote=unix:SOCK` forwarders")
	sock, stateDir := filepath.Join(b.tmp, "run", "bench.sock"), filepath.Join(b.tmp, "daemon-state")
	stop, listening, err := b.serveDaemon(sock, stateDir)
	if err != nil {
		return err
	}
	defer stop()
	if !listening {
		b.rep.missing("shared daemon", "this agentd does not serve --listen=unix:PATH", "fanout_1_p50_us", "fanout_1_p99_us",
			"fanout_8_p50_us", "fanout_8_p99_us", "fanout_32_p50_us", "fanout_32_p99_us", "remote_write_p50_us", "remote_read_p50_us")
		return nil
	}
	folder := b.folder("fanout")
	connect := func(watch string) (*client, error) {
		c, err := spawn(b.agentd(stateDir, "--remote=unix:"+sock), b.log, watch)
		if err == nil {
			if err = c.initialize(folder); err == nil { // a reply after initialized: the client is ready
				_, err = c.exec(command("agentd.state", map[string]any{"session": "fan"}))
			}
			if err != nil {
				c.close()
			}
		}
		return c, err
	}
	var clients []*client
	defer func() {
		for _, c := range clients {
			c.close()
		}
	}()
	writer, err := connect("")
	if err == nil {
		clients = append(clients, writer)
		err = b.useFloor("floor-daemon.db")
	}
	w := writes("fan", items)
	var fw, fr *figure
	if err == nil {
		fw, err = b.figure("TodoList write via forwarder", "remote_write", writer, items, w...)
	}
	if err == nil {
		fr, err = b.figure("TodoList query via forwarder", "remote_read", writer, 0, tool("fan", "TodoList", map[string]any{}))
	}
	if err == nil {
		err = b.measure(fw, fr)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // GC between measurements only, as in interleave
	for _, n := range []int{1, 8, 32} {
		for len(clients) < n+1 && err == nil {
			var c *client
			if c, err = connect("fan"); err == nil {
				clients = append(clients, c)
			}
		}
		var lat, fan []time.Duration
		for i := 0; i < b.warm+b.n && err == nil; i++ {
			if i%block == 0 {
				runtime.GC()
			}
			t0 := time.Now()
			if _, err = writer.exec(w[i%2]); err != nil {
				break
			}
			reply, last := time.Now(), time.Time{}
			for _, o := range clients[1:] {
				select {
				case at := <-o.notes:
					if at.After(last) {
						last = at
					}
				case <-time.After(callLimit):
					err = errors.New("a client never received agentd/todoChanged")
				}
			}
			if i >= b.warm {
				lat, fan = append(lat, reply.Sub(t0)), append(fan, last.Sub(reply))
			}
		}
		if err != nil {
			return fmt.Errorf("%d clients: %w", n, err)
		}
		b.rep.latency(fmt.Sprintf("%d clients: write reply → last client notified", n), fmt.Sprintf("fanout_%d", n), fan, "", 0)
		b.rep.latency(fmt.Sprintf("%d clients: the writer's TodoList write", n), fmt.Sprintf("fanout_%d_write", n), lat, "", 0)
	}
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
			_, err = c.exec(command("agentd.state", map[string]any{"workspace": folders[0]}))
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

// hookEvent times one `agentd hook claude` event, exec to exit, against exec
// to exit of a trivial Go program, one of each per round: a PostToolBatch
// (agentd.step.end and agentd.step.begin of a detached turn) through a
// shared daemon that a client (an agent's MCP server) keeps the folder open
// in.
func (b *bench) hookEvent() error {
	sock, stateDir := filepath.Join(b.tmp, "run", "hook.sock"), filepath.Join(b.tmp, "hook-state")
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		return err
	}
	stop, listening, err := b.serveDaemon(sock, stateDir, "--listen.timeout=0")
	if err != nil {
		return err
	}
	defer stop()
	if !listening {
		return errors.New("the shared daemon did not listen")
	}
	folder := b.folder("hook")
	keeper, err := spawn(b.agentd(stateDir, "--remote=unix:"+sock), b.log, "")
	if err != nil {
		return err
	}
	defer keeper.close()
	if err := keeper.initialize(folder); err != nil {
		return err
	}
	n := 0
	event := func(body string) (json.RawMessage, error) {
		cmd := b.agentd(stateDir, "hook", "claude", "--remote=unix:"+sock, "--workspace", folder)
		cmd.Stdin = strings.NewReader(`{"session_id":"bench","transcript_path":"","cwd":` + strconv.Quote(folder) + `,` + body + `}`)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || strings.Contains(errb.String(), "not handled") {
			return nil, fmt.Errorf("agentd hook: %v %s", err, errb.String())
		}
		return nil, nil
	}
	if _, err := event(`"hook_event_name":"UserPromptSubmit","prompt":"go"`); err != nil {
		b.rep.missing("agentd hook", "this agentd has no working `hook` command", "hook_event_p50_us", "hook_event_p99_us")
		return nil
	}
	batch := &op{label: "agentd hook claude PostToolBatch, exec → exit", fn: func() (json.RawMessage, error) {
		n++
		return event(fmt.Sprintf(`"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Read","tool_input":{},"tool_use_id":"toolu_%d"}]`, n))
	}}
	trivial := &op{label: "exec → exit, trivial Go program", fn: func() (json.RawMessage, error) { return nil, exec.Command(b.trivial).Run() }}
	if err := b.interleave(1, trivial, batch); err != nil {
		return err
	}
	b.rep.section("agent hooks")
	floor := b.rep.latency(trivial.label, "exec_trivial_hook", trivial.samples, "", 0)
	b.rep.latency(batch.label, "hook_event", batch.samples, "exec", floor)
	return nil
}

// serveDaemon starts `agentd serve --listen=unix:sock` with args and waits
// up to 5 s for it to listen; listening is false when it exited or did not
// listen by then. stop interrupts it and waits for it to end.
func (b *bench) serveDaemon(sock, stateDir string, args ...string) (stop func(), listening bool, err error) {
	daemon, err := spawn(b.agentd(stateDir, append([]string{"serve", "--listen=unix:" + sock}, args...)...), b.log, "")
	if err != nil {
		return nil, false, err
	}
	stop = func() {
		daemon.proc.Cmd.Process.Signal(os.Interrupt)
		<-daemon.proc.Exited()
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return stop, true, nil
		}
		select {
		case <-daemon.proc.Exited():
			return stop, false, nil
		default:
		}
	}
	return stop, false, nil
}
