//go:build linux

package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/brokerapi"
)

// mcpBenchServer is one server's figures from scripts/bench/mcp-bench.mjs.
type mcpBenchServer struct {
	NavMS      []float64      `json:"nav_ms"`
	ClickMS    []float64      `json:"click_ms"`
	ClickNavMS []float64      `json:"clicknav_ms"`
	Bytes      map[string]int `json:"bytes"`
	Elements   map[string]int `json:"elements"`
	Tools      int            `json:"tools"`
	ToolsBytes int            `json:"tools_bytes"`
}

// mcpBenchWarmup is the untimed iterations per server before the timed ones.
const mcpBenchWarmup = 2

// BenchmarkMCP is issue 13's benchmark: headless mcp against Playwright MCP, both spawned over
// stdio and driven by one TypeScript client (scripts/bench/mcp-bench.mjs) on the same local
// pages (mcpbench_site_test.go), taking turns iteration by iteration. The world is the real
// one: a private keyring, brokerd with the scripted pinentry, a credential for the site (so
// headless's login page carries its challenge, as an agent's would), the host started.
// Playwright MCP runs Debian Chromium, headless, with an in-memory profile.
//
// Per server (prefix headless- or pw-): nav (navigate to the console page and snapshot it),
// click (an in-page button) and clicknav (a link to another page) as p50/p99 in ms over b.N
// iterations, and the bytes of a snapshot of the login page and of the console page as the
// agent receives them (text content + structuredContent JSON), and of the tool definitions
// (tools/list), which the agent carries all along. scripts/bench.sh prints the ratios
// headless/Playwright. Any error in the run fails the benchmark.
func BenchmarkMCP(b *testing.B) {
	e := newEnv(b, envOptions{})
	node, dir := nodePackage(b, filepath.Join("scripts", "bench"), "@modelcontextprotocol/sdk", "@playwright/mcp")
	program, _ := presencetest.FakePinentry(b, "approve")
	e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"pinentry","program":%q,"timeout_seconds":30}}`, program))
	e.startBrokerd()
	srv := newMCPBenchSite(b)
	c, err := brokerapi.Dial(context.Background(), e.sockPath())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Add(context.Background(), srv.URL, benchAccount, benchAlias, []byte(benchPassword)); err != nil {
		b.Fatal(err)
	}
	c.Close()
	if r := e.run("", "headless", "start", "--json"); r.code != 0 {
		b.Fatalf("start: %+v", r)
	}
	// Playwright's temp profile and output live under the env's root, so the env's cleanup
	// sees any Chromium it left running.
	tmp := filepath.Join(e.root, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		b.Fatal(err)
	}

	n := b.N
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(60+10*n)*time.Second)
	defer cancel()
	args := []string{filepath.Join(dir, "mcp-bench.mjs"), "--headless", filepath.Join(binDir, "headless"),
		"--base", srv.URL, "--n", strconv.Itoa(n), "--warmup", strconv.Itoa(mcpBenchWarmup)}
	if d := os.Getenv("HEADLESS_BENCH_DUMP"); d != "" {
		args = append(args, "--dump", d) // the snapshot results whose sizes are reported
	}
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(append([]string(nil), e.vars...), "TMPDIR="+tmp)
	cmd.Dir = e.root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	b.ResetTimer()
	err = cmd.Run()
	b.StopTimer()
	if err != nil {
		b.Fatalf("mcp-bench.mjs: %v\nstderr %s", err, se.String())
	}
	var res map[string]mcpBenchServer
	if err := json.Unmarshal(bytes.TrimSpace(so.Bytes()), &res); err != nil {
		b.Fatalf("mcp-bench.mjs output %q: %v\nstderr %s", so.String(), err, se.String())
	}
	for who, letter := range map[string]string{"headless": "h", "playwright": "p"} {
		r, ok := res[who]
		if !ok || len(r.NavMS) != n || len(r.ClickMS) != n || len(r.ClickNavMS) != n || r.Bytes["login"] == 0 || r.Bytes["app"] == 0 {
			b.Fatalf("%s: figures %+v, want %d of each", who, r, n)
		}
		// What the site saw: every iteration (and the size pass) loaded the console page, and
		// every clicknav reached a project page.
		if got, want := srv.Count(letter, "/app"), n+mcpBenchWarmup+1; got != want {
			b.Fatalf("%s: the site served /app %d times, want %d", who, got, want)
		}
		if got, want := srv.Count(letter, "/app/project"), n+mcpBenchWarmup; got != want {
			b.Fatalf("%s: the site served a project page %d times, want %d", who, got, want)
		}
		if got := srv.Count(letter, "/login"); got != 1 {
			b.Fatalf("%s: the site served /login %d times, want 1", who, got)
		}
		prefix := map[string]string{"headless": "headless-", "playwright": "pw-"}[who]
		for _, m := range []struct {
			name string
			ms   []float64
		}{{"nav", r.NavMS}, {"click", r.ClickMS}, {"clicknav", r.ClickNavMS}} {
			var s samples
			for _, ms := range m.ms {
				s = append(s, time.Duration(ms*float64(time.Millisecond)))
			}
			s.reportAs(b, prefix+m.name+"-")
		}
		b.ReportMetric(float64(r.Bytes["login"]), prefix+"login-bytes")
		b.ReportMetric(float64(r.Bytes["app"]), prefix+"app-bytes")
		b.ReportMetric(float64(r.Elements["app"]), prefix+"app-elements")
		b.ReportMetric(float64(r.ToolsBytes), prefix+"tools-bytes")
	}
}
