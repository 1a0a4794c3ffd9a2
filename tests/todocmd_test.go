package tests

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestTodoCommand: `agentd todo` edits the session's list as the user
// (docs/commands.md, "The todo list from a shell"): items are numbered
// from 1, the edits act on the list the model wrote too, and a number
// beyond the list or a wrong command line writes nothing.
func TestTodoCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	todo := func(args ...string) (string, string, int) {
		return e.cli(append(append([]string{"todo"}, args...), "--workspace", e.ws)...)
	}
	if out, errOut, code := todo("list"); code != 0 || out != "Todo list is empty.\n" || !strings.Contains(errOut, "agentd: workspace "+e.ws) {
		t.Fatalf("todo list of a new folder: %d %q %q", code, out, errOut)
	}
	if _, errOut, code := e.cli("tool", "TodoList", `{"todos":[{"title":"write the lexer","status":"in_progress"}]}`, "--workspace", e.ws); code != 0 {
		t.Fatalf("the model's TodoList: %s", errOut)
	}
	todo("add", "write", "the", "parser")
	if out, errOut, code := todo("done", "1"); code != 0 || out != "Done: 1. write the lexer\nTodo list:\n  1. [done] write the lexer\n  2. [pending] write the parser\n" {
		t.Fatalf("todo done 1: %d %q %q", code, out, errOut)
	}
	todo("start", "2")
	todo("undone", "1")
	if out, _, _ := todo("list"); out != "Todo list:\n  1. [pending] write the lexer\n  2. [in_progress] write the parser\n" {
		t.Fatalf("after start 2 and undone 1: %q", out)
	}
	if _, errOut, code := todo("rm", "3"); code != 1 || !strings.Contains(errOut, "there is no item 3: the list has 2") {
		t.Fatalf("todo rm 3: %d %q", code, errOut)
	}
	for _, bad := range [][]string{{"rm", "0"}, {"done", "first"}, {"done"}, {"add"}, {"add", "  "}, {"clear", "all"}, {"shuffle"}, {}} {
		if _, errOut, code := todo(bad...); code != 2 || !strings.Contains(errOut, "usage:") {
			t.Errorf("agentd todo %v: %d %q, want a usage error", bad, code, errOut)
		}
	}
	if out, _, _ := todo("rm", "1"); out != "Removed: 1. write the lexer\nTodo list:\n  1. [in_progress] write the parser\n" {
		t.Fatalf("todo rm 1: %q", out)
	}
	if out, _, code := todo("clear"); code != 0 || out != "Todo list is empty.\n" {
		t.Fatalf("todo clear: %d %q", code, out)
	}
	out, _, _ := e.cli("history", "--limit", "7", "--workspace", e.ws)
	if n := strings.Count(out, "user     todo.set"); n != 6 || strings.Count(out, "model    todo.write") != 1 {
		t.Fatalf("history after 6 edits and a rejected one: %d todo.set\n%s", n, out)
	}
}

// TestTodoCommandsInParallel: people's `agentd todo add` run at once,
// each reading the list and writing it with the revision it read: an add
// whose list changed in between is refused (exit 1, todo.conflict), never
// written over another's; the list ends with exactly the adds that said
// they were written.
func TestTodoCommandsInParallel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 8
	var mu sync.Mutex
	var written []string
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			title := fmt.Sprintf("item %d", i)
			_, errOut, code := e.cli("todo", "add", title, "--workspace", e.ws)
			switch {
			case code == 0:
				mu.Lock()
				written = append(written, title)
				mu.Unlock()
			case code != 1 || !strings.Contains(errOut, "the todo list changed since you read it") || !strings.Contains(errOut, "nothing was written"):
				t.Errorf("todo add %q: exit %d %q, want written or todo.conflict", title, code, errOut)
			}
		})
	}
	wg.Wait()
	out, _, _ := e.cli("todo", "list", "--json", "--workspace", e.ws)
	var list struct{ Items []item }
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("todo list --json: %v\n%s", err, out)
	}
	var got []string
	for _, it := range list.Items {
		got = append(got, it.Title)
	}
	slices.Sort(got)
	slices.Sort(written)
	if len(written) == 0 || !slices.Equal(got, written) {
		t.Fatalf("the list holds %q; the adds that said they were written: %q", got, written)
	}
}
