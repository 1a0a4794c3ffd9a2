package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/tests/etcdtest"
)

// benchT is what etcdtest.Start needs, for a program: temporary
// directories under the run's, cleanups run by done, a failure ends the run.
type benchT struct {
	dir      string
	n        int
	cleanups []func()
}

func (t *benchT) Helper() {}
func (t *benchT) Fatalf(format string, args ...any) {
	t.done()
	fatal(fmt.Errorf(format, args...))
}
func (t *benchT) TempDir() string {
	t.n++
	dir := filepath.Join(t.dir, fmt.Sprintf("etcd%d", t.n))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("%v", err)
	}
	return dir
}
func (t *benchT) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }
func (t *benchT) done() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	t.cleanups = nil
}

// teamID is the team of the run's team folders.
const teamID = "0b4a7e5c-9d1e-4f2a-8b6c-3e5d7f9a1c20"

// team measures a team folder (docs/team.md) on one embedded etcd member in
// this process: a TodoList write through a stdio agentd serving the folder
// from etcd, against floor (a) of its exchange plus an etcd Txn floor of
// the same run (the compare-and-set Txn of the same stored bytes, made by
// this process's etcd client), and the time from that write's reply to
// the agentd/todoChanged of a client of a second agentd (own state
// directory) serving a clone of the folder, counted from the write's
// request (its reply and the other daemon's watch event leave etcd at about
// the same time).
func (b *bench) team() error {
	t := &benchT{dir: filepath.Join(b.tmp, "etcd")}
	defer t.done()
	c := etcdtest.Start(t, 1)
	folders, err := b.teamFolders(c.Endpoints(), teamID, "teamA", "teamB")
	if err != nil {
		return err
	}
	writer, err := b.startAgentd(filepath.Join(b.tmp, "teamA-state"), folders[0])
	if err != nil {
		return err
	}
	defer writer.close()
	other, err := spawn(b.agentd(filepath.Join(b.tmp, "teamB-state")), b.log, "team")
	if err != nil {
		return err
	}
	defer other.close()
	if err := other.initialize(folders[1]); err != nil {
		return err
	}
	w := writesIn(folders[0], "team", items)
	f, err := b.figure("team TodoList write", "team_write", writer, 0, w...)
	if err != nil {
		return err
	}
	for range w { // the notifications of figure's canning writes
		select {
		case <-other.notes:
		case <-time.After(callLimit):
			return errors.New("the other agentd's client never received agentd/todoChanged")
		}
	}
	var notified time.Duration
	i := 0
	f.op = &op{label: f.label, inner: true, also: func() time.Duration { return notified }, fn: func() (json.RawMessage, error) {
		i++
		t0 := time.Now()
		raw, err := writer.exec(w[i%len(w)])
		reply := time.Now()
		if err == nil {
			err = toolError(raw)
		}
		if err == nil {
			select {
			case at := <-other.notes:
				notified = at.Sub(t0)
			case <-time.After(callLimit):
				err = errors.New("the other agentd's client never received agentd/todoChanged")
			}
		}
		return fmt.Appendf(nil, `{"ns":%d}`, reply.Sub(t0)), err
	}}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer cli.Close()
	txn := b.txnFloor(cli)
	if err := b.interleave(block, f.echo, f.op, txn); err != nil {
		return err
	}
	r := &b.rep
	r.section("team folder: etcd, one embedded member on loopback")
	r.set("floor_txn_us", us(r.latency("(c) etcd Txn: compare-and-set of its stored bytes", "floor_txn", txn.samples, "", 0)))
	r.latency(f.label, f.key, f.op.samples, "(a)+(c)", percentile(f.echo.samples, .5)+percentile(txn.samples, .5))
	r.latency("write request → client of the other agentd notified", "team_notify", f.op.alsoSamples, "", 0)
	return nil
}

// teamFolders makes the run's team folders of team id, one per name, each
// with a team file naming the etcd endpoints and accepted by its own state
// directory's person (docs/team.md), and returns them.
func (b *bench) teamFolders(endpoints []string, id string, names ...string) ([]string, error) {
	team, _ := json.Marshal(map[string]any{"id": id, "etcd": endpoints})
	var folders []string
	for _, name := range names {
		f := b.folder(name)
		if err := os.MkdirAll(filepath.Join(f, ".agentd"), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(f, ".agentd", "team.json"), team, 0o600); err != nil {
			return nil, err
		}
		accept := b.agentd(filepath.Join(b.tmp, name+"-state"), "team", "accept", "--workspace", f)
		if out, err := accept.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("agentd team accept: %v: %s", err, out)
		}
		folders = append(folders, f)
	}
	return folders, nil
}

// txnFloor is the etcd floor of a team write: one Txn that compares a
// session key's revision and puts the session record, the history event
// and the change flags a TodoList write of items items stores (4 keys of
// the layout of docs/team.md, but the range delete, which finds nothing).
func (b *bench) txnFloor(cli *clientv3.Client) *op {
	data := b.stored[items]
	const prefix = "/agentd-bench-floor/"
	var rev int64
	seq := 0
	return &op{label: "(c) etcd Txn", inner: true, fn: func() (json.RawMessage, error) {
		seq++
		ctx, cancel := context.WithTimeout(context.Background(), callLimit)
		defer cancel()
		t0 := time.Now()
		resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(prefix+"s/team"), "=", rev)).
			Then(clientv3.OpPut(prefix+"s/team", string(data.Session)),
				clientv3.OpPut(fmt.Sprintf("%sh/team/%020d", prefix, seq), string(data.Event)),
				clientv3.OpPut(prefix+"c/team", `{"revision":1,"todos":true}`)).Commit()
		d := time.Since(t0)
		if err == nil && !resp.Succeeded {
			err = errors.New("the floor's compare failed")
		}
		if err != nil {
			return nil, err
		}
		rev = resp.Header.Revision
		return fmt.Appendf(nil, `{"ns":%d}`, d), nil
	}}
}
