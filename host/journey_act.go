package host

import (
	"context"
	"fmt"
	"strings"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/journey"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/wire"
)

// errJourneySecretFill refuses a journey's fill into a field the outline hides the value of.
func errJourneySecretFill() error {
	return wire.Errorf(wire.CodeDirectFillOff, "the target is a password or secret field, or one the host typed a password into; a journey never types into one").
		WithHint("sign in with a login action (an alias, approved by the person); a journey never fills a password or secret field, whatever allow_direct_password_fill says")
}

// fill types value into the text field of t, replacing what it holds (as the fill verb does),
// never into a password or secret-looking field or one the host typed a password into.
func (r *jrun) fill(ctx context.Context, t match, value string) error {
	h, b, s := r.h, r.b, r.s
	n := t.node
	if n.Secret {
		return errJourneySecretFill()
	}
	if n.Kind != "input" && n.Kind != "textarea" {
		kind := n.Kind
		if kind == "" {
			kind = "element that is no field"
		}
		return wire.Errorf(wire.CodeNotInteractable, "the target is a %s, not a text field", kind)
	}
	switch n.Type {
	case "checkbox", "radio", "file", "range", "color", "submit", "image", "reset", "button":
		return wire.Errorf(wire.CodeNotInteractable, "the target is an input of type %s, which takes no typed text", n.Type)
	}
	if n.Disabled {
		return wire.Errorf(wire.CodeNotInteractable, "the target field is disabled")
	}
	if err := h.refuseWhileSecret(ctx, b, s); err != nil {
		return err
	}
	if err := b.Call(ctx, s.sid, "DOM.focus", map[string]any{"backendNodeId": t.id}, nil); err != nil {
		return h.nodeErr(err)
	}
	if err := selectAll(ctx, b, s); err != nil {
		return h.browserErr(err)
	}
	if value == "" {
		if err := pressKey(ctx, b, s, "Delete"); err != nil {
			return h.browserErr(err)
		}
		return nil
	}
	if err := b.Call(ctx, s.sid, "Input.insertText", map[string]any{"text": value}, nil); err != nil {
		return h.browserErr(err)
	}
	return nil
}

// focus gives t the focus and checks with the host's fixed fnFocused that it has it.
func (r *jrun) focus(ctx context.Context, t match) error {
	h, b, s := r.h, r.b, r.s
	if err := b.Call(ctx, s.sid, "DOM.focus", map[string]any{"backendNodeId": t.id}, nil); err != nil {
		return wire.Errorf(wire.CodeNotInteractable, "the target cannot take the focus")
	}
	ok, err := h.callFixed(ctx, b, s, t.id, "", fnFocused)
	if err != nil {
		return err
	}
	if !ok {
		return wire.Errorf(wire.CodeNotInteractable, "the target did not keep the focus; no key was pressed")
	}
	return nil
}

// selectOptions selects values in the native select of t with the select verb's own fixed
// function (selectNode), bounded as that verb bounds them.
func (r *jrun) selectOptions(ctx context.Context, t match, a journey.Action) error {
	p := control.SelectParams{Ref: describeTarget(a), Values: a.SelectValues()}
	if err := checkSelect(p); err != nil {
		return err
	}
	return r.h.selectNode(ctx, r.b, r.s, t.target(), p)
}

// route is the path of u, without its query or fragment, prefixed with u's origin when that
// is not the plan's. A journey's evidence never carries a query string.
func (r *jrun) route(u, pageOrigin string) string {
	path := withoutQuery(u)
	if i := strings.Index(path, "://"); i >= 0 {
		if j := strings.IndexByte(path[i+3:], '/'); j >= 0 {
			path = path[i+3+j:]
		} else {
			path = "/"
		}
	}
	if o, err := origin.Canonical(pageOrigin); err != nil || o != r.plan.Origin {
		if pageOrigin == "" || pageOrigin == "null" {
			return clip.Text(withoutQuery(u), 300)
		}
		return clip.Text(pageOrigin+path, 300)
	}
	return clip.Text(path, 300)
}

// wait waits until a's target is visible (with not: until none is), or until the page is at
// a's path on the plan's origin; the action's timeout passing is the page's failure
// (TIMEOUT).
func (r *jrun) wait(ctx context.Context, a journey.Action, ev *journey.Evidence) (int64, error) {
	var id int64
	err := r.until(ctx, a.Timeout(), func(ctx context.Context, l *look) (bool, error) {
		if a.Path != "" {
			got := r.route(l.out.URL, l.out.Origin)
			if got == a.Path {
				ev.Observed = ""
				return true, nil
			}
			ev.Observed = "route " + got
			return false, journey.Failed(wire.Errorf(wire.CodeTimeout, "the page did not reach %s within %s", a.Path, a.Timeout()))
		}
		ms, _, err := r.matches(ctx, l, a)
		if err != nil {
			return fatal(err), err
		}
		n := len(ms)
		if a.Nth != nil {
			n = max(0, len(ms)-*a.Nth)
		}
		switch {
		case a.Not && n == 0:
			ev.Observed = ""
			return true, nil
		case !a.Not && n > 0:
			id = ms[len(ms)-n].id
			ev.Observed = ""
			return true, nil
		case a.Not:
			ev.Observed = fmt.Sprintf("%d visible", len(ms))
			return false, journey.Failed(wire.Errorf(wire.CodeTimeout, "%s was still visible after %s", describeTarget(a), a.Timeout()))
		}
		ev.Observed = "no visible match"
		return false, journey.Failed(wire.Errorf(wire.CodeTimeout, "%s was not visible within %s", describeTarget(a), a.Timeout()))
	})
	return id, err
}

// assert waits until a's assertion holds (its timeout at most: then ASSERTION_FAILED, with
// what the page showed in ev.Observed). Texts and values are read from the taint-aware
// snapshot; a value assertion on a secret field is SECRET_FIELD at once.
func (r *jrun) assert(ctx context.Context, a journey.Action, ev *journey.Evidence) (int64, error) {
	var id int64
	failed := func(format string, args ...any) error {
		return wire.Errorf(wire.CodeAssertionFailed, "%s: %s (within %s)", assertion(a), fmt.Sprintf(format, args...), a.Timeout())
	}
	err := r.until(ctx, a.Timeout(), func(ctx context.Context, l *look) (bool, error) {
		if a.Assertion == journey.AssertRoute {
			got := r.route(l.out.URL, l.out.Origin)
			if got == a.Path {
				ev.Observed = ""
				return true, nil
			}
			ev.Observed = "route " + got
			return false, failed("the page is at %s", got)
		}
		ms, more, err := r.matches(ctx, l, a)
		if err != nil {
			return fatal(err), err
		}
		switch a.Assertion {
		case journey.AssertVisible:
			if (a.Nth == nil && len(ms) > 0) || (a.Nth != nil && *a.Nth < len(ms)) {
				id = ms[0].id
				if a.Nth != nil {
					id = ms[*a.Nth].id
				}
				ev.Observed = ""
				return true, nil
			}
			ev.Observed = fmt.Sprintf("%d visible", len(ms))
			return false, failed("no visible match")
		case journey.AssertHidden:
			if len(ms) == 0 {
				ev.Observed = ""
				return true, nil
			}
			id = ms[0].id
			ev.Observed = fmt.Sprintf("%d visible", len(ms))
			return false, failed("%d visible", len(ms))
		case journey.AssertCount:
			if len(ms) == *a.Count && !more {
				ev.Observed = ""
				return true, nil
			}
			ev.Observed = fmt.Sprintf("%d visible", len(ms))
			if more {
				ev.Observed = fmt.Sprintf("more than %d match", journeyMatches)
			}
			return false, failed("%s", ev.Observed)
		}
		m, err := pick(ms, a)
		if err != nil {
			ev.Observed = fmt.Sprintf("%d visible", len(ms))
			return wire.CodeOf(err) == wire.CodeTargetAmbiguous, err
		}
		id = m.id
		n := m.node
		ok, seen := false, ""
		switch a.Assertion {
		case journey.AssertText:
			ok, seen = compare(n.Text, a.Value, a.Match), fmt.Sprintf("text %q", clip.Text(n.Text, journeyObserved))
		case journey.AssertValue:
			if n.Secret {
				return true, wire.Errorf(wire.CodeSecretField, "the target is a password or secret field, or one the host typed a password into: its value is never read")
			}
			if n.Kind != "input" && n.Kind != "textarea" && n.Kind != "select" {
				return true, wire.Errorf(wire.CodeNotInteractable, "the target is no field: it has no value (assert its text)")
			}
			ok, seen = compare(n.Value, a.Value, a.Match), fmt.Sprintf("value %q", clip.Text(n.Value, journeyObserved))
		case journey.AssertEnabled:
			ok, seen = n.Disabled == a.Not, map[bool]string{true: "disabled", false: "enabled"}[n.Disabled]
		case journey.AssertChecked:
			ok, seen = n.Checked != a.Not, map[bool]string{true: "checked", false: "not checked"}[n.Checked]
		}
		if ok {
			ev.Observed = ""
			return true, nil
		}
		ev.Observed = seen
		return false, failed("%s", seen)
	})
	return id, err
}

// assertion names a's assertion for a message (the plan's own words, bounded).
func assertion(a journey.Action) string {
	s := a.Assertion
	if a.Not {
		s = "not " + s
	}
	switch a.Assertion {
	case journey.AssertRoute:
		return fmt.Sprintf("route %s", a.Path)
	case journey.AssertText, journey.AssertValue:
		m := a.Match
		if m == "" {
			m = "exact"
		}
		return fmt.Sprintf("%s %s %q of %s", s, m, clip.Text(a.Value, 60), describeTarget(a))
	case journey.AssertCount:
		return fmt.Sprintf("count %d of %s", *a.Count, describeTarget(a))
	}
	return fmt.Sprintf("%s %s", s, describeTarget(a))
}

// compare is a text or value assertion's test: the whole text (runs of white space as one)
// or a part of it, with case.
func compare(got, want, how string) bool {
	if how == "contains" {
		return strings.Contains(norm(got), norm(want))
	}
	return norm(got) == norm(want)
}
