// Command benchreport turns the output of scripts/bench.sh's go test -bench runs into
// bench.json (figures, baselines, ratios, commit, machine, date), bench.md (a Markdown table)
// and bench.svg (a bar chart of the ratios), and fails loudly: it exits 1, naming each
// problem, when a benchmark failed, a figure is missing, or any "errors" metric is above 0.
//
//	go run ./scripts/benchreport -in BENCH_OUTPUT -out DIR [-readme README.md] [-quick] [-failed STEP]...
//
// With -readme, the text between <!-- bench:begin --> and <!-- bench:end --> in that file is
// replaced by the table and a link to the chart.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "", "the concatenated go test -bench output")
	out := fs.String("out", "", "directory for bench.json, bench.md and bench.svg")
	readme := fs.String("readme", "", "a Markdown file whose bench:begin/bench:end block is replaced")
	quick := fs.Bool("quick", false, "the run was scripts/bench.sh --quick")
	var failed multiFlag
	fs.Var(&failed, "failed", "a bench step that exited non-zero (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *in == "" || *out == "" {
		fmt.Fprintln(stderr, "benchreport: -in and -out are required")
		return 2
	}
	f, err := os.Open(*in)
	if err != nil {
		fmt.Fprintf(stderr, "benchreport: %v\n", err)
		return 1
	}
	res, err := Parse(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "benchreport: %v\n", err)
		return 1
	}
	rep := Build(res, *quick)
	for _, s := range failed {
		rep.Problems = append(rep.Problems, "bench step failed: "+s)
	}
	rep.Commit = gitCommit()
	rep.Machine = machine()
	rep.Date = time.Now().UTC().Format(time.RFC3339)
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "benchreport: %v\n", err)
		return 1
	}
	js, _ := json.MarshalIndent(rep, "", "  ")
	md := Markdown(rep)
	files := map[string][]byte{"bench.json": append(js, '\n'), "bench.md": []byte(md), "bench.svg": []byte(SVG(rep))}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(*out, name), b, 0o644); err != nil {
			fmt.Fprintf(stderr, "benchreport: %v\n", err)
			return 1
		}
	}
	io.WriteString(stdout, "\n"+md)
	fmt.Fprintf(stdout, "\nwrote %s/bench.json, bench.md, bench.svg\n", *out)
	if len(rep.Problems) > 0 {
		fmt.Fprintf(stderr, "\nbench: FAILED (%d problems):\n", len(rep.Problems))
		for _, p := range rep.Problems {
			fmt.Fprintf(stderr, "  - %s\n", p)
		}
		fmt.Fprintln(stderr, "bench: the figures above are not a valid result; README not updated")
		return 1
	}
	if *readme != "" {
		if err := updateReadme(*readme, filepath.Join(*out, "bench.svg"), md); err != nil {
			fmt.Fprintf(stderr, "benchreport: %v\n", err)
			return 1
		}
	}
	return 0
}

// Results maps a benchmark's name (without the -GOMAXPROCS suffix) to its metrics by unit.
// Failed lists the benchmarks go test reported as failed; KeyringDied, how each test keyring
// that died under a benchmark ended (scripts/with-secret-service.sh says so).
type Results struct {
	Metrics     map[string]map[string]float64
	Failed      []string
	KeyringDied []string
}

// keyringDied begins the line with-secret-service.sh prints for a keyring daemon that died
// during the run.
const keyringDied = "wss: gnome-keyring-daemon "

var procSuffix = regexp.MustCompile(`-\d+$`)

// Parse reads go test -bench output: "BenchmarkX-2  N  v1 unit1  v2 unit2 ..." lines and
// "--- FAIL: BenchmarkX" lines, and the keyring harness's word of a keyring daemon that died;
// everything else is ignored.
func Parse(r io.Reader) (Results, error) {
	res := Results{Metrics: map[string]map[string]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, keyringDied) && strings.Contains(line, " died during the run: ") {
			res.KeyringDied = append(res.KeyringDied, strings.TrimSuffix(strings.TrimPrefix(line, "wss: "), "; its output:"))
			continue
		}
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "--- FAIL: "); ok {
			name, _, _ := strings.Cut(rest, " ")
			res.Failed = append(res.Failed, name)
			continue
		}
		if !strings.HasPrefix(line, "Benchmark") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue // a name printed before its result, or a log line
		}
		name := procSuffix.ReplaceAllString(f[0], "")
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return res, fmt.Errorf("benchmark %s: metric %q: %w", name, f[i], err)
			}
			m[f[i+1]] = v
		}
		res.Metrics[name] = m
	}
	return res, sc.Err()
}

// Figure is one measured figure, with its baseline from the same run when it has one.
type Figure struct {
	ID            string   `json:"id"`
	Label         string   `json:"label"`
	Unit          string   `json:"unit"`
	Value         float64  `json:"value"`
	Baseline      *float64 `json:"baseline,omitempty"`
	BaselineLabel string   `json:"baseline_label,omitempty"`
	// Ratio is Value/Baseline; for throughputs and sizes the direction is stated in Better.
	Ratio *float64 `json:"ratio,omitempty"`
	// Better is "lower" or "higher" (for the ratio, else for the value).
	Better string `json:"better"`
	// Goal is the goal, as a bound on Ratio (GoalRatio: at most, or at least when
	// Better is "higher") or on Value (GoalValue: at most).
	GoalRatio *float64 `json:"goal_ratio,omitempty"`
	GoalValue *float64 `json:"goal_value,omitempty"`
	Met       *bool    `json:"goal_met,omitempty"`
}

// Report is bench.json.
type Report struct {
	Quick    bool                          `json:"quick"`
	Commit   string                        `json:"commit"`
	Machine  Machine                       `json:"machine"`
	Date     string                        `json:"date"`
	Figures  []Figure                      `json:"figures"`
	Raw      map[string]map[string]float64 `json:"raw"`
	Problems []string                      `json:"problems"`
}

// Machine is where the run happened: figures only compare within one run.
type Machine struct {
	OS       string  `json:"os"`
	Arch     string  `json:"arch"`
	CPUs     int     `json:"cpus"`
	CPU      string  `json:"cpu,omitempty"`
	Kernel   string  `json:"kernel,omitempty"`
	Load1    float64 `json:"load1"`
	Chromium string  `json:"chromium,omitempty"`
}

func fp(v float64) *float64 { return &v }

type spec struct {
	id, label, unit, better string
	bench, metric           string
	// baseline: sum of these (bench, metric) pairs; none for a value-only figure
	base      [][2]string
	baseLabel string
	goalRatio float64 // a bound on the ratio: at most, or at least when better is "higher"
	goalValue float64
	// diff: the figure is value minus baseline (an overhead), bounded by goalValue
	diff bool
}

var specs = []spec{
	{id: "release_p50", label: "release through brokerd, p50", unit: "ms", better: "lower", bench: "BenchmarkRelease", metric: "p50-ms",
		base: [][2]string{{"BenchmarkBaselineGetSecret", "p50-ms"}, {"BenchmarkBaselinePinentry", "p50-ms"}}, baseLabel: "GetSecret + pinentry alone"},
	{id: "release_p99", label: "release through brokerd, p99", unit: "ms", better: "lower", bench: "BenchmarkRelease", metric: "p99-ms",
		base: [][2]string{{"BenchmarkBaselineGetSecret", "p99-ms"}, {"BenchmarkBaselinePinentry", "p99-ms"}}, baseLabel: "GetSecret + pinentry alone"},
	{id: "release_overhead_p50", label: "brokerd overhead per release, p50", unit: "ms", better: "lower", bench: "BenchmarkRelease", metric: "p50-ms",
		base: [][2]string{{"BenchmarkBaselineGetSecret", "p50-ms"}, {"BenchmarkBaselinePinentry", "p50-ms"}}, baseLabel: "GetSecret + pinentry alone", diff: true, goalValue: 0.3},
	{id: "release_overhead_p99", label: "brokerd overhead per release, p99", unit: "ms", better: "lower", bench: "BenchmarkRelease", metric: "p99-ms",
		base: [][2]string{{"BenchmarkBaselineGetSecret", "p99-ms"}, {"BenchmarkBaselinePinentry", "p99-ms"}}, baseLabel: "GetSecret + pinentry alone", diff: true, goalValue: 1},
	{id: "release_inprocess_p50", label: "brokerd's own release path, p50", unit: "ms", better: "lower", bench: "BenchmarkReleaseInProcess", metric: "p50-ms",
		base: [][2]string{{"BenchmarkBaselineGetSecret", "p50-ms"}}, baseLabel: "GetSecret"},
	{id: "secret_service_window_p50", label: "secret-service presence window, p50", unit: "ms", better: "lower", bench: "BenchmarkSecretServiceRelease", metric: "p50-ms",
		base: [][2]string{{"BenchmarkSecretServiceBaselineUnlock", "p50-ms"}}, baseLabel: "bare unlock + read + lock"},
	{id: "challenges_8", label: "challenge throughput, 8 connections", unit: "challenges/s", better: "higher", bench: "BenchmarkChallengeIssue/conns=8", metric: "challenges/s",
		base: [][2]string{{"BenchmarkChallengeIssue/conns=1", "challenges/s"}}, baseLabel: "1 connection"},
	{id: "challenges_64", label: "challenge throughput, 64 connections", unit: "challenges/s", better: "higher", bench: "BenchmarkChallengeIssue/conns=64", metric: "challenges/s",
		base: [][2]string{{"BenchmarkChallengeIssue/conns=1", "challenges/s"}}, baseLabel: "1 connection"},
	{id: "load64_p50", label: "10,000 broker requests over 64 connections, p50", unit: "ms", better: "lower", bench: "BenchmarkBrokerLoad", metric: "p50-ms",
		base: [][2]string{{"BenchmarkBrokerLoad", "1conn-p50-ms"}}, baseLabel: "the same 10,000 over 1 connection, interleaved"},
	{id: "load64_p99", label: "10,000 broker requests over 64 connections, p99", unit: "ms", better: "lower", bench: "BenchmarkBrokerLoad", metric: "p99-ms",
		base: [][2]string{{"BenchmarkBrokerLoad", "1conn-p99-ms"}}, baseLabel: "the same 10,000 over 1 connection, interleaved", goalRatio: 3},
	{id: "load64_throughput", label: "10,000 broker requests over 64 connections, throughput", unit: "requests/s", better: "higher", bench: "BenchmarkBrokerLoad", metric: "requests/s",
		base: [][2]string{{"BenchmarkBrokerLoad", "1conn-requests/s"}}, baseLabel: "the same 10,000 over 1 connection, interleaved", goalRatio: 2},
	{id: "host_start_p50", label: "headless start to ready, p50", unit: "ms", better: "lower", bench: "BenchmarkHostStart", metric: "p50-ms",
		base: [][2]string{{"BenchmarkHostStart", "bare-p50-ms"}}, baseLabel: "bare Chromium over a pipe to getVersion, same iterations", goalRatio: 1.10},
	{id: "host_start_window_p50", label: "headless start --window to ready, p50", unit: "ms", better: "lower", bench: "BenchmarkHostStartWindow", metric: "p50-ms",
		base: [][2]string{{"BenchmarkHostStartWindow", "bare-p50-ms"}}, baseLabel: "bare Chromium with a window on the same X display, same iterations", goalRatio: 1.10},
	{id: "profile_clear_p50", label: "profile clear, p50", unit: "ms", better: "lower", bench: "BenchmarkProfileClear", metric: "p50-ms",
		base: [][2]string{{"BenchmarkBaselineStopStart", "p50-ms"}}, baseLabel: "stop + start"},
	{id: "alias_login_p50", label: "alias login, p50", unit: "ms", better: "lower", bench: "BenchmarkAliasLogin", metric: "p50-ms",
		base: [][2]string{{"BenchmarkPlaywrightLogin", "p50-ms"}}, baseLabel: "Playwright typing the plaintext password", goalRatio: 0.7},
	{id: "totp_step_p50", label: "a TOTP code step added to a sign-in, p50", unit: "ms", better: "lower", bench: "BenchmarkTOTPStep", metric: "with-p50-ms",
		base: [][2]string{{"BenchmarkTOTPStep", "without-p50-ms"}}, baseLabel: "the same site's password-only sign-in, interleaved", diff: true, goalValue: 200},
	{id: "passkey_login_p50", label: "passkey sign-in by alias, p50", unit: "ms", better: "lower", bench: "BenchmarkPasskeyLogin", metric: "passkey-p50-ms",
		base: [][2]string{{"BenchmarkPasskeyLogin", "password-p50-ms"}}, baseLabel: "the same site's password sign-in by alias, interleaved"},
	{id: "alias_login_p99", label: "alias login, p99", unit: "ms", better: "lower", bench: "BenchmarkAliasLogin", metric: "p99-ms",
		base: [][2]string{{"BenchmarkPlaywrightLogin", "p99-ms"}}, baseLabel: "Playwright typing the plaintext password"},
	{id: "concurrent32_p50", label: "32 concurrent alias logins (8 isolated), p50", unit: "ms", better: "lower", bench: "BenchmarkConcurrentLogins32", metric: "p50-ms",
		base: [][2]string{{"BenchmarkPlaywrightConcurrentLogins32", "p50-ms"}}, baseLabel: "32 concurrent Playwright logins, 32 contexts", goalRatio: 1.0},
	{id: "concurrent32_p99", label: "32 concurrent alias logins (8 isolated), p99", unit: "ms", better: "lower", bench: "BenchmarkConcurrentLogins32", metric: "p99-ms",
		base: [][2]string{{"BenchmarkPlaywrightConcurrentLogins32", "p99-ms"}}, baseLabel: "32 concurrent Playwright logins, 32 contexts"},
	{id: "concurrent32_round", label: "a round of 32 concurrent logins", unit: "ms", better: "lower", bench: "BenchmarkConcurrentLogins32", metric: "round-ms",
		base: [][2]string{{"BenchmarkPlaywrightConcurrentLogins32", "round-ms"}}, baseLabel: "32 concurrent Playwright logins, 32 contexts", goalRatio: 1.0},
	{id: "mcp_nav_p50", label: "MCP navigate + snapshot, p50", unit: "ms", better: "lower", bench: "BenchmarkMCP", metric: "headless-nav-p50-ms",
		base: [][2]string{{"BenchmarkMCP", "pw-nav-p50-ms"}}, baseLabel: "Playwright MCP", goalRatio: 1.0},
	{id: "mcp_click_p50", label: "MCP click (in-page), p50", unit: "ms", better: "lower", bench: "BenchmarkMCP", metric: "headless-click-p50-ms",
		base: [][2]string{{"BenchmarkMCP", "pw-click-p50-ms"}}, baseLabel: "Playwright MCP", goalRatio: 0.35},
	{id: "mcp_clicknav_p50", label: "MCP click (navigating link), p50", unit: "ms", better: "lower", bench: "BenchmarkMCP", metric: "headless-clicknav-p50-ms",
		base: [][2]string{{"BenchmarkMCP", "pw-clicknav-p50-ms"}}, baseLabel: "Playwright MCP"},
	{id: "mcp_snapshot_bytes", label: "MCP snapshot bytes, console page", unit: "bytes", better: "lower", bench: "BenchmarkMCP", metric: "headless-app-bytes",
		base: [][2]string{{"BenchmarkMCP", "pw-app-bytes"}}, baseLabel: "Playwright MCP", goalRatio: 0.7},
	{id: "journey_p50", label: "6-action journey with a login, p50", unit: "ms", better: "lower", bench: "BenchmarkJourney", metric: "p50-ms",
		base: [][2]string{{"BenchmarkJourney", "pw-p50-ms"}}, baseLabel: "Playwright script (plaintext fill)", goalRatio: 0.85},
	{id: "mcp_tools_bytes", label: "MCP tool definitions bytes", unit: "bytes", better: "lower", bench: "BenchmarkMCP", metric: "headless-tools-bytes",
		base: [][2]string{{"BenchmarkMCP", "pw-tools-bytes"}}, baseLabel: "Playwright MCP", goalRatio: 1.0},
	{id: "guarded_load_p50", label: "a page load of 60 requests after a sign-in (the network guard holds and checks each), p50", unit: "ms", better: "lower", bench: "BenchmarkGuardedLoad", metric: "guarded-p50-ms",
		base: [][2]string{{"BenchmarkGuardedLoad", "clean-p50-ms"}}, baseLabel: "the same page load before any sign-in (nothing held)", goalRatio: 1.1},
	{id: "snapshot_scan_p50", label: "snapshot of a 2,000-element page after a sign-in (echo scan), p50", unit: "ms", better: "lower", bench: "BenchmarkSnapshotScan", metric: "released-p50-ms",
		base: [][2]string{{"BenchmarkSnapshotScan", "clean-p50-ms"}}, baseLabel: "the same snapshot before any sign-in (nothing to scan for)", goalRatio: 1.1},
	{id: "soak_status_p99", label: "soak: status p99 during 500 sign-ins in 16 sessions with hostile pages", unit: "ms", better: "lower", bench: "BenchmarkSoak", metric: "status-p99-ms",
		base: [][2]string{{"BenchmarkSoak", "status-idle-p99-ms"}}, baseLabel: "status p99 before the soak, the same sessions open"},
	{id: "soak_signin_p50", label: "soak: one sign-in (visit + auth login) among 16 sessions, p50", unit: "ms", better: "lower", bench: "BenchmarkSoak", metric: "signin-p50-ms"},
	{id: "soak_brokerd_rss", label: "soak: brokerd RSS at the end", unit: "MB", better: "lower", bench: "BenchmarkSoak", metric: "brokerd-end-MB",
		base: [][2]string{{"BenchmarkSoak", "brokerd-start-MB"}}, baseLabel: "at the start", goalRatio: 1.5},
	{id: "soak_host_rss", label: "soak: host RSS at the end", unit: "MB", better: "lower", bench: "BenchmarkSoak", metric: "host-end-MB",
		base: [][2]string{{"BenchmarkSoak", "host-start-MB"}}, baseLabel: "at the start", goalRatio: 1.5},
	{id: "soak_chromium_pss", label: "soak: Chromium's processes' PSS at the end", unit: "MB", better: "lower", bench: "BenchmarkSoak", metric: "chromium-end-MB",
		base: [][2]string{{"BenchmarkSoak", "chromium-start-MB"}}, baseLabel: "at the start", goalRatio: 1.5},
	{id: "soak_brokerd_fds", label: "soak: brokerd open descriptors at the end", unit: "fds", better: "lower", bench: "BenchmarkSoak", metric: "brokerd-end-fds",
		base: [][2]string{{"BenchmarkSoak", "brokerd-start-fds"}}, baseLabel: "at the start", goalRatio: 1.1},
	{id: "soak_host_fds", label: "soak: host open descriptors at the end", unit: "fds", better: "lower", bench: "BenchmarkSoak", metric: "host-end-fds",
		base: [][2]string{{"BenchmarkSoak", "host-start-fds"}}, baseLabel: "at the start", goalRatio: 1.1},
	{id: "soak_chromium_fds", label: "soak: Chromium's open descriptors at the end", unit: "fds", better: "lower", bench: "BenchmarkSoak", metric: "chromium-end-fds",
		base: [][2]string{{"BenchmarkSoak", "chromium-start-fds"}}, baseLabel: "at the start", goalRatio: 1.2},
	{id: "session_create_p50", label: "session create, p50", unit: "ms", better: "lower", bench: "BenchmarkSessionCreate", metric: "p50-ms"},
	{id: "isolated_create_close_p50", label: "isolated session create + close, p50", unit: "ms", better: "lower", bench: "BenchmarkIsolatedCreateClose", metric: "p50-ms"},
	{id: "brokerd_idle_rss", label: "brokerd idle RSS", unit: "MB", better: "lower", bench: "BenchmarkBrokerdIdleRSS", metric: "rss-MB", goalValue: 12},
	{id: "host_idle_rss", label: "host idle RSS (without Chromium)", unit: "MB", better: "lower", bench: "BenchmarkHostIdleRSS", metric: "rss-MB", goalValue: 30},
}

// Build computes the figures, and lists as problems every failed benchmark, every missing
// figure and every "errors" metric above 0.
func Build(res Results, quick bool) Report {
	rep := Report{Quick: quick, Raw: res.Metrics, Problems: []string{}}
	for _, name := range res.Failed {
		rep.Problems = append(rep.Problems, "benchmark failed: "+name)
	}
	for _, how := range res.KeyringDied {
		rep.Problems = append(rep.Problems, "the test keyring died under a benchmark: "+how+" (its output is in the run's log)")
	}
	for name, m := range res.Metrics {
		for unit, v := range m {
			if (unit == "errors" || strings.HasSuffix(unit, "-errors")) && v > 0 {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s reported %s %g (must be 0)", name, unit, v))
			}
		}
	}
	get := func(bench, metric string) (float64, bool) {
		v, ok := res.Metrics[bench][metric]
		return v, ok && !math.IsNaN(v)
	}
	for _, s := range specs {
		v, ok := get(s.bench, s.metric)
		if !ok {
			rep.Problems = append(rep.Problems, fmt.Sprintf("figure %s: no %s from %s", s.id, s.metric, s.bench))
			continue
		}
		fig := Figure{ID: s.id, Label: s.label, Unit: s.unit, Value: v, Better: s.better}
		if len(s.base) > 0 {
			var sum float64
			missing := false
			for _, b := range s.base {
				bv, ok := get(b[0], b[1])
				if !ok {
					missing = true
					rep.Problems = append(rep.Problems, fmt.Sprintf("figure %s: baseline %s from %s is missing", s.id, b[1], b[0]))
				}
				sum += bv
			}
			if missing {
				continue
			}
			fig.Baseline, fig.BaselineLabel = fp(sum), s.baseLabel
			if s.diff {
				fig.Value = v - sum
			} else if sum > 0 {
				fig.Ratio = fp(v / sum)
			}
		}
		if s.goalRatio > 0 && fig.Ratio != nil {
			fig.GoalRatio = fp(s.goalRatio)
			met := *fig.Ratio <= s.goalRatio
			if s.better == "higher" {
				met = *fig.Ratio >= s.goalRatio
			}
			fig.Met = &met
		}
		if s.goalValue > 0 {
			fig.GoalValue = fp(s.goalValue)
			met := fig.Value <= s.goalValue // the overhead, for a diff figure
			fig.Met = &met
		}
		rep.Figures = append(rep.Figures, fig)
	}
	return rep
}

func num(v float64) string {
	switch {
	case v >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

// Markdown is the table of the figures.
func Markdown(rep Report) string {
	var b strings.Builder
	kind := "full run"
	if rep.Quick {
		kind = "quick run (--quick: fewer iterations)"
	}
	commit := rep.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	fmt.Fprintf(&b, "Benchmarks, %s: commit `%s`, %s, %s/%s, %d CPUs (%s), load %.2f at start; baselines measured in the same run.\n\n",
		kind, commit, rep.Date, rep.Machine.OS, rep.Machine.Arch, rep.Machine.CPUs, rep.Machine.CPU, rep.Machine.Load1)
	b.WriteString("| figure | headless | baseline (same run) | ratio | goal |\n|---|---:|---|---:|---|\n")
	for _, f := range rep.Figures {
		base, ratio := "—", "—"
		if f.Baseline != nil {
			base = fmt.Sprintf("%s %s (%s)", num(*f.Baseline), f.Unit, f.BaselineLabel)
		}
		if f.Ratio != nil {
			ratio = fmt.Sprintf("%.2f×", *f.Ratio)
			if f.Better == "higher" {
				ratio += " (higher is better)"
			}
		}
		goal := ""
		switch {
		case f.GoalRatio != nil && f.Better == "higher":
			goal = fmt.Sprintf("≥ %.2f×", *f.GoalRatio)
		case f.GoalRatio != nil:
			goal = fmt.Sprintf("≤ %.2f×", *f.GoalRatio)
		case f.GoalValue != nil:
			goal = fmt.Sprintf("≤ %s %s", num(*f.GoalValue), f.Unit)
		}
		if f.Met != nil {
			if *f.Met {
				goal += " met"
			} else {
				goal += " **not met**"
			}
		}
		fmt.Fprintf(&b, "| %s | %s %s | %s | %s | %s |\n", f.Label, num(f.Value), f.Unit, base, ratio, goal)
	}
	if len(rep.Problems) > 0 {
		b.WriteString("\n**FAILED:**\n\n")
		for _, p := range rep.Problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	return b.String()
}

// SVG is a horizontal bar chart of every figure that has a ratio, with a line at 1.0× and a
// tick at the goal.
func SVG(rep Report) string {
	var rows []Figure
	maxR := 1.5
	for _, f := range rep.Figures {
		if f.Ratio != nil {
			rows = append(rows, f)
			maxR = math.Max(maxR, *f.Ratio)
		}
	}
	maxR = math.Ceil(maxR*2) / 2
	const left, barW, rowH, top = 330, 420, 22, 40
	width := left + barW + 70
	height := top + rowH*len(rows) + 40
	x := func(r float64) float64 { return left + r/maxR*barW }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	commit := rep.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	title := fmt.Sprintf("headless / baseline, same run (commit %s, %s)", commit, rep.Date)
	if rep.Quick {
		title += ", --quick"
	}
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	for i, f := range rows {
		y := top + i*rowH
		r := *f.Ratio
		color := "#4a7bd0"
		if f.Better == "higher" {
			color = "#4aa05a"
		}
		if f.Met != nil && !*f.Met {
			color = "#d0584a"
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-8, y+15, html.EscapeString(f.Label))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", left, y+4, x(r)-left, rowH-8, color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%.2f×</text>`+"\n", x(r)+4, y+15, r)
		if f.GoalRatio != nil {
			gx := x(*f.GoalRatio)
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#000" stroke-width="2"/>`+"\n", gx, gx, y+1, y+rowH-1)
		}
	}
	bottom := top + rowH*len(rows)
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#888" stroke-dasharray="4 3"/>`+"\n", x(1), x(1), top, bottom)
	for t := 0.0; t <= maxR+1e-9; t += 0.5 {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%.1f×</text>`+"\n", x(t), bottom+16, t)
	}
	fmt.Fprintf(&b, `<text x="10" y="%d" fill="#555">bars: ratio to the baseline (blue lower is better, green higher is better, red misses its goal); black tick: goal; dashed: 1.0×</text>`+"\n", bottom+34)
	b.WriteString("</svg>\n")
	return b.String()
}

func updateReadme(path, svg, md string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	const begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return errors.New(path + ": no " + begin + " … " + end + " block")
	}
	rel, err := filepath.Rel(filepath.Dir(path), svg)
	if err != nil {
		return err
	}
	block := begin + "\n" + md + "\n![benchmark ratios](" + filepath.ToSlash(rel) + ")\n"
	return os.WriteFile(path, []byte(s[:i]+block+s[j:]), 0o644)
}

// gitCommit is the commit the run measured: $BENCH_COMMIT (scripts/bench.sh records it when
// the run starts), else HEAD now; "-dirty" when tracked files differ from it.
func gitCommit() string {
	if c := os.Getenv("BENCH_COMMIT"); c != "" {
		return c
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += "-dirty"
	}
	return c
}

func machine() Machine {
	m := Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if v := os.Getenv("BENCH_LOAD1"); v != "" {
		m.Load1, _ = strconv.ParseFloat(v, 64)
	} else if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) > 0 {
			m.Load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	if out, err := exec.Command("/usr/lib/chromium/chromium", "--version").Output(); err == nil {
		m.Chromium = strings.TrimSpace(string(out))
	}
	return m
}
