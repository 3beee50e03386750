#!/usr/bin/env bash
# test.sh — the whole test suite, exactly as CI runs it (.ci/run calls this).
# Installs what is missing (apt, and with npm ci the independent MCP client's node modules and
# the npm applications the alias sign-in is tried on: Node-RED, Verdaccio, TiddlyWiki, the
# Socket.IO Admin UI),
# then runs gofmt, go vet, the darwin build, and every test with the race detector against the
# REAL components: each test starts its own private D-Bus bus with gnome-keyring
# (scripts/with-secret-service.sh). HEADLESS_REAL=1 makes a missing component a failure, never
# a skip. Last, the Debian package is built, installed with apt and its /usr/bin/headless run
# (scripts/deb-check.sh). The binaries are built once (scripts/build.sh): install.sh installs
# that build, and the end-to-end tests run it (HEADLESS_E2E_BIN). Each phase says how long it
# took, and a summary of them ends the run.
#
# --load: the same suite on a busy machine, as a user's laptop or a shared CI runner is: a CPU
# hog (Debian's stress-ng, one worker per core, at the tests' own priority) runs from the
# dependencies on to the end, and ends with the run on every exit path (a watcher ends it
# within seconds even when test.sh itself is killed). No test may rest on the machine's speed.
set -euo pipefail
cd "$(dirname "$0")/.."
load=no
for a in "$@"; do
  case $a in
    --load) load=yes ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "test.sh: unknown argument $a (usage: scripts/test.sh [--load])" >&2; exit 2 ;;
  esac
done
began=$SECONDS
phases=()
# phase NAME: the previous phase ends, NAME begins.
phase() {
  if [ -n "${cur:-}" ]; then
    echo "== $cur took $((SECONDS - cur_start)) s"
    phases+=("$(printf '%6d s  %s' "$((SECONDS - cur_start))" "$cur")")
  fi
  cur=$1 cur_start=$SECONDS
  [ -z "$cur" ] || echo "== $cur"
}
phase "dependencies (apt, Go)"
scripts/install-deps.sh --test
. scripts/goenv.sh
tt=$(mktemp -d)
hog=
# cleanup ends the hog (its whole process group) and removes the temp dir, however the run ends.
cleanup() {
  if [ -n "$hog" ]; then
    kill -TERM -- "-$hog" 2>/dev/null || true
    wait "$hog" 2>/dev/null || true
  fi
  rm -rf "$tt"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
chmod 755 "$tt"
if [ "$load" = yes ]; then
  command -v stress-ng >/dev/null || { echo "test.sh --load: stress-ng is missing (scripts/install-deps.sh --test installs it)" >&2; exit 1; }
  cores=$(nproc)
  # In a process group of its own (setsid), so that one kill ends every worker; the watcher
  # ends it too if test.sh dies without its traps (SIGKILL).
  setsid stress-ng --cpu "$cores" --cpu-method all --timeout 3h </dev/null >"$tt/stress-ng.log" 2>&1 &
  hog=$!
  (while kill -0 $$ 2>/dev/null; do sleep 5; done; kill -TERM -- "-$hog" 2>/dev/null) </dev/null >/dev/null 2>&1 &
  echo "== load: stress-ng with $cores CPU workers (pid $hog) runs until the end of this run"
fi
phase "build (scripts/build.sh, once) and install (the root step)"
scripts/build.sh "$tt/bin"
# The root step of a source checkout: the groups, the seal key and set-gid binaries the
# guarantees rest on (the tests install this same build set-gid the same way, and run the
# threat as uid 65534).
scripts/install.sh --yes --bin "$tt/bin"
export HEADLESS_REAL=1 HEADLESS_E2E_BIN="$tt/bin"
# Tests bring their own buses and runtime dirs; nothing from the caller's session leaks in.
unset DBUS_SESSION_BUS_ADDRESS GNOME_KEYRING_CONTROL DISPLAY WAYLAND_DISPLAY

phase "gofmt"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$bad" ] || { echo "not gofmt-formatted: $bad" >&2; exit 1; }
phase "go vet"
go vet ./...
phase "darwin build and vet (Keychain backend)"
GOOS=darwin go build ./...
GOOS=darwin go vet ./...
phase "node modules of the independent MCP client (tests/mcpclient, pinned by its lockfile)"
command -v node >/dev/null && command -v npm >/dev/null || { echo "test.sh: the TypeScript MCP client test needs Node.js 18+ and npm (install-deps --test installs Debian's)" >&2; exit 1; }
npm ci --prefix tests/mcpclient --no-audit --no-fund --loglevel=error
phase "npm applications the alias sign-in is tried on (tests/apps: Node-RED 4.1, Verdaccio 6.8, TiddlyWiki 5, Socket.IO Admin UI, pinned by its lockfile)"
# Into tests/apps/node_modules only (no global install, no service); the tests start each one
# on loopback with a data dir of their own (tests/realapp_*_test.go). No install scripts run:
# none of them needs one. About 230 MB: kept between runs while the lockfile is the one it was
# installed from (its hash, written after a whole npm ci), so a second run installs nothing.
apps_lock=$(sha256sum tests/apps/package-lock.json | cut -d' ' -f1)
if [ "$(cat tests/apps/node_modules/.installed-from-lock 2>/dev/null)" = "$apps_lock" ]; then
  echo "tests/apps: node_modules already installed from this lockfile"
else
  npm ci --prefix tests/apps --no-audit --no-fund --loglevel=error --ignore-scripts
  echo "$apps_lock" > tests/apps/node_modules/.installed-from-lock
fi
phase "tests (race detector, real components)"
# As go test prints it, then the ten slowest tests and the packages' wall times
# (scripts/testtime reads go test -json; pipefail keeps go test's failure). The end-to-end
# tests mostly wait (on Chromium, on timeouts they test): four run at once, each in a world
# of its own (tests/harness_test.go, parallel).
go build -o "$tt/testtime" ./scripts/testtime
go test -race -count=1 -parallel 4 -timeout 45m -json ./... | "$tt/testtime"
phase "short fuzzing of every parser of outside data (20000 inputs each)"
scripts/fuzz.sh 20000
phase "the Debian package: built with the pinned nfpm, installed with apt, /usr/bin/headless doctor and version"
scripts/deb-check.sh
phase ""
echo "== phases"
printf '%s\n' "${phases[@]}"
echo "== test.sh took $((SECONDS - began)) s$([ "$load" = no ] || echo " (under load: stress-ng on every core)")"
echo "test.sh: all passed"
