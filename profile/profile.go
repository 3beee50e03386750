// Package profile owns the durable Chromium profile: its location, its lock, its creation,
// its health check and the settings that keep Chromium's own password manager off.
//
// # Security contract
//
// The durable profile is the Chromium user-data-dir $XDG_DATA_HOME/headless/profile (default
// ~/.local/share/headless/profile; internal/xdg names it and its lock). [Open] guarantees, before it returns a [Profile]:
//
//   - One owner. The data directory is ours and 0700; the profile is owned through a
//     non-blocking flock on the sibling file profile.lock, which the kernel releases when the
//     owner exits however it exits. A second owner, in this process or another, gets a
//     [*LockedError] ([ErrLocked]) naming the owner's pid and the remedy (an isolated
//     session). Every change below happens under the lock.
//   - Atomic creation. A new profile is built in a temporary sibling (.profile.tmp-*), every
//     file written temp → fsync → rename, and renamed into place only when complete. A crash
//     leaves only the temporary sibling, which the next Open removes; the profile path never
//     holds a half-made profile.
//   - The cookie key is pinned to the Secret Service. The marker file headless-profile.json
//     records password_store "gnome-libsecret", and [Profile.ChromiumArgs] passes exactly that
//     to Chromium. Never "basic": with it Chromium encrypts cookies with a key every program
//     knows.
//   - Nothing is silently deleted. A profile that fails the check (no marker or another
//     password store, which marks it foreign; Local State or Preferences that are not JSON
//     objects; a cookie database without a sane SQLite header) is renamed, whole, to
//     profile.corrupt-<UTC time> beside it, a fresh one is created, and [Profile.Report]
//     says so and why.
//   - Chromium's password saving is off. Every Open re-asserts the preferences that turn off
//     saving, auto sign-in, automatic passkey upgrades, automated password change and leak
//     detection in Default/Preferences (an atomic rewrite that keeps every other key; no write
//     when they already hold), because Chromium rewrites that file.
//   - Migration is one rename or nothing. A profile of an older layout (Options.Legacy) is
//     moved into place only when the profile path does not exist (RENAME_NOREPLACE), the old
//     profile is not in use (its profile.lock can be taken and held across the rename, and its
//     Chromium SingletonLock names no live process), it passes the same check as any profile,
//     and it is on the same filesystem (EXDEV means no: it is never copied). Otherwise it is
//     left untouched and [Profile.Migration] says why, with a [MigrationReason].
//   - Clearing never leaves a half-cleared profile. [Profile.Clear], under the lock, builds a
//     fresh profile as Open does and swaps it with the old one in one atomic rename
//     (RENAME_EXCHANGE), then removes the old one; on failure the profile path holds the old
//     profile or the fresh one, complete, and the error says which.
//   - The blockers stay blockers while a browser runs: [Profile.Guard], started before each
//     launch, watches WidevineCdm, Default/Sessions and Sessions_Encrypted and every directory
//     on the way to them that the user can rename (inotify), and [Guard.Tampered] names any
//     change to them, a queue overflow included.
//
// # Not guaranteed
//
// The check is a structural sanity check, not an integrity proof: a well-formed but
// semantically broken database passes (an empty cookie file counts as an empty database), and
// Chromium repairs or discards what it cannot read. A profile whose marker has a newer version
// is neither used nor moved: Open fails and asks for a newer headless. The in-use check of an
// older-layout profile sees headless's lock and Chromium's SingletonLock, not every process
// that might have files open in it. Clear removes the durable profile only: profiles moved
// aside as corrupt are kept, and the Secret Service (cookie key, saved credentials) is not
// touched.
// Preferences are plain files: a same-user process can change them while Chromium runs; they
// are re-asserted only at the next Open. Enterprise policy (/etc/chromium/policies) overrides
// them.
//
// The launch gate is not here: Chromium encrypts cookies with a key it keeps in the Secret
// Service, and one launch without it deletes every encrypted cookie row for good, so the caller
// (package host) must refuse to launch the durable profile unless keyprobe.Check passes, and
// must launch Chromium on the same bus address it checked.
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
