package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/workspace/storage"
)

// quotaStore opens a store on one member whose database quota is quota
// bytes, compacting every compact (0: the default 5 min, so never within
// a test), with a session's history bounded to 64 KiB so that what agentd
// keeps is far below the quota: what fills it is etcd's history.
func quotaStore(t *testing.T, quota int64, compact time.Duration) (*Store, *clientv3.Client) {
	t.Helper()
	c := etcdtest.Start(t, 1, etcdtest.WithQuota(quota))
	var clients Clients
	cl, err := clients.Get("quota", clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: DialTimeout, Logger: zap.NewNop()}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lim := storage.Limits{MaxSessions: 5, MaxHistory: 10000, MaxHistoryBytes: 64 << 10}
	s, err := Open(cl, Options{ID: "quota", Endpoints: c.Endpoints(), Identity: "daemon", Schema: 1,
		Root: "/folder", Now: time.Now,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Limits: func() storage.Limits { return lim },
		Remote: func(string, storage.Record, []byte, []byte) {}, Stale: func(bool) {}, CompactInterval: compact})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	s.Serve()
	t.Cleanup(func() { s.Close() })
	obs, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: DialTimeout, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { obs.Close() })
	return s, obs
}

// writeBig commits revision seq of session s, a record of 16 KB with a
// small event, on base; it returns the new version.
func writeBig(s *Store, seq uint64, base int64) (int64, error) {
	rec := fmt.Appendf(nil, "%d %s", seq, strings.Repeat("x", 16<<10))
	c := &storage.Commit{Session: "s", Parts: parts(string(rec)), Read: readAt(base), Flags: []byte("{}"),
		Event: &storage.Event{Seq: seq, Encode: func(seq uint64) []byte { return fmt.Appendf(nil, `{"seq":%d}`, seq) }}}
	err := s.Commit(c)
	return c.Version, err
}

// codeOf is the code of a store's refusal, "" for another error.
func codeOf(err error) string {
	var e *storage.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func health(t *testing.T, obs *clientv3.Client) Health {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), OpTimeout)
	defer cancel()
	h, err := ReadHealth(ctx, obs, KeysOf("quota"))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestCompactionKeepsEtcdBounded: a daemon compacts etcd's history (every
// 50 ms here, 5 min by default), so 400 writes of 16 KB, about 6 MiB of
// history, fit in a database quota of 4 MiB, and the compact key records
// it. Without compaction the quota refuses write 189 or so. Every 25
// writes wait until the compaction passed the revision of 25 writes
// before: what is tested is that compaction bounds etcd, and a loop that
// only writes outran a compaction every 50 ms on a loaded machine (the
// quota refused write 346).
func TestCompactionKeepsEtcdBounded(t *testing.T) {
	s, obs := quotaStore(t, 4<<20, 50*time.Millisecond)
	var ver, mark int64
	for i := range 400 {
		if i%25 == 0 {
			deadline := time.Now().Add(time.Minute) // against a hang only
			for h := health(t, obs); h.Compacted < mark; h = health(t, obs) {
				if time.Now().After(deadline) {
					t.Fatalf("after write %d the compaction stays at revision %d, below %d", i, h.Compacted, mark)
				}
				time.Sleep(20 * time.Millisecond)
			}
			mark = health(t, obs).Revision
		}
		var err error
		if ver, err = writeBig(s, uint64(i+1), ver); err != nil {
			t.Fatalf("write %d of 400: %v (code %q)", i+1, err, codeOf(err))
		}
	}
	h := health(t, obs)
	if len(h.Alarms) > 0 || h.Compacted == 0 || h.Compacted >= h.Revision {
		t.Fatalf("health = %+v; want no alarm, compacted below the revision", h)
	}
	t.Logf("400 writes of 16 KB within a 4 MiB quota; history compacted to revision %d of %d", h.Compacted, h.Revision)
}

// TestQuotaFullIsNoSpace: with no compaction, writes of 16 KB fill a 2 MiB
// quota; the write etcd refuses answers workspace.no_space with the fix,
// not workspace.unavailable blaming reachability; reads go on and the
// store is not stale; the NOSPACE alarm is read.
func TestQuotaFullIsNoSpace(t *testing.T) {
	s, obs := quotaStore(t, 2<<20, 0)
	var ver int64
	var err error
	n := 0
	for n < 1000 && err == nil {
		n++
		var v int64
		if v, err = writeBig(s, uint64(n), ver); err == nil {
			ver = v
		}
	}
	if codeOf(err) != storage.CodeNoSpace {
		t.Fatalf("after %d writes: %v (code %q), want %s", n, err, codeOf(err), storage.CodeNoSpace)
	}
	for _, want := range []string{"database is full", "NOSPACE", "etcdctl defrag", "etcdctl alarm disarm", "--quota-backend-bytes", "nothing was written"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %s", want, err)
		}
	}
	if strings.Contains(err.Error(), "did not answer") {
		t.Errorf("message blames reachability: %s", err)
	}
	if s.Stale() {
		t.Error("a full etcd marked the store stale: it answers")
	}
	if rec, err := s.Get("s"); err != nil || rec.Parts["r"].Version != ver {
		t.Errorf("Get = %+v, %v; want version %d", rec, err, ver)
	}
	if h := health(t, obs); !h.NoSpace() {
		t.Fatalf("health = %+v, want the NOSPACE alarm", h)
	}
	t.Logf("the 2 MiB quota refused write %d", n)
}
