package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// importTable reads the table of the "Import rules" section of
// docs/architecture.md: one row per package, `| `pkg` | `a`, `b` |`, "-"
// for the standard library only. Packages of this module are written
// without the module path, as importRules has them with it.
func importTable(text string) (map[string][]string, error) {
	_, section, ok := strings.Cut(text, "\n## Import rules\n")
	if !ok {
		return nil, fmt.Errorf("no section \"Import rules\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rules := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 2 || !strings.HasPrefix(strings.TrimSpace(cells[0]), "`") {
			continue
		}
		pkg := strings.Trim(strings.TrimSpace(cells[0]), "`")
		allowed := []string{}
		if list := strings.TrimSpace(cells[1]); list != "-" {
			for _, a := range strings.Split(list, ",") {
				a = strings.Trim(strings.TrimSpace(a), "`")
				if first, _, _ := strings.Cut(a, "/"); !strings.Contains(first, ".") {
					a = module + a
				}
				allowed = append(allowed, a)
			}
		}
		if _, dup := rules[pkg]; dup {
			return nil, fmt.Errorf("package %s has two rows", pkg)
		}
		rules[pkg] = allowed
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("the section \"Import rules\" has no table rows")
	}
	return rules, nil
}

// ruleDiff lists the packages whose rows differ between doc and code.
func ruleDiff(doc, code map[string][]string) []string {
	var out []string
	for pkg, want := range code {
		got, ok := doc[pkg]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: no row in docs/architecture.md (importRules: %v)", pkg, want))
		case !sameSet(got, want):
			out = append(out, fmt.Sprintf("%s: docs/architecture.md allows %v, importRules %v", pkg, got, want))
		}
	}
	for pkg := range doc {
		if _, ok := code[pkg]; !ok {
			out = append(out, fmt.Sprintf("%s: a row in docs/architecture.md but not in importRules", pkg))
		}
	}
	slices.Sort(out)
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestArchitectureTable: the import table of docs/architecture.md is the
// one the import-rule test enforces.
func TestArchitectureTable(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := importTable(string(data))
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	for _, d := range ruleDiff(doc, importRules) {
		t.Error(d)
	}
}

// TestArchitectureTableCatchesDrift checks the reader and the comparison on
// a small page, so that the test above cannot pass by accident.
func TestArchitectureTableCatchesDrift(t *testing.T) {
	t.Parallel()
	page := "# A\n\n## Import rules\n\n| package | may import |\n|---|---|\n" +
		"| `todo` | - |\n| `goal` | `github.com/google/uuid` |\n| `reminder` | `todo`, `goal` |\n\n## Next\n\n| `lsp` | `commands` |\n"
	doc, err := importTable(page)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"todo": {}, "goal": {"github.com/google/uuid"}, "reminder": {module + "todo", module + "goal"}}
	if d := ruleDiff(doc, want); len(d) > 0 {
		t.Fatalf("the page reads differently from what it says: %v", d)
	}
	code := map[string][]string{"todo": {"github.com/google/uuid"}, "goal": {"github.com/google/uuid"}, "workspace": {}}
	got := ruleDiff(doc, code)
	wantDiff := []string{
		"reminder: a row in docs/architecture.md but not in importRules",
		"todo: docs/architecture.md allows [], importRules [github.com/google/uuid]",
		"workspace: no row in docs/architecture.md (importRules: [])",
	}
	if !slices.Equal(got, wantDiff) {
		t.Errorf("differences = %q, want %q", got, wantDiff)
	}
}
