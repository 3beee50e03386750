package host

import (
	"testing"

	"github.com/headless-dev/headless/host/control"
)

// TestKeyChords: modifiers before a key; a shortcut types nothing; Shift types the capital;
// Control with a letter names its editing command; unknown or repeated modifiers are refused.
func TestKeyChords(t *testing.T) {
	c, err := lookupKey("Control+A")
	if err != nil || c.bits != 2 || c.key.text != "" || c.key.vk != 65 || c.key.code != "KeyA" || len(c.mods) != 1 {
		t.Fatalf("Control+A: %+v %v", c, err)
	}
	if c, err = lookupKey("Shift+a"); err != nil || c.key.text != "A" || c.bits != 8 {
		t.Fatalf("Shift+a: %+v %v", c, err)
	}
	if c, err = lookupKey("Shift+Tab"); err != nil || c.key.key != "Tab" || c.bits != 8 {
		t.Fatalf("Shift+Tab: %+v %v", c, err)
	}
	if c, err = lookupKey("Meta+Enter"); err != nil || c.key.text != "" || c.bits != 4 {
		t.Fatalf("Meta+Enter: %+v %v", c, err)
	}
	if c, err = lookupKey("x"); err != nil || c.key.text != "x" || c.bits != 0 {
		t.Fatalf("x: %+v %v", c, err)
	}
	for _, k := range []string{"Hyper+a", "Control+Control+a", "Control+", "Control+Nope", "Ctrl+a"} {
		if _, err := lookupKey(k); err == nil {
			t.Errorf("%q accepted", k)
		}
	}
}

// TestDialogReport: the open dialog is reported as long as it is open; one the host dismissed
// unanswered is reported once.
func TestDialogReport(t *testing.T) {
	var d dialogState
	if d.report(true) != nil {
		t.Fatal("a dialog out of nothing")
	}
	d.open = &control.Dialog{Type: "confirm", Message: "Sure?", Open: true}
	if r := d.report(true); r == nil || !r.Open || d.report(true) == nil {
		t.Fatal("the open dialog is not reported every time")
	}
	d.missed, d.open = &control.Dialog{Type: "alert", Message: "Hi", Dismissed: "unanswered"}, nil
	if r := d.report(false); r == nil || r.Dismissed != "unanswered" {
		t.Fatalf("the dismissal: %+v", r)
	}
	if d.report(true) == nil || d.report(true) != nil {
		t.Fatal("the dismissal is not reported exactly once")
	}
}

// TestOpenersSameOrigin: a window's document is tainted by a window or frame of the same
// pages on its origin, at its commit or later; not by one of another origin, nor by one of
// another session's pages. The session's own page is tainted by any window it opened.
func TestOpenersSameOrigin(t *testing.T) {
	var o openerTrack
	o.reset()
	const app, idp = "http://127.0.0.1:1", "http://127.0.0.1:2"
	o.root["popup"] = "root"
	o.place("root", "root", app)
	rootDoc := &loadedDoc{document: "root/1", origin: app}
	if !o.committed("root", true, rootDoc) {
		t.Error("the session's own page with a window open is not tainted")
	}
	d := &loadedDoc{document: "popup/1", origin: idp}
	o.place("popup", "popup", idp)
	if o.committed("popup", false, d) {
		t.Fatal("a pop-up of a cross-origin opener is tainted")
	}
	o.place("elsewhere", "other-root", idp) // another session's page on the origin
	if d.tainted.Load() {
		t.Fatal("another session's page tainted the pop-up")
	}
	o.place("frame", "root", idp) // a frame of the origin in the opener
	if !d.tainted.Load() {
		t.Fatal("a frame of the pop-up's origin in its opener did not taint it")
	}
	d2 := &loadedDoc{document: "popup/2", origin: idp}
	if !o.committed("popup", false, d2) {
		t.Fatal("a document committed with a same-origin frame in its opener is clean")
	}
	o.unplace("frame", false)
	d3 := &loadedDoc{document: "popup/3", origin: idp}
	if o.committed("popup", false, d3) {
		t.Fatal("still tainted once the frame went")
	}
	o.place("root", "root", idp) // the opener moved to the origin
	if !d3.tainted.Load() {
		t.Fatal("the opener on the pop-up's origin did not taint it")
	}
	if o.committed("popup", false, &loadedDoc{document: "popup/4", origin: "null"}) != true {
		t.Error("an opaque origin is not tainted")
	}
}
