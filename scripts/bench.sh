#!/usr/bin/env bash
# bench.sh — benchmarks in one run, with ratios against baselines from the same run.
# Figures: release latency through brokerd vs (raw GetSecret + the scripted pinentry alone);
# the secret-service presence window vs a bare unlock, read and lock;
# challenge issue throughput with 1, 8 and 64 connections; 10,000 broker requests (version,
# credentials.list, challenge.issue) over 64 connections vs the same over 1 (p50, p99,
# requests/s, errors); brokerd idle RSS; the browser host;
# alias login (visit → auth login → verified) vs Playwright typing the plaintext password into
# the same page; what a TOTP code step adds to a sign-in (against the same site's password-only
# sign-in, interleaved); a passkey sign-in (a local go-webauthn relying party) vs the same site's
# password sign-in, interleaved; a snapshot of a long page after a sign-in (the echo scan) vs
# before any; 32 concurrent alias logins across 32 sessions (8 isolated); headless mcp vs
# Playwright MCP driven by one MCP client (navigate + snapshot, click, snapshot bytes); the
# bounded soak (500 sign-ins across 16 sessions, 4 isolated, verbs between, hostile pages mixed
# in: errors, 'status' p99 vs idle, brokerd/host/Chromium memory and descriptors end vs start).
# The Playwright baselines need Node.js 20+ and npm; playwright-core, @playwright/mcp and the MCP
# SDK (pinned in scripts/bench/package.json and its lockfile) are installed into
# scripts/bench/node_modules when missing.
#
#   scripts/bench.sh [--quick]
#
# Writes bench.json (figures, baselines, ratios, commit, machine, date), bench.md (a Markdown
# table) and bench.svg (a chart of the ratios) into $BENCH_OUT (default docs/bench), and on a
# clean run puts the table into README.md. Fails loudly: exits 1, naming each problem, when any
# benchmark fails, a figure is missing, any "errors" metric is above 0, or a test keyring died
# under a benchmark (scripts/benchreport; with-secret-service.sh prints how it died and what it
# said).
# --quick: fewer iterations, for a first look.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
for a in "$@"; do
  case $a in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "bench: unknown argument $a (usage: scripts/bench.sh [--quick])" >&2; exit 2 ;;
  esac
done
scripts/install-deps.sh
. scripts/goenv.sh
export HEADLESS_REAL=1
unset DBUS_SESSION_BUS_ADDRESS GNOME_KEYRING_CONTROL DISPLAY WAYLAND_DISPLAY
if [ $quick = 1 ]; then
  : "${BENCH_N:=60}" "${BENCH_SS_N:=20}" "${BENCH_CH_N:=500}" "${BENCH_HOST_N:=3}" "${BENCH_RSS_N:=5}" "${BENCH_LOGIN_N:=6}" "${BENCH_TOTP_N:=3}" "${BENCH_PASSKEY_N:=3}" "${BENCH_SNAP_N:=6}" "${BENCH_CONC_N:=1}" "${BENCH_MCP_N:=8}" "${BENCH_JOURNEY_N:=5}" "${BENCH_LOAD_N:=1}" "${BENCH_SOAK_N:=64}"
fi
out_dir=${BENCH_OUT:-docs/bench}
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "bench: the Playwright baseline needs Node.js 20+ and npm" >&2; exit 1
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || { echo "bench: the Playwright baseline needs Node.js 20+, found $(node --version)" >&2; exit 1; }
for m in playwright-core @playwright/mcp @modelcontextprotocol/sdk; do
  if [ ! -f "scripts/bench/node_modules/$m/package.json" ]; then
    npm ci --prefix scripts/bench --no-audit --no-fund
    break
  fi
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
load1=$(cut -d' ' -f1 /proc/loadavg)
# The commit measured is the one the run starts from (a commit made meanwhile is not it).
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- 2>/dev/null || commit="$commit-dirty"
failed=()
# step PKG BENCH N: one go test -bench run; a failing step is recorded, the others still run.
step() {
  if ! go test -run '^$' -bench "$2" -benchtime "${3}x" -count 1 "$1" 2>&1 | tee -a "$out"; then
    failed+=(-failed "$2")
  fi
}
step ./tests/ '^Benchmark(Release|ReleaseInProcess|BaselineGetSecret|BaselinePinentry)$' "${BENCH_N:-300}"
step ./internal/broker/presence/ 'SecretService(Release|BaselineUnlock)' "${BENCH_SS_N:-100}"
step ./tests/ '^Benchmark(ChallengeIssue|BrokerdIdleRSS)$' "${BENCH_CH_N:-2000}"
step ./tests/ '^BenchmarkBrokerLoad$' "${BENCH_LOAD_N:-3}"
step ./tests/ '^Benchmark(HostStart|HostStartWindow|BareChromiumPipe|SessionCreate|IsolatedCreateClose)$' "${BENCH_HOST_N:-8}"
step ./tests/ '^Benchmark(ProfileClear|BaselineStopStart)$' "${BENCH_HOST_N:-8}"
step ./tests/ '^BenchmarkHostIdleRSS$' "${BENCH_RSS_N:-20}"
step ./tests/ '^Benchmark(AliasLogin|PlaywrightLogin)$' "${BENCH_LOGIN_N:-20}"
step ./tests/ '^BenchmarkTOTPStep$' "${BENCH_TOTP_N:-10}"
step ./tests/ '^BenchmarkPasskeyLogin$' "${BENCH_PASSKEY_N:-10}"
step ./tests/ '^BenchmarkSnapshotScan$' "${BENCH_SNAP_N:-20}"
step ./tests/ '^BenchmarkGuardedLoad$' "${BENCH_SNAP_N:-20}"
step ./tests/ '^Benchmark(Playwright)?ConcurrentLogins32$' "${BENCH_CONC_N:-3}"
step ./tests/ '^BenchmarkMCP$' "${BENCH_MCP_N:-30}"
step ./tests/ '^BenchmarkJourney$' "${BENCH_JOURNEY_N:-20}"
SOAK_SIGNINS=${BENCH_SOAK_N:-500} step ./tests/ '^BenchmarkSoak$' 1
q=()
[ $quick = 1 ] && q=(-quick)
readme=(-readme README.md)
[ -n "${BENCH_OUT:-}" ] && readme=()
BENCH_LOAD1=$load1 BENCH_COMMIT=$commit go run ./scripts/benchreport -in "$out" -out "$out_dir" "${readme[@]}" "${q[@]}" "${failed[@]}"
