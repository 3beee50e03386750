#!/usr/bin/env bash
# deb.sh — build the Debian package of headless into DIR (default out/): the static binaries
# of scripts/build.sh, the systemd user units and the docs, packaged by nfpm, a Go tool pinned
# in contrib/deb/tools/go.mod (fetched through the Go module proxy, checked against go.sum).
# Prints the path of the .deb on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out}
. scripts/goenv.sh
mkdir -p "$out"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
scripts/build.sh "$bin" >&2
# The commit's time dates the man pages and the changelog entry (the same bytes on a rebuild).
git_() { git -c safe.directory="$PWD" "$@"; } # a checkout another user owns, built as root
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git_ log -1 --format=%ct 2>/dev/null || date +%s)}
# Man pages, completions and the copyright file, from the programs' own help and build info.
go run -buildvcs=false ./scripts/mangen -brokerd "$bin/brokerd" -out "$bin/gen" >&2
gzip -9n "$bin/gen/man1/headless.1" "$bin/gen/man8/brokerd.8"
# A Debian version: 0.1.0~git<commit date>.<commit>, or ~dev<time> outside a git checkout.
if rev=$(git_ log -1 --format='%cd.%h' --date=format:'%Y%m%d%H%M%S' 2>/dev/null); then
  ver="0.1.0~git$rev"
  git_ diff --quiet HEAD 2>/dev/null || ver="$ver.dirty$(date -u +%Y%m%d%H%M%S)"
else
  ver="0.1.0~dev$(date -u +%Y%m%d%H%M%S)"
fi
deb="$out/headless_${ver}_amd64.deb"
# The Debian changelog: one entry for this build.
commit=$(git_ rev-parse HEAD 2>/dev/null || echo unknown)
{
  echo "headless ($ver) unstable; urgency=medium"
  echo
  echo "  * Built from https://github.com/headless-dev/headless,"
  echo "    commit $commit."
  echo
  echo " -- headless developers <headless-dev@users.noreply.github.com>  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} > "$bin/gen/changelog"
gzip -9n "$bin/gen/changelog"
# nfpm expands the environment in the version, not in file paths: the binaries' place is
# written into a copy of the config.
sed "s|\${DEB_BIN}|$bin|g" contrib/deb/nfpm.yaml > "$bin/nfpm.yaml"
DEB_VERSION="$ver" go tool -modfile=contrib/deb/tools/go.mod nfpm package \
  --config "$bin/nfpm.yaml" --packager deb --target "$deb" >&2
echo "$deb"
