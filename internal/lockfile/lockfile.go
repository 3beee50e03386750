// Package lockfile is a crash-released exclusive lock on a file: github.com/gofrs/flock with the
// open flags and the owner's pid that headless needs.
//
// # Security contract
//
// [Lock] takes flock(LOCK_EX|LOCK_NB) on a lock file created 0600 and writes the owner's pid
// into it; [Wait] takes the same lock blocking, without a pid (writers that queue up, such as
// the audit log's). The kernel releases a flock when the owner exits, however it exits
// (SIGKILL included), so a crash never leaves a stale lock. The pid in the file is
// informational (for messages such as PROFILE_LOCKED and BROKER_RUNNING); the flock is the lock.
//
// gofrs/flock opens the file with O_CREATE|O_RDONLY and follows symlinks by default; every lock
// here is opened with O_NOFOLLOW (a symlink planted at the path is refused, never followed) and
// O_CLOEXEC (no child inherits it), read-write so the pid can be written, and the pid is written
// only through a file that is checked to be the one locked.
//
// # Not guaranteed
//
// flock is advisory: it excludes other lockers, not readers or writers that do not lock. The pid
// can be stale or forged by any same-user process; never act on it beyond naming it.
package lockfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// HeldError reports that another process holds the lock.
type HeldError struct {
	Path string
	PID  int // 0 when unknown
}

func (e *HeldError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%s is held by pid %d", e.Path, e.PID)
	}
	return fmt.Sprintf("%s is held by another process", e.Path)
}

// ErrHeld is matched by errors.Is for a *HeldError.
var ErrHeld = errors.New("lock is held")

func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// flags every lock file is opened with (gofrs/flock.SetFlag).
const (
	openFlags     = os.O_RDWR | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
	existingFlags = os.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
)

func newFlock(path string, flags int) *flock.Flock {
	return flock.New(path, flock.SetFlag(flags), flock.SetPermissions(0o600))
}

// Lock takes the lock at path without blocking (a held lock is a *HeldError naming the owner's
// pid) and writes this process's pid into the file. unlock releases it; the file itself is left
// in place (removing it would race with a new owner).
func Lock(path string) (unlock func(), err error) {
	fl := newFlock(path, openFlags|os.O_CREATE)
	if err := try(fl); err != nil {
		return nil, err
	}
	// gofrs/flock keeps its descriptor to itself: write the pid through a second one, after
	// checking that it is the very file locked (not one renamed over the path meanwhile).
	pidf, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err == nil {
		locked, serr := fl.Stat()
		mine, merr := pidf.Stat()
		if serr != nil || merr != nil || !os.SameFile(locked, mine) {
			pidf.Close()
			pidf = nil
		}
	} else {
		pidf = nil
	}
	if pidf != nil && pidf.Truncate(0) == nil {
		pidf.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		if pidf != nil {
			pidf.Truncate(0)
			pidf.Close()
		}
		fl.Unlock()
	}, nil
}

// LockExisting takes the lock at path without blocking, without creating the file or writing to
// it (for a lock that belongs to another layout); a missing file is an error wrapping
// fs.ErrNotExist. unlock releases the lock.
func LockExisting(path string) (unlock func(), err error) {
	fl := newFlock(path, existingFlags)
	if err := try(fl); err != nil {
		return nil, err
	}
	return func() { fl.Unlock() }, nil
}

// Wait takes the lock at path, creating the file 0600, waiting until it is free, at most d
// (then a *HeldError: a process that holds it that long is stuck, or hostile). It writes no
// pid: it is for short critical sections that queue up (one audit append at a time).
func Wait(path string, d time.Duration) (unlock func(), err error) {
	fl := newFlock(path, openFlags|os.O_CREATE)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		return nil, &HeldError{Path: path, PID: readPID(path)}
	}
	return func() { fl.Unlock() }, nil
}

// WaitExisting is [Wait] on a lock file that must exist, without creating it or writing to it
// (a reader that must not race the writers of a file, the audit log's verify); a missing file is
// an error wrapping fs.ErrNotExist.
func WaitExisting(path string, d time.Duration) (unlock func(), err error) {
	if _, err := os.Lstat(path); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	fl := newFlock(path, existingFlags)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		return nil, &HeldError{Path: path, PID: readPID(path)}
	}
	return func() { fl.Unlock() }, nil
}

// try takes fl's lock without blocking.
func try(fl *flock.Flock) error {
	ok, err := fl.TryLock()
	if err != nil {
		return fmt.Errorf("lock %s: %w", fl.Path(), err)
	}
	if !ok {
		return &HeldError{Path: fl.Path(), PID: readPID(fl.Path())}
	}
	return nil
}

// readPID reads the owner's pid from the lock file, 0 when there is none.
func readPID(path string) int {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Owner reads the pid recorded in the lock file at path without taking the lock (0 when there
// is none). The process may have exited since; check that it lives.
func Owner(path string) int { return readPID(path) }
