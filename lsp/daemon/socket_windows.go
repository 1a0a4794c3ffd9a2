package daemon

import (
	"fmt"
	"io/fs"
	"net"
	"os"

	"golang.org/x/sys/windows"

	"github.com/agentd/agentd/lsp/daemon/client"
)

// On Windows the shared daemon listens on an AF_UNIX socket (Windows 10
// 1803 and later): the socket file inherits the user-only DACL of its
// folder (client.SecureDir), makePrivate sets that DACL on the file itself
// too, and each connection's peer is checked by its token's user
// (client.PeerCred). docs/security.md, "The shared daemon on Windows".

// listenPrivate listens on the Unix socket addr.
func listenPrivate(addr string) (*net.UnixListener, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("cannot listen on a Unix socket (Windows has them from Windows 10 version 1803): %w", err)
	}
	return ln, nil
}

// openReparse opens the socket file at path itself (not what it would
// point to) with access.
func openReparse(path string, access uint32) (windows.Handle, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, err
	}
	h, err := windows.CreateFile(name, access, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return h, nil
}

// socketInode is the file index of the socket file at path (what Windows
// has for an inode); fs.ErrNotExist when there is none, an error when
// path names something else.
func socketInode(path string) (uint64, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return 0, fmt.Errorf("%s is not a socket", path)
	}
	h, err := openReparse(path, windows.FILE_READ_ATTRIBUTES)
	if err != nil {
		return 0, err
	}
	defer windows.CloseHandle(h)
	var d windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &d); err != nil {
		return 0, fmt.Errorf("cannot read %s: %w", path, err)
	}
	return uint64(d.FileIndexHigh)<<32 | uint64(d.FileIndexLow), nil
}

// makePrivate sets client.UserOnly's protected DACL on the socket file at
// path, whatever folder it is in.
func makePrivate(path string) error {
	sd, err := client.UserOnly()
	if err != nil {
		return err
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return err
	}
	h, err := openReparse(path, windows.WRITE_DAC)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	if err := windows.SetSecurityInfo(h, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		return fmt.Errorf("cannot keep the socket %s to you alone: %w", path, err)
	}
	return nil
}
