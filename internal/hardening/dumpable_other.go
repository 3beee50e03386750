//go:build !linux

package hardening

import (
	"errors"
	"io/fs"
	"os"
)

// Undumpable does nothing on this system: there is no PR_SET_DUMPABLE. (macOS keeps
// same-user debuggers out only for hardened-runtime binaries.)
func Undumpable() error { return nil }

// Dumpable reports true: this system offers no check.
func Dumpable() (bool, error) { return true, errors.New("no PR_GET_DUMPABLE on this system") }

// MemoryOpen reports false: there is no /proc/PID/mem here. (On macOS reading another
// process's memory takes task_for_pid, which the system refuses an unprivileged process for
// any process but its own children run under a debugger entitlement.)
func MemoryOpen(pid int) (bool, error) { return false, nil }

// MemoryOpenAs is MemoryOpen here.
func MemoryOpenAs(pid, gid int) (bool, error) { return MemoryOpen(pid) }

// WithFSGID runs f: there is no filesystem gid here.
func WithFSGID(gid int, f func() error) error { return f() }

// AsUser runs f.
func AsUser(f func()) { f() }

// DropGroup does nothing here.
func DropGroup() error { return nil }

// TakeGroup fails here: no set-gid identity is used on this system.
func TakeGroup() (int, error) { return os.Getgid(), errors.New("no set-gid identity on this system") }

// openPath has no O_PATH here: a file that cannot be read cannot be looked at.
func openPath(path string) (*os.File, error) {
	return nil, &os.PathError{Op: "open", Path: path, Err: fs.ErrPermission}
}

// UserGID is the real gid here.
func UserGID() int { return os.Getgid() }

// NoCoreDumps does nothing here.
func NoCoreDumps() error { return nil }
