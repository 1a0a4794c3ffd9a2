package taskfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestResolveTaskPath: what is watched for a path, and where it leads.
func TestResolveTaskPath(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	outside := t.TempDir()
	mk := func(rel string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	mk("docs/TASKS.md")
	mk("x/y/z.md")
	mk("file")
	ln("docs/TASKS.md", "link.md")
	ln("link.md", "chain.md")
	ln("x/y", "ydir")
	ln(filepath.Join(outside, "o.md"), "out.md")
	ln("../../etc", "docs/up")
	ln("loop2", "loop1")
	ln("loop1", "loop2")
	if err := os.Mkdir(filepath.Join(root, "folder.md"), 0o755); err != nil {
		t.Fatal(err)
	}

	j := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	tests := []struct {
		rel                     string
		dirs                    []string
		real                    string
		exists, isDir, outside_ bool
	}{
		{rel: "docs/TASKS.md", dirs: []string{j("docs")}, real: j("docs/TASKS.md"), exists: true},
		{rel: "link.md", dirs: []string{root, j("docs")}, real: j("docs/TASKS.md"), exists: true},
		{rel: "chain.md", dirs: []string{root, j("docs")}, real: j("docs/TASKS.md"), exists: true},
		{rel: "ydir/z.md", dirs: []string{root, j("x/y")}, real: j("x/y/z.md"), exists: true},
		{rel: "later/dir/task.md", dirs: []string{root}, real: j("later/dir/task.md")},
		{rel: "x/later/task.md", dirs: []string{j("x")}, real: j("x/later/task.md")},
		{rel: "file/task.md", dirs: []string{root}, real: j("file/task.md")},
		{rel: "folder.md", dirs: []string{root}, real: j("folder.md"), exists: true, isDir: true},
		{rel: "out.md", dirs: []string{root}, real: filepath.Join(outside, "o.md"), outside_: true},
		{rel: "docs/up/passwd", dirs: []string{j("docs")}, outside_: true},
		{rel: "loop1", dirs: []string{root}, real: j("loop1"), outside_: true},
	}
	for _, tc := range tests {
		t.Run(tc.rel, func(t *testing.T) {
			res := resolveTaskPath(root, tc.rel)
			if diff := cmp.Diff(tc.dirs, res.dirs); diff != "" {
				t.Errorf("dirs (-want +got):\n%s", diff)
			}
			if tc.real != "" && res.real != tc.real {
				t.Errorf("real = %q, want %q", res.real, tc.real)
			}
			if res.exists != tc.exists || res.isDir != tc.isDir || res.outside != tc.outside_ {
				t.Errorf("exists, isDir, outside = %v, %v, %v; want %v, %v, %v", res.exists, res.isDir, res.outside, tc.exists, tc.isDir, tc.outside_)
			}
		})
	}
}
