//go:build unix

package service

import (
	"os"
	"os/exec"
	"syscall"
)

// checkShell runs command under `sh -c` behind a gate on descriptor 3:
// the outer shell waits for a line there before it runs the command, so
// that a check whose group could not be recorded never runs (an agentd
// that dies first closes the gate, and the shell exits).
func checkShell(command string) *exec.Cmd {
	return exec.Command("sh", "-c", `read -r _ <&3 && exec 3<&- sh -c "$1"`, "sh", command)
}

// processGroup is a check's process group, led by the shell: killed as
// one by a signal to the group.
type processGroup struct {
	pgid int
	gate *os.File // the write end of descriptor 3 of the shell
}

// startCheck starts cmd (checkShell) as the leader of a process group of
// its own, held at its gate.
func startCheck(cmd *exec.Cmd) (checkGroup, error) {
	gr, gw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.ExtraFiles = []*os.File{gr}
	err = cmd.Start()
	gr.Close()
	if err != nil {
		gw.Close()
		return nil, err
	}
	return &processGroup{pgid: cmd.Process.Pid, gate: gw}, nil
}

func (g *processGroup) Pid() int { return g.pgid }

// Run opens the gate.
func (g *processGroup) Run() error {
	_, err := g.gate.WriteString("go\n")
	if cerr := g.gate.Close(); err == nil {
		err = cerr
	}
	return err
}

// Kill sends the group SIGKILL.
func (g *processGroup) Kill() error { return killGroup(g.pgid) }

// Close closes the gate, if Run did not: the shell then exits without
// running the command.
func (g *processGroup) Close() { g.gate.Close() }

// killGroup kills the process group pgid with SIGKILL.
func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }
