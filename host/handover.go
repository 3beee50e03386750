package host

import (
	"context"
	"crypto/sha256"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/wire"
)

// Hand-over (issue 45): the agent asks the person to do, in a session's window, what only a
// person can (a CAPTCHA, a consent screen, an SSO page with a hardware key, a sign-in the
// agent cannot do), and goes on when they are done.
//
//   - The session's window is brought to the front, and brokerd asks the person at a presence
//     prompt of its own (the release's provider and display: the agent cannot answer it) to
//     press Done when they are done. The call returns done, declined, or PRESENCE_TIMEOUT (the
//     config's presence.handover_timeout_seconds).
//   - Meanwhile every verb of the agent on that session answers HANDED_OVER (no snapshot, wait,
//     screenshot or click while the person types), 'session list' shows it handed over without
//     its URL or title, and other sessions work as usual.
//   - What the person typed is treated like a released secret wherever the host can see it:
//     the session's page is looked at every handoverLook (and as a navigation starts) while the
//     person acts, and every secret field holding a value (a password, a one-time code: what an
//     outline never lists) is remembered for the echo scan (echoed.go) as it was last seen
//     before its document went; when the hand-over ends, those still on the page are tainted
//     as if the host had typed them (taint.go: never in an output, screenshots and page-editing
//     verbs refused while they hold a value). Only then is the page the agent's again.
//   - Without a window (a host without --window) brokerd asks only where no window could be
//     shown, with the page's URL and title, for what the person can do elsewhere (approve on
//     another device); where a display exists it refuses, NO_WINDOW.
//
// Not seen: what the person types into a field that is not a secret one (it is the agent's to
// read afterwards, as any page text), into a frame of another site (another renderer: not in
// the page's snapshot), or into a field whose value the page takes away within one look
// before its document goes.

// handoverLook is how often the page is looked at while the person acts.
const handoverLook = 300 * time.Millisecond

// errHandedOver answers a verb of a session handed over to the person.
func errHandedOver(name string) error {
	return wire.Errorf(wire.CodeHandedOver, "session %q is handed over to the person (headless handover); its verbs wait for them to press Done", name)
}

// Handover hands session p.Session over to the person until they press Done or Decline, or the
// prompt's bound passes.
func (h *Host) Handover(ctx context.Context, p control.HandoverParams) (control.HandoverResult, error) {
	reason := strings.TrimSpace(p.Reason)
	if reason == "" || len(reason) > brokerapi.MaxReason || !procstat.Printable(reason) {
		return control.HandoverResult{}, wire.Errorf(wire.CodeInvalidArgument, "the reason must be one line of printable text, 1 to %d bytes", brokerapi.MaxReason)
	}
	if h.o.Broker == nil {
		return control.HandoverResult{}, wire.Errorf(wire.CodeBrokerUnavail, "no broker configured")
	}
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return control.HandoverResult{}, err
	}
	window := h.o.Window != ""
	if window {
		if err := h.bringToFront(ctx, b, s); err != nil {
			unlock()
			return control.HandoverResult{}, wire.Errorf(wire.CodeNoWindow, "session %q has no window to hand over: %v", s.name, err)
		}
	}
	u, title, err := h.pageInfo(ctx, b, s)
	if err != nil {
		unlock()
		return control.HandoverResult{}, h.browserErr(err)
	}
	s.handedOver.Store(true)
	unlock()
	w := h.watchTyping(b, s)
	rc, err := h.o.Broker(ctx)
	var res brokerapi.HandoverResult
	if err == nil {
		err = rc.Call(ctx, brokerapi.MethodHandover, brokerapi.HandoverParams{Session: s.name, Reason: reason, URL: pageURL(u),
			Title: procstat.Clean(title, brokerapi.MaxTitle), Window: window, Agent: agentChain(ctx), Client: agentClient(ctx)}, &res)
		rc.Close()
	} else {
		err = wire.Errorf(wire.CodeBrokerUnavail, "%w", err)
	}
	// The page is the agent's again only once what the person typed is contained, whatever
	// the answer (a prompt nobody answered leaves the person's typing on the page too).
	s.mu.Lock()
	w.stop()
	h.containTyped(context.WithoutCancel(ctx), b, s, w)
	s.handedOver.Store(false)
	s.mu.Unlock()
	h.o.Log.Info("hand-over ended", "session", s.name, "status", res.Status, "code", wire.CodeOf(err), "fields", w.count())
	if err != nil {
		if ctx.Err() != nil {
			return control.HandoverResult{}, withdrawn(ctx)
		}
		return control.HandoverResult{}, err
	}
	out := control.HandoverResult{Session: s.name, Status: res.Status}
	if u, t, err := h.pageInfo(ctx, b, s); err == nil {
		out.URL, out.Title = u, t
	}
	return out, nil
}

// bringToFront shows the session's window in front of the person: restored if minimized, its
// tab and window activated.
func (h *Host) bringToFront(ctx context.Context, b *cdp.Browser, s *session) error {
	var w struct {
		WindowID int `json:"windowId"`
		Bounds   struct {
			WindowState string `json:"windowState"`
		} `json:"bounds"`
	}
	if err := b.Call(ctx, "", "Browser.getWindowForTarget", map[string]any{"targetId": s.targetID}, &w); err != nil {
		return err
	}
	if w.Bounds.WindowState == "minimized" {
		if err := b.Call(ctx, "", "Browser.setWindowBounds", map[string]any{"windowId": w.WindowID, "bounds": map[string]any{"windowState": "normal"}}, nil); err != nil {
			return err
		}
	}
	return b.Call(ctx, s.sid, "Page.bringToFront", nil, nil)
}

// pageURL is u as the person's prompt and the audit show it: without query or fragment
// (where sites put tokens), bounded.
func pageURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	p.RawQuery, p.ForceQuery, p.Fragment, p.RawFragment, p.User = "", false, "", "", nil
	return clip.Text(procstat.Clean(p.String(), brokerapi.MaxURL), brokerapi.MaxURL)
}

// typing is what the host saw of the secret fields of a handed-over session's page: the last
// value of each, by the document it was in.
type typing struct {
	mu      sync.Mutex
	doc     string                         // the main frame's document of seen
	seen    map[int64]snapshot.SecretField // by backend node id
	flushed map[[32]byte]bool              // values already given to the echo scan
	done    chan struct{}
	exited  chan struct{}
}

// watchTyping looks at the session's page every handoverLook, and as soon as its main frame
// starts to load another document, until stop.
func (h *Host) watchTyping(b *cdp.Browser, s *session) *typing {
	w := &typing{seen: map[int64]snapshot.SecretField{}, flushed: map[[32]byte]bool{}, done: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(w.exited)
		t := time.NewTicker(handoverLook)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case ev := <-s.events:
				if ev.Method != "Page.frameStartedLoading" && ev.Method != "Page.frameRequestedNavigation" {
					continue
				}
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), ClearWait)
			h.lookAtTyping(ctx, b, s, w)
			cancel()
		}
	}()
	return w
}

// stop ends the looks (and waits for the one under way).
func (w *typing) stop() {
	close(w.done)
	<-w.exited
}

// count is how many distinct secret values the hand-over saw.
func (w *typing) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.flushed) + len(w.seen)
}

// lookAtTyping takes one look: the secret fields holding a value now. When the main frame
// shows another document than the last look's, the values seen in the old one are given to
// the echo scan first (their fields are gone).
func (h *Host) lookAtTyping(ctx context.Context, b *cdp.Browser, s *session, w *typing) string {
	doc, err := h.documentID(ctx, b, s)
	if err != nil {
		return ""
	}
	raw, err := captureSnapshot(ctx, b, s)
	if err != nil {
		return ""
	}
	w.mu.Lock()
	known := map[int64]bool{}
	for id := range w.seen {
		known[id] = doc == w.doc
	}
	w.mu.Unlock()
	fields, err := snapshot.SecretFields(raw, known)
	clear(raw)
	if err != nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if doc != w.doc {
		h.flushTyping(w)
		w.doc = doc
	}
	for _, f := range fields {
		w.seen[f.BackendNodeID] = f
	}
	return doc
}

// flushTyping gives every value seen to the echo scan, once each; w.mu is held.
func (h *Host) flushTyping(w *typing) {
	for id, f := range w.seen {
		k := sha256.Sum256([]byte(f.Value))
		if !w.flushed[k] && h.echo != nil {
			v := []byte(f.Value)
			h.echo.Add(v, "")
			clear(v)
			w.flushed[k] = true
		}
		delete(w.seen, id)
	}
}

// containTyped is the end of a hand-over (s.mu held): one last look, every value seen given
// to the echo scan, and the fields of the shown document that any look saw as secret fields
// holding a value tainted as if the host had typed them.
func (h *Host) containTyped(ctx context.Context, b *cdp.Browser, s *session, w *typing) {
	ctx, cancel := context.WithTimeout(ctx, ClearWait)
	defer cancel()
	doc := h.lookAtTyping(ctx, b, s, w)
	w.mu.Lock()
	var typed []snapshot.SecretField // every secret field of this document a look saw filled,
	if doc != "" && doc == w.doc {   // also one the person showed in clear since (type=text)
		for _, f := range w.seen {
			typed = append(typed, f)
		}
	}
	h.flushTyping(w)
	w.mu.Unlock()
	for _, f := range typed {
		s.addTaint(doc, snapshot.Target{BackendNodeID: f.BackendNodeID, FrameID: f.FrameID})
	}
	if doc == "" && b.SessionErr(s.sid) == nil {
		// The page did not answer the last look: what it holds cannot be known, so it goes.
		h.o.Log.Warn("the handed-over page did not answer: discarding it", "session", s.name)
		h.discardPage(ctx, b, s)
	}
	s.drain()
}

// handedOverErr is HANDED_OVER for a session the person acts in, nil otherwise.
func (s *session) handedOverErr() error {
	if s.handedOver.Load() {
		return errHandedOver(s.name)
	}
	return nil
}
