package lockfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestLockExisting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profile.lock")
	if _, err := LockExisting(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LockExisting of a missing file = %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("LockExisting created the file")
	}
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	// flock is per open file description: a second open in this process conflicts too.
	var held *HeldError
	if _, err := LockExisting(path); !errors.As(err, &held) || held.PID != os.Getpid() {
		t.Fatalf("LockExisting while held = %v, want a HeldError naming pid %d", err, os.Getpid())
	}
	unlock()
	if err := os.WriteFile(path, []byte("12345\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	release, err := LockExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(path); !errors.Is(err, ErrHeld) {
		t.Fatalf("Lock while LockExisting holds it = %v", err)
	}
	release()
	if b, _ := os.ReadFile(path); string(b) != "12345\n" {
		t.Fatalf("LockExisting wrote to the file: %q", b)
	}
	if unlock, err := Lock(path); err != nil {
		t.Fatalf("Lock after release = %v", err)
	} else {
		unlock()
	}
}
