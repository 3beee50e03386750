package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/journey"
	"github.com/headless-dev/headless/internal/wire"
)

// How a journey finds its targets: never by running anything of the plan's.
//
//   - role (and name): Accessibility.queryAXTree on the top document, Chromium's own
//     computed roles and names; ignored nodes are skipped.
//   - text: the host's own outline of the page (snapshot.Build with the session's taint), so
//     a text can only match what a snapshot would show.
//   - selector: DOM.querySelectorAll on the top document (the selector was checked at decode
//     time: journey.CheckSelector).
//
// Then every candidate is described from the same look's DOMSnapshot (snapshot.Describe) and
// only visible ones in the top document with a box count. Names and texts match whole
// (ignoring case and runs of white space) before they match in part; with exact, only whole
// and with case.

// look is one look at the run's page: its document, the raw snapshot (zeroed by close: it
// holds every field's value) and the outline built from it with the session's taint.
type look struct {
	doc   string
	raw   []byte
	out   snapshot.Outline
	refs  map[string]snapshot.Target
	taint map[int64]bool
}

func (l *look) close() { clear(l.raw) }

func (l *look) describe(ids []int64) (map[int64]snapshot.Node, error) {
	return snapshot.Describe(l.raw, ids, snapshot.Options{Tainted: l.taint})
}

// look takes one look at the page. While a field the host typed a password into holds a
// value again, there is no look: SECRET_ON_PAGE (every check of a journey is then an oracle
// for it).
func (r *jrun) look(ctx context.Context) (*look, error) {
	h, b, s := r.h, r.b, r.s
	doc, err := h.documentID(ctx, b, s)
	if err != nil {
		return nil, err
	}
	raw, err := captureSnapshot(ctx, b, s)
	if err != nil {
		return nil, h.browserErr(err)
	}
	l := &look{doc: doc, raw: raw, taint: s.taintOf(doc)}
	if len(l.taint) > 0 {
		held, err := snapshot.HoldsValue(raw, l.taint)
		if err != nil || held {
			l.close()
			if err != nil {
				return nil, fmt.Errorf("snapshot: %w", err)
			}
			return nil, errSecretOnPage()
		}
	}
	l.out, l.refs, err = snapshot.Build(raw, snapshot.Options{Tainted: l.taint, Echo: h.echoOption()})
	if errors.Is(err, snapshot.ErrEchoed) {
		l.close()
		return nil, h.echoed(ctx, b, s, "journey")
	}
	if err != nil {
		l.close()
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return l, nil
}

// match is one visible element a target matched.
type match struct {
	id   int64
	node snapshot.Node
}

func (m match) target() snapshot.Target {
	return snapshot.Target{BackendNodeID: m.id, Kind: m.node.Kind, Type: m.node.Type, Secret: m.node.Secret}
}

// visible is the rule of every match: rendered, in the top document, with a box.
func visibleNode(n snapshot.Node) bool {
	return n.Found && n.Top && n.Visible && n.Rect != nil && n.Rect.Width > 0 && n.Rect.Height > 0
}

// matches lists the visible elements a's target matches in l, in page order; more says that
// more candidates than journeyMatches matched (they were not looked at).
func (r *jrun) matches(ctx context.Context, l *look, a journey.Action) (ms []match, more bool, err error) {
	ids, more, err := r.candidates(ctx, l, a)
	if err != nil || len(ids) == 0 {
		return nil, more, err
	}
	nodes, err := l.describe(ids)
	if err != nil {
		return nil, more, fmt.Errorf("snapshot: %w", err)
	}
	for _, id := range ids {
		if n := nodes[id]; visibleNode(n) {
			ms = append(ms, match{id, n})
		}
	}
	return ms, more, nil
}

// candidates lists the backend node ids a's target names, before any visibility check.
func (r *jrun) candidates(ctx context.Context, l *look, a journey.Action) ([]int64, bool, error) {
	switch {
	case a.Text != "":
		return textCandidates(l, a), false, nil
	case a.Role != "":
		return r.roleCandidates(ctx, a)
	case a.Selector != "":
		return r.selectorCandidates(ctx, a.Selector)
	}
	return nil, false, wire.Errorf(wire.CodeInternal, "the action has no target")
}

// norm collapses runs of white space and trims.
func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// rank is how well got matches want: 0 whole (exact: with case; else ignoring case), 1 in
// part (not with exact), -1 not at all.
func rank(got, want string, exact bool) int {
	got, want = norm(got), norm(want)
	switch {
	case exact:
		if got == want {
			return 0
		}
	case strings.EqualFold(got, want):
		return 0
	case strings.Contains(strings.ToLower(got), strings.ToLower(want)):
		return 1
	}
	return -1
}

// best keeps, in page order, the candidates of the best rank found.
func best(ids []int64, ranks []int) []int64 {
	top := -1
	for _, k := range ranks {
		if k >= 0 && (top < 0 || k < top) {
			top = k
		}
	}
	var out []int64
	for i, id := range ids {
		if ranks[i] == top && top >= 0 {
			out = append(out, id)
		}
	}
	return out
}

func textCandidates(l *look, a journey.Action) []int64 {
	var ids []int64
	var ranks []int
	for _, e := range l.out.Elements {
		if e.Frame != "" || e.Kind == "form" || e.Kind == "iframe" || e.Text == "" {
			continue
		}
		if k := rank(e.Text, a.Text, a.Exact); k >= 0 {
			ids = append(ids, l.refs[e.Ref].BackendNodeID)
			ranks = append(ranks, k)
		}
	}
	return best(ids, ranks)
}

// documentRoot is the top document's node (DOM.getDocument, depth 0).
func (r *jrun) documentRoot(ctx context.Context) (nodeID, backendID int64, err error) {
	var d struct {
		Root struct {
			NodeID    int64 `json:"nodeId"`
			BackendID int64 `json:"backendNodeId"`
		} `json:"root"`
	}
	if err := r.b.Call(ctx, r.s.sid, "DOM.getDocument", map[string]any{"depth": 0}, &d); err != nil {
		return 0, 0, r.h.browserErr(err)
	}
	return d.Root.NodeID, d.Root.BackendID, nil
}

func (r *jrun) roleCandidates(ctx context.Context, a journey.Action) ([]int64, bool, error) {
	_, root, err := r.documentRoot(ctx)
	if err != nil {
		return nil, false, err
	}
	q := map[string]any{"backendNodeId": root, "role": a.Role}
	if a.Exact && a.Name != "" {
		q["accessibleName"] = a.Name
	}
	var res struct {
		Nodes []struct {
			Ignored bool `json:"ignored"`
			Name    *struct {
				Value any `json:"value"`
			} `json:"name"`
			BackendID int64 `json:"backendDOMNodeId"`
		} `json:"nodes"`
	}
	if err := r.b.Call(ctx, r.s.sid, "Accessibility.queryAXTree", q, &res); err != nil {
		return nil, false, r.h.browserErr(err)
	}
	var ids []int64
	var ranks []int
	seen := map[int64]bool{}
	more := false
	for _, n := range res.Nodes {
		if n.Ignored || n.BackendID == 0 || seen[n.BackendID] {
			continue
		}
		k := 0
		if a.Name != "" {
			name := ""
			if n.Name != nil {
				name, _ = n.Name.Value.(string)
			}
			if k = rank(name, a.Name, a.Exact); k < 0 {
				continue
			}
		}
		if len(ids) == journeyMatches {
			more = true
			break
		}
		seen[n.BackendID] = true
		ids = append(ids, n.BackendID)
		ranks = append(ranks, k)
	}
	return best(ids, ranks), more, nil
}

func (r *jrun) selectorCandidates(ctx context.Context, sel string) ([]int64, bool, error) {
	root, _, err := r.documentRoot(ctx)
	if err != nil {
		return nil, false, err
	}
	var q struct {
		NodeIDs []int64 `json:"nodeIds"`
	}
	if err := r.b.Call(ctx, r.s.sid, "DOM.querySelectorAll", map[string]any{"nodeId": root, "selector": sel}, &q); err != nil {
		var ce *cdp.Error
		if errors.As(err, &ce) {
			return nil, false, wire.Errorf(wire.CodePlanInvalid, "journey plan: selector %q is not a CSS selector the page accepts", clip.Text(sel, 80))
		}
		return nil, false, r.h.browserErr(err)
	}
	more := len(q.NodeIDs) > journeyMatches
	if more {
		q.NodeIDs = q.NodeIDs[:journeyMatches]
	}
	ids := make([]int64, 0, len(q.NodeIDs))
	for _, n := range q.NodeIDs {
		var d struct {
			Node struct {
				BackendID int64 `json:"backendNodeId"`
			} `json:"node"`
		}
		if err := r.b.Call(ctx, r.s.sid, "DOM.describeNode", map[string]any{"nodeId": n}, &d); err != nil {
			continue // gone meanwhile
		}
		ids = append(ids, d.Node.BackendID)
	}
	return ids, more, nil
}

// pick is the one match an action acts on: the nth, else the only one.
func pick(ms []match, a journey.Action) (match, error) {
	switch {
	case a.Nth != nil && *a.Nth < len(ms):
		return ms[*a.Nth], nil
	case a.Nth != nil:
		return match{}, wire.Errorf(wire.CodeTargetNotFound, "%s: %d visible matches, no match number %d (nth counts from 0)", describeTarget(a), len(ms), *a.Nth)
	case len(ms) == 1:
		return ms[0], nil
	case len(ms) == 0:
		return match{}, wire.Errorf(wire.CodeTargetNotFound, "%s: no visible element matches", describeTarget(a))
	}
	return match{}, wire.Errorf(wire.CodeTargetAmbiguous, "%s: %d visible elements match", describeTarget(a), len(ms))
}

// describeTarget names a's target for a message (the plan's own words, bounded).
func describeTarget(a journey.Action) string {
	switch {
	case a.Role != "" && a.Name != "":
		return fmt.Sprintf("role %s named %q", a.Role, clip.Text(a.Name, 60))
	case a.Role != "":
		return "role " + a.Role
	case a.Text != "":
		return fmt.Sprintf("text %q", clip.Text(a.Text, 60))
	}
	return fmt.Sprintf("selector %q", clip.Text(a.Selector, 60))
}

// one waits (the action's timeout at most) until a's target matches exactly one visible
// element (or has an nth) and returns it. Several matches without nth answer at once.
func (r *jrun) one(ctx context.Context, a journey.Action) (match, error) {
	var m match
	err := r.until(ctx, a.Timeout(), func(ctx context.Context, l *look) (bool, error) {
		ms, _, err := r.matches(ctx, l, a)
		if err != nil {
			return fatal(err), err
		}
		got, err := pick(ms, a)
		if err != nil {
			return wire.CodeOf(err) == wire.CodeTargetAmbiguous, err
		}
		m = got
		return true, nil
	})
	return m, err
}

// fatal says whether an error of a check ends the wait at once: everything but the page not
// (yet) showing what is waited for.
func fatal(err error) bool {
	switch wire.CodeOf(err) {
	case wire.CodeTargetNotFound, wire.CodeAssertionFailed, wire.CodeTimeout, "":
		return false
	}
	return true
}

// until takes looks at the page until check says it is done, for d at most (within ctx).
// check answers done (its error, if any, is the answer) or not yet (its error is what to
// answer if the time runs out). A look that fails is retried (a page between documents),
// except SECRET_ON_PAGE and BROWSER_CRASHED; ctx ending is its own answer (the run's why
// turns it into BUDGET_EXCEEDED or CANCELLED).
func (r *jrun) until(ctx context.Context, d time.Duration, check func(context.Context, *look) (bool, error)) error {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var last error
	for {
		l, err := r.look(wctx)
		switch {
		case err == nil:
			done, cerr := check(wctx, l)
			l.close()
			if done {
				return cerr
			}
			if wctx.Err() == nil || last == nil {
				last = cerr
			}
		case wire.CodeOf(err) == wire.CodeSecretOnPage || wire.CodeOf(err) == wire.CodeBrowserCrashed:
			return err
		case wctx.Err() == nil || last == nil:
			last = err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if last == nil {
				last = wire.Errorf(wire.CodeTimeout, "nothing to look at within %s", d)
			}
			return last
		case <-time.After(journeyPoll):
		}
	}
}
