package hardening

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestUndumpableInAChild makes a child of this test undumpable (never this test process:
// the race detector and debuggers want it dumpable) and reads the flag back.
func TestUndumpableInAChild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("PR_SET_DUMPABLE is Linux only")
	}
	if os.Getenv("HARDENING_CHILD") == "1" {
		before, err := Dumpable()
		if err != nil || !before {
			os.Exit(3)
		}
		if err := Undumpable(); err != nil {
			os.Exit(4)
		}
		if after, err := Dumpable(); err != nil || after {
			os.Exit(5)
		}
		if !Facts().Undumpable {
			os.Exit(6)
		}
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestUndumpableInAChild$")
	cmd.Env = append(os.Environ(), "HARDENING_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestPtraceScope(t *testing.T) {
	got := PtraceScope()
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	switch {
	case os.IsNotExist(err):
		if got != "absent" {
			t.Fatalf("PtraceScope = %q on a kernel without Yama", got)
		}
	case err == nil:
		if got != strings.TrimSpace(string(b)) {
			t.Fatalf("PtraceScope = %q, file says %q", got, b)
		}
	}
}

func TestBinary(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "headless")
	os.WriteFile(own, []byte("x"), 0o755)
	if f := Binary(own); !f.UserWritable || !strings.Contains(f.Reason, "owned by you") {
		t.Errorf("own file: %+v", f)
	}
	if f := Binary(filepath.Join(dir, "missing")); !f.UserWritable || !strings.Contains(f.Reason, "cannot be checked") {
		t.Errorf("missing file: %+v", f)
	}
	if os.Getuid() != 0 {
		// /bin/sh is root's, in a root directory: not replaceable by this user.
		if f := Binary("/bin/sh"); f.UserWritable {
			t.Errorf("/bin/sh: %+v", f)
		}
	}
	if itoa(0) != "0" || itoa(65534) != "65534" {
		t.Error("itoa")
	}
}
