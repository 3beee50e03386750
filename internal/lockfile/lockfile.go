// Package lockfile is a non-blocking, crash-released exclusive lock on a file.
//
// # Security contract
//
// [Lock] takes flock(LOCK_EX|LOCK_NB) on a sibling lock file created 0600 and writes the owner's
// pid into it. The kernel releases the lock when the owner exits, however it exits, so a crash
// never leaves a stale lock. The pid in the file is informational (for messages); the flock is
// the lock.
package lockfile

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
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

// Lock takes the lock at path. unlock releases it; the file itself is left in place (removing
// it would race with a new owner).
func Lock(path string) (unlock func(), err error) {
	f, err := open(path, os.O_CREATE)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		f.Truncate(0)
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// LockExisting takes the lock at path without creating the file or writing to it (for a lock
// that belongs to another layout); a missing file is an error wrapping fs.ErrNotExist.
// Closing the returned unlock releases the lock.
func LockExisting(path string) (unlock func(), err error) {
	f, err := open(path, 0)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

// open opens path (never through a symlink) and takes flock(LOCK_EX|LOCK_NB) on it.
func open(path string, flags int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|flags|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &HeldError{Path: path, PID: readPID(f)}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
