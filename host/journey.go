package host

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/journey"
	"github.com/headless-dev/headless/internal/wire"
)

// Journeys (issue 14; control.sock journey.run): one call walks a declared plan (package
// internal/journey) and answers a report. The runner drives the page only through what the
// verbs use — trusted input events, DOM and accessibility queries, DOMSnapshot, the host's
// fixed functions in an isolated world — and never evaluates anything of the plan's.
//
//   - Where: by default a fresh browser context (Target.createBrowserContext) of its own: none
//     of the durable profile's cookies or storage, its own window, disposed when the run ends
//     on every path (an error, the budget, the caller hanging up, the session being closed, the
//     host stopping). It is neither a normal session nor an isolated one: it is not registered
//     with brokerd (which therefore answers its challenges from the vault, as for a normal
//     session: each use of an alias approved by the person), and no verb can reach it by its
//     name. With "session" the run holds that existing session for its duration instead
//     (other verbs on it wait); an isolated one then signs in from its own store.
//   - Sign-in: a login action is auth.login's own path (authLogin): the challenge for the
//     document, the person's approval, every check before and after typing, the outcome
//     verified, and the containment afterwards. Its evidence is the outcome, never a value.
//   - Containment: every look at the page during a run (a target's resolution, an assertion's
//     poll, the evidence of a state) first checks that no field the host typed a password into
//     holds a value again (SECRET_ON_PAGE, the same check as screenshot's); the run stops
//     there, as could_not_look. Input actions pass refuseWhileSecret as the verbs do. A fill
//     into a password or secret-looking field, or a field the host typed into, is refused
//     (DIRECT_FILL_DISABLED) whatever the config's allow_direct_password_fill says, and an
//     assertion on such a field's value is SECRET_FIELD. Texts, names and values come from the
//     taint-aware outline (snapshot.Build, snapshot.Describe). Screenshots are refused while a
//     typed password may be on the page.
//   - Bounds: the plan's (package journey); one budget for the whole run, the person's
//     approval included; evidence strings and lists bounded, with truncated set when cut.
//   - Emulation: Emulation.setDeviceMetricsOverride (viewport), Emulation.setEmulatedMedia
//     (prefers-color-scheme), and zoom as CSS zoom on the root element, set after every
//     navigation by a fixed function of the host's (fnZoom) with the validated factor as its
//     argument. An existing session gets its emulation cleared at the end.

// Bounds of a journey's evidence.
const (
	journeyTextItems = 60   // visible texts of one state
	journeyTextBytes = 4096 // their total
	journeyElements  = 40   // elements (with boxes) of one state
	journeyMatches   = 100  // matches of a selector or role looked at
	journeyNameLen   = 80   // of an element's name in the evidence
	journeyObserved  = 200  // of what an assertion saw
	journeyPoll      = 50 * time.Millisecond
	journeyEvidence  = 10 * time.Second // looking at the state an action reached
	journeyTeardown  = 10 * time.Second
)

// jrun is one run of a plan.
type jrun struct {
	h      *Host
	plan   journey.Plan
	rep    journey.Report
	b      *cdp.Browser
	s      *session
	caller context.Context // the request's own: done when the caller hung up
	budget context.Context // caller plus the plan's budget
	// zoomed is the document CSS zoom was last applied to.
	zoomed string
}

// JourneyRun decodes p's plan strictly and walks it, stopping at the first action that fails
// or cannot be done; see the comment at the top of this file. A plan that does not decode is
// the error; everything after that is the report (could_not_look when the run could not look).
func (h *Host) JourneyRun(ctx context.Context, p control.JourneyRunParams) (journey.Report, error) {
	plan, err := journey.Decode(p.Plan)
	if err != nil {
		return journey.Report{}, err
	}
	start := time.Now()
	runID := strings.ToLower(rand.Text()[:12])
	r := &jrun{h: h, plan: plan, caller: ctx}
	kind, name := journey.ContextFresh, freshName(plan.JourneyID, runID)
	if plan.Session != "" {
		kind, name = journey.ContextNormal, plan.Session
	}
	r.rep = journey.NewReport(plan, runID, kind, name)

	budget, cancel := context.WithTimeout(ctx, plan.Budget())
	defer cancel()
	r.budget = budget
	release, err := r.open(budget, name, cancel)
	if err != nil {
		r.rep.StopAt(0, "", r.why(err))
		r.rep.Finish(plan)
		r.rep.ElapsedMS = time.Since(start).Milliseconds()
		return r.rep, nil
	}
	defer release()
	h.o.Log.Info("journey started", "journey", plan.JourneyID, "run", runID, "session", r.s.name, "context", r.rep.Context, "actions", len(plan.Actions))
	if err := r.begin(budget); err != nil {
		r.rep.StopAt(0, "", r.why(err))
	} else {
		for i, a := range plan.Actions {
			r.rep.ActionsRun = i + 1
			if !r.step(i, a) {
				break
			}
		}
	}
	r.rep.Finish(plan)
	r.rep.ElapsedMS = time.Since(start).Milliseconds()
	h.o.Log.Info("journey ended", "journey", plan.JourneyID, "run", runID, "status", r.rep.Status, "actions_run", r.rep.ActionsRun)
	return r.rep, nil
}

// freshName names a run's fresh context, as the person's prompt and the audit show it:
// "journey.", the journey's id (its first 32 bytes: ids are ASCII) and 8 characters of the run
// id; always a valid session name (credential.ValidSession).
func freshName(journeyID, runID string) string {
	return "journey." + journeyID[:min(len(journeyID), 32)] + "." + runID[:min(len(runID), 8)]
}

// why maps an error that ended the run to its report form. When the run's context ended, an
// error that only says so (a timeout, a cancellation, a withdrawn sign-in) becomes why it
// ended: the budget ran out (BUDGET_EXCEEDED), or the caller went away or the session was
// closed (CANCELLED). A definite answer that came as time ran out (PRESENCE_DENIED, say)
// keeps its own code.
func (r *jrun) why(err error) error {
	if r.budget.Err() == nil {
		return err
	}
	if c := wire.CodeOf(err); c != "" && c != wire.CodeTimeout && c != wire.CodeCancelled && c != wire.CodeHostUnavail &&
		!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return err
	}
	switch {
	case r.caller.Err() != nil:
		return wire.Errorf(wire.CodeCancelled, "the journey was stopped: its caller went away")
	case errors.Is(r.budget.Err(), context.DeadlineExceeded):
		return wire.Errorf(wire.CodeBudgetExceeded, "the journey's budget of %s ran out", r.plan.Budget())
	}
	return wire.Errorf(wire.CodeCancelled, "the journey was stopped: its session was closed (session close, profile clear or the host stopping)")
}

// open gives the run its session, locked for the run: a fresh browser context, or the plan's
// existing session. release undoes it (disposing a fresh context) on every path, even after
// the caller went away.
func (r *jrun) open(ctx context.Context, name string, stop context.CancelFunc) (release func(), err error) {
	h := r.h
	if r.plan.Session != "" {
		b, s, unlock, err := h.lockSession(ctx, r.plan.Session)
		if err != nil {
			return nil, err
		}
		if s.isolated {
			r.rep.Context = journey.ContextIsolated
		}
		// The run changes the page: refs of the session's last snapshot are not to be
		// trusted after it (the next verb that names one answers REF_UNKNOWN: snapshot again).
		clear(s.refs)
		h.mu.Lock()
		s.stopRun = stop
		h.mu.Unlock()
		r.b, r.s = b, s
		return func() {
			h.mu.Lock()
			s.stopRun = nil
			h.mu.Unlock()
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), journeyTeardown)
			r.unemulate(tctx)
			cancel()
			unlock()
		}, nil
	}
	b, err := h.alive(ctx)
	if err != nil {
		return nil, err
	}
	// may says whether the host takes one more session named name on browser b (asked
	// before the context is made, and again when it is listed).
	may := func() error {
		switch {
		case h.closed:
			return wire.Errorf(wire.CodeHostUnavail, "the host is shutting down")
		case h.clearing:
			return wire.Errorf(wire.CodeBusy, "the profile is being cleared; retry when 'headless profile clear' has finished")
		case h.browser != b:
			return wire.Errorf(wire.CodeBrowserCrashed, "the browser was restarted while the journey started")
		case len(h.sessions) >= MaxSessions:
			return wire.Errorf(wire.CodeSessionLimit, "at most %d sessions (journeys' fresh contexts included)", MaxSessions)
		case h.sessions[name] != nil:
			return wire.Errorf(wire.CodeSessionExists, "session %q exists", name)
		}
		return nil
	}
	h.mu.Lock()
	err = may()
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	// Its own browser context (makeSession makes one for a session that asks for it), made
	// without holding h.mu (other verbs and journeys need not wait for a window to open),
	// then marked fresh and not isolated: brokerd is never told of it.
	s := h.takeSpare(b, name)
	if s == nil {
		if s, err = h.makeSession(ctx, b, name, true, ""); err != nil {
			return nil, h.browserErr(fmt.Errorf("open the journey's browser context: %w", err))
		}
	}
	s.isolated, s.fresh, s.stopRun = false, true, stop
	s.mu.Lock()
	s.dialogsNow.Store(true) // nobody answers a journey's dialogs (dialogs.go)
	h.mu.Lock()
	if err := may(); err != nil {
		h.mu.Unlock()
		s.mu.Unlock()
		h.disposeFresh(ctx, b, s)
		return nil, err
	}
	h.sessions[name] = s
	h.mu.Unlock()
	r.b, r.s = b, s
	return func() {
		h.mu.Lock()
		if h.sessions[name] == s {
			delete(h.sessions, name)
		}
		s.stopRun = nil
		h.mu.Unlock()
		h.disposeFresh(ctx, b, s)
		s.taint, s.taintDoc = nil, ""
		s.mu.Unlock()
		h.refillSpare(b) // for the next journey
	}, nil
}

// disposeFresh closes a fresh context's window and disposes the context, on the browser it
// was made in, even when ctx is done (the caller went away: the context must go anyway).
func (h *Host) disposeFresh(ctx context.Context, b *cdp.Browser, s *session) (disposed bool) {
	h.routes.Delete(s.sid)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), journeyTeardown)
	defer cancel()
	s.quietPages(b) // its windows too: a context goes with them (pages.go)
	b.ClosePage(ctx, s.sid, s.targetID)
	err := b.Call(ctx, "", "Target.disposeBrowserContext", map[string]any{"browserContextId": s.contextID}, nil)
	if err != nil && b.Err() == nil {
		h.o.Log.Warn("a journey's browser context was not disposed", "session", s.name, "err", err)
	}
	return err == nil
}

// begin applies the emulation and opens the plan's start page.
func (r *jrun) begin(ctx context.Context) error {
	b, s := r.b, r.s
	p := r.plan
	if p.Width != 0 {
		if err := b.Call(ctx, s.sid, "Emulation.setDeviceMetricsOverride", map[string]any{
			"width": p.Width, "height": p.Height, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
			return r.h.browserErr(err)
		}
	}
	if p.Theme != "" {
		if err := b.Call(ctx, s.sid, "Emulation.setEmulatedMedia", map[string]any{
			"features": []map[string]string{{"name": "prefers-color-scheme", "value": p.Theme}}}, nil); err != nil {
			return r.h.browserErr(err)
		}
	}
	// A fresh context starts on the plan's path ("/" by default); an existing session on its
	// path when it has one, else where the session is now.
	if p.Path != "" || r.s.fresh {
		if err := r.navigate(ctx, p.StartPath()); err != nil {
			return err
		}
	}
	if err := r.ensureZoom(ctx); err != nil {
		return err
	}
	r.measure(ctx)
	return nil
}

// unemulate clears what begin set on an existing session.
func (r *jrun) unemulate(ctx context.Context) {
	b, s := r.b, r.s
	if r.plan.Width != 0 {
		b.Call(ctx, s.sid, "Emulation.clearDeviceMetricsOverride", nil, nil)
	}
	if r.plan.Theme != "" {
		b.Call(ctx, s.sid, "Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{}}, nil)
	}
	if r.plan.ZoomPercent() != 100 && r.zoomed != "" {
		if doc, err := r.h.documentID(ctx, b, s); err == nil && doc == r.zoomed {
			r.h.setZoom(ctx, b, s, 1)
		}
	}
}

// measure records the viewport the page has (CSS pixels).
func (r *jrun) measure(ctx context.Context) {
	var m struct {
		CSS struct {
			Width  float64 `json:"clientWidth"`
			Height float64 `json:"clientHeight"`
		} `json:"cssLayoutViewport"`
	}
	if err := r.b.Call(ctx, r.s.sid, "Page.getLayoutMetrics", nil, &m); err == nil {
		r.rep.Emulation.ViewportWidth, r.rep.Emulation.ViewportHeight = int(m.CSS.Width+0.5), int(m.CSS.Height+0.5)
	}
}

// navigate opens path on the plan's origin and waits for its load (as visit does).
func (r *jrun) navigate(ctx context.Context, path string) error {
	target, err := CheckNavigable(r.plan.Origin + path)
	if err != nil {
		return err
	}
	if err := r.h.navAllowed(target); err != nil {
		return err // journeys obey the navigation allowlist (issue 15)
	}
	if err := r.h.navigate(ctx, r.b, r.s, target, NavigationWait); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}

// step runs action i and records its evidence; false stops the run.
func (r *jrun) step(i int, a journey.Action) bool {
	t0 := time.Now()
	ev := journey.Evidence{ID: fmt.Sprintf("ev-%d", i+1), Step: i + 1, StateID: a.StateID, Action: a.Kind, Text: []string{}, Elements: []journey.Element{}}
	target, err := r.do(r.budget, a, &ev)
	if err == nil {
		err = r.ensureZoom(r.budget)
	}
	if err != nil {
		err = r.why(err)
	}
	// The state it reached, or failed in (its screenshot too, when the plan asks: a failed
	// state is the one worth seeing): looked at even when the budget is spent (bounded), not
	// when the caller is gone.
	if r.caller.Err() == nil {
		octx, cancel := context.WithTimeout(context.WithoutCancel(r.budget), journeyEvidence)
		if oerr := r.observe(octx, &ev, target, a.Screenshot); oerr != nil && err == nil {
			err = oerr // the state could not be looked at: that stops the run
		}
		cancel()
	}
	ev.ElapsedMS = time.Since(t0).Milliseconds()
	if err != nil {
		we := wire.From(err)
		ev.OK, ev.Code, ev.Message = false, we.Code, clip.Text(we.Message, 300)
		r.rep.Evidence = append(r.rep.Evidence, ev)
		r.rep.StopAt(i+1, a.StateID, err)
		return false
	}
	ev.OK = true
	r.rep.Evidence = append(r.rep.Evidence, ev)
	return true
}

// do performs one action. It returns the node the action was about (for the evidence).
func (r *jrun) do(ctx context.Context, a journey.Action, ev *journey.Evidence) (int64, error) {
	h, b, s := r.h, r.b, r.s
	if b.SessionErr(s.sid) != nil {
		return 0, wire.Errorf(wire.CodeBrowserCrashed, "the journey's page crashed")
	}
	switch a.Kind {
	case journey.KindNavigate:
		return 0, r.navigate(ctx, a.Path)

	case journey.KindLogin:
		return 0, r.login(ctx, a, ev)

	case journey.KindClick:
		return r.act(ctx, a, true, func(t match) error { return h.clickNode(ctx, b, s, t.target()) })

	case journey.KindFill:
		t, err := r.one(ctx, a)
		if err != nil {
			return 0, err
		}
		return t.id, r.fill(ctx, t, a.Value)

	case journey.KindPress:
		return r.act(ctx, a, a.HasTarget(), func(t match) error {
			if t.id != 0 {
				if err := r.focus(ctx, t); err != nil {
					return err
				}
			}
			s.drain()
			return h.browserErr(pressKey(ctx, b, s, a.Key))
		})

	case journey.KindHover:
		// A hover may open a menu, or navigate: it settles like a click.
		return r.act(ctx, a, true, func(t match) error { return h.hoverNode(ctx, b, s, t.target()) })

	case journey.KindScroll:
		var t match
		if a.HasTarget() {
			var err error
			if t, err = r.one(ctx, a); err != nil {
				return 0, err
			}
		}
		if err := h.refuseWhileSecret(ctx, b, s); err != nil {
			return t.id, err
		}
		var target *snapshot.Target
		if t.id != 0 {
			tg := t.target()
			target = &tg
		}
		_, err := h.scrollNode(ctx, b, s, target, a.By)
		return t.id, err

	case journey.KindSelect:
		return r.act(ctx, a, true, func(t match) error { return r.selectOptions(ctx, t, a) })

	case journey.KindWait:
		return r.wait(ctx, a, ev)

	case journey.KindAssert:
		return r.assert(ctx, a, ev)
	}
	return 0, wire.Errorf(wire.CodeInternal, "no runner for action kind %q", a.Kind)
}

// act runs an action that may start a navigation (click, press, hover, select): its target
// (when targeted) must match one visible element, nothing is done while a field the host typed
// a secret into holds a value, the session's stale events are dropped, do acts, and the run
// settles (a navigation it started is waited for). It returns the target's id.
func (r *jrun) act(ctx context.Context, a journey.Action, targeted bool, do func(match) error) (int64, error) {
	var t match
	if targeted {
		var err error
		if t, err = r.one(ctx, a); err != nil {
			return 0, err
		}
	}
	if err := r.h.refuseWhileSecret(ctx, r.b, r.s); err != nil {
		return t.id, err
	}
	r.s.drain()
	if err := do(t); err != nil {
		return t.id, err
	}
	r.s.settle(ctx)
	return t.id, nil
}

// login signs in through auth.login's own path; its outcome is the evidence. A site that
// refuses the credential is LOGIN_FAILED (could not look: the states behind the sign-in were
// never reached); an outcome that could not be verified lets the run go on, and its next
// states say whether it is signed in.
func (r *jrun) login(ctx context.Context, a journey.Action, ev *journey.Evidence) error {
	res, err := r.h.authLogin(ctx, r.b, r.s, control.AuthParams{Session: r.s.name, Alias: a.Alias})
	if res.Origin != "" || res.Status != "" {
		ev.Login = &journey.Login{Alias: a.Alias, Origin: res.Origin, Status: res.Status, Steps: res.Evidence.Steps, Navigated: res.Evidence.Navigated,
			URLAfter: res.Evidence.URLAfter, Cleared: res.Evidence.Cleared, PageDiscarded: res.Evidence.PageDiscarded,
			PageLost: res.Evidence.PageLost}
	}
	if err != nil {
		if errors.Is(err, errWithdrawn) && ctx.Err() != nil {
			return ctx.Err() // the budget or the caller: why says which
		}
		return err
	}
	switch res.Status {
	case "authenticated":
		return nil
	case "failed":
		return wire.Errorf(wire.CodeLoginFailed, "the site refused the saved credential of alias %q at %s", a.Alias, res.Origin)
	}
	ev.Message = "the sign-in's outcome could not be verified (unknown); the states after it say whether it took"
	return nil
}

// browserContexts counts the browser's contexts besides the default one and the spare's
// (Status), -1 when the browser does not answer. The spare's are asked for after the browser
// answered (spare.go: spareContexts), so one the browser listed is known by then.
func (h *Host) browserContexts(ctx context.Context) int {
	h.mu.Lock()
	b := h.browser
	h.mu.Unlock()
	if b == nil || b.Err() != nil {
		return -1
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var r struct {
		IDs []string `json:"browserContextIds"`
	}
	if err := b.Call(ctx, "", "Target.getBrowserContexts", nil, &r); err != nil {
		return -1
	}
	spare := h.spareContexts()
	n := 0
	for _, id := range r.IDs {
		if !spare[id] {
			n++
		}
	}
	return n
}
