//go:build linux || darwin || windows

package caller

import (
	"errors"
	"fmt"
	"io/fs"
)

// maxDepth bounds the walk up the process tree (a loop in what the system
// says would otherwise never end).
const maxDepth = 1024

// Of tells who process pid acts for: the agent whose marker pid or one of
// its ancestors, up to the first process, carries in the environment it
// was started with (environ), or whose program one of them runs (argv,
// Programs), walking up by parentOf. The three are the system's
// (caller_linux.go: /proc; caller_darwin.go: sysctl). An ancestor whose
// environment this user may not read (another user's) is passed over.
// pid itself must be readable: a process that ended before it was looked
// at, or that cannot be read, is taken for an agent's shell, since nothing
// says it is a person's.
func Of(pid int) Agent {
	for depth, p := 0, pid; p > 0 && depth < maxDepth; depth++ {
		env, err := environ(p)
		switch {
		case err == nil:
			if m, entry, ok := match(env); ok {
				return Agent{Name: m.Agent, Marker: entry, Pid: p}
			}
		case depth == 0:
			return unknown(pid, err)
		}
		if args, err := argv(p); err == nil {
			if prog, ok := program(args); ok {
				return Agent{Name: prog.Agent, Marker: "the program " + prog.Name, Pid: p}
			}
		}
		parent, err := parentOf(p)
		if err != nil {
			if depth == 0 {
				return unknown(pid, err)
			}
			break // the ancestor ended meanwhile: its own ancestors are unknown
		}
		p = parent
	}
	return Agent{}
}

// Environ is the environment process pid was started with, as Of reads
// it (a zombie shows none). It is how a check's process group is told
// from another (docs/runtime.md §2.10.3).
func Environ(pid int) ([]string, error) { return environ(pid) }

// unknown is the Agent of a process that could not be looked at.
func unknown(pid int, err error) Agent {
	if errors.Is(err, fs.ErrNotExist) {
		return Agent{Name: "an unknown program", Marker: fmt.Sprintf("pid %d ended before agentd could look at it", pid)}
	}
	return Agent{Name: "an unknown program", Marker: fmt.Sprintf("pid %d could not be looked at: %v", pid, err)}
}
