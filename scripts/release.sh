#!/usr/bin/env bash
# Builds the release: for each target, an archive holding agentd and
# agentd-hook (tar.gz; zip for Windows), and SHA256SUMS over the archives.
# The version is stamped from git (`git describe`), as `agentd version`
# reports it (cmd/internal/cli Version).
# Usage: scripts/release.sh [-o DIR] [-v VERSION] [GOOS/GOARCH ...]
#   default DIR dist, default targets the five of docs/platforms.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

out=dist
version=
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out=$2; shift 2 ;;
    -v) version=$2; shift 2 ;;
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
trap 'rm -rf "$work"' EXIT

# zipdir ZIP DIR: a zip of DIR (its name kept) with zip, or Python's zipfile.
zipdir() {
  if command -v zip >/dev/null; then
    (cd "$(dirname "$2")" && zip -qr "$1" "$(basename "$2")")
  else
    (cd "$(dirname "$2")" && python3 -m zipfile -c "$1" "$(basename "$2")")
  fi
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
done

(cd "$out" && sha256sum "${archives[@]}" > SHA256SUMS)
echo "$out/SHA256SUMS"
