package caller

// The process facts Of walks (walk.go), read from /proc.

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// environ is the environment process pid was started with
// (/proc/PID/environ).
func environ(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return nulSplit(b), err
}

// argv is process pid's command line (/proc/PID/cmdline).
func argv(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return nulSplit(b), err
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
