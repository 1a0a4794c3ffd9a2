package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryFuzzTestRuns: every fuzz test of the module is fuzzed by
// tests/run.sh, in the package that declares it (a fuzz line naming the
// wrong package fuzzes nothing; run.sh's fuzz also refuses that).
func TestEveryFuzzTestRuns(t *testing.T) {
	t.Parallel()
	script, err := os.ReadFile("run.sh")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^fuzz (\S+) (Fuzz\w+) `).FindAllStringSubmatch(string(script), -1) {
		listed[strings.TrimPrefix(m[1], "./")+" "+m[2]] = true
	}
	declared := map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") {
				pkg, _ := filepath.Rel("..", filepath.Dir(path))
				declared[filepath.ToSlash(pkg)+" "+fn.Name.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(declared) == 0 {
		t.Fatal("found no fuzz test in the module")
	}
	for k := range declared {
		if !listed[k] {
			t.Errorf("fuzz test %s is not fuzzed by tests/run.sh: add a fuzz line", k)
		}
	}
	for k := range listed {
		if !declared[k] {
			t.Errorf("tests/run.sh fuzzes %s, which the module does not declare there", k)
		}
	}
}
