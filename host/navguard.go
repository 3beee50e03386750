package host

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/internal/wire"
)

// Keeping the password's document the one it is typed into.
//
// Input.insertText delivers text to whatever document holds the page's focus when it arrives.
// Checking the document and the focus right before and after typing cannot stop a document
// that commits in between: red-team round 3 had a popup of its own (same site, so the same
// renderer, and still the page's opener after an agent's visit) navigate the login page to a
// page of its own with an autofocused textarea, timed on the audit log, and about one try in
// forty the password arrived there. So, around every typing of a password:
//
//   - No other window can script or navigate the page: every page target the session's page
//     opened, directly or through others (they hold a reference to it, window.opener among
//     them), is closed before the person is asked and again right before typing, and one that
//     appears while typing fails the attempt (closeOpened).
//   - No navigation is under way when typing starts (one started earlier would commit into
//     the typed text): the main frame's navigation state is followed from Page events
//     (navPending), and a pending one is DOCUMENT_CHANGED with nothing typed.
//   - No navigation can start while typing: from before the password field is focused until
//     the host submits, every document request of the page is held (Fetch) and failed; one
//     seen at all fails the attempt (navGate).
//   - If the document or the focus moved anyway, the text may be anywhere: the page is
//     discarded, not merely "cleared".

// trackNavigation follows the current page's main-frame navigation state from a session
// event (called on the event reader: must not block).
func (s *session) trackNavigation(ev cdp.Event) {
	if ev.Method == "Fetch.requestPaused" {
		s.heldNavs.Add(1)
		select {
		case s.paused <- ev:
		default: // counted; held until Fetch.disable
		}
		return
	}
	s.navState(s.pageTarget(), &s.navPending, &s.loaded, ev)
}

// navState follows the navigation state of the main frame of window target (the current
// page's, in the session's fields, or another window's, in its tab) from a session event.
func (s *session) navState(target string, pending *atomic.Bool, loaded *atomic.Pointer[loadedDoc], ev cdp.Event) {
	var p struct {
		FrameID        string `json:"frameId"`
		NavigationType string `json:"navigationType"`
		Frame          struct {
			ID       string `json:"id"`
			ParentID string `json:"parentId"`
			LoaderID string `json:"loaderId"`
			URL      string `json:"url"`
			Origin   string `json:"securityOrigin"`
		} `json:"frame"`
	}
	json.Unmarshal(ev.Params, &p)
	main := func(id string) bool { return id != "" && id == target }
	switch ev.Method {
	case "Page.frameStartedNavigating":
		if main(p.FrameID) && p.NavigationType != "sameDocument" && p.NavigationType != "historySameDocument" {
			pending.Store(true)
		}
	case "Page.frameNavigated":
		if main(p.Frame.ID) && p.Frame.ParentID == "" {
			pending.Store(false)
			d := &loadedDoc{document: p.Frame.ID + "/" + p.Frame.LoaderID, url: p.Frame.URL, origin: p.Frame.Origin}
			// A window opened from the session's pages that can script the new document
			// (openers.go) taints it from the start.
			if s.openers != nil {
				d.tainted.Store(s.openers.committed(target, target == s.rootTarget(), d))
			}
			loaded.Store(d)
			s.documentGone(d.document) // what was typed into the one before is gone (wayout.go)
		}
	case "Page.frameStoppedLoading":
		if main(p.FrameID) {
			pending.Store(false)
		}
	}
}

// closeOpened closes every page target that the session's page opened, directly or through
// others, and waits until they are gone. It returns how many there were; an error when one
// would not go (then nothing may be typed). When the session drives a window its page opened
// (pages.go), that window and its openers stay, and its openers are frozen until the verb
// ends (freezeOpeners): the window's sign-in needs them, and a cross-origin one cannot script
// it (openers.go).
func (h *Host) closeOpened(ctx context.Context, b *cdp.Browser, s *session) (int, error) {
	keep := map[string]bool{s.targetID: true, s.rootTarget(): true}
	if s.inWindow() {
		for _, t := range s.openersOf(s.cur) {
			keep[t.target] = true
		}
		if err := h.freezeOpeners(ctx, b, s); err != nil {
			return 0, err
		}
	}
	root := s.rootTarget()
	list := func() ([]string, error) {
		var r struct {
			Infos []struct {
				TargetID string `json:"targetId"`
				Type     string `json:"type"`
				OpenerID string `json:"openerId"`
			} `json:"targetInfos"`
		}
		if err := b.Call(ctx, "", "Target.getTargets", nil, &r); err != nil {
			return nil, err
		}
		// Besides the opener chains Chromium reports now, every window the host saw
		// opened from the session's page (openers.go) and every loose one.
		group := map[string]bool{root: true, s.targetID: true}
		live := map[string]bool{}
		for _, t := range r.Infos {
			live[t.TargetID] = true
		}
		for _, id := range append(h.openers.windowsOf(root), h.openers.looseWindows()...) {
			if live[id] {
				group[id] = true
			}
		}
		for grew := true; grew; {
			grew = false
			for _, t := range r.Infos {
				if t.OpenerID != "" && group[t.OpenerID] && !group[t.TargetID] {
					group[t.TargetID], grew = true, true
				}
			}
		}
		var opened []string
		for id := range group {
			if !keep[id] && live[id] {
				opened = append(opened, id)
			}
		}
		return opened, nil
	}
	opened, err := list()
	if err != nil || len(opened) == 0 {
		return 0, err
	}
	h.closeTabs(ctx, b, s, opened)
	for deadline := time.Now().Add(3 * time.Second); ; {
		left, err := list()
		if err != nil {
			return len(opened), err
		}
		if len(left) == 0 {
			h.o.Log.Info("closed the windows the login page opened", "session", s.name, "windows", len(opened))
			return len(opened), nil
		}
		if time.Now().After(deadline) {
			return len(opened), wire.Errorf(wire.CodeDocumentChanged, "a window the login page opened (it could script or navigate the page) would not close; nothing was typed")
		}
		select {
		case <-ctx.Done():
			return len(opened), ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// navGate holds and fails every document request of the session's page while it is open.
type navGate struct {
	h    *Host
	b    *cdp.Browser
	s    *session
	open bool
}

// holdNavigations opens the gate: from now until end, no navigation of the page can reach
// the network or commit.
func (h *Host) holdNavigations(ctx context.Context, b *cdp.Browser, s *session) (*navGate, error) {
	s.heldNavs.Store(0)
	for len(s.paused) > 0 {
		<-s.paused
	}
	err := b.Call(ctx, s.sid, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}}}, nil)
	if err != nil {
		return nil, err
	}
	return &navGate{h: h, b: b, s: s, open: true}, nil
}

// tried fails the requests held so far and reports whether any navigation was tried since
// the gate opened.
func (g *navGate) tried(ctx context.Context) bool {
	for {
		select {
		case ev := <-g.s.paused:
			var p struct {
				RequestID string `json:"requestId"`
			}
			json.Unmarshal(ev.Params, &p)
			g.b.Call(ctx, g.s.sid, "Fetch.failRequest", map[string]any{"requestId": p.RequestID, "errorReason": "Aborted"}, nil)
		default:
			return g.s.heldNavs.Load() > 0
		}
	}
}

// end closes the gate (before the host's own submit, or when the attempt ends). Every
// navigation tried while it was open is failed, never let through: one under way whose held
// request has not been reported yet is waited for (briefly) first.
func (g *navGate) end(ctx context.Context) {
	if !g.open {
		return
	}
	g.open = false
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	for deadline := time.Now().Add(500 * time.Millisecond); ; {
		g.tried(cctx)
		if !g.s.navPending.Load() || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.b.Call(cctx, g.s.sid, "Fetch.disable", nil, nil)
}

// navUnderWay is DOCUMENT_CHANGED when a navigation of the page's main frame has started and
// not ended (a focus handler may start one; fixed functions in the page then wait for it).
func navUnderWay(s *session, field string) error {
	if s.navPending.Load() {
		return wire.Errorf(wire.CodeDocumentChanged, "a navigation of the page is under way (it started when the %s field was focused, or before); nothing was typed", field)
	}
	return nil
}

var errNavDuringTyping = wire.Errorf(wire.CodeDocumentChanged, "a navigation of the page was started while the password was being typed; it was stopped, and the page was discarded")
