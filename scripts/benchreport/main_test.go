package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkRelease-2   	     300	   1000 ns/op	    2.000 p50-ms	    4.000 p99-ms
BenchmarkChallengeIssue/conns=1-2         	    2000	  100.0 challenges/s
BenchmarkChallengeIssue/conns=8-2         	    2000	  400.0 challenges/s
BenchmarkConcurrentLogins32-2   	       3	  16.00 errors	  900.0 p50-ms	 1500 p99-ms	 1200 round-ms
--- FAIL: BenchmarkHostStart
`

func TestBuildFailsLoudly(t *testing.T) {
	res, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Metrics["BenchmarkChallengeIssue/conns=8"]["challenges/s"]; got != 400 {
		t.Fatalf("conns=8: %v", got)
	}
	rep := Build(res, true)
	want := []string{
		"benchmark failed: BenchmarkHostStart",
		"BenchmarkConcurrentLogins32 reported errors 16 (must be 0)",
		"figure release_p50: baseline p50-ms from BenchmarkBaselineGetSecret is missing",
		"figure brokerd_idle_rss: no rss-MB from BenchmarkBrokerdIdleRSS",
	}
	for _, w := range want {
		found := false
		for _, p := range rep.Problems {
			found = found || p == w
		}
		if !found {
			t.Errorf("problem %q not reported; got %q", w, rep.Problems)
		}
	}
	var ch8 *Figure
	for i := range rep.Figures {
		if rep.Figures[i].ID == "challenges_8" {
			ch8 = &rep.Figures[i]
		}
	}
	if ch8 == nil || ch8.Ratio == nil || *ch8.Ratio != 4 {
		t.Fatalf("challenges_8: %+v", ch8)
	}
}

func TestRunExitsNonZeroOnErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(in, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	var so, se strings.Builder
	if code := run([]string{"-in", in, "-out", dir}, &so, &se); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", code, se.String())
	}
	if !strings.Contains(se.String(), "bench: FAILED") || !strings.Contains(se.String(), "errors 16") {
		t.Fatalf("stderr %q", se.String())
	}
	for _, f := range []string{"bench.json", "bench.md", "bench.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// The load's figures are read from its one benchmark (both rounds in one run): a p99 goal is a
// bound from above, a throughput goal from below, and refused or lost requests fail the run.
func TestLoadFiguresAndGoals(t *testing.T) {
	in := `BenchmarkBrokerLoad-2   	1	9 ns/op	 2.000 1conn-p50-ms	 10.00 1conn-p99-ms	 600.0 1conn-requests/s	 8.000 p50-ms	 25.00 p99-ms	 1100 requests/s	 1 errors	 1 refused-errors	 0 lost-errors
`
	res, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	rep := Build(res, true)
	figs := map[string]Figure{}
	for _, f := range rep.Figures {
		figs[f.ID] = f
	}
	for _, c := range []struct {
		id    string
		ratio float64
		met   bool
	}{
		{"load64_p99", 2.5, true},                  // ≤ 3
		{"load64_throughput", 1100.0 / 600, false}, // ≥ 2
	} {
		f, ok := figs[c.id]
		if !ok || f.Ratio == nil || f.Met == nil {
			t.Fatalf("%s: %+v", c.id, f)
		}
		if *f.Ratio != c.ratio || *f.Met != c.met {
			t.Errorf("%s: ratio %v met %v, want %v %v", c.id, *f.Ratio, *f.Met, c.ratio, c.met)
		}
	}
	if md := Markdown(rep); !strings.Contains(md, "≥ 2.00× **not met**") || !strings.Contains(md, "≤ 3.00× met") {
		t.Errorf("goals not shown:\n%s", md)
	}
	for _, w := range []string{"BenchmarkBrokerLoad reported errors 1 (must be 0)", "BenchmarkBrokerLoad reported refused-errors 1 (must be 0)"} {
		if !strings.Contains(strings.Join(rep.Problems, "\n"), w) {
			t.Errorf("problem %q not reported; got %q", w, rep.Problems)
		}
	}
}

// A test keyring that died under a benchmark is a problem of the run, named with how it ended.
func TestKeyringDeathFailsTheRun(t *testing.T) {
	in := "BenchmarkSecretServiceRelease-2   	      20	 1 ns/op	 40.00 p50-ms	 90.00 p99-ms\n" +
		"wss: gnome-keyring-daemon (pid 4242) died during the run: it was killed by signal 5 (TRAP); its output:\n" +
		"wss:   (gnome-keyring-daemon:4242): GLib-ERROR **: g_variant_new: expected GVariant of type 'v' but received value has type '(null)'\n"
	res, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := "the test keyring died under a benchmark: gnome-keyring-daemon (pid 4242) died during the run: it was killed by signal 5 (TRAP) (its output is in the run's log)"
	rep := Build(res, true)
	if !slices.Contains(rep.Problems, want) {
		t.Fatalf("problems %q, want %q", rep.Problems, want)
	}
}
