package main

import (
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
	tests, pkgs, failed, err := run(strings.NewReader(in), &out)
	if err != nil || !failed {
		t.Fatalf("failed %v, err %v", failed, err)
	}
	if got := out.String(); got != "=== RUN   TestA\nnot json: a build error\np/x.go:1: undefined: y\n" {
		t.Fatalf("output %q", got)
	}
	if len(tests) != 2 || len(pkgs) != 1 || tests[0].name != "p TestA" || tests[1].seconds != 3 || !tests[1].failed {
		t.Fatalf("tests %+v pkgs %+v", tests, pkgs)
	}
	var r strings.Builder
	report(&r, tests, pkgs, 1)
	if want := "== the 1 slowest tests\n     3.0s  p TestB  FAIL\n== packages by wall time\n     5.0s  p  FAIL\n"; r.String() != want {
		t.Fatalf("report:\n%s\nwant:\n%s", r.String(), want)
	}
	_, _, failed, _ = run(strings.NewReader(`{"Action":"pass","Package":"p","Elapsed":1}`+"\n"), &out)
	if failed {
		t.Fatal("a passing run failed")
	}
}
