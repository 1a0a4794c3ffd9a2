package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Main is the OS setup of both programs (signals) around run, which is
// the whole program behind it and returns the exit code; Main exits with it.
func Main(run func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int) {
	// A write to a closed stdout or log pipe fails with EPIPE, which agentd
	// handles (a closed stdout is a disconnect; a log line is dropped),
	// instead of the default death by SIGPIPE (docs/reliability.md).
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	// After the first signal, a second one ends the process the default way,
	// should the orderly end ever hang.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// stopSignals are the signals that end agentd in order (connections end as
// on a disconnect, state files are closed): SIGTERM, and SIGHUP and SIGINT
// unless the process was started with them ignored (nohup, a background job
// of a script), which it respects.
func stopSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGTERM}
	for _, s := range []os.Signal{syscall.SIGHUP, os.Interrupt} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return sigs
}
