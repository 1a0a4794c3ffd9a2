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
# --quick adds -short: the exhaustive cases (tens of megabytes of hostile
# input, thousands of writes, the state and history bounds) skip or shrink
# (README, "Tests"). The end-to-end tests of ./tests run in parallel, each with
# its own state and runtime folders; -parallel 4 rather than one per core, as
# they mostly wait on agentd processes. Every go test has an explicit
# -timeout: Go's default of 10 minutes per package is too little for the full
# run on a loaded 2-core machine.
if [ "$quick" = 1 ]; then
  go test -race -short -count=1 -parallel 4 -timeout 15m ./...
else
  go test -race -count=1 -parallel 4 -timeout 30m ./...
fi

step "fuzz (short)"
# Counted runs (-fuzztime Nx): a timed run can end in a spurious "context
# deadline exceeded" when the time runs out in the middle of an input.
# --quick runs a tenth of the inputs (the seed corpus runs in go test above
# either way): FuzzExecute alone does a few hundred inputs a second here.
fuzz() {
  local n=${3%x}
  [ "$quick" = 1 ] && n=$((n / 10))
  go test "$1" -timeout 10m -run '^$' -fuzz "^$2\$" -fuzztime "${n}x"
}
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
