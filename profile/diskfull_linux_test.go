package profile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/headless-dev/headless/internal/test/realtest"
)

// TestCreateOnFullDiskLeavesNothing: creating the profile on a full data dir (a filled tmpfs)
// fails with an error that is ENOSPC, leaves no temporary profile beside it and the lock
// released; with space again, Open creates the profile. Needs root (mount).
func TestCreateOnFullDiskLeavesNothing(t *testing.T) {
	realtest.NeedRoot(t, "mount a tmpfs")
	dataDir := newDataDir(t)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dataDir, "tmpfs", 0, "size=64k,mode=0700"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dataDir, syscall.MNT_DETACH) })
	// The lock file first (an empty file takes no block), then the filler.
	if f, err := os.OpenFile(lockPath(dataDir), os.O_WRONLY|os.O_CREATE, 0o600); err == nil {
		f.Close()
	}
	filler := filepath.Join(dataDir, "filler")
	f, err := os.OpenFile(filler, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = f.Write(make([]byte, 4096))
	}
	f.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("fill: %v", err)
	}
	_, err = Open(Options{Dir: profDir(dataDir), Lock: lockPath(dataDir), Now: clock})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Open on a full disk: %v, want ENOSPC", err)
	}
	if got, want := entries(t, dataDir), []string{"filler", "profile.lock"}; !slices.Equal(got, want) {
		t.Fatalf("after the failed creation the data dir holds %v, want %v", got, want)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	p := openT(t, dataDir) // the lock was released
	if !p.Report().Created {
		t.Fatalf("Report = %+v", p.Report())
	}
	checkFresh(t, p.Dir())
}
