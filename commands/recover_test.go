package commands_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
)

// exec runs one command with one arguments object and fails the test on
// error.
func exec(t *testing.T, cl *commands.Client, id string, args map[string]any) any {
	t.Helper()
	raw, err := json.Marshal([]any{args})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cl.Execute(context.Background(), id, raw)
	if err != nil {
		t.Fatalf("%s %v: %v", id, args, err)
	}
	return res
}

// TestRemovedFolderHeldForLiveTurns: a client that removes a folder while
// one of its turns on it is live keeps the folder's store (and so its lock)
// until the turn ends: another serving process (here another service with
// its own registry, which the file lock keeps out as it would another
// process) cannot open the folder and take the turn for one a dead process
// left, pausing the goal. Re-added, the folder ends the turn normally, and
// once the client lets it go the other process opens it with the goal
// still active.
func TestRemovedFolderHeldForLiveTurns(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "work")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	opts := workspace.Options{StateDir: filepath.Join(dir, "state"), LockTimeout: 50 * time.Millisecond}
	a := service.New(opts, service.Daemon)
	defer a.Close()
	cl := commands.NewClient(a, commands.Defaults{})
	defer cl.Close()
	if err := cl.AddFolder(root); err != nil {
		t.Fatal(err)
	}
	exec(t, cl, "agentd.goal.create", map[string]any{"objective": "keep working"})
	exec(t, cl, "agentd.turn.begin", map[string]any{"turnId": "t1", "origin": "user"})
	if err := cl.RemoveFolder(root); err != nil {
		t.Fatal(err)
	}

	b := service.New(opts, service.Daemon)
	defer b.Close()
	other := commands.NewClient(b, commands.Defaults{})
	defer other.Close()
	if err := other.AddFolder(root); protocol.ErrorCode(err) != "workspace.locked" {
		t.Fatalf("another process opens a folder with a live turn: %v, want workspace.locked", err)
	}

	if err := cl.AddFolder(root); err != nil {
		t.Fatal(err)
	}
	exec(t, cl, "agentd.turn.end", map[string]any{"turnId": "t1", "outcome": "completed"})
	if err := cl.RemoveFolder(root); err != nil {
		t.Fatal(err)
	}
	st := exec(t, other, "agentd.state", map[string]any{}).(protocol.State) // retries the open
	if st.Goal == nil || st.Goal.Status != "active" {
		t.Fatalf("goal after the other process opened the folder: %+v, want active", st.Goal)
	}
}
