package host

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/wire"
)

// Screenshot writes a PNG to the private artifact store: of the session's viewport; with
// p.Ref, of the element's box (scrolled into view); with p.FullPage, of the whole page. A
// capture is cut to MaxShotWidth × MaxShotHeight CSS pixels (the result says so), and its
// width and height are read from the PNG itself.
func (h *Host) Screenshot(ctx context.Context, p control.ScreenshotParams) (control.ScreenshotResult, error) {
	if p.Ref != "" && p.FullPage {
		return control.ScreenshotResult{}, wire.Errorf(wire.CodeInvalidArgument, "screenshot takes a ref or full page, not both")
	}
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return control.ScreenshotResult{}, err
	}
	defer unlock()
	if err := s.refuseDialog(); err != nil {
		return control.ScreenshotResult{}, err
	}
	var t snapshot.Target
	if p.Ref != "" {
		if t, err = s.target(p.Ref); err != nil {
			return control.ScreenshotResult{}, err
		}
	}
	// Pixels show what a field holds (a revealed password, or its length in bullets): none
	// while a field the host typed into still holds a value.
	// Nor of a page that shows a released secret (echoed.go): pixels cannot be scanned.
	if err := h.pictureRefused(ctx, b, s); err != nil {
		return control.ScreenshotResult{}, err
	}
	params := map[string]any{"format": "png"}
	truncated := false
	switch {
	case p.Ref != "":
		c, cut, err := h.elementClip(ctx, b, s, t)
		if err != nil {
			return control.ScreenshotResult{}, err
		}
		params["clip"], params["captureBeyondViewport"], truncated = c, true, cut
	case p.FullPage:
		m, err := h.layout(ctx, b, s)
		if err != nil {
			return control.ScreenshotResult{}, err
		}
		c, cut := boundClip(shotClip{Width: m.Content.Width, Height: m.Content.Height, Scale: 1})
		params["clip"], params["captureBeyondViewport"], truncated = c, true, cut
	}
	var r struct {
		Data string `json:"data"`
	}
	// A page kept busy (by another page in its renderer process, say) never produces a frame:
	// bounded, so the answer is TIMEOUT rather than the CLI's deadline.
	sctx, scancel := context.WithTimeout(ctx, ScreenshotWait)
	err = b.Call(sctx, s.sid, "Page.captureScreenshot", params, &r)
	scancel()
	if err != nil {
		return control.ScreenshotResult{}, h.browserErr(err)
	}
	// And once more after the capture: a page that refilled the field, or showed the secret,
	// meanwhile gets no picture.
	if err := h.pictureRefused(ctx, b, s); err != nil {
		return control.ScreenshotResult{}, err
	}
	if base64.StdEncoding.DecodedLen(len(r.Data)) > control.MaxScreenshotLen {
		return control.ScreenshotResult{}, wire.Errorf(wire.CodeInternal, "screenshot larger than %d bytes", control.MaxScreenshotLen)
	}
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		return control.ScreenshotResult{}, fmt.Errorf("decode screenshot: %w", err)
	}
	width, height, err := pngSize(png)
	if err != nil {
		return control.ScreenshotResult{}, err
	}
	dir := h.o.Layout.Artifacts()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return control.ScreenshotResult{}, err
	}
	os.Chmod(dir, 0o700)
	sum := sha256.Sum256(png)
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.png", s.name, h.o.Now().UTC().Format("20060102T150405.000000000Z")))
	if err := atomicfile.Write(path, png); err != nil {
		return control.ScreenshotResult{}, err
	}
	pruneArtifacts(dir, MaxScreenshots)
	return control.ScreenshotResult{Session: s.name, Path: path, SHA256: hex.EncodeToString(sum[:]), Bytes: len(png),
		Width: width, Height: height, Truncated: truncated}, nil
}

// shotClip is Page.captureScreenshot's clip: a rectangle of the page (document coordinates, CSS
// pixels) and a scale.
type shotClip struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	Scale  float64 `json:"scale"`
}

// boundClip cuts c to MaxShotWidth × MaxShotHeight (keeping its top-left corner) and reports
// whether it cut.
func boundClip(c shotClip) (shotClip, bool) {
	cut := false
	if c.Width > control.MaxShotWidth {
		c.Width, cut = control.MaxShotWidth, true
	}
	if c.Height > control.MaxShotHeight {
		c.Height, cut = control.MaxShotHeight, true
	}
	return c, cut
}

// elementClip scrolls the element into view and returns its border box in document
// coordinates, bounded.
func (h *Host) elementClip(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target) (shotClip, bool, error) {
	node := map[string]any{"backendNodeId": t.BackendNodeID}
	if err := b.Call(ctx, s.sid, "DOM.scrollIntoViewIfNeeded", node, nil); err != nil {
		return shotClip{}, false, h.nodeErr(err)
	}
	var bm struct {
		Model struct {
			Border []float64 `json:"border"`
		} `json:"model"`
	}
	if err := b.Call(ctx, s.sid, "DOM.getBoxModel", node, &bm); err != nil {
		return shotClip{}, false, h.nodeErr(err)
	}
	box, ok := quadBox(bm.Model.Border)
	if !ok {
		return shotClip{}, false, wire.Errorf(wire.CodeNotInteractable, "the element has no visible box")
	}
	m, err := h.layout(ctx, b, s)
	if err != nil {
		return shotClip{}, false, err
	}
	box.X += m.Viewport.X
	box.Y += m.Viewport.Y
	c, cut := boundClip(box)
	return c, cut, nil
}

// quadBox is the bounding box of a quad (four x, y points), scale 1; false when it has no
// area of at least one pixel either way.
func quadBox(q []float64) (shotClip, bool) {
	if len(q) != 8 {
		return shotClip{}, false
	}
	x0, y0, x1, y1 := q[0], q[1], q[0], q[1]
	for i := 2; i < 8; i += 2 {
		x0, x1 = min(x0, q[i]), max(x1, q[i])
		y0, y1 = min(y0, q[i+1]), max(y1, q[i+1])
	}
	if x1-x0 < 1 || y1-y0 < 1 {
		return shotClip{}, false
	}
	return shotClip{X: x0, Y: y0, Width: x1 - x0, Height: y1 - y0, Scale: 1}, true
}

// pngSize reads a PNG's width and height from its header (the IHDR chunk, which must come
// first).
func pngSize(b []byte) (width, height int, err error) {
	if len(b) < 24 || string(b[:8]) != "\x89PNG\r\n\x1a\n" || string(b[12:16]) != "IHDR" || binary.BigEndian.Uint32(b[8:12]) != 13 {
		return 0, 0, errors.New("screenshot: not a PNG with an IHDR header")
	}
	w, h := binary.BigEndian.Uint32(b[16:20]), binary.BigEndian.Uint32(b[20:24])
	if w == 0 || h == 0 || w > 1<<24 || h > 1<<24 {
		return 0, 0, fmt.Errorf("screenshot: a PNG header of %d × %d pixels", w, h)
	}
	return int(w), int(h), nil
}

func pruneArtifacts(dir string, keep int) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) <= keep {
		return
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".png") {
			names = append(names, e.Name())
		}
	}
	sort.Slice(names, func(i, j int) bool {
		a, _ := os.Stat(filepath.Join(dir, names[i]))
		b, _ := os.Stat(filepath.Join(dir, names[j]))
		return a != nil && b != nil && a.ModTime().Before(b.ModTime())
	})
	for len(names) > keep {
		os.Remove(filepath.Join(dir, names[0]))
		names = names[1:]
	}
}
