package host

import (
	"context"
	"fmt"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/wire"
)

// Select selects options of the native <select> of p.Ref, each named by its value or label,
// replacing the selection, with the input and change events of a person's choice. It runs the
// host's fixed fnSelect in an isolated world with the values as its argument: no caller script,
// and nothing read from the page comes back but which value did not match (one of the
// caller's own). A change handler may navigate: the result says where the session is.
func (h *Host) Select(ctx context.Context, p control.SelectParams) (control.SelectResult, error) {
	if err := checkSelect(p); err != nil {
		return control.SelectResult{}, err
	}
	var page control.PageResult
	err := h.onElement(ctx, p.Session, p.Ref, func(b *cdp.Browser, s *session, t snapshot.Target) error {
		doc, err := h.documentID(ctx, b, s)
		if err != nil {
			return err
		}
		t0 := time.Now()
		_, seq := s.openDialog()
		dctx, cancel := s.untilDialog(ctx, seq) // a change handler's dialog ends the waits (dialogs.go)
		defer cancel()
		if err := h.selectNode(dctx, b, s, t, p); err != nil && context.Cause(dctx) != errDialogOpened {
			return err
		}
		s.settle(dctx)
		if s.dialogHeld() {
			clear(s.refs)
		} else if now, err := h.documentID(ctx, b, s); err != nil || now != doc {
			clear(s.refs) // the change handler navigated: the refs died with the document
		}
		if err := h.navErr(s, t0); err != nil {
			return err // the change handler tried to leave the allowlist
		}
		h.awaitClosing(dctx, b, s) // the change handler closed the window
		page, err = h.pageResult(ctx, b, s)
		return err
	})
	if err != nil {
		return control.SelectResult{}, err
	}
	return control.SelectResult{PageResult: page, Ref: p.Ref, Selected: p.Values}, nil
}

// selectNode selects p.Values in the native select of t with the fixed fnSelect (select, and
// a journey's select action, after the caller's checkSelect and refuseWhileSecret); p.Ref
// names the select in errors. The events are drained first: the caller settles after it.
func (h *Host) selectNode(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target, p control.SelectParams) error {
	if t.Kind != "select" {
		return wire.Errorf(wire.CodeNotASelect, "ref %s is a %s, not a select", p.Ref, t.Kind)
	}
	// A person's choice starts with the focus on the select (a disabled one takes none: the
	// fixed function says so).
	b.Call(ctx, s.sid, "DOM.focus", map[string]any{"backendNodeId": t.BackendNodeID}, nil)
	s.drain()
	var r struct {
		Status string `json:"status"`
		Index  int    `json:"index"`
	}
	if err := h.callFixedWith(ctx, b, s, t.BackendNodeID, t.FrameID, fnSelect, []any{p.Values}, &r); err != nil {
		return err
	}
	return selectErr(p, r.Status, r.Index)
}

// checkSelect bounds select's values: one at least, at most MaxSelectValues of at most
// MaxSelectValue bytes each.
func checkSelect(p control.SelectParams) error {
	if len(p.Values) == 0 {
		return wire.Errorf(wire.CodeInvalidArgument, "select needs a value")
	}
	if len(p.Values) > control.MaxSelectValues {
		return wire.Errorf(wire.CodeInvalidArgument, "select takes at most %d values", control.MaxSelectValues)
	}
	for i, v := range p.Values {
		if len(v) > control.MaxSelectValue {
			return wire.Errorf(wire.CodeInvalidArgument, "select value %d is longer than %d bytes", i+1, control.MaxSelectValue)
		}
	}
	return nil
}

// selectErr is the error of fnSelect's answer: nil for "ok". What it names is the caller's own:
// the ref and, for a value, the value as given (bounded), never anything of the page's.
func selectErr(p control.SelectParams, status string, index int) error {
	value := func() string {
		if index < 0 || index >= len(p.Values) {
			return "?"
		}
		return fmt.Sprintf("%q", clip.Text(p.Values[index], 100))
	}
	switch status {
	case "ok":
		return nil
	case "not_select":
		return wire.Errorf(wire.CodeNotASelect, "ref %s is not a select", p.Ref)
	case "gone":
		return wire.Errorf(wire.CodeRefStale, "the element is no longer in the page")
	case "disabled":
		return wire.Errorf(wire.CodeNotInteractable, "the select of ref %s is disabled", p.Ref)
	case "not_multiple":
		return wire.Errorf(wire.CodeInvalidArgument, "the select of ref %s takes one option; %d values were given", p.Ref, len(p.Values))
	case "unknown":
		return wire.Errorf(wire.CodeOptionUnknown, "no option of ref %s has the value or label %s", p.Ref, value())
	case "option_disabled":
		return wire.Errorf(wire.CodeNotInteractable, "the option %s of ref %s is disabled", value(), p.Ref)
	}
	return fmt.Errorf("select: unexpected answer %q from the fixed function", clip.Text(status, 32))
}
