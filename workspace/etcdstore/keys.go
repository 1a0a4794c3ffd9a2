package etcdstore

import (
	"fmt"
	"net/url"
	"strings"
)

// The key layout of a team, one place (docs/team.md, "Key layout"):
//
//	/agentd/<id>/meta                 {"schema": N}: the schema version (Meta); written last by team init
//	/agentd/<id>/s/<session>/<part>   a part of the session's record (head, todo, usage, goal, turns, queue); <session> is url.PathEscape'd (no "/")
//	/agentd/<id>/s/<session>          the session's whole record, as written before parts (read, then deleted by the next commit)
//	/agentd/<id>/h/<session>/<seq>    an event's record; <seq> in 20 decimal digits, so key order is seq order
//	/agentd/<id>/c/<session>          the change flags of the session's last change (storage.Commit.Flags)
//	/agentd/<id>/live/<daemon>        {"pid", "startedAt"}, attached to the daemon's lease (LeaseTTL)
//	/agentd/<id>/turn/<session>       the identity of the daemon whose turn it is to write the session (turn.go), attached to its lease
//	/agentd/<id>/compact              the revision of the last compaction; its version counts them (compact.go)
//
// A commit is one Txn, one round trip: compare the ModRevision of each part
// the change read and of the whole record (0: none) with the ones it read,
// the session's turn key (turn.go) and that the daemon's live key is
// attached to its lease (fence.go), then read the events of other daemons
// this one has not seen (to keep its index of the history), put the parts
// it changed, its event and change flags, delete the history beyond its
// bounds with one range delete (and the whole record when it read one, the
// turn key when this daemon held it): at most 12 operations (etcd refuses
// more than 128) and, for the largest session, about 0.8 MiB (etcd refuses
// requests over 1.5 MiB).

// Keys builds the keys of one team.
type Keys struct{ prefix string }

// KeysOf returns the keys of team id.
func KeysOf(id string) Keys { return Keys{prefix: "/agentd/" + id + "/"} }

// Prefix is the prefix of every key of the team.
func (k Keys) Prefix() string { return k.prefix }

// Meta is the key of the team's schema version.
func (k Keys) Meta() string { return k.prefix + "meta" }

// Session is the key of session name's whole record, as written before
// parts; its parts are under it, after a "/".
func (k Keys) Session(name string) string { return k.sessions() + url.PathEscape(name) }

// Part is the key of part of session name's record.
func (k Keys) Part(name, part string) string { return k.Session(name) + "/" + part }

// sessionKey parses a key of a session's record: its name, and its part
// ("" for a whole record).
func (k Keys) sessionKey(key string) (name, part string, ok bool) {
	rest, ok := strings.CutPrefix(key, k.sessions())
	if !ok {
		return "", "", false
	}
	esc, part, _ := strings.Cut(rest, "/")
	name, err := url.PathUnescape(esc)
	return name, part, err == nil
}

// Event is the key of event seq of session name.
func (k Keys) Event(name string, seq uint64) string {
	return fmt.Sprintf("%s%020d", k.history(name), seq)
}

// Compact is the key whose compare-and-set picks the daemon that compacts
// etcd's history (compact.go); its value is the revision compacted to.
func (k Keys) Compact() string { return k.prefix + "compact" }

func (k Keys) sessions() string            { return k.prefix + "s/" }
func (k Keys) history(name string) string  { return k.prefix + "h/" + url.PathEscape(name) + "/" }
func (k Keys) change(name string) string   { return k.prefix + "c/" + url.PathEscape(name) }
func (k Keys) lives() string               { return k.prefix + "live/" }
func (k Keys) live(identity string) string { return k.lives() + url.PathEscape(identity) }
func (k Keys) turn(name string) string     { return k.prefix + "turn/" + url.PathEscape(name) }

// Meta is the value of the meta key.
type Meta struct {
	Schema uint32 `json:"schema"`
}
