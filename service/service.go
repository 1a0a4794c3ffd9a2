package service

import (
	"context"
	"crypto/rand"
	"log/slog"
	"sync"
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
)

// Service is the runtime of one workspace registry. It is shared by every
// connection of a process. Safe for concurrent use.
type Service struct {
	reg   *workspace.Registry
	wall  func() time.Time
	clock string    // names this service's monotonic clock (goal.Instant)
	start time.Time // its start, a reading of time.Now with its monotonic part
	log   *slog.Logger
	unsub func()

	timersMu sync.Mutex
	timers   map[timerKey]*time.Timer // wall-clock budget timers
}

// Role says what a process is to the state it opens.
type Role int

const (
	// Daemon serves clients and drives goals: at each open of a folder, the
	// turns a process that is gone left live are ended and the goal they
	// drove is paused (docs/runtime.md §2.3, [agentd] restart rule;
	// docs/runtime.md §2.3.2), and task files are watched
	// (docs/runtime.md §4).
	Daemon Role = iota
	// OneShot runs one shell command and exits: it changes nothing at open.
	OneShot
)

// New opens a workspace registry with opts and returns a Service on it.
// opts.OnOpen and opts.OnTaskFile are set by the service according to role
// (a Daemon recovers and watches task files); Now and Logger may be nil
// (time.Now, and no logs).
func New(opts workspace.Options, role Role) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{wall: opts.Now, clock: rand.Text(), start: time.Now(), log: opts.Logger, timers: map[timerKey]*time.Timer{}}
	if role == Daemon {
		opts.OnOpen = s.recoverWorkspace
		opts.OnTaskFile = s.taskFileChanged
		// In team folders this daemon's turns are known by its clock, held
		// under a lease (docs/team.md, "Liveness").
		opts.Identity = s.clock
		opts.OnPeerGone = s.peerGone
	}
	s.reg = workspace.NewRegistry(opts)
	s.unsub = s.reg.Subscribe(s.armWallClock)
	return s
}

// Now reads the clocks for the goal runtime (docs/runtime.md §2.4.1):
// the wall clock, for the times the state stores and shows, and the
// monotonic time since the service started, which measures a goal's wall
// clock and which a change of the system time does not move.
func (s *Service) Now() goal.Instant {
	return goal.Instant{Wall: s.wall(), Mono: time.Since(s.start), Clock: s.clock}
}

// Close stops the goal timers and closes every store of the registry.
func (s *Service) Close() error {
	s.unsub()
	s.timersMu.Lock()
	for k, t := range s.timers {
		t.Stop()
		delete(s.timers, k)
	}
	s.timersMu.Unlock()
	return s.reg.Close()
}

// Registry is the workspace registry the service runs on.
func (s *Service) Registry() *workspace.Registry { return s.reg }

// StoredGoalChange turns the goal package's changes into one stored change:
// the last visible change names the event and the notification; all of them
// go into the history payload. With no visible change the goal's bookkeeping
// (turn records, markers) is still stored, quietly (goal.State docs).
func StoredGoalChange(cs []goal.Change) workspace.Change {
	if len(cs) == 0 {
		return workspace.Change{Kind: "goal.bookkeeping", Quiet: true}
	}
	last := cs[len(cs)-1]
	payload := make([]map[string]any, len(cs))
	for i, c := range cs {
		payload[i] = map[string]any{"kind": c.Kind, "status": c.Status, "reason": c.Reason, "actor": c.Actor, "goal": c.Goal}
	}
	return workspace.Change{Kind: last.EventKind(), Actor: last.Actor, Reason: last.Reason, Goal: true, Payload: payload}
}

// UpdateGoal runs fn on the goal state of session in ws and stores the result with its changes in one
// transaction (StoredGoalChange). An error of fn is returned and nothing is
// stored; other errors are those of workspace.Workspace.Update.
func (s *Service) UpdateGoal(ws *workspace.Workspace, session string, fn func(g *goal.State) ([]goal.Change, error)) (workspace.Session, error) {
	return ws.Update(session, func(st *workspace.Session) (workspace.Change, error) {
		cs, err := fn(&st.Goal)
		if err != nil {
			return workspace.Change{}, err
		}
		return StoredGoalChange(cs), nil
	})
}

// AwaitChange waits until session of ws has a revision above after, then
// returns it. It also returns the session as it is when timeout passes or
// stop is closed; ctx.Err() when ctx is done first. Errors of reading the
// session are returned as they are (workspace.Workspace.View).
func (s *Service) AwaitChange(ctx context.Context, ws *workspace.Workspace, session string, after uint64, timeout time.Duration, stop <-chan struct{}) (workspace.Session, error) {
	changed := make(chan struct{}, 1)
	cancel := s.reg.Subscribe(func(n workspace.Notice) {
		if n.Workspace == ws && n.Session.Name == session && n.Session.Revision > after {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	})
	defer cancel()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	if st, err := ws.View(session); err != nil || st.Revision > after {
		return st, err
	}
	select {
	case <-ctx.Done():
		return workspace.Session{}, ctx.Err()
	case <-changed:
	case <-timer.C:
	case <-stop:
	}
	return ws.View(session)
}
