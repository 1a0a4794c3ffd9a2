package workspace

import (
	"encoding/json"
	"strings"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace/etcdstore"
)

// Team mode (docs/team.md): a folder whose .agentd/team.json names a team id
// and etcd endpoints keeps its sessions and history in that etcd cluster
// instead of its bbolt file; the store is workspace/etcdstore, which keeps
// the records of record.go as opaque bytes (its key layout is in its
// keys.go). This file opens it and takes in the changes of other daemons
// it relays.

// TeamFile is the path of a folder's team file, relative to the folder.
const TeamFile = ".agentd/team.json"

// teamSchema is the schema version of a team's etcd keys this build
// writes (the meta key, etcdstore.Meta): 2 since sessions are kept in
// parts (docs/team.md, "A session in parts"). A daemon of this build
// raises a team at 1 to 2 when it opens it, so that an earlier agentd,
// which would take a session kept in parts for none, refuses the team.
const teamSchema = 2

// changeFlags is the change flags of a commit (storage.Commit.Flags,
// opaque to the store): what the change of Revision told clients, for the
// daemons that learn it from the watch.
type changeFlags struct {
	Revision uint64 `json:"revision"`
	Todos    bool   `json:"todos,omitempty"`
	Goal     bool   `json:"goal,omitempty"`
	TaskFile bool   `json:"taskFile,omitempty"`
	Queue    bool   `json:"queue,omitempty"`
	// Completed is Change.Completed as its snapshot's JSON (the wire form
	// of docs/protocol.md §3), GoalKind and Percent as in Change.
	Completed json.RawMessage `json:"completed,omitempty"`
	GoalKind  string          `json:"goalKind,omitempty"`
	Percent   int             `json:"percent,omitempty"`
}

// flagsOf is what other daemons of a team tell their clients of ch, the
// change of revision rev.
func flagsOf(rev uint64, ch Change) ([]byte, error) {
	f := changeFlags{Revision: rev, Todos: ch.Todos, Goal: ch.Goal, TaskFile: ch.TaskFile,
		Queue: ch.Queue, GoalKind: string(ch.GoalKind), Percent: ch.Percent}
	if ch.Completed != nil {
		var err error
		if f.Completed, err = json.Marshal(ch.Completed); err != nil {
			return nil, err
		}
	}
	return json.Marshal(f)
}

// apply sets on ch what f says the change told clients.
func (f *changeFlags) apply(ch *Change) {
	ch.Todos, ch.Goal, ch.TaskFile, ch.Queue = f.Todos, f.Goal, f.TaskFile, f.Queue
	ch.GoalKind, ch.Percent = goal.ChangeKind(f.GoalKind), f.Percent
	if len(f.Completed) > 0 {
		var snap goal.Snapshot
		if json.Unmarshal(f.Completed, &snap) == nil {
			ch.Completed = &snap
		}
	}
}

// openTeam opens the team store of w (workspace/etcdstore). The cluster
// must answer (within etcdstore.OpTimeout): a folder is not served from a
// state nobody can read.
func (r *Registry) openTeam(w *Workspace, t *Team) error {
	cfg, eps, err := teamConfig(t, r.opts.Team)
	if err != nil {
		return err
	}
	// One client per cluster, shared by the daemon's team folders
	// (docs/team.md, "Faults").
	o := r.opts.Team
	key := strings.Join([]string{strings.Join(eps, ","), o.CACert, o.Cert, o.Key, o.User, o.Password}, "\x00")
	c, err := r.clients.Get(key, cfg, r.log)
	if err != nil {
		return err
	}
	w.path = "etcd " + strings.Join(eps, ",") + " " + etcdstore.KeysOf(t.ID).Prefix()
	opts := etcdstore.Options{ID: t.ID, Endpoints: eps, Identity: r.Identity(), NewIdentity: r.newIdentity, Schema: teamSchema,
		Root: w.root, Now: r.now, Log: r.log, Limits: limits, Remote: w.fromWatch,
		Stale: func(stale bool) { r.publishStore(w, stale) }}
	if r.opts.OnPeerGone != nil {
		opts.PeerGone = func(identity string) { r.opts.OnPeerGone(w, identity) }
	}
	ts, err := etcdstore.Open(c, opts)
	if err != nil {
		return err
	}
	w.store = r.wrap(ts)
	ts.Serve()
	return nil
}

// Alive says whether the daemon of that identity (a service clock) holds
// its lease on the team of w, asking etcd (a linearizable read); when etcd
// does not answer, from the live keys last seen. Always false for a folder
// served by bbolt.
func (w *Workspace) Alive(identity string) bool {
	t := w.team()
	return t != nil && identity != "" && t.Alive(identity)
}

// Stale says whether w's state may be behind: a team store that cannot
// reach etcd serves the last state it saw (docs/team.md, "Faults"). Always
// false for bbolt.
func (w *Workspace) Stale() bool {
	t := w.team()
	return t != nil && t.Stale()
}
