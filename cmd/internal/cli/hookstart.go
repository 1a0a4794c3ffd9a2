package cli

// A hook that starts the shared daemon and finds it hangs (docs/hooks.md,
// "A daemon that does not start"): the start is given a bounded wait,
// the failure is remembered in the state directory, and the events of the
// next minute do not start it again.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/agentd/agentd/workspace/wsfolder"
)

// hookStartWait bounds how long a hook waits for a daemon it started to
// answer, within the event's 2 s (hook.DefaultTimeout), so that it has the
// time to remember a start that hangs.
const hookStartWait = 1500 * time.Millisecond

// hookStartBackoff is how long after a start that hung the hooks start no
// daemon (a daemon that runs by then is still used).
const hookStartBackoff = time.Minute

// startFailedName is the file, in STATE_DIR/hooks, that remembers a start
// of the shared daemon that hung.
const startFailedName = "daemon-start.failed"

// startFailure is the content of startFailedName (JSON).
type startFailure struct {
	At      time.Time `json:"at"`      // when the start was given up
	Program string    `json:"program"` // the agentd executable that was started
	// The file Program named then (after symbolic links): a program put
	// in its place (another size or modification time) is not the one
	// that hung. Absent when it could not be read; such a file holds
	// nothing back.
	Size    int64     `json:"size,omitempty"` // bytes
	ModTime time.Time `json:"modTime,omitzero"`
}

// programFile is the startFailure of a start of exe given up at at: exe's
// size and modification time, when it can be read.
func programFile(exe string, at time.Time) startFailure {
	f := startFailure{At: at, Program: exe}
	if fi, err := os.Stat(exe); err == nil {
		f.Size, f.ModTime = fi.Size(), fi.ModTime()
	}
	return f
}

// holds says whether f holds back a start of the program at now: f is
// younger than hookStartBackoff (a time ahead of now, after the clock was
// set back, is not) and program names the file that hung, not one put in
// its place.
func (f startFailure) holds(program func() (string, error), now time.Time) bool {
	age := now.Sub(f.At)
	if age < 0 || age >= hookStartBackoff {
		return false
	}
	exe, err := program()
	if err != nil || exe != f.Program {
		return false
	}
	fi, err := os.Stat(exe)
	return err == nil && fi.Size() == f.Size && fi.ModTime().Equal(f.ModTime)
}

// hookDial is the hook's Dial of the shared daemon: d.Dial, with a daemon it
// starts given hookStartWait to answer. A start that hangs is written to
// STATE_DIR/hooks/daemon-start.failed; while that file is younger than
// hookStartBackoff and names the program this hook would start, unchanged
// (startFailure.holds), the hook starts no daemon and fails at once with an
// error that says what hung and how to fix it. A daemon reached removes the
// file.
func hookDial(ctx context.Context, d Daemon, path string, explicit bool) (io.ReadWriteCloser, error) {
	marker := filepath.Join(d.StateDir, "hooks", startFailedName)
	daemonLog := filepath.Join(filepath.Dir(path), "daemon.log")
	var failed startFailure
	known := readStartFailure(marker, &failed)
	if known && failed.holds(d.Program, time.Now()) {
		d.Program = func() (string, error) {
			return "", fmt.Errorf("not starting %s again before %s: it did not start the shared daemon within %v at %s (it hangs?); fix or replace it (it must run `agentd serve`; its output is in %s: a new program in its place is started at the next event), or delete %s to try again now",
				failed.Program, failed.At.Add(hookStartBackoff).Format(time.TimeOnly), hookStartWait, failed.At.Format(time.TimeOnly), daemonLog, marker)
		}
	}
	var started string // the program started, once it is
	program := d.Program
	d.Program = func() (string, error) {
		exe, err := program()
		started = exe
		return exe, err
	}
	sctx, cancel := context.WithTimeout(ctx, hookStartWait)
	defer cancel()
	conn, _, err := d.Dial(sctx, path, explicit)
	switch {
	case err == nil:
		if known {
			os.Remove(marker)
		}
		return conn, nil
	case started != "" && errors.Is(err, context.DeadlineExceeded):
		b, _ := json.Marshal(programFile(started, time.Now()))
		if werr := writeStartFailure(marker, b); werr != nil {
			return nil, fmt.Errorf("%s did not start the shared daemon within %v (it hangs?), and the next event starts it again: %s cannot be written to remember it (%v); fix or replace it (it must run `agentd serve`; its output is in %s)",
				started, hookStartWait, marker, werr, daemonLog)
		}
		return nil, fmt.Errorf("%s did not start the shared daemon within %v (it hangs?): hooks do not start it again for %v (%s; delete it to try again now); fix or replace it (it must run `agentd serve`; its output is in %s: a new program in its place is started at the next event)",
			started, hookStartWait, hookStartBackoff, marker, daemonLog)
	}
	return nil, err
}

// readStartFailure reads the file of a start that hung into f; false when
// there is none (or it cannot be read).
func readStartFailure(marker string, f *startFailure) bool {
	b, err := os.ReadFile(marker)
	return err == nil && json.Unmarshal(b, f) == nil && !f.At.IsZero()
}

// writeStartFailure writes b as the file of a start that hung, whole: a
// temporary file renamed over it, so that a hook that reads it meanwhile
// (two events at once) reads the old content or the new one.
func writeStartFailure(marker string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(marker), 0o700); err != nil {
		return err
	}
	return wsfolder.WriteFileAtomic(marker, b, false)
}
