package host

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
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
//
// A window the session's pages opened is a page of the session too (pages.go), and may be
// signed in on (an identity provider's pop-up): its opener must stay, and a cross-origin one
// cannot script it. So a window's document is tainted only when a window or frame of the same
// pages (the session's own page and every window opened from it) is on the document's origin
// at any moment of its life (same origin: it can script it, by its opener, its name or
// frames), or when a window of no known opener is open; the host follows where every frame
// and window of those pages is (place) for that. Past maxPlaced frames it stops telling, and
// every window's document is tainted.

// openerTrack is what the host knows of the windows opened from pages: each opened target's
// root, the session page (a target id) it descends from, directly or through other opened
// windows; and those whose opener it could not follow (loose). Counting by root target, not
// by session, keeps a window of a page that was replaced (revive) from counting against the
// session's next page; revive closes them.
type openerTrack struct {
	mu    sync.Mutex
	root  map[string]string // opened target → the session page target it descends from
	loose map[string]bool   // opened targets with no known root
	// where is every frame of the followed pages (a window's main frame is its target id, an
	// out-of-process frame's target id its frame id): the window it is in and its origin;
	// docs the current document of each window. overflow: where was full once.
	where    map[string]placed
	docs     map[string]*loadedDoc
	overflow bool
}

type placed struct{ window, origin string }

// maxPlaced bounds the frames followed for the windows' origins.
const maxPlaced = 4096

// reset forgets every window (a new browser: none of the old one's exists).
func (t *openerTrack) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.root, t.loose = map[string]string{}, map[string]bool{}
	t.where, t.docs, t.overflow = map[string]placed{}, map[string]*loadedDoc{}, false
}

// rootOf is the session page a window descends from (the window itself when it opened from
// none the host follows).
func (t *openerTrack) rootOf(id string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rootLocked(id)
}

func (t *openerTrack) rootLocked(id string) string {
	if r, ok := t.root[id]; ok {
		return r
	}
	return id
}

// place records that frame is in window and shows origin now, and taints the documents of
// the other windows of the same pages on that origin (t.mu not held).
func (t *openerTrack) place(frame, window, origin string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.where == nil {
		return
	}
	if _, ok := t.where[frame]; !ok && len(t.where) >= maxPlaced {
		t.overflow = true
		for _, d := range t.docs {
			d.tainted.Store(true)
		}
		return
	}
	t.where[frame] = placed{window, origin}
	if !webOrigin(origin) {
		return
	}
	g := t.rootLocked(window)
	for w, d := range t.docs {
		if w != window && d.origin == origin && t.rootLocked(w) == g {
			d.tainted.Store(true)
		}
	}
}

// unplace forgets a frame that went (Page.frameDetached), or a window and its frames.
func (t *openerTrack) unplace(id string, window bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.where, id)
	if !window {
		return
	}
	delete(t.docs, id)
	for f, p := range t.where {
		if p.window == id {
			delete(t.where, f)
		}
	}
}

// committed registers d, the new document of window (on origin d.origin), and reports whether
// another window could script it from the start: for the session's own page (root), any
// window opened from it; for a window it opened, a window or frame of the same pages on its
// origin, or a window of no known opener (and anything, once where overflowed).
func (t *openerTrack) committed(window string, root bool, d *loadedDoc) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.docs == nil {
		return true
	}
	t.docs[window] = d
	if len(t.loose) > 0 || t.overflow {
		return true
	}
	g := t.rootLocked(window)
	if root {
		for _, r := range t.root {
			if r == g {
				return true
			}
		}
		return false
	}
	if !webOrigin(d.origin) {
		return true // an opaque or unknown origin: nothing says who can reach it
	}
	for _, p := range t.where {
		if p.window != window && p.origin == d.origin && t.rootLocked(p.window) == g {
			return true
		}
	}
	return false
}

// webOrigin reports whether o is an http(s) origin (not "null", "://" or empty).
func webOrigin(o string) bool {
	return strings.HasPrefix(o, "http://") || strings.HasPrefix(o, "https://")
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
			h.targetPlaced(ev.Params)
		case "Target.targetInfoChanged":
			h.targetPlaced(ev.Params)
		case "Target.targetDestroyed":
			h.windowClosed(ev.Params)
			h.way.sharedGone(ev.Params)
		}
	})
	if err := b.Call(ctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true}, nil); err != nil {
		return err
	}
	// Every new window attached and held before it runs (pages.go); the network guard's
	// shared workers too once it holds every request (wayout.go).
	return b.Call(ctx, "", "Target.setAutoAttach", browserAttach(false), nil)
}

// targetPlaced follows where a window or an out-of-process frame of followed pages is, from
// the browser's own report of it (Target.targetCreated, Target.targetInfoChanged: its URL).
func (h *Host) targetPlaced(params json.RawMessage) {
	var p struct {
		Info struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
			URL      string `json:"url"`
			ParentID string `json:"parentId"`
		} `json:"targetInfo"`
	}
	if json.Unmarshal(params, &p) != nil || p.Info.TargetID == "" {
		return
	}
	o := urlOrigin(p.Info.URL)
	if o == "" {
		return // about:blank and the like: its frame's own commit says where it is
	}
	t := &h.openers
	switch p.Info.Type {
	case "page":
		t.place(p.Info.TargetID, p.Info.TargetID, o)
	case "iframe":
		t.mu.Lock()
		window := p.Info.ParentID
		if w, ok := t.where[window]; ok {
			window = w.window
		}
		t.mu.Unlock()
		if window != "" {
			t.place(p.Info.TargetID, window, o)
		}
	}
}

// urlOrigin is the origin of an http(s) URL (a blob: URL's inner one), "" for any other.
func urlOrigin(raw string) string {
	raw = strings.TrimPrefix(raw, "blob:")
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p := u.Port(); p != "" && !(u.Scheme == "http" && p == "80") && !(u.Scheme == "https" && p == "443") {
		host += ":" + p
	}
	return u.Scheme + "://" + host
}

// pageSession is the session whose own page is target id, nil when none: from the routes, which
// the event reader may read (never h.mu, which a verb may hold while it waits on the reader).
func (h *Host) pageSession(id string) *session {
	var found *session
	h.routes.Range(func(_, v any) bool {
		if s := v.(*session); s.rootTarget() == id {
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
		if d := t.docs[root]; d != nil {
			d.tainted.Store(true) // the session's own page: any window of it taints it
		}
		t.mu.Unlock()
		return
	}
	// An opener the host cannot follow: every document is suspect while it is open.
	t.loose[p.Info.TargetID] = true
	for _, d := range t.docs {
		d.tainted.Store(true)
	}
	t.mu.Unlock()
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
	delete(t.root, p.TargetID)
	delete(t.loose, p.TargetID)
	t.mu.Unlock()
	t.unplace(p.TargetID, true)
	h.windowGone(p.TargetID) // pages.go
}

// reachable reports whether a window opened from pages may reach the session's current page
// now: for its own page, any window opened from it; for a window it opened, one of the same
// pages on the same origin (committed says which).
func (s *session) reachable() bool {
	if s.openers == nil {
		return false
	}
	if s.pageTarget() == s.rootTarget() {
		return s.openers.reaching(s.pageTarget())
	}
	d := s.loaded.Load()
	return d == nil || d.tainted.Load()
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
