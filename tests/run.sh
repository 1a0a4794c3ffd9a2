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

step() { printf '\n== %s (%s)\n' "$*" "$(date -u +%T)"; }

# ./... is agentd's packages only: the folders that hold npm packages
# (vscode-extension, tests/node, tests/agents) are modules of their own
# (their go.mod), so Go files shipped under their node_modules are not ours.
step "go vet"
go vet ./...

# --- cross-builds (docs/platforms.md) -------------------------------------
# Platform code lives behind build tags (docs/architecture.md, "Platform
# code"): for each release target, go vet, both programs built static
# (the release archives of scripts/release.sh, checked below), and the
# platform packages' tests compiled, so that a call one system lacks
# cannot land.
# --quick vets one target per other system (a call a system lacks is a
# system's, seldom an architecture's) and builds for arm64; the full run
# does every target, the release archives and the platform tests.
if [ "$quick" = 1 ]; then
  step "cross-builds: vet for Darwin and Windows, build for arm64"
  GOOS=darwin GOARCH=arm64 go vet ./...
  GOOS=windows GOARCH=amd64 go vet ./...
  GOARCH=arm64 go build ./...
else
  step "cross-builds: vet, release archives, platform tests compiled"
  for t in linux/arm64 darwin/amd64 darwin/arm64 windows/amd64; do
    GOOS=${t%/*} GOARCH=${t#*/} go vet ./...
  done
  platform_pkgs="./caller ./lsp ./lsp/daemon ./lsp/daemon/client ./workspace/wsfolder ./service ./cmd/internal/cli"
  for goos in darwin windows; do
    for p in $platform_pkgs; do GOOS=$goos go test -c -timeout 10m -o /dev/null "$p"; done
  done
  dist=$(mktemp -d)
  bash scripts/release.sh -o "$dist" -v 0.0.0-ci >/dev/null
  (cd "$dist" && sha256sum -c --quiet SHA256SUMS)
  for t in linux-amd64 linux-arm64 darwin-amd64 darwin-arm64; do
    tar -tzf "$dist/agentd-0.0.0-ci-$t.tar.gz" | grep -x "agentd-0.0.0-ci-$t/agentd-hook" >/dev/null   # no -q: with pipefail, a tar cut short fails
  done
  python3 -m zipfile -l "$dist/agentd-0.0.0-ci-windows-amd64.zip" | grep 'agentd-0.0.0-ci-windows-amd64/agentd.exe' >/dev/null
  tar -xzf "$dist/agentd-0.0.0-ci-linux-amd64.tar.gz" -C "$dist"
  [ "$("$dist/agentd-0.0.0-ci-linux-amd64/agentd" version)" = "agentd 0.0.0-ci" ]
  rm -rf "$dist"
fi
# --- end of cross-builds ---------------------------------------------------

step "build"
mkdir -p bin
go build -o bin/agentd ./cmd/agentd
CGO_ENABLED=0 go build -o bin/agentd-hook ./cmd/agentd-hook   # beside agentd, static, as installed (README, Install)
export AGENTD_BIN="$root/bin/agentd"
# The etcd members of the team tests run as this program, built once here
# without the race detector (docs/team.md "Tests"), not by each test binary.
go build -o bin/etcdtest-server ./tests/etcdtest/cmd/etcdtest-server
export AGENTD_ETCDTEST_SERVER="$root/bin/etcdtest-server"

step "Debian packages: tmux"
# tmux runs agentd watch in a real terminal (tests.TestWatchInTmux, which
# skips without it). CI runs as root on Debian; elsewhere install it yourself.
if ! command -v tmux >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends tmux >/dev/null
  else
    echo "tmux is not installed: TestWatchInTmux will skip (apt-get install tmux)"
  fi
fi

step "go test -race"
# --quick adds -short: the exhaustive cases (tens of megabytes of hostile
# input, thousands of writes, the state and history bounds) skip or shrink
# (README, "Tests"). The end-to-end tests of ./tests run in parallel, each with
# its own state and runtime folders; -parallel 4 rather than one per core, as
# they mostly wait on agentd processes. Every go test has an explicit
# -timeout, a bound against hangs only: Go's default of 10 minutes per
# package is too little on a loaded 2-core machine, where ./tests alone took
# 15 min under -short (README, "Tests").
if [ "$quick" = 1 ]; then
  go test -race -short -count=1 -parallel 4 -timeout 30m ./...
else
  go test -race -count=1 -parallel 4 -timeout 45m ./...
fi

step "fuzz (short)"
# Counted runs (-fuzztime Nx): a timed run can end in a spurious "context
# deadline exceeded" when the time runs out in the middle of an input.
# --quick runs a tenth of the inputs (the seed corpus runs in go test above
# either way): FuzzExecute alone does a few hundred inputs a second here.
# A target that is not in its package fails here (go test -fuzz alone would
# fuzz nothing and pass); TestEveryFuzzTestRuns checks that every fuzz test of
# the module is listed.
fuzz() {
  local n=${3%x}
  [ "$quick" = 1 ] && n=$((n / 10))
  local listed
  listed=$(go test "$1" -timeout 10m -list "^$2\$")   # not piped into grep -q: with pipefail, go test's SIGPIPE would fail it
  grep -qx "$2" <<<"$listed" || { echo "no fuzz test $2 in $1" >&2; exit 1; }
  go test "$1" -timeout 10m -run '^$' -fuzz "^$2\$" -fuzztime "${n}x"
}
fuzz ./lsp/jsonrpc FuzzReadMessage 50000x
fuzz ./lsp/jsonrpc FuzzReaderEcho 50000x
fuzz ./lsp/jsonrpc FuzzEnvelopeMatchesEncodingJSON 50000x
fuzz ./jsonin FuzzScan 50000x
fuzz ./jsonin FuzzDecodeMatchesReference 50000x
fuzz ./workspace/wsfolder FuzzPathFromURI 50000x
fuzz ./workspace/taskfile FuzzCountCheckboxes 50000x
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
