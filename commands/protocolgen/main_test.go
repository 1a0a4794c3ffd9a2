package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		if string(got) != string(want) {
			t.Errorf("%s differs from what commands/protocolgen writes; run go generate ./commands\n%s", name, diff(string(got), string(want)))
		}
	}
}

// diff shows the first lines where got and want differ, with a little
// context: enough to see what drifted.
func diff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	var b strings.Builder
	for j := max(0, i-2); j < i; j++ {
		b.WriteString("  " + g[j] + "\n")
	}
	for j := i; j < min(len(g), i+5); j++ {
		b.WriteString("- " + g[j] + "\n")
	}
	for j := i; j < min(len(w), i+5); j++ {
		b.WriteString("+ " + w[j] + "\n")
	}
	return b.String()
}
