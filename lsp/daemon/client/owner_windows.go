package client

// On Windows the socket's folder is kept private by its security
// descriptor (docs/security.md, "The shared daemon on Windows"): owned by
// the user's SID, with a protected DACL (nothing inherited from the
// parent) whose one entry grants that SID full control, inherited by what
// the folder holds, the socket file among them.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/windows"
)

// defaultSocketDir is the auto socket's folder without XDG_RUNTIME_DIR:
// %LocalAppData%\agentd\run, beside the default state folder, the same
// for every process of the user whatever TEMP it was given; the temp
// folder's agentd-run when LocalAppData is not set.
func defaultSocketDir() string {
	if dir := os.Getenv("LocalAppData"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "agentd", "run")
	}
	return filepath.Join(os.TempDir(), "agentd-run")
}

// userSID is the SID of this process's user (its token's user).
func userSID() (*windows.SID, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("cannot read this process's user: %w", err)
	}
	return u.User.Sid, nil
}

// CurrentUser is this process's user as PeerCred names a peer's: the SID
// of its token's user.
func CurrentUser() (string, error) {
	sid, err := userSID()
	if err != nil {
		return "", err
	}
	return sid.String(), nil
}

// UserOnly is the security descriptor that gives the current user alone
// access to a file or folder, and to what a folder holds: owner the
// user's SID, a protected DACL with one entry granting that SID full
// control, inherited by files and folders (SDDL O:S D:P(A;OICI;FA;;;S)).
func UserOnly() (*windows.SECURITY_DESCRIPTOR, error) {
	sid, err := userSID()
	if err != nil {
		return nil, err
	}
	s := sid.String()
	return windows.SecurityDescriptorFromString("O:" + s + "D:P(A;OICI;FA;;;" + s + ")")
}

// makePrivateDir makes dir with UserOnly's descriptor from the moment it
// exists (CreateDirectory with it), and missing parents as Windows makes
// them. A dir that exists is left as it is, for privateDir to judge.
func makePrivateDir(dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	sd, err := UserOnly()
	if err != nil {
		return err
	}
	name, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return err
	}
	sa := windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}
	if err := windows.CreateDirectory(name, &sa); err != nil && !errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return nil
}

// privateDir checks that dir is owned by this user's SID and has a
// protected DACL whose every grant is to that SID (deny entries are
// allowed; a missing DACL, which grants everyone everything, is not).
func privateDir(dir string, _ fs.FileInfo) error {
	me, err := userSID()
	if err != nil {
		return err
	}
	sd, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("socket directory %s: cannot read its security descriptor: %w", dir, err)
	}
	notPrivate := func(why string) error {
		return fmt.Errorf("socket directory %s %s, so others may reach a socket in it: refusing to use it; remove it (agentd makes it again, for you alone), or set XDG_RUNTIME_DIR to a private directory", dir, why)
	}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil || !owner.Equals(me) {
		return notPrivate(fmt.Sprintf("is not owned by you (%s) but by %s", account(me), account(owner)))
	}
	control, _, err := sd.Control()
	if err != nil || control&windows.SE_DACL_PROTECTED == 0 {
		return notPrivate("inherits access from its parent (its DACL is not protected)")
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		return notPrivate("has no DACL, which lets everyone in")
	}
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return fmt.Errorf("socket directory %s: cannot read its DACL: %w", dir, err)
		}
		switch ace.Header.AceType {
		case windows.ACCESS_DENIED_ACE_TYPE:
		case windows.ACCESS_ALLOWED_ACE_TYPE:
			if sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart)); !sid.Equals(me) {
				return notPrivate("grants access to " + account(sid))
			}
		default:
			return notPrivate(fmt.Sprintf("has an access entry of type %d", ace.Header.AceType))
		}
	}
	return nil
}

// account names sid as a person reads it: DOMAIN\name (SID), or the SID.
func account(sid *windows.SID) string {
	if sid == nil {
		return "no one"
	}
	if name, domain, _, err := sid.LookupAccount(""); err == nil {
		return fmt.Sprintf(`%s\%s (%s)`, domain, name, sid)
	}
	return sid.String()
}

// terminate: Windows has no SIGTERM to end a daemon in order; every
// daemon on Windows records its version and hands over on request
// (agentd/handover), so none needs it.
func terminate(int) error {
	return errors.New("cannot ask an older daemon to end: Windows has no SIGTERM")
}
