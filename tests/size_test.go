package tests

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The size limits of non-generated, non-test Go code (docs/architecture.md,
// "Size limits"): a function longer than this many lines, from its func
// keyword to its closing brace, or a file longer than this many lines, is
// split by concern unless that section names it as an exception.
const (
	maxFuncLines = 80
	maxFileLines = 800
)

// sizeSection is the heading of the section of docs/architecture.md whose
// list names the exceptions.
const sizeSection = "Size limits"

// sizeFinding is one function or file over its limit: file is the path from
// the repository root, fn the function ("Forward", "Daemon.Serve"), empty
// for the file itself.
type sizeFinding struct {
	file, fn string
	lines    int
}

func (f sizeFinding) key() string {
	if f.fn == "" {
		return f.file
	}
	return f.file + " " + f.fn
}

func (f sizeFinding) String() string {
	if f.fn == "" {
		return fmt.Sprintf("%s: %d lines (limit %d)", f.file, f.lines, maxFileLines)
	}
	return fmt.Sprintf("%s: %s is %d lines (limit %d)", f.file, f.fn, f.lines, maxFuncLines)
}

// sizeExceptions reads the exceptions of the section "Size limits": one
// list item each, "- `file.go`: why" for a file, "- `file.go` `Func`: why"
// for a function (a method as `Type.Method`). The reason after the colon
// must not be empty. It returns the exceptions by key (sizeFinding.key).
func sizeExceptions(text string) (map[string]string, error) {
	_, section, ok := strings.Cut(text, "\n## "+sizeSection+"\n")
	if !ok {
		return nil, fmt.Errorf("no section %q", sizeSection)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	out := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		item, ok := strings.CutPrefix(line, "- ")
		if !ok || !strings.HasPrefix(item, "`") {
			continue
		}
		names, why, ok := strings.Cut(item, ":")
		if !ok || strings.TrimSpace(why) == "" {
			return nil, fmt.Errorf("exception %q gives no reason after a colon", line)
		}
		var parts []string
		for _, p := range strings.Fields(names) {
			if !strings.HasPrefix(p, "`") || !strings.HasSuffix(p, "`") {
				return nil, fmt.Errorf("exception %q: %q is not a `name`; write - `file.go` `Func`: why", line, p)
			}
			parts = append(parts, strings.Trim(p, "`"))
		}
		if len(parts) == 0 || len(parts) > 2 {
			return nil, fmt.Errorf("exception %q: names neither a file nor a file and a function", line)
		}
		key := strings.Join(parts, " ")
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("exception %s is listed twice", key)
		}
		out[key] = strings.TrimSpace(why)
	}
	return out, nil
}

// oversized walks the Go files under root, leaving out tests, generated
// files, testdata, node_modules and hidden folders, and returns every
// function and file over its limit, sorted.
func oversized(root string) ([]sizeFinding, error) {
	var out []sizeFinding
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		found, err := oversizedIn(path, rel(root, path))
		out = append(out, found...)
		return err
	})
	slices.SortFunc(out, func(a, b sizeFinding) int { return strings.Compare(a.key(), b.key()) })
	return out, err
}

// oversizedIn measures one file; name is its path from the root.
func oversizedIn(path, name string) ([]sizeFinding, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	if ast.IsGenerated(f) {
		return nil, nil
	}
	var out []sizeFinding
	if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
		out = append(out, sizeFinding{file: name, lines: n})
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		n := fset.Position(fn.End()).Line - fset.Position(fn.Type.Func).Line + 1
		if n > maxFuncLines {
			out = append(out, sizeFinding{file: name, fn: funcName(fn), lines: n})
		}
	}
	return out, nil
}

// funcName is fn's name, a method's as Type.Method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fn.Name.Name
		}
		return fn.Name.Name
	}
}

// sizeViolations compares what is over its limit with the exceptions: one
// line for each finding not excepted, and for each exception that names
// nothing over its limit (split already, or renamed: the doc must follow).
func sizeViolations(found []sizeFinding, exceptions map[string]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range found {
		seen[f.key()] = true
		if _, ok := exceptions[f.key()]; !ok {
			out = append(out, f.String()+": split it by concern, or name it with the reason in docs/architecture.md, \""+sizeSection+"\"")
		}
	}
	for key := range exceptions {
		if !seen[key] {
			out = append(out, key+": named as an exception in docs/architecture.md, \""+sizeSection+"\", but not over its limit (or not found): remove the exception")
		}
	}
	slices.Sort(out)
	return out
}

// TestArchitectureSizeLimits: no function over 80 lines and no file over
// 800 lines in non-generated, non-test Go code, except those that
// docs/architecture.md names with the reason; every exception it names is
// still over its limit.
func TestArchitectureSizeLimits(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	exceptions, err := sizeExceptions(string(doc))
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	found, err := oversized(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range sizeViolations(found, exceptions) {
		t.Error(v)
	}
}

// TestArchitectureSizeCheckerCatchesViolations runs the checker on files
// made to break each limit, so the test above cannot pass by accident: a
// long function, a long method, a long file, a generated file (left out)
// and a test file (left out).
func TestArchitectureSizeCheckerCatchesViolations(t *testing.T) {
	dir := t.TempDir()
	body := func(n int) string { return strings.Repeat("\t_ = 0\n", n) }
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// 1 + 78 + 1 lines: at the limit; 1 + 79 + 1: over it.
	write("a.go", "package a\n\nfunc ok() {\n"+body(78)+"}\n\nfunc long() {\n"+body(79)+"}\n\ntype T struct{}\n\nfunc (*T) M() {\n"+body(79)+"}\n")
	write("big.go", "package a\n"+strings.Repeat("\n", 800))
	write("gen.go", "// Code generated by hand; DO NOT EDIT.\n\npackage a\n\nfunc g() {\n"+body(900)+"}\n")
	write("a_test.go", "package a\n\nfunc t() {\n"+body(900)+"}\n")
	found, err := oversized(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range found {
		got = append(got, fmt.Sprintf("%s %d", f.key(), f.lines))
	}
	want := []string{"a.go T.M 81", "a.go long 81", "big.go 801"}
	if !slices.Equal(got, want) {
		t.Fatalf("oversized = %q, want %q", got, want)
	}

	doc := "# A\n\n## " + sizeSection + "\n\n- `a.go` `long`: why\n- `gone.go`: split already\n\n## Next\n\n- `big.go`: not in the section\n"
	exceptions, err := sizeExceptions(doc)
	if err != nil {
		t.Fatal(err)
	}
	v := sizeViolations(found, exceptions)
	if len(v) != 3 || !strings.HasPrefix(v[0], "a.go: T.M is 81 lines") || !strings.HasPrefix(v[1], "big.go: 801 lines") || !strings.HasPrefix(v[2], "gone.go: named as an exception") {
		t.Errorf("violations = %q, want T.M, big.go and the stale gone.go", v)
	}
	for _, bad := range []string{"- `a.go` `long`\n", "- `a.go` `long`:  \n", "- `a.go` long: why\n", "- `a.go`: one\n- `a.go`: two\n"} {
		if _, err := sizeExceptions("\n## " + sizeSection + "\n" + bad); err == nil {
			t.Errorf("sizeExceptions accepted %q", bad)
		}
	}
}
