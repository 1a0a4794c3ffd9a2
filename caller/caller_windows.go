package caller

// The process facts Of walks (walk.go), read on Windows from the process
// itself: its environment block and command line from its process
// parameters (NtQueryInformationProcess, ReadProcessMemory: this user's
// processes only), its parent from its basic information. A parent pid
// Windows reuses once the parent ended is told apart by its creation time.

import (
	"errors"
	"fmt"
	"io/fs"
	"unsafe"

	"golang.org/x/sys/windows"
)

// environ is the environment block of process pid.
func environ(pid int) ([]string, error) {
	var env []string
	err := withParams(pid, func(h windows.Handle, p *windows.RTL_USER_PROCESS_PARAMETERS) error {
		const maxEnv = 1 << 20
		b, err := readUTF16(h, uintptr(p.Environment), min(p.EnvironmentSize, maxEnv))
		for len(b) > 0 && b[0] != 0 {
			i := 0
			for i < len(b) && b[i] != 0 {
				i++
			}
			env = append(env, windows.UTF16ToString(b[:i]))
			b = b[min(i+1, len(b)):]
		}
		return err
	})
	return env, err
}

// argv is process pid's command line, split as Windows programs split it.
func argv(pid int) ([]string, error) {
	var args []string
	err := withParams(pid, func(h windows.Handle, p *windows.RTL_USER_PROCESS_PARAMETERS) error {
		b, err := readUTF16(h, uintptr(unsafe.Pointer(p.CommandLine.Buffer)), uintptr(p.CommandLine.Length))
		if err != nil {
			return err
		}
		line := append(b, 0)
		var argc int32
		list, err := windows.CommandLineToArgv(&line[0], &argc)
		if err != nil {
			return err
		}
		defer windows.LocalFree(windows.Handle(unsafe.Pointer(list)))
		for i := range argc {
			args = append(args, windows.UTF16PtrToString(&list[i][0]))
		}
		return nil
	})
	return args, err
}

// parentOf is the process pid was started by, when it still runs: one
// created after pid has only been given its parent's pid again.
func parentOf(pid int) (int, error) {
	h, err := open(pid, 0)
	if err != nil {
		return 0, err
	}
	defer windows.CloseHandle(h)
	info, err := basicInfo(h)
	if err != nil {
		return 0, err
	}
	parent := int(info.InheritedFromUniqueProcessId)
	ph, err := open(parent, 0)
	if err != nil {
		return 0, err
	}
	defer windows.CloseHandle(ph)
	if created(ph) > created(h) {
		return 0, fs.ErrNotExist // the parent ended; its pid is another process's
	}
	return parent, nil
}

// open opens process pid to query it, with more access when asked
// (PROCESS_VM_READ to read its memory, which another user's or an elevated
// process refuses; its parent and creation time are read without it, so
// the walk passes over such a process as over an unreadable one on Linux);
// a process that does not run is fs.ErrNotExist.
func open(pid int, more uint32) (windows.Handle, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|more, false, uint32(pid))
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
		return 0, fs.ErrNotExist
	}
	return h, err
}

func basicInfo(h windows.Handle) (windows.PROCESS_BASIC_INFORMATION, error) {
	var info windows.PROCESS_BASIC_INFORMATION
	err := windows.NtQueryInformationProcess(h, windows.ProcessBasicInformation, unsafe.Pointer(&info), uint32(unsafe.Sizeof(info)), nil)
	return info, err
}

// created is when the process h was created, in 100 ns since 1601.
func created(h windows.Handle) int64 {
	var c, e, k, u windows.Filetime
	if windows.GetProcessTimes(h, &c, &e, &k, &u) != nil {
		return 0
	}
	return int64(c.HighDateTime)<<32 | int64(c.LowDateTime)
}

// withParams calls f with process pid's handle and its process
// parameters, read from its memory.
func withParams(pid int, f func(windows.Handle, *windows.RTL_USER_PROCESS_PARAMETERS) error) error {
	h, err := open(pid, windows.PROCESS_VM_READ)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	info, err := basicInfo(h)
	if err != nil {
		return err
	}
	var peb windows.PEB
	if err := read(h, uintptr(unsafe.Pointer(info.PebBaseAddress)), unsafe.Pointer(&peb), unsafe.Sizeof(peb)); err != nil {
		return err
	}
	var params windows.RTL_USER_PROCESS_PARAMETERS
	if err := read(h, uintptr(unsafe.Pointer(peb.ProcessParameters)), unsafe.Pointer(&params), unsafe.Sizeof(params)); err != nil {
		return err
	}
	return f(h, &params)
}

// read copies size bytes at addr in process h to to.
func read(h windows.Handle, addr uintptr, to unsafe.Pointer, size uintptr) error {
	if addr == 0 {
		return errors.New("no such memory in the process")
	}
	if err := windows.ReadProcessMemory(h, addr, (*byte)(to), size, nil); err != nil {
		return fmt.Errorf("cannot read the process's memory: %w", err)
	}
	return nil
}

// readUTF16 reads size bytes of UTF-16 text at addr in process h.
func readUTF16(h windows.Handle, addr, size uintptr) ([]uint16, error) {
	b := make([]uint16, size/2)
	if len(b) == 0 {
		return nil, nil
	}
	return b, read(h, addr, unsafe.Pointer(&b[0]), size&^1)
}
