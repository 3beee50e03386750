// Command testtime reads `go test -json` on stdin, prints the tests' output as plain `go test`
// would (the Output lines, in order), and at the end the ten slowest tests of the run (top
// level, with their package) and each package's wall time, and last, for each test that failed,
// the first lines it printed through its testing.T ("x_test.go:N: ..."): the end of a long
// run's output is what a CI summary keeps, and the reason of a failure was hundreds of lines
// above it. scripts/test.sh pipes the suite through it; its own exit status is 1 when a test or
// package failed, so that a pipeline with pipefail fails on either.
//
//	go test -json ./... | go run ./scripts/testtime [-n 10]
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type timing struct {
	name    string
	seconds float64
	failed  bool
}

// failure is a failed test and the first lines it printed through its testing.T.
type failure struct {
	name  string
	lines []string
}

// Bounds of the failures' report: the lines kept of a test, their length, the tests reported.
const (
	whyLines  = 12
	whyLen    = 300
	whyTests  = 20
	whyLinesM = 4000 // tests whose lines are kept at once (running ones)
)

// summary is what run collects.
type summary struct {
	tests, pkgs []timing
	failed      bool
	why         []failure
}

func main() {
	n := flag.Int("n", 10, "how many of the slowest tests to print")
	flag.Parse()
	sum, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testtime:", err)
		os.Exit(2)
	}
	report(os.Stdout, sum, *n)
	if sum.failed {
		os.Exit(1)
	}
}

// run copies the output of the events on in to out and collects the top-level tests' and the
// packages' times, whether any test or package failed, and each failed test's first lines.
func run(in io.Reader, out io.Writer) (sum summary, err error) {
	lines := map[string][]string{} // a running test's first lines, by package and test
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if json.Unmarshal(line, &ev) != nil || ev.Action == "" {
			fmt.Fprintf(out, "%s\n", line) // not an event (a build error, say): as it came
			continue
		}
		switch ev.Action {
		case "output", "build-output": // build-output: a compile error's text (Go 1.24+)
			io.WriteString(out, ev.Output)
			key := ev.Package + " " + ev.Test
			if l := strings.TrimSpace(ev.Output); ev.Test != "" && testLine(l) && len(lines[key]) < whyLines && (len(lines) < whyLinesM || lines[key] != nil) {
				if len(l) > whyLen {
					l = l[:whyLen] + "…"
				}
				lines[key] = append(lines[key], l)
			}
		case "pass", "fail", "skip":
			key := ev.Package + " " + ev.Test
			if ev.Action == "fail" && ev.Test != "" && len(lines[key]) > 0 && len(sum.why) < whyTests {
				sum.why = append(sum.why, failure{name: key, lines: lines[key]})
			}
			delete(lines, key)
			if ev.Action == "skip" {
				continue
			}
			t := timing{seconds: ev.Elapsed, failed: ev.Action == "fail"}
			sum.failed = sum.failed || t.failed
			switch {
			case ev.Test == "":
				t.name = ev.Package
				sum.pkgs = append(sum.pkgs, t)
			case !strings.Contains(ev.Test, "/"):
				t.name = ev.Package + " " + ev.Test
				sum.tests = append(sum.tests, t)
			}
		}
	}
	return sum, sc.Err()
}

// testLine reports whether l is a line a test printed through its testing.T ("x_test.go:N: ").
func testLine(l string) bool {
	file, rest, ok := strings.Cut(l, ":")
	if !ok || !strings.HasSuffix(file, "_test.go") || strings.ContainsAny(file, " \t") {
		return false
	}
	num, _, ok := strings.Cut(rest, ": ")
	return ok && num != "" && strings.Trim(num, "0123456789") == ""
}

func report(w io.Writer, sum summary, n int) {
	tests, pkgs := sum.tests, sum.pkgs
	slower := func(a, b timing) int { return cmp.Compare(b.seconds, a.seconds) }
	slices.SortStableFunc(tests, slower)
	slices.SortStableFunc(pkgs, slower)
	fmt.Fprintf(w, "== the %d slowest tests\n", min(n, len(tests)))
	for _, t := range tests[:min(n, len(tests))] {
		fmt.Fprintf(w, "%8.1fs  %s%s\n", t.seconds, t.name, mark(t))
	}
	fmt.Fprintln(w, "== packages by wall time")
	for _, p := range pkgs[:min(n, len(pkgs))] {
		fmt.Fprintf(w, "%8.1fs  %s%s\n", p.seconds, p.name, mark(p))
	}
	if len(sum.why) == 0 {
		return
	}
	fmt.Fprintf(w, "== the failed tests' first lines (at most %d lines of %d tests; the whole output is above)\n", whyLines, whyTests)
	for _, f := range sum.why {
		fmt.Fprintf(w, "--- %s\n", f.name)
		for _, l := range f.lines {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}

func mark(t timing) string {
	if t.failed {
		return "  FAIL"
	}
	return ""
}
