package service

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// checkShell runs command under cmd.exe (docs/runtime.md §2.10.2): the
// command line `cmd.exe /d /s /c "COMMAND"`, which runs COMMAND as cmd
// reads it (/s: the outer quotes are removed and nothing else; /d: no
// AutoRun commands from the registry). cmd.exe is the one of the system
// folder, never one found on PATH or in the workspace folder.
func checkShell(command string) *exec.Cmd {
	shell := `C:\Windows\System32\cmd.exe`
	if dir, err := windows.GetSystemDirectory(); err == nil {
		shell = filepath.Join(dir, "cmd.exe")
	}
	cmd := exec.Command(shell)
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: `cmd.exe /d /s /c "` + command + `"`}
	return cmd
}

// jobGroup is a check in a job object of its own, which every process the
// check starts joins: TerminateJobObject kills them all, and the job's
// limit JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE kills them when its last handle
// closes, which is at the latest when the agentd that holds it ends, however
// it ends.
type jobGroup struct {
	job windows.Handle
	pid int
}

// startCheck starts cmd (checkShell) suspended, with no console window,
// puts it in a new job object, and leaves it suspended until Run.
func startCheck(cmd *exec.Cmd) (checkGroup, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot create a job object: %w", err)
	}
	limit := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	limit.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&limit)), uint32(unsafe.Sizeof(limit))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("cannot set the job object's limits: %w", err)
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED | windows.CREATE_NO_WINDOW
	if err := cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	g := &jobGroup{job: job, pid: cmd.Process.Pid}
	if err := g.assign(); err != nil {
		cmd.Process.Kill() // suspended: nothing of the command ran
		cmd.Wait()
		windows.CloseHandle(job)
		return nil, err
	}
	return g, nil
}

// assign puts the suspended process in the job.
func (g *jobGroup) assign() error {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(g.pid))
	if err != nil {
		return fmt.Errorf("cannot open the check's process: %w", err)
	}
	defer windows.CloseHandle(p)
	if err := windows.AssignProcessToJobObject(g.job, p); err != nil {
		return fmt.Errorf("cannot put the check in a job object: %w", err)
	}
	return nil
}

func (g *jobGroup) Pid() int { return g.pid }

// Run resumes the suspended process's thread (a process created suspended
// has one).
func (g *jobGroup) Run() error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("cannot list threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(g.pid) {
			continue
		}
		t, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("cannot open the check's thread: %w", err)
		}
		_, err = windows.ResumeThread(t)
		windows.CloseHandle(t)
		return err
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("cannot list threads: %w", err)
	}
	return errors.New("the check's process has no thread to resume")
}

// Kill terminates every process of the job.
func (g *jobGroup) Kill() error { return windows.TerminateJobObject(g.job, 1) }

// Close closes the job's handle: whatever is still in it is killed.
func (g *jobGroup) Close() { windows.CloseHandle(g.job) }
