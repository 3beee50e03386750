package profile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/lockfile"
)

// MigrationReason says why a profile of an older layout was left where it is.
type MigrationReason string

// Reasons a profile of an older layout is not moved.
const (
	// NotMigratedTargetExists: the durable profile already exists; two profiles are never
	// merged, and the one in place is never replaced.
	NotMigratedTargetExists MigrationReason = "target_exists"
	// NotMigratedInUse: its lock is held, or its Chromium SingletonLock names a live process
	// (or another host, which cannot be checked).
	NotMigratedInUse MigrationReason = "in_use"
	// NotMigratedOtherFilesystem: it lives on another filesystem than the data directory.
	// A move there would be a copy, which is neither atomic nor bounded: it is never done.
	NotMigratedOtherFilesystem MigrationReason = "other_filesystem"
	// NotMigratedUnhealthy: it fails the profile check (not ours, or corrupt).
	NotMigratedUnhealthy MigrationReason = "unhealthy"
	// NotMigratedFailed: it could not be inspected or renamed for another reason.
	NotMigratedFailed MigrationReason = "failed"
)

// LegacyProfile is a profile of an older layout that Open left in place.
type LegacyProfile struct {
	Path   string          `json:"path"`
	Reason MigrationReason `json:"reason"`
	Detail string          `json:"detail,omitempty"`
}

// Migration says what Open did with profiles of older layouts.
type Migration struct {
	From        string          // the older-layout profile renamed into place; "" when none
	NotMigrated []LegacyProfile // older-layout profiles left in place, and why
}

// migrate moves the first movable profile of legacy into p.dir, when p.dir does not exist and
// the move is safe, and records every other one in the report. It runs under the profile lock
// before the profile is checked or created, so a migrated profile is checked like any other.
// Each candidate costs a few stats, a bounded profile check and one rename: never a copy.
func (p *Profile) migrate(dataDir string, legacy []string, rename func(oldpath, newpath string) error) {
	seen := map[string]bool{}
	for _, old := range legacy {
		if old == "" || !filepath.IsAbs(old) {
			continue
		}
		old = filepath.Clean(old)
		if old == p.dir || seen[old] {
			continue
		}
		seen[old] = true
		fi, err := os.Lstat(old)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		keep := func(reason MigrationReason, format string, a ...any) {
			p.migr.NotMigrated = append(p.migr.NotMigrated, LegacyProfile{Path: old, Reason: reason, Detail: fmt.Sprintf(format, a...)})
		}
		if err != nil {
			keep(NotMigratedFailed, "%v", err)
			continue
		}
		if _, err := os.Lstat(p.dir); err == nil {
			keep(NotMigratedTargetExists, "%s already exists", p.dir)
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			keep(NotMigratedFailed, "%v", err)
			continue
		}
		release, err := holdLegacy(old)
		if err != nil {
			keep(NotMigratedInUse, "%v", err)
			continue
		}
		reason, err := check(old, fi)
		if err != nil || reason != "" {
			release()
			if err != nil {
				reason = err.Error()
			}
			keep(NotMigratedUnhealthy, "%s", reason)
			continue
		}
		err = rename(old, p.dir)
		release()
		switch {
		case errors.Is(err, syscall.EXDEV):
			keep(NotMigratedOtherFilesystem, "%s and %s are on different filesystems; move it yourself while headless is stopped", old, dataDir)
			continue
		case errors.Is(err, fs.ErrExist), errors.Is(err, syscall.ENOTEMPTY):
			keep(NotMigratedTargetExists, "%s already exists", p.dir)
			continue
		case err != nil:
			keep(NotMigratedFailed, "%v", err)
			continue
		}
		atomicfile.SyncDir(dataDir)
		atomicfile.SyncDir(filepath.Dir(old))
		p.migr.From = old
	}
}

// holdLegacy makes sure nothing uses the profile at old and keeps it that way until release:
// it takes the old layout's lock (the sibling profile.lock, when it exists; it is never
// created) and checks Chromium's SingletonLock in the profile.
func holdLegacy(old string) (release func(), err error) {
	lock := filepath.Join(filepath.Dir(old), "profile.lock")
	release, err = lockfile.LockExisting(lock)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		release = func() {}
	case err != nil:
		return nil, err // a *lockfile.HeldError names the holder
	}
	if err := singletonFree(old); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// singletonFree checks Chromium's SingletonLock in a profile: a symlink to "HOSTNAME-PID" that
// Chromium keeps while it runs. A stale one (this host, no such process) is no use.
func singletonFree(dir string) error {
	path := filepath.Join(dir, "SingletonLock")
	target, err := os.Readlink(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		if _, serr := os.Lstat(path); serr == nil {
			return fmt.Errorf("%s is not a symlink, so who uses the profile cannot be told", path)
		}
		return fmt.Errorf("read %s: %w", path, err)
	}
	i := strings.LastIndexByte(target, '-')
	pid, perr := strconv.Atoi(target[i+1:])
	if i <= 0 || perr != nil || pid <= 0 {
		return fmt.Errorf("%s points to %q, which names no process", path, target)
	}
	host, _ := os.Hostname()
	if target[:i] != host {
		return fmt.Errorf("Chromium on host %q may use it (SingletonLock), which cannot be checked from %q", target[:i], host)
	}
	if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
		return fmt.Errorf("Chromium pid %d uses it (SingletonLock)", pid)
	}
	return nil
}
