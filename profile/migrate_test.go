//go:build linux

package profile

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/headless-dev/headless/internal/lockfile"
)

// legacyProfile makes a profile Chromium used at root/run/headless/profile (the old layout
// inside the runtime dir) and returns its path.
func legacyProfile(t *testing.T, root string) string {
	t.Helper()
	old := filepath.Join(root, "run", "headless", "profile")
	m, err := newMarker(fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(old, markerName), m)
	populate(t, old)
	if err := os.Remove(filepath.Join(old, "SingletonLock")); err != nil { // Chromium exited cleanly
		t.Fatal(err)
	}
	if err := os.Chmod(old, 0o700); err != nil {
		t.Fatal(err)
	}
	return old
}

func TestMigrateMovesLegacyProfile(t *testing.T) {
	root := t.TempDir()
	old := legacyProfile(t, root)
	// A stale SingletonLock (this host, a process that has exited) does not count as in use.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if err := os.Symlink(fmt.Sprintf("%s-%d", host, dead.Process.Pid), filepath.Join(old, "SingletonLock")); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, old)
	cookies, err := os.ReadFile(filepath.Join(old, "Default", "Network", "Cookies"))
	if err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(root, "data")
	p, err := Open(Options{Dir: profDir(dataDir), Lock: lockPath(dataDir), Now: clock, Legacy: []string{old, filepath.Join(root, "tmp", "headless-1", "profile")}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if m := p.Migration(); m.From != old || len(m.NotMigrated) != 0 {
		t.Fatalf("Migration = %+v, want from %s", m, old)
	}
	if r := p.Report(); r != (Report{}) {
		t.Fatalf("Report = %+v: the migrated profile was not used as it is", r)
	}
	if _, err := os.Lstat(old); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the old profile is still there: %v", err)
	}
	// Kept as it was, but for the session restore data and the Widevine hint Chromium is kept
	// from writing.
	after := snapshot(t, p.Dir())
	if after["Default/Sessions"] == "" || after["WidevineCdm"] == "" {
		t.Fatal("the migrated profile's session restore data or Widevine hint is not blocked")
	}
	delete(after, "Default/Sessions")
	delete(after, "Default/Sessions_Encrypted")
	delete(after, "WidevineCdm")
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("the migrated profile differs from the old one:\nbefore %v\nafter  %v", before, after)
	}
	got, err := os.ReadFile(filepath.Join(p.Dir(), "Default", "Network", "Cookies"))
	if err != nil || string(got) != string(cookies) {
		t.Fatalf("cookie bytes changed in the move (err %v)", err)
	}
}

func TestMigrateRefused(t *testing.T) {
	exdev := func(oldpath, newpath string) error {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: syscall.EXDEV}
	}
	host, _ := os.Hostname()
	for _, c := range []struct {
		name   string
		setup  func(t *testing.T, root, old, dataDir string) // prepares the refusal
		rename func(oldpath, newpath string) error
		reason MigrationReason
		detail string
	}{
		{"target exists", func(t *testing.T, root, old, dataDir string) {
			p := openT(t, dataDir)
			writeFile(t, filepath.Join(p.Dir(), "Default", "Network", "Cookies"), sqliteImage(1024, 2))
			p.Close()
		}, nil, NotMigratedTargetExists, "already exists"},
		{"empty target dir exists", func(t *testing.T, root, old, dataDir string) {
			if err := os.MkdirAll(filepath.Join(dataDir, "profile"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, nil, NotMigratedTargetExists, "already exists"},
		{"old lock held", func(t *testing.T, root, old, dataDir string) {
			unlock, err := lockfile.Lock(filepath.Join(filepath.Dir(old), "profile.lock"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(unlock)
		}, nil, NotMigratedInUse, "held by pid " + strconv.Itoa(os.Getpid())},
		{"Chromium running on it", func(t *testing.T, root, old, dataDir string) {
			if err := os.Symlink(fmt.Sprintf("%s-%d", host, os.Getpid()), filepath.Join(old, "SingletonLock")); err != nil {
				t.Fatal(err)
			}
		}, nil, NotMigratedInUse, "Chromium pid " + strconv.Itoa(os.Getpid())},
		{"Chromium on another host", func(t *testing.T, root, old, dataDir string) {
			if err := os.Symlink("elsewhere.example-1", filepath.Join(old, "SingletonLock")); err != nil {
				t.Fatal(err)
			}
		}, nil, NotMigratedInUse, "elsewhere.example"},
		{"other filesystem (injected EXDEV)", nil, exdev, NotMigratedOtherFilesystem, "different filesystems"},
		{"not a headless profile", func(t *testing.T, root, old, dataDir string) {
			if err := os.Remove(filepath.Join(old, markerName)); err != nil {
				t.Fatal(err)
			}
		}, nil, NotMigratedUnhealthy, "no headless-profile.json marker"},
		{"a symlink", func(t *testing.T, root, old, dataDir string) {
			real := filepath.Join(root, "real-profile")
			if err := os.Rename(old, real); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, old); err != nil {
				t.Fatal(err)
			}
		}, nil, NotMigratedUnhealthy, "not a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			old := legacyProfile(t, root)
			dataDir := filepath.Join(root, "data")
			if c.setup != nil {
				c.setup(t, root, old, dataDir)
			}
			before := snapshot(t, filepath.Dir(old))
			var target map[string]string
			if _, err := os.Stat(profDir(dataDir)); err == nil {
				target = snapshot(t, profDir(dataDir))
			}
			p, err := Open(Options{Dir: profDir(dataDir), Lock: lockPath(dataDir), Now: clock, Legacy: []string{old}, rename: c.rename})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			m := p.Migration()
			if m.From != "" || len(m.NotMigrated) != 1 {
				t.Fatalf("Migration = %+v, want one left in place", m)
			}
			l := m.NotMigrated[0]
			if l.Path != old || l.Reason != c.reason || !strings.Contains(l.Detail, c.detail) {
				t.Fatalf("left in place: %+v, want reason %s with %q", l, c.reason, c.detail)
			}
			if after := snapshot(t, filepath.Dir(old)); !reflect.DeepEqual(before, after) {
				t.Fatalf("the old profile changed:\nbefore %v\nafter  %v", before, after)
			}
			if target != nil && !strings.Contains(c.name, "empty") {
				if after := snapshot(t, p.Dir()); !reflect.DeepEqual(target, after) {
					t.Fatalf("the existing profile changed")
				}
			} else if target == nil {
				checkFresh(t, p.Dir())
			}
		})
	}
}

// TestMigrateAcrossFilesystems: a real rename from /dev/shm (tmpfs) into the data dir (the
// temp dir's filesystem) fails EXDEV, and the profile is left in place rather than copied.
func TestMigrateAcrossFilesystems(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "headless-migrate-test-")
	if err != nil {
		t.Fatalf("this test needs /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	root := t.TempDir()
	var a, b syscall.Stat_t
	if err := syscall.Stat(shm, &a); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(root, &b); err != nil {
		t.Fatal(err)
	}
	if a.Dev == b.Dev {
		t.Fatalf("/dev/shm and %s are one filesystem here: the test proves nothing", root)
	}
	old := legacyProfile(t, shm)
	before := snapshot(t, old)
	p, err := Open(Options{Dir: profDir(filepath.Join(root, "data")), Lock: lockPath(filepath.Join(root, "data")), Now: clock, Legacy: []string{old}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	m := p.Migration()
	if m.From != "" || len(m.NotMigrated) != 1 || m.NotMigrated[0].Reason != NotMigratedOtherFilesystem {
		t.Fatalf("Migration = %+v, want other_filesystem", m)
	}
	if after := snapshot(t, old); !reflect.DeepEqual(before, after) {
		t.Fatal("the old profile changed")
	}
	checkFresh(t, p.Dir())
}
