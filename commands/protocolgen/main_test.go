package main

import (
	"os"
	"path/filepath"
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
