#!/usr/bin/env bash
# fuzz.sh — fuzz every parser of outside data for a bounded number of inputs each.
#   scripts/fuzz.sh [COUNT] [REGEXP]   COUNT inputs per target (default 20000, what test.sh runs);
#                                      REGEXP picks targets by "Name ./pkg" (default: all).
# A count, not a duration: a time-bounded run can end in "context deadline exceeded" when the
# deadline falls inside one slow input, which would make CI flaky. Any crash fails the script
# (go test writes the failing input under the package's testdata/fuzz/ for a regression test).
# One line per target goes to stdout; go test's own output (progress every 3 s) to stderr, or
# with FUZZ_LOG_DIR=DIR to DIR/TARGET-PKG.log. FUZZ_MINIMIZE_TIME=D passes -fuzzminimizetime=D:
# go test shrinks every new interesting input for up to 60 s while the workers fuzz nothing
# else, which on FuzzOutline (new coverage every few seconds) took most of a long run; 0 turns
# that shrinking off (a crasher is still written as found), not a single execution fewer.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/goenv.sh
count=${1:-20000}
pick=${2:-.}
# origins; config; broker.sock (frames + method params, brokerd's server); control.sock's request
# path (internal/rpc) and its method params (host); frames (wire); the Assuan (pinentry) reader;
# DOMSnapshot -> outline and login-form detection (snapshot); MCP tool arguments (mcpserver);
# /proc/net listener tables (loopback); the profile's files; the navigation allowlist; the
# journey plan; otpauth:// URIs and the vault's TOTP record; a passphrase in the pinentry's D
# lines, and a sealed credential read from the vault; the profile files the start disarms.
targets=(
  "FuzzCanonical ./internal/origin" "FuzzParse ./internal/config" "FuzzServeConn ./internal/broker/gate"
  "FuzzServeConn ./internal/rpc" "FuzzControlParams ./host" "FuzzReadFrame ./internal/wire"
  "FuzzParseLine ./internal/broker/presence" "FuzzEscapeAssuan ./internal/broker/presence"
  "FuzzBuild ./host/snapshot" "FuzzOutline ./host/snapshot" "FuzzDecodeStrict ./internal/surface/mcpserver"
  "FuzzAppendJSONString ./host/cdp" "FuzzClean ./internal/procstat" "FuzzParse ./internal/allowlist"
  "FuzzParseLine ./internal/loopback" "FuzzParseTable ./internal/loopback" "FuzzParseOrigin ./internal/loopback"
  "FuzzCheckSQLiteHeader ./profile" "FuzzSetPasswordPrefs ./profile" "FuzzDecode ./internal/journey"
  "FuzzParse ./internal/totp" "FuzzUnmarshal ./internal/totp"
  "FuzzUnescapeAssuan ./internal/broker/presence" "FuzzParse ./internal/broker/seal" "FuzzDisarm ./profile"
  "FuzzText ./internal/clip"
)
ran=0
for t in "${targets[@]}"; do
  [[ $t =~ $pick ]] || continue
  set -- $t
  start=$(date +%s)
  log=${FUZZ_LOG_DIR:+$FUZZ_LOG_DIR/$1-${2//\//_}.log}
  # Without a log dir, go test's output joins this script's stderr as it is (an fd copy: opening
  # /dev/stderr anew would truncate a file the caller redirected stderr to, test.sh's log).
  if [ -n "$log" ]; then exec 3>"$log"; else exec 3>&2; fi
  if ! go test -run='^$' -fuzz="^$1\$" -fuzztime="${count}x" ${FUZZ_MINIMIZE_TIME:+-fuzzminimizetime="$FUZZ_MINIMIZE_TIME"} "$2" >&3 2>&1; then
    [ -n "$log" ] && cat "$log" >&2
    echo "fuzz.sh: $1 in $2 FAILED" >&2; exit 1
  fi
  echo "$1 $2: $count inputs, 0 crashes, $(( $(date +%s) - start )) s"
  ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || { echo "fuzz.sh: no target matches $pick" >&2; exit 1; }
echo "fuzz.sh: $ran targets passed"
