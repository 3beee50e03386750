// Command testtime reads `go test -json` on stdin, prints the tests' output as plain `go test`
// would (the Output lines, in order), and at the end the ten slowest tests of the run (top
// level, with their package) and each package's wall time, and last, for each test that failed,
// its first and last messages printed through its testing.T ("x_test.go:N: ..."): the end of a long
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

	"github.com/headless-dev/headless/internal/clip"
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

// failure is a failed test and the messages it printed through its testing.T (its first and
// its last few).
type failure struct {
	name  string
	lines []string
}

// Bounds of the failures' report: the messages kept of a test (whyMsgs first, whyMsgs last),
// the lines kept of a message (its first and whyCont more), their length, the tests
// reported, and the tests followed at once (the running ones).
const (
	whyMsgs  = 6
	whyCont  = 3
	whyLen   = 300
	whyTests = 20
	whyLive  = 4000
)

// said is what a running test printed through its testing.T, bounded: its first messages,
// and its last ones in a ring.
type said struct {
	head, tail []string
	n          int  // messages seen
	cont       int  // continuation lines the message being printed may still add
	inHead     bool // that message is in head (else the newest of tail)
}

// add takes one line a test printed.
func (w *said) add(line string) {
	l := strings.TrimRight(line, "\n")
	switch {
	case testLine(strings.TrimSpace(l)):
		msg := clip.Text(strings.TrimSpace(l), whyLen)
		w.n++
		w.cont = whyCont
		if w.inHead = len(w.head) < whyMsgs; w.inHead {
			w.head = append(w.head, msg)
			return
		}
		if len(w.tail) == whyMsgs {
			w.tail = w.tail[1:]
		}
		w.tail = append(w.tail, msg)
	case strings.HasPrefix(l, "        ") && w.cont > 0 && w.n > 0:
		// A message's next line (go test indents them under its first).
		w.cont--
		add := "\n        " + clip.Text(strings.TrimSpace(l), whyLen)
		if w.inHead {
			w.head[len(w.head)-1] += add
		} else {
			w.tail[len(w.tail)-1] += add
		}
	default:
		w.cont = 0
	}
}

// lines is what is kept: the first messages, a line for those left out, the last.
func (w *said) lines() []string {
	out := append([]string(nil), w.head...)
	if left := w.n - len(w.head) - len(w.tail); left > 0 {
		out = append(out, fmt.Sprintf("(%d messages left out)", left))
	}
	return append(out, w.tail...)
}

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
	live := map[string]*said{} // what the running tests printed, by package and test
	failedPkgs := map[string]bool{}
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
			if ev.Test == "" {
				continue
			}
			key := ev.Package + " " + ev.Test
			w := live[key]
			if w == nil && len(live) < whyLive {
				w = &said{}
				live[key] = w
			}
			if w != nil {
				w.add(ev.Output)
			}
		case "pass", "fail", "skip":
			key := ev.Package + " " + ev.Test
			if w := live[key]; ev.Action == "fail" && ev.Test != "" && w != nil && w.n > 0 && len(sum.why) < whyTests {
				sum.why = append(sum.why, failure{name: key, lines: w.lines()})
			}
			delete(live, key)
			if ev.Action == "fail" && ev.Test == "" {
				failedPkgs[ev.Package] = true
			}
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
	// A test that never ended (the package's -timeout, a panic) has no event of its own: its
	// package failed, and what it said is reported as not finished.
	var left []string
	for key, w := range live {
		pkg, _, _ := strings.Cut(key, " ")
		if failedPkgs[pkg] && w.n > 0 {
			left = append(left, key)
		}
	}
	slices.Sort(left)
	for _, key := range left {
		if len(sum.why) < whyTests {
			sum.why = append(sum.why, failure{name: key + " (did not finish)", lines: live[key].lines()})
		}
	}
	return sum, sc.Err()
}

// testLine reports whether l is the first line of a message a test printed through its
// testing.T ("x_test.go:N: text", or "x_test.go:N:" when the text starts on the next line).
func testLine(l string) bool {
	file, rest, ok := strings.Cut(l, ":")
	if !ok || !strings.HasSuffix(file, "_test.go") || strings.ContainsAny(file, " \t") {
		return false
	}
	num, text, ok := strings.Cut(rest, ":")
	return ok && num != "" && strings.Trim(num, "0123456789") == "" && (text == "" || text[0] == ' ')
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
	fmt.Fprintf(w, "== what the failed tests said (their first %d and last %d messages, of %d tests at most; the whole output is above)\n", whyMsgs, whyMsgs, whyTests)
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
