package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/wire"
)

// CheckNavigable accepts only http and https URLs with a host.
func CheckNavigable(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", wire.Errorf(wire.CodeUnsafeNav, "refusing to navigate to %q: only http and https URLs", clip.Text(raw, 200))
	}
	if u.User != nil {
		return "", wire.Errorf(wire.CodeUnsafeNav, "refusing a URL with credentials in it")
	}
	return u.String(), nil
}

// Visit navigates a session and waits for the page to load.
func (h *Host) Visit(ctx context.Context, p control.VisitParams) (control.PageResult, error) {
	target, err := CheckNavigable(p.URL)
	if err != nil {
		return control.PageResult{}, err
	}
	if err := h.navAllowed(target); err != nil {
		return control.PageResult{}, err
	}
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return control.PageResult{}, err
	}
	defer unlock()
	return h.leave(ctx, b, s, func(ctx context.Context) error { return h.navigate(ctx, b, s, target, visitWait(p)) })
}

// leave runs a navigation the agent asked for (visit, back, forward, reload): a dialog the
// page holds is dismissed first (the session leaves the page), and one the navigation opens
// (beforeunload, or the new page's) ends it: the result shows it (dialogs.go).
func (h *Host) leave(ctx context.Context, b *cdp.Browser, s *session, nav func(ctx context.Context) error) (control.PageResult, error) {
	dismissed := h.dismissForNavigation(ctx, b, s)
	_, seq := s.openDialog()
	dctx, cancel := s.untilDialog(ctx, seq)
	defer cancel()
	if err := nav(dctx); err != nil && context.Cause(dctx) != errDialogOpened {
		return control.PageResult{}, err
	}
	r, err := h.pageResult(ctx, b, s)
	if err == nil && r.Dialog == nil {
		r.Dialog = dismissed
	}
	return r, err
}

// visitWait is how long visit p waits for its page: its timeout, bounded (wait's bounds).
func visitWait(p control.VisitParams) time.Duration {
	if p.TimeoutMS <= 0 {
		return NavigationWait
	}
	return min(time.Duration(p.TimeoutMS)*time.Millisecond, control.MaxWait)
}

// navigate has session s's page open target (checked navigable and allowed) and waits, at most
// wait, for its load: visit's navigation, and a journey's. A redirect off the allowlist is
// UNSAFE_NAVIGATION.
func (h *Host) navigate(ctx context.Context, b *cdp.Browser, s *session, target string, wait time.Duration) error {
	s.drain()
	clear(s.refs)
	var r struct {
		LoaderID   string `json:"loaderId"`
		ErrorText  string `json:"errorText"`
		IsDownload bool   `json:"isDownload"`
	}
	nctx, ncancel := context.WithTimeout(ctx, wait)
	defer ncancel()
	t0 := time.Now()
	if err := b.Call(nctx, s.sid, "Page.navigate", map[string]any{"url": target}, &r); err != nil {
		return h.browserErr(err)
	}
	if r.IsDownload {
		return errDownload(s, "visit") // denied (downloads.go)
	}
	if err := h.navErr(s, t0); r.ErrorText != "" && err != nil {
		return err // a redirect off the allowlist
	}
	if r.ErrorText == "net::ERR_ABORTED" {
		// The tab's own initial about:blank load can still be committing right after launch
		// and cancel the first navigation: once the frame has stopped loading, one retry.
		s.waitStopped(ctx, abortedRetryWait)
		s.drain()
		r.LoaderID, r.ErrorText = "", ""
		if err := b.Call(nctx, s.sid, "Page.navigate", map[string]any{"url": target}, &r); err != nil {
			return h.browserErr(err)
		}
	}
	if err := h.navErr(s, t0); r.ErrorText != "" && err != nil {
		return err
	}
	if r.ErrorText != "" && s.basicChallenged(target, t0) {
		// A Basic challenge the host cancelled, whose 401 has no body to show (Chromium then
		// fails the navigation): the page is the challenge, which the result offers
		// (auth_required kind basic), not a failed visit.
		s.waitStopped(ctx, abortedRetryWait)
		return nil
	}
	if r.ErrorText != "" {
		return wire.Errorf(wire.CodeNavFailed, "%s: %s", clip.Text(target, 200), clip.Text(r.ErrorText, 200))
	}
	if r.LoaderID != "" {
		err := s.waitLoadFor(nctx, r.LoaderID, wait) // within the one bound: Page.navigate spent some of it
		if wire.CodeOf(err) == wire.CodeTimeout && h.stuck(ctx, b, s) {
			// A page whose script never yields never loads, and the session's next command
			// would wait on it to that command's deadline: it is stopped now, and the answer
			// says why (a longer --timeout would not help).
			why := fmt.Sprintf("it neither finished loading within %v nor answered for %v after (a script that never yields)", wait, StuckWait)
			h.stopPage(b, s, s.sid, why)
			return &pageStoppedError{why: why}
		}
		return err
	}
	return nil
}

// StuckWait is how long a page that did not load within its navigation's bound has to answer
// a call into it before it is taken for stuck (its script never yields) and stopped.
const StuckWait = 5 * time.Second

// stuck reports whether session s's page does not answer a call into it (served on its main
// thread, as every look at the page is) within StuckWait, ctx still running: a page that is
// slow to load but answers is not stuck.
func (h *Host) stuck(ctx context.Context, b *cdp.Browser, s *session) bool {
	if ctx.Err() != nil {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, StuckWait)
	defer cancel()
	err := b.Call(pctx, s.sid, "DOM.getDocument", map[string]any{"depth": 0}, nil)
	return err != nil && pctx.Err() != nil && ctx.Err() == nil
}

func (h *Host) result(ctx context.Context, b *cdp.Browser, s *session) (control.PageResult, error) {
	u, t, err := h.pageInfo(ctx, b, s)
	if err != nil {
		return control.PageResult{}, h.browserErr(err)
	}
	return control.PageResult{Session: s.name, URL: u, Title: t}, nil
}

// Snapshot returns a bounded outline of the session's page and remembers its refs. A dialog
// holding the page (dialogs.go) is shown instead, with the page's URL and title: its renderer
// cannot be read until the dialog is answered.
func (h *Host) Snapshot(ctx context.Context, name string) (control.SnapshotResult, error) {
	b, s, unlock, err := h.lockSession(ctx, name)
	if err != nil {
		return control.SnapshotResult{}, err
	}
	defer unlock()
	h.followClose(ctx, b, s, nil)
	var out snapshot.Outline
	var refs map[string]snapshot.Target
	if !s.dialogHeld() {
		dctx, cancel := s.untilDialog(ctx, 0)
		_, out, refs, err = h.capture(dctx, b, s)
		cancel()
	}
	if s.dialogHeld() {
		clear(s.refs)
		r, err := h.heldResult(ctx, b, s)
		if err != nil {
			return control.SnapshotResult{}, err
		}
		out = snapshot.Outline{Untrusted: snapshot.UntrustedNotice, URL: r.URL, Origin: urlOrigin(r.URL), Title: r.Title, Elements: []snapshot.Element{}}
		return control.SnapshotResult{Session: s.name, Outline: out, Dialog: s.reportDialog(), Pages: s.pageCount()}, nil
	}
	if err != nil {
		return control.SnapshotResult{}, err
	}
	s.refs = refs
	s.issued = max(s.issued, len(refs))
	return control.SnapshotResult{Session: s.name, Outline: out, Dialog: s.reportDialog(), Pages: s.pageCount()}, nil
}

func captureSnapshot(ctx context.Context, b *cdp.Browser, s *session) (json.RawMessage, error) {
	var raw json.RawMessage
	err := b.Call(ctx, s.sid, "DOMSnapshot.captureSnapshot", snapshot.CaptureParams(), &raw)
	return raw, err
}

func (s *session) target(ref string) (snapshot.Target, error) {
	t, ok := s.refs[ref]
	if !ok {
		if n, err := strconv.Atoi(strings.TrimPrefix(ref, "e")); err == nil && strings.HasPrefix(ref, "e") && n >= 1 && n <= s.issued && ref == "e"+strconv.Itoa(n) {
			return snapshot.Target{}, wire.Errorf(wire.CodeRefStale, "ref %q is from an earlier snapshot of session %q, not its latest", ref, s.name)
		}
		return snapshot.Target{}, wire.Errorf(wire.CodeRefUnknown, "no snapshot of session %q gave ref %q", s.name, clip.Text(ref, 32))
	}
	return t, nil
}

// nodeErr maps "the node is gone" to REF_STALE, and anything else as [Host.browserErr] does
// (a page whose session was closed meanwhile, a crash, a timeout: never INTERNAL).
func (h *Host) nodeErr(err error) error {
	var ce *cdp.Error
	if errors.As(err, &ce) {
		return wire.Errorf(wire.CodeRefStale, "the element is no longer in the page")
	}
	return h.browserErr(err)
}

// onRef is the frame of a verb that acts on the page (click, fill, hover, press, select,
// scroll): the session's verb lock held, ref named by the session's last snapshot
// (REF_UNKNOWN, REF_STALE otherwise; t is nil when ref is "" and not required), and nothing
// done while a field the host typed a secret into holds a value (SECRET_ON_PAGE).
func (h *Host) onRef(ctx context.Context, name, ref string, required bool, act func(b *cdp.Browser, s *session, t *snapshot.Target) error) error {
	b, s, unlock, err := h.lockSession(ctx, name)
	if err != nil {
		return err
	}
	defer unlock()
	// A dialog holds the page: nothing can be done in it until it is answered (dialogs.go).
	if err := s.refuseDialog(); err != nil {
		return err
	}
	var t *snapshot.Target
	if ref != "" || required {
		target, err := s.target(ref)
		if err != nil {
			return err
		}
		t = &target
	}
	if err := h.refuseWhileSecret(ctx, b, s); err != nil {
		return err
	}
	return act(b, s, t)
}

// onElement is onRef for a verb whose ref is required.
func (h *Host) onElement(ctx context.Context, name, ref string, act func(b *cdp.Browser, s *session, t snapshot.Target) error) error {
	return h.onRef(ctx, name, ref, true, func(b *cdp.Browser, s *session, t *snapshot.Target) error { return act(b, s, *t) })
}

// acted runs an action that may navigate (a click, a key) and answers where the session is:
// the events drained before it, the page settled after it, the refs dropped (the page may have
// changed under them), UNSAFE_NAVIGATION when it tried to leave the allowlist. A dialog the
// action opens ends the waits (its calls wait on it: dialogs.go): the result shows it.
func (h *Host) acted(ctx context.Context, b *cdp.Browser, s *session, action func(ctx context.Context) error) (control.PageResult, error) {
	s.drain()
	t0 := time.Now()
	_, seq := s.openDialog()
	dctx, cancel := s.untilDialog(ctx, seq)
	defer cancel()
	if err := action(dctx); err != nil && context.Cause(dctx) != errDialogOpened {
		return control.PageResult{}, err
	}
	s.settle(dctx)
	clear(s.refs)
	if err := h.navErr(s, t0); err != nil {
		return control.PageResult{}, err
	}
	h.awaitClosing(dctx, b, s)
	return h.pageResult(ctx, b, s)
}

// Click clicks the element of ref with real mouse events at its centre: once, twice
// (p.Double: a double click) or with the right button (p.Right: a context menu).
func (h *Host) Click(ctx context.Context, p control.ClickParams) (page control.PageResult, err error) {
	if p.Double && p.Right {
		return page, wire.Errorf(wire.CodeInvalidArgument, "a click is a double click or a right click, not both")
	}
	how := click{button: "left", count: 1}
	if p.Double {
		how.count = 2
	}
	if p.Right {
		how.button = "right"
	}
	err = h.onElement(ctx, p.Session, p.Ref, func(b *cdp.Browser, s *session, t snapshot.Target) (err error) {
		page, err = h.acted(ctx, b, s, func(ctx context.Context) error { return h.clickWith(ctx, b, s, t, how) })
		return err
	})
	return page, err
}

// click is how an element is clicked: which button, and how many times (2: a double click).
type click struct {
	button string
	count  int
}

// clickNode clicks the element with real mouse events at the centre of its box.
func (h *Host) clickNode(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target) error {
	return h.clickWith(ctx, b, s, t, click{button: "left", count: 1})
}

// clickWith clicks the element as how says: a press and a release for each click, the
// second of a double click with clickCount 2 (what fires dblclick).
func (h *Host) clickWith(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target, how click) error {
	x, y, err := h.centre(ctx, b, s, t)
	if err != nil {
		return err
	}
	evs := []map[string]any{{"type": "mouseMoved", "x": x, "y": y}}
	for n := 1; n <= how.count; n++ {
		for _, typ := range []string{"mousePressed", "mouseReleased"} {
			evs = append(evs, map[string]any{"type": typ, "x": x, "y": y, "button": how.button, "clickCount": n})
		}
	}
	for _, ev := range evs {
		if err := b.Call(ctx, s.sid, "Input.dispatchMouseEvent", ev, nil); err != nil {
			return h.browserErr(err)
		}
	}
	return nil
}

// centre scrolls the element into view and returns the centre of its first box, in the
// viewport's CSS pixels.
func (h *Host) centre(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target) (x, y float64, err error) {
	node := map[string]any{"backendNodeId": t.BackendNodeID}
	if err := b.Call(ctx, s.sid, "DOM.scrollIntoViewIfNeeded", node, nil); err != nil {
		return 0, 0, h.nodeErr(err)
	}
	var q struct {
		Quads [][]float64 `json:"quads"`
	}
	if err := b.Call(ctx, s.sid, "DOM.getContentQuads", node, &q); err != nil {
		return 0, 0, h.nodeErr(err)
	}
	if len(q.Quads) == 0 || len(q.Quads[0]) != 8 {
		return 0, 0, wire.Errorf(wire.CodeNotInteractable, "the element has no visible box")
	}
	for i := 0; i < 8; i += 2 {
		x += q.Quads[0][i] / 4
		y += q.Quads[0][i+1] / 4
	}
	return x, y, nil
}

// pageResult is result plus auth_required when the page holds a login form. The two looks
// are asked at once: right after a load the browser answers its first calls late, and the
// second waited for the first.
//
// A window of the session's that closed under the verb hands the session back to its opener
// first (pages.go); a dialog holding the page is shown instead of auth_required (its look
// would wait on the dialog: dialogs.go).
func (h *Host) pageResult(ctx context.Context, b *cdp.Browser, s *session) (control.PageResult, error) {
	h.followClose(ctx, b, s, nil)
	if s.dialogHeld() {
		r, err := h.heldResult(ctx, b, s)
		r.Dialog, r.Pages = s.reportDialog(), s.pageCount()
		return r, err
	}
	type res struct {
		r   control.PageResult
		err error
	}
	rc := make(chan res, 1)
	go func() {
		r, err := h.result(ctx, b, s)
		rc <- res{r, err}
	}()
	_, seq := s.openDialog()
	dctx, cancel := s.untilDialog(ctx, seq)
	ar, err := h.authRequired(dctx, b, s)
	cancel()
	got := <-rc
	r := got.r
	if got.err != nil && s.inWindow() {
		// The window closed under the verb: its opener answers.
		before := s.cur
		if h.followClose(ctx, b, s, got.err); s.cur != before {
			return h.pageResult(ctx, b, s)
		}
	}
	if got.err != nil {
		return r, got.err
	}
	if err != nil {
		return control.PageResult{}, err
	}
	r.AuthRequired = ar
	if r.AuthRequired == nil && !s.dialogHeld() {
		r.AuthRequired = h.basicAuthRequired(ctx, b, s)
	}
	r.Dialog, r.Pages = s.reportDialog(), s.pageCount()
	return r, nil
}

// Fill types text into the element of ref, replacing its content. The text is never logged or
// echoed. Password fields are refused unless the user-only config allows direct fill.
func (h *Host) Fill(ctx context.Context, p control.FillParams) (control.FillResult, error) {
	r := control.FillResult{Ref: p.Ref, Filled: true}
	err := h.onElement(ctx, p.Session, p.Ref, func(b *cdp.Browser, s *session, t snapshot.Target) error {
		r.Session = s.name
		if strings.EqualFold(t.Type, "password") && !h.o.AllowDirectPasswordFill {
			return wire.Errorf(wire.CodeDirectFillOff, "ref %s is a password field", p.Ref)
		}
		if t.Kind != "input" && t.Kind != "textarea" {
			return wire.Errorf(wire.CodeNotInteractable, "ref %s is a %s, not a text field", p.Ref, t.Kind)
		}
		if err := b.Call(ctx, s.sid, "DOM.focus", map[string]any{"backendNodeId": t.BackendNodeID}, nil); err != nil {
			return h.nodeErr(err)
		}
		// Select what is there, so the text replaces it.
		if err := selectAll(ctx, b, s); err != nil {
			return h.browserErr(err)
		}
		if p.Text == "" {
			return pressKey(ctx, b, s, "Delete")
		}
		if err := b.Call(ctx, s.sid, "Input.insertText", map[string]any{"text": p.Text}, nil); err != nil {
			return h.browserErr(err)
		}
		return nil
	})
	if err != nil {
		return control.FillResult{}, err
	}
	return r, nil
}

// Back goes one step back in the session's history and waits for the page: NO_HISTORY at the
// first entry. Only http, https and about:blank entries are gone back to. The back/forward
// cache is off (package cdp): the document is loaded afresh, never restored with what its
// fields held.
func (h *Host) Back(ctx context.Context, name string) (control.PageResult, error) {
	return h.historyStep(ctx, name, -1)
}

// historyStep goes step entries back (-1) or forward (1) in the session's history and waits
// for the page (back, forward).
func (h *Host) historyStep(ctx context.Context, name string, step int) (control.PageResult, error) {
	b, s, unlock, err := h.lockSession(ctx, name)
	if err != nil {
		return control.PageResult{}, err
	}
	defer unlock()
	return h.leave(ctx, b, s, func(ctx context.Context) error {
		if err := h.refuseWhileSecret(ctx, b, s); err != nil {
			return err
		}
		hist, err := h.history(ctx, b, s)
		if err != nil {
			return err
		}
		to := hist.Current + step
		if hist.Current < 0 || hist.Current >= len(hist.Entries) || to < 0 || to >= len(hist.Entries) {
			which := "earlier"
			if step > 0 {
				which = "later"
			}
			return wire.Errorf(wire.CodeNoHistory, "session %q has no %s page", s.name, which)
		}
		entry := hist.Entries[to]
		if !historyNavigable(entry.URL) {
			return wire.Errorf(wire.CodeUnsafeNav, "refusing to go to a history entry that is not http, https or about:blank")
		}
		doc, err := h.documentID(ctx, b, s)
		if err != nil {
			return err
		}
		frame, _, _ := strings.Cut(doc, "/")
		s.drain()
		if err := b.Call(ctx, s.sid, "Page.navigateToHistoryEntry", map[string]any{"entryId": entry.ID}, nil); err != nil {
			return h.browserErr(err)
		}
		clear(s.refs)
		return s.waitHistory(ctx, frame, "go there")
	})
}

// Forward goes one step forward in the session's history (NO_HISTORY at the last entry), as
// Back goes back.
func (h *Host) Forward(ctx context.Context, name string) (control.PageResult, error) {
	return h.historyStep(ctx, name, 1)
}

// Reload loads the session's page again and waits for it; refused as back is while a field
// the host typed a password into holds a value (SECRET_ON_PAGE). The back/forward cache is
// off and the host's submit left no POST body in the entry (taint.go): the page is loaded
// afresh, with none of what its fields held.
func (h *Host) Reload(ctx context.Context, name string) (control.PageResult, error) {
	b, s, unlock, err := h.lockSession(ctx, name)
	if err != nil {
		return control.PageResult{}, err
	}
	defer unlock()
	return h.leave(ctx, b, s, func(ctx context.Context) error {
		if err := h.refuseWhileSecret(ctx, b, s); err != nil {
			return err
		}
		doc, err := h.documentID(ctx, b, s)
		if err != nil {
			return err
		}
		frame, _, _ := strings.Cut(doc, "/")
		s.drain()
		if err := b.Call(ctx, s.sid, "Page.reload", nil, nil); err != nil {
			return h.browserErr(err)
		}
		clear(s.refs)
		return s.waitHistory(ctx, frame, "load again")
	})
}

// navHistory is Page.getNavigationHistory's answer.
type navHistory struct {
	Current int `json:"currentIndex"`
	Entries []struct {
		ID         int    `json:"id"`
		URL        string `json:"url"`
		TypedURL   string `json:"userTypedURL"`
		Transition string `json:"transitionType"`
	} `json:"entries"`
}

func (h *Host) history(ctx context.Context, b *cdp.Browser, s *session) (navHistory, error) {
	var hist navHistory
	if err := b.Call(ctx, s.sid, "Page.getNavigationHistory", nil, &hist); err != nil {
		return hist, h.browserErr(err)
	}
	return hist, nil
}

// historyNavigable reports whether back may go to a history entry of this URL.
func historyNavigable(raw string) bool {
	if raw == "about:blank" {
		return true
	}
	u, err := url.Parse(raw)
	return err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https")
}

// Hover moves the mouse over the centre of the element of p.Ref (scrolled into view first).
func (h *Host) Hover(ctx context.Context, p control.RefParams) (control.HoverResult, error) {
	r := control.HoverResult{Ref: p.Ref, Hovered: true}
	err := h.onElement(ctx, p.Session, p.Ref, func(b *cdp.Browser, s *session, t snapshot.Target) error {
		r.Session = s.name
		return h.hoverNode(ctx, b, s, t)
	})
	if err != nil {
		return control.HoverResult{}, err
	}
	return r, nil
}

// hoverNode moves the mouse over the centre of t's element, scrolled into view first (hover,
// and a journey's hover action, after the caller's refuseWhileSecret).
func (h *Host) hoverNode(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target) error {
	x, y, err := h.centre(ctx, b, s, t)
	if err != nil {
		return err
	}
	if err := b.Call(ctx, s.sid, "Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": x, "y": y}, nil); err != nil {
		return h.browserErr(err)
	}
	return nil
}

// Scroll scrolls the element of p.Ref into view; without a ref, or with p.By, it turns the
// mouse wheel by p.By CSS pixels (0 without a ref: one viewport) over the viewport's centre,
// or over the element's.
func (h *Host) Scroll(ctx context.Context, p control.ScrollParams) (control.ScrollResult, error) {
	if p.By > control.MaxScrollBy || p.By < -control.MaxScrollBy {
		return control.ScrollResult{}, wire.Errorf(wire.CodeInvalidArgument, "scroll --by is at most %d pixels either way", control.MaxScrollBy)
	}
	var r control.ScrollResult
	err := h.onRef(ctx, p.Session, p.Ref, false, func(b *cdp.Browser, s *session, t *snapshot.Target) error {
		after, err := h.scrollNode(ctx, b, s, t, p.By)
		r = after.result()
		r.Session, r.Ref = s.name, p.Ref
		return err
	})
	if err != nil {
		return control.ScrollResult{}, err
	}
	return r, nil
}

// scrollNode scrolls t's element into view (t nil: none) and, with by, turns the mouse wheel
// by that many CSS pixels over it (without t, over the viewport's centre, one viewport when
// by is 0), then waits for the page to settle (scroll, and a journey's scroll action, after
// the caller's refuseWhileSecret).
func (h *Host) scrollNode(ctx context.Context, b *cdp.Browser, s *session, t *snapshot.Target, by int) (layoutMetrics, error) {
	before, err := h.layout(ctx, b, s)
	if err != nil {
		return before, err
	}
	var x, y float64
	if t != nil {
		if x, y, err = h.centre(ctx, b, s, *t); err != nil {
			return before, err
		}
	} else {
		x, y = before.Viewport.Width/2, before.Viewport.Height/2
		if by == 0 {
			by = int(before.Viewport.Height)
		}
	}
	if by != 0 {
		wheel := map[string]any{"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": by}
		if err := b.Call(ctx, s.sid, "Input.dispatchMouseEvent", wheel, nil); err != nil {
			return before, h.browserErr(err)
		}
	}
	return h.settleScroll(ctx, b, s, before, t == nil && before.canMove(by))
}

// canMove: the wheel's by pixels can move the page (it is not at that end already), so the
// scroll waits for it to move; otherwise it answers as soon as the page is still.
func (m layoutMetrics) canMove(by int) bool {
	v := m.Viewport
	return by > 0 && v.Y+v.Height < m.Content.Height-1 || by < 0 && v.Y > 0
}

// layoutMetrics is Page.getLayoutMetrics in CSS pixels: the visual viewport and the page.
type layoutMetrics struct {
	Viewport struct {
		X      float64 `json:"pageX"`
		Y      float64 `json:"pageY"`
		Width  float64 `json:"clientWidth"`
		Height float64 `json:"clientHeight"`
	} `json:"cssVisualViewport"`
	Content struct {
		Width  float64 `json:"width"`
		Height float64 `json:"height"`
	} `json:"cssContentSize"`
}

func (m layoutMetrics) result() control.ScrollResult {
	r := func(f float64) int { return int(math.Round(f)) }
	return control.ScrollResult{
		ScrollX: r(m.Viewport.X), ScrollY: r(m.Viewport.Y),
		ViewportWidth: r(m.Viewport.Width), ViewportHeight: r(m.Viewport.Height),
		ContentWidth: r(m.Content.Width), ContentHeight: r(m.Content.Height),
	}
}

func (h *Host) layout(ctx context.Context, b *cdp.Browser, s *session) (layoutMetrics, error) {
	var m layoutMetrics
	if err := b.Call(ctx, s.sid, "Page.getLayoutMetrics", nil, &m); err != nil {
		return m, h.browserErr(err)
	}
	return m, nil
}

// settleScroll waits, at most scrollSettle, for the page's scroll offset to stop changing (a
// wheel's scroll lands a frame or more later, and may be animated); with moved, for it to
// change at all first, unless it cannot (already at that end of the page).
func (h *Host) settleScroll(ctx context.Context, b *cdp.Browser, s *session, before layoutMetrics, moved bool) (layoutMetrics, error) {
	deadline := time.Now().Add(scrollSettle)
	last := before
	changed, still := false, 0
	for {
		select {
		case <-ctx.Done():
			return last, h.browserErr(ctx.Err())
		case <-time.After(30 * time.Millisecond):
		}
		m, err := h.layout(ctx, b, s)
		if err != nil {
			return m, err
		}
		if m.Viewport.X != before.Viewport.X || m.Viewport.Y != before.Viewport.Y {
			changed = true
		}
		if m.Viewport == last.Viewport {
			still++
		} else {
			still = 0
		}
		last = m
		if (changed || !moved) && still >= 3 || time.Now().After(deadline) {
			return m, nil
		}
	}
}

// scrollSettle bounds settleScroll.
const scrollSettle = 1500 * time.Millisecond
