package host

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/wire"
)

// Windows a session's page opens (issue 44).
//
// A window a page opens (window.open, a link with target=_blank, an identity provider's
// "Sign in with …" pop-up) is a page of that session:
//
//   - Every new window is attached as it is created and held before it runs (the browser's
//     auto-attachment, browserAttach): a window of a session's pages gets what the host follows
//     on every page (its lifecycle, crash, dialogs, requests, frames) before it is let run; any
//     other is let run and left. A window opened before it was followed could hold a dialog
//     nobody can answer, and its renderer with it.
//   - At most MaxPages per session (its own page included): a window beyond is closed as it
//     opens. Each window's navigations, window openings and dialogs spend its own budget
//     (pageguard.go).
//   - 'session pages' lists them (index, URL, title, opener, an open dialog; the page's words,
//     untrusted, each scanned for a released secret: one that shows one is closed, as every
//     output's page is discarded); 'page select N' makes one the page every verb drives. The
//     current window closing (its own window.close(), the site's) hands the session back to its
//     opener (else the session's own page); one that crashed or was stopped is closed and does
//     the same, the verb answering why.
//   - Signing in in a window: openers.go says when its document may be signed in on (no
//     other window or frame of the session's pages on its origin during its life); from
//     before the person is asked until the verb ends, the session's other windows but the
//     window's openers are closed and its openers are frozen (closeOpened, freezeOpeners): no
//     script of theirs runs, so none navigates to the window's origin to script it while the
//     password is in it.

// MaxPages bounds a session's windows, its own page included.
const MaxPages = 16

// tab is one window of a session. What the event reader keeps of every window is its own
// (flood, reqs, frames, dialog); what the verbs keep of the current page lives in the session
// (targetID, sid, loaded, navPending, taint…), and a window that is not current keeps its share
// here until it is selected again (selectTab swaps them).
type tab struct {
	target, sid string
	opener      string // the window that opened it ("" for the session's own page)
	flood       *floodMeter
	reqs        *requestTrack
	frames      frameSet
	dialog      dialogState
	gone        bool // its target was destroyed (guarded by the session's pagesMu)

	// The current page's state while another is current: written by the event reader for
	// this window's events, swapped in and out by selectTab.
	loaded     atomic.Pointer[loadedDoc]
	navPending atomic.Bool
	taint      map[int64]string
	taintDoc   string
}

func newTab(target, sid, opener string) *tab {
	return &tab{target: target, sid: sid, opener: opener, flood: newFloodMeter(time.Now()), reqs: newRequestTrack()}
}

// tabOf is the window of DevTools session sid (nil: none); pagesMu held.
func (s *session) tabOf(sid string) *tab {
	for _, t := range s.pages {
		if t.sid == sid {
			return t
		}
	}
	return nil
}

// inWindow reports whether the current page is a window the session's pages opened (s.mu or
// pagesMu held).
func (s *session) inWindow() bool { return len(s.pages) > 0 && s.cur != s.pages[0] }

// setPages makes t the session's only page (its own page, opened or replaced); s.mu held or
// the session not yet routed. What was there is returned, for the caller to close.
func (s *session) setPages(t *tab) []*tab {
	s.pagesMu.Lock()
	defer s.pagesMu.Unlock()
	old := s.pages
	s.pages, s.cur = []*tab{t}, t
	return old
}

// selectTab makes t the session's current page: the state the verbs keep of the page now
// current goes to its window, t's comes in (s.mu held). Refs, the isolated world and a Basic
// answer are the old page's: dropped.
func (s *session) selectTab(t *tab) {
	s.pagesMu.Lock()
	old := s.cur
	if old != t {
		old.loaded.Store(s.loaded.Load())
		old.navPending.Store(s.navPending.Load())
		old.taint, old.taintDoc = s.taint, s.taintDoc
		s.loaded.Store(t.loaded.Load())
		s.navPending.Store(t.navPending.Load())
		s.taint, s.taintDoc = t.taint, t.taintDoc
		t.taint, t.taintDoc = nil, ""
		s.targetID, s.sid = t.target, t.sid
		s.pageTgt.Store(&t.target)
		s.liveSID.Store(t.sid)
		s.cur = t
	}
	s.pagesMu.Unlock()
	if old == t {
		return
	}
	s.world = fixedWorld{}
	clear(s.refs)
	s.basic.forget()
	s.heldNavs.Store(0)
	for len(s.paused) > 0 {
		<-s.paused
	}
	s.drain()
}

// leaveWindow hands the session back from its current window (closed, crashed, stopped or
// discarded) to the window's nearest open opener, else its own page; s.mu held. The window is
// closed (quieted first: cdp.Quiet). It reports false when the current page is the session's
// own page (revive's case).
func (h *Host) leaveWindow(ctx context.Context, b *cdp.Browser, s *session) bool {
	if !s.inWindow() {
		return false
	}
	cur := s.cur
	s.pagesMu.Lock()
	next := s.pages[0]
	for id, seen := cur.opener, 0; id != "" && seen < MaxPages; seen++ {
		var o *tab
		for _, t := range s.pages {
			if t.target == id {
				o = t
			}
		}
		if o == nil {
			break
		}
		if !o.gone && b.SessionErr(o.sid) == nil {
			next = o
			break
		}
		id = o.opener
	}
	s.pagesMu.Unlock()
	s.selectTab(next)
	h.dropTab(ctx, b, s, cur)
	h.o.Log.Info("the session's window went: back to its opener", "session", s.name)
	return true
}

// dropTab forgets a window that is not current and closes it (quieted first).
func (h *Host) dropTab(ctx context.Context, b *cdp.Browser, s *session, t *tab) {
	s.pagesMu.Lock()
	for i, x := range s.pages {
		if x == t {
			s.pages = append(s.pages[:i], s.pages[i+1:]...)
			break
		}
	}
	s.pagesMu.Unlock()
	h.routes.Delete(t.sid)
	t.dialog.stopTimer()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	b.ClosePage(cctx, t.sid, t.target)
}

// closeTabs closes the windows of ids, quieting first those that are pages of session s (a
// page going with a dialog open ends Chromium: cdp.Quiet).
func (h *Host) closeTabs(ctx context.Context, b *cdp.Browser, s *session, ids []string) {
	for _, id := range ids {
		sid := ""
		s.pagesMu.Lock()
		for _, t := range s.pages {
			if t.target == id {
				sid = t.sid
				t.dialog.stopTimer()
			}
		}
		s.pagesMu.Unlock()
		b.ClosePage(ctx, sid, id)
	}
}

// windowSession is the session with a window of target id (nil: none), from the routes.
func (h *Host) windowSession(id string) *session {
	var found *session
	h.routes.Range(func(_, v any) bool {
		s := v.(*session)
		s.pagesMu.Lock()
		for _, t := range s.pages {
			if t.target == id {
				found = s
			}
		}
		s.pagesMu.Unlock()
		return found == nil
	})
	return found
}

// quietPages quiets every window of the session (before the browser or its context goes).
func (s *session) quietPages(b *cdp.Browser) {
	s.pagesMu.Lock()
	sids := make([]string, 0, len(s.pages))
	for _, t := range s.pages {
		sids = append(sids, t.sid)
		t.dialog.stopTimer()
	}
	s.pagesMu.Unlock()
	for _, sid := range sids {
		b.Quiet(sid)
	}
}

// browserAttach is the browser target's auto-attachment: every new window is attached flat
// and held until the host lets it run (windowAttached); with workers, shared workers too (the
// network guard's, wayout.go: held until they have its rules).
func browserAttach(workers bool) map[string]any {
	filter := []map[string]any{{"type": "page"}}
	if workers {
		filter = append(filter, map[string]any{"type": "shared_worker"})
	}
	return map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true, "filter": filter}
}

// windowAttached handles a window the browser attached (on the reader: it must not block):
// a window a session's page opened becomes a page of that session; any other is let run and
// left. A shared worker that the network guard does not take is let run too. It reports
// whether the event was such an attachment.
func (h *Host) windowAttached(b *cdp.Browser, ev cdp.Event) bool {
	if ev.SessionID != "" {
		return false
	}
	var p struct {
		SessionID string `json:"sessionId"`
		Info      struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
			OpenerID string `json:"openerId"`
		} `json:"targetInfo"`
		Waiting bool `json:"waitingForDebugger"`
	}
	if json.Unmarshal(ev.Params, &p) != nil || p.SessionID == "" {
		return false
	}
	switch {
	case p.Info.Type == "shared_worker" && h.way.all.Load() == nil:
	case p.Info.Type != "page":
		return false
	case !p.Waiting:
		// The host's own Target.attachToTarget (openPage) is announced too, and so are the
		// pages that ran before the auto-attachment was set: neither is held, nor anyone's
		// to let go.
		return true
	case p.Info.OpenerID != "":
		h.windowOpened(ev.Params) // openers.go: idempotent, and the window's root known now
		if s := h.pageSession(h.openers.rootOf(p.Info.TargetID)); s != nil {
			go h.adoptWindow(b, s, p.SessionID, p.Info.TargetID, p.Info.OpenerID)
			return true
		}
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if p.Waiting {
			b.Call(ctx, p.SessionID, "Runtime.runIfWaitingForDebugger", nil, nil)
		}
		b.Call(ctx, "", "Target.detachFromTarget", map[string]any{"sessionId": p.SessionID}, nil)
	}()
	return true
}

// adoptWindow makes the window of target (attached as sid, held) a page of session s, then
// lets it run; beyond MaxPages it is closed instead.
func (h *Host) adoptWindow(b *cdp.Browser, s *session, sid, target, opener string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.pagesMu.Lock()
	full := len(s.pages) >= MaxPages
	if !full {
		s.pages = append(s.pages, newTab(target, sid, opener))
		h.routes.Store(sid, s)
	}
	s.pagesMu.Unlock()
	if full {
		// Closed as it opens: its scripts are off before it runs, and it is let run first (its
		// opener's window.open waits for it: closed held, the opener would wait for ever).
		h.o.Log.Warn("a session's page opened a window beyond its bound: closed", "session", s.name, "max", MaxPages)
		off := b.Ask(ctx, sid, "Emulation.setScriptExecutionDisabled", map[string]any{"value": true})
		b.Call(ctx, sid, "Runtime.runIfWaitingForDebugger", nil, nil)
		off()
		b.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": target}, nil)
		return
	}
	// The domains are asked for before the window is let run, and answered after: a window
	// of another site (a link with target=_blank) has no renderer until it runs, and the
	// renderer takes what was asked before it runs its first script.
	var waits []func() error
	for _, m := range pageDomains {
		waits = append(waits, b.Ask(ctx, sid, m.method, m.params))
	}
	b.Call(ctx, sid, "Runtime.runIfWaitingForDebugger", nil, nil)
	var err error
	for _, w := range waits {
		if werr := w(); err == nil {
			err = werr
		}
	}
	if err != nil {
		h.o.Log.Warn("a window of a session's page could not be followed: closed", "session", s.name, "err", err)
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.ClosePage(cctx, sid, target)
		return
	}
	h.o.Log.Info("a session's page opened a window", "session", s.name)
}

// enablePage enables on the page of DevTools session sid what the host follows on every page:
// Page (lifecycle, dialogs, frames), Inspector (crashes), Network (requests; and no service
// worker sees the page's requests, sessions.go says why).
func enablePage(ctx context.Context, b *cdp.Browser, sid string) error {
	for _, m := range pageDomains {
		if err := b.Call(ctx, sid, m.method, m.params, nil); err != nil {
			return err
		}
	}
	return nil
}

var pageDomains = []struct {
	method string
	params any
}{{"Page.enable", nil}, {"Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}}, {"Inspector.enable", nil},
	{"Network.enable", map[string]any{"maxTotalBufferSize": 0, "maxResourceBufferSize": 0, "maxPostDataSize": 1}},
	{"Network.setBypassServiceWorker", map[string]any{"bypass": true}},
	// The page's console messages, for 'console list' (cdp keeps a level and a bounded text
	// of each: pagelog.go).
	{"Runtime.enable", nil}}

// windowGone forgets a window of a session whose target was destroyed (on the reader). The
// current page's window stays listed, gone, until the next verb hands the session back to
// its opener (lockSession, pageResult).
func (h *Host) windowGone(id string) {
	s := h.windowSession(id)
	if s == nil {
		return
	}
	s.pagesMu.Lock()
	defer s.pagesMu.Unlock()
	for i, t := range s.pages {
		if t.target != id || i == 0 {
			continue
		}
		t.gone = true
		t.dialog.stopTimer()
		if t != s.cur {
			s.pages = append(s.pages[:i], s.pages[i+1:]...)
			h.routes.Delete(t.sid)
		}
		return
	}
}

// Pages lists the session's windows.
func (h *Host) Pages(ctx context.Context, name string) (control.PageList, error) {
	b, s, unlock, err := h.lockSession(ctx, name)
	if err != nil {
		return control.PageList{}, err
	}
	defer unlock()
	s.pagesMu.Lock()
	tabs := append([]*tab(nil), s.pages...)
	s.pagesMu.Unlock()
	out := control.PageList{Session: s.name, Pages: []control.PageInfo{}}
	index := map[string]int{}
	for i, t := range tabs {
		index[t.target] = i + 1
	}
	for i, t := range tabs {
		info := control.PageInfo{Index: i + 1, Opener: index[t.opener], Current: t == s.cur}
		var r struct {
			Info struct {
				URL   string `json:"url"`
				Title string `json:"title"`
			} `json:"targetInfo"`
		}
		if err := b.Call(ctx, "", "Target.getTargetInfo", map[string]any{"targetId": t.target}, &r); err != nil {
			info.Closed = true
		}
		info.URL, info.Title = clip.Text(r.Info.URL, 2048), clip.Text(r.Info.Title, 256)
		s.pagesMu.Lock()
		info.Dialog = t.dialog.report(false)
		s.pagesMu.Unlock()
		// Each window's words are scanned on their own: one that shows a released secret is
		// discarded (the current page as every output's page; another window closed), and
		// the list is refused.
		if h.listedEchoes(info) {
			if t == s.cur {
				return control.PageList{}, h.echoed(ctx, b, s, "pages")
			}
			h.dropTab(ctx, b, s, t)
			h.reportEcho(ctx, s.name, originOf(info.URL), "pages")
			return control.PageList{}, errEchoed
		}
		out.Pages = append(out.Pages, info)
	}
	return out, nil
}

// listedEchoes reports whether a listed window's words hold a released secret.
func (h *Host) listedEchoes(info control.PageInfo) bool {
	if h.echo == nil || h.echo.Empty() {
		return false
	}
	b, err := json.Marshal(info)
	if err != nil {
		return true
	}
	defer clear(b)
	return h.echo.MatchJSON(b)
}

// SelectPage makes the session's window of index p.Page (1 its own page) the page its verbs
// drive, and answers it as visit does.
func (h *Host) SelectPage(ctx context.Context, p control.PageSelectParams) (control.PageResult, error) {
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return control.PageResult{}, err
	}
	defer unlock()
	s.pagesMu.Lock()
	var t *tab
	if p.Page >= 1 && p.Page <= len(s.pages) {
		t = s.pages[p.Page-1]
	}
	n := len(s.pages)
	s.pagesMu.Unlock()
	if t == nil {
		return control.PageResult{}, wire.Errorf(wire.CodePageUnknown, "session %q has %d page(s); there is no page %d", s.name, n, p.Page)
	}
	if t.gone || b.SessionErr(t.sid) != nil {
		return control.PageResult{}, wire.Errorf(wire.CodePageUnknown, "page %d of session %q has closed", p.Page, s.name)
	}
	s.selectTab(t)
	return h.pageResult(ctx, b, s)
}

// pageCount is how many windows the session has, for a page result (0 when only its own).
func (s *session) pageCount() int {
	s.pagesMu.Lock()
	defer s.pagesMu.Unlock()
	if len(s.pages) < 2 {
		return 0
	}
	return len(s.pages)
}

// followClose hands the session back to the current window's opener when the window closed
// under the verb (the site's window.close() after its sign-in, say); s.mu held. A window whose
// target is destroyed is told a moment after its last event: waited for briefly when the
// window no longer answers.
func (h *Host) followClose(ctx context.Context, b *cdp.Browser, s *session, answered error) {
	if !s.inWindow() {
		return
	}
	if answered != nil && b.SessionErr(s.sid) == nil {
		t := time.NewTimer(time.Second)
		select {
		case <-b.SessionDone(s.sid):
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	if errors.Is(b.SessionErr(s.sid), cdp.ErrDetached) {
		h.leaveWindow(ctx, b, s)
	}
}

// fnClosed says whether the document's window is closing: window.close() was called (closed is
// true at once) and the browser has not destroyed the window yet, which it does a moment
// later. Read in an isolated world, where the page cannot shadow it.
const fnClosed = `function() {
  return !!(this.defaultView && this.defaultView.closed);
}`

// ClosingWait bounds how long an action looks for a window that is closing and waits for it
// to be gone.
const ClosingWait = 5 * time.Second

// awaitClosing waits, after an action in a window of the session's (s.mu held), for the
// window to be gone when the action closed it (the site's window.close() after its sign-in, a
// "Close" button): its close is asynchronous, and the action's answer read the closing window
// before it went (a click answered with the window it closed, on a busy machine). The answer
// then comes from the window's opener (pageResult, followClose). ctx ends the wait when a
// dialog opens (a beforeunload the close asks); ClosingWait bounds it all (a renderer too busy
// to say is looked at no longer).
func (h *Host) awaitClosing(ctx context.Context, b *cdp.Browser, s *session) {
	if !s.inWindow() || b.SessionErr(s.sid) != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, ClosingWait)
	defer cancel()
	if closed, err := h.callOnDocument(ctx, b, s, fnClosed); err != nil || !closed {
		return
	}
	select {
	case <-b.SessionDone(s.sid):
	case <-ctx.Done():
	}
}

// freezeOpeners freezes the windows that opened the session's current window, up to its own
// page (Page.setWebLifecycleState: no task of theirs runs), for a sign-in in the window; s.mu
// held. They are thawed when the verb ends (thaw). An opener with a navigation under way is
// DOCUMENT_CHANGED: its new document would not be frozen.
func (h *Host) freezeOpeners(ctx context.Context, b *cdp.Browser, s *session) error {
	for _, t := range s.openersOf(s.cur) {
		if t.navPending.Load() {
			return wire.Errorf(wire.CodeDocumentChanged, "a window that opened this one is navigating (it could reach this window's origin); nothing was typed")
		}
		if frozen(s.frozen, t.sid) {
			continue
		}
		if err := b.Call(ctx, t.sid, "Page.setWebLifecycleState", map[string]any{"state": "frozen"}, nil); err != nil {
			return wire.Errorf(wire.CodeDocumentChanged, "a window that opened this one could not be frozen (%v); nothing was typed", err)
		}
		s.frozen = append(s.frozen, t.sid)
		h.o.Log.Info("froze a window that opened the one signed in on", "session", s.name)
	}
	return nil
}

func frozen(sids []string, sid string) bool {
	for _, x := range sids {
		if x == sid {
			return true
		}
	}
	return false
}

// thaw lets the windows freezeOpeners froze run again (the verb ends; s.mu held).
func (h *Host) thaw(b *cdp.Browser, s *session) {
	if len(s.frozen) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, sid := range s.frozen {
		err := b.Call(ctx, sid, "Page.setWebLifecycleState", map[string]any{"state": "active"}, nil)
		h.o.Log.Info("thawed a window frozen for a sign-in", "session", s.name, "ok", err == nil)
	}
	s.frozen = nil
}

// openersOf lists the windows of the session that opened t, directly or through others, and
// its own page, which is kept and frozen with them even when a closed window broke the chain
// (it could reach t by t's name); s.mu held.
func (s *session) openersOf(t *tab) []*tab {
	s.pagesMu.Lock()
	defer s.pagesMu.Unlock()
	var out []*tab
	for id := t.opener; id != "" && len(out) < MaxPages; {
		var o *tab
		for _, x := range s.pages {
			if x.target == id {
				o = x
			}
		}
		if o == nil {
			break
		}
		out = append(out, o)
		id = o.opener
	}
	if len(s.pages) > 0 && t != s.pages[0] && (len(out) == 0 || out[len(out)-1] != s.pages[0]) {
		out = append(out, s.pages[0])
	}
	return out
}

// parkedEvent follows the navigation state of window t, which is not the current page (on the
// reader, pagesMu held): its document as it commits, tainted when another window could script
// it (openers.go), and whether a navigation of it is under way (freezeOpeners).
func (s *session) parkedEvent(t *tab, ev cdp.Event) {
	switch ev.Method {
	case "Page.frameStartedNavigating", "Page.frameNavigated", "Page.frameStoppedLoading":
		s.navState(t.target, &t.navPending, &t.loaded, ev)
	}
}
