package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/wire"
)

// Containment (issue 10): the agent drives the same verbs right after a sign-in, on a page it
// chose, so the secret may be in the page only between typing and submitting.
//
//   - Every node the host types a secret into is tainted, by backend node id, for the life of
//     its document (the main frame's loader): whatever the page turns the field into (a text
//     field after a "show password" toggle, a button carrying the value), no page-derived
//     output reads its value (snapshot.Options.Tainted), and screenshot refuses while a
//     tainted node holds one (SECRET_ON_PAGE).
//   - An attempt that ends without leaving the document (a script login that failed, a submit
//     the page blocked, any error after the first typed character) ends with the host emptying
//     those fields before it answers: with trusted key events first (select all, Delete: what
//     a person's deletion looks like, so a framework's own state follows), then from an
//     isolated world if a value is left, which also marks the field autocomplete=off so that
//     Chromium never saves what it may later hold into history or session restore data. The
//     result says so (Evidence.Cleared). When that cannot be done within ClearWait (a renderer
//     kept busy by another page sharing its process, a field that keeps its value), the page
//     is discarded instead: its renderer is crashed (Page.crash works while the page's main
//     thread is busy) and the session gets a fresh blank page (Evidence.PageDiscarded). The
//     typing and submitting phase itself is bounded by TypeWait.
//   - While a tainted node holds a value (the page put it back), no verb may edit or submit
//     the page (click, fill, press: SECRET_ON_PAGE), so the site's own sign-in cannot be made
//     an oracle for the password by editing the field and submitting it again.
//   - The back/forward cache is off (package cdp), so no history step brings back a document
//     with a filled field.
//   - The host's submit leaves no body in the session's history (forgetSubmission): a history
//     entry that is the answer to a POST keeps that POST's body, and Chromium writes it (the
//     password URL-encoded in it) into the profile's session-restore files once a history step
//     returns to that entry (back, or a page's history.back()). The entry the submit made is
//     turned into a plain one (history.replaceState from an isolated world); if that cannot
//     be done, the session's history is dropped.

// taintOf returns the session's tainted nodes for the document now shown, dropping the taint
// when the main frame shows another document (the tainted nodes died with theirs; with the
// back/forward cache off it cannot come back).
func (s *session) taintOf(document string) map[int64]bool {
	if s.taintDoc != "" && s.taintDoc != document {
		s.taint, s.taintDoc = nil, ""
	}
	if len(s.taint) == 0 {
		return nil
	}
	out := make(map[int64]bool, len(s.taint))
	for id := range s.taint {
		out[id] = true
	}
	return out
}

// addTaint records that the host is about to type a secret into t in document.
func (s *session) addTaint(document string, t snapshot.Target) {
	if s.taintDoc != document {
		s.taint, s.taintDoc = map[int64]string{}, document
	}
	if s.taint == nil {
		s.taint = map[int64]string{}
	}
	s.taint[t.BackendNodeID] = t.FrameID
}

// capture takes one look at the session's page: the document it shows and its outline, with
// the session's taint applied. The raw snapshot is zeroed after use: DOMSnapshot returns the
// values of every field, a typed password's included.
func (h *Host) capture(ctx context.Context, b *cdp.Browser, s *session) (string, snapshot.Outline, map[string]snapshot.Target, error) {
	return h.captureWith(ctx, b, s, snapshot.Options{})
}

// captureWith is capture with other bounds (o.Tainted is always the session's own): the one
// way the host reads a page's text, for what it shows and for what it searches.
func (h *Host) captureWith(ctx context.Context, b *cdp.Browser, s *session, o snapshot.Options) (string, snapshot.Outline, map[string]snapshot.Target, error) {
	var (
		doc string
		raw json.RawMessage
		err error
	)
	for try := 0; ; try++ {
		if doc, err = h.documentID(ctx, b, s); err != nil {
			return "", snapshot.Outline{}, nil, err
		}
		if raw, err = captureSnapshot(ctx, b, s); err != nil {
			return doc, snapshot.Outline{}, nil, h.browserErr(err)
		}
		// A navigation that committed between the two (the main frame's commit seen since)
		// makes the snapshot another document's than doc: look again. (One that committed
		// unseen is found out by the next check of the document, which a sign-in makes
		// before it types.)
		if try == 2 || !committedSince(s, doc) {
			break
		}
		clear(raw)
	}
	defer clear(raw)
	o.Tainted = s.taintOf(doc)
	o.Echo = h.echoOption()
	out, refs, err := snapshot.Build(raw, o)
	if errors.Is(err, snapshot.ErrEchoed) {
		clear(raw)
		return doc, snapshot.Outline{}, nil, h.echoed(ctx, b, s, "page")
	}
	if err != nil {
		return doc, snapshot.Outline{}, nil, fmt.Errorf("snapshot: %w", err)
	}
	return doc, out, refs, nil
}

// committedSince reports whether the session's main frame committed another document than
// doc (frame/loader, as documentID) since doc was read.
func committedSince(s *session, doc string) bool {
	d := s.loaded.Load()
	if d == nil || d.document == doc {
		return false
	}
	frame, _, _ := strings.Cut(doc, "/")
	seen, _, _ := strings.Cut(d.document, "/")
	return frame == seen
}

// secretOnPage reports whether a tainted node of the shown document still holds a value.
func (h *Host) secretOnPage(ctx context.Context, b *cdp.Browser, s *session) (bool, error) {
	doc, err := h.documentID(ctx, b, s)
	if err != nil {
		return false, err
	}
	nodes := s.taintOf(doc)
	if len(nodes) == 0 {
		return false, nil
	}
	raw, err := captureSnapshot(ctx, b, s)
	if err != nil {
		return false, h.browserErr(err)
	}
	defer clear(raw)
	return snapshot.HoldsValue(raw, nodes)
}

func errSecretOnPage() error {
	return wire.Errorf(wire.CodeSecretOnPage,
		"a field the host typed a password into holds a value on this page again (the page put it back after the host emptied it)")
}

// refuseWhileSecret is the gate of every verb that can edit or submit the page or run its
// handlers (click, fill, press, select, hover, scroll, back): SECRET_ON_PAGE while a tainted
// node holds a value, and the check's own error (a page that does not answer) otherwise.
// Hover is no exception: sites reveal a password while the mouse is over an eye icon.
func (h *Host) refuseWhileSecret(ctx context.Context, b *cdp.Browser, s *session) error {
	if len(s.taint) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ClearWait)
	defer cancel()
	left, err := h.secretOnPage(ctx, b, s)
	if err != nil {
		return h.browserErr(err)
	}
	if left {
		return errSecretOnPage()
	}
	return nil
}

// Bounds of the phases of an attempt that a page could otherwise stretch at will.
const (
	// ClearWait bounds the emptying of typed fields at the end of an attempt (and the checks
	// of refuseWhileSecret); beyond it the page is discarded.
	ClearWait = 5 * time.Second
	// TypeWait bounds everything from the last look before typing to the submit click.
	TypeWait = 30 * time.Second
)

type clearOutcome int

const (
	nothingLeft clearOutcome = iota // the typed document is gone (navigated away, crashed)
	emptied                         // the typed fields are empty
	notEmptied                      // they could not be emptied in time, or kept a value
)

// clearTyped empties the tainted fields of the document now shown, if it is still the one they
// were typed into. It runs even when ctx is done (the caller went away: the page must not keep
// the secret), within ClearWait.
func (h *Host) clearTyped(ctx context.Context, b *cdp.Browser, s *session) clearOutcome {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ClearWait)
	defer cancel()
	began := time.Now()
	if b.SessionErr(s.sid) != nil || len(s.taint) == 0 {
		return nothingLeft // the renderer died with the page
	}
	doc, err := h.documentID(ctx, b, s)
	if err != nil {
		return notEmptied // a page that does not answer may still hold it
	}
	if len(s.taintOf(doc)) == 0 {
		return nothingLeft // navigated away: the typed document is gone for good
	}
	out := emptied
	for id, frame := range s.taint {
		if !h.clearField(ctx, b, s, id, frame) {
			out = notEmptied
		}
	}
	if left, err := h.secretOnPage(ctx, b, s); err != nil || left {
		out = notEmptied
	}
	h.o.Log.Info("typed fields cleared", "session", s.name, "fields", len(s.taint), "empty", out == emptied, "ms", time.Since(began).Milliseconds())
	return out
}

// discardPage destroys the session's page and everything typed into it: its renderer is
// crashed (Page.crash is served off the page's main thread, so a page kept busy still dies),
// and the session gets a fresh blank page. s.mu is held.
func (h *Host) discardPage(ctx context.Context, b *cdp.Browser, s *session) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	h.o.Log.Warn("typed fields could not be emptied: discarding the page", "session", s.name)
	b.StopSession(s.sid, cdp.ErrTargetCrashed)  // quieted, then crashed (cdp.Quiet)
	if err := h.revive(ctx, b, s); err != nil { // revive waits for the crash (StopWait)
		h.o.Log.Error("no fresh page after discarding one", "session", s.name, "code", wire.CodeOf(err))
	}
}

// clearField empties one field: focus, select all and Delete as trusted input (a framework
// that keeps the field's value in its own state sees a deletion), then, from an isolated world
// the page's scripts cannot reach (one fixed function of the host's, never caller script), it
// sets autocomplete=off on the field (Chromium then never saves its value with the history
// entry or the session restore data, whatever the page later puts in it or turns it into)
// and, if a value is left, empties it with input and change events. It reports whether the
// field is empty.
func (h *Host) clearField(ctx context.Context, b *cdp.Browser, s *session, id int64, frame string) bool {
	node := map[string]any{"backendNodeId": id}
	if b.Call(ctx, s.sid, "DOM.focus", node, nil) == nil {
		if selectAll(ctx, b, s) == nil {
			pressKey(ctx, b, s, "Delete")
		}
	}
	empty, err := h.callFixed(ctx, b, s, id, frame, fnEmpty)
	return err == nil && empty
}

// The only JavaScript the host ever runs: five fixed functions of its own, called on one
// node from an isolated world the page's scripts cannot reach (never caller script; what a
// caller gives, fnSelect's values, travels as call arguments, never in the source).
const (
	// fnFocused: the node is connected, its document has the focus and the node is its
	// focused element (checked right before and after typing into it).
	fnFocused = "function() { return this.isConnected && this.ownerDocument.hasFocus() && this.ownerDocument.activeElement === this; }"
	// fnTypeReady: right before the host types into a field it gave the focus: with noSave
	// (the call's one argument) mark it autocomplete=off first, before a secret is typed into
	// it (Blink then never saves its value into the history entry's form state, restored by
	// a back step, written to the profile's session files; "no_save" when the mark does not
	// hold); then, if the field is connected and is its focused document's focused element
	// (as fnFocused; else "not_focused", or "no_page_focus" when it is the focused element of
	// a document whose window has not the focus yet), select its content, so that what is
	// typed replaces it, and answer "ok".
	fnTypeReady = `function(noSave) {
  if (noSave) {
    this.setAttribute("autocomplete", "off");
    if (this.getAttribute("autocomplete") !== "off") { return "no_save"; }
  }
  if (!this.isConnected || this.ownerDocument.activeElement !== this) { return "not_focused"; }
  if (!this.ownerDocument.hasFocus()) { return "no_page_focus"; }
  this.select();
  return "ok";
}`
	// fnEmpty: mark the field autocomplete=off (Chromium then never saves what it holds into
	// history or session restore data), empty it with input and change events if it holds a
	// value, and say whether it is empty.
	fnEmpty = `function() {
  this.setAttribute("autocomplete", "off");
  if (typeof this.value === "string" && this.value !== "") {
    this.value = "";
    this.dispatchEvent(new Event("input", {bubbles: true}));
    this.dispatchEvent(new Event("change", {bubbles: true}));
  }
  return this.value === "";
}`
	// fnForgetPost: on a document, replace its history entry by itself (same URL and state):
	// what the entry held of the form submission that loaded it (its body) is gone, so no
	// later history step returns to the submission, and Chromium never writes it to disk.
	fnForgetPost = `function() {
  var w = this.defaultView;
  w.history.replaceState(w.history.state, "");
  return true;
}`
	// fnSelect: on a native select that is connected and enabled, select the options that the
	// values (an array of strings, the call's one argument) name, each by its label (what the
	// snapshot lists), else by its value, never a hidden one (a person cannot pick it),
	// replacing the selection, then fire input and change as a person's choice does. It answers {status, index}: "ok"; "not_select", "gone", "disabled",
	// "not_multiple" (several values for a select that takes one); "unknown" or
	// "option_disabled" for values[index]. It returns nothing read from the page.
	fnSelect = `function(values) {
  if (!(this instanceof HTMLSelectElement)) { return {status: "not_select", index: -1}; }
  if (!this.isConnected) { return {status: "gone", index: -1}; }
  if (this.matches(":disabled")) { return {status: "disabled", index: -1}; }
  if (values.length > 1 && !this.multiple) { return {status: "not_multiple", index: -1}; }
  var opts = Array.prototype.slice.call(this.options), picked = [];
  for (var i = 0; i < values.length; i++) {
    var o = null, k;
    for (k = 0; k < opts.length && !o; k++) { if (!opts[k].hidden && opts[k].label === values[i]) { o = opts[k]; } }
    for (k = 0; k < opts.length && !o; k++) { if (!opts[k].hidden && opts[k].value === values[i]) { o = opts[k]; } }
    if (!o) { return {status: "unknown", index: i}; }
    if (o.matches(":disabled")) { return {status: "option_disabled", index: i}; }
    picked.push(o);
  }
  if (this.multiple) {
    for (k = 0; k < opts.length; k++) { opts[k].selected = picked.indexOf(opts[k]) >= 0; }
  } else {
    picked[0].selected = true;
  }
  this.dispatchEvent(new Event("input", {bubbles: true, composed: true}));
  this.dispatchEvent(new Event("change", {bubbles: true}));
  return {status: "ok", index: -1};
}`
)

// callFixed resolves backend node id in an isolated world of frame (the page's main frame when
// frame is "") and calls fn (fnFocused or fnEmpty) on it.
func (h *Host) callFixed(ctx context.Context, b *cdp.Browser, s *session, id int64, frame, fn string) (bool, error) {
	var v bool
	err := h.callFixedWith(ctx, b, s, id, frame, fn, nil, &v)
	return v, err
}

// callOnDocument is callFixed on the main frame's document (this is the Document).
func (h *Host) callOnDocument(ctx context.Context, b *cdp.Browser, s *session, fn string) (bool, error) {
	var doc struct {
		Root struct {
			BackendNodeID int64 `json:"backendNodeId"`
		} `json:"root"`
	}
	if err := b.Call(ctx, s.sid, "DOM.getDocument", map[string]any{"depth": 0}, &doc); err != nil {
		return false, h.browserErr(err)
	}
	return h.callFixed(ctx, b, s, doc.Root.BackendNodeID, "", fn)
}

// callFixedWith is callFixed with arguments (JSON values passed to fn as call arguments, never
// spliced into its source) and fn's returned value decoded into out. A function that threw
// is an error. s.mu is held.
//
// The isolated world and the node's remote object are kept for the session's next calls in the
// same frame (fixedWorld): a navigation destroys the world, and a call that fails in a kept one
// is made once more in a new world, so what a kept world saves is two round trips a call,
// never a check.
func (h *Host) callFixedWith(ctx context.Context, b *cdp.Browser, s *session, id int64, frame, fn string, args []any, out any) error {
	if frame == "" {
		doc, err := h.documentID(ctx, b, s)
		if err != nil {
			return err
		}
		frame, _, _ = strings.Cut(doc, "/")
	}
	call := map[string]any{"functionDeclaration": fn, "returnByValue": true}
	if len(args) > 0 {
		cargs := make([]map[string]any, len(args))
		for i, a := range args {
			cargs[i] = map[string]any{"value": a}
		}
		call["arguments"] = cargs
	}
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct{} `json:"exceptionDetails"`
	}
	for kept := s.world.in(s.sid, frame); ; kept = false {
		obj, err := h.fixedObject(ctx, b, s, id, frame)
		if err == nil {
			call["objectId"] = obj
			err = b.Call(ctx, s.sid, "Runtime.callFunctionOn", call, &r)
			if err != nil {
				err = h.browserErr(err)
			}
		}
		if err != nil {
			s.world = fixedWorld{}
			if kept && b.SessionErr(s.sid) == nil && ctx.Err() == nil {
				continue // the kept world may have gone with a navigation: once more, new
			}
			return err
		}
		break
	}
	if r.Exception != nil {
		return errors.New("a fixed function of the host threw")
	}
	if len(r.Result.Value) == 0 {
		return errors.New("a fixed function of the host returned nothing")
	}
	if err := json.Unmarshal(r.Result.Value, out); err != nil {
		return fmt.Errorf("a fixed function's result: %w", err)
	}
	return nil
}

// fixedWorld is the isolated world in which the host's fixed functions last ran on a session's
// page (its target session and frame, and the execution context) and the remote objects of the
// nodes resolved there. Guarded by the session's verb lock. The page's scripts cannot reach
// it; the host's own functions change nothing in it.
type fixedWorld struct {
	sid, frame string
	context    int
	nodes      map[int64]string // backend node id → remote object id
}

// maxWorldNodes bounds the objects a kept world remembers.
const maxWorldNodes = 64

// in reports whether the world is kept for frame of the page sid.
func (w *fixedWorld) in(sid, frame string) bool {
	return w.context != 0 && w.sid == sid && w.frame == frame
}

// fixedObject is the remote object of backend node id in the session's isolated world of
// frame: the kept ones when they are of that frame, else a new world is made.
func (h *Host) fixedObject(ctx context.Context, b *cdp.Browser, s *session, id int64, frame string) (string, error) {
	w := &s.world
	if !w.in(s.sid, frame) {
		var world struct {
			ID int `json:"executionContextId"`
		}
		if err := b.Call(ctx, s.sid, "Page.createIsolatedWorld", map[string]any{"frameId": frame, "worldName": "headless-check"}, &world); err != nil {
			return "", h.browserErr(err)
		}
		*w = fixedWorld{sid: s.sid, frame: frame, context: world.ID, nodes: map[int64]string{}}
	}
	if obj, ok := w.nodes[id]; ok {
		return obj, nil
	}
	var node struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err := b.Call(ctx, s.sid, "DOM.resolveNode", map[string]any{"backendNodeId": id, "executionContextId": w.context}, &node); err != nil {
		return "", h.nodeErr(err)
	}
	if len(w.nodes) >= maxWorldNodes {
		clear(w.nodes)
	}
	w.nodes[id] = node.Object.ObjectID
	return node.Object.ObjectID, nil
}

// endAttempt runs after every attempt that typed a secret (whatever its outcome): if the page
// may still show the document the secret was typed into, the typed fields are emptied, or,
// when that cannot be done in time, the page is discarded; ev says which. It returns err with
// that stated in its message.
func (h *Host) endAttempt(ctx context.Context, b *cdp.Browser, s *session, ev *control.Evidence, err error) error {
	defer h.forgetSubmission(ctx, b, s)
	var note string
	switch h.clearTyped(ctx, b, s) {
	case nothingLeft:
		return err
	case emptied:
		ev.Cleared = true
		note = "; the typed password was cleared from the page"
	case notEmptied:
		h.discardPage(ctx, b, s)
		ev.PageDiscarded = true
		if ev.URLAfter == "" {
			ev.URLAfter = "about:blank"
		}
		note = "; the page did not let the host empty the field it typed into in time, so the page was discarded: the session now shows a blank page"
	}
	if err == nil {
		return nil
	}
	out := *wireForm(err)
	out.Message += note
	return &out
}

// markHistory records the history entry the session shows before the host types a secret
// (for forgetSubmission); an entry it cannot name leaves every entry suspect.
func (s *session) markHistory(ctx context.Context, h *Host, b *cdp.Browser) {
	s.typedEntry = -1
	if hist, err := h.history(ctx, b, s); err == nil && hist.Current >= 0 && hist.Current < len(hist.Entries) {
		s.typedEntry = hist.Entries[hist.Current].ID
	}
}

// forgetSubmission runs after every attempt that typed a secret: a history entry the attempt
// made that is the answer to a form submission itself (not a redirect's target: its URL is the
// one the form asked for) holds the submission's body, the secret in it. The entry shown is
// turned into a plain one (fnForgetPost); an earlier one (the page moved on by itself), or
// one that could not be turned, has the whole history dropped (Page.resetNavigationHistory).
// It runs even when ctx is done, within ClearWait.
func (h *Host) forgetSubmission(ctx context.Context, b *cdp.Browser, s *session) {
	mark := s.typedEntry
	s.typedEntry = 0
	if mark == 0 || b.SessionErr(s.sid) != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ClearWait)
	defer cancel()
	hist, err := h.history(ctx, b, s)
	if err != nil {
		h.o.Log.Warn("history after a submit could not be read", "session", s.name, "code", wire.CodeOf(err))
		return
	}
	first := 0 // the entries after the mark (all of them when the mark is gone)
	for k, e := range hist.Entries {
		if e.ID == mark {
			first = k + 1
		}
	}
	for k := first; k < len(hist.Entries); k++ {
		if e := hist.Entries[k]; e.Transition != "form_submit" || e.URL != e.TypedURL {
			continue
		}
		if k == hist.Current && h.forgetPost(ctx, b, s) == nil {
			continue
		}
		err := b.Call(ctx, s.sid, "Page.resetNavigationHistory", nil, nil)
		h.o.Log.Info("history dropped: it held a submission the host typed a secret into", "session", s.name, "ok", err == nil)
		return
	}
}

// forgetPost turns the history entry the session shows into one without a form submission's
// body, with the host's fixed fnForgetPost on the main frame's document.
func (h *Host) forgetPost(ctx context.Context, b *cdp.Browser, s *session) error {
	ok, err := h.callOnDocument(ctx, b, s, fnForgetPost)
	if err == nil && !ok {
		err = errors.New("the entry was not replaced")
	}
	return err
}
