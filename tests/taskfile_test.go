package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/lsptest"
)

// End-to-end tests of task files (docs/runtime.md §2.2, §2.7, §4; docs/protocol.md §4
// agentd/taskFileChanged) over the real binary. Each waits on
// notifications; "nothing was reported" is proven with a later real change
// (a fence): once the fence is reported, everything before it has been.
// Watcher errors, overflows and the polling fallback cannot be caused from
// outside; workspace/watch_test.go covers them.

// tfChanged is the params of agentd/taskFileChanged.
type tfChanged struct {
	Workspace  string      `json:"workspace"`
	Session    string      `json:"session"`
	Revision   uint64      `json:"revision"`
	Path       string      `json:"path"`
	Exists     bool        `json:"exists"`
	SHA256     string      `json:"sha256"`
	Checkboxes *checkboxes `json:"checkboxes"`
	ChangedAt  time.Time   `json:"changedAt"`
}

// checkboxes is a task file's {checked, total} (docs/task-files.md, "Checkboxes").
type checkboxes struct{ Checked, Total int }

// tfInfo is a snapshot's taskFile.
type tfInfo struct {
	Path                 string      `json:"path"`
	Exists               bool        `json:"exists"`
	SHA256               string      `json:"sha256"`
	Size                 int64       `json:"size"`
	ChangedSinceLastTurn bool        `json:"changedSinceLastTurn"`
	Checkboxes           *checkboxes `json:"checkboxes"`
}

type tfGoal struct {
	Status   string  `json:"status"`
	TaskFile *tfInfo `json:"taskFile"`
}

func tfSHA(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func tfPtr(s string) *string { return &s }

// tfStart starts agentd on a fresh env holding files, with a connected,
// initialized client.
func tfStart(t *testing.T, files map[string]string) (*env, *client) {
	t.Helper()
	e := newEnv(t)
	for rel, content := range files {
		e.tfWrite(rel, content)
	}
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	return e, c
}

// tfSetup is tfStart plus a goal (agentd.goal.create) whose task file is rel.
func tfSetup(t *testing.T, files map[string]string, rel string) (*env, *client) {
	t.Helper()
	e, c := tfStart(t, files)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "work through the task file", "taskFile": rel}, nil)
	return e, c
}

func (e *env) tfPath(rel string) string { return filepath.Join(e.ws, filepath.FromSlash(rel)) }

func (e *env) tfWrite(rel, content string) {
	e.t.Helper()
	p := e.tfPath(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// tfReplace writes content to rel whole: a temporary file in the same
// folder, renamed over rel. tfWrite (os.WriteFile) truncates first and
// writes after, so a test stalled between the two for longer than agentd's
// settle time (a loaded machine) shows an empty file, which agentd rightly
// reports as a change of its own. For the fences and the edits whose way of
// saving is not what the test is about.
func (e *env) tfReplace(rel, content string) {
	e.t.Helper()
	p := e.tfPath(rel)
	tmp := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.tfDo(os.Rename(tmp, p))
}

func (e *env) tfDo(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// tfNotes returns the agentd/taskFileChanged notifications received so far.
func (c *client) tfNotes() []tfChanged {
	var out []tfChanged
	for _, raw := range c.NotesOf("agentd/taskFileChanged") {
		var n tfChanged
		if err := json.Unmarshal(raw, &n); err != nil {
			c.T.Fatalf("agentd/taskFileChanged params %s: %v", raw, err)
		}
		out = append(out, n)
	}
	return out
}

// tfMatches says whether n reports rel with content (nil: missing).
func tfMatches(n tfChanged, rel string, content *string) bool {
	if n.Path != rel || n.Exists != (content != nil) {
		return false
	}
	return content == nil || n.SHA256 == tfSHA(*content)
}

func tfDescribe(content *string) string {
	if content == nil {
		return "missing"
	}
	return fmt.Sprintf("%q", *content)
}

// awaitTaskFile waits for an agentd/taskFileChanged, at index from or
// later among them, that reports rel with content (nil: missing); it
// returns the notification and its index.
func (c *client) awaitTaskFile(from int, rel string, content *string) (tfChanged, int) {
	c.T.Helper()
	deadline := time.After(waitLimit)
	for {
		changed := c.Changed()
		notes := c.tfNotes()
		for i := from; i < len(notes); i++ {
			if tfMatches(notes[i], rel, content) {
				return notes[i], i
			}
		}
		select {
		case <-changed:
		case <-deadline:
			c.T.Fatalf("no agentd/taskFileChanged for %s %s within %v; got %+v", rel, tfDescribe(content), waitLimit, notes)
		}
	}
}

// expectOnly checks that the task-file notifications from index from on
// are exactly the given contents of rel, in order.
func (c *client) expectOnly(from int, rel string, contents ...*string) {
	c.T.Helper()
	notes := c.tfNotes()[from:]
	ok := len(notes) == len(contents)
	for i := 0; ok && i < len(notes); i++ {
		ok = tfMatches(notes[i], rel, contents[i])
	}
	if !ok {
		var want []string
		for _, ct := range contents {
			want = append(want, tfDescribe(ct))
		}
		c.T.Fatalf("task-file notifications = %+v, want exactly %v", notes, want)
	}
}

// tfGoalNow reads the session's goal.
func (c *client) tfGoalNow(session string) *tfGoal {
	c.T.Helper()
	var st struct{ Goal *tfGoal }
	args := map[string]any{}
	if session != "" {
		args["session"] = session
	}
	c.MustExec("agentd.state", args, &st)
	return st.Goal
}

// tfFirstStep begins h's next turn with origin and its first step; it
// returns the turn's id and the text of the goal injection ("" if none).
func tfFirstStep(h *host, origin string) (string, string) {
	h.t.Helper()
	turn, _ := h.beginTurn(origin)
	for _, inj := range h.beginStep(turn) {
		if inj.Variant == "goal" {
			return turn, inj.Text
		}
	}
	return turn, ""
}

// tfEndTurn ends the step begun by tfFirstStep, then turn.
func tfEndTurn(h *host, turn string) {
	h.t.Helper()
	h.endStep(turn, 10, "stop")
	h.endTurn(turn, "completed")
}

const changedNotice = "changed since the last turn"

// tfQuick runs op, a file operation that must finish well within agentd's
// settle time (150 ms) to count as one change, and says whether it did. A
// loaded machine can stall the test longer; the caller then does it again
// rather than asserting on a burst that was not one.
func tfQuick(t *testing.T, op func()) bool {
	t.Helper()
	start := time.Now()
	op()
	if d := time.Since(start); d >= 100*time.Millisecond {
		t.Logf("the file operation was stalled for %v; trying again", d)
		return false
	}
	return true
}

// TestTaskFileWriteAndAppend: a plain write and an append are each
// reported with the new hash, before the goalChanged of the same revision,
// and the snapshot's taskFile follows.
func TestTaskFileWriteAndAppend(t *testing.T) {
	t.Parallel()
	e, c := tfSetup(t, map[string]string{"TASKS.md": "# Tasks\n- one\n"}, "TASKS.md")
	if g := c.tfGoalNow(""); g == nil || g.TaskFile == nil || !g.TaskFile.Exists || g.TaskFile.SHA256 != tfSHA("# Tasks\n- one\n") || g.TaskFile.ChangedSinceLastTurn {
		t.Fatalf("goal after create = %+v, want the task file recorded unchanged", g)
	}

	v2 := "# Tasks\n- two\n"
	e.tfWrite("TASKS.md", v2)
	n, _ := c.awaitTaskFile(0, "TASKS.md", &v2)
	if n.Workspace != fileURI(e.ws) || n.Session != "default" || n.Revision == 0 || n.ChangedAt.IsZero() {
		t.Fatalf("agentd/taskFileChanged = %+v, want workspace %s, session default, a revision and changedAt", n, fileURI(e.ws))
	}
	// taskFileChanged comes right before the goalChanged of its revision.
	gc := c.Await("agentd/goalChanged", revisionAtLeast(n.Revision))
	var g struct {
		Revision uint64
		Goal     tfGoal
		Change   struct{ Kind, Actor string }
	}
	json.Unmarshal(gc, &g)
	if g.Revision != n.Revision || g.Change.Kind != "taskFile" || g.Change.Actor != "runtime" || g.Goal.TaskFile == nil || !g.Goal.TaskFile.ChangedSinceLastTurn {
		t.Fatalf("goalChanged after taskFileChanged = %s", gc)
	}
	methods := c.Methods()
	for i, m := range methods {
		if m == "agentd/taskFileChanged" {
			if i+1 >= len(methods) || methods[i+1] != "agentd/goalChanged" {
				t.Fatalf("notifications %v: agentd/taskFileChanged must be followed by its agentd/goalChanged", methods)
			}
			break
		}
	}

	f, err := os.OpenFile(e.tfPath("TASKS.md"), os.O_APPEND|os.O_WRONLY, 0)
	e.tfDo(err)
	_, err = f.WriteString("- three\n")
	e.tfDo(err)
	e.tfDo(f.Close())
	v3 := v2 + "- three\n"
	c.awaitTaskFile(0, "TASKS.md", &v3)
	if g := c.tfGoalNow(""); g.TaskFile.SHA256 != tfSHA(v3) || g.TaskFile.Size != int64(len(v3)) || !g.TaskFile.Exists || !g.TaskFile.ChangedSinceLastTurn {
		t.Fatalf("taskFile after append = %+v", g.TaskFile)
	}
}

// TestTaskFileSaveByRename: vim's save (rename to file~, write a new file,
// delete the backup) is one change.
func TestTaskFileSaveByRename(t *testing.T) {
	t.Parallel()
	e, c := tfSetup(t, map[string]string{"TASKS.md": "v1\n"}, "TASKS.md")
	p := e.tfPath("TASKS.md")
	for attempt := 1; ; attempt++ {
		before := len(c.tfNotes())
		saved := fmt.Sprintf("v%d saved by vim\n", attempt+1)
		quick := tfQuick(t, func() {
			e.tfDo(os.Rename(p, p+"~"))
			e.tfWrite("TASKS.md", saved)
			e.tfDo(os.Remove(p + "~"))
		})
		c.awaitTaskFile(before, "TASKS.md", &saved)
		if !quick && attempt < 5 {
			continue
		}
		c.expectOnly(before, "TASKS.md", &saved)
		return
	}
}

// TestTaskFileAtomicReplace: a temporary file in the same folder renamed
// over the task file is one change.
func TestTaskFileAtomicReplace(t *testing.T) {
	t.Parallel()
	e, c := tfSetup(t, map[string]string{"docs/TASKS.md": "v1\n"}, "docs/TASKS.md")
	before := len(c.tfNotes())
	e.tfWrite("docs/.TASKS.md.tmp-1234", "v2 replaced atomically\n")
	e.tfDo(os.Rename(e.tfPath("docs/.TASKS.md.tmp-1234"), e.tfPath("docs/TASKS.md")))
	c.awaitTaskFile(before, "docs/TASKS.md", tfPtr("v2 replaced atomically\n"))
	c.expectOnly(before, "docs/TASKS.md", tfPtr("v2 replaced atomically\n"))
}

// TestTaskFileDeleteAndCreate: a delete is reported as missing, and the
// file is picked up again when it is created.
func TestTaskFileDeleteAndCreate(t *testing.T) {
	t.Parallel()
	e, c := tfSetup(t, map[string]string{"TASKS.md": "v1\n"}, "TASKS.md")
	e.tfDo(os.Remove(e.tfPath("TASKS.md")))
	n, i := c.awaitTaskFile(0, "TASKS.md", nil)
	if n.SHA256 != "" {
		t.Fatalf("missing file reported with sha256 %q", n.SHA256)
	}
	if g := c.tfGoalNow(""); g.TaskFile.Exists || g.TaskFile.SHA256 != "" {
		t.Fatalf("taskFile after delete = %+v, want exists false", g.TaskFile)
	}
	e.tfWrite("TASKS.md", "v2 created again\n")
	c.awaitTaskFile(i+1, "TASKS.md", tfPtr("v2 created again\n"))
}

// TestTaskFileFolderCreatedAfterGoal: a task file whose folders do not
// exist yet is picked up when they and it appear.
func TestTaskFileFolderCreatedAfterGoal(t *testing.T) {
	t.Parallel()
	e, c := tfSetup(t, nil, "later/dir/task.md")
	if g := c.tfGoalNow(""); g.TaskFile == nil || g.TaskFile.Path != "later/dir/task.md" || g.TaskFile.Exists {
		t.Fatalf("goal = %+v, want the missing task file recorded", g)
	}
	e.tfDo(os.Mkdir(e.tfPath("later"), 0o755))
	e.tfDo(os.Mkdir(e.tfPath("later/dir"), 0o755))
	e.tfWrite("later/dir/task.md", "appeared\n")
	c.awaitTaskFile(0, "later/dir/task.md", tfPtr("appeared\n"))
	e.tfWrite("later/dir/task.md", "edited\n")
	c.awaitTaskFile(0, "later/dir/task.md", tfPtr("edited\n"))
}

// TestTaskFileSymlinkRepointed: edits of the link's target are seen; a
// re-pointed link is a change, and from then on the new target is watched,
// not the old one.
func TestTaskFileSymlinkRepointed(t *testing.T) {
	t.Parallel()
	e, c := tfStart(t, map[string]string{"targets/a.md": "A1\n", "other/b.md": "B1\n"})
	e.tfDo(os.Symlink("targets/a.md", e.tfPath("task.md")))
	c.MustExec("agentd.goal.create", map[string]any{"objective": "follow the link", "taskFile": "task.md"}, nil)
	if g := c.tfGoalNow(""); g.TaskFile == nil || g.TaskFile.SHA256 != tfSHA("A1\n") {
		t.Fatalf("goal = %+v, want the hash of the link's target", g)
	}

	e.tfWrite("targets/a.md", "A2\n")
	c.awaitTaskFile(0, "task.md", tfPtr("A2\n"))

	// Re-point as ln -sfn does: a new link renamed over the old one.
	e.tfDo(os.Symlink("other/b.md", e.tfPath("task.md.new")))
	e.tfDo(os.Rename(e.tfPath("task.md.new"), e.tfPath("task.md")))
	_, i := c.awaitTaskFile(0, "task.md", tfPtr("B1\n"))

	e.tfWrite("other/b.md", "B2\n")
	_, i = c.awaitTaskFile(i+1, "task.md", tfPtr("B2\n"))

	// The old target is no longer the task file; the fence is the next report.
	e.tfWrite("targets/a.md", "A3: not the task file any more\n")
	e.tfReplace("other/b.md", "B3 fence\n")
	c.awaitTaskFile(i+1, "task.md", tfPtr("B3 fence\n"))
	c.expectOnly(i+1, "task.md", tfPtr("B3 fence\n"))
}

// TestTaskFileBurst: 50 writes in about 100 ms give exactly one
// notification, of the last content, once the file settles. A burst the
// test itself could not write as a burst (the machine stalled it for
// longer than the settle time) proves nothing and is written again.
func TestTaskFileBurst(t *testing.T) {
	t.Parallel()
	e, c := tfSetup(t, map[string]string{"TASKS.md": "start\n"}, "TASKS.md")
	for attempt := 1; ; attempt++ {
		before := len(c.tfNotes())
		start := time.Now()
		var stall time.Duration // the longest pause between two system calls of the burst
		last := start
		for i := range 50 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * 2 * time.Millisecond))) // paces the burst; not an assertion
			t0 := time.Now()
			e.tfWrite("TASKS.md", fmt.Sprintf("burst %d write %d\n", attempt, i))
			t1 := time.Now()
			stall = max(stall, t0.Sub(last), t1.Sub(t0))
			last = t1
		}
		t.Logf("attempt %d: 50 writes took %v, longest stall %v", attempt, last.Sub(start), stall)
		final, fence := fmt.Sprintf("burst %d write 49\n", attempt), fmt.Sprintf("fence %d\n", attempt)
		c.awaitTaskFile(before, "TASKS.md", &final)
		e.tfReplace("TASKS.md", fence)
		c.awaitTaskFile(before, "TASKS.md", &fence)
		if stall >= 100*time.Millisecond && attempt < 5 {
			continue
		}
		c.expectOnly(before, "TASKS.md", &final, &fence)
		return
	}
}

// TestTaskFileSaveWithoutChange: writing the same bytes (and touching the
// file) is no change: nothing is reported before the fence.
func TestTaskFileSaveWithoutChange(t *testing.T) {
	t.Parallel()
	e, c := tfSetup(t, map[string]string{"TASKS.md": "same\n"}, "TASKS.md")
	content := "same\n"
	for attempt := 1; ; attempt++ {
		before := len(c.tfNotes())
		quick := tfQuick(t, func() {
			e.tfWrite("TASKS.md", content) // truncates, then writes the same bytes
			later := time.Now().Add(time.Hour)
			e.tfDo(os.Chtimes(e.tfPath("TASKS.md"), later, later))
			e.tfWrite("README.md", "another file in the watched folder\n")
		})
		fence := fmt.Sprintf("fence %d\n", attempt)
		e.tfReplace("TASKS.md", fence)
		c.awaitTaskFile(before, "TASKS.md", &fence)
		if !quick && attempt < 5 {
			content = fence
			continue
		}
		c.expectOnly(before, "TASKS.md", &fence)
		return
	}
}

// TestTaskFileChangedWhileDown: a change made while agentd was not running
// is recorded when it opens the folder again, before the first read: the
// first agentd.state already shows the new content as changed, and the
// next goal reminder says so.
func TestTaskFileChangedWhileDown(t *testing.T) {
	t.Parallel()
	e, c := tfSetup(t, map[string]string{"TASKS.md": "before the restart\n"}, "TASKS.md")
	if code := c.shutdown(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	edited := "edited while agentd was down\n"
	e.tfWrite("TASKS.md", edited)

	c2 := e.start().connect()
	c2.Initialize(nil, e.ws)
	g := c2.tfGoalNow("") // the first read after the open
	if g == nil || g.TaskFile == nil {
		t.Fatalf("first agentd.state after the restart: goal %+v, want one with a task file", g)
	}
	if tf := *g.TaskFile; !tf.ChangedSinceLastTurn || tf.SHA256 != tfSHA(edited) || tf.Size != int64(len(edited)) {
		t.Fatalf("first agentd.state after the restart: taskFile %+v, want sha256 %s (the edited file), changed since the last turn", tf, tfSHA(edited))
	}
	if g.Status != "active" {
		t.Fatalf("goal after the restart is %s, want active (no turn was live when agentd went down)", g.Status)
	}
	if _, text := tfFirstStep(newHost(c2), "user"); !strings.Contains(text, "`TASKS.md` "+changedNotice) {
		t.Fatalf("goal reminder after restart does not mention the changed task file:\n%s", text)
	}
}

// tfFoundLimit bounds how long a change that no file system event shows
// may take to be found (docs/task-files.md: a verification every 2 s,
// within two of them at worst); the rest is slack for a loaded machine.
const tfFoundLimit = 10 * time.Second

// awaitFound waits for the agentd/taskFileChanged (at index from or later)
// of rel with content, a change made at since that no event shows, checks
// that it was found within tfFoundLimit and that its agentd/goalChanged
// came, and returns its index.
func (c *client) awaitFound(from int, rel, content string, since time.Time) int {
	c.T.Helper()
	n, i := c.awaitTaskFile(from, rel, &content)
	if d := time.Since(since); d > tfFoundLimit {
		c.T.Fatalf("the change of %s was found after %v, want within %v", rel, d, tfFoundLimit)
	}
	var g struct {
		Revision uint64
		Goal     tfGoal
		Change   struct{ Kind string }
	}
	json.Unmarshal(c.Await("agentd/goalChanged", revisionAtLeast(n.Revision)), &g)
	if g.Revision != n.Revision || g.Change.Kind != "taskFile" || g.Goal.TaskFile == nil || g.Goal.TaskFile.SHA256 != tfSHA(content) || !g.Goal.TaskFile.ChangedSinceLastTurn {
		c.T.Fatalf("agentd/goalChanged after the taskFileChanged of revision %d = %+v", n.Revision, g)
	}
	return i
}

// tfWatching writes content to rel and waits until it is reported: from
// then on agentd has checked the file and has no check pending, so what
// it reports next it found by itself. It returns the index for the next
// awaitTaskFile.
func (e *env) tfWatching(c *client, rel, content string) int {
	e.t.Helper()
	e.tfWrite(rel, content)
	_, i := c.awaitTaskFile(0, rel, &content)
	return i + 1
}

// TestTaskFileFolderMountedOver: a file system mounted over the task
// file's folder (inotify sees no mount) holding another file by that name
// is found within a few seconds. Skipped where mounting is not allowed.
func TestTaskFileFolderMountedOver(t *testing.T) {
	t.Parallel()
	e, c := tfSetup(t, map[string]string{"docs/TASKS.md": "v1\n"}, "docs/TASKS.md")
	before := e.tfWatching(c, "docs/TASKS.md", "beneath the mount\n")
	start := time.Now()
	mountTmpfsOn(t, e.tfPath("docs"), 1<<20)
	e.tfWrite("docs/TASKS.md", "on the mounted folder\n")
	i := c.awaitFound(before, "docs/TASKS.md", "on the mounted folder\n", start)
	// The mounted folder is watched from then on.
	e.tfWrite("docs/TASKS.md", "edited on the mount\n")
	c.awaitTaskFile(i+1, "docs/TASKS.md", tfPtr("edited on the mount\n"))
}

// TestTaskFileAncestorRenamed: the folder above the task file's folder is
// renamed (the watch stays on the moved folder) and a new tree with a
// changed task file put in its place: found within a few seconds, and from
// then on the new folder is the one watched, not the moved one.
func TestTaskFileAncestorRenamed(t *testing.T) {
	t.Parallel()
	e, c := tfSetup(t, map[string]string{"plan/docs/TASKS.md": "v1\n"}, "plan/docs/TASKS.md")
	before := e.tfWatching(c, "plan/docs/TASKS.md", "old tree\n")
	start := time.Now()
	e.tfDo(os.Rename(e.tfPath("plan"), e.tfPath("plan-old")))
	e.tfWrite("plan/docs/TASKS.md", "new tree\n")
	i := c.awaitFound(before, "plan/docs/TASKS.md", "new tree\n", start)

	e.tfWrite("plan-old/docs/TASKS.md", "the moved file is not the task file\n")
	e.tfReplace("plan/docs/TASKS.md", "fence\n")
	c.awaitTaskFile(i+1, "plan/docs/TASKS.md", tfPtr("fence\n"))
	c.expectOnly(i+1, "plan/docs/TASKS.md", tfPtr("fence\n"))
}

// TestTaskFileReminderOnce: CreateGoal with a task file, an edit, then the
// first step of the next turn tells the model once; the turn after does not.
func TestTaskFileReminderOnce(t *testing.T) {
	t.Parallel()
	e, c := tfStart(t, map[string]string{"TASKS.md": "- [ ] step one\n"})
	var res struct {
		Output  string
		IsError bool
	}
	c.MustExec("agentd.callTool", map[string]any{"name": "CreateGoal", "input": map[string]any{"objective": "finish the checklist", "taskFile": "TASKS.md"}}, &res)
	if res.IsError || !strings.Contains(res.Output, `"taskFile"`) {
		t.Fatalf("CreateGoal = %+v", res)
	}
	h := newHost(c)
	turn, text := tfFirstStep(h, "user")
	if text == "" || strings.Contains(text, changedNotice) {
		t.Fatalf("reminder before any edit = %q, want one without the task file notice", text)
	}
	tfEndTurn(h, turn)

	e.tfWrite("TASKS.md", "- [x] step one\n- [ ] step two\n")
	c.awaitTaskFile(0, "TASKS.md", tfPtr("- [x] step one\n- [ ] step two\n"))

	turn, text = tfFirstStep(h, "continuation")
	if !strings.Contains(text, "`TASKS.md` "+changedNotice) || !strings.Contains(text, "Re-read it") {
		t.Fatalf("reminder after the edit does not tell the model:\n%s", text)
	}
	if g := c.tfGoalNow(""); g.TaskFile.ChangedSinceLastTurn {
		t.Fatalf("changedSinceLastTurn still set after the reminder was delivered: %+v", g.TaskFile)
	}
	tfEndTurn(h, turn)
	if _, text := tfFirstStep(h, "continuation"); text == "" || strings.Contains(text, changedNotice) {
		t.Fatalf("the next turn's reminder mentions the change again:\n%s", text)
	}
}

// TestTaskFileOutsideRefused: paths that leave the workspace, lexically or
// through a symbolic link, are refused with goal.task_file_outside, by the
// host command (-32803) and by the CreateGoal tool (isError).
func TestTaskFileOutsideRefused(t *testing.T) {
	t.Parallel()
	outsideDir := t.TempDir()
	outsideFile := filepath.Join(outsideDir, "secret.md")
	if err := os.WriteFile(outsideFile, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, c := tfStart(t, nil)
	e.tfDo(os.Symlink(outsideFile, e.tfPath("link.md")))
	e.tfDo(os.Symlink(outsideDir, e.tfPath("outdir")))

	for _, path := range []string{"../x.md", "docs/../../x.md", outsideFile, "link.md", "outdir/secret.md", "outdir/new.md"} {
		t.Run(path, func(t *testing.T) {
			err := c.Exec("agentd.goal.create", map[string]any{"objective": "o", "taskFile": path}, nil)
			re, ok := err.(*lsptest.Error)
			var code string
			if ok {
				json.Unmarshal(re.DataField("code"), &code)
			}
			if !ok || re.Code != -32803 || code != "goal.task_file_outside" {
				t.Fatalf("agentd.goal.create taskFile %q: %v (data %v), want -32803 goal.task_file_outside", path, err, re)
			}
			var res struct {
				Output    string
				IsError   bool
				ErrorCode string
			}
			c.MustExec("agentd.callTool", map[string]any{"name": "CreateGoal", "input": map[string]any{"objective": "o", "taskFile": path}}, &res)
			if !res.IsError || res.ErrorCode != "goal.task_file_outside" || !strings.Contains(res.Output, "inside the workspace") {
				t.Fatalf("CreateGoal taskFile %q = %+v, want isError with goal.task_file_outside", path, res)
			}
		})
	}
	if g := c.tfGoalNow(""); g != nil {
		t.Fatalf("a refused goal was created: %+v", g)
	}
}

// TestTaskFileFromObjective: without taskFile, the first word of the
// objective that names an existing file inside the workspace (here written
// @path) becomes the task file; a word naming no file does not.
func TestTaskFileFromObjective(t *testing.T) {
	t.Parallel()
	e, c := tfStart(t, map[string]string{"docs/TASKS.md": "- do it\n"})
	create := func(session, objective string) tfGoal {
		t.Helper()
		var res struct {
			Output  string
			IsError bool
		}
		c.MustExec("agentd.callTool", map[string]any{"session": session, "name": "CreateGoal", "input": map[string]any{"objective": objective}}, &res)
		var out struct{ Goal tfGoal }
		if res.IsError || json.Unmarshal([]byte(res.Output), &out) != nil {
			t.Fatalf("CreateGoal %q = %+v", objective, res)
		}
		return out.Goal
	}

	g := create("found", "Do what @docs/TASKS.md says")
	if g.TaskFile == nil || g.TaskFile.Path != "docs/TASKS.md" || !g.TaskFile.Exists || g.TaskFile.SHA256 != tfSHA("- do it\n") {
		t.Fatalf("goal = %+v, want task file docs/TASKS.md", g)
	}
	if g := create("missing", "Do what @docs/OTHER.md says"); g.TaskFile != nil {
		t.Fatalf("goal = %+v, want no task file for a path that does not exist", g)
	}
	// The detected file is watched like an explicit one.
	e.tfWrite("docs/TASKS.md", "- do it\n- and this\n")
	n, _ := c.awaitTaskFile(0, "docs/TASKS.md", tfPtr("- do it\n- and this\n"))
	if n.Session != "found" {
		t.Fatalf("taskFileChanged for session %q, want found", n.Session)
	}
}
