// Command protocolgen writes the clients' copy of the protocol from its Go
// declarations, so that neither editor client types a command id, a
// notification method, a status, an error code or a limit by hand:
//
//   - vscode-extension/src/protocol.gen.ts: the constants, and TypeScript
//     interfaces of the wire types (each command's args and result, each
//     notification's params, and every struct they reach), made by
//     reflection over the Go structs' JSON tags;
//   - nvim/lua/agentd/protocol.lua: the constants, and LuaLS annotations
//     of each command's args and result.
//
// The command ids, args and result types come from commands.Commands
// (the protocol's table, protocol.Commands, which names each command's
// Args and Result), the enumerations (goal and todo statuses, goal change kinds,
// actors, turn origins and outcomes, finish reasons, undo scopes) from the
// constants of their Go types and the error codes from the exported Code*
// string constants, read from the Go source (reflection cannot list
// constants); the statuses each goal action accepts from goal.PauseFrom,
// goal.ResumeFrom, goal.BudgetFrom, goal.WaitFrom and goal.ModelStatuses; the limits are
// the table below. Run it with
// `go generate ./commands`; TestGenerated fails when a committed file
// differs from what it would write (docs/protocol.md).
//
// It imports the packages whose declarations it exports (commands, goal,
// todo) and nothing that runs agentd; nothing imports it.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// outputs are the generated files, relative to the module root.
const (
	tsFile  = "vscode-extension/src/protocol.gen.ts"
	luaFile = "nvim/lua/agentd/protocol.lua"
)

func main() {
	root, err := moduleRoot()
	if err != nil {
		fail(err)
	}
	files, err := generate(root)
	if err != nil {
		fail(err)
	}
	for name, content := range files {
		path := filepath.Join(root, name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
			continue
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "protocolgen:", err)
	os.Exit(1)
}

// moduleRoot is the nearest folder at or above the working directory that
// holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// generate returns the content of every generated file, by path relative
// to the module root; root is read for the Go source of the enumerations.
func generate(root string) (map[string][]byte, error) {
	p, err := load(root)
	if err != nil {
		return nil, err
	}
	ts, err := p.typescript()
	if err != nil {
		return nil, err
	}
	lua, err := p.lua()
	if err != nil {
		return nil, err
	}
	return map[string][]byte{tsFile: ts, luaFile: lua}, nil
}
