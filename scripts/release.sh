#!/usr/bin/env bash
# Builds the release: for each target, an archive holding agentd and
# agentd-hook (tar.gz; zip for Windows), and SHA256SUMS over the archives.
# The version is stamped from git (`git describe`), as `agentd version`
# reports it (cmd/internal/cli Version).
# With --vsix it also packs, per target, the VS Code extension with that
# target's two programs in its bin/ (`vsce package --target`, so that
# installing the .vsix is the whole install); the extension's npm packages
# must be installed (cd vscode-extension && npm ci).
# Usage: scripts/release.sh [-o DIR] [-v VERSION] [--vsix] [GOOS/GOARCH ...]
#   default DIR dist, default targets the five of docs/platforms.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

out=dist
version=
vsix=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out=$2; shift 2 ;;
    -v) version=$2; shift 2 ;;
    --vsix) vsix=1; shift ;;
    -*) echo "release.sh: unknown flag $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64)
if [ -z "$version" ]; then
  version=$(git describe --tags --always --dirty 2>/dev/null || true)
  [ -n "$version" ] || { echo "release.sh: no version: not a git checkout; pass -v VERSION" >&2; exit 1; }
fi
version=${version#v}

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work" "$root/vscode-extension/bin"' EXIT

# zipdir ZIP DIR: a zip of DIR (its name kept) with zip, or Python's zipfile.
zipdir() {
  if command -v zip >/dev/null; then
    (cd "$(dirname "$2")" && zip -qr "$1" "$(basename "$2")")
  else
    (cd "$(dirname "$2")" && python3 -m zipfile -c "$1" "$(basename "$2")")
  fi
}

# packvsix GOOS GOARCH DIR: the extension for that target, carrying the
# programs in DIR; the .vsix goes beside the archives.
packvsix() {
  local target
  case "$1/$2" in
    windows/amd64) target=win32-x64 ;;
    */amd64) target=$1-x64 ;;
    *) target=$1-$2 ;;
  esac
  rm -rf vscode-extension/bin
  mkdir -p vscode-extension/bin
  cp "$3"/agentd* vscode-extension/bin/
  (cd vscode-extension && npm run --silent package -- --target "$target" --out "$out/agentd-vscode-$version-$target.vsix" >/dev/null)
  rm -rf vscode-extension/bin
  archives+=("agentd-vscode-$version-$target.vsix")
  echo "$out/agentd-vscode-$version-$target.vsix"
}

archives=()
for t in "${targets[@]}"; do
  goos=${t%/*} goarch=${t#*/}
  case "$t" in linux/amd64|linux/arm64|darwin/amd64|darwin/arm64|windows/amd64) ;;
    *) echo "release.sh: $t is not a release target (docs/platforms.md)" >&2; exit 2 ;;
  esac
  exe=; [ "$goos" = windows ] && exe=.exe
  name=agentd-$version-$goos-$goarch
  dir=$work/$name
  mkdir -p "$dir"
  for prog in agentd agentd-hook; do
    CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath \
      -ldflags "-s -w -X main.version=$version" -o "$dir/$prog$exe" "./cmd/$prog"
  done
  cp README.md "$dir/"
  if [ "$goos" = windows ]; then
    archive=$name.zip
    rm -f "$out/$archive"
    zipdir "$out/$archive" "$dir"
  else
    archive=$name.tar.gz
    tar -C "$work" -czf "$out/$archive" "$name"
  fi
  archives+=("$archive")
  echo "$out/$archive"
  [ "$vsix" = 0 ] || packvsix "$goos" "$goarch" "$dir"
done

(cd "$out" && sha256sum "${archives[@]}" > SHA256SUMS)
echo "$out/SHA256SUMS"
