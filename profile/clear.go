package profile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/wire"
)

// ErrClear is matched by errors.Is for a [*ClearError].
var ErrClear = wire.Sentinel(wire.CodeProfileClear, "profile clear failed")

// ClearError reports a failed [Profile.Clear]. Either way the profile path holds a complete,
// usable profile: the old one when Cleared is false, a fresh one when it is true (and only
// removing the old copy failed; the next Open removes it).
type ClearError struct {
	Cleared bool
	err     error
}

func (e *ClearError) Error() string {
	if e.Cleared {
		return fmt.Sprintf("the profile was replaced by a fresh one, but removing the old copy failed (the next start removes it): %v", e.err)
	}
	return fmt.Sprintf("the profile was not cleared and is unchanged: %v", e.err)
}

// Is matches ErrClear.
func (e *ClearError) Is(target error) bool { return target == ErrClear }

// WireCode is PROFILE_CLEAR_FAILED.
func (e *ClearError) WireCode() wire.Code { return wire.CodeProfileClear }

// Unwrap returns the failure.
func (e *ClearError) Unwrap() error { return e.err }

// Clear replaces the profile with a fresh one, exactly as Open creates it (the marker pinning
// the cookie key to the Secret Service, Preferences with Chromium's password saving off), and
// removes the old one with every cookie, storage, cache and history file in it. Chromium must
// not be running on the profile; p must be open (the lock held), and stays open.
//
// The fresh profile is built in a temporary sibling and swapped with the old one in one
// atomic rename (RENAME_EXCHANGE), so the profile path never holds a half-cleared profile;
// the old one, now under a temporary name, is then removed. A crash leaves that temporary
// sibling, which the next Open removes. An error is a [*ClearError].
func (p *Profile) Clear() error {
	tmp, err := buildTemp(p.dataDir, p.now())
	if err != nil {
		return &ClearError{err: err}
	}
	fresh, err := os.Lstat(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return &ClearError{err: err}
	}
	err = p.exchange(tmp, p.dir)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Lstat(p.dir); errors.Is(serr, fs.ErrNotExist) {
			err = install(tmp, p.dir) // nothing to clear: put the fresh one in place
		}
	}
	if err != nil {
		cur, serr := os.Lstat(p.dir)
		if errors.Is(serr, fs.ErrNotExist) && install(tmp, p.dir) == nil {
			cur, serr = os.Lstat(p.dir) // never leave the path empty: Chromium would make a bare profile there
		}
		swapped := serr == nil && os.SameFile(cur, fresh)
		if !swapped {
			os.RemoveAll(tmp)
		}
		return &ClearError{Cleared: swapped, err: fmt.Errorf("swap in a fresh profile: %w", err)}
	}
	if err := atomicfile.SyncDir(p.dataDir); err != nil {
		return &ClearError{Cleared: true, err: err}
	}
	p.report = Report{Created: true}
	if err := os.RemoveAll(tmp); err != nil { // the old profile, now under the temporary name
		return &ClearError{Cleared: true, err: fmt.Errorf("remove the old profile: %w", err)}
	}
	return nil
}
