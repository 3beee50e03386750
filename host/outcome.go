package host

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/wire"
)

// withoutQuery cuts the query string and fragment off a URL (a result after a login must not
// carry anything a form put there).
func withoutQuery(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		return u[:i]
	}
	return u
}

// verify decides the outcome from what the page shows after submitting, polling (bounded) until
// the page says something definite:
//   - authenticated: the browser navigated to a new document of the origin, it loaded, and it
//     shows no sign-in form and no error; or, in the same document (a single-page application
//     that signed in with a script, over fetch or its own WebSocket), the sign-in form is no
//     longer shown to the person (gone, or kept in the page hidden), no one-time-code field
//     nor error is, and that holds for several looks after the page settled;
//   - failed: after a navigation the login form is back, or an error alert is shown;
//   - unknown: anything else when the time is up.
//
// The evidence goes into si.ev; a page of another origin than si.origin is never
// authenticated.
func (si *signIn) verify(ctx context.Context, before pageState) (status string, err error) {
	h, b, s, ev := si.h, si.b, si.s, si.ev
	status = "unknown"
	looked := false
	defer func() {
		if looked || err != nil {
			return
		}
		// The page never answered a look: its URL from the browser's own record of the tab
		// (which a busy page cannot hold up), without its query, and whether the main frame
		// shows another document by now; the status stays unknown.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if u, _, err := h.pageInfo(cctx, b, s); err == nil {
			ev.URLAfter = clip.Text(withoutQuery(u), 512)
		}
		if doc, err := h.documentID(cctx, b, s); err == nil {
			ev.Navigated = doc != before.document
		}
	}()
	submitted := time.Now()
	// An error text the page showed before the submit (a template the page keeps, the answer
	// to an earlier attempt) is not the answer to this one while the document stays.
	shownBefore := loginErrorsShown(before.outline)
	ctx, cancel := context.WithTimeout(ctx, VerifyWait)
	defer cancel()
	s.settle(ctx)
	seen := map[string]int{}
	for {
		if si.refused() {
			return status, nil
		}
		after, lerr := h.look(ctx, b, s)
		if errors.Is(lerr, errEchoed) || si.refused() {
			return status, lerr // the page was discarded: the outcome is not told
		}
		if lerr == nil {
			looked = true
			ev.URLAfter = clip.Text(withoutQuery(after.outline.URL), 512)
			ev.Navigated = after.document != before.document
			ev.LoginFormPresent = hasPasswordForm(after)
			if ev.Navigated {
				clear(shownBefore)
			}
			ev.ErrorText = clip.Text(loginErrorText(after.outline, shownBefore), 200)
			afterOrigin, _ := origin.Canonical(after.outline.Origin)
			// A sign-in still shown: a sign-in form (a first step counts too) or any password
			// field; what the detection judged a sign-up, a search box or a newsletter is not one.
			anyForm := slices.ContainsFunc(after.forms, func(f snapshot.LoginForm) bool { return f.SignIn || f.Password != "" })
			switch {
			case ev.ErrorText != "":
				return "failed", nil
			case ev.Navigated && ev.LoginFormPresent:
				return "failed", nil
			case ev.Navigated && !anyForm && !after.outline.Truncated && si.ownOrigin(afterOrigin):
				return "authenticated", nil
			case ev.Navigated:
				return status, nil // another origin, an error page, a cut outline or a first step again: unknown
			case !anyForm && len(snapshot.CodeForms(after.outline)) == 0 && si.ownOrigin(afterOrigin) && !s.navPending.Load() &&
				si.typedGone(ctx) && settledLooks(seen, after.document):
				// The same document, the sign-in no longer shown (the fields typed into gone
				// or without a box: an application's page is often longer than an outline,
				// so the outline alone cannot say), and no step of it either (a one-time-code
				// field still asks for something).
				return "authenticated", nil
			case anyForm && si.notSent(ctx, submitted):
				return status, wire.Errorf(wire.CodeSigninNotSent,
					"the page showed no sign of sending the sign-in within %v of the submit: it still shows the sign-in form, and nothing the host saw could carry the password to %s (no navigation, no request with a body, no WebSocket, no worker)",
					notSentAfter, si.origin)
			}
		}
		// Not definite yet: wait for a navigation to start (then for its load), or poll again.
		select {
		case e := <-s.events:
			switch e.Method {
			case "Page.frameNavigated":
				s.waitLoad(ctx, "")
			case "Page.frameStartedLoading":
				// A load that may never fire one (a frame that stops at once, as a step
				// within the document does): until the frame stops loading, or loads.
				s.waitStopped(ctx, NavigationWait)
			}
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return status, nil
		}
	}
}

// The page kept the sign-in (si.notSent) once, notSentAfter after the submit, its network has
// been quiet for notSentQuiet: a page whose script sends the sign-in late (after a captcha's
// token, say) sends other requests first.
const (
	notSentAfter = 3 * time.Second
	notSentQuiet = 1500 * time.Millisecond
)

// notSent reports whether the page, in the same document since the submit, showed no sign of
// sending the sign-in, as far as the host sees: no navigation under way, a field the host
// typed into still shown, no request that may carry the password let go while it was in the
// page (egress.Secret.MayHaveLeft), no WebSocket opened by the document to the credential's
// origins (the guard does not see its messages; one elsewhere is shut while the secret is in
// the page), no target of its own attached since the typing or running under the page (a
// worker, another site's frame: its WebSocket is not seen either), no other window of the
// session (it may read this one), and the page's network quiet for notSentQuiet,
// notSentAfter after the submit. A script that disguises the password in a request the guard
// lets go (a query, an unusual encoding) is not seen: SIGNIN_NOT_SENT is a label for the
// agent, not a guarantee (SECURITY.md).
func (si *signIn) notSent(ctx context.Context, submitted time.Time) bool {
	s := si.s
	if len(si.secrets) == 0 || time.Since(submitted) < notSentAfter || s.navPending.Load() || si.mayHaveLeft() ||
		si.h.way.attachedSince(si.childMark, s) || s.pageCount() > 1 {
		return false
	}
	if quiet, told := s.requests().idle(time.Now()); !told || quiet < notSentQuiet || s.requests().socketTo(append([]string{si.origin}, si.also...)) {
		return false
	}
	return !si.typedGone(ctx)
}

// settledLooks counts the looks at document with the sign-in no longer shown; the second one
// (a moment after the page settled on the submit's requests) decides.
func settledLooks(seen map[string]int, document string) bool {
	seen[document]++
	return seen[document] >= 2
}

// typedGone reports whether every field the host typed into in the session's page is gone or
// has no box: what a person sees of a sign-in an application hid or removed.
func (si *signIn) typedGone(ctx context.Context) bool {
	for id := range si.s.taint {
		var q struct {
			Quads [][]float64 `json:"quads"`
		}
		if si.b.Call(ctx, si.s.sid, "DOM.getContentQuads", map[string]any{"backendNodeId": id}, &q) == nil && len(q.Quads) > 0 {
			return false
		}
	}
	return true
}

// VerifyWait bounds how long auth login watches the page for its outcome.
const VerifyWait = 10 * time.Second

// loginErrorsShown is every error text o shows: what a look after a submit, on the same
// document, does not take for the site's answer (loginErrorText's except).
func loginErrorsShown(o snapshot.Outline) map[string]bool {
	shown := map[string]bool{}
	for _, e := range o.Elements {
		if e.Kind == "text" && looksLikeLoginError(e.Text) {
			shown[e.Text] = true
		}
	}
	return shown
}

// loginErrorText is the first text of o that reads like a failed sign-in ("" if none), but
// for those in except.
func loginErrorText(o snapshot.Outline, except map[string]bool) string {
	for _, e := range o.Elements {
		if e.Kind == "text" && looksLikeLoginError(e.Text) && !except[e.Text] {
			return e.Text
		}
	}
	return ""
}

// hasPasswordForm reports whether st shows a sign-in form with a password field.
func hasPasswordForm(st pageState) bool {
	for _, f := range st.forms {
		if f.Password != "" {
			return true
		}
	}
	return false
}

func looksLikeLoginError(t string) bool {
	t = strings.ToLower(t)
	for _, w := range []string{"invalid", "incorrect", "wrong password", "failed", "try again"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

// ownOrigin reports whether o is the credential's origin or one the person named for it: a
// page there after the submit is the site's own answer.
func (si *signIn) ownOrigin(o string) bool {
	return o != "" && (o == si.origin || slices.Contains(si.also, o))
}
