package hardening

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

// TestMemoryOpen: a child of this process (dumpable, same uid) is open; a pid that is gone is
// an error wrapping os.ErrNotExist. (Closed is TestUndumpableAgainstSameUID's, in tests/, as
// an unprivileged uid against the host, brokerd and Chromium.)
func TestMemoryOpen(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	open, err := MemoryOpen(pid)
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil || !open {
		t.Fatalf("a dumpable child: open %v, %v; want open", open, err)
	}
	if open, err := MemoryOpen(pid); !errors.Is(err, os.ErrNotExist) || open {
		t.Fatalf("a reaped child: open %v, %v; want os.ErrNotExist", open, err)
	}
}
