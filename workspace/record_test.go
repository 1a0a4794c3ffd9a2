package workspace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
)

// fullSession sets every field a stored session has, each to a value of
// its own, so that testdata/record.golden.json shows every stored name.
func fullSession() Session {
	t0 := time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)
	tu := goal.Turn{
		ID: "turn-1", Origin: goal.OriginContinuation, Agent: goal.MainAgent,
		GoalDriven: true, GoalID: "goal-1", DrivenGoalID: "goal-1", Starter: true, Counted: true,
		Steps: 3, StepOpen: true, GraceGiven: true, InGrace: true, Ended: true, EndedBy: goal.EndedLeaseLost, Detached: true,
		Owner: "clock-1", Continuation: goal.ContinuationStepLimit,
	}
	tu.LastStepBegin.FirstStep = true
	tu.LastStepBegin.GoalReminderDue = true
	tu.LastStepBegin.TaskFileChanged = true
	tu.LastStepBegin.CancelNoticeDue = true
	tu.LastStepBegin.GraceStep = true
	tu.LastStepBegin.WrapUpDue = true
	tu.LastStepEnd.StopTurn = true
	tu.LastStepEnd.GraceStep = true
	tu.LastStepEnd.Step = 3
	tu.LastStepEnd.OutputTokens = 1200
	tu.LastStepEnd.Finish = goal.FinishToolCalls
	return Session{
		Name: "s", Revision: 7, TodosRevision: 5,
		Todos: []todo.Item{{Title: "plan", Status: todo.Done}, {Title: "build", Status: todo.InProgress}},
		TodoUsage: todo.Usage{Used: true, StepsSinceWrite: 2, StepsSinceReminder: 4, Reminded: true, WroteThisStep: true,
			Writes: 9, WritesSeen: 8, StepOpen: true, WritesAtStep: 8},
		SubagentLists: []todo.SubagentList{{Agent: "agent-7", ParentItem: "build", Items: []todo.Item{{Title: "read the parser", Status: todo.Pending}}}},
		Goal: goal.State{
			Goal: &goal.Goal{
				ID: "goal-1", Objective: "ship it", CompletionCriterion: "tests pass", Status: goal.Blocked,
				TurnsUsed: 4, TokensUsed: 5000, WallClockMs: 60000, ActiveSince: t0,
				Limits:         goal.Limits{TurnBudget: i64(10), TokenBudget: i64(90000), WallClockBudgetMs: i64(3600000)},
				PersonLimits:   goal.Limits{TurnBudget: i64(12), TokenBudget: i64(100000), WallClockBudgetMs: i64(7200000)},
				TerminalReason: "turn budget reached",
				TaskFile: &goal.TaskFileInfo{Path: "TASK.md", Exists: true, SHA256: "ab12", Size: 45,
					ModifiedAt: timePtr(t0.Add(time.Second)), ChangedSinceLastTurn: true,
					Checkboxes: &goal.Checkboxes{Checked: 3, Total: 7}},
				Check: &goal.Check{Command: "go test ./...", SetBy: &goal.CheckSetter{User: "alice", Host: "laptop"}, Running: true, RunBy: "agentd-1234", RunID: "run-2",
					LastRun: &goal.CheckRun{ExitCode: 1, DurationMs: 2100, At: t0.Add(5 * time.Second), OutputTail: "FAIL\n", RunID: "run-1"},
					Process: []byte(`{"pgid":4242,"start":123456,"boot":"b0a7c1d2-0000-4000-8000-000000000001"}`)},
				CreatedAt: t0.Add(2 * time.Second), UpdatedAt: t0.Add(3 * time.Second), LastActor: goal.Runtime,
				ActiveClock: "clock-1", ActiveMono: 1500 * time.Millisecond,
				BudgetWarned: goal.BudgetWarned{Turns: 80, Tokens: 50, WallClock: 80}, WrapUpDue: true,
				Progressed: true, QuietTurns: 2, Stalled: true,
			},
			CancelNoticePending: true, ContinuationOutstanding: true,
			Turns: []goal.Turn{tu},
			Queue: []goal.QueuedGoal{{ID: "queued-1", Objective: "then docs", CompletionCriterion: "docs build",
				Check: "make docs", CheckSetBy: &goal.CheckSetter{User: "bob", Host: "desktop"}, AddedAt: t0.Add(5 * time.Second),
				TurnBudget: i64(20), TokenBudget: i64(50000), WallClockBudgetMs: i64(5400000)}},
			AutoAdvanceOff: true,
		},
		UpdatedAt: t0.Add(4 * time.Second),
	}
}

func fullEvent() Event {
	return Event{Seq: 9, At: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC), Actor: "model", Kind: "todo.write",
		Reason: "why", Revision: 12, Before: json.RawMessage(`{"items":[{"title":"a","status":"pending"}]}`), Payload: json.RawMessage(`{"items":[]}`)}
}

// TestRecordGolden: the stored records of a session and an event with
// every field set are testdata/record.golden.json, whatever the JSON tags
// of the domain types say. A difference is a change of the stored format:
// it needs a new record version and a migration (schema.go), not an edit
// of the golden file.
func TestRecordGolden(t *testing.T) {
	sess, err := encodeSession(fullSession())
	if err != nil {
		t.Fatal(err)
	}
	ev, err := encodeEvent(fullEvent())
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	got.WriteString("{\n\"session\": ")
	got.Write(sess)
	got.WriteString(",\n\"event\": ")
	got.Write(ev)
	got.WriteString("\n}\n")
	var indented bytes.Buffer
	if err := json.Indent(&indented, got.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/record.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), indented.String()); diff != "" {
		t.Errorf("stored records differ from testdata/record.golden.json (-want +got):\n%s\nthe records now:\n%s", diff, indented.String())
	}
}

// TestRecordRoundTrip: every field of a Session and an Event, down to the
// goal's turns, survives encoding and decoding. A field added to a domain
// type without its record field fails here (fill sets every field).
func TestRecordRoundTrip(t *testing.T) {
	var s Session
	fill(reflect.ValueOf(&s).Elem(), "Session")
	// What the answering agentd says of a check from its own approvals is
	// shown, never stored (docs/runtime.md §2.10.4).
	s.Goal.Goal.Check.Approved, s.Goal.Goal.Check.SetOutsideAgentd = nil, false
	for i := range s.Goal.Queue {
		s.Goal.Queue[i].CheckApproved = nil
	}
	data, err := encodeSession(s)
	if err != nil {
		t.Fatal(err)
	}
	got, v, err := decodeSessionRecord(data)
	if err != nil || v != sessionRecordVersion {
		t.Fatalf("decodeSessionRecord: version %d, %v", v, err)
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("session after a round trip (-want +got):\n%s", diff)
	}

	var ev Event
	fill(reflect.ValueOf(&ev).Elem(), "Event")
	ev.Payload = json.RawMessage(`{"k":"v"}`)
	ev.Before = json.RawMessage(`{"b":1}`)
	if data, err = encodeEvent(ev); err != nil {
		t.Fatal(err)
	}
	gotEv, v, err := decodeEventRecord(data)
	if err != nil || v != eventRecordVersion {
		t.Fatalf("decodeEventRecord: version %d, %v", v, err)
	}
	if diff := cmp.Diff(ev, gotEv); diff != "" {
		t.Errorf("event after a round trip (-want +got):\n%s", diff)
	}
}

// fill sets every field reachable from v to a non-zero value derived from
// its path: strings to the path, numbers to its length, bools to true,
// times to a distinct UTC instant, pointers to a filled value, slices to
// two filled elements.
func fill(v reflect.Value, path string) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Date(2025, 1, 1, 0, 0, len(path), len(path), time.UTC)))
		return
	}
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		return // set by the caller: it must be JSON
	}
	if v.Type() == reflect.TypeFor[[]byte]() { // opaque to the record, stored as a JSON object
		v.SetBytes(fmt.Appendf(nil, `{"path":%q}`, path))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(path)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(len(path)))
	case reflect.Uint64:
		v.SetUint(uint64(len(path)))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), path)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, path+"[key]")
		fill(e, path+"[value]")
		v.SetMapIndex(k, e)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				panic(fmt.Sprintf("%s.%s is unexported: the record cannot store it", path, f.Name))
			}
			fill(v.Field(i), path+"."+f.Name)
		}
	default:
		panic(fmt.Sprintf("fill: %s has kind %s", path, v.Kind()))
	}
}

// TestRecordsHoldNoDomainType: the record types are built from basic
// types, time.Time, json.RawMessage and each other only, so no JSON tag
// of a domain package reaches the file.
func TestRecordsHoldNoDomainType(t *testing.T) {
	allowed := map[reflect.Type]bool{reflect.TypeFor[time.Time](): true, reflect.TypeFor[json.RawMessage](): true}
	var check func(tp reflect.Type, path string)
	check = func(tp reflect.Type, path string) {
		if allowed[tp] {
			return
		}
		switch tp.Kind() {
		case reflect.Pointer, reflect.Slice:
			check(tp.Elem(), path)
		case reflect.Struct:
			if !strings.HasSuffix(tp.Name(), "Record") || tp.PkgPath() != reflect.TypeFor[sessionRecord]().PkgPath() {
				t.Errorf("%s has type %s, which is not a record type of this package", path, tp)
				return
			}
			for i := range tp.NumField() {
				check(tp.Field(i).Type, path+"."+tp.Field(i).Name)
			}
		default:
			if tp.PkgPath() != "" {
				t.Errorf("%s has type %s of package %s; use a basic type", path, tp, tp.PkgPath())
			}
		}
	}
	check(reflect.TypeFor[sessionRecord](), "sessionRecord")
	check(reflect.TypeFor[eventRecord](), "eventRecord")
}

// TestEventRecordWithSeq: the record built around a sequence number taken
// later is, byte for byte, what json.Marshal writes for the whole record,
// for payloads as Update encodes them (json.Marshal of Change.Payload).
func TestEventRecordWithSeq(t *testing.T) {
	for i, payload := range []any{nil, map[string]any{"count": 3}, items("a <b> & c", "\u2028é"), "x", []int{}} {
		ev := fullEvent()
		ev.Payload, ev.Before = nil, nil
		if payload != nil {
			var err error
			if ev.Payload, err = json.Marshal(payload); err != nil {
				t.Fatal(err)
			}
		}
		if i%2 == 1 { // with and without a before
			ev.Before = json.RawMessage(`{"items":[]}`)
		}
		rec, err := encodeEventRecord(ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, seq := range []uint64{0, 1, 9, 10, 123456, 1<<64 - 1} {
			want, err := json.Marshal(eventRecord{V: eventRecordVersion, Seq: seq, At: ev.At, Actor: ev.Actor,
				Kind: string(ev.Kind), Reason: ev.Reason, Revision: ev.Revision, Before: ev.Before, Payload: ev.Payload})
			if err != nil {
				t.Fatal(err)
			}
			if got := rec.withSeq(seq); !bytes.Equal(got, want) {
				t.Errorf("payload %s, seq %d:\n got %s\nwant %s", ev.Payload, seq, got, want)
			}
		}
	}
}
