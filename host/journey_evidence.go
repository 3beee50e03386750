package host

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/journey"
	"github.com/headless-dev/headless/internal/wire"
)

// The fixed functions a journey adds to the host's (taint.go has the others): called on one
// node from an isolated world, never with anything of the plan's in their source. fnZoom's one
// argument is the plan's zoom, validated (25-500 percent) and passed as a number.
const (
	// fnZoom: CSS zoom on the root element of the node's document ("" for 1: none).
	fnZoom = `function(z) {
  var d = this.ownerDocument || this;
  if (!d.documentElement || typeof z !== "number") { return false; }
  d.documentElement.style.zoom = z === 1 ? "" : String(z);
  return true;
}`
	// fnActive: the element that has the focus in the node's document, or null when none
	// (the body or the root).
	fnActive = `function() {
  var d = this.ownerDocument || this;
  var a = d.activeElement;
  return a && a !== d.body && a !== d.documentElement ? a : null;
}`
)

// resolveIsolated resolves a node into a fresh isolated world of the main frame.
func (h *Host) resolveIsolated(ctx context.Context, b *cdp.Browser, s *session, id int64) (string, error) {
	doc, err := h.documentID(ctx, b, s)
	if err != nil {
		return "", err
	}
	frame, _, _ := strings.Cut(doc, "/")
	var world struct {
		ID int `json:"executionContextId"`
	}
	if err := b.Call(ctx, s.sid, "Page.createIsolatedWorld", map[string]any{"frameId": frame, "worldName": "headless-check"}, &world); err != nil {
		return "", h.browserErr(err)
	}
	var node struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err := b.Call(ctx, s.sid, "DOM.resolveNode", map[string]any{"backendNodeId": id, "executionContextId": world.ID}, &node); err != nil {
		return "", h.nodeErr(err)
	}
	return node.Object.ObjectID, nil
}

// setZoom sets CSS zoom (factor, 1 for none) on the page's root element with fnZoom.
func (h *Host) setZoom(ctx context.Context, b *cdp.Browser, s *session, factor float64) error {
	var d struct {
		Root struct {
			BackendID int64 `json:"backendNodeId"`
		} `json:"root"`
	}
	if err := b.Call(ctx, s.sid, "DOM.getDocument", map[string]any{"depth": 0}, &d); err != nil {
		return h.browserErr(err)
	}
	var ok bool
	if err := h.callFixedWith(ctx, b, s, d.Root.BackendID, "", fnZoom, []any{factor}, &ok); err != nil {
		return err
	}
	if !ok {
		return wire.Errorf(wire.CodeInternal, "the page has no root element to zoom")
	}
	return nil
}

// ensureZoom applies the plan's zoom to the document shown, once per document (CSS zoom goes
// with the document: every navigation needs it again).
func (r *jrun) ensureZoom(ctx context.Context) error {
	z := r.plan.ZoomPercent()
	if z == 100 {
		return nil
	}
	doc, err := r.h.documentID(ctx, r.b, r.s)
	if err != nil {
		return err
	}
	if doc == r.zoomed {
		return nil
	}
	if err := r.h.setZoom(ctx, r.b, r.s, float64(z)/100); err != nil {
		return err
	}
	r.zoomed = doc
	return nil
}

// observe records the state an action reached: route, title, visible texts, elements with
// their boxes, the target, the focused element and, when asked, a screenshot. Nothing of it is
// read while a typed password may be on the page (look refuses): that error is returned, and
// stops the run.
func (r *jrun) observe(ctx context.Context, ev *journey.Evidence, target int64, shot bool) error {
	if r.b.SessionErr(r.s.sid) != nil {
		ev.Route = "about:blank"
		return wire.Errorf(wire.CodeBrowserCrashed, "the journey's page crashed")
	}
	l, err := r.look(ctx)
	if err != nil {
		if shot {
			ev.ScreenshotRefused = wire.CodeOf(err)
		}
		return err
	}
	defer l.close()
	ev.Route = r.route(l.out.URL, l.out.Origin)
	ev.Title = l.out.Title
	ev.Truncated = l.out.Truncated
	size := 0
	var ids []int64
	var listed []snapshot.Element
	for _, e := range l.out.Elements {
		if e.Frame != "" || e.Kind == "form" || e.Kind == "iframe" {
			continue
		}
		if e.Text != "" {
			if len(ev.Text) == journeyTextItems || size+len(e.Text) > journeyTextBytes {
				ev.Truncated = true
			} else {
				ev.Text = append(ev.Text, e.Text)
				size += len(e.Text)
			}
		}
		if len(listed) == journeyElements {
			ev.Truncated = true
			continue
		}
		listed = append(listed, e)
		ids = append(ids, l.refs[e.Ref].BackendNodeID)
	}
	focused := r.focused(ctx)
	if target != 0 {
		ids = append(ids, target)
	}
	if focused != 0 {
		ids = append(ids, focused)
	}
	nodes, err := l.describe(ids)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	for k, e := range listed {
		el := journey.Element{Kind: e.Kind, Name: clip.Text(e.Text, journeyNameLen)}
		if n, ok := nodes[ids[k]]; ok {
			el.Rect = rect(n)
		}
		ev.Elements = append(ev.Elements, el)
	}
	if n, ok := nodes[target]; ok && target != 0 {
		ev.Target = element(n)
	}
	if n, ok := nodes[focused]; ok && focused != 0 {
		ev.Focused = element(n)
	}
	if shot {
		r.screenshot(ctx, ev)
	}
	return nil
}

// element is a node as the evidence shows it.
func element(n snapshot.Node) *journey.Element {
	kind := n.Kind
	if kind == "" {
		kind = "element"
	}
	name := n.Name
	if name == "" {
		name = n.Text
	}
	return &journey.Element{Kind: kind, Name: clip.Text(name, journeyNameLen), Rect: rect(n)}
}

// rect is a node's box, rounded, never for a secret field or a tainted node (a field sized to
// its content would tell how long what it holds is).
func rect(n snapshot.Node) *journey.Rect {
	if n.Rect == nil || n.Secret {
		return nil
	}
	return &journey.Rect{X: int(math.Round(n.Rect.X)), Y: int(math.Round(n.Rect.Y)), Width: int(math.Round(n.Rect.Width)), Height: int(math.Round(n.Rect.Height))}
}

// focused is the backend node id of the element that has the focus in the top document (the
// host's fixed fnActive), 0 when none or when it cannot be told.
func (r *jrun) focused(ctx context.Context) int64 {
	h, b, s := r.h, r.b, r.s
	var d struct {
		Root struct {
			BackendID int64 `json:"backendNodeId"`
		} `json:"root"`
	}
	if b.Call(ctx, s.sid, "DOM.getDocument", map[string]any{"depth": 0}, &d) != nil {
		return 0
	}
	obj, err := h.resolveIsolated(ctx, b, s, d.Root.BackendID)
	if err != nil {
		return 0
	}
	defer b.Call(context.WithoutCancel(ctx), s.sid, "Runtime.releaseObject", map[string]any{"objectId": obj}, nil)
	var res struct {
		Result struct {
			ObjectID string `json:"objectId"`
		} `json:"result"`
	}
	if b.Call(ctx, s.sid, "Runtime.callFunctionOn", map[string]any{"objectId": obj, "functionDeclaration": fnActive}, &res) != nil || res.Result.ObjectID == "" {
		return 0
	}
	defer b.Call(context.WithoutCancel(ctx), s.sid, "Runtime.releaseObject", map[string]any{"objectId": res.Result.ObjectID}, nil)
	var n struct {
		Node struct {
			BackendID int64 `json:"backendNodeId"`
		} `json:"node"`
	}
	if b.Call(ctx, s.sid, "DOM.describeNode", map[string]any{"objectId": res.Result.ObjectID}, &n) != nil {
		return 0
	}
	return n.Node.BackendID
}

// screenshot keeps a PNG of the viewport as the state's artifact, with the screenshot verb's
// rule: none while a field the host typed into holds a value (checked before and after the
// capture). A refusal or failure is recorded in the evidence, not an error of the run.
func (r *jrun) screenshot(ctx context.Context, ev *journey.Evidence) {
	h, b, s := r.h, r.b, r.s
	refuse := func(err error) {
		ev.ScreenshotRefused = wire.CodeOf(err)
		if ev.ScreenshotRefused == "" {
			ev.ScreenshotRefused = wire.CodeInternal
		}
		h.o.Log.Warn("journey screenshot not taken", "session", s.name, "code", ev.ScreenshotRefused)
	}
	if err := h.pictureRefused(ctx, b, s); err != nil {
		refuse(err)
		return
	}
	var res struct {
		Data string `json:"data"`
	}
	sctx, cancel := context.WithTimeout(ctx, ScreenshotWait)
	err := b.Call(sctx, s.sid, "Page.captureScreenshot", map[string]any{"format": "png"}, &res)
	cancel()
	if err != nil {
		refuse(h.browserErr(err))
		return
	}
	if err := h.pictureRefused(ctx, b, s); err != nil {
		refuse(err)
		return
	}
	if base64.StdEncoding.DecodedLen(len(res.Data)) > control.MaxScreenshotLen {
		refuse(wire.Errorf(wire.CodeInternal, "screenshot larger than %d bytes", control.MaxScreenshotLen))
		return
	}
	png, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil {
		refuse(err)
		return
	}
	e := r.rep.Emulation
	name := journey.ArtifactName(r.plan.JourneyID, ev.StateID, e.ViewportWidth, e.ViewportHeight, e.Theme, e.Zoom)
	dir := h.o.Layout.Artifacts()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		refuse(err)
		return
	}
	os.Chmod(dir, 0o700)
	// In the artifact store beside the screenshot verb's, named by run so that journeys at
	// once never collide; the report's name is the plan's own.
	path := filepath.Join(dir, "journey-"+r.rep.RunID+"-"+name)
	if err := atomicfile.Write(path, png); err != nil {
		refuse(err)
		return
	}
	pruneArtifacts(dir, MaxScreenshots)
	sum := sha256.Sum256(png)
	ev.Screenshot = name
	r.rep.Artifacts = append(r.rep.Artifacts, journey.Artifact{Name: name, Path: path, SHA256: hex.EncodeToString(sum[:]), Bytes: len(png),
		Evidence: ev.ID, StateID: ev.StateID})
}
