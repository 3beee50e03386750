#!/usr/bin/env bash
# build.sh — build brokerd and headless into DIR (default ./bin), the one way the project
# builds them (the demo, the tests and CI call this). CGO_ENABLED=0: both are static ELF
# binaries with no program interpreter, so LD_PRELOAD and LD_LIBRARY_PATH have nothing to load
# code into. Nothing in headless needs cgo (os/user and net use their pure-Go code).
# Both get one fresh build id (internal/version): brokerd starts and trusts only a headless of
# its own build, even where the toolchain stamps no VCS revision (GOFLAGS=-buildvcs=false).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bin}
. scripts/goenv.sh
id=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
# Where the build came from, for 'headless version': the commit (-dirty with uncommitted
# changes), its date, and the release tag when the commit carries one. Outside a checkout (or
# where git refuses it) none is stamped and the version says devel.
pkg=github.com/headless-dev/headless/internal/version
stamp="-X $pkg.build=$id"
if commit=$(git -c safe.directory="$PWD" rev-parse HEAD 2>/dev/null); then
  [ -z "$(git -c safe.directory="$PWD" status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit-dirty"
  date=$(git -c safe.directory="$PWD" log -1 --format=%cI HEAD)
  stamp="$stamp -X $pkg.commit=$commit -X $pkg.date=$date"
  if tag=$(git -c safe.directory="$PWD" describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null); then
    stamp="$stamp -X $pkg.release=$tag"
  fi
fi
# -s -w: no symbol table or DWARF (the package ships stripped binaries; a panic's stack trace
# keeps its function names and lines).
CGO_ENABLED=0 go build -buildvcs=false -ldflags "-s -w $stamp" -o "$out/" ./cmd/brokerd ./cmd/headless
