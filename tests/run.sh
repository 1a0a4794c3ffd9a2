#!/usr/bin/env bash
# Runs every test of agentd: Go unit and end-to-end tests (with the race
# detector), short fuzz runs, the Node end-to-end tests (vscode-jsonrpc over LSP,
# the MCP SDK over agentd mcp), the real coding agents offline, and the
# VS Code and Neovim client tests in real editors.
# Usage: bash tests/run.sh [--quick]   (--quick: Go and Node tests only)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
quick=0
[ "${1:-}" = "--quick" ] && quick=1

step() { printf '\n== %s\n' "$*"; }

# ./... is agentd's packages only: the folders that hold npm packages
# (vscode-extension, tests/node, tests/agents) are modules of their own
# (their go.mod), so Go files shipped under their node_modules are not ours.
step "go vet"
go vet ./...

step "go vet for darwin and windows, go build for arm64"
# Platform code lives behind build tags (docs/architecture.md, "Platform
# code"): these keep it there.
GOOS=darwin go vet ./...
GOOS=windows go vet ./...
GOARCH=arm64 go build ./...

step "build"
mkdir -p bin
go build -o bin/agentd ./cmd/agentd
CGO_ENABLED=0 go build -o bin/agentd-hook ./cmd/agentd-hook   # beside agentd, static, as installed (README, Install)
export AGENTD_BIN="$root/bin/agentd"

step "go test -race"
# An explicit bound: ./tests takes about 6 minutes here with -race, and Go's
# default of 10 minutes per package leaves too little room on a loaded machine.
go test -race -count=1 -timeout 25m ./...

step "fuzz (short)"
# Counted runs (-fuzztime Nx): a timed run can end in a spurious "context
# deadline exceeded" when the time runs out in the middle of an input.
fuzz() { go test "$1" -timeout 10m -run '^$' -fuzz "^$2\$" -fuzztime "$3"; }
fuzz ./lsp/jsonrpc FuzzReadMessage 50000x
fuzz ./lsp/jsonrpc FuzzReaderEcho 50000x
fuzz ./workspace FuzzPathFromURI 50000x
fuzz ./commands FuzzUnwrapArguments 50000x
fuzz ./commands FuzzExecute 100000x
fuzz ./todo FuzzPlanCall 50000x
fuzz ./todo FuzzNormalize 50000x
fuzz ./goal FuzzNewCall 50000x
fuzz ./goal FuzzCallTool 20000x

step "Node clients: vscode-jsonrpc (LSP), @modelcontextprotocol/sdk (agentd mcp)"
(cd tests/node && npm ci --no-audit --no-fund --loglevel=error && node --test)

if [ "$quick" = 1 ]; then
  exit 0
fi
step "real coding agents, offline (Claude Code, Gemini CLI, Codex, Copilot CLI, Qwen Code, opencode)"
bash tests/agents/ci.sh

for client in vscode-extension nvim; do
  if [ -f "$client/ci.sh" ]; then
    step "$client"
    bash "$client/ci.sh"
  fi
done
