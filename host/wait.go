package host

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/wire"
)

// wait: a condition on the page's taint-aware outline (text, gone, a ref visible), polled until
// it holds or the timeout passes.

// Wait waits until every condition of p holds: the URL contains p.URL, the page text contains
// p.Text and no longer contains p.Gone, the element of p.Ref is visible, the page's network is
// idle (p.NetworkIdle: none of its requests in flight for NetworkIdleQuiet; streams and
// WebSockets do not count, settle.go). A dialog holding the page, or opening meanwhile, ends
// it (DIALOG_OPEN: the page cannot be read until the dialog is answered).
//
// The page text is the outline's (with the session's taint): never the raw snapshot, which
// holds the values of password fields and of the fields the host typed a password into, so
// that neither a wait for a password's text nor a wait for it to vanish tells anything about
// it. The outline searched is wider than snapshot's (waitOutline) but built the same way.
func (h *Host) Wait(ctx context.Context, p control.WaitParams) (control.PageResult, error) {
	if err := checkWait(p); err != nil {
		return control.PageResult{}, err
	}
	d := time.Duration(p.TimeoutMS) * time.Millisecond
	if d <= 0 {
		d = control.DefaultWait
	}
	d = min(d, control.MaxWait)
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return control.PageResult{}, err
	}
	defer unlock()
	if err := s.refuseDialog(); err != nil {
		return control.PageResult{}, err
	}
	var ref snapshot.Target
	if p.Ref != "" {
		if ref, err = s.target(p.Ref); err != nil {
			return control.PageResult{}, err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	wctx, stop := s.untilDialog(wctx, 0)
	defer stop()
	unsure := false // the last look could not tell whether p.Gone was gone (a cut outline)
	idle := true    // the network condition, when asked for, holds at this look
	// The window the session drives closed meanwhile (a pop-up done with its sign-in): the
	// wait goes on on its opener, as the session does (pages.go).
	closed := func(err error) bool {
		if err == nil || !s.inWindow() || errors.Is(err, errEchoed) {
			return false
		}
		before := s.cur
		h.followClose(ctx, b, s, err)
		return s.cur != before
	}
	for {
		if s.inWindow() && errors.Is(b.SessionErr(s.sid), cdp.ErrDetached) {
			h.leaveWindow(ctx, b, s)
		}
		if p.NetworkIdle {
			quiet, told := s.requests().idle(time.Now())
			if !told {
				return control.PageResult{}, wire.Errorf(wire.CodeNetUntracked, "the page has had more requests in flight at once than the host follows (%d); whether its network is idle cannot be told", maxTrackedRequests)
			}
			idle = quiet >= control.NetworkIdleQuiet
		}
		looked := s.cur
		res, err := h.result(wctx, b, s)
		if closed(err) {
			continue
		}
		if wire.CodeOf(err) == wire.CodeBrowserCrashed {
			return control.PageResult{}, err
		}
		if d, _ := s.openDialog(); d != nil {
			return control.PageResult{}, dialogOpen(d)
		}
		if err == nil && idle && res.URL != "" && strings.Contains(res.URL, p.URL) {
			if p.Text == "" && p.Gone == "" && p.Ref == "" {
				res.Dialog, res.Pages = s.reportDialog(), s.pageCount()
				return res, nil
			}
			doc, out, refs, err := h.captureWith(wctx, b, s, waitOutline)
			if closed(err) {
				continue
			}
			if wire.CodeOf(err) == wire.CodeBrowserCrashed || errors.Is(err, errEchoed) {
				return control.PageResult{}, err
			}
			if err == nil && s.cur == looked {
				met, cut := waitMet(out, p)
				unsure = cut
				if met && (p.Ref == "" || h.refVisible(wctx, b, s, ref, refs)) {
					// The URL and title of the document the outline is of: the first look
					// may have been of the one it replaced (a reload, the browser says ""
					// while it commits); a look after another document came is no answer.
					res, err = h.result(wctx, b, s)
					if now, derr := h.documentID(wctx, b, s); err == nil && derr == nil && now == doc && res.URL != "" && strings.Contains(res.URL, p.URL) {
						res.Dialog, res.Pages = s.reportDialog(), s.pageCount()
						return res, nil
					}
				}
			}
		}
		select {
		case <-wctx.Done():
			if dl, _ := s.openDialog(); dl != nil {
				return control.PageResult{}, dialogOpen(dl)
			}
			err := wire.Errorf(wire.CodeTimeout, "condition not met within %s", d)
			if unsure {
				err.Message += " (the page is larger than wait reads, so the text's absence could not be confirmed)"
			}
			return control.PageResult{}, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitOutline bounds the outline wait searches: wider than snapshot's, since only "met or
// not" leaves the host.
var waitOutline = snapshot.Options{MaxElements: 5000, MaxText: 10000, MaxBytes: 16 << 20}

// checkWait refuses a wait without a condition or with a string out of bounds.
func checkWait(p control.WaitParams) error {
	if p.Text == "" && p.URL == "" && p.Gone == "" && p.Ref == "" && !p.NetworkIdle {
		return wire.Errorf(wire.CodeInvalidArgument, "wait needs --text, --gone, --url, --ref or --network-idle")
	}
	for _, f := range []struct{ name, v string }{{"text", p.Text}, {"gone", p.Gone}, {"url", p.URL}} {
		if len(f.v) > control.MaxWaitText {
			return wire.Errorf(wire.CodeInvalidArgument, "wait --%s is longer than %d bytes", f.name, control.MaxWaitText)
		}
	}
	return nil
}

// waitMet reports whether the text conditions of p hold in out, and whether out was cut (so
// that p.Gone's absence could not be confirmed).
func waitMet(out snapshot.Outline, p control.WaitParams) (met, unsure bool) {
	if p.Text != "" && !outlineContains(out, p.Text) {
		return false, false
	}
	if p.Gone != "" {
		if outlineContains(out, p.Gone) {
			return false, false
		}
		if out.Truncated {
			return false, true
		}
	}
	return true, false
}

// refVisible reports whether the element of t is visible: listed in refs, a fresh outline's
// (rendered: a layout object, not display none or visibility hidden), with a box of some area.
func (h *Host) refVisible(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target, refs map[string]snapshot.Target) bool {
	listed := false
	for _, r := range refs {
		if r.BackendNodeID == t.BackendNodeID {
			listed = true
			break
		}
	}
	if !listed {
		return false
	}
	var q struct {
		Quads [][]float64 `json:"quads"`
	}
	if err := b.Call(ctx, s.sid, "DOM.getContentQuads", map[string]any{"backendNodeId": t.BackendNodeID}, &q); err != nil {
		return false
	}
	for _, quad := range q.Quads {
		if quadArea(quad) >= 1 {
			return true
		}
	}
	return false
}

// quadArea is the area of a quad (four x, y points), 0 for anything else.
func quadArea(q []float64) float64 {
	if len(q) != 8 {
		return 0
	}
	a := 0.0
	for i := 0; i < 8; i += 2 {
		j := (i + 2) % 8
		a += q[i]*q[j+1] - q[j]*q[i+1]
	}
	return math.Abs(a) / 2
}

func outlineContains(o snapshot.Outline, text string) bool {
	if strings.Contains(o.Title, text) {
		return true
	}
	for _, e := range o.Elements {
		if strings.Contains(e.Text, text) || strings.Contains(e.Value, text) {
			return true
		}
	}
	return false
}
