package commands_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/caller"
	"github.com/agentd/agentd/commands"
)

// claudeShell is a caller in Claude Code's Bash tool.
var claudeShell = caller.Agent{Name: "Claude Code", Marker: "CLAUDECODE=1", Pid: 4242}

// agentShellCases are the calls an agent's shell may not make, after
// setup made by the person (docs/runtime.md, "Who is calling: a person or
// an agent's shell").
var agentShellCases = []struct {
	name  string
	setup []run
	cmd   run
	// personCode is the code the person's same call gets: "" for none, or
	// a refusal of its own when the case's folder cannot serve it (no team
	// file to accept).
	personCode string
}{
	{"goal.create with a check", nil, run{"agentd.goal.create", `{"objective":"o","check":"touch pwned"}`}, ""},
	{"goal.create replacing", []run{{"agentd.goal.create", `{"objective":"o","check":"true"}`}}, run{"agentd.goal.create", `{"objective":"o","replace":true}`}, ""},
	{"goal.setCheck", []run{{"agentd.goal.create", withGoal}}, run{"agentd.goal.setCheck", `{"command":"touch pwned"}`}, ""},
	{"goal.setCheck removing", []run{{"agentd.goal.create", `{"objective":"o","check":"true"}`}}, run{"agentd.goal.setCheck", `{"command":null}`}, ""},
	{"goal.runCheck", []run{{"agentd.goal.create", `{"objective":"o","check":"true"}`}}, run{"agentd.goal.runCheck", `{}`}, ""},
	{"goal.setBudget raising", []run{{"agentd.goal.create", withGoal}, {"agentd.goal.setBudget", `{"turns":3}`}}, run{"agentd.goal.setBudget", `{"turns":300}`}, ""},
	{"goal.setBudget removing", []run{{"agentd.goal.create", withGoal}, {"agentd.goal.setBudget", `{"turns":3}`}}, run{"agentd.goal.setBudget", `{"turns":null}`}, ""},
	{"goal.pause", []run{{"agentd.goal.create", withGoal}}, run{"agentd.goal.pause", `{}`}, ""},
	{"goal.resume", []run{{"agentd.goal.create", withGoal}, {"agentd.goal.pause", `{}`}}, run{"agentd.goal.resume", `{}`}, ""},
	{"goal.cancel", []run{{"agentd.goal.create", withGoal}}, run{"agentd.goal.cancel", `{}`}, ""},
	{"goal.wait stopping the wall clock", []run{{"agentd.goal.create", withGoal}}, run{"agentd.goal.wait", `{"for":"1h","wallClock":"stops"}`}, ""},
	{"goal.queue.add", nil, run{"agentd.goal.queue.add", `{"objective":"next","check":"touch pwned"}`}, ""},
	{"goal.queue.remove", []run{{"agentd.goal.queue.add", `{"objective":"a","check":"true"}`}}, run{"agentd.goal.queue.remove", `{"id":"$QUEUED0"}`}, ""},
	{"goal.queue.move", []run{{"agentd.goal.queue.add", `{"objective":"a"}`}, {"agentd.goal.queue.add", `{"objective":"b"}`}}, run{"agentd.goal.queue.move", `{"id":"$QUEUED0","index":1}`}, ""},
	{"goal.queue.setAutoAdvance", nil, run{"agentd.goal.queue.setAutoAdvance", `{"on":false}`}, ""},
	{"undo", []run{{"agentd.goal.create", withGoal}, {"agentd.goal.setCheck", `{"command":"true"}`}}, run{"agentd.undo", `{}`}, ""},
	{"goal.approveCheck", []run{{"agentd.goal.create", `{"objective":"o","check":"true"}`}}, run{"agentd.goal.approveCheck", `{"command":"true"}`}, ""},
	{"team.accept", nil, run{"agentd.team.accept", `{"sha256":"` + strings.Repeat("ab", 32) + `"}`}, "args.invalid"},
}

// mustRun runs r on cl, failing the test on an error.
func mustRun(t *testing.T, cl *commands.Client, r run) any {
	t.Helper()
	res, err := cl.Execute(context.Background(), r.id, json.RawMessage("["+withQueuedID(t, cl, r.args)+"]"))
	if err != nil {
		t.Fatalf("%s %s: %v", r.id, r.args, err)
	}
	return res
}

// revision is the default session's revision.
func revision(t *testing.T, cl *commands.Client) uint64 {
	t.Helper()
	return mustRun(t, cl, run{"agentd.state", `{}`}).(protocol.State).Revision
}

// TestAgentShellRefused: each of the person's commands, called from an
// agent's shell, is refused with caller.agent_shell and a message that
// names the agent and what to do, and changes nothing.
func TestAgentShellRefused(t *testing.T) {
	for _, tc := range agentShellCases {
		t.Run(tc.name, func(t *testing.T) {
			cl, _ := newTestClient(t)
			for _, r := range tc.setup {
				mustRun(t, cl, r)
			}
			before := revision(t, cl)
			cl.SetCaller(claudeShell)
			res, err := cl.Execute(context.Background(), tc.cmd.id, json.RawMessage("["+withQueuedID(t, cl, tc.cmd.args)+"]"))
			if code := protocol.ErrorCode(err); code != protocol.CodeAgentShell {
				t.Fatalf("%s %s from Claude Code's shell = %v, %v; want a refusal %s", tc.cmd.id, tc.cmd.args, res, err, protocol.CodeAgentShell)
			}
			for _, want := range []string{tc.cmd.id, "Claude Code's shell (CLAUDECODE=1 in pid 4242)", "acts as the model", "ask them to run it in their own terminal", "not through Claude Code's shell"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q lacks %q", err, want)
				}
			}
			if after := revision(t, cl); after != before {
				t.Errorf("revision %d after the refusal, was %d: the refused call changed the state", after, before)
			}
			cl.SetCaller(caller.Agent{})
			if tc.personCode == "" {
				mustRun(t, cl, tc.cmd) // the person may
				return
			}
			_, err = cl.Execute(context.Background(), tc.cmd.id, json.RawMessage("["+tc.cmd.args+"]"))
			if code := protocol.ErrorCode(err); code != tc.personCode {
				t.Errorf("%s %s from the person = %v; want %s", tc.cmd.id, tc.cmd.args, err, tc.personCode)
			}
		})
	}
}

// TestAgentShellMayActAsTheModel: from an agent's shell, reads, the
// model's tools, the host's lifecycle calls and a goal without a check
// (what the model's CreateGoal may do too) work.
func TestAgentShellMayActAsTheModel(t *testing.T) {
	cl, _ := newTestClient(t)
	cl.SetCaller(claudeShell)
	for _, r := range []run{
		{"agentd.goal.create", withGoal},
		{"agentd.state", `{}`},
		{"agentd.sessions", `{}`},
		{"agentd.history", `{}`},
		{"agentd.tools", `{}`},
		{"agentd.goal.queue.list", `{}`},
		{"agentd.todo.set", setTodos},
		{"agentd.turn.begin", beginTurn},
		{"agentd.step.begin", `{"turnId":"t1"}`},
		{"agentd.callTool", `{"name":"GetGoal","input":{},"turnId":"t1"}`},
		{"agentd.step.end", `{"turnId":"t1","finishReason":"stop"}`},
		{"agentd.turn.end", `{"turnId":"t1","outcome":"completed"}`},
	} {
		mustRun(t, cl, r)
	}
}

// TestAgentShellWaitsAsTheModel: agentd.goal.wait from an agent's shell
// acts as the model (docs/runtime.md §7, §2.13): the wait is the model's,
// counts against the wall clock, and the shell cannot end it with
// agentd.goal.resume.
func TestAgentShellWaitsAsTheModel(t *testing.T) {
	cl, _ := newTestClient(t)
	mustRun(t, cl, run{"agentd.goal.create", withGoal})
	cl.SetCaller(claudeShell)
	st := mustRun(t, cl, run{"agentd.goal.wait", `{"for":"1h","note":"CI"}`}).(protocol.State)
	if w := st.Goal.Wait; st.Goal.Status != "waiting" || w == nil || w.By != "model" || w.WallClock != "counts" {
		t.Fatalf("goal after the shell's wait: %+v", st.Goal)
	}
	if _, err := cl.Execute(context.Background(), "agentd.goal.resume", json.RawMessage(`[{}]`)); protocol.ErrorCode(err) != protocol.CodeAgentShell {
		t.Errorf("resume from the shell: %v, want %s", err, protocol.CodeAgentShell)
	}
}

// TestEveryPersonCommandRefusedInATest: a command the table marks as the
// person's has a case in agentShellCases, so a new one needs its test.
func TestEveryPersonCommandRefusedInATest(t *testing.T) {
	tested := map[string]bool{}
	for _, tc := range agentShellCases {
		tested[tc.cmd.id] = true
	}
	for _, c := range commands.Commands {
		if c.Who() != "anyone" && !tested[string(c.ID)] {
			t.Errorf("%s is %s's but no case of agentShellCases calls it from an agent's shell", c.ID, c.Who())
		}
	}
}
