package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/keyprobe"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/internal/xdg"
	"github.com/headless-dev/headless/profile"
)

// ClearTimeout bounds a whole profile clear: closing the sessions and Chromium, the swap, the
// relaunch and the new default session.
const ClearTimeout = 3 * time.Minute

// ClearProfile closes every session (isolated ones through CloseSession, as 'session close'
// does), closes Chromium gracefully, replaces the durable profile with a fresh one under the
// profile lock the host holds throughout (profile.Profile.Clear), relaunches Chromium and
// waits for the new default session. It runs to the end even if the caller goes away.
// Vault credentials are not touched.
func (h *Host) ClearProfile(ctx context.Context) (control.ClearResult, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ClearTimeout)
	defer cancel()
	// The relaunch needs the keyring: find out before anything is closed.
	if err := keyprobe.Check(ctx, h.o.BusAddress); err != nil {
		return control.ClearResult{}, fmt.Errorf("the durable profile's cookie key lives in the Secret Service, so Chromium could not be relaunched after a clear; nothing was changed: %w", err)
	}
	// The clear is audited in brokerd's log: one it could not record (the log full) is refused
	// before any session is closed (issue 30: it went ahead unaudited).
	if err := h.withBroker(ctx, func(c *brokerapi.Client) error { return c.ProfileClearing(ctx) }); err != nil {
		if wire.CodeOf(err) == wire.CodeAuditUnavail {
			return control.ClearResult{}, err
		}
		return control.ClearResult{}, fmt.Errorf("brokerd could not set aside the clear's audit record; nothing was changed: %w", err)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return control.ClearResult{}, wire.Errorf(wire.CodeHostUnavail, "the host is shutting down")
	}
	if h.clearing {
		h.mu.Unlock()
		return control.ClearResult{}, wire.Errorf(wire.CodeBusy, "the profile is already being cleared")
	}
	for _, s := range h.sessions {
		if err := s.handedOverErr(); err != nil { // the person's page is not the agent's to clear
			h.mu.Unlock()
			return control.ClearResult{}, err
		}
	}
	h.clearing = true
	var names []string
	for name := range h.sessions {
		if name != control.DefaultSession {
			names = append(names, name)
		}
	}
	h.mu.Unlock()
	h.dropSpare()
	defer func() {
		h.mu.Lock()
		h.clearing = false
		h.mu.Unlock()
	}()
	slices.Sort(names)

	closed := 0
	for _, name := range names {
		err := h.CloseSession(ctx, name)
		switch wire.CodeOf(err) {
		case "":
			closed++
		case wire.CodeSessionUnknown, wire.CodeBrowserCrashed:
			// Gone already: a crash relaunched the browser without it.
		default:
			return control.ClearResult{}, fmt.Errorf("close session %q before the clear (nothing was cleared): %w", name, err)
		}
	}

	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return control.ClearResult{}, wire.Errorf(wire.CodeHostUnavail, "the host is shutting down")
	}
	closed += len(h.sessions) // the default session (and none other: creation is refused meanwhile)
	if b := h.browser; b != nil {
		for _, s := range h.sessions {
			s.quietPages(b) // Browser.close with a dialog open ends Chromium in SIGSEGV
		}
		pids := b.Pids()
		cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
		if err := b.Close(cctx); err != nil {
			h.o.Log.Warn("close browser for the clear", "err", err)
		}
		ccancel()
		if h.unsub != nil {
			h.unsub()
		}
		// No process of the old browser may still write into the profile when it is swapped.
		if !waitExited(ctx, pids, 5*time.Second) {
			h.browser = nil
			h.mu.Unlock()
			return control.ClearResult{}, wire.Errorf(wire.CodeProfileClear, "processes of the closed browser did not exit within 5s; nothing was cleared")
		}
	}
	h.browser = nil
	h.sessions = map[string]*session{}
	h.routes.Clear()
	clearErr := h.prof.Clear()
	if clearErr != nil {
		h.o.Log.Error("profile clear", "err", clearErr)
	} else {
		h.o.Log.Info("profile cleared", "profile", h.prof.Dir(), "sessions_closed", closed)
	}
	launchErr := h.launch(ctx, nil)
	ready := h.ready
	h.mu.Unlock()
	if clearErr != nil {
		return control.ClearResult{}, clearErr
	}
	// Audit the clear in brokerd's log (its space was set aside before: see above).
	if err := h.withBroker(ctx, func(c *brokerapi.Client) error { return c.ProfileCleared(ctx, closed) }); err != nil {
		h.o.Log.Warn("brokerd did not record the profile clear", "code", wire.CodeOf(err))
	}
	if launchErr != nil {
		return control.ClearResult{}, fmt.Errorf("the profile was cleared, but Chromium did not start again (the next command retries): %w", launchErr)
	}
	select {
	case <-ready:
	case <-ctx.Done():
		return control.ClearResult{}, wire.Errorf(wire.CodeTimeout, "the profile was cleared, but the new default session was not ready in time")
	}
	h.mu.Lock()
	err := h.readyErr
	h.mu.Unlock()
	if err != nil {
		return control.ClearResult{}, fmt.Errorf("the profile was cleared, but the new default session failed: %w", err)
	}
	return control.ClearResult{Cleared: true, Profile: h.prof.Dir(), SessionsClosed: closed}, nil
}

// waitExited reports whether every process of pids has exited within d.
func waitExited(ctx context.Context, pids []int, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for slices.ContainsFunc(pids, procstat.Alive) {
		select {
		case <-ctx.Done():
			return !slices.ContainsFunc(pids, procstat.Alive)
		case <-tick.C:
		}
	}
	return true
}

// openProfile opens and locks the durable profile where the layout names it (the host is its
// only user: Start, and ClearStopped when no host runs).
func openProfile(l xdg.Layout, now func() time.Time) (*profile.Profile, error) {
	dir, err := l.Profile()
	if err != nil {
		return nil, err
	}
	lock, err := l.ProfileLock()
	if err != nil {
		return nil, err
	}
	return profile.Open(profile.Options{Dir: dir, Lock: lock, Now: now, Legacy: l.LegacyProfiles()})
}

// ClearStopped clears the durable profile while no host serves this runtime dir ('headless
// profile clear' with the host stopped). It takes the profile lock as a host would, so a host
// elsewhere that owns the profile (another runtime dir, or one starting now) makes it
// PROFILE_LOCKED and nothing is cleared. Vault credentials are not touched; brokerd is not
// told (the caller audits the clear through brokerd).
func ClearStopped(l xdg.Layout) (control.ClearResult, error) {
	if _, err := l.Data(); err != nil {
		return control.ClearResult{}, wire.Errorf(wire.CodeInvalidArgument, "%w", err)
	}
	p, err := openProfile(l, nil)
	var le *profile.LockedError
	if errors.As(err, &le) {
		owner := "another process"
		if le.PID > 0 {
			owner = fmt.Sprintf("pid %d", le.PID)
		}
		return control.ClearResult{}, &wire.Error{
			Code:    wire.CodeProfileLocked,
			Message: fmt.Sprintf("the profile is in use by %s (a host started with another runtime dir, or one starting now); nothing was cleared", owner),
			Hint:    "run 'headless profile clear' where that host runs (same XDG_RUNTIME_DIR), or stop it first",
		}
	}
	if err != nil {
		return control.ClearResult{}, wireForm(err)
	}
	defer p.Close()
	if err := p.Clear(); err != nil {
		return control.ClearResult{}, wireForm(err)
	}
	return control.ClearResult{Cleared: true, Profile: p.Dir()}, nil
}
