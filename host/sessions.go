package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

func (h *Host) session(ctx context.Context, name string) (*cdp.Browser, *session, error) {
	if name == "" {
		name = control.DefaultSession
	}
	b, err := h.alive(ctx)
	if err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	s := h.sessions[name]
	h.mu.Unlock()
	if s == nil {
		return nil, nil, wire.Errorf(wire.CodeSessionUnknown, "no session %q", name)
	}
	if s.fresh {
		// A journey's own browser context: the run drives it, and nothing else may.
		return nil, nil, wire.Errorf(wire.CodeSessionUnknown, "session %q is the fresh browser context of a running journey; no verb drives it", name)
	}
	return b, s, nil
}

// lockSession finds the session and takes its verb lock; the caller calls unlock. When the
// session's page crashed (or its tab went away) since the last verb, it gives the session a
// fresh blank page and answers BROWSER_CRASHED instead.
func (h *Host) lockSession(ctx context.Context, name string) (*cdp.Browser, *session, func(), error) {
	b, s, err := h.session(ctx, name)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := s.handedOverErr(); err != nil {
		return nil, nil, nil, err // handover.go: at once, not after the hand-over
	}
	if err := s.mu.LockCtx(ctx, &h.queued, s.name); err != nil {
		return nil, nil, nil, err
	}
	if err := s.handedOverErr(); err != nil {
		s.mu.Unlock()
		return nil, nil, nil, err
	}
	for s.inWindow() && b.SessionErr(s.sid) != nil {
		// The window the session drives went (pages.go): the session is back on its opener.
		// One that closed itself is no error; one that crashed or was stopped is this verb's
		// answer.
		why := b.SessionErr(s.sid)
		h.leaveWindow(ctx, b, s)
		if errors.Is(why, cdp.ErrDetached) {
			continue
		}
		s.mu.Unlock()
		var ps *pageStoppedError
		if errors.As(why, &ps) {
			return nil, nil, nil, pageStoppedErr(ps)
		}
		return nil, nil, nil, wire.Errorf(wire.CodeBrowserCrashed, "session %q: the window it showed: %w; it was closed, and the session shows its opener again", s.name, why)
	}
	if why := b.SessionErr(s.sid); why != nil {
		// The page died since the last verb: this verb answers that (what it would have looked
		// at is gone), and the session gets a fresh blank page for the next one.
		err := h.revive(ctx, b, s)
		s.mu.Unlock()
		if err != nil {
			return nil, nil, nil, err
		}
		var ps *pageStoppedError
		if errors.As(why, &ps) {
			return nil, nil, nil, pageStoppedErr(ps)
		}
		return nil, nil, nil, wire.Errorf(wire.CodeBrowserCrashed, "session %q: %w; it now shows a fresh blank page", s.name, why)
	}
	// A sign-in or a journey: nobody could answer its pages' dialogs meanwhile (dialogs.go).
	if dialogsNow(ctx) {
		s.dialogsNow.Store(true)
		if d, _ := s.openDialog(); d != nil {
			h.dismissForNavigation(ctx, b, s)
		}
	}
	unlock := func() {
		s.dialogsNow.Store(false)
		h.thaw(b, s) // the openers a sign-in in a window froze (pages.go)
		// A verb that reached its overall deadline holding the session: its page does not
		// answer (a script that never yields), and the next verb would wait on it again. It
		// is stopped (pageguard.go).
		if context.Cause(ctx) == errVerbDeadline {
			h.stopPage(b, s, s.sid, "it did not answer its command in time")
		}
		var ps *pageStoppedError
		if n := noteOf(ctx); n != nil && errors.As(b.SessionErr(s.sid), &ps) {
			n.mu.Lock()
			n.stopped = ps.why
			n.mu.Unlock()
		}
		// A crash during this verb made its calls fail (BROWSER_CRASHED): the session gets its
		// fresh page now, so that the next verb works.
		if b.SessionErr(s.sid) != nil && b.Err() == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			h.revive(ctx, b, s)
			cancel()
		}
		s.mu.Unlock()
	}
	return b, s, unlock, nil
}

// live is the session's page's DevTools session, read without s.mu.
func (s *session) live() string {
	sid, _ := s.liveSID.Load().(string)
	return sid
}

// revive replaces the page of session s, whose renderer crashed or whose target went away, by
// a fresh blank one in the same browser context; s.mu is held. What was typed into the old
// page died with its renderer.
func (h *Host) revive(ctx context.Context, b *cdp.Browser, s *session) error {
	if h.leaveWindow(ctx, b, s) {
		return nil // a window the session's page opened went: the session is back on its opener
	}
	why := b.SessionErr(s.sid)
	h.o.Log.Warn("session page lost; opening a fresh one", "session", s.name, "why", why)
	b.StopWait(ctx, s.sid) // a page being stopped is crashed first (pageguard.go)
	var ps *pageStoppedError
	if !errors.As(why, &ps) {
		b.Quiet(s.sid) // a page that went by itself may still show a dialog (cdp.Quiet); a stopped one was quieted
	}
	h.routes.Delete(s.sid)
	old := s.targetID
	s.setTarget("")
	s.sid = ""
	s.liveSID.Store("")
	s.taint, s.taintDoc = nil, ""
	s.documentGone("") // the old page's documents died with it (wayout.go)
	s.basic.forget()   // and its Basic answer (basicauth.go)
	clear(s.refs)
	s.drain()
	s.quietPages(b) // its windows' dialogs: they are closed below (pages.go)
	// The fresh page opens before the dead one is closed: closing the last window of the
	// profile ends Chromium's browsing session, which deletes every session cookie (the
	// session would be signed out of every site).
	err := h.openPage(ctx, b, s, "")
	if old != "" {
		// The dead page's windows go with it: they could reach nothing of the new page, and
		// nothing else would close them (openers.go).
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		h.closeTabs(cctx, b, s, append(h.openers.windowsOf(old), old))
		cancel()
	}
	if err != nil {
		return wire.Errorf(wire.CodeBrowserCrashed, "the session's page crashed and a fresh one could not be opened: %w", err)
	}
	return nil
}

func (h *Host) newSession(ctx context.Context, name string, isolated bool, adopt string) (*session, error) {
	s, err := h.makeSession(ctx, h.browser, name, isolated, adopt)
	if err != nil {
		return nil, err
	}
	h.sessions[name] = s
	return s, nil
}

// makeSession opens a session's page on b (in a browser context of its own when isolated
// and not adopting a target) without listing it; it needs no lock. newSession lists it; a
// journey makes its fresh context with it outside h.mu, so that other verbs and other
// journeys do not wait for the window to open.
func (h *Host) makeSession(ctx context.Context, b *cdp.Browser, name string, isolated bool, adopt string) (*session, error) {
	contextID := ""
	if isolated && adopt == "" {
		id, err := newBrowserContext(ctx, b)
		if err != nil {
			return nil, err
		}
		contextID = id
	}
	s, err := h.sessionIn(ctx, b, name, isolated, adopt, contextID)
	if err != nil && contextID != "" {
		disposeBrowserContext(b, contextID)
	}
	return s, err
}

// sessionIn opens a session's page on b in the browser context contextID ("": the default
// one), which stays the caller's to dispose of when it fails.
func (h *Host) sessionIn(ctx context.Context, b *cdp.Browser, name string, isolated bool, adopt, contextID string) (*session, error) {
	s := &session{name: name, isolated: isolated, browser: b, contextID: contextID, events: make(chan cdp.Event, 64), paused: make(chan cdp.Event, 16), gone: b.Done(), refs: map[string]snapshot.Target{}, openers: &h.openers}
	if err := h.openPage(ctx, b, s, adopt); err != nil {
		return nil, err
	}
	return s, nil
}

// newBrowserContext makes a browser context of its own on b.
func newBrowserContext(ctx context.Context, b *cdp.Browser) (string, error) {
	var r struct {
		ID string `json:"browserContextId"`
	}
	if err := b.Call(ctx, "", "Target.createBrowserContext", map[string]any{"disposeOnDetach": false}, &r); err != nil {
		return "", err
	}
	// Downloads are denied in every context (downloads.go).
	if err := denyDownloads(ctx, b, r.ID); err != nil {
		disposeBrowserContext(b, r.ID)
		return "", err
	}
	return r.ID, nil
}

// disposeBrowserContext disposes of the browser context id on b (bounded), and says whether b
// did.
func disposeBrowserContext(b *cdp.Browser, id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return b.Call(ctx, "", "Target.disposeBrowserContext", map[string]any{"browserContextId": id}, nil) == nil
}

// openPage gives s a page (adopt, or a new one in s's browser context), attaches to it,
// enables the domains the host listens to: Page (lifecycle events) and Inspector (crashes),
// and has its requests bypass service workers.
func (h *Host) openPage(ctx context.Context, b *cdp.Browser, s *session, adopt string) error {
	s.setTarget(adopt)
	titled := false
	if s.targetID == "" && h.o.Window != "" && s.contextID == "" {
		s.setTarget(h.titledWindow(ctx, b, s.name)) // window.go
		titled = s.targetID != ""
	}
	if s.targetID == "" {
		// A window of its own: a background tab of a shared window is hidden, and input
		// events to hidden pages stall (mouseMoved waits about 5 s for a frame that never
		// comes).
		create := map[string]any{"url": "about:blank", "newWindow": true}
		if s.contextID != "" {
			create["browserContextId"] = s.contextID
		}
		var t struct {
			TargetID string `json:"targetId"`
		}
		if err := b.Call(ctx, "", "Target.createTarget", create, &t); err != nil {
			return err
		}
		s.setTarget(t.TargetID)
	}
	closePage := func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Call(cctx, "", "Target.closeTarget", map[string]any{"targetId": s.targetID}, nil)
	}
	var a struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": s.targetID, "flatten": true}, &a); err != nil {
		closePage()
		return err
	}
	s.sid = a.SessionID
	s.liveSID.Store(s.sid)
	// The session's own page, its only one: the windows of a page it replaces are closed by
	// the caller (revive), or gone with their browser.
	for _, t := range s.setPages(newTab(s.targetID, s.sid, "")) {
		h.routes.Delete(t.sid)
		t.dialog.stopTimer()
	}
	h.newLog(s, s.sid) // pagelog.go
	// The window is sized (a call of the browser's, which waits for the resize) while the
	// page's domains are enabled: both are done before the page is used.
	sized := make(chan struct{})
	go func() {
		defer close(sized)
		h.viewport(ctx, b, s)
	}()
	defer func() { <-sized }()
	h.routes.Store(s.sid, s) // before enabling, so events route
	// No service worker sees this page's requests: one planted in the durable profile for a
	// site's origin (which any process of the user can do, between two starts or before a
	// relaunch) would see a sign-in's POST, password included (red-team round 6c). A site's
	// own workers are bypassed the same way: its pages load from the network.
	// (Chromium honours the bypass only with the Network domain enabled. It keeps no response
	// bodies for it, and its events carry no request body: a maxPostDataSize of 0 would mean
	// no limit — every fetch POST, a sign-in's JSON included, would reach the host, and one
	// over cdp.MaxMessage would end the browser — so it is 1, which only an empty body fits.
	// cdp drops the events unread.) enablePage (pages.go) does it, for windows too.
	if err := enablePage(ctx, b, s.sid); err != nil {
		h.routes.Delete(s.sid)
		closePage()
		return err
	}
	if titled {
		// From its marker page to where every session starts.
		return b.Call(ctx, s.sid, "Page.navigate", map[string]any{"url": "about:blank"}, nil)
	}
	return nil
}

// Viewport is every page's viewport, in CSS pixels: a common laptop screen's (Playwright's
// default), not headless Chromium's 800x600 window (a 780x493 viewport).
const (
	ViewportWidth  = 1280
	ViewportHeight = 720
)

// viewport sizes the page's window so that its contents are Viewport (Browser.setContentsSize:
// --window-size sets the window, whose frame headless Chromium still subtracts). A browser
// without the method keeps the flag's size: logged, not fatal.
func (h *Host) viewport(ctx context.Context, b *cdp.Browser, s *session) {
	var w struct {
		WindowID int `json:"windowId"`
	}
	err := b.Call(ctx, "", "Browser.getWindowForTarget", map[string]any{"targetId": s.targetID}, &w)
	if err == nil {
		err = b.Call(ctx, "", "Browser.setContentsSize", map[string]any{"windowId": w.WindowID, "width": ViewportWidth, "height": ViewportHeight}, nil)
	}
	if err != nil {
		h.o.Log.Warn("the page's viewport could not be sized", "session", s.name, "err", err)
	}
}

func (h *Host) closeTarget(s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if root := s.rootTarget(); root != "" {
		// The windows its page opened go with it (red-team round 13d: a popup outlived
		// 'session close' in the shared profile), each quieted first (pages.go).
		s.quietPages(h.browser)
		h.closeTabs(ctx, h.browser, s, append(h.openers.windowsOf(root), root))
	}
	h.disposeContext(s)
}

func (h *Host) disposeContext(s *session) {
	if s.contextID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.browser.Call(ctx, "", "Target.disposeBrowserContext", map[string]any{"browserContextId": s.contextID}, nil)
}

// CreateSession opens a session; isolated sessions get their own browser context (cookies and
// storage separate from every other session).
func (h *Host) CreateSession(ctx context.Context, p control.CreateParams) (control.SessionInfo, error) {
	if credential.ValidSession(p.Name) != nil {
		return control.SessionInfo{}, wire.Errorf(wire.CodeInvalidArgument, "%s", credential.SessionRule)
	}
	if _, err := h.alive(ctx); err != nil {
		return control.SessionInfo{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.clearing {
		return control.SessionInfo{}, wire.Errorf(wire.CodeBusy, "the profile is being cleared; retry when 'headless profile clear' has finished")
	}
	if _, ok := h.sessions[p.Name]; ok {
		return control.SessionInfo{}, wire.Errorf(wire.CodeSessionExists, "session %q exists", p.Name)
	}
	if len(h.sessions) >= MaxSessions {
		return control.SessionInfo{}, wire.Errorf(wire.CodeSessionLimit, "at most %d sessions", MaxSessions)
	}
	var owner *rpc.Conn
	if p.Owned {
		if owner = rpc.ConnOf(ctx); owner == nil {
			return control.SessionInfo{}, wire.Errorf(wire.CodeInvalidArgument, "an owned session needs a control connection to belong to")
		}
	}
	s, err := h.newSession(ctx, p.Name, p.Isolated, "")
	if err != nil {
		return control.SessionInfo{}, fmt.Errorf("create session: %w", err)
	}
	if p.Isolated {
		if err := h.registerIsolated(ctx, p.Name); err != nil {
			delete(h.sessions, p.Name)
			h.routes.Delete(s.sid)
			h.closeTarget(s)
			return control.SessionInfo{}, err
		}
	}
	// The connection now owns a session (an MCP server's lease): while the session exists,
	// the connection is never closed for idleness or to make room. Every way an owned
	// session leaves h.sessions unpins it once (CloseSession, dropSessionsLocked).
	s.owner = owner
	owner.Pin()
	h.o.Log.Info("session created", "session", p.Name, "isolated", p.Isolated, "owned", p.Owned)
	return control.SessionInfo{Name: p.Name, Isolated: p.Isolated, Owned: p.Owned, URL: "about:blank", Responsive: true}, nil
}

// ConnClosed closes every session the control connection c owns (CreateParams.Owned). The
// control server calls it once c has ended and its last request returned.
func (h *Host) ConnClosed(c *rpc.Conn) {
	h.mu.Lock()
	var names []string
	for name, s := range h.sessions {
		if s.owner == c {
			names = append(names, name)
		}
	}
	h.mu.Unlock()
	for _, name := range names {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := h.CloseSession(ctx, name)
		cancel()
		if err != nil && wire.CodeOf(err) != wire.CodeSessionUnknown {
			h.o.Log.Warn("owned session not closed with its connection", "session", name, "code", wire.CodeOf(err))
		}
	}
}

// dropSessionsLocked forgets every session (a relaunched browser has none of them), undoing
// the pin of each owned one. h.mu is held.
func (h *Host) dropSessionsLocked() {
	for _, s := range h.sessions {
		s.owner.Unpin()
		s.basic.forget()
	}
	h.sessions = map[string]*session{}
}

// CloseSession closes a session and, for an isolated one, disposes its browser context.
func (h *Host) CloseSession(ctx context.Context, name string) error {
	if name == control.DefaultSession {
		return wire.Errorf(wire.CodeInvalidArgument, "the default session always exists; use 'headless profile clear' to reset it")
	}
	if _, err := h.alive(ctx); err != nil {
		return err
	}
	h.mu.Lock()
	s, ok := h.sessions[name]
	if ok && s.handedOver.Load() {
		h.mu.Unlock()
		return errHandedOver(name)
	}
	if ok {
		delete(h.sessions, name)
		s.owner.Unpin() // nil-safe: an unowned session pinned nothing
		if s.stopRun != nil {
			s.stopRun() // a journey runs in it: stop it rather than wait for its budget
		}
	}
	h.mu.Unlock()
	if !ok {
		return wire.Errorf(wire.CodeSessionUnknown, "no session %q", name)
	}
	// A verb running in the session ends first; one that does not within CloseWait (its page
	// will not answer) has its page stopped, which ends it (pageguard.go).
	if !s.mu.LockWithin(CloseWait) {
		if sid := s.live(); sid != "" {
			h.stopPage(s.browser, s, sid, "the session was closed while a command of it waited on its page")
		}
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	h.routes.Delete(s.sid)
	h.closeTarget(s)
	s.basic.forget()
	if s.isolated {
		h.forgetIsolated(name)
	}
	h.dropEnrollments(name)
	h.o.Log.Info("session closed", "session", name, "isolated", s.isolated)
	return nil
}

// Sessions lists the sessions.
func (h *Host) Sessions(ctx context.Context) (control.SessionList, error) {
	b, err := h.alive(ctx)
	if err != nil {
		return control.SessionList{}, err
	}
	h.mu.Lock()
	ss := make([]*session, 0, len(h.sessions))
	for _, s := range h.sessions {
		ss = append(ss, s)
	}
	h.mu.Unlock()
	sort.Slice(ss, func(i, j int) bool { return ss[i].name < ss[j].name })
	out := control.SessionList{Sessions: make([]control.SessionInfo, 0, len(ss))}
	for _, s := range ss {
		info := control.SessionInfo{Name: s.name, Isolated: s.isolated, Fresh: s.fresh, Owned: s.owner != nil, Responsive: true, HandedOver: s.handedOver.Load()}
		if info.HandedOver {
			// What the person's page shows is theirs until they are done.
		} else if u, t, err := h.pageInfo(ctx, b, s); err == nil {
			info.URL, info.Title = u, t
		} else {
			info.Responsive = false
		}
		out.Sessions = append(out.Sessions, info)
	}
	return out, nil
}

func (h *Host) pageInfo(ctx context.Context, b *cdp.Browser, s *session) (string, string, error) {
	var r struct {
		Info struct {
			URL   string `json:"url"`
			Title string `json:"title"`
		} `json:"targetInfo"`
	}
	if err := b.Call(ctx, "", "Target.getTargetInfo", map[string]any{"targetId": s.targetID}, &r); err != nil {
		return "", "", err
	}
	return clip.Text(r.Info.URL, 2048), clip.Text(r.Info.Title, 256), nil
}

// drain empties the session's event queue before an action whose events we will wait for,
// and marks the requests in flight as not the action's (settle.go).
func (s *session) drain() {
	s.actMark = s.requests().mark()
	for {
		select {
		case <-s.events:
		default:
			return
		}
	}
}

// await reads the page's events until done says an event ends the wait (with done's error),
// at most d: BROWSER_CRASHED when the browser or the page goes, TIMEOUT ("the page did not
// <late> within d") when d passes, ctx's end as a timeout too.
func (s *session) await(ctx context.Context, d time.Duration, late string, done func(ev cdp.Event) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	pageDone := s.browser.SessionDone(s.sid)
	for {
		select {
		case ev := <-s.events:
			if ok, err := done(ev); ok {
				return err
			}
		case <-s.gone:
			return wire.Errorf(wire.CodeBrowserCrashed, "the browser went away while the page was loading")
		case <-pageDone:
			return s.pageLost()
		case <-ctx.Done():
			return wire.Errorf(wire.CodeTimeout, "the page did not %s within %s", late, d)
		}
	}
}

// waitLoad waits for the load event of loaderID (any main-frame load when loaderID is "").
func (s *session) waitLoad(ctx context.Context, loaderID string) error {
	return s.waitLoadFor(ctx, loaderID, NavigationWait)
}

// waitLoadFor is waitLoad for at most d.
//
// A document that starts a navigation of its own before its load (a script's redirect or
// reload: a sign-in page's bounce, a 401 page that reloads) never fires that load: Chromium
// holds it while the navigation is pending. Once loaderID's document has committed in the
// main frame, the wait follows that frame: it ends at the first load of the frame from then
// on, its document's or that of a document that replaced it (events come in order, so it is
// never an earlier document's); d bounds it all. A commit seen before loaderID's is an earlier
// document's, never followed.
func (s *session) waitLoadFor(ctx context.Context, loaderID string, d time.Duration) error {
	return s.loadAfter(ctx, loaderID, "", d)
}

// loadAfter is waitLoadFor; frame is the main frame's id when loaderID's document has
// committed in it already (its Page.frameNavigated was read), else "".
func (s *session) loadAfter(ctx context.Context, loaderID, frame string, d time.Duration) error {
	return s.await(ctx, d, "finish loading", func(ev cdp.Event) (bool, error) {
		switch ev.Method {
		case "Page.frameNavigated":
			var p struct {
				Frame struct {
					ID       string `json:"id"`
					ParentID string `json:"parentId"`
					LoaderID string `json:"loaderId"`
				} `json:"frame"`
			}
			json.Unmarshal(ev.Params, &p)
			if loaderID != "" && frame == "" && p.Frame.ParentID == "" && p.Frame.LoaderID == loaderID {
				frame = p.Frame.ID
			}
		case "Page.lifecycleEvent":
			var p struct {
				Name     string `json:"name"`
				LoaderID string `json:"loaderId"`
				FrameID  string `json:"frameId"`
			}
			json.Unmarshal(ev.Params, &p)
			return p.Name == "load" && (loaderID == "" || p.LoaderID == loaderID || (frame != "" && p.FrameID == frame)), nil
		case "Page.loadEventFired":
			return loaderID == "", nil
		}
		return false, nil
	})
}

// pageLost is the error of a wait whose page went away (it crashed, was closed or stopped).
func (s *session) pageLost() error {
	why := s.browser.SessionErr(s.sid)
	if why == nil {
		why = cdp.ErrDetached
	}
	return wire.Errorf(wire.CodeBrowserCrashed, "the page went away while it was loading: %w", why).
		WithHint("only this page was lost (the browser and the other sessions run on): visit the page again and retry")
}

// waitHistory waits, at most NavigationWait, for a history step of the main frame (frame) to
// land: a step within the document (Page.navigatedWithinDocument), or the load of the
// document it commits.
func (s *session) waitHistory(ctx context.Context, frame, late string) error {
	return s.await(ctx, NavigationWait, late, func(ev cdp.Event) (bool, error) {
		switch ev.Method {
		case "Page.navigatedWithinDocument":
			var p struct {
				FrameID string `json:"frameId"`
			}
			json.Unmarshal(ev.Params, &p)
			return p.FrameID == frame, nil
		case "Page.frameNavigated":
			var p struct {
				Frame struct {
					ParentID string `json:"parentId"`
					LoaderID string `json:"loaderId"`
				} `json:"frame"`
			}
			json.Unmarshal(ev.Params, &p)
			if p.Frame.ParentID == "" {
				return true, s.loadAfter(ctx, p.Frame.LoaderID, frame, NavigationWait)
			}
		}
		return false, nil
	})
}

// abortedRetryWait bounds the wait for the frame to stop loading before a navigation that was
// aborted is retried.
const abortedRetryWait = 2 * time.Second

// waitStopped waits until the page's frame stops loading (Page.frameStoppedLoading, or its load
// event; either may already be queued), at most d. A frame that never says so is retried
// anyway when d has passed.
func (s *session) waitStopped(ctx context.Context, d time.Duration) {
	s.await(ctx, d, "stop loading", stoppedLoading)
}

// stoppedLoading ends a wait at the frame's load event or its end of loading.
func stoppedLoading(ev cdp.Event) (bool, error) {
	return ev.Method == "Page.frameStoppedLoading" || ev.Method == "Page.loadEventFired", nil
}
