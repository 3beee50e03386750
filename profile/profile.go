// Package profile owns the durable Chromium profile (internal/xdg names it and its lock): its
// lock, its creation, its health check and the settings that keep Chromium's own password
// manager off.
//
// # Guarantees ([Open] gives them before it returns a [Profile])
//
//   - One owner: a flock on profile.lock, released by the kernel however the owner exits; a
//     second owner gets a [*LockedError] naming the first's pid. Every change is under it.
//   - Atomic creation and clearing: a profile is built in a temporary sibling and renamed into
//     place complete ([Profile.Clear] swaps with RENAME_EXCHANGE); the path never holds half of one.
//   - The cookie key is pinned to the Secret Service (password_store "gnome-libsecret" in the
//     marker and in [Profile.ChromiumArgs]), never "basic".
//   - Nothing is silently deleted: a profile that fails the check is moved aside whole
//     (profile.corrupt-<time>) and [Profile.Report] says why; an older layout is migrated by
//     one rename or not at all ([Profile.Migration] says why: migrate.go).
//   - Chromium's password saving, auto sign-in and passkey upgrades are off, re-asserted in
//     Default/Preferences at every Open (prefs.go).
//   - [Profile.Guard] names any change to the blockers (WidevineCdm, Default/Sessions) while a
//     browser runs (guard_linux.go).
//
// # Not guaranteed
//
// The check is structural, not an integrity proof. Preferences are plain files a same-user
// process can change while Chromium runs (re-asserted at the next Open); enterprise policy
// overrides them. The launch gate is the caller's: one launch without the Secret Service
// deletes every encrypted cookie, so package host launches only after keyprobe.Check passes.
package profile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/headless-dev/headless/internal/lockfile"
)

// EnsurePrivateDir creates dir (and missing parents) and checks that dir is a directory we
// own with mode 0700, tightening a looser mode of our own directory.
func EnsurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is not a directory owned by uid %d", dir, os.Getuid())
	}
	if fi.Mode().Perm() != 0o700 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// Lock takes the profile lock at path (Layout.ProfileLock), creating its directory private.
// The returned unlock releases it. [Open] takes it too; use Lock only to hold the profile
// without opening it.
func Lock(path string) (unlock func(), err error) {
	if err := EnsurePrivateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return lockfile.Lock(path)
}
