//go:build linux

package tests

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/journey"
)

// The journey benchmark (issue 14): a six-action journey with a login through headless
// against the same steps as a Playwright script filling the plaintext password, on the same
// pages of benchSite (loginbench_site_test.go), in the same run; scripts/bench.sh prints the
// ratio of their p50s (goal <= 1.0). Both fail loudly on any error.

// benchJourney is the journey of BenchmarkJourney: the steps of playwright-journey.mjs.
func benchJourney(origin string) []byte {
	plan := jPlan{"journey_id": "bench", "name": "Reserve two units", "origin": origin, "path": "/login",
		"expected_states": []any{map[string]any{"id": "reserved", "expected": "Reserved"}, map[string]any{"id": "stock", "expected": "Stock: 8"}},
		"actions": []any{
			jAction("kind", "login", "state_id", "signed-in", "alias", benchAlias),
			jAction("kind", "navigate", "state_id", "shop", "path", "/shop"),
			jAction("kind", "fill", "state_id", "quantity", "role", "spinbutton", "name", "Quantity", "value", "2"),
			jAction("kind", "click", "state_id", "submitted", "role", "button", "name", "Reserve"),
			jAction("kind", "assert", "state_id", "reserved", "selector", "#status", "assertion", "text", "value", "Reserved"),
			jAction("kind", "assert", "state_id", "stock", "selector", "#stock", "assertion", "text", "value", "Stock: 8"),
		}}
	b, _ := json.Marshal(plan)
	return b
}

// BenchmarkJourney measures, per iteration, one 'headless journey run PLAN --json' (a fresh
// browser context, the login: a challenge, a release through brokerd with the scripted
// pinentry, typing, submit, the outcome verified; the shop, the fill, the click, two
// assertions, the evidence of every state, the context disposed) and one run of the same six
// steps by scripts/bench/playwright-journey.mjs (playwright-core driving Debian Chromium in one
// warm browser, a fresh context per run, the plaintext password filled). The two alternate
// (and swap which goes first every iteration), so both run under the same load: the ratio is
// from one run of the machine, not two. Reports p50-ms and p99-ms (headless), pw-p50-ms and
// pw-p99-ms (Playwright) and ratio-p50. Every journey must pass, every Playwright run must
// finish, and the site must have accepted every sign-in and reservation of both.
func BenchmarkJourney(b *testing.B) {
	e, srv := loginBench(b)
	plan := filepath.Join(b.TempDir(), "bench.json")
	if err := os.WriteFile(plan, benchJourney(srv.URL), 0o600); err != nil {
		b.Fatal(err)
	}
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Dir(filepath.Dir(file))
	script := filepath.Join(repo, "scripts", "bench", "playwright-journey.mjs")
	if _, err := os.Stat(filepath.Join(repo, "scripts", "bench", "node_modules", "playwright-core")); err != nil {
		b.Fatalf("playwright-core is not installed: run npm ci --prefix scripts/bench (scripts/bench.sh does)")
	}
	cmd := exec.Command("node", script, srv.URL, benchAccount, benchPassword)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("playwright: %v", err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	out := bufio.NewScanner(outPipe)
	var ready struct {
		Ready bool `json:"ready"`
	}
	if !out.Scan() || json.Unmarshal(out.Bytes(), &ready) != nil || !ready.Ready {
		b.Fatalf("playwright did not start: %q", out.Text())
	}
	headless := func() time.Duration {
		start := time.Now()
		r := e.run("", "headless", "journey", "run", plan, "--json")
		d := time.Since(start)
		var rep journey.Report
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil || rep.Status != journey.StatusPassed {
			b.Fatalf("journey run: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
		}
		return d
	}
	playwright := func() time.Duration {
		if _, err := io.WriteString(in, "run\n"); err != nil {
			b.Fatalf("playwright: %v", err)
		}
		var res struct {
			MS float64 `json:"ms"`
		}
		if !out.Scan() || json.Unmarshal(out.Bytes(), &res) != nil || res.MS <= 0 {
			b.Fatalf("playwright run failed: %q", out.Text())
		}
		return time.Duration(res.MS * float64(time.Millisecond))
	}
	// One of each first, untimed: both browsers warm, both sites' code paths taken once.
	headless()
	playwright()
	var hs, ps samples
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			hs = append(hs, headless())
			ps = append(ps, playwright())
		} else {
			ps = append(ps, playwright())
			hs = append(hs, headless())
		}
		i++
	}
	runs := int64(len(hs) + len(ps) + 2)
	if got := srv.accepted.Load(); got != runs {
		b.Fatalf("the site accepted %d sign-ins, want %d", got, runs)
	}
	if got := srv.reserved.Load(); got != runs {
		b.Fatalf("the site accepted %d reservations, want %d", got, runs)
	}
	hs.report(b)
	ps.reportAs(b, "pw-")
	b.ReportMetric(hs.p50()/ps.p50(), "ratio-p50")
}
