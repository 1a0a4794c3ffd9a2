package tests

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/agentd/agentd/"

// importRules is the table of docs/architecture.md "Import rules": what each
// package may import besides the standard library. An entry of another
// module also allows the packages below it (go.etcd.io/bbolt/errors); an
// entry of ours allows that package only, so that a rule for lsp does not
// let anyone import lsp/daemon.
var importRules = map[string][]string{
	"commands/protocol":    {},
	"jsonin":               {module + "commands/protocol"},
	"todo":                 {module + "commands/protocol", module + "jsonin", "github.com/google/uuid"},
	"goal":                 {module + "commands/protocol", module + "jsonin", "github.com/google/uuid"},
	"reminder":             {module + "commands/protocol", module + "todo", module + "goal"},
	"workspace/wsfolder":   {"golang.org/x/sys/"},
	"workspace/storage":    {module + "commands/protocol"},
	"workspace/storetest":  {module + "workspace/storage"},
	"workspace/boltstore":  {module + "workspace/storage", "go.etcd.io/bbolt"},
	"workspace/etcdstore":  {module + "workspace/storage", "go.etcd.io/etcd/client/v3", "go.etcd.io/etcd/api/v3", "google.golang.org/grpc"},
	"workspace":            {module + "commands/protocol", module + "todo", module + "goal", module + "workspace/wsfolder", module + "workspace/storage", module + "workspace/boltstore", module + "workspace/etcdstore", "go.etcd.io/bbolt", "go.etcd.io/etcd/client/v3", "go.uber.org/zap", "google.golang.org/grpc"},
	"workspace/taskfile":   {module + "goal", module + "workspace", "github.com/fsnotify/fsnotify"},
	"service":              {module + "caller", module + "commands/protocol", module + "todo", module + "goal", module + "reminder", module + "workspace", module + "workspace/taskfile", "golang.org/x/sys/"},
	"caller":               {"golang.org/x/sys/"},
	"commands":             {module + "caller", module + "jsonin", module + "todo", module + "goal", module + "reminder", module + "workspace", module + "workspace/taskfile", module + "workspace/wsfolder", module + "service", module + "commands/protocol"},
	"commands/protocolgen": {module + "commands", module + "commands/protocol", module + "goal", module + "todo", module + "workspace", module + "workspace/storage"},
	"lsp/jsonrpc":          {module + "jsonin"},
	"lsp":                  {module + "caller", module + "commands/protocol", module + "lsp/jsonrpc", module + "jsonin", module + "commands", module + "service", module + "workspace", module + "workspace/wsfolder", "go.lsp.dev/"},
	"lsp/daemon/client":    {module + "lsp/jsonrpc", module + "commands/protocol", module + "workspace/wsfolder", "golang.org/x/sys/"},
	"lsp/daemon":           {module + "caller", module + "commands/protocol", module + "lsp", module + "lsp/jsonrpc", module + "lsp/daemon/client", module + "commands", module + "service", module + "workspace", module + "workspace/wsfolder", "golang.org/x/sys/"},
	"mcpserver":            {module + "lsp/daemon/client", module + "lsp/jsonrpc", module + "commands", module + "commands/protocol", module + "jsonin", module + "workspace", "github.com/modelcontextprotocol/go-sdk/"},
	"hook":                 {module + "commands/protocol", module + "lsp/daemon/client", module + "goal", module + "workspace/wsfolder"},
	"setup":                {"github.com/pelletier/go-toml/v2"},
	"loop":                 {module + "commands/protocol"},
	// The terminal panel alone links Bubble Tea and Lip Gloss.
	"watch":            {module + "commands/protocol", module + "goal", module + "lsp/daemon/client", "charm.land/bubbletea/v2", "charm.land/lipgloss/v2", "github.com/charmbracelet/x/ansi"},
	"cmd/internal/cli": {module + "hook", module + "lsp/daemon/client", module + "workspace/wsfolder", "golang.org/x/sys/"},
	"cmd/agentd":       {module + "caller", module + "cmd/internal/cli", module + "lsp", module + "lsp/daemon", module + "lsp/daemon/client", module + "mcpserver", module + "setup", module + "commands", module + "service", module + "workspace", module + "workspace/taskfile", module + "workspace/wsfolder", module + "loop", module + "commands/protocol", module + "watch"},
	"cmd/agentd-hook":  {module + "cmd/internal/cli"},
	// The test client speaks only the wire; go.lsp.dev/jsonrpc2 checks what
	// the server writes.
	"tests/lsptest": {"go.lsp.dev/jsonrpc2"},
	// The team tests' etcd members, each a process of its own, and a client
	// that asks each its leader (docs/team.md); lsptest's Buffer keeps what
	// a member says.
	"tests/etcdtest": {module + "tests/lsptest", "go.etcd.io/etcd/client/v3", "go.etcd.io/etcd/api/v3", "go.uber.org/zap"},
}

// testOnly may also be imported by _test.go files of any package.
var testOnly = []string{"github.com/google/go-cmp/"}

// testImports may also be imported by the _test.go files of one package:
// only the tests of workspace and of its etcd store start etcd members in
// their own process; the stores' conformance suite runs in each backend's
// tests, and the store that refuses every first commit under the commands'
// handler table.
var testImports = map[string][]string{
	"workspace":           {module + "tests/etcdtest", module + "workspace/storetest"},
	"workspace/boltstore": {module + "workspace/storetest"},
	"workspace/etcdstore": {module + "tests/etcdtest", module + "workspace/storetest", "go.uber.org/zap"},
	"commands":            {module + "workspace/storetest"},
}

func TestImportRules(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	for pkg, allowed := range importRules {
		t.Run(pkg, func(t *testing.T) {
			files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
			if err != nil || len(files) == 0 {
				t.Fatalf("package %s has no Go files (%v)", pkg, err)
			}
			for _, file := range files {
				isTest := strings.HasSuffix(file, "_test.go")
				for _, imp := range importsOf(t, file) {
					if isStd(imp) || imp == module+pkg || allowedBy(imp, allowed) || (isTest && (allowedBy(imp, testOnly) || allowedBy(imp, testImports[pkg]))) {
						continue
					}
					t.Errorf("%s imports %s; docs/architecture.md allows %s only %v", rel(root, file), imp, pkg, allowed)
				}
			}
		})
	}
}

// TestEveryPackageHasARule fails when a package is added without deciding
// what it may import.
func TestEveryPackageHasARule(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	var missing []string
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") && path != root {
			return filepath.SkipDir
		}
		r := rel(root, path)
		if r == "tests" || strings.HasPrefix(r, "tests/") || r == "vscode-extension" || r == "nvim" {
			return filepath.SkipDir
		}
		if goFiles, _ := filepath.Glob(filepath.Join(path, "*.go")); len(goFiles) > 0 {
			if _, ok := importRules[r]; !ok {
				missing = append(missing, r)
			}
		}
		return nil
	})
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("packages without an import rule (add them to docs/architecture.md and importRules): %v", missing)
	}
}

// TestRulesCatchAViolation checks the checker itself on a file that breaks
// a rule, so the test above cannot pass by accident.
func TestRulesCatchAViolation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.go")
	os.WriteFile(file, []byte("package todo\nimport _ \"go.etcd.io/bbolt\"\nimport _ \"fmt\"\n"), 0o600)
	var bad []string
	for _, imp := range importsOf(t, file) {
		if !isStd(imp) && !allowedBy(imp, importRules["todo"]) {
			bad = append(bad, imp)
		}
	}
	if len(bad) != 1 || bad[0] != "go.etcd.io/bbolt" {
		t.Fatalf("violations found = %v, want [go.etcd.io/bbolt]", bad)
	}
	// A rule for one of our packages does not cover the packages below it;
	// one for another module's package does.
	if allowedBy(module+"lsp/daemon", []string{module + "lsp"}) {
		t.Errorf("a rule allowing %slsp allows %slsp/daemon too", module, module)
	}
	// The arrows go one way: lsp/daemon → lsp → lsp/jsonrpc.
	for _, back := range [][2]string{{"lsp", "lsp/daemon"}, {"lsp/jsonrpc", "lsp"}, {"lsp/jsonrpc", "lsp/daemon"}} {
		if allowedBy(module+back[1], importRules[back[0]]) {
			t.Errorf("importRules lets %s import %s", back[0], back[1])
		}
	}
	if !allowedBy("go.etcd.io/bbolt/errors", []string{"go.etcd.io/bbolt"}) {
		t.Errorf("a rule allowing go.etcd.io/bbolt refuses go.etcd.io/bbolt/errors")
	}
}

// heavyModules are what agentd-hook must not link (docs/hooks.md, docs/performance.md):
// the store and its etcd client, gRPC and protobuf under it, the MCP SDK.
var heavyModules = []string{"go.etcd.io/etcd", "google.golang.org/grpc", "google.golang.org/protobuf",
	"github.com/modelcontextprotocol", "go.etcd.io/bbolt", "github.com/fsnotify/fsnotify"}

// TestHookProgramIsLean: the dependency closure of cmd/agentd-hook (go list
// -deps) holds none of heavyModules, while agentd's holds each of them, so
// that the check finds what it looks for.
func TestHookProgramIsLean(t *testing.T) {
	t.Parallel()
	deps := func(pkg string) []string {
		cmd := exec.Command("go", "list", "-deps", "./"+pkg)
		cmd.Dir = repoRoot(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	links := func(deps []string, prefix string) bool {
		return slices.ContainsFunc(deps, func(d string) bool { return d == prefix || strings.HasPrefix(d, prefix+"/") })
	}
	lean, full := deps("cmd/agentd-hook"), deps("cmd/agentd")
	for _, m := range heavyModules {
		if links(lean, m) {
			t.Errorf("cmd/agentd-hook links %s; it must not (docs/hooks.md)", m)
		}
		if !links(full, m) {
			t.Errorf("cmd/agentd does not link %s: heavyModules is out of date", m)
		}
	}
}

func importsOf(t testing.TB, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	var out []string
	for _, imp := range f.Imports {
		out = append(out, strings.Trim(imp.Path.Value, `"`))
	}
	return out
}

func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func allowedBy(imp string, allowed []string) bool {
	for _, a := range allowed {
		if imp == a || !strings.HasPrefix(a, module) && strings.HasPrefix(imp, strings.TrimSuffix(a, "/")+"/") {
			return true
		}
	}
	return false
}

func rel(root, path string) string {
	r, _ := filepath.Rel(root, path)
	return filepath.ToSlash(r)
}

func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repository root not found from tests/: %v", err)
	}
	return dir
}
