package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestNoStandInsInProduction: the scripted presence stand-ins (fake pinentry, scripted
// system prompter) and the real-component harness are test-only packages; no production
// binary may link them, so no configuration can reach them.
func TestNoStandInsInProduction(t *testing.T) {
	// The toolchain that runs this test: never skipped, a check that does not run proves nothing.
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if p, err := exec.LookPath("go"); err == nil {
		goBin = p
	}
	out, err := exec.Command(goBin, "list", "-deps", "github.com/headless-dev/headless/cmd/brokerd", "github.com/headless-dev/headless/cmd/headless").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list printed %d packages; the check would prove nothing", len(deps))
	}
	for _, d := range deps {
		if strings.Contains(d, "presencetest") || strings.Contains(d, "realtest") || strings.Contains(d, "fakepinentry") {
			t.Errorf("a production binary links the test stand-in %s", d)
		}
	}
}
