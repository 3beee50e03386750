package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/headless-dev/headless/internal/clip"
)

// TestRun: output is copied in order, lines that are not events pass through, the top-level
// tests and packages are timed (subtests are not), and a failing test or package is a failure.
func TestRun(t *testing.T) {
	in := `{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
not json: a build error
{"ImportPath":"p [p.test]","Action":"build-output","Output":"p/x.go:1: undefined: y\n"}
{"Action":"pass","Package":"p","Test":"TestA/sub","Elapsed":9}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":1.5}
{"Action":"fail","Package":"p","Test":"TestB","Elapsed":3}
{"Action":"fail","Package":"p","Elapsed":5}
`
	var out strings.Builder
	sum, err := run(strings.NewReader(in), &out)
	tests, pkgs := sum.tests, sum.pkgs
	if err != nil || !sum.failed {
		t.Fatalf("failed %v, err %v", sum.failed, err)
	}
	if got := out.String(); got != "=== RUN   TestA\nnot json: a build error\np/x.go:1: undefined: y\n" {
		t.Fatalf("output %q", got)
	}
	if len(tests) != 2 || len(pkgs) != 1 || tests[0].name != "p TestA" || tests[1].seconds != 3 || !tests[1].failed {
		t.Fatalf("tests %+v pkgs %+v", tests, pkgs)
	}
	var r strings.Builder
	report(&r, sum, 1)
	if want := "== the 1 slowest tests\n     3.0s  p TestB  FAIL\n== packages by wall time\n     5.0s  p  FAIL\n"; r.String() != want {
		t.Fatalf("report:\n%s\nwant:\n%s", r.String(), want)
	}
	sum, _ = run(strings.NewReader(`{"Action":"pass","Package":"p","Elapsed":1}`+"\n"), &out)
	if sum.failed {
		t.Fatal("a passing run failed")
	}
}

// TestWhy: a failed test's messages printed through its testing.T come last: its first and
// last whyMsgs, each with at most whyCont more lines, clipped as valid UTF-8; a passing
// test's, other lines and a log's long tail do not; a test that never ended (its package's
// timeout) is reported as not finished.
func TestWhy(t *testing.T) {
	var in strings.Builder
	ev := func(action, pkg, test, output string) {
		b, _ := json.Marshal(event{Action: action, Package: pkg, Test: test, Output: output})
		in.Write(append(b, '\n'))
	}
	ev("output", "p", "TestA", "=== RUN   TestA\n")
	ev("output", "p", "TestA", "    a_test.go:10: passing noise\n")
	ev("output", "p", "TestB/sub", "        b_test.go:200: visit answered \"TIMEOUT\", want \"\"\n")
	ev("output", "p", "TestB/sub", "            its second line\n")
	ev("output", "p", "TestB/sub", "        b_test.go:201: "+strings.Repeat("é", 400)+"\n")
	ev("output", "p", "TestB/sub", "        b_test.go:202:\n")
	for i := 0; i < 10; i++ {
		ev("output", "p", "TestB/sub", "            log line\n")
	}
	ev("output", "p", "TestB/sub", "        time=2026 level=INFO msg=x (not a message)\n")
	for i := 0; i < 20; i++ {
		ev("output", "p", "TestB/sub", fmt.Sprintf("        b_test.go:9: more %d\n", i))
	}
	ev("output", "p", "TestB/sub", "        b_test.go:300: the reason, at the end\n")
	ev("pass", "p", "TestA", "")
	ev("fail", "p", "TestB/sub", "")
	ev("fail", "p", "TestB", "")
	ev("fail", "p", "", "")
	ev("output", "q", "TestHang", "    h_test.go:5: waiting\n")
	ev("output", "q", "TestHang", "panic: test timed out after 45m0s\n")
	ev("fail", "q", "", "")
	var out strings.Builder
	sum, err := run(strings.NewReader(in.String()), &out)
	if err != nil || !sum.failed || len(sum.why) != 2 {
		t.Fatalf("sum %+v err %v", sum, err)
	}
	var r strings.Builder
	report(&r, sum, 0)
	_, why, ok := strings.Cut(r.String(), "== what the failed tests said")
	if !ok || strings.Contains(why, "passing noise") || strings.Contains(why, "time=") || !utf8.ValidString(why) {
		t.Fatalf("report:\n%s", r.String())
	}
	lines := strings.Split(strings.TrimSpace(why), "\n")[1:]
	want := []string{
		"--- p TestB/sub",
		`    b_test.go:200: visit answered "TIMEOUT", want ""`,
		"        its second line",
		"    " + clip.Text("b_test.go:201: "+strings.Repeat("é", 400), whyLen),
		"    b_test.go:202:",
		"        log line", "        log line", "        log line",
		"    b_test.go:9: more 0", "    b_test.go:9: more 1", "    b_test.go:9: more 2",
		"    (12 messages left out)",
		"    b_test.go:9: more 15", "    b_test.go:9: more 16", "    b_test.go:9: more 17",
		"    b_test.go:9: more 18", "    b_test.go:9: more 19",
		"    b_test.go:300: the reason, at the end",
		"--- q TestHang (did not finish)",
		"    h_test.go:5: waiting",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("why:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range []string{"x_test.go:1: a", "a/b_test.go:22: b", "x_test.go:3:"} {
		if !testLine(l) {
			t.Errorf("testLine(%q) false", l)
		}
	}
	for _, l := range []string{"x.go:1: a", "x_test.go:a: b", "x_test.go:1 b", "time=1 x_test.go:1: a", "x_test.go::", "x_test.go:1:x"} {
		if testLine(l) {
			t.Errorf("testLine(%q) true", l)
		}
	}
}
