package setup

// Symbolic links (docs/mcp.md, "Symbolic links"): setup never moves data
// across a link. A project's config file is the project's own: one that is
// a symbolic link, or lies in a linked folder, resolving outside the project
// is refused before it is read (a cloned repository could otherwise have
// setup copy a file of the user's, tokens and all, into the project, or
// write into it). A link that stays inside the project is followed. A file
// in the home folder that is a link (a dotfiles manager's) is updated
// through it, as `git config` does: the file the link names changes, the
// link stays.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// newChange is the Change of the config file at path, its links resolved
// (Target) and its content read (Before); isJSON says the file is JSON (for
// its comments, and what is left of it when it is emptied through a link).
// A project file that resolves outside the project, and a broken link, are
// refused before anything is read.
func newChange(path string, opts Options, isJSON bool) (Change, error) {
	c := Change{Path: path, mode: 0o644, ownDir: ownDir(path, opts.Agent), empty: []byte{}}
	if opts.User {
		c.mode = 0o600
	}
	if isJSON {
		c.empty = []byte("{}\n")
	}
	var err error
	if c.Target, err = realPath(path); err != nil {
		return c, err
	}
	for _, p := range []string{path, filepath.Dir(path)} {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			c.Linked = true
		}
	}
	if !opts.User {
		if err := inProject(path, c.Target, opts); err != nil {
			return c, err
		}
		if err := notHardLinked(path, c.Target, opts); err != nil {
			return c, err
		}
	}
	data, err := os.ReadFile(c.Target)
	switch {
	case err == nil:
		c.Before = data
	case !errors.Is(err, fs.ErrNotExist):
		return c, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if isJSON {
		_, c.Comments = stripComments(c.Before)
	}
	return c, nil
}

// keepLink makes a change that would delete a file reached through a link
// write what is left instead ({} or an empty TOML file), so that the link
// stays valid and the file it names stays where the user keeps it.
func (c *Change) keepLink() {
	if c.Linked && c.After == nil && c.Before != nil {
		c.After = c.empty
	}
}

// realPath is path with every symbolic link on the way resolved, for a file
// that may not exist yet (nor its folder: the part that does not exist is
// kept as it is). A link that points nowhere is an error that names it.
func realPath(path string) (string, error) {
	p, rest := filepath.Clean(path), ""
	for {
		_, err := os.Lstat(p)
		if err == nil {
			break
		}
		parent := filepath.Dir(p)
		if !errors.Is(err, fs.ErrNotExist) || parent == p {
			return "", fmt.Errorf("cannot read %s: %w", path, err)
		}
		rest, p = filepath.Join(filepath.Base(p), rest), parent
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if to, rerr := os.Readlink(p); rerr == nil {
			return "", fmt.Errorf("%s is a symbolic link to %s, which does not exist (%v): changed nothing; fix or remove the link, then run agentd setup again", p, to, err)
		}
		return "", fmt.Errorf("cannot resolve the symbolic links of %s: %v: changed nothing; fix them, then run agentd setup again", path, err)
	}
	return filepath.Join(real, rest), nil
}

// inProject refuses a project file whose target lies outside the project
// (opts.Workspace, its own links resolved), naming the link and where it
// points.
func inProject(path, target string, opts Options) error {
	root, err := filepath.EvalSymlinks(opts.Workspace)
	if err != nil {
		return fmt.Errorf("cannot resolve the project folder %s: %w", opts.Workspace, err)
	}
	if below(root, target) {
		return nil
	}
	what := path + " resolves to " + target
	for _, p := range []string{path, filepath.Dir(path)} {
		to, err := os.Readlink(p)
		if err != nil {
			continue
		}
		what = fmt.Sprintf("%s is a symbolic link to %s", p, to)
		if p != path {
			what = fmt.Sprintf("%s is in %s, a symbolic link to %s", path, p, to)
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(p), to)
		}
		if filepath.Clean(to) != target { // a folder, or more links on the way
			what += " (the file " + target + ")"
		}
		break
	}
	return fmt.Errorf("%s, outside the project %s; agentd setup neither reads nor writes a file outside the project through a link (it would copy that file's content into the project, or change it): changed nothing; replace the link with a file of its own, or run agentd setup %s --user to set up the agent in your home folder", what, opts.Workspace, opts.Agent)
}

// notHardLinked refuses a project file that has more than one name (hard
// links): another name may lie outside the project (a token store in the
// home folder), and setup, which writes a new file and renames it over
// the old, would copy that file's content into the project. Nothing says
// where the other names are, so any second name is refused.
func notHardLinked(path, target string, opts Options) error {
	fi, err := os.Stat(target)
	if err != nil || !fi.Mode().IsRegular() {
		return nil // none yet, or read (and refused) as it is
	}
	if n := linkCount(fi, target); n > 1 {
		return fmt.Errorf("%s is a file with %d hard links (names), and another may lie outside the project %s; agentd setup does not copy such a file's content into the project: changed nothing; replace it with a copy of its own (cp %s %s.new && mv %s.new %s), or run agentd setup %s --user to set up the agent in your home folder", path, n, opts.Workspace, path, path, path, path, opts.Agent)
	}
	return nil
}

// ownDir says that the folder of the config file at path is the agent's
// own (.gemini, .codex, ...), or Copilot CLI's .github or its hooks
// folder, which setup removes when removing leaves it empty.
func ownDir(path, agent string) bool {
	dir := filepath.Base(filepath.Dir(path))
	return dir == "."+agent || agent == "copilot" && (dir == "hooks" || dir == ".github")
}
