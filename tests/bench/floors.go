package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/lsp/jsonrpc"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// roleEnv set to "floor" makes the bench binary the floor server.
const roleEnv = "AGENTD_BENCH_ROLE"

// floorServe is the floor server, a child process that, like agentd, is idle
// between requests (the bench process, which parses every reply, is the
// busiest process of the run and is woken later from an fsync on this
// shared machine). It serves through the same jsonrpc.Conn as agentd, with the
// same stdio setup as agentd's serveStdio (stdin switched to non-blocking so
// that Go's poller owns it, blocking stdout) and the same dispatch (handlers
// in their own goroutine):
//   - floor (a), any method: no work; the reply is the one canned for exactly
//     these params with bench/can (agentd's own reply to them, so that the
//     same bytes cross the pipe both ways), else the params themselves;
//   - floor (b), bench/bolt {name}: one bbolt Update (fsync included) of the
//     bytes registered for name with bench/data, in the file bench/open
//     opened; it answers {ns}, the Update's duration.
func floorServe() {
	var stdin io.ReadCloser = os.Stdin
	if syscall.SetNonblock(0, true) == nil {
		stdin = os.NewFile(0, "/dev/stdin")
	}
	var mu sync.Mutex
	canned, data := map[string]json.RawMessage{}, map[string]stored{}
	var db *bbolt.DB
	setup := func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		var p struct {
			Request, Reply json.RawMessage
			Path, Name     string
			Data           stored
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		switch req.Method {
		case "bench/can":
			canned[string(p.Request)] = p.Reply
		case "bench/data":
			data[p.Name] = p.Data
		case "bench/open":
			if db != nil {
				db.Close()
			}
			var err error
			db, err = bbolt.Open(p.Path, 0o600, &bbolt.Options{Timeout: time.Second})
			return nil, err
		}
		return nil, nil
	}
	bolt := func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		var p struct{ Name string }
		json.Unmarshal(req.Params, &p)
		mu.Lock()
		d, f := data[p.Name], db
		mu.Unlock()
		t0 := time.Now()
		err := writeFloor(f, p.Name, d)
		return map[string]int64{"ns": int64(time.Since(t0))}, err
	}
	echo := func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		mu.Lock()
		reply, ok := canned[string(req.Params)]
		mu.Unlock()
		if ok {
			return reply, nil
		}
		return req.Params, nil
	}
	conn := jsonrpc.NewConn(pipes{stdin, os.Stdout}, func(req *jsonrpc.Request) (jsonrpc.Handler, bool) {
		switch req.Method {
		case "exit":
			os.Exit(0)
		case "bench/can", "bench/data", "bench/open":
			return setup, true
		case "bench/bolt":
			return bolt, false
		}
		return echo, false
	}, jsonrpc.Options{})
	conn.Run(context.Background())
}

// pipes joins stdin (read) and stdout (write) of the floor server.
type pipes struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p pipes) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipes) Close() error                { p.w.Close(); return p.ReadCloser.Close() }

// startFloor re-executes the bench binary as the floor server.
func startFloor() (*client, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), roleEnv+"=floor")
	return spawn(cmd, os.Stderr, "")
}

// stored is what agentd stored for one TodoList write: the session record
// and the history event, read back from its state file.
type stored struct{ Session, Event []byte }

// readStored opens a state file agentd has closed and returns the session
// record of name and its newest history event (layout: workspace/schema.go).
func readStored(stateDir, folder, name string) (stored, error) {
	path := filepath.Join(stateDir, "workspaces", wsfolder.FolderKey(folder), "state.db")
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return stored{}, err
	}
	defer db.Close()
	var s stored
	err = db.View(func(tx *bbolt.Tx) error {
		sb, hb := tx.Bucket([]byte("sessions")), tx.Bucket([]byte("history"))
		if sb == nil || hb == nil || hb.Bucket([]byte(name)) == nil {
			return errors.New("state file without the session or its history")
		}
		s.Session = bytes.Clone(sb.Get([]byte(name)))
		_, ev := hb.Bucket([]byte(name)).Cursor().Last()
		s.Event = bytes.Clone(ev)
		return nil
	})
	return s, err
}

// writeFloor stores data as the session name would be: its record, and its
// next history event under the next sequence number of a nested bucket.
func writeFloor(db *bbolt.DB, name string, data stored) error {
	return db.Update(func(tx *bbolt.Tx) error {
		sb, err1 := tx.CreateBucketIfNotExists([]byte("sessions"))
		hb, err2 := tx.CreateBucketIfNotExists([]byte("history"))
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		if hb, err1 = hb.CreateBucketIfNotExists([]byte(name)); err1 != nil {
			return err1
		}
		seq, err := hb.NextSequence()
		if err != nil {
			return err
		}
		return errors.Join(sb.Put([]byte(name), data.Session), hb.Put(binary.BigEndian.AppendUint64(nil, seq), data.Event))
	})
}

// buildTrivial builds a Go program that exits at once: the floor of start-up.
func buildTrivial(dir string) (string, error) {
	if err := os.WriteFile(filepath.Join(dir, "trivial.go"), []byte("package main\n\nfunc main() {}\n"), 0o600); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", "trivial", "trivial.go")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the trivial program: %v\n%s", err, out)
	}
	return filepath.Join(dir, "trivial"), nil
}
