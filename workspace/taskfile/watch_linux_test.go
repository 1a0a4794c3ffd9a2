package taskfile

import (
	"syscall"
	"testing"
	"time"
)

// TestWatchMountedOver: a file system mounted over the watched folder is
// found by the verification and watched; when it is unmounted (the kernel
// drops the watch without an event), the folder beneath is watched again.
// Needs the right to mount (root); skipped elsewhere.
func TestWatchMountedOver(t *testing.T) {
	setTunable(t, &taskFileVerify, time.Hour)
	f := newWatchFixture(t)
	x := f.x
	f.write("docs/TASKS.md", "beneath")
	f.createGoal("default", "docs/TASKS.md")
	x.flush()

	docs := f.path("docs")
	if err := syscall.Mount("tmpfs", docs, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	mounted := true
	unmount := func() {
		if mounted {
			mounted = false
			if err := syscall.Unmount(docs, syscall.MNT_DETACH); err != nil {
				t.Errorf("unmount %s: %v", docs, err)
			}
		}
	}
	t.Cleanup(unmount)
	f.write("docs/TASKS.md", "on the mount")
	x.flush()
	f.noCall() // no event: the watch is on the folder beneath
	x.verifyNow()
	f.called("docs/TASKS.md", ptr("on the mount"))
	f.write("docs/TASKS.md", "edited on the mount")
	f.await("docs/TASKS.md", ptr("edited on the mount"))

	unmount()
	x.verifyNow()
	f.called("docs/TASKS.md", ptr("beneath"))
	f.write("docs/TASKS.md", "beneath, edited")
	f.await("docs/TASKS.md", ptr("beneath, edited"))
}
