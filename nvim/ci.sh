#!/usr/bin/env bash
# nvim/ci.sh: tests of the Neovim plugin in real headless Neovim 0.10+ against the
# real agentd binary.
#
# Idempotent, non-interactive, runs as root on a fresh Debian 12 machine:
#   1. installs Neovim 0.10 from Debian trixie's packages, unpacked (not installed)
#      into nvim/.cache/nvim and started through that folder's own ld-linux;
#   2. builds agentd into $ROOT/bin/agentd, and the test-only etcd member of team_spec
#      (tests/etcdtest/cmd/etcdtest-server) into nvim/.cache;
#   3. runs the unit tests (pure Lua) and the end-to-end tests (each in its own
#      headless nvim under `timeout`, with a private workspace, state dir and
#      runtime dir, so the shared daemon they start is private to the test).
# Prints "N passed, N failed" as its last line; exits non-zero on any failure.
#
# Environment: NVIM=/path/to/nvim to use another Neovim (0.10+) instead;
# AGENTD_BIN=/path/to/agentd to test that binary instead of building one.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CACHE="$HERE/.cache"
SUITE=trixie
PACKAGES=(neovim neovim-runtime libc6 libgcc-s1 libluajit-5.1-2 libluajit-5.1-common
  libmsgpack-c2 libtree-sitter0.22 libunibilium4 libuv1t64 libvterm0 lua-lpeg lua-luv)
export DEBIAN_FRONTEND=noninteractive

log() { printf "[nvim/ci %3ss] %s\n" "$(( $(date +%s) - ${START:-$(date +%s)} ))" "$*" >&2; }

# The mirror of the machine's own Debian sources (first enabled URI of the main
# archive, not -security), read at run time so nothing host-specific is committed.
debian_mirror() {
  local f
  {
    [ -f /etc/apt/sources.list ] && awk '$1=="deb" { for (i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' /etc/apt/sources.list
    for f in /etc/apt/sources.list.d/*.list; do
      [ -f "$f" ] && awk '$1=="deb" { for (i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] && awk 'tolower($1)=="uris:" { for (i=2;i<=NF;i++) print $i }' "$f"
    done
  } | grep -v -- '-security' | grep -i 'debian' | head -n1
}

nvim_ok() { [ -x "$1" ] && "$1" --version 2>/dev/null | head -n1 | grep -Eq '^NVIM v(0\.(1[0-9]|[2-9][0-9])|[1-9])'; }

install_nvim() {
  local dest="$CACHE/nvim" wrapper="$CACHE/nvim/bin/nvim"
  if nvim_ok "$wrapper"; then log "Neovim cached: $("$wrapper" --version | head -n1)"; return 0; fi
  local arch triplet ldso
  arch=$(dpkg --print-architecture)
  case "$arch" in
    amd64) triplet=x86_64-linux-gnu; ldso=ld-linux-x86-64.so.2 ;;
    arm64) triplet=aarch64-linux-gnu; ldso=ld-linux-aarch64.so.1 ;;
    *) log "unsupported architecture $arch"; return 1 ;;
  esac
  local mirror; mirror=$(debian_mirror)
  if [ -z "$mirror" ]; then log "no Debian mirror found in /etc/apt/sources.list*"; return 1; fi
  log "fetching Neovim from Debian $SUITE ($arch)"
  local apt="$CACHE/apt"
  rm -rf "$apt" && mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$apt/debs"
  echo "deb $mirror $SUITE main" > "$apt/sources.list"
  local opts=(-q -o "Dir::Etc::sourcelist=$apt/sources.list" -o "Dir::Etc::sourceparts=$apt/parts"
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "APT::Sandbox::User=root"
    -o "Acquire::Retries=3")
  apt-get "${opts[@]}" update >"$apt/update.log" 2>&1 || { cat "$apt/update.log" >&2; return 1; }
  (cd "$apt/debs" && apt-get "${opts[@]}" download "${PACKAGES[@]}") >"$apt/download.log" 2>&1 \
    || { cat "$apt/download.log" >&2; return 1; }
  local tmp="$CACHE/nvim.tmp"
  rm -rf "$tmp" && mkdir -p "$tmp/root" "$tmp/bin"
  local deb
  for deb in "$apt/debs"/*.deb; do dpkg-deb -x "$deb" "$tmp/root" || return 1; done
  cat > "$tmp/bin/nvim" <<WRAP
#!/bin/sh
# Neovim from Debian $SUITE, run through its own dynamic loader and libraries.
D=\$(cd "\$(dirname "\$0")/.." && pwd)
L="\$D/root/usr/lib/$triplet"
export VIMRUNTIME="\$D/root/usr/share/nvim/runtime"
exec "\$L/$ldso" --library-path "\$L" "\$D/root/usr/bin/nvim" "\$@"
WRAP
  chmod +x "$tmp/bin/nvim"
  (cd "$apt/debs" && ls *.deb) > "$tmp/PACKAGES"
  rm -rf "$dest" && mv "$tmp" "$dest" && rm -rf "$apt"
  nvim_ok "$wrapper" || { log "unpacked Neovim does not start"; "$wrapper" --version; return 1; }
  log "installed $("$wrapper" --version | head -n1)"
}

PASSED=0
FAILED=0
fail_setup() { log "$1"; FAILED=$((FAILED + 1)); }

START=$(date +%s)
mkdir -p "$CACHE"

if [ -n "${NVIM:-}" ]; then
  nvim_ok "$NVIM" || { log "NVIM=$NVIM is not Neovim 0.10+"; echo "0 passed, 1 failed"; exit 1; }
else
  if ! install_nvim; then echo "0 passed, 1 failed"; exit 1; fi
  NVIM="$CACHE/nvim/bin/nvim"
fi
export NVIM

cleanup_daemons() {
  # Daemons started by a test run (detached, so they outlive nvim until their idle
  # timeout) carry this run's marker in their environment: end exactly those, by pid.
  local f pid
  for f in $(grep -lzxF "AGENTD_NVIM_TEST_RUN=$RUN_DIR" /proc/[0-9]*/environ 2>/dev/null); do
    pid=${f#/proc/}; pid=${pid%/environ}
    [ "$pid" != "$$" ] && kill "$pid" 2>/dev/null
  done
}
RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/agentd-nvim-ci.XXXXXX")
trap 'cleanup_daemons; rm -rf "$RUN_DIR"' EXIT
if [ -n "${AGENTD_BIN:-}" ]; then
  # A prebuilt binary (e.g. from a clean checkout while the work tree is mid-edit).
  [ -x "$AGENTD_BIN" ] || { fail_setup "AGENTD_BIN=$AGENTD_BIN is not executable"; AGENTD_BIN=""; }
else
  AGENTD_BIN="$ROOT/bin/agentd"
  log "building agentd"
  if ! (cd "$ROOT" && go build -o "$AGENTD_BIN" ./cmd/agentd) >&2; then
    fail_setup "go build ./cmd/agentd failed: end-to-end tests cannot run"
    AGENTD_BIN=""
  fi
fi
BIN_DIR=""
if [ -n "$AGENTD_BIN" ]; then
  # Tests start `agentd` from PATH, as a user's config would.
  BIN_DIR="$RUN_DIR/bin"
  mkdir -p "$BIN_DIR" && ln -sf "$AGENTD_BIN" "$BIN_DIR/agentd"
fi
export AGENTD_BIN
# The etcd member that team_spec starts and stops (test-only: tests/etcdtest).
AGENTD_ETCDTEST_SERVER="$CACHE/etcdtest-server"
log "building etcdtest-server"
if ! (cd "$ROOT" && go build -o "$AGENTD_ETCDTEST_SERVER" ./tests/etcdtest/cmd/etcdtest-server) >&2; then
  fail_setup "go build ./tests/etcdtest/cmd/etcdtest-server failed: team_spec cannot run"
fi
export AGENTD_ETCDTEST_SERVER


# run_nvim NAME TESTFILE [TIMEOUT]: one headless nvim for one test file.
run_nvim() {
  local name=$1 file=$2 limit=${3:-60}
  local dir="$RUN_DIR/$name"
  mkdir -p "$dir"/{state,data,config,cache,home,tmp,ws} "$dir/run"
  chmod 700 "$dir/run"
  local results="$dir/results"
  : > "$results"
  local t0; t0=$(date +%s)
  env -u NVIM_LISTEN_ADDRESS \
    AGENTD_NVIM_TEST_RUN="$RUN_DIR" \
    AGENTD_TEST_FILE="$file" AGENTD_TEST_RESULTS="$results" AGENTD_TEST_WS="$dir/ws" \
    AGENTD_PLUGIN_DIR="$HERE" \
    XDG_STATE_HOME="$dir/state" XDG_DATA_HOME="$dir/data" XDG_CONFIG_HOME="$dir/config" \
    XDG_CACHE_HOME="$dir/cache" XDG_RUNTIME_DIR="$dir/run" TMPDIR="$dir/tmp" HOME="$dir/home" \
    PATH="${BIN_DIR:+$BIN_DIR:}$PATH" \
    timeout -k 5 "$limit" "$NVIM" --headless --clean -n -i NONE \
      -c "lua local ok, err = pcall(dofile, '$HERE/tests/harness.lua'); if not ok then io.stderr:write('harness error: ' .. tostring(err) .. '\n'); vim.cmd('cquit 1') end" \
      > "$dir/stdout" 2> "$dir/stderr" < /dev/null
  local rc=$?
  cat "$dir/stdout"
  log "$name: exit $rc in $(( $(date +%s) - t0 ))s"
  local p f
  p=$(grep -c '^ok ' "$results" || true)
  f=$(grep -c '^not ok ' "$results" || true)
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then log "$name: timed out after ${limit}s"; else log "$name: nvim exited with $rc"; fi
  fi
  if [ "$f" -gt 0 ] || [ "$rc" -ne 0 ]; then
    log "$name: stderr follows"; sed 's/^/    /' "$dir/stderr" >&2
    [ -f "$dir/state/nvim/lsp.log" ] && { log "$name: lsp.log tail"; tail -n 40 "$dir/state/nvim/lsp.log" | sed 's/^/    /' >&2; }
  fi
  PASSED=$((PASSED + p)); FAILED=$((FAILED + f))
}

shopt -s nullglob
# Optional arguments: only the test files whose path contains one of them
# (e.g. `bash nvim/ci.sh sidebar store`).
selected() {
  [ "$#" -gt 1 ] || return 0
  local f=$1 pat
  shift
  for pat in "$@"; do case "$f" in *"$pat"*) return 0 ;; esac; done
  return 1
}
for t in "$HERE"/tests/unit/*_spec.lua; do
  selected "$t" "$@" || continue
  run_nvim "unit-$(basename "$t" .lua)" "$t" 60
done
# The harness itself: a Lua error must fail the test and end nvim, never hang it.
for t in "$HERE"/tests/selfcheck/*_spec.lua; do
  selected "$t" "$@" || continue
  name="selfcheck-$(basename "$t" .lua)"
  dir="$RUN_DIR/$name"
  mkdir -p "$dir/tmp"
  start_s=$(date +%s)
  env AGENTD_TEST_FILE="$t" AGENTD_TEST_RESULTS="$dir/results" AGENTD_PLUGIN_DIR="$HERE" TMPDIR="$dir/tmp" \
    XDG_STATE_HOME="$dir/state" XDG_DATA_HOME="$dir/data" XDG_CONFIG_HOME="$dir/config" HOME="$dir" \
    timeout -k 5 30 "$NVIM" --headless --clean -n -i NONE \
      -c "lua local ok, err = pcall(dofile, '$HERE/tests/harness.lua'); if not ok then io.stderr:write('harness error: ' .. tostring(err) .. '\n'); vim.cmd('cquit 1') end" \
      > "$dir/stdout" 2> "$dir/stderr" < /dev/null
  rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && grep -q '^not ok ' "$dir/results" && ! grep -q '^ok ' "$dir/results"; then
    echo "ok - harness: $(basename "$t" .lua) fails fast (exit $rc in $(( $(date +%s) - start_s ))s)"
    PASSED=$((PASSED + 1))
  else
    echo "not ok - harness: $(basename "$t" .lua) should fail fast (exit $rc)"
    sed 's/^/    /' "$dir/results" "$dir/stderr" >&2
    FAILED=$((FAILED + 1))
  fi
done

for t in "$HERE"/tests/e2e/*_spec.lua; do
  selected "$t" "$@" || continue
  if [ -z "$AGENTD_BIN" ]; then fail_setup "skipping $(basename "$t"): no agentd binary"; continue; fi
  # A hang guard per file: each file took under 35 s at a load of 25 on 2 cores.
  run_nvim "e2e-$(basename "$t" .lua)" "$t" 300
done

log "done in $(( $(date +%s) - START ))s"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
