package workspace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace/boltstore"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// schema1State is a state file written by the agentd release before the
// stored record types of record.go (schema version 1, record version 1):
// see testdata/README.md for how it was made. It must open and read the
// same forever; never regenerate it.
const schema1State = "testdata/schema1-state.db"

// openSchema1 opens a copy of the schema-1 state file as the store of a
// fresh folder, whose TASK.md holds what the file records.
func openSchema1(t *testing.T) (*Workspace, string) {
	t.Helper()
	return openStateFile(t, schema1State)
}

// openStateFile opens a copy of the state file file (testdata) as the
// store of a fresh folder, whose TASK.md holds what the test data's
// folder held.
func openStateFile(t *testing.T, file string) (*Workspace, string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	stateDir, root := t.TempDir(), folder(t)
	path := wsfolder.StateFile(stateDir, root)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "TASK.md"), []byte("# Task\n\n- [ ] add the flag\n- [ ] document it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return openWorkspace(t, newRegistry(t, stateDir), root), path
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func i64(v int64) *int64 { return &v }

func timePtr(t time.Time) *time.Time { return &t }

// schema1Sessions are the sessions of the schema-1 state file, field by
// field.
var schema1Sessions = []Session{
	{
		Name: "cancelled", Revision: 2, Todos: []todo.Item{},
		Goal:      goal.State{CancelNoticePending: true},
		UpdatedAt: at("2026-12-01T11:17:40.921975877Z"),
	},
	{
		Name: "default", Revision: 6, TodosRevision: 4,
		Todos: []todo.Item{
			{Title: "Add the flag", Status: todo.InProgress},
			{Title: "Document it", Status: todo.Pending},
		},
		TodoUsage: todo.Usage{Used: true, StepsSinceWrite: 1, StepsSinceReminder: 2},
		Goal: goal.State{
			Goal: &goal.Goal{
				ID:                  "aed6c04b-e38b-4f28-8014-439068acc226",
				Objective:           "Ship the --verbose flag described in TASK.md",
				CompletionCriterion: "go test ./... passes",
				Status:              goal.Active,
				TurnsUsed:           1,
				TokensUsed:          1150,
				WallClockMs:         3,
				ActiveSince:         at("2026-12-01T11:17:36.9471946Z"),
				Limits:              goal.Limits{TurnBudget: i64(5), TokenBudget: i64(90000), WallClockBudgetMs: i64(7200000)},
				// The release wrote no person's limits: each limit of unknown
				// origin reads as the person's (docs/runtime.md §2.11).
				PersonLimits: goal.Limits{TurnBudget: i64(5), TokenBudget: i64(90000), WallClockBudgetMs: i64(7200000)},
				TaskFile: &goal.TaskFileInfo{
					Path: "TASK.md", Exists: true, Size: 45,
					SHA256:     "b1bff204e1eb120a98eb5973e67d79482f4306748811a99dc0e65dcb4804f14d",
					ModifiedAt: timePtr(at("2026-12-01T11:17:36.933707152Z")),
				},
				CreatedAt:   at("2026-12-01T11:17:36.944194551Z"),
				UpdatedAt:   at("2026-12-01T11:17:36.944986945Z"),
				LastActor:   goal.User,
				ActiveClock: "77VV4SGXB6PVJYN7YBPZXA25ZP",
				ActiveMono:  4879234,
			},
			ContinuationOutstanding: true,
			Turns: []goal.Turn{schema1Turn("sim-1796123856944041628-turn-1", goal.OriginUser, "aed6c04b-e38b-4f28-8014-439068acc226",
				"77VV4SGXB6PVJYN7YBPZXA25ZP", 2, 450, goal.FinishToolCalls, goal.ContinuationStepLimit)},
		},
		UpdatedAt: at("2026-12-01T11:17:36.947399051Z"),
	},
	{
		Name: "paused", Revision: 3, Todos: []todo.Item{},
		Goal: goal.State{Goal: &goal.Goal{
			ID:                  "f223046d-713f-4e11-99f6-2ef6d9b016dc",
			Objective:           "Refactor the parser",
			CompletionCriterion: "no behaviour change",
			Status:              goal.Paused,
			Limits:              goal.Limits{TurnBudget: i64(3)},
			PersonLimits:        goal.Limits{TurnBudget: i64(3)},
			TerminalReason:      "waiting for review",
			CreatedAt:           at("2026-12-01T11:17:40.892982753Z"),
			UpdatedAt:           at("2026-12-01T11:17:40.907311819Z"),
			LastActor:           goal.User,
		}},
		UpdatedAt: at("2026-12-01T11:17:40.907323263Z"),
	},
	{
		Name: "review", Revision: 13, TodosRevision: 10,
		Todos: []todo.Item{
			{Title: "Add the flag and plumb it through", Status: todo.Done},
			{Title: "Print each processed file", Status: todo.Done},
			{Title: "Document --verbose in the README", Status: todo.Done},
		},
		TodoUsage: todo.Usage{Used: true, StepsSinceWrite: 1, StepsSinceReminder: 5},
		Goal: goal.State{
			Goal: &goal.Goal{
				ID:                  "40a4606c-e1e8-4453-acf9-a415a57dbf3f",
				Objective:           "Add a --verbose flag to the CLI that prints each file it processes",
				CompletionCriterion: "go test ./... passes and --verbose is documented in the README",
				Status:              goal.Complete,
				TurnsUsed:           2,
				TokensUsed:          3770,
				WallClockMs:         7,
				Limits:              goal.Limits{TurnBudget: i64(3)},
				PersonLimits:        goal.Limits{TurnBudget: i64(3)},
				TerminalReason:      "marked complete by the agent",
				CreatedAt:           at("2026-12-01T11:17:36.953489345Z"),
				UpdatedAt:           at("2026-12-01T11:17:36.960875123Z"),
				LastActor:           goal.Model,
			},
			Turns: []goal.Turn{
				schema1Turn("sim-1796123856953267893-turn-1", goal.OriginUser, "40a4606c-e1e8-4453-acf9-a415a57dbf3f",
					"32WXW55SYZFG422753BIMONH62", 3, 300, goal.FinishStop, goal.ContinuationNormal),
				schema1Turn("sim-1796123856953267893-turn-2", goal.OriginContinuation, "40a4606c-e1e8-4453-acf9-a415a57dbf3f",
					"32WXW55SYZFG422753BIMONH62", 2, 120, goal.FinishStop, goal.NoContinuation),
			},
		},
		UpdatedAt: at("2026-12-01T11:17:36.961862649Z"),
	},
}

// schema1Turn is an ended, counted, goal-driven main-agent turn as the
// schema-1 file records it.
func schema1Turn(id string, origin goal.Origin, goalID, owner string, steps int, lastTokens int64, finish goal.FinishReason, cont goal.Continuation) goal.Turn {
	t := goal.Turn{
		ID: id, Origin: origin, Agent: goal.MainAgent,
		GoalDriven: true, GoalID: goalID, DrivenGoalID: goalID, Counted: true,
		Steps: steps, Ended: true, Owner: owner, Continuation: cont,
	}
	t.LastStepEnd.Step = steps
	t.LastStepEnd.OutputTokens = lastTokens
	t.LastStepEnd.Finish = finish
	return t
}

// TestSchema1StateDecodes: every field of every session of the schema-1
// state file reads as that release wrote it, and so does every history
// event (testdata/schema1-history.golden.json); opening it leaves it at
// the current schema.
func TestSchema1StateDecodes(t *testing.T) {
	w, path := openSchema1(t)
	got, err := w.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(schema1Sessions, got); diff != "" {
		t.Errorf("sessions (-want +got):\n%s", diff)
	}
	for _, s := range schema1Sessions {
		v, err := w.View(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(s, v); diff != "" {
			t.Errorf("View(%q) (-want +got):\n%s", s.Name, diff)
		}
	}

	history := map[string][]Event{}
	for _, s := range schema1Sessions {
		page, err := w.History(s.Name, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		if page.More {
			t.Errorf("History(%q): more than 100 events", s.Name)
		}
		history[s.Name] = page.Events
	}
	want, err := os.ReadFile("testdata/schema1-history.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var wantHistory map[string][]Event
	if err := json.Unmarshal(want, &wantHistory); err != nil {
		t.Fatal(err)
	}
	compact := cmp.Transformer("compact", func(r json.RawMessage) string {
		var b bytes.Buffer
		if err := json.Compact(&b, r); err != nil {
			return "invalid JSON: " + string(r)
		}
		return b.String()
	})
	if diff := cmp.Diff(wantHistory, history, compact); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if n := schemaOf(t, path, w); n != currentSchema() {
		t.Errorf("schema after open: %d, want %d", n, currentSchema())
	}
}

// TestSchema1StateRewritesAlike: a session of the schema-1 file that is
// stored again unchanged is written byte for byte as that release wrote
// it, so that an upgrade changes no record by itself.
func TestSchema1StateRewritesAlike(t *testing.T) {
	w, _ := openSchema1(t)
	stored := map[string][]byte{}
	if err := boltOf(t, w).DB().View(func(tx *bbolt.Tx) error {
		return tx.Bucket(boltstore.BucketSessions).ForEach(func(k, v []byte) error {
			stored[string(k)] = bytes.Clone(v)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(schema1Sessions) {
		t.Fatalf("%d stored sessions, want %d", len(stored), len(schema1Sessions))
	}
	for name, data := range stored {
		s, err := w.decodeSession(name, data)
		if err != nil {
			t.Fatal(err)
		}
		again, err := encodeSession(s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, data) {
			t.Errorf("session %q is rewritten as\n%s\nwant\n%s", name, again, data)
		}
	}
}

// TestSchema1StateMigrates: a migration appended after schema 1 runs once
// on the schema-1 file, inside the open, sees its records, and leaves the
// file at the new schema with every session as it was.
func TestSchema1StateMigrates(t *testing.T) {
	saved := migrations
	t.Cleanup(func() { migrations = saved })
	var ran, seen int
	migrations = append(migrations[:len(migrations):len(migrations)], migration{name: "test: read every session", apply: func(tx *bbolt.Tx) error {
		ran++
		return tx.Bucket(boltstore.BucketSessions).ForEach(func(k, v []byte) error {
			if _, version, err := decodeSessionRecord(v); err != nil || version != 1 {
				return fmt.Errorf("session %q: version %d, %v", k, version, err)
			}
			seen++
			return nil
		})
	}})
	if currentSchema() != 2 {
		t.Fatalf("current schema %d with the test migration, want 2", currentSchema())
	}
	w, path := openSchema1(t)
	if ran != 1 || seen != len(schema1Sessions) {
		t.Errorf("the migration ran %d times and saw %d sessions, want 1 and %d", ran, seen, len(schema1Sessions))
	}
	if n := schemaOf(t, path, w); n != 2 {
		t.Errorf("schema after the migration: %d, want 2", n)
	}
	got, err := w.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(schema1Sessions, got); diff != "" {
		t.Errorf("sessions after the migration (-want +got):\n%s", diff)
	}
}
