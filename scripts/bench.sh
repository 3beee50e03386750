#!/usr/bin/env bash
# bench.sh — broker benchmarks in one run, with ratios against baselines from the same run.
# Figures: release latency through brokerd vs (raw GetSecret + the scripted pinentry alone);
# challenge issue throughput with 1, 8 and 64 connections; brokerd idle RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export PATH=/usr/local/go/bin:$PATH HEADLESS_REAL=1
unset DBUS_SESSION_BUS_ADDRESS GNOME_KEYRING_CONTROL DISPLAY WAYLAND_DISPLAY
n=${BENCH_N:-300}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -run '^$' -bench 'Release|Baseline' -benchtime "${n}x" -count 1 ./tests/ | tee "$out"
go test -run '^$' -bench 'ChallengeIssue|BrokerdIdleRSS' -benchtime 2000x -count 1 ./tests/ | tee -a "$out"
go test -run '^$' -bench 'HostStart|BareChromiumPipe|SessionCreate|IsolatedCreateClose' -benchtime "${BENCH_HOST_N:-8}x" -count 1 ./tests/ | tee -a "$out"
go test -run '^$' -bench 'HostIdleRSS' -benchtime 20x -count 1 ./tests/ | tee -a "$out"
awk '
  function metric(line, unit,   i, f) { n = split(line, f, /[ \t]+/); for (i = 2; i <= n; i++) if (f[i] == unit) return f[i-1]; return "" }
  /^BenchmarkRelease/            { r50 = metric($0, "p50-ms"); r99 = metric($0, "p99-ms") }
  /^BenchmarkBaselineGetSecret/  { g50 = metric($0, "p50-ms"); g99 = metric($0, "p99-ms") }
  /^BenchmarkBaselinePinentry/   { p50 = metric($0, "p50-ms"); p99 = metric($0, "p99-ms") }
  /^BenchmarkChallengeIssue/     { split($1, a, "="); sub(/-.*/, "", a[2]); c[a[2]] = metric($0, "challenges/s") }
  /^BenchmarkBrokerdIdleRSS/     { rss = metric($0, "rss-MB") }
  /^BenchmarkHostStart/          { hs50 = metric($0, "p50-ms"); hs99 = metric($0, "p99-ms") }
  /^BenchmarkBareChromiumPipe/   { bc50 = metric($0, "p50-ms"); bc99 = metric($0, "p99-ms") }
  /^BenchmarkSessionCreate/      { sc50 = metric($0, "p50-ms") }
  /^BenchmarkIsolatedCreateClose/ { ic50 = metric($0, "p50-ms") }
  /^BenchmarkHostIdleRSS/        { hrss = metric($0, "rss-MB") }
  END {
    print ""
    print "== release latency (ms): brokerd vs GetSecret + pinentry alone, same run"
    printf "   p50: release %.3f  baseline %.3f + %.3f = %.3f  ratio %.3f  brokerd overhead %.3f ms (goal <= 0.3)\n", r50, g50, p50, g50+p50, r50/(g50+p50), r50-g50-p50
    printf "   p99: release %.3f  baseline %.3f + %.3f = %.3f  ratio %.3f  brokerd overhead %.3f ms (goal <= 1)\n", r99, g99, p99, g99+p99, r99/(g99+p99), r99-g99-p99
    print "== challenge issue throughput (challenges/s)"
    printf "   1 conn %s   8 conns %s (x%.2f)   64 conns %s (x%.2f)\n", c["1"], c["8"], c["8"]/c["1"], c["64"], c["64"]/c["1"]
    printf "== brokerd idle RSS: %s MB (goal <= 12)\n", rss
    print "== browser host"
    printf "   headless start to ready p50 %.0f ms vs bare Chromium over a pipe to getVersion %.0f ms: ratio %.2f (goal <= 1.15)\n", hs50, bc50, hs50/bc50
    printf "   session create p50 %.0f ms; isolated create+close p50 %.0f ms\n", sc50, ic50
    printf "   host idle RSS (without Chromium): %s MB (goal <= 30)\n", hrss
  }' "$out"
