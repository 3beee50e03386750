#!/usr/bin/env bash
# bench.sh — benchmarks in one run, with ratios against baselines from the same run.
# Figures: release latency through brokerd vs (raw GetSecret + the scripted pinentry alone);
# the secret-service presence window vs a bare unlock, read and lock;
# challenge issue throughput with 1, 8 and 64 connections; brokerd idle RSS; the browser host;
# alias login (visit → auth login → verified) vs Playwright typing the plaintext password into
# the same page; 32 concurrent alias logins across 32 sessions (8 isolated); headless mcp vs
# Playwright MCP driven by one MCP client (navigate + snapshot, click, snapshot bytes); a
# six-action journey with a login (headless journey run) vs the same steps as a Playwright
# script filling the plaintext password, interleaved run by run.
# The Playwright baselines need Node.js 20+ and npm; playwright-core, @playwright/mcp and the MCP
# SDK (pinned in scripts/bench/package.json and its lockfile) are installed into
# scripts/bench/node_modules when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export PATH=/usr/local/go/bin:$PATH HEADLESS_REAL=1
unset DBUS_SESSION_BUS_ADDRESS GNOME_KEYRING_CONTROL DISPLAY WAYLAND_DISPLAY
n=${BENCH_N:-300}
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
go test -run '^$' -bench 'Release|Baseline' -benchtime "${n}x" -count 1 ./tests/ | tee "$out"
go test -run '^$' -bench 'SecretService(Release|BaselineUnlock)' -benchtime "${BENCH_SS_N:-100}x" -count 1 ./internal/presence/ | tee -a "$out"
go test -run '^$' -bench 'ChallengeIssue|BrokerdIdleRSS' -benchtime 2000x -count 1 ./tests/ | tee -a "$out"
go test -run '^$' -bench 'HostStart|BareChromiumPipe|SessionCreate|IsolatedCreateClose' -benchtime "${BENCH_HOST_N:-8}x" -count 1 ./tests/ | tee -a "$out"
go test -run '^$' -bench 'ProfileClear|BaselineStopStart' -benchtime "${BENCH_HOST_N:-8}x" -count 1 ./tests/ | tee -a "$out"
go test -run '^$' -bench 'HostIdleRSS' -benchtime 20x -count 1 ./tests/ | tee -a "$out"
go test -run '^$' -bench 'AliasLogin|PlaywrightLogin' -benchtime "${BENCH_LOGIN_N:-20}x" -count 1 ./tests/ | tee -a "$out"
go test -run '^$' -bench 'ConcurrentLogins32' -benchtime "${BENCH_CONC_N:-3}x" -count 1 ./tests/ | tee -a "$out"
go test -run '^$' -bench '^BenchmarkMCP$' -benchtime "${BENCH_MCP_N:-30}x" -count 1 ./tests/ | tee -a "$out"
go test -run '^$' -bench '^BenchmarkJourney$' -benchtime "${BENCH_JOURNEY_N:-20}x" -count 1 ./tests/ | tee -a "$out"
awk '
  function metric(line, unit,   i, f) { n = split(line, f, /[ \t]+/); for (i = 2; i <= n; i++) if (f[i] == unit) return f[i-1]; return "" }
  /^BenchmarkRelease-/           { r50 = metric($0, "p50-ms"); r99 = metric($0, "p99-ms") }
  /^BenchmarkReleaseInProcess/   { i50 = metric($0, "p50-ms"); i99 = metric($0, "p99-ms") }
  /^BenchmarkBaselineGetSecret/  { g50 = metric($0, "p50-ms"); g99 = metric($0, "p99-ms") }
  /^BenchmarkBaselinePinentry/   { p50 = metric($0, "p50-ms"); p99 = metric($0, "p99-ms") }
  /^BenchmarkSecretServiceRelease/ { s50 = metric($0, "p50-ms"); s99 = metric($0, "p99-ms") }
  /^BenchmarkSecretServiceBaselineUnlock/ { u50 = metric($0, "p50-ms"); u99 = metric($0, "p99-ms") }
  /^BenchmarkChallengeIssue/     { split($1, a, "="); sub(/-.*/, "", a[2]); c[a[2]] = metric($0, "challenges/s") }
  /^BenchmarkBrokerdIdleRSS/     { rss = metric($0, "rss-MB") }
  /^BenchmarkHostStart/          { hs50 = metric($0, "p50-ms"); hs99 = metric($0, "p99-ms") }
  /^BenchmarkBareChromiumPipe/   { bc50 = metric($0, "p50-ms"); bc99 = metric($0, "p99-ms") }
  /^BenchmarkSessionCreate/      { sc50 = metric($0, "p50-ms") }
  /^BenchmarkIsolatedCreateClose/ { ic50 = metric($0, "p50-ms") }
  /^BenchmarkProfileClear/       { pc50 = metric($0, "p50-ms") }
  /^BenchmarkBaselineStopStart/  { ss50 = metric($0, "p50-ms") }
  /^BenchmarkHostIdleRSS/        { hrss = metric($0, "rss-MB") }
  /^BenchmarkAliasLogin/         { al50 = metric($0, "p50-ms"); al99 = metric($0, "p99-ms") }
  /^BenchmarkPlaywrightLogin/    { pl50 = metric($0, "p50-ms"); pl99 = metric($0, "p99-ms") }
  /^BenchmarkConcurrentLogins32/ { ce = metric($0, "errors"); c50 = metric($0, "p50-ms"); c99 = metric($0, "p99-ms"); cr = metric($0, "round-ms") }
  /^BenchmarkJourney-/           { j50 = metric($0, "p50-ms"); j99 = metric($0, "p99-ms"); jp50 = metric($0, "pw-p50-ms"); jp99 = metric($0, "pw-p99-ms") }
  /^BenchmarkMCP-/               { for (k = 0; k < 2; k++) { s = k ? "pw-" : "headless-"
                                     for (j = 1; j <= 3; j++) { op = j == 1 ? "nav" : j == 2 ? "click" : "clicknav"
                                       m50[s op] = metric($0, s op "-p50-ms"); m99[s op] = metric($0, s op "-p99-ms") }
                                     mb[s "login"] = metric($0, s "login-bytes"); mb[s "app"] = metric($0, s "app-bytes"); mb[s "tools"] = metric($0, s "tools-bytes") } }
  END {
    print ""
    print "== release latency (ms): brokerd vs GetSecret + pinentry alone, same run"
    printf "   p50: release %.3f  baseline %.3f + %.3f = %.3f  ratio %.3f  brokerd overhead %.3f ms (goal <= 0.3)\n", r50, g50, p50, g50+p50, r50/(g50+p50), r50-g50-p50
    printf "   p99: release %.3f  baseline %.3f + %.3f = %.3f  ratio %.3f  brokerd overhead %.3f ms (goal <= 1)\n", r99, g99, p99, g99+p99, r99/(g99+p99), r99-g99-p99
    print "== brokerd own overhead: in-process server, real socket and Secret Service, presence answered at once, vs GetSecret"
    printf "   p50: release %.3f  GetSecret %.3f  overhead %.3f ms (goal <= 0.3)\n", i50, g50, i50-g50
    printf "   p99: release %.3f  GetSecret %.3f  overhead %.3f ms (goal <= 1)\n", i99, g99, i99-g99
    print "== secret-service presence window vs bare unlock + read + lock, both through the scripted keyring prompter"
    printf "   p50: window %.3f  bare %.3f  ratio %.3f   p99: window %.3f  bare %.3f  ratio %.3f\n", s50, u50, s50/u50, s99, u99, s99/u99
    print "== challenge issue throughput (challenges/s)"
    printf "   1 conn %s   8 conns %s (x%.2f)   64 conns %s (x%.2f)\n", c["1"], c["8"], c["8"]/c["1"], c["64"], c["64"]/c["1"]
    printf "== brokerd idle RSS: %s MB (goal <= 12)\n", rss
    print "== browser host"
    printf "   headless start to ready p50 %.0f ms vs bare Chromium over a pipe to getVersion %.0f ms: ratio %.2f (goal <= 1.15)\n", hs50, bc50, hs50/bc50
    printf "   session create p50 %.0f ms; isolated create+close p50 %.0f ms\n", sc50, ic50
    printf "   profile clear p50 %.0f ms vs stop + start %.0f ms: ratio %.2f\n", pc50, ss50, pc50/ss50
    printf "   host idle RSS (without Chromium): %s MB (goal <= 30)\n", hrss
    print "== alias login (visit -> auth login -> verified) vs Playwright filling the plaintext password, same site"
    printf "   p50: alias login %.0f ms  Playwright %.0f ms  ratio %.2f (goal <= 1.3)\n", al50, pl50, al50/pl50
    printf "   p99: alias login %.0f ms  Playwright %.0f ms  ratio %.2f\n", al99, pl99, al99/pl99
    print "== 32 concurrent alias logins (32 sessions, 8 isolated; one presence prompt at a time)"
    printf "   errors %s (goal 0)  p50 %.0f ms  p99 %.0f ms  a round of 32 %.0f ms\n", ce, c50, c99, cr
    print "== headless mcp vs Playwright MCP, one MCP client over stdio, same pages (ms; ratio headless/Playwright)"
    split("nav click clicknav", ops, " ")
    label["nav"] = "navigate + snapshot (goal <= 1.0)"; label["click"] = "click, in-page (goal <= 1.0)"; label["clicknav"] = "click, navigating link"
    for (j = 1; j <= 3; j++) { op = ops[j]
      printf "   %-34s p50 %.0f vs %.0f  ratio %.2f   p99 %.0f vs %.0f  ratio %.2f\n", label[op], m50["headless-" op], m50["pw-" op], m50["headless-" op]/m50["pw-" op], m99["headless-" op], m99["pw-" op], m99["headless-" op]/m99["pw-" op] }
    printf "   snapshot bytes (text + structuredContent): console page %d vs %d  ratio %.2f (goal <= 0.7)   login page %d vs %d  ratio %.2f\n", mb["headless-app"], mb["pw-app"], mb["headless-app"]/mb["pw-app"], mb["headless-login"], mb["pw-login"], mb["headless-login"]/mb["pw-login"]
    printf "   tool definitions (tools/list) bytes: %d vs %d  ratio %.2f\n", mb["headless-tools"], mb["pw-tools"], mb["headless-tools"]/mb["pw-tools"]
    print "== a six-action journey with a login (headless journey run, fresh context) vs the same steps in Playwright (fresh context, plaintext fill), interleaved"
    printf "   p50: journey %.0f ms  Playwright %.0f ms  ratio %.2f (goal <= 1.0)\n", j50, jp50, j50/jp50
    printf "   p99: journey %.0f ms  Playwright %.0f ms  ratio %.2f\n", j99, jp99, j99/jp99
  }' "$out"
