package etcdstore

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/workspace/storage"
	"github.com/agentd/agentd/workspace/storetest"
)

// daemons numbers the stores the tests open, each a daemon of its own.
var daemons atomic.Int64

// open returns a store of a new team on the cluster's endpoints, as the
// registry opens one, with lim as its bounds: a daemon of its own.
func open(t *testing.T, eps []string, id string, lim storage.Limits) *Store {
	t.Helper()
	return openOn(t, new(Clients), eps, id, fmt.Sprintf("daemon-%d", daemons.Add(1)), lim)
}

// openOn returns a store of team id on the clients of one daemon, whose
// identity it is; each of more changes its options first.
func openOn(t *testing.T, clients *Clients, eps []string, id, identity string, lim storage.Limits, more ...func(*Options)) *Store {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := clients.Get(strings.Join(eps, ","), clientv3.Config{Endpoints: eps, DialTimeout: DialTimeout, Logger: zap.NewNop()}, log)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{ID: id, Endpoints: eps, Identity: identity, Schema: 1,
		Root: "/folder/" + id, Now: time.Now,
		Log: log, Limits: func() storage.Limits { return lim },
		Remote: func(string, storage.Record, []byte, []byte) {}, Stale: func(bool) {}}
	for _, f := range more {
		f(&o)
	}
	s, err := Open(c, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	s.Serve()
	return s
}

// parts are the parts of a commit of the record data: one part, "r".
func parts(data string) map[string][]byte { return map[string][]byte{"r": []byte(data)} }

// readAt is a commit's read of part "r" at version ver.
func readAt(ver int64) map[string]int64 { return map[string]int64{"r": ver} }

// stored is the record of part "r" of rec and its version.
func stored(rec storage.Record) ([]byte, int64) { return rec.Parts["r"].Data, rec.Parts["r"].Version }

// TestConformance: a team's etcd store keeps the contract of
// storage.Interface, on an embedded etcd member.
func TestConformance(t *testing.T) {
	c := etcdtest.Start(t, 1)
	lim := storage.Limits{MaxSessions: 5, MaxHistory: 4, MaxHistoryBytes: 4 << 20}
	n := 0
	storetest.Run(t, storetest.Backend{
		Limits:    lim,
		Versioned: true,
		Open: func(t *testing.T) storage.Interface {
			n++
			return open(t, c.Endpoints(), fmt.Sprintf("conformance-%d", n), lim)
		},
	})
}
