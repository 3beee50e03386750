package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/wire"
)

// A page of the agent's must stall no one else.
//
// Every session's page runs in the one browser all sessions share, and the agent chooses it.
// A page can keep that browser busy: 30 frames loaded again every 25 ms (thousands of
// navigations a second, each a round trip of the browser's own, each a challenge the host
// cancels when the frame is HTTP Basic-protected) left another session's 'session create'
// unanswered for 30 s and every DevTools call seconds late; a dialog left open stops the
// page's script and every call into it; a script that never yields stops every call into the
// page. The host bounds all three:
//
//   - Floods: every navigation a page starts (of any of its frames, cross-site ones included:
//     Page.frameStartedNavigating of its session) is counted against a budget of the page's
//     (FloodBurst at once, FloodRate a second sustained).
//     A page that spends it is stopped at once: its renderer is crashed (Page.crash is served
//     off the page's main thread), every call into it fails, and the session's next command
//     answers PAGE_STOPPED and opens a fresh blank page (the session's cookies are kept). A
//     stopped page costs the browser nothing: the flood ends with it.
//   - Dialogs: held for the agent at most DialogHold, then dismissed (dialogs.go); a page that
//     opens another right after one the host dismissed unanswered is stopped. Each dialog, and
//     each window a page opens (pages.go), costs the page's budget DialogCost navigations
//     (DialogBurst at once, a fifth of that a second): a page of dialog loops let no navigation
//     away from it finish (visit answered TIMEOUT, again and again), so it is stopped as a flood
//     is. Before a page is closed or stopped its scripts are stopped and its dialogs dismissed
//     (cdp.Quiet): Chromium 156 ends in SIGSEGV when a page goes with a dialog open.
//   - Pages that do not answer: every verb on a session has an overall deadline (verbLimit). A
//     verb that reaches it while it holds the session answers PAGE_STOPPED, and its page is
//     stopped, so that the next verb does not wait on it again. A navigation whose page
//     neither loads within its bound nor answers for StuckWait after (a script that never
//     yields from before its load) is stopped the same way, at once (verbs.go). 'session
//     close' waits for a running verb of the session for CloseWait at most, then stops its
//     page.
const (
	// FloodBurst is the number of navigations a page may start at once.
	FloodBurst = 100
	// FloodRate is the number a page may start a second, sustained.
	FloodRate = 25
	// DialogBurst is the number of dialogs a page may open at once (DialogBurst/5 a second,
	// sustained): each costs DialogCost of the navigations' budget.
	DialogBurst = 20
	DialogCost  = FloodBurst / DialogBurst
	// CloseWait bounds how long 'session close' waits for a verb running in the session.
	CloseWait = 2 * time.Second
	// VerbWait is a verb's overall deadline (visit's navigation, screenshot's capture and a
	// sign-in's look at its page included); wait's is its own timeout plus this.
	VerbWait = 45 * time.Second
)

// pageStoppedError is the error of every call into a page the host stopped.
type pageStoppedError struct {
	why  string
	code wire.Code // PAGE_STOPPED when ""; SECRET_EGRESS when the guard stopped it (wayout.go)
}

func (e *pageStoppedError) Error() string { return "the session's page was stopped: " + e.why }

// pageStoppedErr is the typed answer for a verb that met a stopped page.
func pageStoppedErr(ps *pageStoppedError) error {
	code := ps.code
	if code == "" {
		code = wire.CodePageStopped
	}
	return wire.Errorf(code, "%s; the session's next command opens a fresh blank page", ps.Error())
}

// floodMeter is a page's budget of navigations (a token bucket). One per page:
// a fresh page gets a full one.
type floodMeter struct {
	mu      sync.Mutex
	tokens  float64
	last    time.Time
	tripped bool
}

func newFloodMeter(now time.Time) *floodMeter {
	return &floodMeter{tokens: FloodBurst, last: now}
}

// spend takes n from the budget and reports whether the page has just spent it all (true
// once per meter).
func (m *floodMeter) spend(now time.Time, n float64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tripped {
		return false
	}
	if d := now.Sub(m.last).Seconds(); d > 0 {
		m.tokens = min(FloodBurst, m.tokens+d*FloodRate)
	}
	m.last = now
	m.tokens -= n
	if m.tokens < 0 {
		m.tripped = true
		return true
	}
	return false
}

// pageEvent handles what every window of a session keeps of its own events (on the event
// reader, the session's pagesMu held: it never blocks): its requests (settle.go), frames and
// where they are (frames.go, openers.go), its dialogs (dialogs.go), and its budget:
// navigations, windows it opens and dialogs spend it.
func (h *Host) pageEvent(s *session, t *tab, ev cdp.Event) {
	b := s.browser
	var n float64
	switch ev.Method {
	case cdp.RequestStarted, cdp.RequestEnded, cdp.RequestFailed:
		t.reqs.event(ev)
		return
	case "Page.frameAttached":
		t.frames.event(ev)
		return
	case "Page.frameDetached":
		t.frames.event(ev)
		var p struct {
			FrameID string `json:"frameId"`
		}
		if json.Unmarshal(ev.Params, &p) == nil && p.FrameID != "" {
			h.openers.unplace(p.FrameID, false)
		}
		return
	case "Page.frameNavigated":
		var p struct {
			Frame struct {
				ID       string `json:"id"`
				ParentID string `json:"parentId"`
				Origin   string `json:"securityOrigin"`
			} `json:"frame"`
		}
		if json.Unmarshal(ev.Params, &p) == nil && p.Frame.ID != "" {
			h.openers.place(p.Frame.ID, t.target, p.Frame.Origin)
			if p.Frame.ParentID == "" {
				t.reqs.newDocument()
			}
		}
		return
	case "Page.javascriptDialogClosed":
		dialogClosed(t)
		return
	case "Page.frameStartedNavigating":
		var p struct {
			FrameID        string `json:"frameId"`
			NavigationType string `json:"navigationType"`
		}
		if json.Unmarshal(ev.Params, &p) == nil && p.FrameID == t.target && p.NavigationType != "sameDocument" && p.NavigationType != "historySameDocument" {
			t.reqs.navigating()
		}
		n = 1
	case "Page.windowOpen":
		n = DialogCost
	case "Page.javascriptDialogOpening":
		h.dialogOpened(b, s, t, ev)
		n = DialogCost
	default:
		return
	}
	if t.flood == nil || !t.flood.spend(time.Now(), n) {
		return
	}
	why := fmt.Sprintf("it started more than %d navigations (its frames' included), or opened more than %d dialogs or windows, at once (or %d and %d a second)",
		FloodBurst, DialogBurst, FloodRate, FloodRate/DialogCost)
	h.o.Log.Warn("a page flooded the browser: stopping it", "session", s.name)
	b.StopSession(t.sid, &pageStoppedError{why: why})
}

// stopPage stops the page of session s (the verb that held it reached its deadline, or
// 'session close' could not wait for it).
func (h *Host) stopPage(b *cdp.Browser, s *session, sid, why string) {
	if sid == "" || b.SessionErr(sid) != nil {
		return
	}
	h.o.Log.Warn("a page did not answer: stopping it", "session", s.name, "why", why)
	b.StopSession(sid, &pageStoppedError{why: why})
}

// errVerbDeadline is what ends a verb at its overall deadline (context.Cause).
var errVerbDeadline = errors.New("the command reached its overall deadline")

// verbNote is what a verb's session lock tells the method table about the verb.
type verbNote struct {
	mu      sync.Mutex
	stopped string // the page was stopped when the verb ended: why
}

type verbNoteKey struct{}

func noteOf(ctx context.Context) *verbNote {
	n, _ := ctx.Value(verbNoteKey{}).(*verbNote)
	return n
}

// withVerbDeadline gives a verb its overall deadline, d.
func withVerbDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx = context.WithValue(ctx, verbNoteKey{}, &verbNote{})
	return context.WithTimeoutCause(ctx, d, errVerbDeadline)
}

// verbAnswer turns a verb's error into its answer when its page was stopped under it or it
// reached its deadline.
func verbAnswer(ctx context.Context, d time.Duration, err error) error {
	if err == nil {
		// A verb that answered although its page was stopped under it (a visit whose look at
		// the page ended with the page at the deadline) describes a page that is gone: the
		// session shows a fresh blank one already, and no later command would say so.
		if why := stoppedUnder(ctx); why != "" {
			return pageStoppedErr(&pageStoppedError{why: why})
		}
		return nil
	}
	var ps *pageStoppedError
	if errors.As(err, &ps) {
		return pageStoppedErr(ps)
	}
	if context.Cause(ctx) != errVerbDeadline {
		return err
	}
	if why := stoppedUnder(ctx); why != "" {
		return pageStoppedErr(&pageStoppedError{why: why})
	}
	return wire.Errorf(wire.CodeTimeout, "no answer within %s (another command of the session held it)", d).
		WithHint("retry when the session's running command has ended; 'headless session close NAME' ends a session whose page will not answer")
}

// stoppedUnder is why the page of the verb of ctx was stopped while the verb held it, or "".
func stoppedUnder(ctx context.Context) string {
	n := noteOf(ctx)
	if n == nil {
		return ""
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stopped
}

// verbLimit is the overall deadline of a control.sock method that drives a session's page, or
// 0 for one with bounds of its own (a sign-in: its look, the person's time at the prompt,
// its typing; a journey: its budget) or that drives no page.
func verbLimit(method string, p any) time.Duration {
	switch method {
	case control.MethodVisit:
		if v, ok := p.(control.VisitParams); ok && v.TimeoutMS > 0 {
			return visitWait(v) + VerbWait
		}
		return VerbWait
	case control.MethodSnapshot, control.MethodClick, control.MethodFill, control.MethodPress,
		control.MethodScreenshot, control.MethodBack, control.MethodSelect, control.MethodHover, control.MethodScroll,
		control.MethodForward, control.MethodReload, control.MethodDialog, control.MethodPageSelect, control.MethodSessionPages:
		return VerbWait
	case control.MethodWait:
		d := control.DefaultWait
		if w, ok := p.(control.WaitParams); ok && w.TimeoutMS > 0 {
			d = min(time.Duration(w.TimeoutMS)*time.Millisecond, control.MaxWait)
		}
		return d + VerbWait
	}
	return 0
}
