package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace/etcdstore"
)

// TestPartsMakeTheRecord: the parts of a session's record have disjoint
// fields, and decoded into one record they give the whole record byte for
// byte (docs/team.md, "A session in parts").
func TestPartsMakeTheRecord(t *testing.T) {
	whole, d, err := encodeParts(fullSession())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for i, data := range d {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(data, &fields); err != nil {
			t.Fatalf("part %s: %v", partNames[i], err)
		}
		for k, v := range fields {
			if k == "goal" { // the goal's three parts share the goal object
				var inner map[string]json.RawMessage
				_ = json.Unmarshal(v, &inner)
				for ik := range inner {
					k := "goal." + ik
					if p, ok := seen[k]; ok {
						t.Errorf("field %s is in the parts %s and %s", k, p, partNames[i])
					}
					seen[k] = partNames[i]
				}
				continue
			}
			if p, ok := seen[k]; ok {
				t.Errorf("field %s is in the parts %s and %s", k, p, partNames[i])
			}
			seen[k] = partNames[i]
		}
	}
	rec, err := joinParts(d)
	if err != nil {
		t.Fatal(err)
	}
	joined, err := json.Marshal(rec)
	if err != nil || string(joined) != string(whole) {
		t.Errorf("the parts joined = %s (%v), want the whole record %s", joined, err, whole)
	}
}

// TestUndeclaredPartRefused: a change that writes a part it did not
// declare reading (Change.Reads) fails with an internal error, and nothing
// is written; declared, the same change is written.
func TestUndeclaredPartRefused(t *testing.T) {
	w := openWorkspace(t, newRegistry(t, t.TempDir()), folder(t))
	setTodos(t, w, "s", items("one"))
	change := func(reads Parts) func(s *Session) (Change, error) {
		return func(s *Session) (Change, error) {
			s.Todos = items("two")
			s.Goal.CancelNoticePending = true // the goal part
			return Change{Kind: "todo.set", Actor: "user", Todos: true, Reads: reads}, nil
		}
	}
	_, err := w.Update("s", change(PartTodo))
	if !errors.Is(err, ErrNotSaved) || !strings.Contains(err.Error(), "internal error") || !strings.Contains(err.Error(), "goal") {
		t.Fatalf("Update writing the goal part, declaring the todo part only = %v, want an internal error naming the goal part", err)
	}
	if s := mustView(t, w, "s"); s.Revision != 1 || s.Todos[0].Title != "one" || s.Goal.CancelNoticePending {
		t.Fatalf("after the refused change the session is %+v, want it as before", s)
	}
	if h := mustHistory(t, w, "s", 0); len(h) != 1 {
		t.Fatalf("the refused change appended history: %v", seqs(h))
	}
	if s, err := w.Update("s", change(PartTodo|PartGoal)); err != nil || s.Revision != 2 || !s.Goal.CancelNoticePending {
		t.Fatalf("Update declaring both parts = %+v, %v; want it written", s, err)
	}
}

// TestTeamSessionWrittenWhole: a session stored whole under s/<session>,
// as before parts, reads as that record on every daemon; the first change
// deletes that key and writes every part, and a daemon that read it whole
// then follows the parts. A daemon that opens the team raises its schema
// to the one of parts.
func TestTeamSessionWrittenWhole(t *testing.T) {
	c := etcdtest.Start(t, 1)
	id := NewTeamID()
	ra := newRegistry(t, t.TempDir(), func(o *Options) { o.Identity = "a" })
	a := openWorkspace(t, ra, accepted(t, ra, teamFolder(t, id, c.Endpoints())))
	old := newSession("old")
	old.Revision, old.TodosRevision, old.Todos = 3, 3, items("kept")
	old.TodoUsage = todo.Usage{Used: true, StepsSinceWrite: 2, WroteThisStep: true}
	old.UpdatedAt = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	data, err := encodeSession(old)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keys := etcdstore.KeysOf(id)
	// The keys as an earlier agentd left them: the whole record, schema 1.
	if _, err := cli.Txn(ctx).Then(clientv3.OpPut(keys.Session("old"), string(data)), clientv3.OpPut(keys.Meta(), `{"schema":1}`)).Commit(); err != nil {
		t.Fatal(err)
	}
	rb := newRegistry(t, t.TempDir(), func(o *Options) { o.Identity = "b" })
	b := openWorkspace(t, rb, accepted(t, rb, teamFolder(t, id, c.Endpoints())))
	if meta, err := cli.Get(ctx, keys.Meta()); err != nil || string(meta.Kvs[0].Value) != fmt.Sprintf(`{"schema":%d}`, teamSchema) {
		t.Fatalf("meta after a daemon opened the team: %v %v, want schema %d, which an earlier agentd refuses", meta.Kvs, err, teamSchema)
	}
	for _, w := range []*Workspace{a, b} {
		if s := mustView(t, w, "old"); s.Revision != 3 || s.Todos[0].Title != "kept" || s.TodoUsage != old.TodoUsage {
			t.Fatalf("the whole record reads %+v, want revision 3, its list and counters", s)
		}
	}
	setTodos(t, a, "old", items("kept", "added"))
	got, err := cli.Get(ctx, keys.Session("old"), clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, kv := range got.Kvs {
		stored = append(stored, strings.TrimPrefix(string(kv.Key), keys.Session("old")))
	}
	if want := []string{"/goal", "/head", "/queue", "/todo", "/turns", "/usage"}; !slices.Equal(stored, want) {
		t.Fatalf("keys of the session after its first change: %q, want its parts only %q", stored, want)
	}
	waitFor(t, "the other daemon to read the parts", func() bool { return mustView(t, b, "old").Revision == 4 })
	if s := mustView(t, b, "old"); len(s.Todos) != 2 || s.TodoUsage != old.TodoUsage {
		t.Fatalf("the other daemon reads %+v", s)
	}
	rc := newRegistry(t, t.TempDir(), func(o *Options) { o.Identity = "c" })
	cw := openWorkspace(t, rc, accepted(t, rc, teamFolder(t, id, c.Endpoints())))
	if s := mustView(t, cw, "old"); s.Revision != 4 || len(s.Todos) != 2 || s.TodoUsage != old.TodoUsage {
		t.Fatalf("a daemon opened after reads %+v", s)
	}
}
