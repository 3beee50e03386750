package host

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/internal/wire"
)

// Windows that can script a session's page.
//
// A window a page opens keeps a handle to its opener (window.opener) for the opener's whole
// life, across its navigations: red-team round 13b published a page at /u/agent/op2 that
// opened a same-origin popup and then went to the real /login; the popup appended a script of
// its own to /login's document (or rewrote it with document.open) and read the password as
// the host typed it. The page had loaded at /login, so the login-path rule passed, and the
// host closed the popup at the sign-in: too late, the script was in.
//
// So the host follows every page target that has an opener (Target.setDiscoverTargets) back
// to the session whose page opened it, directly or through others, and marks the session's
// document tainted when such a window is alive at any moment of its life: when it commits
// with one open, or when one opens during it. A tainted document is never signed in on, nor
// answered with HTTP Basic (DOCUMENT_CHANGED: visit it again once the windows are closed;
// the sign-in closes them first). A window whose opener the host cannot follow taints every
// session while it is open. Written by the event reader only.

// openerTrack is what the host knows of the windows opened from pages: each opened target's
// root, the session page (a target id) it descends from, directly or through other opened
// windows; and those whose opener it could not follow (loose). Counting by root target, not
// by session, keeps a window of a page that was replaced (revive) from counting against the
// session's next page; revive closes them.
type openerTrack struct {
	mu    sync.Mutex
	root  map[string]string // opened target → the session page target it descends from
	loose map[string]bool   // opened targets with no known root
}

// reset forgets every window (a new browser: none of the old one's exists).
func (t *openerTrack) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.root, t.loose = map[string]string{}, map[string]bool{}
}

// windowsOf lists the open windows descending from the page target root.
func (t *openerTrack) windowsOf(root string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for id, r := range t.root {
		if r == root {
			out = append(out, id)
		}
	}
	return out
}

// looseWindows lists the open windows whose opener the host could not follow.
func (t *openerTrack) looseWindows() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.loose))
	for id := range t.loose {
		out = append(out, id)
	}
	return out
}

// reaching reports whether a window may reach the page target root: one of its descendants,
// or a loose one.
func (t *openerTrack) reaching(root string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.loose) > 0 {
		return true
	}
	for _, r := range t.root {
		if r == root {
			return true
		}
	}
	return false
}

// watchOpeners has browser b report every target (Target.setDiscoverTargets) and follows
// those opened from pages. The old browser's windows are forgotten first.
func (h *Host) watchOpeners(ctx context.Context, b *cdp.Browser) error {
	h.openers.reset()
	b.Subscribe(func(ev cdp.Event) {
		if ev.SessionID != "" {
			return
		}
		switch ev.Method {
		case "Target.targetCreated":
			h.windowOpened(ev.Params)
			h.sharedWorker(ev.Params) // wayout.go
		case "Target.targetDestroyed":
			h.windowClosed(ev.Params)
			h.way.sharedGone(ev.Params)
		}
	})
	return b.Call(ctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true}, nil)
}

// pageSession is the session whose page is target id, nil when none: from the routes, which
// the event reader may read (never h.mu, which a verb may hold while it waits on the reader).
func (h *Host) pageSession(id string) *session {
	var found *session
	h.routes.Range(func(_, v any) bool {
		if s := v.(*session); s.pageTarget() == id {
			found = s
			return false
		}
		return true
	})
	return found
}

func (h *Host) windowOpened(params json.RawMessage) {
	var p struct {
		Info struct {
			TargetID string `json:"targetId"`
			OpenerID string `json:"openerId"`
		} `json:"targetInfo"`
	}
	// A window opened from a page names its opener when it is created (Chromium reports the
	// first live page of the opener chain, so a frame's popup names the frame's page); the
	// host's own pages have none.
	if json.Unmarshal(params, &p) != nil || p.Info.TargetID == "" || p.Info.OpenerID == "" {
		return
	}
	t := &h.openers
	t.mu.Lock()
	if _, seen := t.root[p.Info.TargetID]; seen || t.loose[p.Info.TargetID] {
		t.mu.Unlock()
		return
	}
	root := ""
	if s := h.pageSession(p.Info.OpenerID); s != nil {
		root = p.Info.OpenerID
	} else if r, ok := t.root[p.Info.OpenerID]; ok {
		root = r
	}
	if root != "" {
		t.root[p.Info.TargetID] = root
		t.mu.Unlock()
		if s := h.pageSession(root); s != nil {
			s.taintLoaded()
		}
		return
	}
	// An opener the host cannot follow: every session is suspect while it is open.
	t.loose[p.Info.TargetID] = true
	t.mu.Unlock()
	h.routes.Range(func(_, v any) bool {
		v.(*session).taintLoaded()
		return true
	})
}

func (h *Host) windowClosed(params json.RawMessage) {
	var p struct {
		TargetID string `json:"targetId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	t := &h.openers
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.root, p.TargetID)
	delete(t.loose, p.TargetID)
}

// reachable reports whether a window opened from pages may reach the session's page now.
func (s *session) reachable() bool {
	return s.openers != nil && s.openers.reaching(s.pageTarget())
}

// taintLoaded marks the session's current document as reachable by another window.
func (s *session) taintLoaded() {
	if d := s.loaded.Load(); d != nil {
		d.tainted.Store(true)
	}
}

// errReachable answers a sign-in on a document another window could script.
var errReachable = wire.SentinelHint(wire.CodeDocumentChanged,
	"a window opened from this session's pages could script this page since it loaded (it is closed now); nothing was asked or typed",
	"visit the login page again and sign in there, with no window open from the session's pages")

// errReachableAnswer answers an HTTP Basic sign-in whose answered document another window
// could read: the page was discarded.
var errReachableAnswer = wire.SentinelHint(wire.CodeDocumentChanged,
	"a window opened from this session's pages could read the page the HTTP Basic answer loaded; the page was discarded",
	"visit the page again and sign in there, with no window open from the session's pages")

// errReachableBasic answers an HTTP Basic sign-in refused before the header was sent: a
// window opened from the session's pages would hold the answered page.
var errReachableBasic = wire.SentinelHint(wire.CodeDocumentChanged,
	"a window opened from this session's pages would hold the page the HTTP Basic answer loads; nothing was sent",
	"visit the page again and sign in there, with no window open from the session's pages")
