package workspace

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
)

// history1State is a state file written by the agentd release before the
// history records of historyrecord.go, whose history holds a before and a
// payload of every shape (testdata/README.md says how it was made). It
// must open, read and undo the same forever; never regenerate it.
const history1State = "testdata/history1-state.db"

// fullSnapshot is a goal snapshot with every field set.
func fullSnapshot() *goal.Snapshot {
	t0 := time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)
	return &goal.Snapshot{
		GoalID: "goal-1", Objective: "ship <it> & more", CompletionCriterion: "tests pass", Status: goal.Paused,
		TurnsUsed: 2, TokensUsed: 300, WallClockMs: 4000,
		Budget: goal.BudgetReport{TokenBudget: i64(1000), TurnBudget: i64(3), WallClockBudgetMs: i64(60000),
			RemainingTokens: i64(700), RemainingTurns: i64(1), RemainingWallClockMs: i64(56000),
			TokenBudgetReached: true, TurnBudgetReached: true, WallClockBudgetReached: true, OverBudget: true},
		TerminalReason: "waiting",
		TaskFile: &goal.TaskFileInfo{Path: "TASK.md", Exists: true, SHA256: "abc", Size: 45, ModifiedAt: timePtr(t0),
			ChangedSinceLastTurn: true, Checkboxes: &goal.Checkboxes{Checked: 1, Total: 2}},
		Check: &goal.Check{Command: "go test ./...", SetBy: &goal.CheckSetter{User: "ann", Host: "box"}, Running: true,
			LastRun: &goal.CheckRun{ExitCode: 1, DurationMs: 20, At: t0, OutputTail: "FAIL"}},
		CreatedAt: t0, UpdatedAt: t0.Add(time.Second), LastActor: goal.User, Stalled: true,
	}
}

// fullHistoryValues are a before and a payload of every shape, with every
// field set.
func fullHistoryValues() map[string]any {
	t0 := time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)
	agent := "main"
	items := []todo.Item{{Title: "a <b>", Status: todo.InProgress}, {Title: "c", Status: todo.Done}}
	reverts := &Reverts{Seq: 4, Revision: 9, Kind: "goal.pause"}
	return map[string]any{
		"todosBefore": TodosBefore{Items: items},
		"goalBefore":  GoalBefore{Goal: fullSnapshot()},
		"todoPayload": TodoPayload{Items: items, Agent: &agent, Reverts: reverts},
		"goalPayload": GoalPayload{Changes: []goal.Change{
			{Kind: goal.ChangeBudgetWarning, Status: goal.Active, Reason: "80% of the turns", Actor: goal.Runtime, Percent: 80, Goal: fullSnapshot()},
			{Kind: goal.ChangeCancel, Actor: goal.User},
		}, Reverts: reverts},
		"queuePayload": QueuePayload{AutoAdvance: true, Change: goal.QueueChange{Kind: goal.QueueAdd, Index: 2,
			Item: &goal.QueuedGoal{ID: "q-1", Objective: "next", CompletionCriterion: "done", Check: "make", CheckSetBy: &goal.CheckSetter{User: "ann", Host: "box"}, AddedAt: t0}}},
	}
}

// TestHistoryRecordGolden: the stored before and payload of every shape,
// every field set, are testdata/history-record.golden.json, whatever the
// JSON tags of the domain and wire types say. A difference is a change of
// the stored format: it needs a new record version and a migration
// (schema.go), not an edit of the golden file.
func TestHistoryRecordGolden(t *testing.T) {
	got, err := json.MarshalIndent(fullHistoryValues(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	want, err := os.ReadFile("testdata/history-record.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("stored history differs from testdata/history-record.golden.json (-want +got):\n%s\nthe records now:\n%s", diff, got)
	}
}

// TestHistoryRecordRoundTrip: what undo and the check's provenance read
// back of a stored before and payload is every field that was stored.
func TestHistoryRecordRoundTrip(t *testing.T) {
	v := fullHistoryValues()
	ev := Event{Seq: 1, Kind: "goal.cancel"}
	ev.Before, _ = json.Marshal(v["goalBefore"])
	ev.Payload, _ = json.Marshal(v["goalPayload"])
	before, err := ev.GoalBefore()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fullSnapshot(), before); diff != "" {
		t.Errorf("goal before (-want +got):\n%s", diff)
	}
	goals, err := ev.PayloadGoals()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]*goal.Snapshot{fullSnapshot(), nil}, goals); diff != "" {
		t.Errorf("payload goals (-want +got):\n%s", diff)
	}
	ev.Before, _ = json.Marshal(v["todosBefore"])
	items, err := ev.TodosBefore()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v["todosBefore"].(TodosBefore).Items, items); diff != "" {
		t.Errorf("todos before (-want +got):\n%s", diff)
	}
	if _, err := (Event{Seq: 3, Kind: "todo.write"}).TodosBefore(); err == nil || !strings.Contains(err.Error(), "not recorded") {
		t.Errorf("an event without a before: %v, want not recorded", err)
	}
}

// TestOldHistoryRewritesAlike: every history event of the state files of
// the releases before these records reads through the records with no
// name unknown to them, and its records are written again byte for byte as
// that release wrote them. The events of the release just before them
// (history1State), read into the history values and stored again as a
// change stores them, are written byte for byte too: the records changed
// nothing on disk, so no migration. (The schema-1 release's goal
// snapshots had no stalled; one stored today has it, false.)
func TestOldHistoryRewritesAlike(t *testing.T) {
	for _, f := range []struct {
		file      string
		viaValues bool
	}{{schema1State, false}, {history1State, true}} {
		file := f.file
		t.Run(file, func(t *testing.T) {
			w, _ := openStateFile(t, file)
			sessions, err := w.Sessions()
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, s := range sessions {
				raw, _, err := w.store.History(s.Name, MaxHistory, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, data := range raw {
					n++
					if again := rewriteEvent(t, data, f.viaValues); !bytes.Equal(again, data) {
						t.Errorf("event of session %q is rewritten as\n%s\nwant\n%s", s.Name, again, data)
					}
				}
			}
			if n == 0 {
				t.Fatal("no history events")
			}
		})
	}
}

// rewriteEvent decodes data, a stored event, its before and payload into
// their records and, with viaValues, on into the history values, and
// encodes it again.
func rewriteEvent(t *testing.T, data []byte, viaValues bool) []byte {
	t.Helper()
	ev, _, err := decodeEventRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	scope, _, _ := strings.Cut(string(ev.Kind), ".")
	var before, payload any
	switch scope {
	case "todo":
		var b todosBeforeRecord
		var p todoPayloadRecord
		strictDecode(t, ev.Before, &b)
		strictDecode(t, ev.Payload, &p)
		before, payload = b, p
		if !viaValues {
			break
		}
		before = TodosBefore{Items: todoItems(b.Items)}
		payload = TodoPayload{Items: todoItems(p.Items), Agent: p.Agent, Reverts: (*Reverts)(p.Reverts)}
	case "goal":
		var b goalBeforeRecord
		var p []goalChangeRecord
		strictDecode(t, ev.Before, &b)
		strictDecode(t, ev.Payload, &p)
		before, payload = b, p
		if !viaValues {
			break
		}
		before = GoalBefore{Goal: snapshotFromRecord(b.Goal)}
		gp := GoalPayload{}
		for _, c := range p {
			gp.Changes = append(gp.Changes, goal.Change{Kind: goal.ChangeKind(c.Kind), Status: goal.Status(c.Status), Reason: c.Reason, Actor: goal.Actor(c.Actor), Percent: c.Percent, Goal: snapshotFromRecord(c.Goal)})
			gp.Reverts = (*Reverts)(c.Reverts)
		}
		payload = gp
	case "queue":
		var p queuePayloadRecord
		strictDecode(t, ev.Payload, &p)
		payload = p
		if !viaValues {
			break
		}
		qc := goal.QueueChange{Kind: p.Change.Kind, Index: p.Change.Index}
		if q := p.Change.Item; q != nil {
			qc.Item = &goal.QueuedGoal{ID: q.ID, Objective: q.Objective, CompletionCriterion: q.CompletionCriterion, Check: q.Check, CheckSetBy: (*goal.CheckSetter)(q.CheckSetBy), AddedAt: q.AddedAt}
		}
		payload = QueuePayload{Change: qc, AutoAdvance: p.AutoAdvance}
	default:
		t.Fatalf("event kind %q of no history record", ev.Kind)
	}
	if len(ev.Before) > 0 {
		ev.Before = mustMarshal(t, before)
	}
	if len(ev.Payload) > 0 {
		ev.Payload = mustMarshal(t, payload)
	}
	again, err := encodeEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	return again
}

// strictDecode decodes raw (nothing when absent) into rec, refusing a
// name rec does not have.
func strictDecode(t *testing.T, raw json.RawMessage, rec any) {
	t.Helper()
	if len(raw) == 0 {
		return
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(rec); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
