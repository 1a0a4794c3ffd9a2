package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/reminder"
	"github.com/agentd/agentd/workspace"
)

// TestResultGolden pins the JSON of every command's result and every
// notification's params: each type is filled, field by field, with
// distinct values (every optional field present) and its encoding
// compared with testdata/results/NAME.json. A field renamed, dropped or
// retyped changes the wire, which clients read: the golden file shows it
// (go test ./commands -run TestResultGolden -update rewrites them).
func TestResultGolden(t *testing.T) {
	types := map[string]reflect.Type{}
	for _, c := range Commands {
		types[string(c.ID)] = c.Result
	}
	for _, n := range notificationParams {
		types[n.method] = n.params
	}
	for name, typ := range types {
		v := reflect.New(typ)
		(&filler{}).fill(v.Elem())
		got, err := json.MarshalIndent(v.Interface(), "", "  ")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got = append(got, '\n')
		path := filepath.Join("testdata", "results", strings.ReplaceAll(name, "/", "_")+".json")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run go test ./commands -run TestResultGolden -update)", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s (%v) encodes as\n%s\nwant (%s)\n%s", name, typ, got, path, want)
		}
	}
}

// filler sets every field a client sees to a value of its own: strings
// and numbers count up, booleans are true, pointers, slices and maps hold
// one element, times count up in seconds. Fields the JSON leaves out
// (json:"-", unexported) are left zero and counted by nothing, so that two
// types with the same JSON fill alike.
type filler struct{ n int }

var fillEpoch = time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)

func (f *filler) next() int { f.n++; return f.n }

func (f *filler) fill(v reflect.Value) {
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(fillEpoch.Add(time.Duration(f.next()) * time.Second)))
		return
	case reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(`{"raw":` + strconv.Itoa(f.next()) + `}`))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if sf.IsExported() && sf.Tag.Get("json") != "-" {
				f.fill(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		f.fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		e := reflect.New(v.Type().Elem()).Elem()
		f.fill(e)
		v.SetMapIndex(reflect.ValueOf("key"+strconv.Itoa(f.next())).Convert(v.Type().Key()), e)
	case reflect.Interface:
		v.Set(reflect.ValueOf("any" + strconv.Itoa(f.next())))
	case reflect.String:
		v.SetString("s" + strconv.Itoa(f.next()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.next()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.next()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(f.next()))
	}
}

// notificationParams are the params type of each notification.
var notificationParams = []struct {
	method string
	params reflect.Type
}{
	{"agentd/todoChanged", reflect.TypeFor[protocol.TodoChanged]()},
	{"agentd/goalChanged", reflect.TypeFor[protocol.GoalChanged]()},
	{"agentd/taskFileChanged", reflect.TypeFor[protocol.TaskFileChanged]()},
	{"agentd/queueChanged", reflect.TypeFor[protocol.QueueChanged]()},
}

// TestResultTypeRefused: a handler that answers another type than the
// protocol's table names for its command is refused when the table is
// built.
func TestResultTypeRefused(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "agentd.sessions answers protocol.State; the protocol says protocol.SessionsResult") {
			t.Errorf("def with the wrong result: recover() = %v, want a panic naming the command and both types", r)
		}
	}()
	def[protocol.State](protocol.CmdSessions, func(ctx context.Context, c *call, a *protocol.NoArgs) (protocol.State, error) {
		return protocol.State{}, nil
	})
}

// TestWireMirrorsDomain: each wire value the results and notifications
// carry encodes exactly as the domain value it is built from, every field
// filled: a field added to a domain type (a goal snapshot's, a queued
// goal's, a history event's) and not to its wire type fails here instead
// of vanishing from the wire.
func TestWireMirrorsDomain(t *testing.T) {
	for _, m := range []struct {
		name   string
		domain any
		wire   func(v any) any
	}{
		{"goal snapshot", &goal.Snapshot{}, func(v any) any { return wireGoal(v.(*goal.Snapshot)) }},
		{"queued goal", &goal.QueuedGoal{}, func(v any) any { return wireQueue([]goal.QueuedGoal{*v.(*goal.QueuedGoal)})[0] }},
		{"team file notice", &workspace.TeamFileNotice{}, func(v any) any { return wireTeamFile(v.(*workspace.TeamFileNotice)) }},
		{"history event", &workspace.Event{}, func(v any) any { return wireEvent(*v.(*workspace.Event)) }},
		{"continuation", &reminder.Continuation{}, func(v any) any { return wireContinuation(v.(*reminder.Continuation)) }},
		{"check run", &goal.CheckRun{}, func(v any) any { return protocol.CheckRun(*v.(*goal.CheckRun)) }},
	} {
		(&filler{}).fill(reflect.ValueOf(m.domain).Elem())
		want, err := json.Marshal(m.domain)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(m.wire(m.domain))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the wire value encodes as\n%s\nthe domain value as\n%s", m.name, got, want)
		}
	}
}
