package taskfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentd/agentd/goal"
)

// MaxBytes bounds the task files agentd hashes: 16 MiB. A larger file is
// refused as a task file named explicitly (args.invalid naming its size and
// the limit), skipped when an objective merely mentions it, and, when a
// watched task file grows beyond it, recorded without a hash: its size is
// then its change signal (docs/task-files.md).
const MaxBytes = 16 << 20

// Read checks a goal's task file path against the workspace folder at root
// (an absolute path) and reads what is there now (docs/runtime.md §4).
// path is relative to root, or absolute inside it. It must stay inside the
// folder after resolving ".." and symbolic links, else the error has code
// goal.task_file_outside. A missing file (or missing folders) is allowed:
// Exists is false. The returned Path is relative to root, with forward
// slashes. A shell command reports a goal's task file as it is now with it,
// since no watcher runs for one.
func Read(root, path string) (goal.TaskFileInfo, error) {
	rel, err := pathRel(root, path, "task file")
	if err != nil {
		return goal.TaskFileInfo{}, err
	}
	return readTaskFile(root, rel)
}

// Find returns the first candidate (goal.TaskFileCandidates of an
// objective) that names an existing regular file inside the folder at
// root, or nil.
func Find(root string, candidates []string) *goal.TaskFileInfo {
	for _, c := range candidates {
		rel, err := pathRel(root, c, "task file")
		if err != nil {
			continue
		}
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if info, err := readTaskFile(root, rel); err == nil {
			return &info
		}
	}
	return nil
}

// pathRel cleans path into a slash-separated path relative to root,
// refusing anything that leaves the folder lexically or through links;
// what names the path in the refusal ("task file", "wait path").
func pathRel(root, path, what string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", outside(what, path, "the path is empty")
	}
	if strings.ContainsRune(path, 0) {
		return "", &goal.Error{Code: goal.CodeArgsInvalid, Msg: fmt.Sprintf("%s %q is refused: the path contains a NUL byte; name a file inside the workspace", what, path)}
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	abs = filepath.Clean(abs)
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", outside(what, path, "it is not inside the workspace folder "+root)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", argsInvalid(&unusableError{path: path, err: fmt.Errorf("the workspace folder %s cannot be resolved: %w", root, err)})
	}
	real, err := evalExisting(abs)
	if err != nil {
		return "", argsInvalid(&unusableError{path: path, err: err})
	}
	if r, err := filepath.Rel(realRoot, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", outside(what, path, "a symbolic link takes it outside the workspace folder (to "+real+")")
	}
	return filepath.ToSlash(rel), nil
}

// evalExisting resolves symbolic links in the longest existing prefix of
// path and appends the missing rest unchanged.
func evalExisting(path string) (string, error) {
	var rest []string
	p := path
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(p); serr != nil && !errors.Is(serr, fs.ErrNotExist) {
				err = serr // names the cause (ELOOP); EvalSymlinks only says "too many links"
			}
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path, nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

func outside(what, path, why string) error {
	return &goal.Error{Code: goal.CodeTaskFileOutside, Msg: fmt.Sprintf("%s %q is refused: %s; use a path inside the workspace", what, path, why)}
}

// readTaskFile reads the file at rel under root: exists, size, sha256,
// modification time and its checkboxes (CountCheckboxes). A missing file is Exists false, not an error; a file
// larger than MaxBytes is not read: its info without SHA256 comes
// with a *tooLargeError (code args.invalid); a
// folder, pipe or device is an *notRegularError, a file that cannot be
// opened or read an *unusableError (both code args.invalid). The file is
// opened non-blocking so that a named pipe never hangs the caller.
func readTaskFile(root, rel string) (goal.TaskFileInfo, error) {
	info := goal.TaskFileInfo{Path: rel}
	f, err := os.OpenFile(filepath.Join(root, filepath.FromSlash(rel)), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return info, nil
	}
	if err != nil {
		return info, argsInvalid(&unusableError{path: rel, err: err})
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return info, argsInvalid(&unusableError{path: rel, err: err})
	}
	if !fi.Mode().IsRegular() {
		return info, argsInvalid(&notRegularError{rel: rel, mode: fi.Mode()})
	}
	mod := fi.ModTime().UTC()
	if fi.Size() > MaxBytes {
		info.Exists, info.Size, info.ModifiedAt = true, fi.Size(), &mod
		return info, argsInvalid(&tooLargeError{rel: rel, size: fi.Size()})
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return info, argsInvalid(&unusableError{path: rel, err: err})
	}
	sum := sha256.Sum256(data)
	info.Exists, info.Size, info.SHA256, info.ModifiedAt = true, int64(len(data)), hex.EncodeToString(sum[:]), &mod
	info.Checkboxes = CountCheckboxes(data)
	return info, nil
}

// argsInvalid is the refusal args.invalid (docs/runtime.md §3, §4.1) of a
// task file for the reason e, which errors.As finds in it: the protocol's
// one coded error (goal.Error).
func argsInvalid(e error) error {
	return &goal.Error{Code: goal.CodeArgsInvalid, Msg: e.Error(), Err: e}
}

// tooLargeError refuses a task file larger than MaxBytes.
type tooLargeError struct {
	rel  string
	size int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("task file %s is %d bytes; a task file may take at most %d bytes (16 MiB), so name a smaller file that describes the task", e.rel, e.size, int64(MaxBytes))
}

// notRegularError refuses a task file that is not a regular file.
type notRegularError struct {
	rel  string
	mode fs.FileMode
}

func (e *notRegularError) Error() string {
	what := "not a regular file"
	switch {
	case e.mode.IsDir():
		what = "a folder"
	case e.mode&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case e.mode&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		what = "a device"
	case e.mode&fs.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Sprintf("task file %s is %s; name a regular file inside the workspace", e.rel, what)
}

// unusableError refuses a task file path that the file system cannot
// follow or read: a loop of symbolic links, a name too long, a file where a
// folder should be, no permission. Like a task file that is not a regular
// file, it is args.invalid (docs/runtime.md §4.1).
type unusableError struct {
	path string
	err  error
}

func (e *unusableError) Error() string {
	why := e.err.Error()
	switch {
	case errors.Is(e.err, syscall.ELOOP):
		why = "a loop of symbolic links is in the way"
	case errors.Is(e.err, syscall.ENAMETOOLONG):
		why = "a name in the path is too long for the file system"
	case errors.Is(e.err, syscall.ENOTDIR):
		why = "a part of the path is a file, not a folder"
	case errors.Is(e.err, fs.ErrPermission):
		why = "permission denied"
	}
	return fmt.Sprintf("task file %q cannot be used: %s; name a readable regular file inside the workspace", e.path, why)
}

func (e *unusableError) Unwrap() error { return e.err }
