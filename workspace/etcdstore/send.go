package etcdstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/workspace/storage"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// What a write acknowledges (docs/team.md): a commit's Txn is sent, and
// sent again, until an answer says what became of it. A send that got no
// answer (a timeout, a connection broken after the request went out) may
// have been applied; the same Txn sent again cannot apply twice, since it
// compares the session's mod revision with the one both copies were
// computed on. When a copy finds the session moved, the write's own mark
// (its history event, or for a quiet change its record, byte for byte)
// says whether the move was an earlier copy of it.

// resendPause is the pause between two copies of a write whose first got
// no answer: the client meanwhile connects again (at once: gRPC's backoff
// is reset by the probe, and a broken connection is redialed).
const resendPause = 20 * time.Millisecond

// sentKey is the context key of a call's sentMark.
type sentKey struct{}

// sentMark records whether a call's request went out on a connection: an
// etcd call that fails before is known not to have been applied.
type sentMark struct{ sent atomic.Bool }

// SentStats is the gRPC stats handler of a team's client (a DialOption of
// the client the registry dials): it marks the
// sentMark of a call's context once the call's request is written to a
// connection (docs/team.md, "What a write acknowledges").
type SentStats struct{}

func (SentStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (SentStats) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if p, ok := s.(*stats.OutPayload); ok && p.IsClient() {
		if m, _ := ctx.Value(sentKey{}).(*sentMark); m != nil {
			m.sent.Store(true)
		}
	}
}

func (SentStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (SentStats) HandleConn(context.Context, stats.ConnStats)                       {}

// writeMark is what identifies one write among the copies of it and the
// writes of other daemons: the key it puts and the value it puts there.
type writeMark struct {
	key   string
	value []byte
}

// sendOutcome is the answer to a write's Txn.
type sendOutcome struct {
	resp *clientv3.TxnResponse // nil when no copy was answered
	// mine: the Txn's compare failed because an earlier copy of the write
	// was applied, at revision version.
	mine    bool
	version int64
	// sent: a copy went out without an answer (when resp is nil, the
	// write's outcome is unknown).
	sent bool
}

// sendWrite commits the write cmp/then in one Txn whose else branch runs
// elseOps and then reads mark's key (the else branch's last response),
// sending it again while a copy that went out got no answer, until
// deadline. err is the last copy's error when no copy was answered.
func sendWrite(ctx context.Context, cli *clientv3.Client, deadline time.Time, cmp []clientv3.Cmp, then, elseOps []clientv3.Op, mark writeMark) (sendOutcome, error) {
	elseOps = append(elseOps[:len(elseOps):len(elseOps)], clientv3.OpGet(mark.key))
	var out sendOutcome
	for {
		cctx, cancel := context.WithDeadline(ctx, deadline)
		m := &sentMark{}
		resp, err := cli.Txn(context.WithValue(cctx, sentKey{}, m)).If(cmp...).Then(then...).Else(elseOps...).Commit()
		cancel()
		if err == nil {
			out.resp = resp
			if !resp.Succeeded && out.sent {
				if kvs := resp.Responses[len(resp.Responses)-1].GetResponseRange().Kvs; len(kvs) == 1 && bytes.Equal(kvs[0].Value, mark.value) {
					out.mine, out.version = true, kvs[0].ModRevision
				}
			}
			return out, nil
		}
		if noSpace(err) && appliedAnyway(ctx, cli, deadline, mark, &out) {
			return out, nil
		}
		refused := refusal(err)
		out.sent = out.sent || m.sent.Load() && !refused
		// Nothing went out unanswered: the refusal or the silence is the
		// answer. A refusal after a copy went out says nothing of that copy.
		if !out.sent || refused || ctx.Err() != nil || !time.Now().Add(resendPause).Before(deadline) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(resendPause):
		}
	}
}

// appliedAnyway says whether the write whose Txn etcd answered NOSPACE was
// applied all the same: etcd's quota check applies the Txn that fills the
// database and then answers NOSPACE (its quotaApplierV3), so the write's
// mark is read (reads go on when full). When it was, out says so, as for
// an earlier copy of the write.
func appliedAnyway(ctx context.Context, cli *clientv3.Client, deadline time.Time, mark writeMark, out *sendOutcome) bool {
	cctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	g, err := cli.Get(cctx, mark.key)
	if err != nil || len(g.Kvs) != 1 || !bytes.Equal(g.Kvs[0].Value, mark.value) {
		return false
	}
	out.resp = &clientv3.TxnResponse{Header: g.Header}
	out.mine, out.version = true, g.Kvs[0].ModRevision
	return true
}

// refusal says whether err is an answer of the cluster that applied
// nothing (a quota, a permission, a size refusal), as opposed to no
// answer: a timeout, a broken connection, or etcd's own "request timed
// out" and "leader changed", after which a proposal may still be applied.
func refusal(err error) bool {
	code := status.Code(err)
	var ee rpctypes.EtcdError
	if errors.As(rpctypes.Error(err), &ee) {
		code = ee.Code()
	}
	switch code {
	case codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied,
		codes.ResourceExhausted, codes.FailedPrecondition, codes.OutOfRange, codes.Unimplemented, codes.Unauthenticated:
		return true
	}
	return false
}

// noSpace says whether err is etcd's refusal of a write because its
// database reached its quota (the NOSPACE alarm).
func noSpace(err error) bool {
	return errors.Is(rpctypes.Error(err), rpctypes.ErrNoSpace)
}

// writeFailed is the error of a write whose Txn got no answer that says
// what became of it: sent says a copy went out unanswered.
func (s *Store) writeFailed(what string, err error, sent bool) error {
	switch {
	case s.ctx.Err() != nil:
		return fmt.Errorf("workspace %s: %w", s.on.Root, storage.ErrClosed)
	case sent:
		// Not marked stale here: the mark follows the cluster's prober,
		// never one request (docs/team.md, "Faults").
		return &storage.Error{Code: storage.CodeOutcomeUnknown, Err: err,
			Msg: fmt.Sprintf("workspace %s is shared through etcd (team %s at %s): %s was sent, but no answer came back within %v (%v): the write may have been applied: agentd will show it if it was; look at the state before making the change again (docs/team.md, \"What a write acknowledges\")",
				s.on.Root, s.on.ID, strings.Join(s.on.Endpoints, ","), what, OpTimeout, err)}
	case noSpace(err):
		return &storage.Error{Code: storage.CodeNoSpace, Err: fmt.Errorf("%w: %w", storage.ErrNotSaved, err),
			Msg: fmt.Sprintf("workspace %s is shared through etcd (team %s at %s), whose database is full (etcd's NOSPACE alarm): %s was refused and nothing was written; reads go on. An operator of the cluster frees space with `etcdctl compact <revision>`, `etcdctl defrag --cluster` and `etcdctl alarm disarm`, and raises --quota-backend-bytes if the data needs more room (docs/team.md, \"A full etcd\")",
				s.on.Root, s.on.ID, strings.Join(s.on.Endpoints, ","), what)}
	}
	return s.unavailable(what, err, true)
}
