#!/usr/bin/env bash
# deb.sh — build the Debian package of headless into DIR (default out/): the static binaries
# of scripts/build.sh, the systemd user units and the docs, packaged by nfpm, a Go tool pinned
# in contrib/deb/tools/go.mod (fetched through the Go module proxy, checked against go.sum).
# Prints the path of the .deb on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out}
export PATH=/usr/local/go/bin:$PATH
mkdir -p "$out"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
scripts/build.sh "$bin" >&2
# A Debian version: 0.1.0~git<commit date>.<commit>, or ~dev<time> outside a git checkout.
if rev=$(git log -1 --format='%cd.%h' --date=format:'%Y%m%d%H%M%S' 2>/dev/null); then
  ver="0.1.0~git$rev"
  git diff --quiet HEAD 2>/dev/null || ver="$ver.dirty$(date -u +%Y%m%d%H%M%S)"
else
  ver="0.1.0~dev$(date -u +%Y%m%d%H%M%S)"
fi
deb="$out/headless_${ver}_amd64.deb"
# nfpm expands the environment in the version, not in file paths: the binaries' place is
# written into a copy of the config.
sed "s|\${DEB_BIN}|$bin|g" contrib/deb/nfpm.yaml > "$bin/nfpm.yaml"
DEB_VERSION="$ver" go tool -modfile=contrib/deb/tools/go.mod nfpm package \
  --config "$bin/nfpm.yaml" --packager deb --target "$deb" >&2
echo "$deb"
