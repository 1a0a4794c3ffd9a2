package tests

// What agentd costs inside a real agent (docs/performance.md, "Cost
// inside the agent (issue 26)"): the same scripted session, in each agent,
// without agentd, with agentd's hooks doing nothing, and with agentd. Run
// by hand (it takes minutes and asserts nothing):
//
//	AGENTD_AGENTS=DIR go test ./tests -run '^$' -bench RealAgentsCost -benchtime 1x
//
// -agents-cost-rounds sets the sessions per agent and mode (default 3),
// -agents-cost-calls the model calls per session (default 12),
// -agents-cost-only the agents (e.g. gemini,codex).

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	costRounds = flag.Int("agents-cost-rounds", 3, "BenchmarkRealAgentsCost: sessions per agent and mode")
	costCalls  = flag.Int("agents-cost-calls", 12, "BenchmarkRealAgentsCost: model calls per session")
	costOnly   = flag.String("agents-cost-only", "", "BenchmarkRealAgentsCost: run only these agents (comma-separated, as agentd setup names them)")
)

// costModel is one scripted model for Claude Code (Messages API), Gemini
// CLI (streamGenerateContent, server-sent events) and Codex (Responses
// API) on 127.0.0.1. It answers each main-loop call with the next reply
// of its script and stamps when the call arrived (its body read) and when
// its answer was written whole; other calls get a short text.
type costModel struct {
	url    string
	script []reply
	main   func(body []byte) bool // the call is one of the agent's loop

	mu    sync.Mutex
	calls []costCall
}

type costCall struct{ arrived, answered time.Time }

func newCostModel(tb testing.TB, script []reply, main func(body []byte) bool) *costModel {
	m := &costModel{script: script, main: main}
	m.url = serveModel(tb, m.serve)
	return m
}

func (m *costModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	arrived := time.Now()
	rp, n := reply{text: "A title.", tokens: 3}, 0
	main := r.Method == http.MethodPost && m.main(body)
	if main {
		m.mu.Lock()
		m.calls = append(m.calls, costCall{arrived: arrived})
		n = len(m.calls)
		rp = reply{text: "Past the script.", tokens: 1}
		if n <= len(m.script) {
			rp = m.script[n-1]
		}
		m.mu.Unlock()
	}
	switch path := r.URL.Path; {
	case path == "/v1/messages":
		writeMessages(w, fmt.Sprintf("%p_%d", m, n), rp)
	case path == "/v1/responses":
		writeResponses(w, n, rp)
	case strings.HasSuffix(path, ":streamGenerateContent"):
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range geminiChunks(rp) {
			b, _ := json.Marshal(c)
			fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		}
	case strings.HasSuffix(path, ":generateContent"):
		b, _ := json.Marshal(geminiChunks(rp)[0])
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	default:
		http.NotFound(w, r)
		return
	}
	if main {
		m.mu.Lock()
		m.calls[n-1].answered = time.Now()
		m.mu.Unlock()
	}
}

// costAgent is how one agent runs the bench's session.
type costAgent struct {
	name  string // as `agentd setup` names it
	hooks string // its hooks file in the workspace, after setup
	// tool is the reply of model call i that calls the agent's own
	// file-reading tool on path; main tells its loop's model calls from
	// others.
	tool func(i int, path string) reply
	main func(body []byte) bool
	// prepare writes the agent's own configuration for model m (the
	// folder trusted), and returns its command line and environment.
	prepare func(tb testing.TB, a *agentEnv, m *costModel) (argv, env []string)
}

// offers says whether a request body offers a tool of that name.
func offers(name string) func([]byte) bool {
	return func(body []byte) bool { return strings.Contains(string(body), `"`+name+`"`) }
}

// costPrompt is the session's one prompt.
const costPrompt = "Read the notes, then say what they hold."

var costAgents = []costAgent{{
	name: "claude", hooks: ".claude/settings.json",
	tool: func(_ int, path string) reply {
		return reply{tool: "Read", input: map[string]any{"file_path": path}, tokens: 20}
	},
	main: offers("Read"),
	prepare: func(tb testing.TB, a *agentEnv, m *costModel) ([]string, []string) {
		a.trustClaude()
		return []string{agentBin(tb, "claude"), "-p", costPrompt, "--allowedTools", "Read"},
			claudeEnv(m.url)
	},
}, {
	name: "gemini", hooks: ".gemini/settings.json",
	// Gemini streams: each answer is words, a chunk each, then the call.
	tool: func(i int, path string) reply {
		return reply{text: costWords(i, 12), tool: "read_file", input: map[string]any{"file_path": path}, tokens: 20, streamed: true}
	},
	main: offers("read_file"),
	prepare: func(tb testing.TB, a *agentEnv, m *costModel) ([]string, []string) {
		a.trustFolder(".gemini")
		writeFile(tb, filepath.Join(a.home, ".gemini", "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}}}`))
		return []string{agentBin(tb, "gemini"), "-m", "gemini-2.5-flash", "-p", costPrompt, "--yolo"},
			[]string{"GOOGLE_GEMINI_BASE_URL=" + m.url, "GEMINI_API_KEY=dummy"}
	},
}, {
	name: "codex", hooks: ".codex/hooks.json",
	tool: func(_ int, path string) reply {
		return reply{tool: "exec_command", input: map[string]any{"cmd": "cat " + filepath.Base(path), "login": false}, tokens: 20}
	},
	main: func([]byte) bool { return true },
	prepare: func(tb testing.TB, a *agentEnv, m *costModel) ([]string, []string) {
		env := a.codexConfig(m.url)
		return []string{agentBin(tb, "codex"), "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", costPrompt}, env
	},
}}

// More agents (Qwen Code, Copilot CLI, opencode) join costAgents with
// their own prepare once `agentd setup` knows them: the modes below need
// only setup's hooks file.

// costWords is n words of call i, each different (Gemini CLI cuts a
// stream that repeats itself).
func costWords(i, n int) string {
	var b strings.Builder
	for k := range n {
		fmt.Fprintf(&b, "c%dw%d ", i, k)
	}
	return b.String()
}

// The modes of a session: the agent alone (the floor), after `agentd
// setup` with every hook running an empty program instead of agentd-hook
// (what running a hook costs the agent), and after `agentd setup`. For
// Gemini CLI also with the AfterModel hook an older setup installed.
const (
	modeOwn      = "agent alone"
	modeNull     = "setup, hooks run an empty program"
	modeAgentd   = "setup (agentd)"
	modeChunkOld = "setup + AfterModel as before"
)

// costRun is one session's figures.
type costRun struct {
	gaps       []time.Duration // per model call after the first: its arrival after the answer before it
	start, end time.Duration   // exec to the first call; the last answer to exit
	hookRuns   int             // hook processes (the empty program's mode)
}

// BenchmarkRealAgentsCost runs the session (costCalls model calls: a file
// read at each, another file each time, but the last, which answers) in each agent and mode,
// interleaved round by round, and prints per model call the agent's own
// overhead (the time from one answer to the next call, without agentd)
// and what each mode adds to it, as a ratio of that floor.
func BenchmarkRealAgentsCost(b *testing.B) {
	agentsDir(b)
	null := buildEmptyProgram(b)
	results := map[string]map[string][]costRun{}
	for round := range *costRounds {
		for _, ag := range costAgents {
			if *costOnly != "" && !slices.Contains(strings.Split(*costOnly, ","), ag.name) {
				continue
			}
			modes := []string{modeOwn, modeNull, modeAgentd}
			if ag.name == "gemini" {
				modes = append(modes, modeChunkOld)
			}
			if results[ag.name] == nil {
				results[ag.name] = map[string][]costRun{}
			}
			for _, mode := range modes {
				r := costSession(b, ag, mode, null)
				results[ag.name][mode] = append(results[ag.name][mode], r)
				fmt.Fprintf(os.Stderr, "round %d %s, %s: per-call p50 %v, start %v\n", round+1, ag.name, mode, median(r.gaps), r.start)
			}
		}
	}
	costReport(b, results)
}

// buildEmptyProgram builds a Go program that reads its stdin and exits,
// without cgo as agentd-hook is, and that appends one byte to the file
// $AGENTD_COST_HOOKS names: a hook that does nothing but run.
func buildEmptyProgram(b *testing.B) string {
	dir := b.TempDir()
	src := `package main

import (
	"io"
	"os"
)

func main() {
	io.Copy(io.Discard, os.Stdin)
	if f, err := os.OpenFile(os.Getenv("AGENTD_COST_HOOKS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		f.Write([]byte{'.'})
		f.Close()
	}
}
`
	writeFile(b, filepath.Join(dir, "main.go"), []byte(src))
	writeFile(b, filepath.Join(dir, "go.mod"), []byte("module emptyhook\n"))
	out := filepath.Join(dir, "emptyhook")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building the empty hook: %v\n%s", err, msg)
	}
	return out
}

// costSession runs the session once in agent ag and mode.
func costSession(b *testing.B, ag costAgent, mode, null string) costRun {
	a := newAgentEnv(b)
	script := make([]reply, *costCalls)
	for i := range script {
		// Another file at each call: the agents stop a model that
		// repeats one tool call (Gemini CLI after 5).
		notes := filepath.Join(a.ws, fmt.Sprintf("notes-%d.txt", i))
		writeFile(b, notes, []byte(fmt.Sprintf("Notes, part %d.\n", i)))
		script[i] = ag.tool(i, notes)
	}
	script[len(script)-1] = reply{text: "The notes hold one line.", tokens: 9}
	m := newCostModel(b, script, ag.main)
	counted := filepath.Join(a.home, "hook-runs")
	if mode != modeOwn {
		a.editorFirst()
		a.setup(ag.name)
		hooks := filepath.Join(a.ws, ag.hooks)
		text, err := os.ReadFile(hooks)
		if err != nil {
			b.Fatal(err)
		}
		switch mode {
		case modeNull:
			text = []byte(strings.ReplaceAll(string(text), `"agentd-hook `+ag.name+`"`, `"`+null+`"`))
		case modeChunkOld:
			var settings map[string]any
			json.Unmarshal(text, &settings)
			settings["hooks"].(map[string]any)["AfterModel"] = []any{map[string]any{"hooks": []any{
				map[string]any{"type": "command", "command": "agentd-hook gemini", "timeout": 10000}}}}
			text, _ = json.Marshal(settings)
		}
		writeFile(b, hooks, text)
	}
	argv, env := ag.prepare(b, a, m)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = a.ws, a.environ(append(env, "AGENTD_COST_HOOKS="+counted)...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	exited := time.Now()
	if err != nil || len(m.calls) != len(script) {
		b.Fatalf("%s (%s): %v, %d model calls of %d\n%s", ag.name, mode, err, len(m.calls), len(script), out)
	}
	r := costRun{start: m.calls[0].arrived.Sub(start), end: exited.Sub(m.calls[len(m.calls)-1].answered)}
	for i := 1; i < len(m.calls); i++ {
		r.gaps = append(r.gaps, m.calls[i].arrived.Sub(m.calls[i-1].answered))
	}
	if n, err := os.ReadFile(counted); err == nil {
		r.hookRuns = len(n)
	}
	return r
}

// median is the nearest-rank median of ds.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// costReport prints the Markdown table and, as its last line, one JSON
// object with every figure; the ratios also go to the benchmark's line.
func costReport(b *testing.B, results map[string]map[string][]costRun) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	fmt.Println("| agent | mode | sessions | per call p50 ms | added per call ms | added / own | start ms | end ms | hook runs per call |")
	fmt.Println("|---|---|--:|--:|--:|--:|--:|--:|--:|")
	figures := map[string]float64{}
	names := make([]string, 0, len(results))
	for name := range results {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var own time.Duration
		for _, mode := range []string{modeOwn, modeNull, modeAgentd, modeChunkOld} {
			runs := results[name][mode]
			if len(runs) == 0 {
				continue
			}
			var gaps, starts, ends []time.Duration
			hookRuns := 0
			for _, r := range runs {
				gaps = append(gaps, r.gaps...)
				starts, ends = append(starts, r.start), append(ends, r.end)
				hookRuns += r.hookRuns
			}
			p50 := median(gaps)
			key := name + "_" + map[string]string{modeOwn: "own", modeNull: "empty_hooks", modeAgentd: "agentd", modeChunkOld: "agentd_aftermodel"}[mode]
			figures[key+"_call_ms"], figures[key+"_start_ms"], figures[key+"_end_ms"] = ms(p50), ms(median(starts)), ms(median(ends))
			added, ratio, runsPerCall := "", "", ""
			if mode == modeOwn {
				own = p50
			} else {
				r := float64(p50-own) / float64(own)
				figures[key+"_added_ratio"] = float64(int(r*1000)) / 1000
				added, ratio = fmt.Sprintf("%.1f", ms(p50-own)), fmt.Sprintf("%.3f", r)
				b.ReportMetric(r, key+"-added/own")
			}
			if mode == modeNull {
				runsPerCall = fmt.Sprintf("%.2f", float64(hookRuns)/float64(len(runs)**costCalls))
				figures[key+"_runs_per_call"] = float64(hookRuns) / float64(len(runs)**costCalls)
			}
			fmt.Printf("| %s | %s | %d | %.1f | %s | %s | %.0f | %.0f | %s |\n", name, mode, len(runs), ms(p50), added, ratio, ms(median(starts)), ms(median(ends)), runsPerCall)
		}
	}
	j, _ := json.Marshal(figures)
	fmt.Println(string(j))
}
