package profile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/lockfile"
	"github.com/headless-dev/headless/internal/wire"
)

// PasswordStore is the only password store a durable profile is launched with.
const PasswordStore = "gnome-libsecret"

// Names inside the data directory.
const (
	tempPrefix    = ".profile.tmp-"    // a profile being created
	corruptPrefix = "profile.corrupt-" // a profile moved aside
	markerName    = "headless-profile.json"
	markerVersion = 1
)

// ErrLocked is matched by errors.Is for a [*LockedError].
var ErrLocked = wire.Sentinel(wire.CodeProfileLocked, "profile is locked")

// LockedError reports that another owner holds the profile lock.
type LockedError struct {
	PID int // the owner's pid; 0 when unknown
	err error
}

func (e *LockedError) Error() string {
	owner := "another process"
	if e.PID > 0 {
		owner = fmt.Sprintf("pid %d", e.PID)
	}
	return fmt.Sprintf("profile is locked by %s: use 'headless session create NAME --isolated' for a separate browser", owner)
}

// Is matches ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// WireCode is PROFILE_LOCKED.
func (e *LockedError) WireCode() wire.Code { return wire.CodeProfileLocked }

// Unwrap returns the underlying lock error (a *lockfile.HeldError).
func (e *LockedError) Unwrap() error { return e.err }

// Options configure Open.
type Options struct {
	// Dir is the absolute profile directory (internal/xdg's Layout.Profile); the data
	// directory is its parent, which holds its temporary and moved-aside siblings. Required.
	Dir string
	// Lock is the absolute path of the profile's lock file (Layout.ProfileLock). Required.
	Lock string
	// Now is the clock for the marker and the moved-aside names; default time.Now.
	Now func() time.Time
	// Legacy lists profile directories of older layouts (Layout.LegacyProfiles). When the profile
	// does not exist yet, the first one that can be moved safely is renamed into place;
	// the others are left where they are and listed in [Migration.NotMigrated].
	Legacy []string

	rename   func(oldpath, newpath string) error // tests inject failures; default renameNoReplace
	exchange func(a, b string) error             // tests inject failures; default exchange
}

// Report says what Open did to the profile directory.
type Report struct {
	Created    bool   // a fresh profile was created
	MovedAside string // path the previous profile was renamed to; "" when none
	Reason     string // why it was moved aside; "" when it was not
}

// Profile is an open, locked durable profile. Close releases the lock.
type Profile struct {
	dir      string
	dataDir  string
	pid      int
	report   Report
	migr     Migration
	now      func() time.Time
	exchange func(a, b string) error

	closeOnce sync.Once
	unlock    func()
}

// Open takes the profile lock o.Lock and makes sure o.Dir is a healthy
// headless profile with Chromium's password saving off: it creates one when there is none,
// moves a foreign or corrupt one aside and creates a fresh one, and removes leftovers of an
// interrupted creation. Call Open before every launch of the durable profile and keep the
// Profile open (the lock held) while Chromium runs.
//
// A profile fails the check when it has no marker or another password store (foreign), when
// Local State or Preferences are not JSON objects, or when its cookie database lacks a sane
// SQLite header; a marker of a newer version is neither used nor moved (Open fails). A profile
// of an older layout (o.Legacy) is moved into place only when the profile path does not exist
// (RENAME_NOREPLACE), it is not in use (its profile.lock is held across the rename, and its
// SingletonLock names no live process), it passes the check, and it is on the same filesystem
// (never copied); else it is left untouched.
//
// When another owner holds the lock Open returns a [*LockedError]. An error from Open leaves
// the lock released.
func Open(o Options) (*Profile, error) {
	if o.Dir == "" || !filepath.IsAbs(o.Dir) || filepath.Clean(o.Dir) == "/" {
		return nil, fmt.Errorf("open profile: profile directory %q is not an absolute path", o.Dir)
	}
	if o.Lock == "" || !filepath.IsAbs(o.Lock) {
		return nil, fmt.Errorf("open profile: lock file %q is not an absolute path", o.Lock)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.rename == nil {
		o.rename = renameNoReplace
	}
	if o.exchange == nil {
		o.exchange = exchange
	}
	dir := filepath.Clean(o.Dir)
	dataDir := filepath.Dir(dir)
	if err := EnsurePrivateDir(dataDir); err != nil {
		return nil, fmt.Errorf("open profile: %w", err)
	}
	unlock, err := Lock(o.Lock)
	if err != nil {
		var held *lockfile.HeldError
		if errors.As(err, &held) {
			return nil, &LockedError{PID: held.PID, err: err}
		}
		return nil, fmt.Errorf("lock profile: %w", err)
	}
	p := &Profile{dir: dir, dataDir: dataDir, pid: os.Getpid(), now: o.Now, exchange: o.exchange, unlock: unlock}
	if err := p.prepare(dataDir, o); err != nil {
		unlock()
		return nil, fmt.Errorf("open profile: %w", err)
	}
	return p, nil
}

// prepare runs under the lock.
func (p *Profile) prepare(dataDir string, o Options) error {
	now := o.Now
	if err := removeTemps(dataDir); err != nil {
		return err
	}
	p.migrate(dataDir, o.Legacy, o.rename)
	fresh := false
	fi, err := os.Lstat(p.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fresh = true
	case err != nil:
		return err
	default:
		reason, err := check(p.dir, fi)
		if err != nil {
			return err
		}
		if reason == "" {
			if fi.Mode().Perm() != 0o700 {
				if err := os.Chmod(p.dir, 0o700); err != nil {
					return err
				}
			}
			break
		}
		dst, err := moveAside(dataDir, p.dir, now())
		if err != nil {
			return fmt.Errorf("move aside a profile that failed the check (%s): %w", reason, err)
		}
		p.report.MovedAside, p.report.Reason = dst, reason
		fresh = true
	}
	if fresh {
		if err := create(dataDir, p.dir, now()); err != nil {
			return err
		}
		p.report.Created = true
	}
	return reassertPrefs(p.dir)
}

// Reassert makes sure, again, right before each launch of Chromium (a relaunch after a crash
// included), of what Open makes sure of: Chromium's password saving off, no session restore
// data, and nothing planted in the profile since that routes the browser or runs as a site
// (red-team round 6c planted a service worker, and a chrome://flags entry, between a crash
// and the relaunch).
func (p *Profile) Reassert() error { return reassertPrefs(p.dir) }

// Reblock makes sure, again, that Chromium can write no session restore data
// (Default/Sessions a regular empty read-only file; a directory found there is removed with
// the data in it). The host calls it before every sign-in: a same-user process may have
// removed the file since the start.
func (p *Profile) Reblock() error { return blockSessions(p.dir) }

// Dir is the profile directory, Chromium's --user-data-dir.
func (p *Profile) Dir() string { return p.dir }

// Report says what Open did: created a profile, moved a previous one aside, and why.
func (p *Profile) Report() Report { return p.report }

// Migration says what Open did with profiles of older layouts.
func (p *Profile) Migration() Migration {
	m := p.migr
	m.NotMigrated = append([]LegacyProfile(nil), m.NotMigrated...)
	return m
}

// LockOwner is the pid that holds the profile lock: this process while p is open.
func (p *Profile) LockOwner() int { return p.pid }

// Close releases the lock. It is safe to call more than once. Call it after Chromium exited.
func (p *Profile) Close() { p.closeOnce.Do(p.unlock) }

// ChromiumArgs returns the profile's Chromium flags, exactly: --user-data-dir,
// --profile-directory=Default and --password-store=gnome-libsecret. Chromium 156 has no
// command-line switch that turns off its password manager or the save-password bubble; the
// preferences that Open re-asserts do, in Default/ — so Default it is: without the flag
// Chromium opens the profile Local State names as last used, which any process of the user
// could point at a directory of its own with password saving on (a second reviewer's finding).
func (p *Profile) ChromiumArgs() []string {
	return []string{"--user-data-dir=" + p.dir, "--profile-directory=Default", "--password-store=" + PasswordStore}
}

// removeTemps removes leftovers of interrupted creations. They are ours (our prefix, in our
// 0700 directory, and we hold the lock) and incomplete.
func removeTemps(dataDir string) error {
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		// RemoveAll does not follow a symlink; it removes the link.
		if err := os.RemoveAll(filepath.Join(dataDir, e.Name())); err != nil {
			return fmt.Errorf("remove interrupted creation: %w", err)
		}
	}
	return nil
}

// moveAside renames dir to profile.corrupt-<UTC time> in dataDir, adding a counter when
// that name is taken, and returns the new path.
func moveAside(dataDir, dir string, now time.Time) (string, error) {
	base := filepath.Join(dataDir, corruptPrefix+now.UTC().Format("20060102T150405Z"))
	for i := 1; i <= 1000; i++ {
		dst := base
		if i > 1 {
			dst = fmt.Sprintf("%s-%d", base, i)
		}
		// We hold the lock and own dataDir: nothing else creates names here between the
		// check and the rename.
		if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := os.Rename(dir, dst); err != nil {
			return "", err
		}
		return dst, atomicfile.SyncDir(dataDir)
	}
	return "", fmt.Errorf("too many profiles moved aside at %s", base)
}

// create builds a fresh profile in a temporary sibling and renames it into place.
func create(dataDir, dir string, now time.Time) error {
	tmp, err := buildTemp(dataDir, now)
	if err != nil {
		return err
	}
	if err := install(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	return atomicfile.SyncDir(dataDir)
}

// buildTemp writes a complete new profile into a temporary sibling and returns its path.
func buildTemp(dataDir string, now time.Time) (tmp string, err error) {
	made, err := os.MkdirTemp(dataDir, tempPrefix)
	if err != nil {
		return "", fmt.Errorf("create profile: %w", err)
	}
	tmp = made
	defer func() {
		if err != nil {
			// made, not tmp: a failed return sets tmp to "" before this runs.
			os.RemoveAll(made)
			err = fmt.Errorf("create profile: %w", err)
		}
	}()
	if err := os.Chmod(tmp, 0o700); err != nil {
		return "", err
	}
	m, err := newMarker(now)
	if err != nil {
		return "", err
	}
	if err := atomicfile.Write(filepath.Join(tmp, markerName), m); err != nil {
		return "", err
	}
	def := filepath.Join(tmp, "Default")
	if err := os.Mkdir(def, 0o700); err != nil {
		return "", err
	}
	prefs, err := setPasswordPrefs(nil)
	if err != nil {
		return "", err
	}
	if err := atomicfile.Write(filepath.Join(def, "Preferences"), prefs); err != nil {
		return "", err
	}
	if err := atomicfile.SyncDir(def); err != nil {
		return "", err
	}
	return tmp, atomicfile.SyncDir(tmp)
}

// install renames a complete temporary profile to dir, which must not exist.
func install(tmp, dir string) error {
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("install profile: %s appeared during creation", dir)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("install profile: %w", err)
	}
	return nil
}
