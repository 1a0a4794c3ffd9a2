package service

import (
	"errors"
	"os/exec"
)

// errNoCheckGroups is why a goal's check does not run on Windows: a check
// runs under sh in a process group of its own, given a gate on a fourth
// descriptor, and Windows has neither (docs/runtime.md §2.10.2).
var errNoCheckGroups = errors.New("goal checks do not run on Windows: a check runs under sh in a process group of its own, which Windows does not have; run agentd in WSL (the Linux build) to have goals with checks")

// inNewGroup refuses: see errNoCheckGroups.
func inNewGroup(*exec.Cmd) error { return errNoCheckGroups }

// killGroup kills nothing: no group was made (inNewGroup).
func killGroup(int) error { return errNoCheckGroups }
