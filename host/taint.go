package host

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/cdp"
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
//     result says so (Evidence.Cleared).
//   - The back/forward cache is off (package cdp), so no history step brings back a document
//     with a filled field.

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
	doc, err := h.documentID(ctx, b, s)
	if err != nil {
		return "", snapshot.Outline{}, nil, err
	}
	raw, err := captureSnapshot(ctx, b, s)
	if err != nil {
		return doc, snapshot.Outline{}, nil, h.browserErr(err)
	}
	defer clear(raw)
	out, refs, err := snapshot.Build(raw, snapshot.Options{Tainted: s.taintOf(doc)})
	if err != nil {
		return doc, snapshot.Outline{}, nil, fmt.Errorf("snapshot: %w", err)
	}
	return doc, out, refs, nil
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
	return &wire.Error{Code: wire.CodeSecretOnPage,
		Message: "a field the host typed a password into still holds a value on this page (the page put it back after the host cleared it)",
		Hint:    "navigate the session elsewhere ('headless visit URL') first; screenshots are refused while a typed password is on the page"}
}

// ClearWait bounds the clearing of typed fields at the end of an attempt.
const ClearWait = 10 * time.Second

// clearTyped empties the tainted fields of the document now shown, if it is still the one they
// were typed into, and reports whether it did anything and whether every field is now empty.
// It runs even when ctx is done (the caller went away: the page must not keep the secret).
func (h *Host) clearTyped(ctx context.Context, b *cdp.Browser, s *session) (did, empty bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ClearWait)
	defer cancel()
	doc, err := h.documentID(ctx, b, s)
	if err != nil || len(s.taintOf(doc)) == 0 {
		return false, true // navigated away (or the page is gone): nothing of it is left
	}
	empty = true
	for id, frame := range s.taint {
		if !h.clearField(ctx, b, s, id, frame) {
			empty = false
		}
	}
	if left, err := h.secretOnPage(ctx, b, s); err != nil || left {
		empty = false
	}
	h.o.Log.Info("typed fields cleared", "session", s.name, "fields", len(s.taint), "empty", empty)
	return true, empty
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
	obj, err := h.isolatedNode(ctx, b, s, id, frame)
	if err != nil {
		return false
	}
	var r struct {
		Result struct {
			Value bool `json:"value"`
		} `json:"result"`
	}
	err = b.Call(ctx, s.sid, "Runtime.callFunctionOn", map[string]any{
		"objectId": obj,
		"functionDeclaration": `function() {
  this.setAttribute("autocomplete", "off");
  if (typeof this.value === "string" && this.value !== "") {
    this.value = "";
    this.dispatchEvent(new Event("input", {bubbles: true}));
    this.dispatchEvent(new Event("change", {bubbles: true}));
  }
  return this.value === "";
}`,
		"returnByValue": true,
	}, &r)
	return err == nil && r.Result.Value
}

// isolatedNode resolves backend node id in an isolated world of frame (the page's main frame
// when frame is "") and returns its remote object id.
func (h *Host) isolatedNode(ctx context.Context, b *cdp.Browser, s *session, id int64, frame string) (string, error) {
	if frame == "" {
		doc, err := h.documentID(ctx, b, s)
		if err != nil {
			return "", err
		}
		frame, _, _ = strings.Cut(doc, "/")
	}
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
		return "", nodeErr(err)
	}
	return node.Object.ObjectID, nil
}

// endAttempt runs after every attempt that typed a secret (whatever its outcome): if the page
// still shows the document the secret was typed into, the typed fields are emptied, and ev says
// so. It returns err with the clearing stated in its message.
func (h *Host) endAttempt(ctx context.Context, b *cdp.Browser, s *session, ev *Evidence, err error) error {
	did, empty := h.clearTyped(ctx, b, s)
	ev.Cleared = did && empty
	ev.SecretOnPage = did && !empty
	if err == nil || !did {
		return err
	}
	we := ToWire(err)
	out := *we
	if empty {
		out.Message += "; the typed password was cleared from the page"
	} else {
		out.Message += "; the page keeps a typed password that the host could not clear: snapshots withhold it and screenshots are refused until the session leaves this page"
	}
	return &out
}
