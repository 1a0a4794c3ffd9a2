// Command bench measures agentd end to end, as editors and agents use it,
// against floors measured in the same run (docs/performance.md):
//
//	go run ./tests/bench          # full run, several minutes
//	go run ./tests/bench -quick   # about a minute: 200 operations per figure
//	go run ./tests/bench -only=fanout,mcp   # some scenarios (see -h)
//
// It builds agentd into a temporary directory and runs it over real pipes,
// and the shared daemon on a Unix socket when the build has one, with a
// private state directory and XDG_RUNTIME_DIR. Every request goes through
// the test client, tests/lsptest. Progress goes to stderr; stdout gets a
// Markdown table and, as its last line, one JSON object of every figure.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentd/agentd/workspace"
)

// bench is one run: its files, settings and figures.
type bench struct {
	tmp, bin, trivial string   // the run's directory, agentd, a Go program that exits at once
	hookBin           string   // agentd-hook, beside bin
	stateDir          string   // of the stdio agentd of the main figures
	env               []string // agentd's: private XDG dirs
	log               *os.File // agentd's stderr
	n, warm, history  int      // operations measured and warmed up per figure; events of the history figure
	rep               report

	floors *client        // the floor server: floors (a) and (b)
	stored map[int]stored // what a TodoList write of N items stores
	main   *client        // the stdio agentd of the main and list-length figures
}

// items is the length of the standard todo list.
const items = 8

func main() {
	if os.Getenv(roleEnv) == "floor" {
		floorServe()
		return
	}
	quick := flag.Bool("quick", false, "about a minute: 200 operations per figure, 500 history events")
	n := flag.Int("n", 1000, "operations measured per figure after warm-up (at least 200)")
	history := flag.Int("history", workspace.MaxHistory, "history events stored for the full-history figure")
	dir := flag.String("dir", "", "parent of the run's directory, where state files and floor (b) live (default $TMPDIR)")
	keep := flag.Bool("keep", false, "keep the run's directory (agentd.log, state files)")
	only := flag.String("only", "", "comma-separated scenarios to run, of "+scenarioNames()+" (default all)")
	flag.Parse()
	b := &bench{n: max(*n, 200), warm: 100, history: *history}
	if *quick {
		b.n, b.warm, b.history = 200, 20, min(*history, 500)
	}
	var err error
	if b.tmp, err = os.MkdirTemp(*dir, "agentd-bench-"); err != nil {
		fatal(err)
	}
	err = b.run(*only)
	if *keep {
		fmt.Fprintln(os.Stderr, "bench: kept", b.tmp)
	} else {
		os.RemoveAll(b.tmp)
	}
	if err != nil {
		fatal(err)
	}
	b.rep.print()
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

// scenario is a part of a run: -only's name, the title on stderr.
type scenario struct {
	name, title string
	fn          func(*bench) error
}

// scenarios are the parts of a run, in order; -only picks some. Each needs
// only what setup starts.
var scenarios = []scenario{
	{"core", "floors and operations", (*bench).core}, {"scale", "list lengths", (*bench).scale},
	{"history", "full history", (*bench).fullHistory}, {"remote", "forwarder", (*bench).remote},
	{"fanout", "fan-out", (*bench).fanout}, {"concurrent", "concurrent writers", (*bench).concurrent},
	{"mcp", "MCP", (*bench).mcp}, {"memory", "memory", (*bench).memory},
	{"rss", "shared daemon memory", (*bench).sharedMemory}, {"startup", "start-up", (*bench).startup},
	{"hook", "agent hooks", (*bench).hookEvent}, {"team", "team folder on etcd", (*bench).team},
	{"teamdelay", "team folder on etcd at a distance", (*bench).teamDelay},
}

func scenarioNames() string {
	var names []string
	for _, s := range scenarios {
		names = append(names, s.name)
	}
	return strings.Join(names, ",")
}

// run builds, starts what every scenario may use (setup) and runs the
// scenarios named in only (comma-separated; "" is all).
func (b *bench) run(only string) error {
	start := time.Now()
	want := map[string]bool{}
	for name := range strings.SplitSeq(only, ",") {
		if name = strings.TrimSpace(name); name != "" {
			if !strings.Contains(","+scenarioNames()+",", ","+name+",") {
				return fmt.Errorf("-only: no scenario %q (there are %s)", name, scenarioNames())
			}
			want[name] = true
		}
	}
	steps := []scenario{{"", "build", (*bench).build}, {"", "setup", (*bench).setup}}
	for _, s := range scenarios {
		if len(want) == 0 || want[s.name] {
			steps = append(steps, s)
		}
	}
	defer b.teardown()
	for _, s := range steps {
		t0 := time.Now()
		fmt.Fprintf(os.Stderr, "bench: %s...", s.title)
		if err := s.fn(b); err != nil {
			fmt.Fprintln(os.Stderr)
			return fmt.Errorf("%s: %w", s.title, err)
		}
		fmt.Fprintf(os.Stderr, " %.1fs\n", time.Since(t0).Seconds())
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(os.Stderr, "bench: done in %.0fs, n=%d per figure, load average %s", time.Since(start).Seconds(), b.n, load)
	return nil
}

// setup starts the floor server, finds what agentd stores for each list
// length (probe) and starts the stdio agentd of the main and list-length
// figures.
func (b *bench) setup() error {
	var err error
	if b.floors, err = startFloor(); err != nil {
		return err
	}
	if err := b.probe(); err != nil {
		return err
	}
	b.main, err = b.startAgentd(b.stateDir, b.folder("main"))
	return err
}

// teardown ends what setup started.
func (b *bench) teardown() {
	for _, c := range []*client{b.main, b.floors} {
		if c != nil {
			c.close()
		}
	}
}

// build compiles agentd from the module this program is run in, and the
// trivial program.
func (b *bench) build() error {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	if err != nil || root == "." {
		return fmt.Errorf("run from inside the agentd module (go env GOMOD: %v)", err)
	}
	// agentd-hook beside agentd, static, as installed (README, Install):
	// the hook scenario runs it.
	b.bin, b.hookBin = filepath.Join(b.tmp, "agentd"), filepath.Join(b.tmp, "agentd-hook")
	for _, p := range []struct {
		out, pkg string
		static   bool
	}{{b.bin, "./cmd/agentd", false}, {b.hookBin, "./cmd/agentd-hook", true}} {
		cmd := exec.Command("go", "build", "-o", p.out, p.pkg)
		cmd.Dir = root
		if p.static {
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", p.pkg, err, out)
		}
	}
	if b.trivial, err = buildTrivial(b.tmp); err != nil {
		return err
	}
	b.stateDir = filepath.Join(b.tmp, "state")
	run := filepath.Join(b.tmp, "run")
	b.env = append(os.Environ(), "XDG_RUNTIME_DIR="+run, "XDG_STATE_HOME="+filepath.Join(b.tmp, "xdg-state"))
	if err := os.MkdirAll(run, 0o700); err != nil {
		return err
	}
	b.log, err = os.Create(filepath.Join(b.tmp, "agentd.log"))
	return err
}

// agentd is an agentd command line with the run's environment.
func (b *bench) agentd(stateDir string, args ...string) *exec.Cmd {
	cmd := exec.Command(b.bin, append(args, "--state-dir", stateDir)...)
	cmd.Env = b.env
	return cmd
}

// startAgentd starts a stdio agentd and initializes it with folders.
func (b *bench) startAgentd(stateDir string, folders ...string) (*client, error) {
	c, err := spawn(b.agentd(stateDir), b.log, "")
	if err == nil {
		if err = c.initialize(folders...); err != nil {
			c.close()
		}
	}
	return c, err
}

// useFloor points floor (b) at a fresh file, mirroring a fresh state file.
func (b *bench) useFloor(name string) error {
	_, err := b.floors.call("bench/open", map[string]string{"path": filepath.Join(b.tmp, name)})
	return err
}

// folder creates a workspace folder of the run.
func (b *bench) folder(name string) string {
	dir := filepath.Join(b.tmp, "ws", name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fatal(err)
	}
	return dir
}
