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
}

// hookDial is the hook's Dial of the shared daemon: d.Dial, with a daemon it
// starts given hookStartWait to answer. A start that hangs is written to
// STATE_DIR/hooks/daemon-start.failed; while that file is younger than
// hookStartBackoff and names the program this hook would start, the hook
// starts no daemon and fails at once with an error that says what hung and
// how to fix it. A daemon reached removes the file.
func hookDial(ctx context.Context, d Daemon, path string, explicit bool) (io.ReadWriteCloser, error) {
	marker := filepath.Join(d.StateDir, "hooks", startFailedName)
	daemonLog := filepath.Join(filepath.Dir(path), "daemon.log")
	var failed startFailure
	known := readStartFailure(marker, &failed)
	if known && time.Since(failed.At) < hookStartBackoff && sameProgram(d.Program, failed.Program) {
		d.Program = func() (string, error) {
			return "", fmt.Errorf("not starting %s again before %s: it did not start the shared daemon within %v at %s (it hangs?); fix or replace it (it must run `agentd serve`; its output is in %s), or delete %s to try again now",
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
		b, _ := json.Marshal(startFailure{At: time.Now(), Program: started})
		if werr := writeStartFailure(marker, b); werr != nil {
			d.Logger.Debug("the start that hung is not remembered", "file", marker, "err", werr)
		}
		return nil, fmt.Errorf("%s did not start the shared daemon within %v (it hangs?): the hooks of the next %v do not start it again (%s); fix or replace it (it must run `agentd serve`; its output is in %s)",
			started, hookStartWait, hookStartBackoff, marker, daemonLog)
	}
	return nil, err
}

// sameProgram says whether program names exe, the agentd that hung.
func sameProgram(program func() (string, error), exe string) bool {
	p, err := program()
	return err == nil && p == exe
}

// readStartFailure reads the file of a start that hung into f; false when
// there is none (or it cannot be read).
func readStartFailure(marker string, f *startFailure) bool {
	b, err := os.ReadFile(marker)
	return err == nil && json.Unmarshal(b, f) == nil && !f.At.IsZero()
}

// writeStartFailure writes b as the file of a start that hung.
func writeStartFailure(marker string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(marker), 0o700); err != nil {
		return err
	}
	return os.WriteFile(marker, b, 0o600)
}
