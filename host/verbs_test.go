package host

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/wire"
)

// TestPNGSize: a screenshot's width and height come from the PNG's own header; anything that
// is not a PNG with its IHDR first is an error.
func TestPNGSize(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 37, 5))); err != nil {
		t.Fatal(err)
	}
	if w, h, err := pngSize(buf.Bytes()); err != nil || w != 37 || h != 5 {
		t.Fatalf("pngSize = %d, %d, %v; want 37, 5", w, h, err)
	}
	good := buf.Bytes()
	for name, b := range map[string][]byte{
		"empty":          nil,
		"short":          good[:20],
		"not a PNG":      append([]byte("GIF89a"), good[6:]...),
		"chunk not IHDR": func() []byte { c := bytes.Clone(good); copy(c[12:16], "IDAT"); return c }(),
		"zero width":     func() []byte { c := bytes.Clone(good); copy(c[16:20], []byte{0, 0, 0, 0}); return c }(),
	} {
		if _, _, err := pngSize(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestClipBounds: an element's box is its quad's bounding box; a shotClip larger than the bounds
// is cut at its top-left corner, and says so.
func TestClipBounds(t *testing.T) {
	c, ok := quadBox([]float64{10, 20, 110, 20, 110, 70, 10, 70})
	if !ok || c != (shotClip{X: 10, Y: 20, Width: 100, Height: 50, Scale: 1}) {
		t.Fatalf("quadBox = %+v %v", c, ok)
	}
	if _, ok := quadBox([]float64{10, 20, 10, 20, 10, 20, 10, 20}); ok {
		t.Error("a box without area")
	}
	if _, ok := quadBox([]float64{1, 2}); ok {
		t.Error("not a quad")
	}
	if c, cut := boundClip(shotClip{Width: 800, Height: 600, Scale: 1}); cut || c.Width != 800 || c.Height != 600 {
		t.Errorf("a small shotClip was changed: %+v %v", c, cut)
	}
	if c, cut := boundClip(shotClip{X: 5, Y: 6, Width: 9000, Height: 90000, Scale: 1}); !cut || c != (shotClip{X: 5, Y: 6, Width: control.MaxShotWidth, Height: control.MaxShotHeight, Scale: 1}) {
		t.Errorf("a large shotClip: %+v %v", c, cut)
	}
	if a := quadArea([]float64{0, 0, 4, 0, 4, 3, 0, 3}); a != 12 {
		t.Errorf("quadArea = %v", a)
	}
}

// TestScrollAtAnEnd: a scroll that cannot move the page (at its top going up, at its bottom
// going down) does not wait for it to move: it answers once the page is still.
func TestScrollAtAnEnd(t *testing.T) {
	at := func(y float64) layoutMetrics {
		var m layoutMetrics
		m.Viewport.Y, m.Viewport.Height, m.Content.Height = y, 600, 6000
		return m
	}
	for _, tc := range []struct {
		y    float64
		by   int
		want bool
	}{{0, -100, false}, {0, 100, true}, {5400, 100, false}, {5400, -100, true}, {300, -100, true}, {300, 0, false}} {
		if got := at(tc.y).canMove(tc.by); got != tc.want {
			t.Errorf("at %v, by %d: canMove %v, want %v", tc.y, tc.by, got, tc.want)
		}
	}
}

// TestWaitConditions: wait needs a condition, bounds its strings, and "gone" is never claimed
// on an outline that was cut (the text may be in what was cut).
func TestWaitConditions(t *testing.T) {
	if wire.CodeOf(checkWait(control.WaitParams{})) != wire.CodeInvalidArgument {
		t.Error("a wait without a condition")
	}
	long := strings.Repeat("x", control.MaxWaitText+1)
	for _, p := range []control.WaitParams{{Text: long}, {Gone: long}, {URL: long}} {
		if wire.CodeOf(checkWait(p)) != wire.CodeInvalidArgument {
			t.Errorf("%+v: a string over the bound", p)
		}
	}
	if checkWait(control.WaitParams{Ref: "e1"}) != nil || checkWait(control.WaitParams{Gone: strings.Repeat("x", control.MaxWaitText)}) != nil {
		t.Error("a valid wait refused")
	}
	out := snapshot.Outline{Title: "Shop", Elements: []snapshot.Element{{Text: "Loading…"}, {Kind: "input", Value: "typed"}}}
	cut := out
	cut.Truncated = true
	for _, c := range []struct {
		name       string
		o          snapshot.Outline
		p          control.WaitParams
		met, unsur bool
	}{
		{"text there", out, control.WaitParams{Text: "Loading"}, true, false},
		{"text in a value", out, control.WaitParams{Text: "typed"}, true, false},
		{"text in the title", out, control.WaitParams{Text: "Shop"}, true, false},
		{"text not there", out, control.WaitParams{Text: "Done"}, false, false},
		{"gone but there", out, control.WaitParams{Gone: "Loading"}, false, false},
		{"gone", out, control.WaitParams{Gone: "Spinner"}, true, false},
		{"gone from a cut outline", cut, control.WaitParams{Gone: "Spinner"}, false, true},
		{"there in a cut outline", cut, control.WaitParams{Gone: "Loading"}, false, false},
		{"both", out, control.WaitParams{Text: "Shop", Gone: "Spinner"}, true, false},
		{"both, one fails", out, control.WaitParams{Text: "Shop", Gone: "Loading"}, false, false},
		{"ref only", cut, control.WaitParams{Ref: "e1"}, true, false},
	} {
		if met, unsure := waitMet(c.o, c.p); met != c.met || unsure != c.unsur {
			t.Errorf("%s: met %v unsure %v, want %v %v", c.name, met, unsure, c.met, c.unsur)
		}
	}
}

// TestSelectArguments: select's values are bounded, and its errors name only what the caller
// gave (the ref, a value as given, cut) with their codes.
func TestSelectArguments(t *testing.T) {
	for _, p := range []control.SelectParams{
		{Ref: "e1"},
		{Ref: "e1", Values: make([]string, control.MaxSelectValues+1)},
		{Ref: "e1", Values: []string{"a", strings.Repeat("x", control.MaxSelectValue+1)}},
	} {
		if wire.CodeOf(checkSelect(p)) != wire.CodeInvalidArgument {
			t.Errorf("%d values: not refused", len(p.Values))
		}
	}
	if checkSelect(control.SelectParams{Ref: "e1", Values: []string{""}}) != nil ||
		checkSelect(control.SelectParams{Ref: "e1", Values: make([]string, control.MaxSelectValues)}) != nil {
		t.Error("valid values refused")
	}
	p := control.SelectParams{Ref: "e7", Values: []string{"Red", strings.Repeat("y", 500)}}
	for _, c := range []struct {
		status string
		index  int
		code   wire.Code
		msg    string
	}{
		{"ok", -1, "", ""},
		{"not_select", -1, wire.CodeNotASelect, "ref e7 is not a select"},
		{"gone", -1, wire.CodeRefStale, "no longer in the page"},
		{"disabled", -1, wire.CodeNotInteractable, "the select of ref e7 is disabled"},
		{"not_multiple", -1, wire.CodeInvalidArgument, "takes one option; 2 values were given"},
		{"unknown", 0, wire.CodeOptionUnknown, `no option of ref e7 has the value or label "Red"`},
		{"unknown", 1, wire.CodeOptionUnknown, `label "` + strings.Repeat("y", 97) + `…"`},
		{"unknown", 9, wire.CodeOptionUnknown, "label ?"},
		{"option_disabled", 0, wire.CodeNotInteractable, `the option "Red" of ref e7 is disabled`},
		{"surprise", -1, "", "unexpected answer"},
	} {
		err := selectErr(p, c.status, c.index)
		if c.status == "ok" {
			if err != nil {
				t.Errorf("ok: %v", err)
			}
			continue
		}
		if err == nil || wire.CodeOf(err) != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s %d: %v (%s), want %s %q", c.status, c.index, err, wire.CodeOf(err), c.code, c.msg)
		}
	}
}

// TestHistoryNavigable: back goes only to http, https and about:blank entries.
func TestHistoryNavigable(t *testing.T) {
	for u, want := range map[string]bool{
		"https://a.example/x": true, "http://127.0.0.1:8080/": true, "about:blank": true,
		"file:///etc/passwd": false, "chrome://settings": false, "data:text/html,x": false,
		"javascript:1": false, "about:srcdoc": false, "": false, "https://": false,
	} {
		if historyNavigable(u) != want {
			t.Errorf("historyNavigable(%q) = %v", u, !want)
		}
	}
}

// TestNodeErrNeverInternal: a node call that fails because the page's session went away (a
// profile clear closing the session during a sign-in, a crashed renderer) is BROWSER_CRASHED
// with a hint that says only the page was lost — never INTERNAL "this is a bug" (red-team
// round 6: 'profile clear' racing an 'auth login' answered INTERNAL after DOM.focus).
func TestNodeErrNeverInternal(t *testing.T) {
	h := &Host{}
	for _, c := range []struct {
		err  error
		code wire.Code
		hint string
	}{
		{fmt.Errorf("DOM.focus: %w", cdp.ErrDetached), wire.CodeBrowserCrashed, "only this page was lost"},
		{fmt.Errorf("DOM.focus: %w", cdp.ErrTargetCrashed), wire.CodeBrowserCrashed, "only this page was lost"},
		{&cdp.Error{Code: -32000, Message: "No node with given id found"}, wire.CodeRefStale, ""},
		{fmt.Errorf("DOM.focus: %w", context.DeadlineExceeded), wire.CodeTimeout, ""},
	} {
		got := wire.From(h.nodeErr(c.err))
		if got.Code != c.code || !strings.Contains(got.Hint, c.hint) {
			t.Errorf("nodeErr(%v) = %s %q (hint %q); want %s with hint containing %q", c.err, got.Code, got.Message, got.Hint, c.code, c.hint)
		}
	}
}
