package main

import (
	"encoding/json"
	"strings"
	"testing"
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

// TestWhy: a failed test's first lines printed through its testing.T come last, in its own
// order, at most whyLines of them, each clipped; a passing test's and other lines do not.
func TestWhy(t *testing.T) {
	var in strings.Builder
	ev := func(action, test, output string) {
		b, _ := json.Marshal(event{Action: action, Package: "p", Test: test, Output: output})
		in.Write(append(b, '\n'))
	}
	ev("output", "TestA", "=== RUN   TestA\n")
	ev("output", "TestA", "    a_test.go:10: passing noise\n")
	ev("output", "TestB/sub", "    b_test.go:200: visit answered \"TIMEOUT\", want \"\"\n")
	ev("output", "TestB/sub", "        time=2026 level=INFO msg=x (a log's second line)\n")
	ev("output", "TestB/sub", "    b_test.go:201: "+strings.Repeat("x", 400)+"\n")
	for i := 0; i < 20; i++ {
		ev("output", "TestB/sub", "    b_test.go:9: more\n")
	}
	ev("pass", "TestA", "")
	ev("fail", "TestB/sub", "")
	ev("fail", "TestB", "")
	var out strings.Builder
	sum, err := run(strings.NewReader(in.String()), &out)
	if err != nil || !sum.failed || len(sum.why) != 1 {
		t.Fatalf("sum %+v err %v", sum, err)
	}
	var r strings.Builder
	report(&r, sum, 0)
	_, why, ok := strings.Cut(r.String(), "== the failed tests' first lines")
	if !ok || strings.Contains(why, "passing noise") || strings.Contains(why, "time=") {
		t.Fatalf("report:\n%s", r.String())
	}
	lines := strings.Split(strings.TrimSpace(why), "\n")
	if len(lines) != 1+1+whyLines || lines[1] != "--- p TestB/sub" || lines[2] != `    b_test.go:200: visit answered "TIMEOUT", want ""` ||
		len(lines[3]) != 4+whyLen+len("…") {
		t.Fatalf("why:\n%s", why)
	}
	for _, l := range []string{"x_test.go:1: a", "a/b_test.go:22: b"} {
		if !testLine(l) {
			t.Errorf("testLine(%q) false", l)
		}
	}
	for _, l := range []string{"x.go:1: a", "x_test.go:a: b", "x_test.go:1 b", "time=1 x_test.go:1: a", "x_test.go::"} {
		if testLine(l) {
			t.Errorf("testLine(%q) true", l)
		}
	}
}
