package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/tests/etcdtest"
)

// teamDelays are the one-way delays between agentd and etcd that
// teamDelay measures at, and teamDelayN the writes it measures at each
// (at 100 ms a write takes two round trips of the delay at least: a long
// figure gains nothing).
var teamDelays = []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond}

const teamDelayN = 40

// teamDelayID is the team of teamDelay's folder.
const teamDelayID = "5d2c9b1e-3f4a-4c6d-9e8f-7a1b2c3d4e5f"

// teamDelay measures a TodoList write of a team folder (docs/team.md, "A
// far machine") with the one-way delay of teamDelays added each way
// between agentd and its etcd member (the member's test proxy), against
// the floor of an etcd Txn made through the same proxy at the same delay,
// in the same run: the ratio is what agentd adds to one round trip.
func (b *bench) teamDelay() error {
	t := &benchT{dir: filepath.Join(b.tmp, "etcd-delay")}
	defer t.done()
	c := etcdtest.Start(t, 1)
	folders, err := b.teamFolders(c.Endpoints(), teamDelayID, "teamFar")
	if err != nil {
		return err
	}
	writer, err := b.startAgentd(filepath.Join(b.tmp, "teamFar-state"), folders[0])
	if err != nil {
		return err
	}
	defer writer.close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer cli.Close()
	proxy := c.Members[0].Proxy()
	defer proxy.Restore()
	w := writesIn(folders[0], "far", items)
	txn := b.txnFloor(cli) // one, whose compare follows its own writes
	b.rep.section("team folder: etcd, one embedded member behind a proxy that delays each way")
	for _, d := range teamDelays {
		proxy.Delay(etcdtest.ToServer, d)
		proxy.Delay(etcdtest.ToClient, d)
		i := 0
		write := &op{label: "team TodoList write", inner: true, fn: func() (json.RawMessage, error) {
			i++
			t0 := time.Now()
			raw, err := writer.exec(w[i%len(w)])
			if err == nil {
				err = toolError(raw)
			}
			return fmt.Appendf(nil, `{"ns":%d}`, time.Since(t0)), err
		}}
		txn.samples = nil
		if err := interleaveRounds(5, min(b.n, teamDelayN), 1, write, txn); err != nil {
			return err
		}
		ms := d.Milliseconds()
		floor := b.rep.latency(fmt.Sprintf("(c) etcd Txn, %d ms one way", ms), fmt.Sprintf("floor_txn_%dms", ms), txn.samples, "", 0)
		b.rep.latency(fmt.Sprintf("team TodoList write, %d ms one way", ms), fmt.Sprintf("team_write_%dms", ms), write.samples, "(c)", floor)
	}
	return nil
}
