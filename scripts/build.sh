#!/usr/bin/env bash
# build.sh — build brokerd and headless into DIR (default ./bin), the one way the project
# builds them (the demo, the tests and CI call this). CGO_ENABLED=0: both are static ELF
# binaries with no program interpreter, so LD_PRELOAD and LD_LIBRARY_PATH have nothing to load
# code into. Nothing in headless needs cgo (os/user and net use their pure-Go code).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bin}
export PATH=/usr/local/go/bin:$PATH
CGO_ENABLED=0 go build -o "$out/" ./cmd/brokerd ./cmd/headless
