package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
)

// The docs-facts tests fail when a list the Go code declares and its
// statement in the docs disagree (docs/architecture.md, "Adding a goal
// status"). Each statement has one fixed form, quoted in the test, that the
// test finds and reads; a doc that drops the form fails too.

// readDoc is the doc at path (relative to the repository root) with every
// run of white space made one space, so that a statement may wrap.
func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// backquotedList is the words in backquotes of the text of doc that
// follows marker up to stop: "`a`, `b` or `c`" is [a b c].
func backquotedList(t *testing.T, path, doc, marker, stop string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, marker)
	if !ok {
		t.Fatalf("%s lacks the statement %q…", path, marker)
	}
	list, _, _ := strings.Cut(rest, stop)
	var words []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(list, -1) {
		words = append(words, m[1])
	}
	return words
}

// TestDocFactGoalStatuses: docs/runtime.md §2.1 lists goal.Statuses(), in
// their order.
func TestDocFactGoalStatuses(t *testing.T) {
	t.Parallel()
	const path, marker = "docs/runtime.md", "A goal's `status` is one of "
	got := backquotedList(t, path, readDoc(t, path), marker, ";")
	var want []string
	for _, s := range goal.Statuses() {
		want = append(want, string(s))
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s §2.1 says %q%q, want %q (goal.Statuses)", path, marker, got, want)
	}
}

// TestDocFactChangeKinds: docs/protocol.md §4.1 lists the goal.ChangeKind
// constants declared in goal/, in their order.
func TestDocFactChangeKinds(t *testing.T) {
	t.Parallel()
	const path, marker = "docs/protocol.md", "`change.kind` of `agentd/goalChanged` is one of "
	got := backquotedList(t, path, readDoc(t, path), marker, " (")
	want := changeKinds(t)
	if !slices.Equal(got, want) {
		t.Errorf("%s §4.1 says %q%q, want %q (the goal.ChangeKind constants)", path, marker, got, want)
	}
}

// changeKinds is the values of the constants of type ChangeKind in the
// Go files of goal/, in the order of the source (files by name).
func changeKinds(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../goal/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "ChangeKind" {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: a ChangeKind constant that is not a string literal", name)
					}
					s, _ := strconv.Unquote(lit.Value)
					kinds = append(kinds, s)
				}
			}
		}
	}
	if len(kinds) == 0 {
		t.Fatal("no ChangeKind constants found in goal/")
	}
	return kinds
}

// exitCodeStatement is the form the docs state the codes of `agentd goal
// status --exit-code` in: "--exit-code` exits 0 complete, 1 no goal, ..."
// (the backquote optional), a list of "CODE NAME" separated by ", ".
var exitCodeStatement = regexp.MustCompile("--exit-code`? exits (\\d+ [a-z]+(?: [a-z]+)*(?:, \\d+ [a-z]+(?: [a-z]+)*)*)")

// TestDocFactExitCodes: every statement of the exit codes of `agentd goal
// status --exit-code` in docs/protocol.md (the table of §1 and §1.2.2) and
// README.md gives each goal status and no goal the code
// commands.StatusExitCode gives it, and nothing else.
func TestDocFactExitCodes(t *testing.T) {
	t.Parallel()
	want := map[string]int{}
	snaps := []*protocol.GoalSnapshot{nil}
	for _, s := range goal.Statuses() {
		snaps = append(snaps, &protocol.GoalSnapshot{Status: protocol.GoalStatus(s)})
	}
	for _, g := range snaps {
		code, err := commands.StatusExitCode(g)
		if err != nil {
			t.Fatalf("commands.StatusExitCode: %v", err)
		}
		name := "no goal"
		if g != nil {
			name = string(g.Status)
		}
		want[name] = code
	}
	for path, statements := range map[string]int{"docs/protocol.md": 2, "README.md": 1, "docs/commands.md": 1} {
		found := exitCodeStatement.FindAllStringSubmatch(readDoc(t, path), -1)
		if len(found) != statements {
			t.Errorf("%s has %d statements %q, want %d", path, len(found), "--exit-code` exits 0 complete, …", statements)
		}
		for _, m := range found {
			got := map[string]int{}
			for _, entry := range strings.Split(m[1], ", ") {
				code, name, _ := strings.Cut(entry, " ")
				got[name], _ = strconv.Atoi(code)
			}
			if !maps.Equal(got, want) {
				t.Errorf("%s says %q, want the codes of commands.StatusExitCode: %s", path, m[0], commands.StatusExitCodes())
			}
		}
	}
}

// TestDocFactSubagentBounds: docs/runtime.md §1.3 states the bounds of a
// session's subagent lists as todo declares them.
func TestDocFactSubagentBounds(t *testing.T) {
	t.Parallel()
	const path = "docs/runtime.md"
	doc := readDoc(t, path)
	for _, want := range []string{
		"At most " + strconv.Itoa(todo.MaxSubagentLists) + " lists per session (`todo.MaxSubagentLists`)",
		"at most " + strconv.Itoa(todo.MaxSubagentBytes>>10) + " KiB as JSON (`todo.MaxSubagentBytes`",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("%s §1.3 lacks %q", path, want)
		}
	}
}
