package host

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/wire"
)

// CheckNavigable accepts only http and https URLs with a host.
func CheckNavigable(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", wire.Errorf(wire.CodeUnsafeNav, "refusing to navigate to %q: only http and https URLs", bound(raw, 200))
	}
	if u.User != nil {
		return "", wire.Errorf(wire.CodeUnsafeNav, "refusing a URL with credentials in it")
	}
	return u.String(), nil
}

// Visit navigates a session and waits for the page to load.
func (h *Host) Visit(ctx context.Context, p VisitParams) (PageResult, error) {
	target, err := CheckNavigable(p.URL)
	if err != nil {
		return PageResult{}, err
	}
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return PageResult{}, err
	}
	defer unlock()
	s.drain()
	clear(s.refs)
	var r struct {
		LoaderID  string `json:"loaderId"`
		ErrorText string `json:"errorText"`
	}
	nctx, ncancel := context.WithTimeout(ctx, NavigationWait)
	defer ncancel()
	if err := b.Call(nctx, s.sid, "Page.navigate", map[string]any{"url": target}, &r); err != nil {
		return PageResult{}, h.browserErr(err)
	}
	if r.ErrorText == "net::ERR_ABORTED" {
		// The tab's own initial about:blank load can still be committing right after launch
		// and cancel the first navigation: once the frame has stopped loading, one retry.
		s.waitStopped(ctx, abortedRetryWait)
		s.drain()
		r.LoaderID, r.ErrorText = "", ""
		if err := b.Call(nctx, s.sid, "Page.navigate", map[string]any{"url": target}, &r); err != nil {
			return PageResult{}, h.browserErr(err)
		}
	}
	if r.ErrorText != "" {
		return PageResult{}, wire.Errorf(wire.CodeNavFailed, "%s: %s", bound(target, 200), bound(r.ErrorText, 200))
	}
	if r.LoaderID != "" {
		if err := s.waitLoad(ctx, r.LoaderID); err != nil {
			return PageResult{}, err
		}
	}
	return h.pageResult(ctx, b, s)
}

func (h *Host) result(ctx context.Context, b *cdp.Browser, s *session) (PageResult, error) {
	u, t, err := h.pageInfo(ctx, b, s)
	if err != nil {
		return PageResult{}, h.browserErr(err)
	}
	return PageResult{Session: s.name, URL: u, Title: t}, nil
}

// Snapshot returns a bounded outline of the session's page and remembers its refs.
func (h *Host) Snapshot(ctx context.Context, name string) (SnapshotResult, error) {
	b, s, unlock, err := h.lockSession(ctx, name)
	if err != nil {
		return SnapshotResult{}, err
	}
	defer unlock()
	_, out, refs, err := h.capture(ctx, b, s)
	if err != nil {
		return SnapshotResult{}, err
	}
	s.refs = refs
	return SnapshotResult{Session: s.name, Outline: out}, nil
}

func captureSnapshot(ctx context.Context, b *cdp.Browser, s *session) (json.RawMessage, error) {
	var raw json.RawMessage
	err := b.Call(ctx, s.sid, "DOMSnapshot.captureSnapshot", snapshot.CaptureParams(), &raw)
	return raw, err
}

func (s *session) target(ref string) (snapshot.Target, error) {
	t, ok := s.refs[ref]
	if !ok {
		return snapshot.Target{}, wire.Errorf(wire.CodeRefUnknown, "no ref %q in session %q's last snapshot", bound(ref, 32), s.name)
	}
	return t, nil
}

// nodeErr maps "the node is gone" to REF_STALE.
func nodeErr(err error) error {
	var ce *cdp.Error
	if errors.As(err, &ce) {
		return wire.Errorf(wire.CodeRefStale, "the element is no longer in the page")
	}
	return err
}

// Click clicks the element of ref with a real mouse event at its centre.
func (h *Host) Click(ctx context.Context, p RefParams) (PageResult, error) {
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return PageResult{}, err
	}
	defer unlock()
	t, err := s.target(p.Ref)
	if err != nil {
		return PageResult{}, err
	}
	if err := h.refuseWhileSecret(ctx, b, s); err != nil {
		return PageResult{}, err
	}
	s.drain()
	if err := h.clickNode(ctx, b, s, t); err != nil {
		return PageResult{}, err
	}
	s.settle(ctx)
	clear(s.refs)
	return h.pageResult(ctx, b, s)
}

// clickNode clicks the element with real mouse events at the centre of its box.
func (h *Host) clickNode(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target) error {
	node := map[string]any{"backendNodeId": t.BackendNodeID}
	if err := b.Call(ctx, s.sid, "DOM.scrollIntoViewIfNeeded", node, nil); err != nil {
		return nodeErr(err)
	}
	var q struct {
		Quads [][]float64 `json:"quads"`
	}
	if err := b.Call(ctx, s.sid, "DOM.getContentQuads", node, &q); err != nil {
		return nodeErr(err)
	}
	if len(q.Quads) == 0 || len(q.Quads[0]) != 8 {
		return wire.Errorf(wire.CodeNotInteractable, "the element has no visible box")
	}
	var x, y float64
	for i := 0; i < 8; i += 2 {
		x += q.Quads[0][i] / 4
		y += q.Quads[0][i+1] / 4
	}
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		ev := map[string]any{"type": typ, "x": x, "y": y}
		if typ != "mouseMoved" {
			ev["button"], ev["clickCount"] = "left", 1
		}
		if err := b.Call(ctx, s.sid, "Input.dispatchMouseEvent", ev, nil); err != nil {
			return h.browserErr(err)
		}
	}
	return nil
}

// pageResult is result plus auth_required when the page holds a login form.
func (h *Host) pageResult(ctx context.Context, b *cdp.Browser, s *session) (PageResult, error) {
	r, err := h.result(ctx, b, s)
	if err != nil {
		return r, err
	}
	r.AuthRequired = h.authRequired(ctx, b, s)
	return r, nil
}

// Fill types text into the element of ref, replacing its content. The text is never logged or
// echoed. Password fields are refused unless the user-only config allows direct fill.
func (h *Host) Fill(ctx context.Context, p FillParams) (FillResult, error) {
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return FillResult{}, err
	}
	defer unlock()
	t, err := s.target(p.Ref)
	if err != nil {
		return FillResult{}, err
	}
	if err := h.refuseWhileSecret(ctx, b, s); err != nil {
		return FillResult{}, err
	}
	if strings.EqualFold(t.Type, "password") && !h.o.AllowDirectPasswordFill {
		return FillResult{}, wire.Errorf(wire.CodeDirectFillOff, "ref %s is a password field", p.Ref)
	}
	if t.Kind != "input" && t.Kind != "textarea" {
		return FillResult{}, wire.Errorf(wire.CodeNotInteractable, "ref %s is a %s, not a text field", p.Ref, t.Kind)
	}
	if err := b.Call(ctx, s.sid, "DOM.focus", map[string]any{"backendNodeId": t.BackendNodeID}, nil); err != nil {
		return FillResult{}, nodeErr(err)
	}
	// Select what is there, so the text replaces it.
	if err := selectAll(ctx, b, s); err != nil {
		return FillResult{}, h.browserErr(err)
	}
	if p.Text == "" {
		if err := pressKey(ctx, b, s, "Delete"); err != nil {
			return FillResult{}, err
		}
	} else if err := b.Call(ctx, s.sid, "Input.insertText", map[string]any{"text": p.Text}, nil); err != nil {
		return FillResult{}, h.browserErr(err)
	}
	return FillResult{Session: s.name, Ref: p.Ref, Filled: true}, nil
}

// Wait waits until the page's URL contains p.URL and its text contains p.Text.
func (h *Host) Wait(ctx context.Context, p WaitParams) (PageResult, error) {
	if p.Text == "" && p.URL == "" {
		return PageResult{}, wire.Errorf(wire.CodeInvalidArgument, "wait needs --text or --url")
	}
	d := time.Duration(p.TimeoutMS) * time.Millisecond
	if d <= 0 {
		d = DefaultWait
	}
	d = min(d, MaxWait)
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return PageResult{}, err
	}
	defer unlock()
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		res, err := h.result(wctx, b, s)
		if wire.CodeOf(err) == wire.CodeBrowserCrashed {
			return PageResult{}, err
		}
		if err == nil && strings.Contains(res.URL, p.URL) {
			if p.Text == "" {
				return res, nil
			}
			// Search the outline (with the session's taint), never the raw snapshot: the raw
			// data holds the values of password fields, and a wait that matched them would be
			// an oracle for them.
			_, out, _, err := h.capture(wctx, b, s)
			if wire.CodeOf(err) == wire.CodeBrowserCrashed {
				return PageResult{}, err
			}
			if err == nil && outlineContains(out, p.Text) {
				return res, nil
			}
		}
		select {
		case <-wctx.Done():
			return PageResult{}, wire.Errorf(wire.CodeTimeout, "condition not met within %s", d)
		case <-time.After(100 * time.Millisecond):
		}
	}
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
