package caller

// The process facts Of walks (walk.go), read with sysctl: kern.procargs2
// holds a process's arguments and the environment it was started with
// (readable for this user's processes only), kern.proc.pid its parent.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// environ is the environment process pid was started with.
func environ(pid int) ([]string, error) {
	_, env, err := procArgs(pid)
	return env, err
}

// argv is process pid's command line.
func argv(pid int) ([]string, error) {
	args, _, err := procArgs(pid)
	return args, err
}

// parentOf is the parent pid that kern.proc.pid records for pid.
func parentOf(pid int) (int, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, gone(pid, err)
	}
	return int(k.Eproc.Ppid), nil
}

// procArgs reads kern.procargs2 of pid; a process that does not run is
// fs.ErrNotExist.
func procArgs(pid int) (args, env []string, err error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, nil, gone(pid, err)
	}
	args, env, ok := parseProcArgs(b)
	if !ok {
		return nil, nil, fmt.Errorf("kern.procargs2 of pid %d is not in the expected form", pid)
	}
	return args, env, nil
}

// gone is err, or fs.ErrNotExist when process pid does not run (sysctl
// answers EINVAL or nothing for it).
func gone(pid int, err error) error {
	if errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
		return fs.ErrNotExist
	}
	return err
}

// parseProcArgs splits kern.procargs2: argc (a 32-bit integer), the
// executable's path, NUL padding, argc arguments, then the environment,
// each NUL-terminated; an empty string ends the environment (what follows
// is the loader's own strings).
func parseProcArgs(b []byte) (args, env []string, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	argc := int(binary.LittleEndian.Uint32(b))
	rest := b[4:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return nil, nil, false
	}
	rest = bytes.TrimLeft(rest[i:], "\x00")
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			i = len(rest)
		}
		s := string(rest[:i])
		rest = rest[min(i+1, len(rest)):]
		switch {
		case len(args) < argc:
			args = append(args, s)
		case s == "":
			return args, env, true
		default:
			env = append(env, s)
		}
	}
	return args, env, len(args) == argc
}
