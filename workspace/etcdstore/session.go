package etcdstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/workspace/storage"
)

// A session is kept in parts (docs/team.md, "A session in parts"): each
// part of its record under s/<session>/<part>, written by the commits that
// change it; a session written before parts existed has its whole record
// under s/<session> until its next commit, which deletes that key and
// writes every part (keys.go).

// sessionOp reads every key of session name: its parts and a whole record
// of the layout before parts, with the keys of other sessions whose
// escaped names sort between them (recordOf leaves those out).
func (s *Store) sessionOp(name string) clientv3.Op {
	k := s.keys.Session(name)
	return clientv3.OpGet(k, clientv3.WithRange(k+"0")) // "0" follows "/"
}

// recordOf is the record of session name among kvs (of sessionOp).
func (s *Store) recordOf(name string, kvs []*mvccpb.KeyValue) storage.Record {
	var rec storage.Record
	for _, kv := range kvs {
		if n, part, ok := s.keys.sessionKey(string(kv.Key)); ok && n == name {
			addKey(&rec, part, kv.Value, kv.ModRevision)
		}
	}
	return rec
}

// addKey adds a session key's value to rec: part "" is the whole record.
func addKey(rec *storage.Record, part string, value []byte, version int64) {
	if part == "" {
		rec.Data, rec.Version = value, version
		return
	}
	if rec.Parts == nil {
		rec.Parts = map[string]storage.Part{}
	}
	rec.Parts[part] = storage.Part{Data: value, Version: version}
}

func (s *Store) Get(name string) (storage.Record, error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	resp, err := s.cli.Do(ctx, s.sessionOp(name))
	if err != nil {
		return storage.Record{}, s.unavailable(fmt.Sprintf("reading session %q", name), err, false)
	}
	return s.recordOf(name, resp.Get().Kvs), nil
}

func (s *Store) List() ([]storage.Named, error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	resp, err := s.cli.Get(ctx, s.keys.sessions(), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, s.unavailable("listing sessions", err, false)
	}
	return s.group(resp.Kvs), nil
}

// group gathers the session keys of kvs into one record per session, in
// name (byte) order.
func (s *Store) group(kvs []*mvccpb.KeyValue) []storage.Named {
	by := map[string]*storage.Named{}
	var out []storage.Named
	for _, kv := range kvs {
		name, part, ok := s.keys.sessionKey(string(kv.Key))
		if !ok {
			continue
		}
		n := by[name]
		if n == nil {
			n = &storage.Named{Name: name}
			by[name] = n
		}
		addKey(&n.Record, part, kv.Value, kv.ModRevision)
	}
	for _, n := range by {
		out = append(out, *n)
	}
	slices.SortFunc(out, func(a, b storage.Named) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// countSessions counts the stored sessions (the keys of their parts and
// whole records, one per session).
func (s *Store) countSessions(ctx context.Context) (int, error) {
	resp, err := s.cli.Get(ctx, s.keys.sessions(), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return 0, err
	}
	names := map[string]bool{}
	for _, kv := range resp.Kvs {
		if name, _, ok := s.keys.sessionKey(string(kv.Key)); ok {
			names[name] = true
		}
	}
	return len(names), nil
}
