package service

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
	"github.com/agentd/agentd/workspace/taskfile"
)

// Service is the runtime of one workspace registry. It is shared by every
// connection of a process. Safe for concurrent use.
type Service struct {
	reg   *workspace.Registry
	wall  func() time.Time
	clock atomic.Pointer[string] // names this service's monotonic clock (goal.Instant), its identity in teams (identity.go)
	start time.Time              // its start, a reading of time.Now with its monotonic part
	log   *slog.Logger
	unsub func()
	tasks *taskfile.Watcher // a Daemon's task-file watcher; nil for a OneShot

	timersMu  sync.Mutex
	timers    map[timerKey]*time.Timer // wall-clock budget timers
	waits     map[timerKey]*armedWait  // the wake conditions armed (wait.go)
	unsubWait func()

	checks     checks        // the goal checks running (check.go)
	polls      chan struct{} // a token while a wait's poll runs a check: one at a time (wait.go)
	unsubCheck func()

	person  goal.CheckSetter // the person at this machine (consent.go)
	prov    provenance       // what team histories say of checks (consent.go)
	secrets func() []string  // what a check's output tail never shows (check.go)
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
	// OneShot runs one shell command and exits: at open it only clears the
	// running mark of a check a process that ended left, killing its process
	// group (docs/runtime.md §2.10.3).
	OneShot
)

// New opens a workspace registry with opts and returns a Service on it.
// opts.OnOpen is set by the service according to role
// (a Daemon recovers and watches task files, a OneShot recovers left
// checks); Now and Logger may be nil
// (time.Now, and no logs).
func New(opts workspace.Options, role Role) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{wall: opts.Now, start: time.Now(), log: opts.Logger, timers: map[timerKey]*time.Timer{}, waits: map[timerKey]*armedWait{}, unsubWait: func() {}}
	s.newClock()
	if role == Daemon {
		opts.OnOpen = s.recoverWorkspace
		// In team folders this daemon's turns are known by its clock, held
		// under a lease (docs/team.md, "Liveness").
		opts.Identity = s.clockID()
		opts.NewIdentity = s.newClock
		opts.OnPeerGone = s.peerGone
	} else {
		opts.OnOpen = s.recoverChecks
	}
	s.checks = checks{running: map[checkKey]context.CancelCauseFunc{}, claimed: map[string]chan struct{}{}, timeout: s.readCheckTimeout()}
	s.polls = make(chan struct{}, 1)
	s.person, s.prov.seen, s.secrets = personOf(), map[provenanceKey]provenanceScan{}, teamSecrets(opts.Team, s.log)
	s.reg = workspace.NewRegistry(opts)
	if role == Daemon {
		s.tasks = taskfile.Watch(s.reg, taskfile.Options{Logger: s.log, OnChange: s.taskFileChanged})
		s.unsubWait = s.reg.Subscribe(s.armWaitNotice)
	}
	s.unsub = s.reg.Subscribe(s.armWallClock)
	s.unsubCheck = s.reg.Subscribe(s.stopEnded)
	return s
}

// Now reads the clocks for the goal runtime (docs/runtime.md §2.4.1):
// the wall clock, for the times the state stores and shows, and the
// monotonic time since the service started, which measures a goal's wall
// clock and which a change of the system time does not move.
func (s *Service) Now() goal.Instant {
	return goal.Instant{Wall: s.wall(), Mono: time.Since(s.start), Clock: s.clockID()}
}

// Close kills the running goal checks and waits until each is recorded
// (docs/runtime.md §2.10.3), stops the goal timers and the task-file
// watcher (waiting for a change it is recording) and closes every store
// of the registry.
func (s *Service) Close() error {
	s.closeChecks()
	s.unsubCheck()
	s.unsub()
	s.unsubWait()
	s.stopWaits()
	s.timersMu.Lock()
	for k, t := range s.timers {
		t.Stop()
		delete(s.timers, k)
	}
	s.timersMu.Unlock()
	if s.tasks != nil {
		s.tasks.Stop()
	}
	return s.reg.Close()
}

// Registry is the workspace registry the service runs on.
func (s *Service) Registry() *workspace.Registry { return s.reg }

// StoredGoalChange turns the goal package's changes into one stored change:
// the last visible change names the event and the notification; all of them
// go into the history payload, and before, the goal as it stood before them
// (nil: none), into its before (workspace.GoalBefore, docs/runtime.md §6). With no
// visible change the goal's bookkeeping (turn records, markers) is still
// stored, quietly (goal.State docs).
func StoredGoalChange(before *goal.Snapshot, cs []goal.Change) workspace.Change {
	if len(cs) == 0 {
		return workspace.Change{Kind: protocol.EventGoalBookkeeping, Quiet: true}
	}
	last := cs[len(cs)-1]
	ch := workspace.Change{Kind: last.EventKind(), Actor: last.Actor, Reason: last.Reason, Goal: true, Percent: last.Percent, Payload: workspace.GoalPayload{Changes: cs}, Before: workspace.GoalBefore{Goal: before}}
	if last.Kind == goal.ChangeAdvance && len(cs) > 1 {
		// The advance took the first queued goal (docs/runtime.md §2.9).
		ch.Queue, ch.Completed = true, cs[len(cs)-2].Goal
	}
	return ch
}

// UpdateQueue runs fn on the goal state of session in ws and stores the
// queue change it reports, as the user, in one transaction: history event
// "queue." + kind, payload the change and the auto-advance setting after
// it, and agentd/queueChanged to the clients (docs/protocol.md §4). When fn
// reports no change (ok false), nothing is stored; an error of fn is
// returned and nothing is stored; other errors are those of
// workspace.Workspace.Update.
func (s *Service) UpdateQueue(ws *workspace.Workspace, session string, fn func(g *goal.State) (ch goal.QueueChange, ok bool, err error)) (workspace.Session, error) {
	return ws.Update(session, func(st *workspace.Session) (workspace.Change, error) {
		ch, ok, err := fn(&st.Goal)
		if err != nil || !ok {
			return workspace.Change{}, err
		}
		payload := workspace.QueuePayload{Change: ch, AutoAdvance: st.Goal.AutoAdvance()}
		return workspace.Change{Kind: ch.EventKind(), Actor: goal.User, Queue: true, Payload: payload}, nil
	})
}

// TodoChange is the stored change of a todo list write: kind (todo.write,
// todo.set, todo.undo) by actor with payload and before, the list before the
// write (docs/runtime.md §6), after NoteProgress of the goal
// (docs/runtime.md §2.4.5). When the write ends a stall, clients are also
// told with agentd/goalChanged (stallCleared) in the same commit.
func TodoChange(st *workspace.Session, kind protocol.EventKind, actor goal.Actor, payload workspace.TodoPayload, before workspace.TodosBefore, now goal.Instant) workspace.Change {
	ch := workspace.Change{Kind: kind, Actor: actor, Todos: true, Payload: payload, Before: before}
	if cs := st.Goal.NoteProgress(now); len(cs) > 0 {
		ch.Goal, ch.GoalKind, ch.Reason = true, cs[0].Kind, cs[0].Reason
	}
	return ch
}

// UpdateGoal runs fn on the goal state of session in ws and stores the result with its changes in one
// transaction (StoredGoalChange). An error of fn is returned and nothing is
// stored; other errors are those of workspace.Workspace.Update.
func (s *Service) UpdateGoal(ws *workspace.Workspace, session string, fn func(g *goal.State) ([]goal.Change, error)) (workspace.Session, error) {
	return s.UpdateGoalOnce(ws, session, "", fn)
}

// UpdateGoalOnce is UpdateGoal for a write the client identified with
// requestID (workspace/request.go; docs/team.md, "What a write
// acknowledges"): one the session applied already changes nothing and
// answers the session as it is; a change records the id in the same
// write. An empty requestID identifies nothing.
func (s *Service) UpdateGoalOnce(ws *workspace.Workspace, session, requestID string, fn func(g *goal.State) ([]goal.Change, error)) (workspace.Session, error) {
	return s.updateGoalOf(ws, session, workspace.Request{ID: requestID}, func(st *workspace.Session) ([]goal.Change, error) { return fn(&st.Goal) })
}

// updateGoalOf is UpdateGoalOnce for a rule that reads more of the
// session than its goal (the todo list a goal requires, docs/runtime.md
// §2.12); fn changes the goal only. req.ID identifies the write (""
// none); a change records req.
func (s *Service) updateGoalOf(ws *workspace.Workspace, session string, req workspace.Request, fn func(st *workspace.Session) ([]goal.Change, error)) (workspace.Session, error) {
	return ws.Update(session, func(st *workspace.Session) (workspace.Change, error) {
		if _, done := st.Request(req.ID); req.ID != "" && done {
			return workspace.Change{}, nil
		}
		before := st.Goal.Snapshot(s.Now())
		cs, err := fn(st)
		if err != nil {
			return workspace.Change{}, err
		}
		if req.ID != "" && len(cs) > 0 {
			st.RecordRequest(req, s.wall())
		}
		return StoredGoalChange(before, cs), nil
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
