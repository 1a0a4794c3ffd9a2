package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace/etcdstore"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// Bounds of one Txn of InitTeam's copy, below etcd's limits (128
// operations, 1.5 MiB per request).
const (
	copyTxnOps   = 100
	copyTxnBytes = 1 << 20
)

// TeamInit is what InitTeam did.
type TeamInit struct {
	Team    Team
	Already bool // the folder was a team folder already: nothing was copied
	// Pending: Already, and this machine has not accepted that team file
	// (teamaccept.go): what agentd.state says of it.
	Pending  *TeamFileNotice
	Sessions int // sessions copied
	Events   int // history events copied
}

// InitTeam makes the folder at root a team folder served by the etcd
// cluster at endpoints (docs/team.md, "Starting a team"): it takes the
// folder's bbolt file (its lock: a process serving the folder makes it fail
// with CodeLocked), copies every session and its whole history under a new
// team id, writes the team's meta key last (the copy is complete once it
// exists), then writes .agentd/team.json. A folder that already has a team
// file is left as it is (Already). The bbolt file is kept, unused. opts are
// those of the registry (StateDir, Team for TLS and credentials; its
// endpoints override endpoints as for any open). The team file it writes
// is accepted on this machine (its person chose the endpoints).
func InitTeam(opts Options, root string, endpoints []string) (TeamInit, error) {
	if t, err := ReadTeam(root); err != nil || t != nil {
		if t != nil {
			_, pending, err := teamOf(opts.StateDir, root)
			return TeamInit{Team: *t, Already: true, Pending: pending}, err
		}
		return TeamInit{}, err
	}
	if err := checkEndpoints(endpoints); err != nil {
		return TeamInit{}, &Error{Code: goal.CodeArgsInvalid, Msg: fmt.Sprintf("agentd team init --etcd: %v", err)}
	}
	opts.OnOpen, opts.OnPeerGone, opts.Identity, opts.NewIdentity = nil, nil, "", nil
	reg := NewRegistry(opts)
	defer reg.Close()
	w, err := reg.Open(root)
	if err != nil {
		return TeamInit{}, err
	}
	defer w.Release()
	if w.Shared() {
		return TeamInit{}, fmt.Errorf("workspace %s: a team file appeared while team init ran", root)
	}

	team := Team{ID: NewTeamID(), Etcd: endpoints}
	cli, eps, err := dialTeam(&team, opts.Team)
	if err != nil {
		return TeamInit{}, err
	}
	defer cli.Close()
	c := &teamCopy{cli: cli, keys: etcdstore.KeysOf(team.ID), root: root, eps: eps}
	if err := c.checkEmpty(); err != nil {
		return TeamInit{}, err
	}
	var cancel context.CancelFunc
	c.ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := TeamInit{Team: team}
	if out.Sessions, out.Events, err = c.copyState(w); err != nil {
		return TeamInit{}, err
	}
	if err := c.writeMeta(team.ID); err != nil {
		return TeamInit{}, err
	}
	if err := WriteTeam(root, team); err != nil {
		return TeamInit{}, fmt.Errorf("team init of workspace %s: the state is copied to team %s, but writing %s failed: %w", root, team.ID, TeamFile, err)
	}
	if res, err := acceptTeamFile(opts.StateDir, root, "", opts.Team); err != nil || res.Team.ID != team.ID {
		return TeamInit{}, fmt.Errorf("team init of workspace %s: %s is written, but accepting it on this machine failed (run %s): %v", root, TeamFile, TeamAcceptCommand, err)
	}
	return out, nil
}

// teamCopy is InitTeam's copy of a folder's state into a new team's keys,
// in Txns of at most copyTxnOps operations and copyTxnBytes.
type teamCopy struct {
	cli  *clientv3.Client
	keys etcdstore.Keys
	root string
	eps  []string
	ctx  context.Context // the copy's: a minute in all

	ops  []clientv3.Op
	size int
}

func (c *teamCopy) unreachable(what string, err error) error {
	return &Error{Code: CodeUnavailable, Err: err,
		Msg: fmt.Sprintf("team init of workspace %s: %s on etcd %s failed: %v; nothing was changed in the folder", c.root, what, strings.Join(c.eps, ","), err)}
}

// checkEmpty refuses a team prefix that holds keys. The first call, which
// also connects, gets etcdstore.OpTimeout as any call of a team store does.
func (c *teamCopy) checkEmpty() error {
	ctx, cancel := context.WithTimeout(context.Background(), etcdstore.OpTimeout)
	defer cancel()
	n, err := c.cli.Get(ctx, c.keys.Prefix(), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return c.unreachable("checking the new team's keys", noAnswer(err))
	} else if n.Count > 0 {
		return fmt.Errorf("team init of workspace %s: etcd already holds %d keys under %s: refusing to write over them", c.root, n.Count, c.keys.Prefix())
	}
	return nil
}

func (c *teamCopy) flush() error {
	if len(c.ops) == 0 {
		return nil
	}
	if _, err := c.cli.Txn(c.ctx).Then(c.ops...).Commit(); err != nil {
		return c.unreachable("copying the state", err)
	}
	c.ops, c.size = c.ops[:0], 0
	return nil
}

func (c *teamCopy) add(key string, value []byte) error {
	if len(c.ops) == copyTxnOps || c.size+len(value) > copyTxnBytes {
		if err := c.flush(); err != nil {
			return err
		}
	}
	c.ops = append(c.ops, clientv3.OpPut(key, string(value)))
	c.size += len(key) + len(value)
	return nil
}

// copyState copies every session of w with its whole history, each
// session after its events, and returns how many of each it copied.
func (c *teamCopy) copyState(w *Workspace) (sessions, events int, err error) {
	stored, err := w.store.List()
	if err != nil {
		return 0, 0, err
	}
	for _, s := range stored {
		sess, err := w.decodeStored(s.Name, s.Record)
		if err != nil {
			return 0, 0, err
		}
		_, parts, err := encodeParts(sess)
		if err != nil {
			return 0, 0, err
		}
		n, err := c.copyHistory(w, s.Name)
		if err != nil {
			return 0, 0, err
		}
		events += n
		for i, part := range parts { // a session in parts (parts.go)
			if err := c.add(c.keys.Part(s.Name, partNames[i]), part); err != nil {
				return 0, 0, err
			}
		}
		sessions++
	}
	return sessions, events, c.flush()
}

// copyHistory copies the history of session name, oldest first.
func (c *teamCopy) copyHistory(w *Workspace, name string) (int, error) {
	var events [][]byte // newest first, page by page
	for before := uint64(0); ; {
		page, more, err := w.store.History(name, MaxHistory, before)
		if err != nil {
			return 0, err
		}
		events = append(events, page...)
		if !more || len(page) == 0 {
			break
		}
		last, err := w.decodeEvent(name, page[len(page)-1])
		if err != nil {
			return 0, err
		}
		before = last.Seq
	}
	slices.Reverse(events) // oldest first
	for _, data := range events {
		ev, err := w.decodeEvent(name, data)
		if err != nil {
			return 0, err
		}
		if err := c.add(c.keys.Event(name, ev.Seq), data); err != nil {
			return 0, err
		}
	}
	return len(events), nil
}

// writeMeta writes the team's meta key, last: the copy is complete once
// it exists.
func (c *teamCopy) writeMeta(id string) error {
	meta, _ := json.Marshal(etcdstore.Meta{Schema: teamSchema})
	resp, err := c.cli.Txn(c.ctx).If(clientv3.Compare(clientv3.CreateRevision(c.keys.Meta()), "=", 0)).
		Then(clientv3.OpPut(c.keys.Meta(), string(meta))).Commit()
	if err != nil {
		return c.unreachable("writing the team's meta key", err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("team init of workspace %s: another process wrote the meta key of team %s meanwhile", c.root, id)
	}
	return nil
}

// TeamStatus says which store serves a folder (agentd team status).
type TeamStatus struct {
	Store     string   `json:"store"`               // "bbolt" or "etcd"
	StateFile string   `json:"stateFile,omitempty"` // bbolt: the state file
	Team      string   `json:"team,omitempty"`      // etcd: the team id
	Endpoints []string `json:"endpoints,omitempty"` // etcd: the endpoints used (this machine's override, else team.json's)
	Reachable bool     `json:"reachable"`           // bbolt: always; etcd: a linearizable read answered
	RTTMs     float64  `json:"rttMs,omitempty"`     // etcd: the round-trip time of that read, in milliseconds
	Error     string   `json:"error,omitempty"`     // etcd: why it is not reachable, or what its alarms mean and their fix
	// Alarms are the etcd cluster's raised alarms ("NOSPACE": its database
	// reached its quota and every write is refused; "CORRUPT").
	Alarms []string `json:"alarms,omitempty"`
	// Revision is the cluster's revision now; Compacted the revision the
	// team's daemons last compacted etcd's history to (0: never), so
	// Revision - Compacted revisions of history are kept ("A full etcd").
	Revision  int64 `json:"revision,omitempty"`
	Compacted int64 `json:"compacted,omitempty"`
	// TeamFile: bbolt serves a folder whose team file this machine does
	// not use (not accepted, or unusable), as agentd.state says it.
	TeamFile *TeamFileNotice `json:"teamFile,omitempty"`
}

// StatusOf reports the store of the folder at root with this machine's
// options, reading the meta key once (a linearizable read, at most
// etcdstore.OpTimeout) for an etcd store. It opens nothing of the folder.
func StatusOf(opts Options, root string) (TeamStatus, error) {
	t, notice, err := teamOf(opts.StateDir, root)
	if err != nil {
		return TeamStatus{}, err
	}
	if t == nil {
		return TeamStatus{Store: "bbolt", StateFile: wsfolder.StateFile(opts.StateDir, root), Reachable: true, TeamFile: notice}, nil
	}
	cli, eps, err := dialTeam(t, opts.Team)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Code == CodeUnavailable {
			return TeamStatus{Store: "etcd", Team: t.ID, Endpoints: t.Etcd, Error: err.Error()}, nil
		}
		return TeamStatus{}, err
	}
	defer cli.Close()
	st := TeamStatus{Store: "etcd", Team: t.ID, Endpoints: eps}
	ctx, cancel := context.WithTimeout(context.Background(), etcdstore.OpTimeout)
	defer cancel()
	// The first read also connects; the second is the round trip.
	if _, err := cli.Get(ctx, etcdstore.KeysOf(t.ID).Meta()); err != nil {
		st.Error = noAnswer(err).Error()
		return st, nil
	}
	start := time.Now()
	if _, err := cli.Get(ctx, etcdstore.KeysOf(t.ID).Meta()); err != nil {
		st.Error = noAnswer(err).Error()
		return st, nil
	}
	st.Reachable = true
	st.RTTMs = float64(time.Since(start).Microseconds()) / 1000
	if err := st.readHealth(ctx, cli, etcdstore.KeysOf(t.ID)); err != nil {
		st.Error = noAnswer(err).Error()
	}
	return st, nil
}

// noAnswer says, of a team call that ran out of its etcdstore.OpTimeout, that
// etcd gave no answer within it ("no answer within 2s: context deadline
// exceeded"); other errors are returned as they are (docs/team.md).
func noAnswer(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %v: %w", etcdstore.OpTimeout, err)
	}
	return err
}
