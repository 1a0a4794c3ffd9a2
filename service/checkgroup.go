package service

// checkGroup is what a goal's check runs in with everything it starts
// (docs/runtime.md §2.10.2, docs/platforms.md): a process group of its own
// on Unix (checkgroup_unix.go), a job object on Windows
// (checkgroup_windows.go). startCheck starts the command held, so that
// nothing of it runs before the group is recorded; Run lets it go. Each
// system's file has checkShell(command string) *exec.Cmd, the shell that
// runs a check's command, and startCheck(cmd) (checkGroup, error).
type checkGroup interface {
	// Pid is the process that leads the group: the shell that runs the
	// command.
	Pid() int
	// Run lets the held command run.
	Run() error
	// Kill kills every process of the group.
	Kill() error
	// Close releases the group's handles once the check is over.
	Close()
}
