package hook

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCodexBoundaryAwaitsItsRecord: a PostToolUse whose tool's call is in
// the rollout before its response's token_usage_record waits for the
// record and ends the step with its tokens (also for the rollout's first
// response, before any record was read); the PostToolUse of a parallel
// call of the same response then ends nothing; the response's late
// token_count events count nothing again (docs/hooks.md, "Codex").
func TestCodexBoundaryAwaitsItsRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	appendLines := func(lines ...string) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		for _, l := range lines {
			f.WriteString(l + "\n")
		}
	}
	const (
		call0   = `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_0"}}`
		record0 = `{"type":"token_usage_record","payload":{"response_id":"resp_0","usage":{"output_tokens":3}}}`
		call1   = `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_1"}}`
		call2   = `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_2"}}`
		record1 = `{"type":"token_usage_record","payload":{"response_id":"resp_1","usage":{"output_tokens":12}}}`
		late    = `{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"output_tokens":15}}}}`
	)
	var c cursor
	ctx := context.Background()
	// boundary ends the step of call's response, whose record comes 150ms
	// after its call line. The event's time is long, so the wait ends with
	// the record however loaded the machine is.
	boundary := func(call, callLine, record string, want int64) {
		t.Helper()
		appendLines(callLine)
		go func() {
			time.Sleep(150 * time.Millisecond) // the record comes later than the hook
			appendLines(record)
		}()
		start := time.Now()
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		n, fresh, err := codex{}.boundary(ctx, event{transcript: path, toolIDs: []string{call}}, &c)
		if err != nil || !fresh || n != want {
			t.Fatalf("PostToolUse of %s: %d tokens, fresh %v (%v); want the record's %d", call, n, fresh, err, want)
		}
		if waited := time.Since(start); waited < 100*time.Millisecond {
			t.Errorf("PostToolUse of %s waited %v for the record written after 150ms", call, waited)
		}
	}
	// The rollout's first response: no record read yet, but one may come.
	boundary("call_0", call0, record0, 3)
	appendLines(call1)
	boundary("call_1", call2, record1, 12)
	appendLines(late)
	if n, fresh, err := (codex{}).boundary(ctx, event{transcript: path, toolIDs: []string{"call_2"}}, &c); err != nil || fresh || n != 0 {
		t.Errorf("PostToolUse of call_2, a parallel call of the same response: %d tokens, fresh %v (%v); want nothing", n, fresh, err)
	}
	if n, _, err := (codex{}).tokens(ctx, event{transcript: path}, &c); err != nil || n != 0 || c.Total != 15 {
		t.Errorf("after the late token_count: %d more tokens, total %d (%v); want none more, 15 in all", n, c.Total, err)
	}
}
