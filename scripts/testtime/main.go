// Command testtime reads `go test -json` on stdin, prints the tests' output as plain `go test`
// would (the Output lines, in order), and at the end the ten slowest tests of the run (top
// level, with their package) and each package's wall time. scripts/test.sh pipes the suite
// through it; its own exit status is 1 when a test or package failed, so that a pipeline with
// pipefail fails on either.
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

func main() {
	n := flag.Int("n", 10, "how many of the slowest tests to print")
	flag.Parse()
	tests, pkgs, failed, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testtime:", err)
		os.Exit(2)
	}
	report(os.Stdout, tests, pkgs, *n)
	if failed {
		os.Exit(1)
	}
}

// run copies the output of the events on in to out and collects the top-level tests' and the
// packages' times; failed is whether any test or package failed.
func run(in io.Reader, out io.Writer) (tests, pkgs []timing, failed bool, err error) {
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
		case "pass", "fail":
			t := timing{seconds: ev.Elapsed, failed: ev.Action == "fail"}
			failed = failed || t.failed
			switch {
			case ev.Test == "":
				t.name = ev.Package
				pkgs = append(pkgs, t)
			case !strings.Contains(ev.Test, "/"):
				t.name = ev.Package + " " + ev.Test
				tests = append(tests, t)
			}
		}
	}
	return tests, pkgs, failed, sc.Err()
}

func report(w io.Writer, tests, pkgs []timing, n int) {
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
}

func mark(t timing) string {
	if t.failed {
		return "  FAIL"
	}
	return ""
}
