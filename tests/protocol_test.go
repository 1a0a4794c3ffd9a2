package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"
)

// TestNoCommandIDLiterals fails when a command id is spelt as a string
// literal in the non-test Go code of the module outside commands/protocol
// (docs/architecture.md, "Packages"): every caller names a command
// by its protocol constant, so that renaming or removing one breaks the
// build of every caller instead of a request at run time. Generated files
// are left out.
func TestNoCommandIDLiterals(t *testing.T) {
	root := repoRoot(t)
	var found []string
	for _, file := range moduleGoFiles(t, root) {
		found = append(found, commandIDLiterals(t, root, file)...)
	}
	for _, f := range found {
		t.Errorf("%s: use the commands/protocol constant instead of the literal", f)
	}
}

// TestCommandIDLiteralsCaught checks the checker on a file that spells an
// id, so that the test above cannot pass by accident.
func TestCommandIDLiteralsCaught(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.go")
	os.WriteFile(file, []byte("package bad\nvar id = `agentd.goal.setBudget`\nvar other = \"agentd.json\"\n"), 0o600)
	if got := commandIDLiterals(t, dir, file); len(got) != 1 || !strings.Contains(got[0], "agentd.goal.setBudget") {
		t.Errorf("commandIDLiterals = %q, want the one id", got)
	}
}

// moduleGoFiles lists the module's non-test Go files outside
// commands/protocol, node_modules and testdata.
func moduleGoFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") || rel(root, path) == "commands/protocol") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// commandIDLiterals are the string literals of file that are a command id,
// as "file:line: \"id\""; none for a generated file.
func commandIDLiterals(t *testing.T, root, file string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if ast.IsGenerated(f) {
		return nil
	}
	ids := map[string]bool{}
	for _, c := range protocol.Commands {
		ids[string(c.ID)] = true
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if v, err := strconv.Unquote(lit.Value); err == nil && ids[v] {
			out = append(out, rel(root, fset.Position(lit.Pos()).String())+": "+lit.Value)
		}
		return true
	})
	return out
}
