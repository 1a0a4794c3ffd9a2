package lsp

import (
	"errors"
	"syscall"
)

// processQueryLimitedInformation is PROCESS_QUERY_LIMITED_INFORMATION,
// the least right to open a process by.
const processQueryLimitedInformation = 0x1000

// processExists says whether process pid runs: Windows opens it and it
// has not ended (a handle of an ended process stays open while anyone
// holds one, so the open alone does not tell). One of another user that
// cannot be opened exists.
func processExists(pid int) bool {
	h, err := syscall.OpenProcess(syscall.SYNCHRONIZE|processQueryLimitedInformation, false, uint32(pid))
	if err != nil {
		return errors.Is(err, syscall.ERROR_ACCESS_DENIED)
	}
	defer syscall.CloseHandle(h)
	ev, err := syscall.WaitForSingleObject(h, 0)
	return err != nil || ev == syscall.WAIT_TIMEOUT
}
