package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/keyprobe"
	"github.com/headless-dev/headless/internal/wire"
)

func (h *Host) tempDir() string { return h.o.Layout.ChromiumTemp() }

// launch starts Chromium and the default session; h.mu must be held or h unshared. Every launch,
// the first and every relaunch after a crash, first checks the Secret Service that holds the
// profile's cookie key: one launch without it deletes every encrypted cookie for good.
// probe, when not nil, delivers the result of that check started by the caller for this very
// launch (Start runs it while the profile opens); nil runs it here. Either way Chromium starts
// only after the check passed.
func (h *Host) launch(ctx context.Context, probe <-chan error) error {
	t0 := time.Now()
	if probe == nil {
		probe = startKeyProbe(ctx, h.o.BusAddress)
	}
	// While the Secret Service answers: nothing here starts Chromium or reads a secret.
	os.RemoveAll(h.tempDir()) // leftovers of a crashed browser
	if err := <-probe; err != nil {
		return fmt.Errorf("the durable profile's cookie key lives in the Secret Service, so Chromium is not launched without it: %w", err)
	}
	h.o.Log.Info("keyring checked", "ms", time.Since(t0).Milliseconds())
	if err := h.prof.Reassert(); err != nil {
		return wire.Errorf(wire.CodeBrowserFailed, "the profile could not be made safe to launch Chromium on (%w); Chromium was not launched", err)
	}
	// The blockers stay watched from before the exec for the browser's whole life
	// (browserIntact asks): red-team round 9 swapped one for a directory of its own just after
	// the exec, and back.
	h.guard.Close()
	g, err := h.prof.Guard()
	if err != nil {
		h.guard = nil
		return wire.Errorf(wire.CodeBrowserFailed, "%w; Chromium was not launched", err)
	}
	h.guard = g
	// And once more under the watch: whatever was put at the profile's path between the
	// first clean-up and the watch (the whole profile swapped for one of the agent's, say) is
	// cleaned up too; a blocker that had to be put back shows in the watch.
	if err := h.prof.Reassert(); err != nil {
		return wire.Errorf(wire.CodeBrowserFailed, "the profile could not be made safe to launch Chromium on (%w); Chromium was not launched", err)
	}
	// Nothing with the host's group outside a browser may watch the new one (sweepStrays).
	if err := h.sweepStrays(); err != nil {
		return wire.Errorf(wire.CodeBrowserFailed, "look for processes of the headless group: %w; Chromium was not launched", err)
	}
	// Chromium runs with the host's group, so whatever runs as Chromium may read every later
	// Chromium's memory: it must be a program no process of the user could have put there
	// (red-team round 11 named a wrapper of its own in the config; brokerd refused releases
	// to that host, but the wrapper had already run with the group and left a daemon). Root
	// is kept out of nothing.
	if os.Geteuid() != 0 {
		if err := hardening.CheckChromium(h.o.Chromium); err != nil {
			return wire.Errorf(wire.CodeBrowserFailed, "%w; Chromium was not launched (it would run with the headless group: name a root-owned Chromium in a directory only root can write, or remove \"chromium\" from the config)", err)
		}
	}
	lctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	b, err := cdp.Launch(lctx, cdp.Options{
		Path:    h.o.Chromium,
		Args:    h.prof.ChromiumArgs(),
		Env:     h.o.Env,
		TempDir: h.tempDir(),
		Window:  h.o.Window, WindowName: control.DefaultSession,
	})
	if err != nil {
		return wire.Errorf(wire.CodeBrowserFailed, "launch chromium: %w", err)
	}
	h.browser, h.product = b, b.Product() // Launch's own getVersion: no second round trip
	h.o.Log.Info("browser started", "pid", b.PID(), "product", b.Product(), "launch_ms", time.Since(t0).Milliseconds())
	h.forgetIsolated("") // a relaunch loses every session: their stores go too
	h.dropEnrollments("")
	h.dropSessionsLocked()
	h.routes.Clear()
	h.unsub = b.Subscribe(func(ev cdp.Event) { h.dispatch(b, ev) })
	ready := make(chan struct{})
	h.ready, h.readyErr = ready, nil
	go h.openDefault(b, ready, t0)
	return nil
}

// startKeyProbe runs keyprobe.Check on the bus in the background; the channel receives its
// result once.
func startKeyProbe(ctx context.Context, bus string) <-chan error {
	c := make(chan error, 1)
	go func() { c <- keyprobe.Check(ctx, bus) }()
	return c
}

// openDefault sets up the default session of browser b and closes ready. Verbs wait for it.
// It first enforces the navigation allowlist and the document/auth interception (Fetch.enable):
// no verb reaches b before ready, so none navigates, signs in or opens a page before that
// is in place, and the ready report no longer waits for that round trip. A failure fails
// ready (readyErr) and kills b, so the next verb relaunches.
// The default session adopts the page Chromium opened at launch: a new target would start a
// second renderer (about half a second).
func (h *Host) openDefault(b *cdp.Browser, ready chan struct{}, t0 time.Time) {
	defer close(ready)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := h.enforceAllowlist(ctx, b)
	if err == nil {
		err = h.watchOpeners(ctx, b)
	}
	if err == nil {
		err = denyDownloads(ctx, b, "") // downloads.go
	}
	if err != nil {
		h.o.Log.Error("the browser could not be set up: killing it", "err", err)
		h.mu.Lock()
		if h.browser == b {
			h.readyErr = wire.Errorf(wire.CodeBrowserFailed, "enforce the navigation allowlist: %w", err)
		}
		h.mu.Unlock()
		b.Kill()
		return
	}
	var targets struct {
		Infos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfos"`
	}
	adopt := ""
	if err := b.Call(ctx, "", "Target.getTargets", nil, &targets); err == nil {
		for _, t := range targets.Infos {
			if t.Type == "page" {
				adopt = t.TargetID
				break
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.browser != b {
		return // relaunched meanwhile
	}
	if _, err := h.newSession(ctx, control.DefaultSession, false, adopt); err != nil {
		h.o.Log.Error("the default session could not be opened: killing the browser", "err", err)
		h.readyErr = wire.Errorf(wire.CodeBrowserFailed, "open the default session: %w", err)
		b.Kill() // the next verb relaunches
		return
	}
	h.o.Log.Info("default session ready", "pid", b.PID(), "ms", time.Since(t0).Milliseconds())
}

// dispatch routes session events to their session (never blocking the reader): every
// window's own share (pageEvent), then the current page's (the verbs wait on those) or another
// window's (parkedEvent, pages.go).
func (h *Host) dispatch(b *cdp.Browser, ev cdp.Event) {
	switch ev.Method {
	case "Target.attachedToTarget":
		if !h.windowAttached(b, ev) { // pages.go
			h.attached(ev) // wayout.go
		}
		return
	case "Target.detachedFromTarget":
		h.detached(ev.Params)
	}
	if ev.SessionID == "" {
		return
	}
	v, ok := h.routes.Load(ev.SessionID)
	if !ok {
		return
	}
	s := v.(*session)
	s.pagesMu.Lock()
	defer s.pagesMu.Unlock()
	t := s.tabOf(ev.SessionID)
	if t == nil {
		return
	}
	h.pageEvent(s, t, ev) // pageguard.go
	if ev.Method == "Network.webSocketCreated" {
		var p struct {
			URL string `json:"url"`
		}
		json.Unmarshal(ev.Params, &p)
		t.reqs.socketOpened(p.URL)
	}
	if t != s.cur {
		s.parkedEvent(t, ev)
		return
	}
	switch ev.Method {
	case cdp.ConsoleEvent, cdp.NetworkEvent, "Page.frameNavigated":
		h.logEvent(s, ev) // pagelog.go
	case "Page.downloadWillBegin":
		h.downloadDenied(s, ev) // downloads.go
	}
	switch ev.Method {
	case cdp.RequestStarted, cdp.RequestEnded, cdp.RequestFailed:
		return
	case "Page.frameStartedNavigating", "Fetch.requestPaused":
		s.trackNavigation(ev)
		return
	case "Page.frameNavigated", "Page.frameStoppedLoading":
		s.trackNavigation(ev)
	}
	if ev.Method == "Page.frameAttached" && !s.watchFrames.Load() {
		return // only a passkey ceremony waits for frames (passkey.go)
	}
	switch ev.Method {
	case "Page.frameAttached", "Page.lifecycleEvent", "Page.frameStartedLoading", "Page.frameStoppedLoading", "Page.loadEventFired", "Page.frameNavigated", "Page.navigatedWithinDocument",
		"Page.frameRequestedNavigation":
		select {
		case s.events <- ev:
		default: // a waiter that is not there; drop
		}
	}
}

// alive returns the browser once its default session is ready, or BROWSER_CRASHED after
// relaunching it.
func (h *Host) alive(ctx context.Context) (*cdp.Browser, error) {
	h.mu.Lock()
	b, ready := h.browser, h.ready
	if b != nil && b.Err() == nil {
		h.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, wire.Errorf(wire.CodeTimeout, "the browser is still starting")
		}
		h.mu.Lock()
		err := h.readyErr
		h.mu.Unlock()
		if err != nil && b.Err() == nil {
			return nil, err
		}
		if b.Err() == nil {
			return b, nil
		}
		h.mu.Lock() // it died meanwhile: relaunch below
	}
	defer h.mu.Unlock()
	if h.closed {
		return nil, wire.Errorf(wire.CodeHostUnavail, "the host is shutting down")
	}
	b = h.browser
	if b != nil && b.Err() == nil { // another caller already relaunched it
		return nil, wire.Errorf(wire.CodeBrowserCrashed, "the browser crashed and has been restarted with a fresh default session")
	}
	why := "browser is not running"
	if b != nil {
		why = b.Err().Error()
		b.Kill()
		if h.unsub != nil {
			h.unsub()
		}
	}
	h.o.Log.Warn("browser crashed; relaunching", "err", why)
	if err := h.launch(ctx, nil); err != nil {
		h.browser = nil
		return nil, err
	}
	return nil, wire.Errorf(wire.CodeBrowserCrashed, "%s; it has been restarted with a fresh default session", why)
}

// relaunchDead is browserErr for a BROWSER_CRASHED that did not go through it: when the
// browser of the host is dead and not yet relaunched, it is relaunched before the error is
// answered. Every other error is returned as it is.
func (h *Host) relaunchDead(err error) error {
	if wire.CodeOf(err) != wire.CodeBrowserCrashed {
		return err
	}
	h.mu.Lock()
	b := h.browser
	h.mu.Unlock()
	if b == nil || b.Err() == nil {
		return err
	}
	return h.browserErr(err)
}

// browserErr maps a CDP failure to a typed error. A verb that finds the browser gone relaunches
// it before answering BROWSER_CRASHED, so the next command works.
func (h *Host) browserErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, cdp.ErrTargetCrashed) || errors.Is(err, cdp.ErrDetached) {
		// Only this page is gone: the session gets a fresh one at its next verb.
		return wire.Errorf(wire.CodeBrowserCrashed, "the page's renderer crashed (or its tab was closed); the session's next command opens a fresh blank page").
			WithHint("only this page was lost (the browser and the other sessions run on): visit the page again and retry")
	}
	if errors.Is(err, cdp.ErrCrashed) || errors.Is(err, cdp.ErrClosed) || wire.CodeOf(err) == wire.CodeBrowserCrashed {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		if _, aerr := h.alive(ctx); aerr != nil {
			return aerr // BROWSER_CRASHED after the relaunch, or why it could not relaunch
		}
		return wire.Errorf(wire.CodeBrowserCrashed, "%w; it has been restarted with a fresh default session", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return wire.Errorf(wire.CodeTimeout, "the page did not answer in time: %w", err)
	}
	if errors.Is(err, context.Canceled) {
		return wire.Errorf(wire.CodeTimeout, "the request was abandoned (its caller went away): %w", err)
	}
	return err
}
