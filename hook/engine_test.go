package hook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeDaemon answers an LSP session per connection: initialize with the
// commands it lists, and each agentd command with the answer in answers,
// recording the commands and their arguments in order.
type fakeDaemon struct {
	t        *testing.T
	commands []string
	answers  map[string]string

	mu    sync.Mutex
	calls []string // command and its ARGS, as JSON
	wg    sync.WaitGroup
}

func (d *fakeDaemon) dial(ctx context.Context) (io.ReadWriteCloser, error) {
	client, server := net.Pipe()
	d.wg.Go(func() { d.serve(server) })
	return client, nil
}

func (d *fakeDaemon) serve(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		head, err := textproto.NewReader(r).ReadMIMEHeader()
		if err != nil {
			return // the hook dropped the connection
		}
		n, err := strconv.Atoi(head.Get("Content-Length"))
		if err != nil {
			d.t.Errorf("a message without Content-Length: %v", head)
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Command   string            `json:"command"`
				Arguments []json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			d.t.Errorf("message %s: %v", body, err)
			return
		}
		if req.ID == nil {
			continue // initialized
		}
		var result string
		switch req.Method {
		case "initialize":
			cmds, _ := json.Marshal(d.commands)
			result = `{"capabilities":{"executeCommandProvider":{"commands":` + string(cmds) + `}}}`
		case "workspace/executeCommand":
			var args map[string]any // the fields in one order, however the hook encoded them
			json.Unmarshal(req.Params.Arguments[0], &args)
			sorted, _ := json.Marshal(args)
			d.mu.Lock()
			d.calls = append(d.calls, req.Params.Command+" "+string(sorted))
			d.mu.Unlock()
			var ok bool
			if result, ok = d.answers[req.Params.Command]; !ok {
				d.t.Errorf("the hook sent %s, which this daemon does not answer", req.Params.Command)
				return
			}
		default:
			d.t.Errorf("the hook sent %s", req.Method)
			return
		}
		reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
		if _, err := fmt.Fprintf(conn, "Content-Length: %d\r\n\r\n%s", len(reply), reply); err != nil {
			return
		}
	}
}

// event runs one Gemini CLI event through Run and returns what it printed
// and the commands the daemon got for it.
func (d *fakeDaemon) event(opts Options, in string) (string, []string) {
	d.t.Helper()
	d.mu.Lock()
	from := len(d.calls)
	d.mu.Unlock()
	var out bytes.Buffer
	Run(context.Background(), opts, bytes.NewBufferString(in), &out)
	d.wg.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	return out.String(), append([]string(nil), d.calls[from:]...)
}

// The answers of a daemon at a plain boundary; stepNext is the two others
// in one.
const (
	beginAnswer = `{"injections":[{"variant":"todo_list_reminder","text":"update the list"}]}`
	endAnswer   = `{"stopTurn":false,"graceStep":true,"injections":[{"variant":"goal_budget_stop","text":"budget spent"}]}`
)

// TestBoundaryStepNext: at a step boundary the hook sends agentd.step.next
// to a daemon whose initialize result lists it, and agentd.step.end then
// agentd.step.begin to one that does not (an older agentd); the agent gets
// the same answer from both, and a stopTurn in step.next's answer ends the
// turn.
func TestBoundaryStepNext(t *testing.T) {
	lifecycle := []string{"agentd.turn.begin", "agentd.step.begin", "agentd.step.end", "agentd.turn.end"}
	answers := map[string]string{
		"agentd.turn.begin": `{"goalDriven":true,"goal":null}`,
		"agentd.step.begin": beginAnswer,
		"agentd.step.end":   endAnswer,
		"agentd.step.next":  `{"end":` + endAnswer + `,"begin":` + beginAnswer + `}`,
		"agentd.turn.end":   `{"continuation":null,"goal":{"status":"blocked","terminalReason":"token budget reached"}}`,
	}
	const (
		prompt   = `{"hook_event_name":"BeforeAgent","session_id":"g1","cwd":"/","transcript_path":"$T"}`
		response = `{"id":"m1","type":"gemini","content":"","tokens":{"input":300,"output":30,"total":330}}`
		first    = `{"hook_event_name":"BeforeModel","session_id":"g1","cwd":"/","transcript_path":"$T","llm_request":{"messages":[]}}`
		next     = `{"hook_event_name":"BeforeModel","session_id":"g1","cwd":"/","transcript_path":"$T","llm_request":{"messages":[{"role":"model","content":"ok"}]}}`
	)
	run := func(t *testing.T, d *fakeDaemon) (out string, calls []string, turn string) {
		opts := Options{Host: "gemini", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
		transcript := filepath.Join(t.TempDir(), "session.jsonl")
		ev := func(in string) (string, []string) { return d.event(opts, strings.ReplaceAll(in, "$T", transcript)) }
		if _, calls := ev(prompt); len(calls) != 2 {
			t.Fatalf("the prompt sent %v, want turn.begin and step.begin", calls)
		}
		var args struct{ TurnID string }
		json.Unmarshal([]byte(d.calls[0][len("agentd.turn.begin "):]), &args)
		ev(first)
		appendLine(t, transcript, response)
		out, calls = ev(next)
		return out, calls, args.TurnID
	}
	wantArgs := func(turn string) string {
		return fmt.Sprintf(`{"finishReason":"tool_calls","outputTokens":30,"turnId":%q}`, turn)
	}

	current := &fakeDaemon{t: t, commands: append(lifecycle, "agentd.step.next"), answers: answers}
	gotNext, calls, turn := run(t, current)
	if want := []string{"agentd.step.next " + wantArgs(turn)}; !cmp.Equal(calls, want) {
		t.Errorf("a current daemon got %v at the boundary, want %v", calls, want)
	}
	older := &fakeDaemon{t: t, commands: lifecycle, answers: answers}
	gotPair, calls, turn := run(t, older)
	if want := []string{"agentd.step.end " + wantArgs(turn), fmt.Sprintf(`agentd.step.begin {"turnId":%q}`, turn)}; !cmp.Equal(calls, want) {
		t.Errorf("an older daemon got %v at the boundary, want %v", calls, want)
	}
	want := `{"hookSpecificOutput":{"hookEventName":"BeforeModel","llm_request":{"messages":[{"role":"model","content":"ok"},{"content":"budget spent\n\nupdate the list","role":"user"}]}}}` + "\n"
	if gotNext != want || gotPair != want {
		t.Errorf("the agent got\n%s from step.next and\n%s from the two calls; want\n%s", gotNext, gotPair, want)
	}

	stops := &fakeDaemon{t: t, commands: append(lifecycle, "agentd.step.next"), answers: map[string]string{
		"agentd.turn.begin": answers["agentd.turn.begin"], "agentd.step.begin": beginAnswer, "agentd.turn.end": answers["agentd.turn.end"],
		"agentd.step.next": `{"end":{"stopTurn":true,"graceStep":false,"injections":[]},"begin":null}`,
	}}
	out, calls, turn := run(t, stops)
	if want := []string{"agentd.step.next " + wantArgs(turn), fmt.Sprintf(`agentd.turn.end {"outcome":"completed","turnId":%q}`, turn)}; !cmp.Equal(calls, want) {
		t.Errorf("after a stopTurn the hook sent %v, want %v", calls, want)
	}
	if want := `{"continue":false,"stopReason":"agentd stopped the agent: token budget reached"}` + "\n"; out != want {
		t.Errorf("a stopTurn printed %s, want %s", out, want)
	}
}
