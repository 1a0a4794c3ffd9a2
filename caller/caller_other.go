//go:build !linux && !darwin && !windows

package caller

import "os"

// Of tells who process pid acts for. Without /proc, only this process's
// own environment can be read: for pid os.Getpid() it is the agent whose
// marker the environment carries, else a person. The walk up the process
// tree is Linux's and macOS's (walk.go).
func Of(pid int) Agent {
	if pid != os.Getpid() {
		return Agent{}
	}
	if m, entry, ok := match(os.Environ()); ok {
		return Agent{Name: m.Agent, Marker: entry, Pid: pid}
	}
	return Agent{}
}
