package realtest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRootIsTheModule: Root names the repository's top, where go.mod and scripts/ are (the
// harness runs scripts/with-secret-service.sh from there).
func TestRootIsTheModule(t *testing.T) {
	for _, p := range []string{"go.mod", "scripts/with-secret-service.sh"} {
		if _, err := os.Stat(filepath.Join(Root(t), p)); err != nil {
			t.Fatalf("Root() = %s: %v", Root(t), err)
		}
	}
}

// verdict is a testing.TB that records whether the test was failed or skipped.
type verdict struct {
	testing.TB
	failed, skipped bool
}

func (v *verdict) Helper()               {}
func (v *verdict) Fatalf(string, ...any) { v.failed = true; panic(v) }
func (v *verdict) Skipf(string, ...any)  { v.skipped = true; panic(v) }
func (v *verdict) run(f func(testing.TB)) (same *verdict) {
	same = v
	defer func() {
		if r := recover(); r != nil && r != v {
			panic(r)
		}
	}()
	f(v)
	return
}

// TestNeedRoot: a root-only test runs as root, skips for a developer who is not root, and
// fails (never skips) as anyone else in an opted-in run.
func TestNeedRoot(t *testing.T) {
	need := func(tb testing.TB) { NeedRoot(tb, "mount a tmpfs") }
	for _, c := range []struct {
		name          string
		euid          int
		real          string
		fail, skipped bool
	}{
		{"root, opted in", 0, "1", false, false},
		{"root, not opted in", 0, "", false, false},
		{"not root, opted in", 1000, "1", true, false},
		{"not root, not opted in", 1000, "", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			euid := c.euid
			geteuid = func() int { return euid }
			t.Cleanup(func() { geteuid = os.Geteuid })
			t.Setenv("HEADLESS_REAL", c.real)
			v := (&verdict{TB: t}).run(need)
			if v.failed != c.fail || v.skipped != c.skipped {
				t.Errorf("failed %v, skipped %v; want %v, %v", v.failed, v.skipped, c.fail, c.skipped)
			}
		})
	}
}
