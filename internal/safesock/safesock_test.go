package safesock

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestEnsureDir(t *testing.T) {
	base := t.TempDir()
	d := filepath.Join(base, "rt")
	if err := EnsureDir(d, os.Getuid()); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
	os.Chmod(d, 0o755)
	if err := EnsureDir(d, os.Getuid()); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o700 {
		t.Fatalf("loose mode not tightened: %v", fi.Mode().Perm())
	}
	link := filepath.Join(base, "link")
	os.Symlink(d, link)
	if err := EnsureDir(link, os.Getuid()); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("symlink accepted: %v", err)
	}
	if os.Getuid() == 0 {
		other := filepath.Join(base, "other")
		os.Mkdir(other, 0o700)
		os.Chown(other, 65534, 65534)
		if err := EnsureDir(other, os.Getuid()); !errors.Is(err, ErrUnsafeDir) {
			t.Fatalf("directory of another user accepted: %v", err)
		}
	}
	if err := EnsureDir(d, os.Getuid()+1); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("directory owned by another uid than the layout's accepted: %v", err)
	}
}

func TestListenProbesAndOwnsOnlyItsSocket(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.sock")
	l, err := Listen(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v", fi.Mode().Perm())
	}
	// A live listener is not replaced; the error names our pid.
	_, err = Listen(p)
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.PID != os.Getpid() {
		t.Fatalf("second Listen: %v", err)
	}
	// If the path is replaced by something else, Close leaves that alone.
	os.Remove(p)
	os.WriteFile(p, []byte("mine"), 0o600)
	l.Close()
	if b, _ := os.ReadFile(p); string(b) != "mine" {
		t.Fatal("Close removed a file that was not its socket")
	}
	os.Remove(p)
	// A stale socket (nobody listening) is replaced.
	ul, _ := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
	ul.SetUnlinkOnClose(false)
	ul.Close()
	l, err = Listen(p)
	if err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	l.Close()
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatal("Close left its own socket behind")
	}
}
