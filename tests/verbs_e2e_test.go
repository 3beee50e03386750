//go:build linux

package tests

// The page verbs of issue 13 (back, select, hover, scroll, wait --gone/--ref, press --ref,
// screenshot --ref/--full-page) against the local test site (site_test.go: /choose, /hover,
// /long, /huge), with exact results and exact error codes. Their containment (SECRET_ON_PAGE,
// wait as an oracle) is in the hostile-agent suite (hostile_test.go).

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"slices"
	"strings"
	"testing"
)

type pageResult struct {
	Session, URL, Title string
	AuthRequired        *struct {
		Challenge string   `json:"challenge"`
		Aliases   []string `json:"aliases"`
	} `json:"auth_required"`
}

// errMessage runs a headless command that must fail with code and returns its message.
func (e *env) errMessage(t *testing.T, code string, args ...string) string {
	t.Helper()
	r := e.fails(t, code, args...)
	var je jsonErr
	json.Unmarshal([]byte(r.stdout), &je)
	return je.Error.Message
}

func (e *env) snap(t *testing.T, args ...string) outline {
	t.Helper()
	var o outline
	e.ok(t, &o, append([]string{"snapshot"}, args...)...)
	return o
}

// texts is every text of an outline's elements, joined.
func (o outline) texts() string {
	var b strings.Builder
	for _, el := range o.Elements {
		b.WriteString(el.Text + "\n")
	}
	return b.String()
}

func (o outline) el(t *testing.T, ref string) (out struct {
	Kind, Text, Value string
	Options           []string
	Multiple          bool
}) {
	t.Helper()
	for _, el := range o.Elements {
		if el.Ref == ref {
			out.Kind, out.Text, out.Value, out.Options, out.Multiple = el.Kind, el.Text, el.Value, el.Options, el.Multiple
			return out
		}
	}
	t.Fatalf("no %s in %+v", ref, o.Elements)
	return out
}

func TestSelectVerb(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	e.start(t)
	e.ok(t, nil, "visit", srv.URL+"/choose")
	o := e.snap(t)
	colour, top, frozen, goTo, note := o.ref(t, "select", "Colour"), o.ref(t, "select", "Toppings"), o.ref(t, "select", "Frozen"), o.ref(t, "select", "Go to"), o.ref(t, "input", "Note")
	// The snapshot lists what select takes: labels (label attribute, else text), no hidden
	// option, and whether several may be chosen.
	if el := o.el(t, colour); strings.Join(el.Options, "|") != "Pick one|Red|Green|Blue|Lime" || el.Multiple || el.Value != "Pick one" {
		t.Fatalf("colour select in the snapshot: %+v", el)
	}
	if el := o.el(t, top); strings.Join(el.Options, "|") != "Cheese|Olives|Mushroom" || !el.Multiple || el.Value != "Mushroom" {
		t.Fatalf("toppings select in the snapshot: %+v", el)
	}

	// By label first: "Green" is the label of g (and the value of Lime). The page sees an
	// input and a change event, in that order, with the new selection.
	var sel struct {
		pageResult
		Ref      string   `json:"ref"`
		Selected []string `json:"selected"`
	}
	e.ok(t, &sel, "select", colour, "Green")
	if sel.Ref != colour || !slices.Equal(sel.Selected, []string{"Green"}) || sel.Session != "default" || sel.Title != "Choose" || !strings.HasSuffix(sel.URL, "/choose") {
		t.Fatalf("select result %+v", sel)
	}
	o = e.snap(t)
	if v := o.el(t, colour).Value; v != "Green" {
		t.Errorf("after select Green the select shows %q", v)
	}
	if !strings.Contains(o.texts(), "events: colour.input=g colour.change=g") {
		t.Errorf("the page did not see input then change: %q", o.texts())
	}
	// By value, when no label matches.
	e.ok(t, &sel, "select", colour, "r")
	if v := e.snap(t).el(t, colour).Value; v != "Red" {
		t.Errorf("after select r the select shows %q", v)
	}
	// Several, replacing the selection (Mushroom was selected), by label and by value.
	e.ok(t, &sel, "select", top, "Cheese", "ol")
	o = e.snap(t)
	if v := o.el(t, top).Value; v != "Cheese, Olives" {
		t.Errorf("after select Cheese ol the toppings show %q", v)
	}
	if !strings.Contains(o.texts(), "top.input=ch+ol top.change=ch+ol") {
		t.Errorf("the page did not see the multiple selection: %q", o.texts())
	}

	// Refusals, each with its code; an unknown value names only what the caller gave.
	if m := e.errMessage(t, "OPTION_UNKNOWN", "select", colour, "Purple"); m != `no option of ref `+colour+` has the value or label "Purple"` {
		t.Errorf("OPTION_UNKNOWN message %q", m)
	}
	e.fails(t, "OPTION_UNKNOWN", "select", top, "Secret menu") // hidden: not a person's choice
	e.fails(t, "OPTION_UNKNOWN", "select", top, "x")
	e.fails(t, "OPTION_UNKNOWN", "select", colour, "red") // exact: case matters
	e.fails(t, "NOT_INTERACTABLE", "select", colour, "Blue")
	e.fails(t, "NOT_INTERACTABLE", "select", frozen, "Only")
	e.fails(t, "INVALID_ARGUMENT", "select", colour, "Red", "Green")
	e.fails(t, "NOT_A_SELECT", "select", note, "x")
	e.fails(t, "REF_UNKNOWN", "select", "e999", "x")
	many := []string{"select", top}
	for i := 0; i < 33; i++ {
		many = append(many, "Cheese")
	}
	e.fails(t, "INVALID_ARGUMENT", many...)
	e.fails(t, "INVALID_ARGUMENT", "select", top, strings.Repeat("x", 1025))
	if v := e.snap(t).el(t, colour).Value; v != "Red" {
		t.Errorf("a refused select changed the selection: %q", v)
	}

	// A change handler that navigates: the result says where the session is, and the old
	// refs are gone with the document.
	e.ok(t, &sel, "select", goTo, "Next page")
	if !strings.HasSuffix(sel.URL, "/next") || sel.Title != "Next" {
		t.Errorf("a select that navigates answered %+v", sel)
	}
	e.fails(t, "REF_STALE", "select", colour, "Red")
}

func TestHoverPressWait(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	e.start(t)
	e.ok(t, nil, "visit", srv.URL+"/hover")
	o := e.snap(t)
	if strings.Contains(o.texts(), "Revealed on hover") {
		t.Fatal("the tip shows before any hover: the test proves nothing")
	}
	eye, flash := o.ref(t, "button", "Hover me"), o.ref(t, "text", "Hidden while hovering")
	e.ok(t, nil, "wait", "--ref", flash, "--timeout", "2s")
	var hv map[string]any
	e.ok(t, &hv, "hover", eye)
	if hv["session"] != "default" || hv["ref"] != eye || hv["hovered"] != true || len(hv) != 3 {
		t.Fatalf("hover result %v", hv)
	}
	// wait --ref: visibility hidden (a box, but not visible) does not count; the mouse
	// leaving the button shows it again. (The refs are the first snapshot's until the next.)
	e.fails(t, "TIMEOUT", "wait", "--ref", flash, "--timeout", "400ms")
	e.ok(t, nil, "hover", o.ref(t, "button", "Load"))
	e.ok(t, nil, "wait", "--ref", flash, "--timeout", "2s")
	e.ok(t, nil, "hover", eye)
	if !strings.Contains(e.snap(t).texts(), "Revealed on hover") {
		t.Error("hover did not reach the element (no mouseover)")
	}
	e.fails(t, "REF_UNKNOWN", "hover", "e999")

	// wait --ref: the element of a ref becomes visible (it has no height yet); wait --gone:
	// a text goes away. Both before and after the page's own change.
	o = e.snap(t)
	later, load := o.ref(t, "text", "Shown later"), o.ref(t, "button", "Load")
	e.fails(t, "TIMEOUT", "wait", "--ref", later, "--timeout", "400ms")
	e.fails(t, "TIMEOUT", "wait", "--gone", "Loading the panel", "--timeout", "400ms")
	e.ok(t, nil, "wait", "--gone", "never on this page", "--timeout", "2s")
	e.ok(t, nil, "click", load)
	e.fails(t, "REF_STALE", "wait", "--ref", later) // click forgot the refs (of an earlier snapshot)
	o = e.snap(t)
	later = o.ref(t, "text", "Shown later")
	// A success is the conditions met: a wait that ran out answers TIMEOUT (above).
	var page pageResult
	e.ok(t, &page, "wait", "--gone", "Loading the panel", "--ref", later, "--text", "Hover me", "--timeout", "60s")
	if page.Title != "Hover" {
		t.Errorf("wait --gone --ref: %+v", page)
	}
	e.fails(t, "TIMEOUT", "wait", "--gone", "Hover me", "--ref", later, "--timeout", "300ms") // all conditions at once
	e.fails(t, "INVALID_ARGUMENT", "wait", "--gone", strings.Repeat("x", 1025))

	// press --ref focuses the element first.
	q := o.ref(t, "input", "Search")
	e.ok(t, nil, "fill", q, "--", "cats")
	e.ok(t, nil, "click", o.ref(t, "button", "Hover me")) // the focus leaves the field
	o = e.snap(t)
	e.ok(t, &page, "press", "Enter", "--ref", o.ref(t, "input", "Search"))
	if !strings.Contains(e.snap(t).texts(), "searched cats") {
		t.Error("press Enter --ref did not reach the field")
	}
	o = e.snap(t)
	e.fails(t, "NOT_INTERACTABLE", "press", "Enter", "--ref", o.ref(t, "text", "searched cats"))
	e.fails(t, "REF_UNKNOWN", "press", "Enter", "--ref", "e999")
	e.fails(t, "INVALID_ARGUMENT", "press", "NotAKey", "--ref", o.ref(t, "input", "Search"))
}

func TestScrollAndScreenshots(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	e.start(t)
	e.ok(t, nil, "visit", srv.URL+"/long")
	type scrolled struct {
		Session        string `json:"session"`
		Ref            string `json:"ref"`
		ScrollX        int    `json:"scroll_x"`
		ScrollY        int    `json:"scroll_y"`
		ViewportWidth  int    `json:"viewport_width"`
		ViewportHeight int    `json:"viewport_height"`
		ContentWidth   int    `json:"content_width"`
		ContentHeight  int    `json:"content_height"`
	}
	var s scrolled
	e.ok(t, &s, "scroll")
	vh, ch := s.ViewportHeight, s.ContentHeight
	if vh < 100 || ch < 6000 || s.ScrollY != vh || s.ScrollX != 0 {
		t.Fatalf("scroll (one viewport): %+v", s)
	}
	e.ok(t, &s, "scroll", "--by", "250")
	if s.ScrollY != vh+250 {
		t.Errorf("scroll --by 250 from %d: %+v", vh, s)
	}
	e.ok(t, &s, "scroll", "--by=-100000")
	if s.ScrollY != 0 {
		t.Errorf("scroll --by=-100000: %+v", s)
	}
	e.ok(t, &s, "scroll", "--by=-100") // at the top already (that it answers at once: host's TestScrollAtAnEnd)
	if s.ScrollY != 0 {
		t.Errorf("scroll up at the top: %+v", s)
	}
	o := e.snap(t)
	e.ok(t, &s, "scroll", o.ref(t, "button", "Bottom button"))
	if s.ScrollY != ch-vh {
		t.Errorf("scroll to the last button: %+v, want scroll_y %d", s, ch-vh)
	}
	e.fails(t, "INVALID_ARGUMENT", "scroll", "--by", "100001")
	e.fails(t, "REF_UNKNOWN", "scroll", "e999")

	// Screenshots: the element's box exactly (its pixels all red), the whole page, the
	// viewport; width and height are the PNG's own.
	type shot struct {
		Path          string
		Bytes         int
		Width, Height int
		Truncated     bool
	}
	decode := func(t *testing.T, sh shot) image.Image {
		t.Helper()
		b, err := os.ReadFile(sh.Path)
		if err != nil || len(b) != sh.Bytes {
			t.Fatalf("%+v: %v", sh, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if img.Bounds().Dx() != sh.Width || img.Bounds().Dy() != sh.Height {
			t.Fatalf("the PNG is %v, the result says %d×%d", img.Bounds(), sh.Width, sh.Height)
		}
		return img
	}
	var sh shot
	e.ok(t, nil, "scroll", "--by=-100000") // the box is below the fold: --ref scrolls to it
	e.ok(t, &sh, "screenshot", "--ref", o.ref(t, "button", "Red box"))
	img := decode(t, sh)
	if sh.Width != 120 || sh.Height != 80 || sh.Truncated {
		t.Errorf("screenshot --ref of a 120×80 box: %+v", sh)
	}
	for _, p := range []image.Point{{0, 0}, {119, 0}, {0, 79}, {119, 79}, {60, 40}} {
		if r, g, b, _ := img.At(p.X, p.Y).RGBA(); r>>8 < 250 || g>>8 > 5 || b>>8 > 5 {
			t.Errorf("pixel %v of the red box is %d,%d,%d", p, r>>8, g>>8, b>>8)
		}
	}
	e.ok(t, &sh, "screenshot", "--full-page")
	decode(t, sh)
	if sh.Height != ch || sh.Truncated || sh.Width < 100 {
		t.Errorf("screenshot --full-page of a %d px page: %+v", ch, sh)
	}
	e.ok(t, &sh, "screenshot")
	decode(t, sh)
	if sh.Height != vh || sh.Truncated {
		t.Errorf("screenshot of a %d px viewport: %+v", vh, sh)
	}
	e.fails(t, "REF_UNKNOWN", "screenshot", "--ref", "e999")
	e.fails(t, "USAGE", "screenshot", "--ref", o.ref(t, "button", "Red box"), "--full-page")

	// A page larger than the bound is cut to it, and the result says so.
	e.ok(t, nil, "visit", srv.URL+"/huge")
	e.ok(t, &sh, "screenshot", "--full-page")
	decode(t, sh)
	if sh.Height != 16384 || !sh.Truncated {
		t.Errorf("screenshot --full-page of a 40000 px page: %+v, want 16384 px and truncated", sh)
	}
}

func TestBackVerb(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	e.start(t)
	e.ok(t, nil, "session", "create", "h")
	if m := e.errMessage(t, "NO_HISTORY", "back", "--session", "h"); m != `session "h" has no earlier page` {
		t.Errorf("NO_HISTORY message %q", m)
	}
	var page pageResult
	e.ok(t, nil, "visit", srv.URL+"/", "--session", "h")
	o := e.snap(t, "--session", "h")
	e.ok(t, &page, "click", o.ref(t, "link", "Next page"), "--session", "h")
	if !strings.HasSuffix(page.URL, "/next") {
		t.Fatalf("click Next page: %+v", page)
	}
	// Back to the login page: a page result like visit's, auth_required included.
	e.ok(t, &page, "back", "--session", "h")
	if page.URL != srv.URL+"/" || page.Title != "Home" || page.Session != "h" || page.AuthRequired == nil || page.AuthRequired.Challenge == "" {
		t.Errorf("back to the home page: %+v", page)
	}
	e.fails(t, "REF_STALE", "click", o.ref(t, "link", "Next page"), "--session", "h") // refs die with the page
	// Within the document (a fragment): no load to wait for.
	e.ok(t, nil, "visit", srv.URL+"/long", "--session", "h")
	e.ok(t, &page, "click", e.snap(t, "--session", "h").ref(t, "link", "Part 2"), "--session", "h")
	if !strings.HasSuffix(page.URL, "/long#part2") {
		t.Fatalf("click Part 2: %+v", page)
	}
	// A success is the move seen: a back that waited for a load there is none of would
	// answer TIMEOUT.
	e.ok(t, &page, "back", "--session", "h")
	if page.URL != srv.URL+"/long" {
		t.Errorf("back within the document: %+v", page)
	}
	// Back to the first entry, then nothing more.
	for i := 0; i < 3 && page.URL != "about:blank"; i++ {
		e.ok(t, &page, "back", "--session", "h")
	}
	if page.URL != "about:blank" {
		t.Errorf("back three times: %+v", page)
	}
	e.fails(t, "NO_HISTORY", "back", "--session", "h")

	// visit --timeout (issue 46): the page's wait is the caller's. A document that ends 5 s
	// after it began cannot load within 1 s: TIMEOUT, whose hint names the flag visit has;
	// within the default 30 s it loads.
	r := e.run("", "headless", "visit", srv.URL+"/unfinished", "--session", "h", "--timeout", "1s", "--json")
	var failed struct {
		Error struct{ Code, Hint string } `json:"error"`
	}
	if json.Unmarshal([]byte(r.stdout), &failed); r.code != 1 || failed.Error.Code != "TIMEOUT" || !strings.Contains(failed.Error.Hint, "--timeout") {
		t.Errorf("visit --timeout 1s of a page that takes 5 s: exit %d %s", r.code, r.stdout)
	}
	e.ok(t, &page, "visit", srv.URL+"/unfinished", "--session", "h")
	if page.Title != "Unfinished" {
		t.Errorf("visit of a page that takes 5 s: %+v", page)
	}
}

// TestActionsSettleOnTheirRequests: a click or a key press whose effect lands when the
// requests it started answer (700 ms later, one after another, or never: a stream) is seen by
// the next snapshot — the action settles on what it started, not on a fixed wait (issue 31:
// the 400 ms it waited saw none of these).
func TestActionsSettleOnTheirRequests(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	e.start(t)
	e.ok(t, nil, "visit", srv.URL+"/late")
	o := e.snap(t)
	e.ok(t, nil, "click", o.ref(t, "button", "Fetch"))
	if got := e.snap(t).texts(); !strings.Contains(got, "answer-arrived") {
		t.Fatalf("after a click whose fetch answers in 700 ms: %s", got)
	}
	o = e.snap(t)
	e.ok(t, nil, "click", o.ref(t, "button", "Chain"))
	if got := e.snap(t).texts(); !strings.Contains(got, "second-arrived") {
		t.Fatalf("after a click whose fetch starts another: %s", got)
	}
	// A request that never ends costs a bounded wait, and the click answers.
	o = e.snap(t)
	e.ok(t, nil, "click", o.ref(t, "button", "Stream"))
	if got := e.snap(t).texts(); !strings.Contains(got, "streaming") {
		t.Fatalf("after a click that opens a stream: %s", got)
	}
	o = e.snap(t)
	e.ok(t, nil, "fill", o.ref(t, "input", "Find"), "--", "cats")
	e.ok(t, nil, "press", "Enter", "--ref", o.ref(t, "input", "Find"))
	if got := e.snap(t).texts(); !strings.Contains(got, "found-cats") {
		t.Fatalf("after Enter whose fetch answers in 700 ms: %s", got)
	}
}
