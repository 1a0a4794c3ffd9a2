package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGenerated regenerates the clients' protocol files in memory and fails
// when a committed one differs (gopls' TestGenerated pattern): a change of
// a command, a wire type, a status, an error code or a limit must reach the
// clients in the same commit.
func TestGenerated(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Errorf("%v; run go generate ./commands", err)
			continue
		}
		// Compared line by line, so the diff shows every place that drifted.
		if d := cmp.Diff(strings.Split(string(got), "\n"), strings.Split(string(want), "\n")); d != "" {
			t.Errorf("%s differs from what commands/protocolgen writes; run go generate ./commands (-committed +generated):\n%s", name, d)
		}
	}
}

// TestErrorCodesDocumented: the codes docs/runtime.md §3 lists are the
// codes the Go packages declare and the clients get (ERROR_CODES), no more
// and no fewer, so that the three cannot drift.
func TestErrorCodesDocumented(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	m, err := load(root)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "runtime.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sect, _ := strings.Cut(string(doc), "\n## 3. Error codes\n")
	sect, _, _ = strings.Cut(sect, "\n## ")
	// The list is the paragraph after the first one.
	paras := strings.Split(strings.TrimSpace(sect), "\n\n")
	if len(paras) < 2 {
		t.Fatal("docs/runtime.md §3 has no list of codes")
	}
	var listed []string
	for _, m := range codeInBackticks.FindAllStringSubmatch(paras[1], -1) {
		listed = append(listed, m[1])
	}
	slices.Sort(listed)
	declared := slices.Sorted(slices.Values(m.errorCodes))
	if d := cmp.Diff(declared, listed); d != "" {
		t.Errorf("docs/runtime.md §3 lists other codes than the Go packages declare (-declared +listed):\n%s", d)
	}
}

var codeInBackticks = regexp.MustCompile("`([a-z_]+\\.[a-z_]+)`")
