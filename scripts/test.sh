#!/usr/bin/env bash
# test.sh — the whole test suite, exactly as CI runs it (.ci/run calls this).
# Installs what is missing (apt, and the independent MCP client's node modules with npm ci),
# then runs gofmt, go vet, the darwin build, and every test with the race detector against the
# REAL components: each test starts its own private D-Bus bus with gnome-keyring
# (scripts/with-secret-service.sh). HEADLESS_REAL=1 makes a missing component a failure, never
# a skip. Last, the Debian package is built, installed with apt and its /usr/bin/headless run
# (scripts/deb-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
. scripts/goenv.sh
# The root step of a source checkout: the groups, the seal key and set-gid binaries the
# guarantees rest on (the tests install their own builds set-gid the same way, and run the
# threat as uid 65534).
scripts/install.sh --yes
export HEADLESS_REAL=1
# Tests bring their own buses and runtime dirs; nothing from the caller's session leaks in.
unset DBUS_SESSION_BUS_ADDRESS GNOME_KEYRING_CONTROL DISPLAY WAYLAND_DISPLAY

echo "== gofmt"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$bad" ] || { echo "not gofmt-formatted: $bad" >&2; exit 1; }
echo "== go vet"
go vet ./...
echo "== darwin build and vet (Keychain backend)"
GOOS=darwin go build ./...
GOOS=darwin go vet ./...
echo "== node modules of the independent MCP client (tests/mcpclient, pinned by its lockfile)"
command -v node >/dev/null && command -v npm >/dev/null || { echo "test.sh: the TypeScript MCP client test needs Node.js 18+ and npm (install-deps --test installs Debian's)" >&2; exit 1; }
npm ci --prefix tests/mcpclient --no-audit --no-fund --loglevel=error
echo "== tests (race detector, real components)"
# As go test prints it, then the ten slowest tests and the packages' wall times
# (scripts/testtime reads go test -json; pipefail keeps go test's failure).
tt=$(mktemp -d)
trap 'rm -rf "$tt"' EXIT
go build -o "$tt/testtime" ./scripts/testtime
started=$SECONDS
go test -race -count=1 -timeout 45m -json ./... | "$tt/testtime"
echo "== tests took $((SECONDS - started)) s"
echo "== short fuzzing of every parser of outside data (20000 inputs each)"
scripts/fuzz.sh 20000
echo "== the Debian package: built with the pinned nfpm, installed with apt, /usr/bin/headless doctor and version"
scripts/deb-check.sh
echo "test.sh: all passed"
