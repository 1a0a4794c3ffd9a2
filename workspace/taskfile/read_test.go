package taskfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/goal"
)

// TestTaskFileSizeLimit: a task file larger than MaxBytes (a sparse
// file, so no disk is used) is refused when named (args.invalid naming the
// size and the limit), skipped when an objective mentions it, and a watched
// task file that grows beyond the limit is reported without a hash, its
// size as the change signal.
func TestTaskFileSizeLimit(t *testing.T) {
	f := newWatchFixture(t)
	big := int64(3 << 30)
	f.write("data.bin", "")
	if err := os.Truncate(f.path("data.bin"), big); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := Read(f.ws.Root(), "data.bin")
	want := fmt.Sprintf("task file data.bin is %d bytes; a task file may take at most %d bytes (16 MiB)", big, MaxBytes)
	if errorCode(err) != goal.CodeArgsInvalid || err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("TaskFile of a 3 GiB file: %v (code %q), want args.invalid containing %q", err, errorCode(err), want)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing a 3 GiB file took %v: it was read", d)
	}
	if got := Find(f.ws.Root(), []string{"data.bin"}); got != nil {
		t.Fatalf("FindTaskFile picked the 3 GiB file: %+v", got)
	}
	if _, err := Read(f.ws.Root(), "reg\x00"); errorCode(err) != goal.CodeArgsInvalid || !strings.Contains(err.Error(), "contains a NUL byte") {
		t.Fatalf("a path with a NUL byte: %v (code %q), want args.invalid saying so", err, errorCode(err))
	}
	f.write("limit.md", "")
	if err := os.Truncate(f.path("limit.md"), MaxBytes); err != nil {
		t.Fatal(err)
	}
	if info, err := Read(f.ws.Root(), "limit.md"); err != nil || info.SHA256 == "" || info.Size != MaxBytes {
		t.Fatalf("a file of exactly the limit: %+v, %v; want it hashed", info, err)
	}

	f.write("TASKS.md", "small")
	f.createGoal("default", "TASKS.md")
	f.x.flush()
	f.noCall()
	if err := os.Truncate(f.path("TASKS.md"), big); err != nil {
		t.Fatal(err)
	}
	var c taskFileCall
	select {
	case c = <-f.calls:
	case <-time.After(30 * time.Second):
		t.Fatalf("no report of the grown task file within 30s; logs:\n%s", f.logs.String())
	}
	if c.rel != "TASKS.md" || !c.info.Exists || c.info.Size != big || c.info.SHA256 != "" || c.info.ModifiedAt == nil {
		t.Fatalf("a task file grown to 3 GiB reported as %+v, want exists, its size, a modification time and no hash", c.info)
	}
	f.write("TASKS.md", "small again")
	f.await("TASKS.md", ptr("small again"))
}

// TestReadPathRules: the rules a task file path follows (docs/runtime.md
// §4): inside the folder after ".." and symbolic links, else
// goal.task_file_outside naming why; a path the file system cannot follow
// is args.invalid naming the cause; a missing file or folder is allowed.
// The end-to-end tests (tests.TestTaskFileOutsideRefused,
// tests.TestInputTaskFileErrorsHaveCodes) go through the daemon.
func TestReadPathRules(t *testing.T) {
	root := filepath.Join(t.TempDir(), "project")
	outside := t.TempDir()
	mk := func(rel, content string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	mk("docs/TASKS.md", "- [x] one\n- [ ] two\n")
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln(filepath.Join(outside, "secret.md"), "out.md")
	ln(outside, "outdir")
	ln("docs/TASKS.md", "in.md")
	ln(filepath.Join(root, "docs"), "absdocs")
	ln("loop-b", "loop-a")
	ln("loop-a", "loop-b")
	if err := os.Mkdir(filepath.Join(root, "folder.md"), 0o755); err != nil {
		t.Fatal(err)
	}

	refused := []struct{ path, code, why string }{
		{"", goal.CodeTaskFileOutside, "the path is empty"},
		{"  ", goal.CodeTaskFileOutside, "the path is empty"},
		{".", goal.CodeTaskFileOutside, "not inside the workspace folder"},
		{"../x.md", goal.CodeTaskFileOutside, "not inside the workspace folder"},
		{"docs/../../x.md", goal.CodeTaskFileOutside, "not inside the workspace folder"},
		{filepath.Join(outside, "secret.md"), goal.CodeTaskFileOutside, "not inside the workspace folder"},
		{"out.md", goal.CodeTaskFileOutside, "a symbolic link takes it outside the workspace folder"},
		{"outdir/secret.md", goal.CodeTaskFileOutside, "a symbolic link takes it outside the workspace folder"},
		{"outdir/new.md", goal.CodeTaskFileOutside, "a symbolic link takes it outside the workspace folder"},
		{"a\x00b.md", goal.CodeArgsInvalid, "contains a NUL byte"},
		{"loop-a/TASKS.md", goal.CodeArgsInvalid, "a loop of symbolic links"},
		{"loop-b", goal.CodeArgsInvalid, "a loop of symbolic links"},
		{strings.Repeat("n", 300) + ".md", goal.CodeArgsInvalid, "too long"},
		{"docs/TASKS.md/x.md", goal.CodeArgsInvalid, "a file, not a folder"},
		{"folder.md", goal.CodeArgsInvalid, "is a folder"},
	}
	for _, tc := range refused {
		t.Run("refused "+tc.path, func(t *testing.T) {
			info, err := Read(root, tc.path)
			if err == nil || errorCode(err) != tc.code || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("Read(%.40q) = %+v, %v (code %q); want %s saying %q", tc.path, info, err, errorCode(err), tc.code, tc.why)
			}
		})
	}

	allowed := []struct {
		path, rel string
		exists    bool
	}{
		{"docs/TASKS.md", "docs/TASKS.md", true},
		{filepath.Join(root, "docs", "TASKS.md"), "docs/TASKS.md", true},
		{"./docs/../docs/TASKS.md", "docs/TASKS.md", true},
		{"in.md", "in.md", true},                       // a link that stays inside
		{"absdocs/TASKS.md", "absdocs/TASKS.md", true}, // an absolute link into the folder
		{"later/dir/task.md", "later/dir/task.md", false},
	}
	for _, tc := range allowed {
		t.Run("allowed "+tc.path, func(t *testing.T) {
			info, err := Read(root, tc.path)
			if err != nil || info.Path != tc.rel || info.Exists != tc.exists {
				t.Fatalf("Read(%q) = %+v, %v; want path %q, exists %v", tc.path, info, err, tc.rel, tc.exists)
			}
			if tc.exists && (info.Checkboxes == nil || *info.Checkboxes != (goal.Checkboxes{Checked: 1, Total: 2})) {
				t.Fatalf("Read(%q) checkboxes = %+v, want 1 of 2", tc.path, info.Checkboxes)
			}
		})
	}

	// Find takes the first candidate that is a regular file inside.
	got := Find(root, []string{"out.md", "folder.md", "missing.md", "in.md", "docs/TASKS.md"})
	if got == nil || got.Path != "in.md" {
		t.Fatalf("Find = %+v, want in.md (the first regular file inside)", got)
	}
	if got := Find(root, []string{"out.md", "outdir/secret.md", "../x.md"}); got != nil {
		t.Fatalf("Find picked %+v, a file outside the folder", got)
	}
}
