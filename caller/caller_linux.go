package caller

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// maxDepth bounds the walk up the process tree (a loop in what /proc says
// would otherwise never end).
const maxDepth = 1024

// Of tells who process pid acts for: the agent whose marker pid or one of
// its ancestors, up to the first process, carries in the environment it
// was started with (/proc/PID/environ, then /proc/PID/status PPid), or
// whose program one of them runs (/proc/PID/cmdline, Programs). An
// ancestor whose environment this user may not read (another user's) is
// passed over. pid itself must be readable: a process that ended before
// it was looked at, or that cannot be read, is taken for an agent's shell,
// since nothing says it is a person's.
func Of(pid int) Agent {
	for depth, p := 0, pid; p > 0 && depth < maxDepth; depth++ {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/environ")
		switch {
		case err == nil:
			if m, entry, ok := match(nulSplit(env)); ok {
				return Agent{Name: m.Agent, Marker: entry, Pid: p}
			}
		case depth == 0:
			return unknown(pid, err)
		}
		if argv, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline"); err == nil {
			if prog, ok := program(nulSplit(argv)); ok {
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

// unknown is the Agent of a process that could not be looked at.
func unknown(pid int, err error) Agent {
	if errors.Is(err, fs.ErrNotExist) {
		return Agent{Name: "an unknown program", Marker: fmt.Sprintf("pid %d ended before agentd could look at it", pid)}
	}
	return Agent{Name: "an unknown program", Marker: fmt.Sprintf("pid %d could not be looked at: %v", pid, err)}
}

// parentOf is the PPid of /proc/PID/status.
func parentOf(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no PPid", pid)
}

// nulSplit splits the NUL-separated strings of a /proc file.
func nulSplit(b []byte) []string {
	return strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
}
