package service_test

import (
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/reminder"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace"
)

// boundary is a folder whose default session is at a step boundary of
// turn "t1": its notices are recorded from there on.
type boundary struct {
	svc *service.Service
	ws  *workspace.Workspace

	mu      sync.Mutex
	notices []notice
}

// notice is what clients are told of one commit (commands.Notifications
// reads only these fields of a workspace.Notice).
type notice struct {
	Kind, Reason      string
	Goal, Todos, Task bool
	GoalKind          goal.ChangeKind
	Percent           int
	Revision          uint64
	Snapshot          *goal.Snapshot
}

func (b *boundary) recorded() []notice {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]notice(nil), b.notices...)
}

// newBoundary opens a folder on a service whose wall clock stands still
// (both folders of a comparison store the same times), runs setup on it
// and starts recording notices.
func newBoundary(t *testing.T, setup func(t *testing.T, b *boundary)) *boundary {
	t.Helper()
	opts, root := folder(t)
	wall := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	opts.Now = func() time.Time { return wall }
	svc, ws := open(t, opts, service.Daemon, root)
	b := &boundary{svc: svc, ws: ws}
	setup(t, b)
	t.Cleanup(svc.Registry().Subscribe(func(n workspace.Notice) {
		if n.Workspace != ws {
			return
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		b.notices = append(b.notices, notice{Kind: string(n.Change.Kind), Reason: n.Change.Reason, Goal: n.Change.Goal, Todos: n.Change.Todos,
			Task: n.Change.TaskFile, GoalKind: n.Change.GoalKind, Percent: n.Change.Percent, Revision: n.Session.Revision,
			Snapshot: n.Session.Goal.Snapshot(svc.Now())})
	}))
	return b
}

// stepSettings make the stale todo reminder due at the second step.
var stepSettings = reminder.Settings{TodoReminderSteps: 1, TodoReminderInterval: 1, StallTurns: 3}

// goalTurn creates a goal with a token budget of tokens (0: none) and a
// todo list the model wrote, then begins turn t1 and its first step.
func goalTurn(tokens float64) func(t *testing.T, b *boundary) {
	return func(t *testing.T, b *boundary) {
		update(t, b.svc, b.ws, func(g *goal.State) ([]goal.Change, error) {
			return g.Create(goal.CreateParams{Objective: "ship the parser"}, b.svc.Now())
		})
		if tokens > 0 {
			update(t, b.svc, b.ws, func(g *goal.State) ([]goal.Change, error) {
				return g.SetBudget(goal.BudgetUpdate{Tokens: goal.LimitUpdate{Set: true, Value: &tokens}}, b.svc.Now())
			})
		}
		writeTodos(t, b)
		beginTurn(t, b)
	}
}

func writeTodos(t *testing.T, b *boundary) {
	t.Helper()
	_, err := b.ws.Update(workspace.DefaultSession, func(st *workspace.Session) (workspace.Change, error) {
		st.Todos = []todo.Item{{Title: "write the lexer", Status: todo.Pending}}
		st.TodoUsage.NoteWrite(false)
		return workspace.Change{Kind: "todo.write", Actor: goal.Model, Todos: true}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func beginTurn(t *testing.T, b *boundary) {
	t.Helper()
	if _, err := b.svc.BeginTurn(b.ws, workspace.DefaultSession, goal.MainAgent, "t1", goal.OriginUser, false); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.BeginStep(b.ws, workspace.DefaultSession, goal.MainAgent, "t1", stepSettings); err != nil {
		t.Fatal(err)
	}
}

// viaPair is the boundary as two calls: EndStep, then BeginStep unless the
// end stopped the turn.
func viaPair(b *boundary, tokens int64) (service.StepNext, error) {
	end, injs, err := b.svc.EndStep(b.ws, workspace.DefaultSession, goal.MainAgent, "t1", tokens, goal.FinishToolCalls)
	if err != nil {
		return service.StepNext{}, err
	}
	res := service.StepNext{End: end, EndInjections: injs}
	if end.StopTurn {
		return res, nil
	}
	res.BeginInjections, err = b.svc.BeginStep(b.ws, workspace.DefaultSession, goal.MainAgent, "t1", stepSettings)
	return res, err
}

func viaNext(b *boundary, tokens int64) (service.StepNext, error) {
	return b.svc.NextStep(b.ws, workspace.DefaultSession, goal.MainAgent, "t1", tokens, goal.FinishToolCalls, stepSettings)
}

// history is the session's history, oldest first.
func history(t *testing.T, ws *workspace.Workspace) []workspace.Event {
	t.Helper()
	page, err := ws.History(workspace.DefaultSession, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs := page.Events
	slices.Reverse(evs)
	for i := range evs {
		evs[i].Before, evs[i].Payload = timeless(t, evs[i].Before), timeless(t, evs[i].Payload)
	}
	return evs
}

// timeless is the JSON of raw without its "wallClockMs" and "goalId" keys
// (see sameAsPair).
func timeless(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	if raw == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var drop func(v any)
	drop = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "wallClockMs")
			delete(v, "goalId")
			for _, e := range v {
				drop(e)
			}
		case []any:
			for _, e := range v {
				drop(e)
			}
		}
	}
	drop(v)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameAsPair ignores what tells two folders apart besides the calls: the
// goal's random id, each service's clock, the monotonic stamps and the
// wall-clock use measured on them.
var sameAsPair = cmp.Options{
	cmpopts.IgnoreFields(goal.Goal{}, "ID", "WallClockMs", "ActiveSince", "ActiveMono", "ActiveClock"),
	cmpopts.IgnoreFields(goal.Snapshot{}, "GoalID", "WallClockMs"),
	cmpopts.IgnoreFields(goal.Turn{}, "Owner", "GoalID", "DrivenGoalID"),
	cmpopts.EquateEmpty(),
}

// TestNextStepIsEndThenBegin: agentd.step.next's service call answers,
// stores and tells exactly what EndStep then BeginStep do on the same
// state, at a plain boundary (tokens counted, the stale todo reminder
// due), at the boundary that reaches the token budget (grace step with
// the budget-stop notice), at the end of the grace step (stopTurn, no
// begin) and with no goal (quiet bookkeeping only). That it is one commit
// is tests.TestStepNext's, which counts the store's transactions.
func TestNextStepIsEndThenBegin(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, b *boundary)
		tokens int64
		check  func(t *testing.T, res service.StepNext)
	}{
		{"plain boundary", goalTurn(0), 40, func(t *testing.T, res service.StepNext) {
			if res.End.StopTurn || res.End.GraceStep || len(res.EndInjections) != 0 {
				t.Errorf("end = %+v %v, want no stop, no grace, no injections", res.End, res.EndInjections)
			}
			if len(res.BeginInjections) != 1 || res.BeginInjections[0].Variant != reminder.VariantTodoListReminder {
				t.Errorf("begin injections = %v, want the stale todo reminder", res.BeginInjections)
			}
		}},
		{"budget reached", goalTurn(50), 60, func(t *testing.T, res service.StepNext) {
			if !res.End.GraceStep || len(res.EndInjections) != 1 || res.EndInjections[0].Variant != reminder.VariantGoalBudgetStop || res.BeginInjections == nil {
				t.Errorf("answer = %+v, want a grace step with the budget-stop notice, then its begin", res)
			}
		}},
		{"grace step ends", func(t *testing.T, b *boundary) {
			goalTurn(50)(t, b)
			if _, err := viaPair(b, 60); err != nil { // the grace step is open
				t.Fatal(err)
			}
		}, 5, func(t *testing.T, res service.StepNext) {
			if !res.End.StopTurn || res.BeginInjections != nil {
				t.Errorf("answer = %+v, want stopTurn and no begin", res)
			}
		}},
		{"no goal", func(t *testing.T, b *boundary) { writeTodos(t, b); beginTurn(t, b) }, 7, func(t *testing.T, res service.StepNext) {
			if res.End.StopTurn || res.BeginInjections == nil {
				t.Errorf("answer = %+v, want a begun step", res)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pair, next := newBoundary(t, tc.setup), newBoundary(t, tc.setup)
			before := view(t, next.ws)
			eventsBefore := len(history(t, next.ws))

			wantRes, err := viaPair(pair, tc.tokens)
			if err != nil {
				t.Fatal(err)
			}
			gotRes, err := viaNext(next, tc.tokens)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, gotRes)
			if d := cmp.Diff(wantRes, gotRes, sameAsPair); d != "" {
				t.Errorf("answer differs from EndStep+BeginStep (-pair +next):\n%s", d)
			}
			want, got := view(t, pair.ws), view(t, next.ws)
			if d := cmp.Diff(want, got, sameAsPair); d != "" {
				t.Errorf("stored session differs (-pair +next):\n%s", d)
			}
			if got.Revision > before.Revision+1 {
				t.Errorf("revision %d → %d: more than one change stored", before.Revision, got.Revision)
			}
			wantEv, gotEv := history(t, pair.ws), history(t, next.ws)
			if d := cmp.Diff(wantEv, gotEv, sameAsPair); d != "" {
				t.Errorf("history differs (-pair +next):\n%s", d)
			}
			if n := len(gotEv) - eventsBefore; n > 1 {
				t.Errorf("%d history events for one step.next, want at most 1", n)
			}
			if d := cmp.Diff(pair.recorded(), next.recorded(), sameAsPair); d != "" {
				t.Errorf("notices differ (-pair +next):\n%s", d)
			}
		})
	}
}

// TestNextStepRefusals: a refusal of the end, or of the begin after an end
// that was only a retry, refuses the whole with that part's error, and
// nothing is stored.
func TestNextStepRefusals(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, b *boundary)
		turn  string
	}{
		{"unknown turn", goalTurn(0), "nope"},
		{"no step begun", func(t *testing.T, b *boundary) {
			if _, err := b.svc.BeginTurn(b.ws, workspace.DefaultSession, goal.MainAgent, "t1", goal.OriginUser, false); err != nil {
				t.Fatal(err)
			}
		}, "t1"},
		{"turn ended after this very step end", func(t *testing.T, b *boundary) {
			goalTurn(0)(t, b)
			if _, _, err := b.svc.EndStep(b.ws, workspace.DefaultSession, goal.MainAgent, "t1", 9, goal.FinishToolCalls); err != nil {
				t.Fatal(err)
			}
			if _, _, err := b.svc.EndTurn(b.ws, workspace.DefaultSession, "t1", goal.OutcomeCompleted, "", "", stepSettings); err != nil {
				t.Fatal(err)
			}
		}, "t1"},
		{"turn ended, a late step end", func(t *testing.T, b *boundary) {
			goalTurn(0)(t, b)
			if _, _, err := b.svc.EndTurn(b.ws, workspace.DefaultSession, "t1", goal.OutcomeCancelled, "", "", stepSettings); err != nil {
				t.Fatal(err)
			}
		}, "t1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newBoundary(t, tc.setup)
			before, events := view(t, b.ws), history(t, b.ws)
			_, err := b.svc.NextStep(b.ws, workspace.DefaultSession, goal.MainAgent, tc.turn, 9, goal.FinishToolCalls, stepSettings)
			var ge *goal.Error
			if !errors.As(err, &ge) || ge.Code != goal.CodeArgsInvalid {
				t.Fatalf("NextStep = %v, want an args.invalid refusal", err)
			}
			if d := cmp.Diff(before, view(t, b.ws)); d != "" {
				t.Errorf("a refused step.next changed the session:\n%s", d)
			}
			if got := history(t, b.ws); len(got) != len(events) {
				t.Errorf("history %d → %d events after a refusal", len(events), len(got))
			}
			if n := b.recorded(); len(n) != 0 {
				t.Errorf("notices after a refusal: %+v", n)
			}
			// The same refusal the two calls give, from the part that refuses.
			_, _, pairErr := b.svc.EndStep(b.ws, workspace.DefaultSession, goal.MainAgent, tc.turn, 9, goal.FinishToolCalls)
			if pairErr == nil {
				_, pairErr = b.svc.BeginStep(b.ws, workspace.DefaultSession, goal.MainAgent, tc.turn, stepSettings)
			}
			if pairErr == nil || pairErr.Error() != err.Error() {
				t.Errorf("NextStep refused %q; the two calls refuse %v", err, pairErr)
			}
		})
	}
}
