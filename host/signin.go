package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/egress"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/wire"
)

// AuthLogin signs the session in with the saved credential alias: finds the sign-in form,
// refuses one that could send the password anywhere but the page's origin by POST before
// anyone is asked, gets a challenge for this exact document, has brokerd release the password
// (after presence), re-checks document, frame origin, form action and submitters and the fields
// right before typing, types with Input.insertText, zeroes the password, re-checks all of it
// again after typing, submits and verifies the outcome. An attempt that ends on the page it
// typed into ends with the typed field emptied (see taint.go).
func (h *Host) AuthLogin(ctx context.Context, p control.AuthParams) (control.AuthResult, error) {
	if err := credential.ValidAlias(p.Alias); err != nil {
		return control.AuthResult{}, err
	}
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return control.AuthResult{}, err
	}
	defer unlock()
	return h.authLogin(ctx, b, s, p)
}

// authLogin is AuthLogin in session s, whose verb lock the caller holds (a journey's login
// action takes this same path: the same challenge, presence, checks and containment).
func (h *Host) authLogin(ctx context.Context, b *cdp.Browser, s *session, p control.AuthParams) (control.AuthResult, error) {
	if err := credential.ValidAlias(p.Alias); err != nil {
		return control.AuthResult{}, err
	}
	named, err := s.namedFieldsOf(p) // the agent's refs, before the sign-in's looks replace them
	if err != nil {
		return control.AuthResult{Alias: p.Alias, Session: s.name}, err
	}
	clear(s.refs)
	begun := time.Now()
	res := control.AuthResult{Alias: p.Alias, Session: s.name}
	// Before anything is released: Chromium must have nowhere to write a submission's body
	// or a field's value to disk (profile.blockSessions), even if a process of the agent's
	// removed the block since the start. The page of an isolated session keeps nothing on
	// disk anyway; the durable profile's block is checked for every sign-in.
	if err := h.prof.Reblock(); err != nil {
		return res, wire.Errorf(wire.CodeBrowserFailed, "the profile's session restore data could not be blocked (%w); nothing was released", err)
	}

	// Everything before brokerd is asked is bounded as a whole (LookWait): a page that keeps
	// the browser busy (a flood of Basic challenges from the agent's own page) cannot hold
	// the session and the caller for longer. What follows a release has bounds of its own.
	lctx, cancelLook := context.WithTimeout(ctx, LookWait)
	defer cancelLook()
	// The browser's processes are looked at (browserIntact) while the page is read: the
	// release waits for that look, or takes another when it is older than intactFresh.
	look := &lookBound{ctx: lctx, intact: h.checkAhead("nothing was asked for or released")}
	// A page that could not be read within the bound will not answer the next verb either: it
	// is stopped (pageguard.go), and the session's next command opens a fresh one.
	done := func(err error) error {
		// A request the network guard refused meanwhile (the page tried to send the secret
		// out; it is discarded) is the answer, whatever the sign-in saw of the page.
		if rerr := s.way.refusedSince(begun); rerr != nil {
			return rerr
		}
		// A browser the look ahead found tampered with was killed under the sign-in: that is
		// the answer, whatever the sign-in then ran into.
		if err != nil {
			if ierr := look.intact.failed(); ierr != nil {
				return ierr
			}
		}
		if err = look.timeout(ctx, err); err == errLookTimeout {
			h.stopPage(b, s, s.sid, fmt.Sprintf("it did not let a sign-in read it within %v", LookWait))
		}
		return err
	}
	si := &signIn{h: h, b: b, s: s, look: look, ev: &res.Evidence, named: named, begun: begun}
	// The page is the 401 answer of a Basic challenge of its server: answer that (basicauth.go).
	var seen *basicSeen
	if !p.CodeOnly {
		if u, _, err := h.pageInfo(look.ctx, b, s); err == nil {
			seen = s.basicPending(u)
		}
	}
	switch {
	case p.CodeOnly:
		err = done(si.stepUp(ctx, p, &res))
	case seen != nil:
		err = done(h.basicLogin(ctx, look, b, s, p, seen, &res))
	default:
		err = done(si.formLogin(ctx, p, &res))
	}
	// The page died under the attempt after its outcome was seen (a renderer the machine ran
	// out of memory for): the agent's next look would find a blank page unannounced.
	// (A window of the page's that closed itself, as an OAuth popup does, is no loss: the
	// session is back on its opener.)
	if why := b.SessionErr(s.sid); why != nil {
		res.Evidence.PageLost = !s.inWindow() || !errors.Is(why, cdp.ErrDetached)
	}
	return res, err
}

// signIn is one sign-in in session s of browser b (auth login's, a journey's login, an
// interactive one the person types): what its steps share. look bounds its looks before the
// release (nil when nothing is released: the person types the password); ev is the evidence
// its result reports. origin is the page's canonical origin, the credential's, once the
// sign-in page was looked at; listener the loopback listener brokerd saw at the release ("" when
// there is none, or the secret came from the person's terminal).
type signIn struct {
	h      *Host
	b      *cdp.Browser
	s      *session
	look   *lookBound
	ev     *control.Evidence
	origin string
	also   []string // the other origins the person named for the credential (rel.AlsoOrigins)
	// codePaths are where the one-time code released with the password may be typed
	// (rel.CodePaths: the sign-in page's path and the credential's known sign-in paths).
	codePaths []string
	listener  string
	named     *namedFields // the fields the agent named (named.go), nil: the host's guess
	// begun is when the sign-in began: a refusal of the network guard's since then ends it
	// (refused).
	begun time.Time
	// secrets are those the sign-in typed (guardSecret), as the network guard knows them;
	// childMark is the guard's count of targets attached once the page was held for them.
	secrets   []*egress.Secret
	childMark int64
}

// mayHaveLeft reports whether a request that may carry a secret the sign-in typed went to
// its origins (egress.Secret.MayHaveLeft).
func (si *signIn) mayHaveLeft() bool {
	return slices.ContainsFunc(si.secrets, (*egress.Secret).MayHaveLeft)
}

// refused reports whether the network guard refused a request of the session's (or one
// carrying its secret) since the sign-in began: the page is being discarded, and the
// sign-in's answer is SECRET_EGRESS (authLogin's done), with no more looks at it.
func (si *signIn) refused() bool {
	return !si.begun.IsZero() && si.s.way.refusedSince(si.begun) != nil
}

// formLogin is the sign-in into a form of the page (one page, or a two-step login), si.look
// bounding what comes before the release; res is the result it fills in.
func (si *signIn) formLogin(ctx context.Context, p control.AuthParams, res *control.AuthResult) error {
	h, b, s, look := si.h, si.b, si.s, si.look
	st, err := si.lookPage(look.ctx)
	res.Origin = si.origin
	if err != nil {
		return err
	}
	// The challenge for this document says which aliases are passkeys: a passkey signs in
	// through the page's WebAuthn ceremony (passkey.go), never a form.
	// (A page offering a passkey gets a challenge of its own even when the caller brought one:
	// the caller's says nothing of the kinds.)
	challengeID := p.Challenge
	var ok bool
	if _, _, offers := passkeyTrigger(st); challengeID == "" || offers {
		ch, err := si.challenge(look.ctx, st)
		if err != nil {
			return err
		}
		challengeID = ch.Challenge
		if isPasskey(ch, p.Alias) {
			return si.passkeyLogin(ctx, p, res, st, challengeID)
		}
	}
	// The origins the person named for the credential, which its form may post to besides
	// the credential's (brokerd's list; its release says so again, and that is what the guard
	// holds to).
	//
	// Its account (metadata, never a secret): typed by a first step, and compared with the
	// account field's maxlength before anyone is asked (typable).
	var account string
	c, cerr := h.credentialOf(look.ctx, s, si.origin, p.Alias)
	if cerr == nil {
		si.also, account = c.AlsoOrigins, c.Account
	}
	var form snapshot.LoginForm
	if si.named != nil {
		if form, err = si.named.form(st); err != nil {
			return err
		}
	} else if form, ok = usable(st, firstPage); !ok {
		return noLoginForm(st)
	}

	// Two-step login: type the account (metadata, no release needed) and submit, then continue
	// on the password page of the same origin.
	page := firstPage
	if form.Password == "" {
		page = secondPage
		if cerr != nil {
			return cerr
		}
		if account == "" {
			return wire.Errorf(wire.CodeNoLoginForm, "the page asks for an account first, and alias %q was saved without one (a sign-in with a password only); nothing was typed", p.Alias)
		}
		if st, form, err = si.typable(look.ctx, st, form, account); err != nil {
			return err
		}
		if st, form, err = si.firstStep(look.ctx, st, form, account); err != nil {
			return err
		}
		challengeID = "" // the challenge was for the first page
	}

	// Refuse a form that could never take the password before anyone is asked to approve
	// (typable first: the form it waited for is the one checked).
	if st, form, err = si.typable(look.ctx, st, form, account); err != nil {
		return err
	}
	if err := checkForm(st, form, si.origin, si.also...); err != nil {
		return err
	}
	// No other window may hold a reference to the page while the person decides and the host
	// types (navguard.go): a popup of the page's could navigate it under the typing.
	if _, err := h.closeOpened(look.ctx, b, s); err != nil {
		return h.browserErr(err)
	}
	if challengeID == "" {
		ch, err := si.challenge(look.ctx, st)
		if err != nil {
			return err
		}
		challengeID = ch.Challenge
	}
	var (
		rel    brokerapi.Released
		secret []byte
	)
	defer func() { credential.Zero(secret) }()
	rel, secret, err = si.release(ctx, st, brokerapi.ReleaseParams{Challenge: challengeID, Alias: p.Alias,
		Field: fieldLabel(st.outline, form.Password), NewPath: p.NewLoginPath})
	if err != nil {
		return err
	}
	// With a one-time code (released under the same approval), the secret is the password,
	// NUL, the code: the code gets a buffer of its own, zeroed when the attempt ends.
	var code []byte
	defer func() { credential.Zero(code) }()
	if rel.Code {
		pw, c := credential.SplitFactor(secret)
		if !validCode(c) {
			return wire.Errorf(wire.CodeInvalidArgument, "brokerd's one-time code for alias %q is malformed; nothing was typed", rel.Alias)
		}
		code = append(make([]byte, 0, len(c)), c...)
		credential.Zero(secret[len(pw):])
		secret = pw
	}
	// An item another program wrote into the keyring may hold what headless cannot type as it
	// is (not UTF-8 text, see credential.ValidSecret): refused before anything is focused.
	if err := credential.ValidSecret(secret); err != nil {
		return wire.Errorf(wire.CodeInvalidArgument, "the saved password of alias %q cannot be typed (%w); nothing was typed", rel.Alias, err)
	}
	if rel.Origin != si.origin {
		return wire.Errorf(wire.CodeOriginMismatch, "the credential is for %s, the page is %s", rel.Origin, si.origin)
	}
	si.listener, si.also, si.codePaths = rel.Listener, rel.AlsoOrigins, rel.CodePaths
	tctx, tcancel := context.WithTimeout(ctx, TypeWait)
	typed, err := si.fillVerified(tctx, st, form, rel.Account, secret, page)
	tcancel()
	credential.Zero(secret)
	if err == nil {
		h.o.Log.Info("credential typed and submitted", "session", s.name, "alias", rel.Alias, "origin", rel.Origin)
		if code != nil {
			// The same origin's next step may ask for the one-time code: typed there under
			// every rule the password was, else zeroed unused.
			var codeTyped bool
			st, codeTyped, err = si.codeStep(ctx, st, code)
			credential.Zero(code)
			typed = typed || codeTyped
			si.ev.CodeTyped = codeTyped && err == nil
		}
		if err == nil {
			res.Status, err = si.verify(ctx, st)
		}
		if err == nil && res.Status == "authenticated" {
			h.learnPath(ctx, challengeID)
		}
	}
	if typed {
		err = h.endAttempt(ctx, b, s, si.ev, err)
	}
	return err
}

// release has brokerd release p for the session's document st (h.release: the person is
// asked), once the looks are over (si.look.ask): p's session, document and page path are st's.
// The caller zeroes the secret.
func (si *signIn) release(ctx context.Context, st pageState, p brokerapi.ReleaseParams) (brokerapi.Released, []byte, error) {
	path, err := si.s.loadedPath(st.document)
	if err != nil {
		return brokerapi.Released{}, nil, err
	}
	if err := si.look.ask(); err != nil {
		return brokerapi.Released{}, nil, err
	}
	p.Session, p.Document, p.Path = si.s.name, st.document, path
	return si.h.release(ctx, si.look.intact, p)
}

// challenge has brokerd issue a challenge for the session's document st, at si.origin.
func (si *signIn) challenge(ctx context.Context, st pageState) (ch brokerapi.ChallengeResult, err error) {
	err = si.h.withBroker(ctx, func(c *brokerapi.Client) error {
		ch, err = c.Challenge(ctx, brokerapi.ChallengeParams{Session: si.s.name, Document: st.document, Origin: si.origin, Isolated: si.s.isolated})
		return err
	})
	return ch, err
}

// lookPage looks at the session's page, records the URL before in si.ev and sets si.origin.
func (si *signIn) lookPage(ctx context.Context) (st pageState, err error) {
	if st, err = si.h.look(ctx, si.b, si.s); err != nil {
		return st, err
	}
	si.ev.URLBefore = clip.Text(withoutQuery(st.outline.URL), 512)
	if si.origin, err = origin.Canonical(st.outline.Origin); err != nil {
		return st, wire.Errorf(wire.CodeNoLoginForm, "this page's origin cannot hold saved credentials: %w", err)
	}
	return st, nil
}

// loginPage looks at the session's page (lookPage) and finds the sign-in form to use (in the
// top document; a username-only first step counts).
func (si *signIn) loginPage(ctx context.Context) (st pageState, form snapshot.LoginForm, err error) {
	if st, err = si.lookPage(ctx); err != nil {
		return st, form, err
	}
	form, ok := usable(st, firstPage)
	if !ok {
		return st, form, noLoginForm(st)
	}
	return st, form, nil
}

// LookWait bounds what a sign-in does before it asks brokerd for the credential: reading the
// page, a two-step login's first step, the checks of the form and the challenge.
const LookWait = 45 * time.Second

// lookBound is the bound on a sign-in's looks before its release: ctx ends LookWait after
// the sign-in began, and asked is set when the release is asked for. What comes after has
// bounds of its own (the person's time at the prompt, TypeWait, VerifyWait …), and a timeout
// there is never told as "nothing was released".
type lookBound struct {
	ctx    context.Context
	asked  bool
	intact *intactCheck // the look at the browser's processes for the release (intact.go)
}

// errLookTimeout is the end of the look bound: nothing was asked for or released.
var errLookTimeout = wire.SentinelHint(wire.CodeTimeout,
	fmt.Sprintf("the sign-in could not read the page and its form within %v (the page keeps the browser busy); nothing was asked for or released", LookWait),
	"the page kept the browser too busy to be checked: load the sign-in page again (headless visit) and retry")

// ask is called right before the release is asked for: a look bound already ended is
// errLookTimeout (nothing is asked), else the looks are over.
func (l *lookBound) ask() error {
	if l.ctx.Err() != nil {
		return errLookTimeout
	}
	l.asked = true
	return nil
}

// timeout is err, or errLookTimeout when err is the end of the look bound before the release
// was asked for while the caller (ctx) still waits.
func (l *lookBound) timeout(ctx context.Context, err error) error {
	if err == nil || l.asked || ctx.Err() != nil || !errors.Is(l.ctx.Err(), context.DeadlineExceeded) || !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return errLookTimeout
}

// firstStep types account into the username-only first step of a two-step login, submits it
// and returns the password step's page and form (same origin only).
func (si *signIn) firstStep(ctx context.Context, st pageState, form snapshot.LoginForm, account string) (pageState, snapshot.LoginForm, error) {
	if err := checkForm(st, form, si.origin, si.also...); err != nil {
		return st, form, err
	}
	if err := si.typeAccount(ctx, st.refs[form.Username], st.document, account); err != nil {
		return st, form, err
	}
	si.s.drain()
	// An error the page showed before (hindustantimes' "Incorrect OTP*" template beside its
	// e-mail step) is not the site's answer to the step while the document stays. (A site
	// answering on the same document with that very text again is not told apart: the step
	// then ends at VerifyWait, "no password field after the first login step", the same
	// code, nothing more typed.)
	before, shownBefore := st.document, loginErrorsShown(st.outline)
	if err := si.submit(ctx, st, form); err != nil {
		return st, form, err
	}
	si.ev.Steps++
	// The password step comes as a new page, or in the same one (a single-page sign-in shows
	// the password field once the account is checked): looked for until it shows, a moment
	// at most (VerifyWait).
	wctx, cancel := context.WithTimeout(ctx, VerifyWait)
	defer cancel()
	si.s.settle(wctx)
	for {
		st, err := si.h.look(ctx, si.b, si.s)
		if err != nil {
			return st, form, err
		}
		if o, err := origin.Canonical(st.outline.Origin); err != nil || o != si.origin {
			return st, form, wire.Errorf(wire.CodeOriginMismatch, "the second step of the login is on another origin")
		}
		if f, ok := usable(st, secondPage); ok {
			return st, f, nil
		}
		if st.document != before {
			clear(shownBefore)
		}
		if loginErrorText(st.outline, shownBefore) != "" {
			return st, form, wire.Errorf(wire.CodeNoLoginForm, "the site answered the first login step with an error, and shows no password field")
		}
		select {
		case <-wctx.Done():
			return st, form, wire.Errorf(wire.CodeNoLoginForm, "no password field after the first login step")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// codeStep waits (bounded by VerifyWait) for the page the password's submit led to. When it
// is another document of si.origin, or the same document (a single-page app) showing a code
// field it did not show before the submit (newStep), with a one-time-code field
// (snapshot.CodeForms) in the top document, the code is typed there and submitted with every
// containment rule of the password (fillVerified: checks before and after typing, taint,
// navigation gate, the form's action and submitters on si.origin by POST); it returns that
// page's state, for verify. A page that shows the sign-in form again, an error, or no code
// field returns with nothing typed (verify then tells the outcome).
func (si *signIn) codeStep(ctx context.Context, before pageState, code []byte) (pageState, bool, error) {
	h, b, s := si.h, si.b, si.s
	wctx, cancel := context.WithTimeout(ctx, VerifyWait)
	defer cancel()
	s.settle(wctx)
	seen := map[string]int{}
	for {
		if si.refused() {
			return before, false, nil
		}
		st, err := h.look(wctx, b, s)
		if err == nil {
			sameDoc := st.document == before.document
			o, oerr := origin.Canonical(st.outline.Origin)
			if oerr != nil || o != si.origin {
				return before, false, nil // another origin: never typed there
			}
			for _, f := range snapshot.CodeForms(st.outline) {
				if f.Frame != "" { // a frame's: never typed into (errFramedForm)
					continue
				}
				if sameDoc && !newStep(before, st, f) {
					continue // shown with the password: not the step after it
				}
				if err := checkForm(st, f, si.origin); err != nil {
					return st, false, err
				}
				// The person approved the code for the sign-in page: a code page elsewhere
				// on the origin (one a redirect the agent steered led to, such as
				// /login?next=/their/page) gets it only when they are asked about it.
				if p := pathOf(st.outline.URL); !slices.Contains(si.codePaths, p) {
					return st, false, wire.Errorf(wire.CodeCodePathUnknown,
						"the site asks for the one-time code at %s, which is not this credential's sign-in page: the password was sent, the code was not typed", clip.Text(p, 200))
				}
				st.forms = snapshot.CodeForms(st.outline)
				if _, err := h.closeOpened(ctx, b, s); err != nil {
					return st, false, h.browserErr(err)
				}
				tctx, tcancel := context.WithTimeout(ctx, TypeWait)
				typed, err := si.fillVerified(tctx, st, f, "", code, codePage)
				tcancel()
				if err == nil {
					h.o.Log.Info("one-time code typed and submitted", "session", s.name, "origin", si.origin)
				}
				return st, typed, err
			}
			// The sign-in again, or a new page that still shows no code field a moment after
			// it settled: no code step (a site that remembers this browser asks for none).
			// On the same document (a single-page app answering the submit with a fetch, or a
			// script that checks something before it submits) the sign-in form stays shown
			// while the answer comes, however long the site takes: there only an error shown,
			// or the sign-in form gone for a few settled looks, ends the wait (else
			// VerifyWait), and never while a navigation of the page is under way.
			switch {
			case !sameDoc:
				if len(st.forms) > 0 || looksSettled(&seen, st) {
					return before, false, nil
				}
			case s.navPending.Load():
			case loginErrorText(st.outline, nil) != "":
				return before, false, nil
			case !hasPasswordForm(st) && looksSettled(&seen, st):
				return before, false, nil
			}
		}
		select {
		case e := <-s.events:
			switch e.Method {
			case "Page.frameNavigated":
				s.waitLoad(wctx, "")
			case "Page.frameStartedLoading":
				s.waitStopped(wctx, NavigationWait) // a load that may never fire one (outcome.go)
			}
		case <-time.After(200 * time.Millisecond):
		case <-wctx.Done():
			return before, false, nil
		}
	}
}

// looksSettled counts the looks at st's document without a code field; the third one (about
// half a second after the page settled) ends the wait.
func looksSettled(seen *map[string]int, st pageState) bool {
	(*seen)[st.document]++
	return (*seen)[st.document] >= 3 && !st.outline.Truncated
}

// validCode reports whether c is a one-time code as brokerd computes them: 6 to 8 ASCII digits.
func validCode(c []byte) bool {
	if len(c) < 6 || len(c) > 8 {
		return false
	}
	for _, d := range c {
		if d < '0' || d > '9' {
			return false
		}
	}
	return true
}

// newStep reports whether the code form f of the same document st appeared after the
// password's submit: its code field is none of the elements the page showed before (the
// sign-in's own fields included), so a page that shows a code field beside the password never
// gets the code typed at the password's submit.
func newStep(before, st pageState, f snapshot.LoginForm) bool {
	t, ok := st.refs[f.Password]
	if !ok || t.BackendNodeID == 0 {
		return false
	}
	for _, old := range before.refs {
		if old.BackendNodeID == t.BackendNodeID {
			return false
		}
	}
	return true
}

// stepUp types only the alias's one-time code into the one-time-code field of the session's
// page (a verification step of a signed-in site): a release of its own (purpose code, whose
// prompt says only the code is released), then the code-step rules of codeStep.
func (si *signIn) stepUp(ctx context.Context, p control.AuthParams, res *control.AuthResult) error {
	h, b, s, look := si.h, si.b, si.s, si.look
	st, err := h.look(look.ctx, b, s)
	if err != nil {
		return err
	}
	si.ev.URLBefore = clip.Text(withoutQuery(st.outline.URL), 512)
	o, err := origin.Canonical(st.outline.Origin)
	if err != nil {
		return wire.Errorf(wire.CodeNoLoginForm, "this page's origin cannot hold saved credentials: %w", err)
	}
	si.origin, res.Origin = o, o
	var form snapshot.LoginForm
	found := false
	framed := false
	for _, f := range snapshot.CodeForms(st.outline) {
		if f.Frame == "" {
			form, found = f, true
			break
		}
		framed = true
	}
	if !found && framed {
		return errFramedCode
	}
	if !found {
		return wire.Errorf(wire.CodeNoLoginForm, "no one-time-code field in this page")
	}
	st.forms = snapshot.CodeForms(st.outline)
	if err := checkForm(st, form, o); err != nil {
		return err
	}
	if _, err := h.closeOpened(look.ctx, b, s); err != nil {
		return h.browserErr(err)
	}
	challengeID := p.Challenge
	if challengeID == "" {
		ch, err := si.challenge(look.ctx, st)
		if err != nil {
			return err
		}
		challengeID = ch.Challenge
	}
	rel, secret, err := si.release(ctx, st, brokerapi.ReleaseParams{Challenge: challengeID, Alias: p.Alias,
		Purpose: brokerapi.PurposeCode, Field: fieldLabel(st.outline, form.Password)})
	defer func() { credential.Zero(secret) }()
	if err != nil {
		return err
	}
	pw, code := credential.SplitFactor(secret)
	if !rel.Code || len(pw) != 0 || !validCode(code) {
		return wire.Errorf(wire.CodeInvalidArgument, "brokerd's one-time code for alias %q is malformed; nothing was typed", rel.Alias)
	}
	if rel.Origin != o {
		return wire.Errorf(wire.CodeOriginMismatch, "the credential is for %s, the page is %s", rel.Origin, o)
	}
	si.listener, si.also = rel.Listener, rel.AlsoOrigins
	tctx, tcancel := context.WithTimeout(ctx, TypeWait)
	typed, err := si.fillVerified(tctx, st, form, "", code, codePage)
	tcancel()
	credential.Zero(secret)
	if err == nil {
		si.ev.CodeTyped = true
		h.o.Log.Info("one-time code typed and submitted (step-up)", "session", s.name, "alias", rel.Alias, "origin", o)
		res.Status, err = si.verify(ctx, st)
	}
	if typed {
		err = h.endAttempt(ctx, b, s, si.ev, err)
	}
	return err
}

// noLoginForm is NO_LOGIN_FORM, saying why a password form of the page is not used.
func noLoginForm(st pageState) error {
	for _, f := range st.forms {
		if f.Password != "" && !f.SignIn && f.Frame == "" {
			return wire.Errorf(wire.CodeNoLoginForm, "the page's password form is not a sign-in form: %s", f.NotSignIn)
		}
	}
	for _, f := range st.forms {
		if f.Frame != "" && (f.SignIn || f.Password != "") {
			return errFramedForm
		}
	}
	return wire.Errorf(wire.CodeNoLoginForm, "no login form in this page")
}

// errFramedForm refuses a sign-in form in a frame: the page that frames it can script a
// frame of its own origin (red-team round 30: a page the agent published on the origin
// framed the real /login and read the password as it was typed), and one of another origin
// is not the site's. Only the top document, which no other window can script
// (openers.go), is signed in on.
var errFramedForm = wire.SentinelHint(wire.CodeNoLoginForm,
	"the page's sign-in form is in a frame; a frame is never signed in on (the page around it can read what is typed); nothing was asked for or released",
	"visit the sign-in page itself (the frame's address), then sign in there")

// errFramedCode is errFramedForm for a one-time-code field (auth login --code-only).
var errFramedCode = wire.SentinelHint(wire.CodeNoLoginForm,
	"the page's one-time-code field is in a frame; a frame is never typed into (the page around it can read what is typed); nothing was asked for or released",
	"visit the page that asks for the code itself (the frame's address), then ask for the code there")

// pageState is one look at a session's page.
type pageState struct {
	document string // main frame id + loader id: changes with every navigation
	outline  snapshot.Outline
	refs     map[string]snapshot.Target
	forms    []snapshot.LoginForm
}

func (h *Host) look(ctx context.Context, b *cdp.Browser, s *session) (pageState, error) {
	var st pageState
	var err error
	// With the sign-in's bounds, wider than an agent's outline: a real page's sign-in form is
	// often further down than 400 elements.
	if st.document, st.outline, st.refs, err = h.captureWith(ctx, b, s, snapshot.SignInOptions()); err != nil {
		return st, err
	}
	st.forms = snapshot.LoginForms(st.outline)
	return st, nil
}

// Which page of a sign-in a form is looked for on.
const (
	firstPage  = iota // a sign-in form, or the username-only first step of a two-step one
	secondPage        // the password page of a two-step sign-in: a password form may lack an account field
	codePage          // the one-time-code step after the password (snapshot.CodeForms)
)

// usable picks the best sign-in form whose fields live in the top document (LoginForms lists
// the best first); forms in frames (errFramedForm) are never used, nor forms the detection
// does not judge to be sign-in forms (snapshot.LoginForm.SignIn). On the page after a
// first step the host typed (secondPage), a password field judged for a sign-in by its
// purpose is enough: the host came there from the sign-in's first step.
func usable(st pageState, page int) (snapshot.LoginForm, bool) {
	for _, f := range st.forms {
		if f.Frame != "" {
			continue
		}
		if page == firstPage && f.SignIn || page == secondPage && f.Password != "" && secondStep(f) {
			return f, true
		}
	}
	return snapshot.LoginForm{}, false
}

// secondStep reports whether f, a password form on the page a first step led to, may take the
// password.
func secondStep(f snapshot.LoginForm) bool { return f.SignIn || f.Purpose == "sign-in" }

// authRequired issues a challenge when the session's page holds a usable login form. Any
// failure (no broker, no form) just means no auth_required, but a page that shows a released
// secret: its look discarded it, and the verb answers that (echoed.go).
func (h *Host) authRequired(ctx context.Context, b *cdp.Browser, s *session) (*control.AuthRequired, error) {
	st, err := h.look(ctx, b, s)
	if errors.Is(err, errEchoed) {
		return nil, err
	}
	if err != nil {
		return nil, nil
	}
	o, err := origin.Canonical(st.outline.Origin)
	if err != nil {
		return nil, nil
	}
	f, ok := usable(st, firstPage)
	_, _, offers := passkeyTrigger(st)
	if !offers && (!ok || checkForm(st, f, o) != nil) {
		return nil, nil // a form that would be refused gets no challenge: 'auth login' says why
	}
	var ch brokerapi.ChallengeResult
	err = h.withBroker(ctx, func(c *brokerapi.Client) error {
		var err error
		ch, err = c.Challenge(ctx, brokerapi.ChallengeParams{Session: s.name, Document: st.document, Origin: o, Isolated: s.isolated})
		return err
	})
	if err != nil {
		h.o.Log.Warn("no challenge for a login form", "session", s.name, "code", wire.CodeOf(err))
		return nil, nil
	}
	ar := &control.AuthRequired{Challenge: ch.Challenge, Origin: ch.Origin, Aliases: ch.Aliases, ExpiresAt: ch.ExpiresAt}
	if !ok || checkForm(st, f, o) != nil {
		// A passkey sign-in page without a usable form: only its passkeys can sign in here.
		if len(ch.Passkeys) == 0 {
			return nil, nil
		}
		ar.Kind, ar.Aliases = "passkey", ch.Passkeys
	}
	return ar, nil
}
