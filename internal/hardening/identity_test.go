package hardening

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckStateDir: only a root-owned, sticky directory of the broker group that others may
// not search is accepted; a symlink to one, a missing one, another owner, group or mode is
// refused with a reason that names the install.
func TestCheckStateDir(t *testing.T) {
	const gid = 4321 // any group: the check compares numbers
	dir := t.TempDir()
	good := filepath.Join(dir, "state")
	if err := os.Mkdir(good, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() != 0 {
		// Only root can make the directory as the install does; as anyone else the user's
		// own directory is what must be refused.
		if err := CheckStateDir(good, os.Getgid()); err == nil || !strings.Contains(err.Error(), "not root") {
			t.Fatalf("a directory of uid %d: %v", os.Getuid(), err)
		}
		return
	}
	set := func(t *testing.T, uid, g int, mode os.FileMode) {
		t.Helper()
		if err := os.Chown(good, uid, g); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(good, mode); err != nil {
			t.Fatal(err)
		}
	}
	set(t, 0, gid, 0o770|os.ModeSticky)
	if err := CheckStateDir(good, gid); err != nil {
		t.Fatalf("the directory as installed: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		uid, gid   int
		mode       os.FileMode
		path, want string
	}{
		{"a symlink to it", 0, gid, 0o770 | os.ModeSticky, link, "not a directory"},
		{"missing", 0, gid, 0o770 | os.ModeSticky, filepath.Join(dir, "none"), "no such file"},
		{"owned by a user", 1000, gid, 0o770 | os.ModeSticky, good, "owned by uid 1000"},
		{"another group", 0, gid + 1, 0o770 | os.ModeSticky, good, "not headless-broker"},
		{"searchable by others", 0, gid, 0o771 | os.ModeSticky, good, "mode 1771"},
		{"not sticky", 0, gid, 0o770, good, "mode 0770"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set(t, tc.uid, tc.gid, tc.mode)
			err := CheckStateDir(tc.path, gid)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "install") {
				t.Fatalf("CheckStateDir = %v, want an error naming %q and the install", err, tc.want)
			}
		})
	}
}
