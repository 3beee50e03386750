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
export PATH=/usr/local/go/bin:$PATH
id=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
CGO_ENABLED=0 go build -ldflags "-X github.com/headless-dev/headless/internal/version.build=$id" -o "$out/" ./cmd/brokerd ./cmd/headless
