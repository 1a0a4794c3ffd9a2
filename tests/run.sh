#!/usr/bin/env bash
# Runs every test of agentd: Go unit and end-to-end tests (with the race
# detector), short fuzz runs, the vscode-jsonrpc end-to-end test, and the
# VS Code and Neovim client tests in real editors.
# Usage: bash tests/run.sh [--quick]   (--quick: Go and Node tests only)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
quick=0
[ "${1:-}" = "--quick" ] && quick=1

step() { printf '\n== %s\n' "$*"; }

# Go packages of the module, leaving out Go files that npm packages ship
# under node_modules.
mapfile -t pkgs < <(go list ./... | grep -v /node_modules/)

step "go vet"
go vet "${pkgs[@]}"

step "build"
mkdir -p bin
go build -o bin/agentd ./cmd/agentd
export AGENTD_BIN="$root/bin/agentd"

step "go test -race"
go test -race -count=1 "${pkgs[@]}"

step "fuzz (short)"
fuzz() { go test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "$3"; }
fuzz ./lsp FuzzReadMessage 10s
fuzz ./workspace FuzzPathFromURI 5s
fuzz ./commands FuzzUnwrapArguments 5s
fuzz ./commands FuzzExecute 10s
fuzz ./todo FuzzPlanCall 5s
fuzz ./todo FuzzNormalize 5s
fuzz ./goal FuzzDecodeInput 5s
fuzz ./goal FuzzCallTool 10s

step "vscode-jsonrpc end-to-end"
(cd tests/node && npm ci --no-audit --no-fund --loglevel=error && node --test)

if [ "$quick" = 1 ]; then
  exit 0
fi
for client in vscode-extension nvim; do
  if [ -f "$client/ci.sh" ]; then
    step "$client"
    bash "$client/ci.sh"
  fi
done
