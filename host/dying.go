package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/internal/xdg"
	"github.com/headless-dev/headless/profile"
)

// A start right after brokerd died meets the host that brokerd had started still winding
// down (its lifeline closed: it closes Chromium, then exits) and still holding the profile
// lock. A host whose brokerd is gone is exiting, however long that takes: the new one waits
// for it, bounded, instead of answering PROFILE_LOCKED and sending the person to an isolated
// session for a profile that is about to be free (issue 30).

// DyingHostWait bounds the wait for an exiting host's profile lock.
const DyingHostWait = 30 * time.Second

// exiting reports whether pid is a process whose parent is no longer a brokerd: a host
// orphaned when its brokerd died (re-parented to init or a subreaper). A host is always a
// brokerd's child (brokerd starts it).
func exiting(pid int) bool {
	st, ok := procstat.Read(pid)
	if !ok || st.State == "Z" || st.State == "X" {
		return true
	}
	parent, ok := procstat.Read(st.PPID)
	return !ok || parent.Comm != "brokerd"
}

// openProfileAfterDying opens the profile, waiting up to DyingHostWait while its lock is held
// by an exiting host.
func openProfileAfterDying(ctx context.Context, l xdg.Layout, now func() time.Time, log *slog.Logger) (*profile.Profile, error) {
	p, err := openProfile(l, now)
	var le *profile.LockedError
	if !errors.As(err, &le) || le.PID <= 0 || !exiting(le.PID) {
		return p, err
	}
	log.Info("the profile's lock is held by a host whose brokerd is gone; waiting for it to exit", "pid", le.PID)
	deadline := time.Now().Add(DyingHostWait)
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		p, err = openProfile(l, now)
		if !errors.As(err, &le) {
			return p, err
		}
		if le.PID <= 0 || !exiting(le.PID) {
			return nil, err // another, live, host took it meanwhile
		}
		if time.Now().After(deadline) {
			return nil, &wire.Error{Code: wire.CodeProfileLocked,
				Message: fmt.Sprintf("the host (pid %d) whose brokerd is gone still holds the durable profile %s after it was given to exit", le.PID, DyingHostWait),
				Hint:    fmt.Sprintf("it is still shutting down: retry 'headless start' in a moment (or end pid %d)", le.PID)}
		}
	}
}
