// Command etcdtest-server runs etcd members of tests/etcdtest, test-only
// (nothing ships it). It has two modes.
//
//	etcdtest-server -member -dir DIR -listen-client URL -advertise-client URL -listen-peer URL -initial-cluster NAME=URL,... [-name NAME] [-state new|existing] [-quota BYTES] [-tls-ca F -tls-cert F -tls-key F]
//
// runs one member of an etcdtest.Cluster, as package etcdtest starts it for
// each member: its own process, built without the race detector, so that a
// test run under -race and -cpu 1 does not starve the members (docs/team.md
// "Tests"). It prints "ready" on stdout once the member is ready and exits
// at the end of its stdin.
//
//	etcdtest-server [-dir DIR]
//
// is for the editor tests of team mode (docs/team.md "Tests"): the Neovim
// and VS Code end-to-end suites start it, stop it and start it again to
// watch their panels say "stale" and recover; their ci.sh scripts build it
// into their cache directory.
//
// It serves one member on a free port of 127.0.0.1 with its data under DIR
// (default: a new temporary directory, removed at exit) and speaks one line
// at a time: on stdout "ready URL" once the member is ready (URL is its
// client URL, the same for the whole run), "stopped" once a "stop" read on
// stdin has stopped it (as a crash would: every client connection is cut),
// "ready URL" again once a "start" has started it again from its data on
// the same port. Another line gets "error: unknown command ..." on stdout.
// At the end of stdin (the test ended, or died) it stops the member and
// exits 0. Failures go to stderr with exit status 1.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/tests/etcdtest"
)

// programT is what etcdtest.Start needs, for this program: its directories
// under root, cleanups run by done, a failure ends the program.
type programT struct {
	root     string
	n        int
	cleanups []func()
}

func (t *programT) Helper() {}

func (t *programT) Fatalf(format string, args ...any) {
	t.done()
	fmt.Fprintf(os.Stderr, "etcdtest-server: "+format+"\n", args...)
	os.Exit(1)
}

func (t *programT) TempDir() string {
	t.n++
	dir := filepath.Join(t.root, fmt.Sprintf("etcd%d", t.n))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("%v", err)
	}
	return dir
}

func (t *programT) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }

func (t *programT) done() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	t.cleanups = nil
}

func main() {
	dir := flag.String("dir", "", "directory of the member's data (default: a temporary one, removed at exit)")
	member := flag.Bool("member", false, "run one member of an etcdtest.Cluster (the -member flags)")
	var mf memberFlags
	mf.register(flag.CommandLine)
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "etcdtest-server: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if *member {
		if err := runMember(&mf, *dir); err != nil {
			fmt.Fprintf(os.Stderr, "etcdtest-server: %v\n", err)
			os.Exit(1)
		}
		return
	}
	serveEditor(*dir)
}

// serveEditor runs the editor mode: one member (a child of this process,
// this same program in -member mode) driven by the lines of stdin.
func serveEditor(dir string) {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcdtest-server: %v\n", err)
		os.Exit(1)
	}
	os.Setenv(etcdtest.ServerEnv, self)
	t := &programT{root: dir}
	if t.root == "" {
		tmp, err := os.MkdirTemp("", "etcdtest-server")
		if err != nil {
			fmt.Fprintf(os.Stderr, "etcdtest-server: %v\n", err)
			os.Exit(1)
		}
		t.root = tmp
		t.Cleanup(func() { os.RemoveAll(tmp) })
	}
	c := etcdtest.Start(t, 1)
	m := c.Members[0]
	fmt.Println("ready", m.Endpoint())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch cmd := strings.TrimSpace(in.Text()); cmd {
		case "stop":
			m.Stop()
			fmt.Println("stopped")
		case "start":
			c.Restart()
			fmt.Println("ready", m.Endpoint())
		default:
			fmt.Printf("error: unknown command %q (want stop or start)\n", cmd)
		}
	}
	t.done()
}
