package profile

import (
	"errors"
	"io/fs"
	"os"

	"github.com/headless-dev/headless/internal/lockfile"
)

// Facts is what [Inspect] saw of the durable profile.
type Facts struct {
	Exists bool
	// Problem is why the next Open would move the profile aside (or, for a marker of a newer
	// headless, refuse it); "" when it passes the check.
	Problem string
	// LockPID is the pid recorded in the profile lock when that process is alive (0: no owner
	// recorded, or it is gone).
	LockPID int
}

// Inspect looks at the profile dir and its lock file read-only, for a doctor: it runs the
// same structural check as [Open] (marker, Local State, Preferences, cookie database headers)
// without taking the lock, moving, creating or changing anything. alive reports whether a pid
// is a live process.
func Inspect(dir, lock string, alive func(int) bool) Facts {
	var f Facts
	if pid := lockfile.Owner(lock); pid > 0 && alive(pid) {
		f.LockPID = pid
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return f
	}
	f.Exists = true
	if err != nil {
		f.Problem = "cannot be looked at: " + err.Error()
		return f
	}
	reason, err := check(dir, fi)
	switch {
	case err != nil:
		f.Problem = err.Error()
	default:
		f.Problem = reason
	}
	return f
}
