package lsptest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Process is a started agentd (or any LSP server) with its stdin and
// stdout on pipes of our own: os/exec's Wait never closes them under a
// reader still taking the last replies, so stdout is read to EOF.
type Process struct {
	Cmd    *exec.Cmd
	Stdin  io.WriteCloser // the server's input; closing it ends a stdio server
	Stdout *os.File       // the server's output, for Conn or raw reads
	// Stderr keeps what the process writes to stderr when cmd.Stderr was
	// nil at Start; else it stays empty.
	Stderr *Buffer

	exited chan struct{}
	code   int
}

// Start starts cmd with pipes for stdin and stdout; stderr goes to
// p.Stderr unless cmd.Stderr is set. A goroutine waits for the process, so
// Exited and ExitCode work without a call to Wait.
func Start(cmd *exec.Cmd) (*Process, error) {
	p := &Process{Cmd: cmd, Stderr: &Buffer{}, exited: make(chan struct{})}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	if cmd.Stderr == nil {
		cmd.Stderr = p.Stderr
	}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	p.Stdin, p.Stdout = inW, outR
	go func() {
		err := cmd.Wait()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			p.code = exitErr.ExitCode()
		}
		close(p.exited)
	}()
	return p, nil
}

// Conn runs a client on the process's pipes; its Close closes the
// process's stdin.
func (p *Process) Conn(o Options) *Conn {
	if o.Name == "" {
		o.Name = "stdio"
	}
	return NewConn(p.Stdout, p.Stdin, p.Stdin.Close, o)
}

// Exited is closed when the process has ended.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitCode is the process's exit code once Exited is closed (-1 if a
// signal ended it).
func (p *Process) ExitCode() int { return p.code }

// Stop closes the process's stdin, waits up to grace for it to end, kills
// it after that, and closes stdout.
func (p *Process) Stop(grace time.Duration) {
	p.Stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.Cmd.Process.Kill()
		<-p.exited
	}
	p.Stdout.Close()
}

// Buffer is a bytes.Buffer safe for a writing process and a reading test.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
