package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/agentd/agentd/loop"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// op is one measured operation.
type op struct {
	label   string
	fn      func() (json.RawMessage, error)
	inner   bool // the duration is the one the answer reports, {ns}
	samples []time.Duration
	// also, when set, is a second figure of the call just made (fan-out:
	// reply → last client notified), kept in alsoSamples beside each sample.
	also        func() time.Duration
	alsoSamples []time.Duration
}

// Ops run in blocks of back-to-back calls whose first blockWarm calls are
// not measured, so that a figure and its floors are all measured on a server
// that has just been busy: waking an idle Go process costs a few hundred µs
// of scheduling on this machine, which would favour whichever ran last.
// Blocks of all ops alternate round after round, so that every figure and
// its floors see the same machine over the same period (it is shared and
// noisy). Both are even, so that ops alternating two requests keep parity.
const block, blockWarm = 4, 2

// interleave runs rounds of one block per op until each has n samples after
// the warm-up rounds, whose answers are checked; per == 1 runs one call per
// op per round, unwarmed (start-up). The bench's garbage collector runs
// between rounds only, so that it never slows the client side of an op.
func (b *bench) interleave(per int, ops ...*op) error {
	return interleaveRounds(b.warm, b.n, per, ops...)
}

// interleaveRounds is interleave with warm calls unmeasured and n measured
// per op.
func interleaveRounds(warm, n, per int, ops ...*op) error {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	skip := 0
	if per > 1 {
		skip = blockWarm
	}
	warmRounds := (warm + per - 1) / per
	for r := 0; r < warmRounds+(n+per-1)/per; r++ {
		for _, o := range ops {
			for j := 0; j < skip+per; j++ {
				t0 := time.Now()
				raw, err := o.fn()
				d := time.Since(t0)
				if o.inner && err == nil {
					var in struct{ NS int64 }
					err = json.Unmarshal(raw, &in)
					d = time.Duration(in.NS)
				}
				if err == nil && r < warmRounds {
					err = toolError(raw)
				}
				if err != nil {
					return fmt.Errorf("%s: %w", o.label, err)
				}
				if r >= warmRounds && j >= skip {
					o.samples = append(o.samples, d)
					if o.also != nil {
						o.alsoSamples = append(o.alsoSamples, o.also())
					}
				}
			}
		}
		runtime.GC()
	}
	return nil
}

// execOp is an executeCommand op on c cycling through params.
func execOp(label string, c *client, params ...json.RawMessage) *op {
	i := 0
	return &op{label: label, fn: func() (json.RawMessage, error) {
		i++
		return c.exec(params[(i-1)%len(params)])
	}}
}

// figure is an agentd operation with its floors: (a) the floor server
// answering the same requests with agentd's own replies to them, and for a
// write (b) a bbolt Update of what a TodoList write of n items stores.
type figure struct {
	label, key    string
	op, echo, bbo *op // bbo: nil for reads
}

func (b *bench) figure(label, key string, c *client, n int, params ...json.RawMessage) (*figure, error) {
	for _, p := range params {
		reply, err := c.exec(p)
		if err == nil {
			err = toolError(reply)
		}
		if err == nil {
			_, err = b.floors.call("bench/can", map[string]json.RawMessage{"request": p, "reply": reply})
		}
		if echoed, e := b.floors.exec(p); err == nil && (e != nil || !bytes.Equal(echoed, reply)) {
			err = fmt.Errorf("the floor server does not answer with agentd's reply (%v)", e)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
	}
	f := &figure{label: label, key: key, op: execOp(label, c, params...), echo: execOp("(a) of "+label, b.floors, params...)}
	if n > 0 {
		f.bbo = b.boltOp(n)
	}
	return f, nil
}

// boltOp is floor (b) for a TodoList write of n items.
func (b *bench) boltOp(n int) *op {
	name := map[string]string{"name": fmt.Sprintf("items%d", n)}
	return &op{label: "(b) bbolt", inner: true, fn: func() (json.RawMessage, error) { return b.floors.call("bench/bolt", name) }}
}

func opsOf(figs ...*figure) []*op {
	var ops []*op
	for _, f := range figs {
		ops = append(ops, f.echo, f.op)
		if f.bbo != nil {
			ops = append(ops, f.bbo)
		}
	}
	return ops
}

// measure runs figures interleaved and reports them.
func (b *bench) measure(figs ...*figure) error {
	if err := b.interleave(block, opsOf(figs...)...); err != nil {
		return err
	}
	for _, f := range figs {
		b.report(f)
	}
	return nil
}

// report adds a figure against its floor: the median of (a), plus the
// median of (b) for a write.
func (b *bench) report(f *figure) {
	floor, tag := percentile(f.echo.samples, .5), "(a)"
	if f.bbo != nil {
		floor, tag = floor+percentile(f.bbo.samples, .5), "(a)+(b)"
	}
	b.rep.latency(f.label, f.key, f.op.samples, tag, floor)
}

// sizes are the list lengths of the list-length figures.
var sizes = []int{1, 10, 100, 200}

// itemsKey is the part of a JSON key that names a list of n items:
// "1_item", "10_items".
func itemsKey(n int) string {
	if n == 1 {
		return "1_item"
	}
	return fmt.Sprintf("%d_items", n)
}

// probe finds what agentd stores for one TodoList write of each length, in
// session "itemsN" of a state file read back once agentd has closed it, and
// hands it to the floor server.
func (b *bench) probe() error {
	stateDir, folder := filepath.Join(b.tmp, "probe-state"), b.folder("probe")
	c, err := b.startAgentd(stateDir, folder)
	if err != nil {
		return err
	}
	lengths := append([]int{items}, sizes...)
	for _, n := range lengths {
		if err == nil {
			err = c.checked(writes(fmt.Sprintf("items%d", n), n)[0])
		}
	}
	c.close()
	b.stored = map[int]stored{}
	for _, n := range lengths {
		name := fmt.Sprintf("items%d", n)
		if err == nil {
			b.stored[n], err = readStored(stateDir, folder, name)
		}
		if err == nil {
			_, err = b.floors.call("bench/data", map[string]any{"name": name, "data": b.stored[n]})
		}
	}
	return err
}

// core measures the main operations and their floors, interleaved.
func (b *bench) core() error {
	if err := b.useFloor("floor.db"); err != nil {
		return err
	}
	// Session "todo" holds the list; session "goal" a goal and an open turn,
	// begun by the host loop.
	w := writes("todo", items)
	if err := b.main.checked(w[0]); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), callLimit)
	defer cancel()
	host := &loop.Host{Executor: b.main.Conn, Session: "goal"}
	if err := host.Exec(ctx, protocol.CmdGoalCreate, &protocol.GoalCreateArgs{Objective: "Ship the new config format"}, nil); err != nil {
		return err
	}
	turn, _, err := host.BeginTurn(ctx, "user")
	if err != nil {
		return err
	}
	var figs []*figure
	for _, s := range []struct {
		label, key string
		n          int // floor (b) of a TodoList write of n items; 0 for reads
		params     []json.RawMessage
	}{
		{"TodoList write", "write", items, w},
		{"TodoList query", "read", 0, []json.RawMessage{tool("todo", "TodoList", map[string]any{})}},
		{string(protocol.CmdState), "state", 0, []json.RawMessage{command(string(protocol.CmdState), map[string]any{"session": "todo"})}},
		{"GetGoal (a read)", "get_goal", 0, []json.RawMessage{tool("goal", "GetGoal", map[string]any{})}},
		// Alternating, split below. Floor (b) is a TodoList write's: both
		// write the session record, and step.end (with tokens) an event too.
		{"step.begin/end", "", items, []json.RawMessage{command(string(protocol.CmdStepBegin), map[string]any{"session": "goal", "turnId": turn}),
			command(string(protocol.CmdStepEnd), map[string]any{"session": "goal", "turnId": turn, "outputTokens": 100, "finishReason": "tool_calls"})}},
	} {
		f, err := b.figure(s.label, s.key, b.main, s.n, s.params...)
		if err != nil {
			return err
		}
		figs = append(figs, f)
	}
	steps := figs[4]
	if err := b.interleave(block, opsOf(append(figs, steps)...)...); err != nil { // steps twice a round: n samples of each
		return err
	}
	r, data, write := &b.rep, b.stored[items], figs[0]
	r.section("floors of the TodoList write, same run")
	r.set("floor_echo_us", us(r.latency("(a) echo of its exchange, lsp.Conn over pipes", "floor_echo", write.echo.samples, "", 0)))
	r.set("floor_bbolt_us", us(r.latency("(b) bbolt Update+fsync of its stored bytes", "floor_bbolt", write.bbo.samples, "", 0)))
	r.value("stored session record + history event", "session_bytes", len(data.Session),
		fmt.Sprintf("%d B + %d B (%d items)", len(data.Session), len(data.Event), items))
	r.set("event_bytes", len(data.Event))
	r.section("operations over stdio; floor (a) of each is the echo of its own exchange")
	for _, f := range figs[:4] {
		b.report(f)
	}
	for i, name := range []string{"begin", "end"} {
		half := &figure{label: "agentd.step." + name + " (write)", key: "step_" + name, op: &op{}, echo: &op{}, bbo: steps.bbo}
		for j := i; j < len(steps.op.samples); j += 2 {
			half.op.samples = append(half.op.samples, steps.op.samples[j])
			half.echo.samples = append(half.echo.samples, steps.echo.samples[j])
		}
		b.report(half)
	}
	return nil
}

// scale measures writes of longer lists on the same agentd, each against
// floors of its own exchange and bytes.
func (b *bench) scale() error {
	if err := b.useFloor("floor.db"); err != nil {
		return err
	}
	b.rep.section("list length")
	var figs []*figure
	for _, n := range sizes {
		d, key, label := b.stored[n], itemsKey(n), strings.ReplaceAll(itemsKey(n), "_", " ")
		b.rep.value("stored bytes, "+label, "session_"+key+"_bytes", len(d.Session), fmt.Sprintf("%d B + %d B", len(d.Session), len(d.Event)))
		f, err := b.figure("TodoList write, "+label, "write_"+key, b.main, n, writes(fmt.Sprintf("items%d", n), n)...)
		if err != nil {
			return err
		}
		figs = append(figs, f)
	}
	return b.measure(figs...)
}

// fullHistory fills a session's history (and a floor file alongside),
// records the state file's size, then measures writes that each also drop
// the oldest event once the history is full.
func (b *bench) fullHistory() error {
	folder := b.folder("history")
	c, err := b.startAgentd(b.stateDir, folder)
	if err != nil {
		return err
	}
	defer c.close()
	if err := b.useFloor("floor-history.db"); err != nil {
		return err
	}
	floorFilled, bolt := make(chan error, 1), b.boltOp(items)
	go func() {
		var err error
		for i := 0; i < b.history && err == nil; i++ {
			_, err = bolt.fn()
		}
		floorFilled <- err
	}()
	w := writes("todo", items)
	t0 := time.Now()
	for i := 0; i < b.history && err == nil; i++ {
		_, err = c.exec(w[i%2])
	}
	took := time.Since(t0)
	if err2 := <-floorFilled; err == nil {
		err = err2
	}
	if err != nil {
		return err
	}
	fi, err := os.Stat(filepath.Join(b.stateDir, "workspaces", wsfolder.FolderKey(folder), "state.db"))
	if err != nil {
		return err
	}
	b.rep.section("history")
	b.rep.value("history events stored", "history_events", b.history, fmt.Sprintf("%d, written in %.1fs", b.history, took.Seconds()))
	b.rep.value(fmt.Sprintf("state file after %d writes", b.history), "db_after_writes_kib", fi.Size()>>10, fmt.Sprintf("%d KiB", fi.Size()>>10))
	f, err := b.figure(fmt.Sprintf("TodoList write, %d events stored", b.history), "write_full_history", c, items, w...)
	if err != nil {
		return err
	}
	return b.measure(f)
}
