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
// record and ends the step with its tokens; the PostToolUse of a parallel
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
		record0 = `{"type":"token_usage_record","payload":{"response_id":"resp_0","usage":{"output_tokens":3}}}`
		call1   = `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_1"}}`
		call2   = `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_2"}}`
		record1 = `{"type":"token_usage_record","payload":{"response_id":"resp_1","usage":{"output_tokens":12}}}`
		late    = `{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"output_tokens":15}}}}`
	)
	var c cursor
	ctx := context.Background()
	appendLines(record0)
	if n, _, err := (codex{}).tokens(ctx, event{transcript: path}, &c); err != nil || n != 3 {
		t.Fatalf("the first response: %d tokens (%v), want 3", n, err)
	}
	appendLines(call1, call2)
	go func() {
		time.Sleep(150 * time.Millisecond)
		appendLines(record1)
	}()
	start := time.Now()
	n, fresh, err := codex{}.boundary(ctx, event{transcript: path, toolIDs: []string{"call_1"}}, &c)
	if err != nil || !fresh || n != 12 {
		t.Fatalf("PostToolUse of call_1: %d tokens, fresh %v (%v); want the record's 12", n, fresh, err)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond || waited >= recordWait {
		t.Errorf("waited %v for the record written after 150ms", waited)
	}
	appendLines(late)
	if n, fresh, err := (codex{}).boundary(ctx, event{transcript: path, toolIDs: []string{"call_2"}}, &c); err != nil || fresh || n != 0 {
		t.Errorf("PostToolUse of call_2, a parallel call of the same response: %d tokens, fresh %v (%v); want nothing", n, fresh, err)
	}
	if n, _, err := (codex{}).tokens(ctx, event{transcript: path}, &c); err != nil || n != 0 || c.Total != 15 {
		t.Errorf("after the late token_count: %d more tokens, total %d (%v); want none more, 15 in all", n, c.Total, err)
	}
}
