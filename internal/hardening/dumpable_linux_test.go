package hardening

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/headless-dev/headless/internal/test/realtest"
)

// TestMemoryOpen: a child of this process (dumpable, same uid) is open; a pid that is gone is
// an error wrapping os.ErrNotExist. (Closed is TestAsUser65534/UndumpableAgainstSameUID's, in tests/, as
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

// TestNotReplaceable: for an unprivileged user, a program they own, or one in a directory
// they own, is refused (a wrapper could take its place); a root-owned one in a root-owned
// directory is not; root is refused nothing.
func TestNotReplaceable(t *testing.T) {
	realtest.NeedRoot(t, "make files of two owners")
	const user = 65534
	rootDir := t.TempDir()
	os.Chmod(rootDir, 0o755)
	userDir := filepath.Join(rootDir, "user")
	os.Mkdir(userDir, 0o755)
	os.Chown(userDir, user, user)
	mk := func(dir, name string, uid int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("\x7fELF"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chown(p, uid, uid)
		return p
	}
	theirs := mk(rootDir, "theirs", user)
	inTheirDir := mk(userDir, "roots", 0)
	system := mk(rootDir, "system", 0)
	for _, c := range []struct {
		path string
		uid  uint32
		want string // "" accepted, else a substring of the refusal
	}{
		{theirs, user, "owned by you"},
		{inTheirDir, user, "its directory"},
		{system, user, ""},
		{theirs, 0, ""},
	} {
		err := notReplaceableBy(c.path, c.uid)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s for uid %d: %v; want %q", c.path, c.uid, err, c.want)
		}
	}
}

// TestWithFSGID: f runs with the filesystem gid asked for, and the thread has its own back
// after; a gid the kernel refuses is an error and f does not run.
func TestWithFSGID(t *testing.T) {
	own, _ := unix.SetfsgidRetGid(-1)
	want := own + 4321
	if os.Geteuid() != 0 {
		want = os.Getgid() // the only other gid a plain process may take is one of its own
	}
	var inside int
	if err := WithFSGID(want, func() error { inside, _ = unix.SetfsgidRetGid(-1); return nil }); err != nil {
		t.Fatal(err)
	}
	if inside != want {
		t.Fatalf("fsgid inside f: %d, want %d", inside, want)
	}
	runtime.LockOSThread()
	after, _ := unix.SetfsgidRetGid(-1)
	runtime.UnlockOSThread()
	if after != own {
		t.Fatalf("fsgid after: %d, want %d", after, own)
	}
	if os.Geteuid() != 0 {
		ran := false
		if err := WithFSGID(own+4321, func() error { ran = true; return nil }); err == nil || ran {
			t.Fatalf("a gid not of this process: err %v, ran %v; want an error and f not run", err, ran)
		}
	}
}
