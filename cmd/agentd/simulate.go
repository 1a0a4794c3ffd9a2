package main

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
)

// scripts are the example conversations `agentd simulate` plays.
//
//go:embed scripts/*.json
var scripts embed.FS

// script is a recorded conversation: an optional goal to create, then turns
// of steps with their output tokens and tool calls (docs/simulate.md).
type script struct {
	Description string `json:"description"`
	Session     string `json:"session"`
	Goal        *struct {
		Objective           string         `json:"objective"`
		CompletionCriterion string         `json:"completionCriterion"`
		TaskFile            string         `json:"taskFile"`
		Budget              map[string]any `json:"budget"`
	} `json:"goal"`
	Turns []struct {
		Origin string `json:"origin"` // default: "continuation" after a continuation, else "user"
		Steps  []struct {
			OutputTokens int64  `json:"outputTokens"`
			FinishReason string `json:"finishReason"`
			Tools        []struct {
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			} `json:"tools"`
		} `json:"steps"`
		Outcome string `json:"outcome"`
		Error   *struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"turns"`
}

// loadScript reads an embedded script by name ("complete", "turn-budget")
// or a JSON file by path.
func loadScript(name string) (*script, error) {
	data, err := scripts.ReadFile("scripts/" + name + ".json")
	if err != nil {
		if data, err = os.ReadFile(name); err != nil {
			return nil, fmt.Errorf("no script %q: give a JSON file or one of the built-in scripts complete, turn-budget", name)
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var s script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("script %s: %v", name, err)
	}
	return &s, nil
}

// runSimulate plays a script as an agent host would, through the lifecycle
// commands, and prints each turn's injections, tool results and
// continuation. Without --workspace and --state-dir it plays in a fresh
// temporary folder, so it never touches real state.
func runSimulate(ctx context.Context, o options, stateDir string, log *slog.Logger, pos []string, stdout, stderr io.Writer) int {
	name := "complete"
	if o.script != "" {
		name = o.script
	}
	if len(pos) > 0 {
		fmt.Fprint(stderr, simulateUsage)
		return 2
	}
	sc, err := loadScript(name)
	if err != nil {
		fmt.Fprintf(stderr, "agentd simulate: %v\n", err)
		return 2
	}
	dir := o.workspace
	if dir == "" {
		tmp, err := os.MkdirTemp("", "agentd-simulate-")
		if err != nil {
			fmt.Fprintf(stderr, "agentd simulate: %v\n", err)
			return 1
		}
		defer os.RemoveAll(tmp)
		dir, stateDir = filepath.Join(tmp, "workspace"), filepath.Join(tmp, "state")
		os.Mkdir(dir, 0o700)
	}
	abs, _ := filepath.Abs(dir)
	svc := service.New(workspace.Options{StateDir: stateDir, Logger: log}, service.OneShot)
	defer svc.Close()
	session := o.session
	if session == "" {
		session = sc.Session
	}
	cl := commands.NewClient(svc, commands.Defaults{Session: session})
	defer cl.Close()
	if err := cl.AddFolder(abs); err != nil {
		fmt.Fprintf(stderr, "agentd simulate: %v\n", err)
		return 1
	}
	p := &player{ctx: ctx, cl: cl, out: stdout, verbose: o.verbose, run: time.Now().UnixNano()}
	if err := p.play(sc); err != nil {
		fmt.Fprintf(stderr, "agentd simulate: %v\n", err)
		return 1
	}
	return 0
}

type player struct {
	ctx     context.Context
	cl      *commands.Client
	out     io.Writer
	verbose bool
	run     int64 // makes turn ids unique per run, so a script can be played again
}

// exec runs a command and decodes its result into out.
func (p *player) exec(id string, args map[string]any, out any) error {
	raw, _ := json.Marshal([]any{args})
	res, err := p.cl.Execute(p.ctx, id, raw)
	if err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	b, _ := json.Marshal(res)
	return json.Unmarshal(b, out)
}

func (p *player) play(sc *script) error {
	fmt.Fprintf(p.out, "Script: %s\n\n", sc.Description)
	if g := sc.Goal; g != nil {
		var st commands.State
		if err := p.exec("agentd.goal.create", map[string]any{"objective": g.Objective, "completionCriterion": g.CompletionCriterion, "taskFile": g.TaskFile, "replace": true}, &st); err != nil {
			return err
		}
		if len(g.Budget) > 0 {
			if err := p.exec("agentd.goal.setBudget", g.Budget, &st); err != nil {
				return err
			}
		}
		fmt.Fprintf(p.out, "User creates a goal: %s\n  budget: %s\n", st.Goal.Objective, commands.FormatProgress(st.Goal))
	}
	continued := false
	for i, t := range sc.Turns {
		origin := t.Origin
		if origin == "" {
			origin = "user"
			if continued {
				origin = "continuation"
			}
		}
		turnID := fmt.Sprintf("sim-%d-turn-%d", p.run, i+1)
		var begin commands.TurnBeginResult
		if err := p.exec("agentd.turn.begin", map[string]any{"turnId": turnID, "origin": origin}, &begin); err != nil {
			return err
		}
		fmt.Fprintf(p.out, "\nTurn %d (origin %s, goal-driven: %v)\n", i+1, origin, begin.GoalDriven)
		stopped := false
		for j, s := range t.Steps {
			var sb commands.StepBeginResult
			if err := p.exec("agentd.step.begin", map[string]any{"turnId": turnID}, &sb); err != nil {
				return err
			}
			for _, inj := range sb.Injections {
				p.show(fmt.Sprintf("  step %d  inject %s", j+1, inj.Variant), inj.Text)
			}
			for _, tool := range s.Tools {
				var tr commands.ToolResult
				if err := p.exec("agentd.callTool", map[string]any{"name": tool.Name, "input": tool.Input, "turnId": turnID}, &tr); err != nil {
					return err
				}
				mark := "→"
				if tr.IsError {
					mark = "→ refused:"
				}
				p.show(fmt.Sprintf("  step %d  %s %s", j+1, tool.Name, mark), tr.Output)
			}
			var se commands.StepEndResult
			if err := p.exec("agentd.step.end", map[string]any{"turnId": turnID, "outputTokens": s.OutputTokens, "finishReason": s.FinishReason}, &se); err != nil {
				return err
			}
			fmt.Fprintf(p.out, "  step %d  end: %s, output tokens: %d\n", j+1, s.FinishReason, s.OutputTokens)
			for _, inj := range se.Injections {
				p.show(fmt.Sprintf("  step %d  inject %s", j+1, inj.Variant), inj.Text)
			}
			if se.StopTurn {
				fmt.Fprintf(p.out, "  agentd says: stop the turn\n")
				stopped = true
				break
			}
		}
		outcome := t.Outcome
		if outcome == "" || stopped {
			outcome = "completed"
		}
		args := map[string]any{"turnId": turnID, "outcome": outcome}
		if t.Error != nil {
			args["error"] = t.Error
		}
		var end commands.TurnEndResult
		if err := p.exec("agentd.turn.end", args, &end); err != nil {
			return err
		}
		continued = end.Continuation != nil
		if continued {
			p.show("  turn end: continuation "+string(end.Continuation.Variant), end.Continuation.Prompt)
		} else {
			fmt.Fprintf(p.out, "  turn end: no continuation\n")
		}
		if end.Goal != nil {
			fmt.Fprintf(p.out, "  goal: %s · %s", end.Goal.Status, commands.FormatProgress(end.Goal))
			if end.Goal.TerminalReason != "" {
				fmt.Fprintf(p.out, " · %s", end.Goal.TerminalReason)
			}
			fmt.Fprintln(p.out)
		}
	}
	var st commands.State
	if err := p.exec("agentd.state", map[string]any{}, &st); err != nil {
		return err
	}
	fmt.Fprintf(p.out, "\nFinal todo list (revision %d):\n", st.Revision)
	for _, it := range st.Todos.Items {
		fmt.Fprintf(p.out, "  [%s] %s\n", it.Status, it.Title)
	}
	return nil
}

// show prints a label and text: the first meaningful line, or all of it
// with --verbose.
func (p *player) show(label, text string) {
	if p.verbose {
		fmt.Fprintf(p.out, "%s\n", label)
		for _, line := range strings.Split(text, "\n") {
			fmt.Fprintf(p.out, "      | %s\n", line)
		}
		return
	}
	first := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && line != "<system-reminder>" {
			first = line
			break
		}
	}
	if r := []rune(first); len(r) > 100 {
		first = string(r[:99]) + "…"
	}
	fmt.Fprintf(p.out, "%s %s\n", label, first)
}
