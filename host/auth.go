package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/loopback"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/rpc"
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

// brokerClient returns the host's broker connection, dialling it when needed.
func (h *Host) brokerClient(ctx context.Context) (*brokerapi.Client, error) {
	h.bmu.Lock()
	defer h.bmu.Unlock()
	if h.broker != nil {
		return h.broker, nil
	}
	if h.o.Broker == nil {
		return nil, wire.Errorf(wire.CodeBrokerUnavail, "no broker configured")
	}
	c, err := h.o.Broker(ctx)
	if err != nil {
		return nil, wire.Errorf(wire.CodeBrokerUnavail, "%w", err)
	}
	// A new connection (first use, or brokerd restarted): register every isolated session
	// before anything else, so brokerd never answers for one of them from the vault. Their
	// stores start empty: what an earlier brokerd held died with it.
	for name := range h.isolated {
		if err := c.OpenSession(ctx, name); err != nil {
			c.Close()
			return nil, fmt.Errorf("register isolated session %q with brokerd: %w", name, err)
		}
	}
	h.broker = c
	return c, nil
}

// registerIsolated tells brokerd about a new isolated session (its store lives as long as the
// host's broker connection). Without a broker the session still works for browsing; it is
// registered when the connection is (re)made.
func (h *Host) registerIsolated(ctx context.Context, name string) error {
	h.bmu.Lock()
	h.isolated[name] = true
	h.bmu.Unlock()
	if h.o.Broker == nil {
		return nil
	}
	err := h.withBroker(ctx, func(c *brokerapi.Client) error { return c.OpenSession(ctx, name) })
	if err == nil || wire.CodeOf(err) == wire.CodeBrokerUnavail || errors.Is(err, rpc.ErrUnreachable) {
		if err != nil {
			h.o.Log.Warn("isolated session not yet registered with brokerd", "session", name, "code", wire.CodeOf(err))
		}
		return nil
	}
	h.bmu.Lock()
	delete(h.isolated, name)
	h.bmu.Unlock()
	return err
}

// forgetIsolated has brokerd zero the store of the isolated session name ("" = all of them).
// With no broker connection there is no store to zero.
func (h *Host) forgetIsolated(name string) {
	h.bmu.Lock()
	defer h.bmu.Unlock()
	var names []string
	for n := range h.isolated {
		if name == "" || n == name {
			names = append(names, n)
			delete(h.isolated, n)
		}
	}
	if h.broker == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, n := range names {
		if err := h.broker.CloseSession(ctx, n); err != nil {
			h.o.Log.Warn("brokerd did not close an isolated session", "session", n, "code", wire.CodeOf(err))
			if errors.Is(err, rpc.ErrUnreachable) {
				// Whatever it held goes with this connection. (A mere timeout does not close
				// it: that would wipe every other isolated session's store too.)
				h.broker.Close()
				h.broker = nil
				return
			}
		}
	}
}

// withBroker runs fn with the broker connection, redialling once if the connection was lost.
func (h *Host) withBroker(ctx context.Context, fn func(*brokerapi.Client) error) error {
	for attempt := 0; ; attempt++ {
		c, err := h.brokerClient(ctx)
		if err != nil {
			return err
		}
		err = fn(c)
		if attempt == 0 && errors.Is(err, rpc.ErrUnreachable) && ctx.Err() == nil {
			h.bmu.Lock()
			if h.broker == c {
				h.broker.Close()
				h.broker = nil
			}
			h.bmu.Unlock()
			continue
		}
		return err
	}
}

// loginPage looks at the session's page and finds the login form to use (in the top document
// or a frame of the page's own origin; a username-only first step counts). It records the URL
// before in ev.
func (h *Host) loginPage(ctx context.Context, b *cdp.Browser, s *session, ev *control.Evidence) (st pageState, pageOrigin string, form snapshot.LoginForm, err error) {
	if st, err = h.look(ctx, b, s); err != nil {
		return st, "", form, err
	}
	ev.URLBefore = bound(withoutQuery(st.outline.URL), 512)
	if pageOrigin, err = origin.Canonical(st.outline.Origin); err != nil {
		return st, "", form, wire.Errorf(wire.CodeNoLoginForm, "this page's origin cannot hold saved credentials: %w", err)
	}
	form, ok := usable(st, firstPage)
	if !ok {
		return st, pageOrigin, form, noLoginForm(st)
	}
	return st, pageOrigin, form, nil
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
	if st.document, st.outline, st.refs, err = h.capture(ctx, b, s); err != nil {
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

// usable picks the first sign-in form whose fields live in the top document; forms in frames
// (errFramedForm) are never used, nor forms without evidence that they are sign-in forms
// (snapshot.LoginForm.SignIn).
func usable(st pageState, page int) (snapshot.LoginForm, bool) {
	for _, f := range st.forms {
		if f.Frame != "" {
			continue
		}
		switch {
		case page == firstPage && f.SignIn:
			return f, true
		case page == secondPage && f.Password != "" && (f.SignIn || f.NotSignIn == snapshot.NoAccountField):
			return f, true
		}
	}
	return snapshot.LoginForm{}, false
}

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
	if !ok || checkForm(st, f, o) != nil {
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
	return &control.AuthRequired{Challenge: ch.Challenge, Origin: ch.Origin, Aliases: ch.Aliases, ExpiresAt: ch.ExpiresAt}, nil
}

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
	clear(s.refs)
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
	if p.CodeOnly {
		return res, done(h.stepUp(ctx, look, b, s, p, &res))
	}
	// The page is the 401 answer of a Basic challenge of its server: answer that (basicauth.go).
	if u, _, err := h.pageInfo(look.ctx, b, s); err == nil {
		if seen := s.basicPending(u); seen != nil {
			return res, done(h.basicLogin(ctx, look, b, s, p, seen, &res))
		}
	}
	res, err := h.formLogin(ctx, look, b, s, p, res)
	return res, done(err)
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
	intact *intactCheck // the look at the browser's processes for the release (requester.go)
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

// formLogin is the sign-in into a form of the page (one page, or a two-step login), look
// bounding what comes before the release.
func (h *Host) formLogin(ctx context.Context, look *lookBound, b *cdp.Browser, s *session, p control.AuthParams, res control.AuthResult) (control.AuthResult, error) {
	st, pageOrigin, form, err := h.loginPage(look.ctx, b, s, &res.Evidence)
	res.Origin = pageOrigin
	if err != nil {
		return res, err
	}

	// Two-step login: type the account (metadata, no release needed) and submit, then continue
	// on the password page of the same origin.
	page := firstPage
	if form.Password == "" {
		page = secondPage
		account, err := h.accountFor(look.ctx, s, pageOrigin, p.Alias)
		if err != nil {
			return res, err
		}
		if st, form, err = h.firstStep(look.ctx, b, s, st, form, pageOrigin, account, &res.Evidence); err != nil {
			return res, err
		}
		p.Challenge = "" // the caller's challenge was for the first page
	}

	// Refuse a form that could never take the password before anyone is asked to approve.
	if err := checkForm(st, form, pageOrigin); err != nil {
		return res, err
	}
	// No other window may hold a reference to the page while the person decides and the host
	// types (navguard.go): a popup of the page's could navigate it under the typing.
	if _, err := h.closeOpened(look.ctx, b, s); err != nil {
		return res, h.browserErr(err)
	}
	challengeID := p.Challenge
	if challengeID == "" {
		err = h.withBroker(look.ctx, func(c *brokerapi.Client) error {
			ch, err := c.Challenge(look.ctx, brokerapi.ChallengeParams{Session: s.name, Document: st.document, Origin: pageOrigin, Isolated: s.isolated})
			challengeID = ch.Challenge
			return err
		})
		if err != nil {
			return res, err
		}
	}
	var (
		rel    brokerapi.Released
		secret []byte
	)
	defer func() { credential.Zero(secret) }()
	loginPath, err := s.loadedPath(st.document)
	if err != nil {
		return res, err
	}
	if err := look.ask(); err != nil {
		return res, err
	}
	rel, secret, err = h.release(ctx, look.intact, brokerapi.ReleaseParams{Challenge: challengeID, Alias: p.Alias, Session: s.name, Document: st.document,
		Path: loginPath, Field: fieldLabel(st.outline, form.Password), NewPath: p.NewLoginPath})
	if err != nil {
		return res, err
	}
	// With a one-time code (released under the same approval), the secret is the password,
	// NUL, the code: the code gets a buffer of its own, zeroed when the attempt ends.
	var code []byte
	defer func() { credential.Zero(code) }()
	if rel.Code {
		pw, c := credential.SplitFactor(secret)
		if !validCode(c) {
			return res, wire.Errorf(wire.CodeInvalidArgument, "brokerd's one-time code for alias %q is malformed; nothing was typed", rel.Alias)
		}
		code = append(make([]byte, 0, len(c)), c...)
		credential.Zero(secret[len(pw):])
		secret = pw
	}
	// An item another program wrote into the keyring may hold what headless cannot type as it
	// is (not UTF-8 text, see credential.ValidSecret): refused before anything is focused.
	if err := credential.ValidSecret(secret); err != nil {
		return res, wire.Errorf(wire.CodeInvalidArgument, "the saved password of alias %q cannot be typed (%w); nothing was typed", rel.Alias, err)
	}
	if rel.Origin != pageOrigin {
		return res, wire.Errorf(wire.CodeOriginMismatch, "the credential is for %s, the page is %s", rel.Origin, pageOrigin)
	}
	tctx, tcancel := context.WithTimeout(ctx, TypeWait)
	typed, err := h.fillVerified(tctx, b, s, st, form, rel.Origin, rel.Account, rel.Listener, secret, &res.Evidence, page)
	tcancel()
	credential.Zero(secret)
	if err == nil {
		h.o.Log.Info("credential typed and submitted", "session", s.name, "alias", rel.Alias, "origin", rel.Origin)
		if code != nil {
			// The same origin's next step may ask for the one-time code: typed there under
			// every rule the password was, else zeroed unused.
			var codeTyped bool
			st, codeTyped, err = h.codeStep(ctx, b, s, st, rel.Origin, rel.Listener, code, &res.Evidence)
			credential.Zero(code)
			typed = typed || codeTyped
			res.Evidence.CodeTyped = codeTyped && err == nil
		}
		if err == nil {
			err = h.verify(ctx, b, s, st, &res.Status, &res.Evidence, res.Origin)
		}
		if err == nil && res.Status == "authenticated" {
			h.learnPath(ctx, challengeID)
		}
	}
	if typed {
		err = h.endAttempt(ctx, b, s, &res.Evidence, err)
	}
	return res, err
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

// codeStep waits (bounded by VerifyWait) for the page the password's submit led to. When it
// is another document of credOrigin, or the same document (a single-page app) showing a code
// field it did not show before the submit (newStep), with a one-time-code field
// (snapshot.CodeForms) in the top document, the code is typed there and submitted with every
// containment rule of the password (fillVerified: checks before and after typing, taint,
// navigation gate, the form's action and submitters on credOrigin by POST); it returns that
// page's state, for verify. A page that shows the sign-in form again, an error, or no code
// field returns with nothing typed (verify then tells the outcome).
func (h *Host) codeStep(ctx context.Context, b *cdp.Browser, s *session, before pageState, credOrigin, listener string, code []byte, ev *control.Evidence) (pageState, bool, error) {
	wctx, cancel := context.WithTimeout(ctx, VerifyWait)
	defer cancel()
	s.settle(wctx)
	seen := map[string]int{}
	for {
		st, err := h.look(wctx, b, s)
		if err == nil {
			sameDoc := st.document == before.document
			o, oerr := origin.Canonical(st.outline.Origin)
			if oerr != nil || o != credOrigin {
				return before, false, nil // another origin: never typed there
			}
			for _, f := range snapshot.CodeForms(st.outline) {
				if f.Frame != "" { // a frame's: never typed into (errFramedForm)
					continue
				}
				if sameDoc && !newStep(before, st, f) {
					continue // shown with the password: not the step after it
				}
				if err := checkForm(st, f, credOrigin); err != nil {
					return st, false, err
				}
				st.forms = snapshot.CodeForms(st.outline)
				if _, err := h.closeOpened(ctx, b, s); err != nil {
					return st, false, h.browserErr(err)
				}
				tctx, tcancel := context.WithTimeout(ctx, TypeWait)
				typed, err := h.fillVerified(tctx, b, s, st, f, credOrigin, "", listener, code, ev, codePage)
				tcancel()
				if err == nil {
					h.o.Log.Info("one-time code typed and submitted", "session", s.name, "origin", credOrigin)
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
			case loginErrorText(st.outline) != "":
				return before, false, nil
			case !hasPasswordForm(st) && looksSettled(&seen, st):
				return before, false, nil
			}
		}
		select {
		case e := <-s.events:
			if e.Method == "Page.frameStartedLoading" || e.Method == "Page.frameNavigated" {
				s.waitLoad(wctx, "")
			}
		case <-time.After(200 * time.Millisecond):
		case <-wctx.Done():
			return before, false, nil
		}
	}
}

// firstStep types account into the username-only first step of a two-step login, submits it
// and returns the password step's page and form (same origin only).
func (h *Host) firstStep(ctx context.Context, b *cdp.Browser, s *session, st pageState, form snapshot.LoginForm, pageOrigin, account string, ev *control.Evidence) (pageState, snapshot.LoginForm, error) {
	if err := checkForm(st, form, pageOrigin); err != nil {
		return st, form, err
	}
	if err := h.typeAccount(ctx, b, s, st.refs[form.Username], st.document, account); err != nil {
		return st, form, err
	}
	s.drain()
	if err := h.submit(ctx, b, s, st, form, form.Username); err != nil {
		return st, form, err
	}
	ev.Steps++
	s.settle(ctx)
	st, err := h.look(ctx, b, s)
	if err != nil {
		return st, form, err
	}
	if o, err := origin.Canonical(st.outline.Origin); err != nil || o != pageOrigin {
		return st, form, wire.Errorf(wire.CodeOriginMismatch, "the second step of the login is on another origin")
	}
	form, ok := usable(st, secondPage)
	if !ok {
		return st, form, wire.Errorf(wire.CodeNoLoginForm, "no password field after the first login step")
	}
	return st, form, nil
}

// fillVerified types account and secret into form (found in st) and submits it. Before typing,
// after a fresh look at the page: the same document, the same field nodes still a sign-in form
// (page says which page of a sign-in it is), its frame, its action and every submitter on
// credOrigin by POST, the fields visible, and the focus on exactly the field being typed into,
// right before and after typing (the account too). After typing and right before the submit,
// all of it once more, and the password field still a password field. The secret goes only
// through the hand-built Input.insertText; the caller still zeroes it. typed says whether the
// secret was (or may have been) typed: the caller then ends the attempt with endAttempt.
//
// For a loopback origin the process listening there is looked up once more right before
// typing: listener is the key brokerd saw when it released the secret ("" when the secret
// came from the person's terminal); another listener now, or an origin served by more than
// one process, is ORIGIN_AMBIGUOUS and nothing is typed.
func (h *Host) fillVerified(ctx context.Context, b *cdp.Browser, s *session, st pageState, form snapshot.LoginForm, credOrigin, account, listener string, secret []byte, ev *control.Evidence, page int) (typed bool, err error) {
	fresh, form, err := h.recheck(ctx, b, s, st, form, credOrigin, page, "after the challenge was issued; nothing was typed")
	if err != nil {
		return false, err
	}
	// The browser is looked at again right before typing, not only before the release: the
	// person may take up to the presence timeout to answer, and a password typed by the person
	// (--interactive) had no look at all.
	if err := h.browserIntact("nothing was typed", false); err != nil {
		return false, err
	}
	s.markHistory(ctx, h, b)
	for _, ref := range []string{form.Username, form.Password} {
		if ref == "" {
			continue
		}
		if err := h.visible(ctx, b, s, fresh.refs[ref]); err != nil {
			return false, err
		}
	}
	// From before the first field is focused (a focus handler may navigate) until the submit,
	// no navigation of the page can start (navguard.go).
	gate, err := h.holdNavigations(ctx, b, s)
	if err != nil {
		return false, h.browserErr(err)
	}
	defer gate.end(ctx)
	if form.Username != "" {
		if err := h.typeAccount(ctx, b, s, fresh.refs[form.Username], st.document, account); err != nil {
			return false, err
		}
	}
	pw := fresh.refs[form.Password]
	// The last checks, as close to typing as the protocol allows: the same document (no
	// navigation slipped in) and the focus on exactly the verified password field. And
	// before anything is typed into it: Chromium must never save what the field will hold
	// with the history entry (Blink's form state, which a back step restores into a document
	// the taint does not know, and which goes into the profile's Sessions/ files); a
	// one-time code field is a text field, so that would be the code.
	if err := h.readyToType(ctx, b, s, pw, st.document, "password", true); err != nil {
		return false, err
	}
	if err := h.sameListener(credOrigin, listener); err != nil {
		return false, err
	}
	if n, err := h.closeOpened(ctx, b, s); err != nil || n > 0 {
		if err == nil {
			err = wire.Errorf(wire.CodeDocumentChanged, "the login page opened a window since the person was asked (it could navigate the page); it was closed, and nothing was typed")
		}
		return false, err
	}
	if s.navPending.Load() || gate.tried(ctx) {
		return false, wire.Errorf(wire.CodeDocumentChanged, "a navigation of the page was under way when the password was to be typed; nothing was typed")
	}
	// And no window could have scripted the document since it loaded (openers.go).
	if d := s.loaded.Load(); d == nil || d.document != st.document {
		return false, wire.Errorf(wire.CodeDocumentChanged, "the page's document is not the one the host saw load; nothing was typed")
	} else if d.tainted.Load() {
		return false, errReachable
	}
	s.addTaint(st.document, pw) // before the first character: every later path clears it
	if err := b.InsertSecret(ctx, s.sid, secret); err != nil {
		return true, h.browserErr(err)
	}
	if gate.tried(ctx) {
		h.discardPage(ctx, b, s)
		ev.PageDiscarded = true
		return true, errNavDuringTyping
	}
	if err := h.focusedOn(ctx, b, s, pw, st.document, "password"); err != nil {
		// Focus or document moved while typing: the text may have gone anywhere in the
		// page, so the page goes, and nothing is submitted.
		h.discardPage(ctx, b, s)
		ev.PageDiscarded = true
		return true, err
	}
	// Right before the submit, after typing: the page had a moment with the password in it.
	after, form, err := h.recheck(ctx, b, s, st, form, credOrigin, page, "while the password was typed; nothing was submitted")
	if err != nil {
		return true, err
	}
	if gate.tried(ctx) {
		h.discardPage(ctx, b, s)
		ev.PageDiscarded = true
		return true, errNavDuringTyping
	}
	gate.end(ctx) // the host's own submit navigates
	s.drain()
	if err := h.submit(ctx, b, s, after, form, form.Password); err != nil {
		return true, err
	}
	ev.Steps++
	return true, nil
}

// sameListener checks, for a loopback origin, that one process serves it and that it is the
// one brokerd saw at the release (want; "" to check only that one process serves it).
func (h *Host) sameListener(o, want string) error {
	if !loopback.IsLoopback(o) {
		return nil
	}
	var l loopback.Listener
	var err error
	// The sockets only: their key and whether they are one listener decide; who holds them
	// is looked up only to name them in the error.
	hardening.AsUser(func() { l, err = h.o.Loopback.Sockets(o) }) // the user's processes, as the user sees them
	switch {
	case errors.Is(err, loopback.ErrAmbiguous):
		return wire.Errorf(wire.CodeOriginAmbiguous, "%w; nothing was typed", err)
	case err != nil:
		return wire.Errorf(wire.CodeOriginUnverified, "%w; nothing was typed", err)
	case want != "" && l.Key() != want:
		if named, ferr := h.findAsUser(o); ferr == nil || errors.Is(ferr, loopback.ErrAmbiguous) {
			l = named
		}
		return wire.Errorf(wire.CodeOriginAmbiguous, "the process listening on %s changed since the release (now: %s); nothing was typed", o, l)
	}
	return nil
}

// findAsUser names the listener of o with its holders, as the user sees them.
func (h *Host) findAsUser(o string) (l loopback.Listener, err error) {
	hardening.AsUser(func() { l, err = h.o.Loopback.Find(o) })
	return l, err
}

// recheck takes a fresh look at the page and checks that it still shows st's document, that
// form's field nodes still form a sign-in form (and the password field is still of type
// password), and that checkForm still passes on credOrigin. It returns the fresh look and the
// form as found in it; when says when a change happened, for the error.
func (h *Host) recheck(ctx context.Context, b *cdp.Browser, s *session, st pageState, form snapshot.LoginForm, credOrigin string, page int, when string) (pageState, snapshot.LoginForm, error) {
	fresh, err := h.look(ctx, b, s)
	if err != nil {
		return fresh, form, err
	}
	if page == codePage {
		fresh.forms = snapshot.CodeForms(fresh.outline)
	}
	if fresh.document != st.document {
		return fresh, form, wire.Errorf(wire.CodeDocumentChanged, "the page changed %s", when)
	}
	g, ok := sameForm(st, form, fresh)
	if !ok {
		return fresh, form, wire.Errorf(wire.CodeDocumentChanged, "the login form changed %s", when)
	}
	if page != codePage && g.Password != "" && fresh.refs[g.Password].Type != "password" {
		return fresh, form, wire.Errorf(wire.CodeDocumentChanged, "the password field is no longer a password field %s", when)
	}
	if !g.SignIn && !(page == secondPage && g.NotSignIn == snapshot.NoAccountField) {
		return fresh, form, wire.Errorf(wire.CodeNoLoginForm, "the form is no longer a sign-in form %s: %s", when, g.NotSignIn)
	}
	if err := checkForm(fresh, g, credOrigin); err != nil {
		return fresh, form, err
	}
	return fresh, g, nil
}

// accountFor reads the account of alias at origin from the broker's metadata (no secret): the
// isolated session's own store, or the vault for a normal session.
func (h *Host) accountFor(ctx context.Context, s *session, o, alias string) (string, error) {
	var creds []brokerapi.Credential
	err := h.withBroker(ctx, func(c *brokerapi.Client) error {
		var err error
		if s.isolated {
			creds, err = c.ListIn(ctx, s.name, o)
		} else {
			creds, err = c.List(ctx, o)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	for _, c := range creds {
		if strings.EqualFold(c.Alias, alias) {
			return c.Account, nil
		}
	}
	return "", wire.Errorf(wire.CodeAliasUnknown, "no alias %q at %s", alias, o)
}

// checkForm verifies, before anything is typed (and again right before the submit), that the
// fields' frame is on want and that submitting the form can only send them to want by POST:
// the form's own action and method, and every one of its submit buttons, hidden ones
// included (Enter submits through the first one in tree order, scripts through any). It is
// checked before anyone is asked to approve a release.
func checkForm(st pageState, f snapshot.LoginForm, want string) error {
	for _, ref := range []string{f.Username, f.Password} {
		if ref == "" {
			continue
		}
		t, ok := st.refs[ref]
		if !ok {
			return wire.Errorf(wire.CodeNoLoginForm, "the login field is gone")
		}
		fo, err := origin.Canonical(originOf(t.DocumentURL))
		if err != nil || fo != want {
			return wire.Errorf(wire.CodeOriginMismatch, "the login field's frame is not on %s", want)
		}
	}
	// Only a real form with a known action and a visible submit button is used: fields outside
	// a form, or a form cut from a truncated outline, leave nothing to verify.
	fe, ok := formElement(st, f.Form)
	if f.Form == "" || !ok || f.Submit == "" {
		return wire.Errorf(wire.CodeNoLoginForm, "no login form with a visible submit button and a known action")
	}
	sameOrigin := func(o string) bool {
		c, err := origin.Canonical(o)
		return err == nil && c == want
	}
	if !sameOrigin(fe.ActionOrigin) {
		return wire.Errorf(wire.CodeFormCrossOrigin, "the login form submits to %s, not %s", bound(fe.ActionOrigin, 200), want)
	}
	for _, sub := range f.Submitters {
		if !sameOrigin(sub.ActionOrigin) {
			return wire.Errorf(wire.CodeFormCrossOrigin, "a %s submit button of the login form submits to %s, not %s",
				shown(sub), bound(sub.ActionOrigin, 200), want)
		}
	}
	if f.Password == "" {
		return nil // a username-only first step sends the account, which is not a secret, by any method
	}
	if fe.Method != "post" {
		return wire.Errorf(wire.CodeFormMethodGet, "the login form submits with method %s, not POST", bound(fe.Method, 16))
	}
	for _, sub := range f.Submitters {
		if sub.Method != "post" {
			return wire.Errorf(wire.CodeFormMethodGet, "a %s submit button of the login form submits with method %s, not POST", shown(sub), bound(sub.Method, 16))
		}
	}
	return nil
}

func shown(s snapshot.Submitter) string {
	if s.Rendered {
		return "visible"
	}
	return "hidden"
}

// formElement finds the form of ref in st's outline.
func formElement(st pageState, ref string) (snapshot.Element, bool) {
	if ref == "" {
		return snapshot.Element{}, false
	}
	for _, e := range st.outline.Elements {
		if e.Ref == ref && e.Kind == "form" {
			return e, true
		}
	}
	return snapshot.Element{}, false
}

// sameForm finds, in a fresh look at the page, the login form whose fields are the same DOM
// nodes as f's in the earlier look.
func sameForm(old pageState, f snapshot.LoginForm, fresh pageState) (snapshot.LoginForm, bool) {
	node := func(st pageState, ref string) int64 {
		if ref == "" {
			return 0
		}
		return st.refs[ref].BackendNodeID
	}
	for _, g := range fresh.forms {
		if node(fresh, g.Password) == node(old, f.Password) && node(fresh, g.Username) == node(old, f.Username) {
			return g, true
		}
	}
	return snapshot.LoginForm{}, false
}

// focusedOn checks, from an isolated JavaScript world the page's scripts cannot reach (fixed
// host code, never the caller's), that the document still has focus and its focused element
// is exactly t, and that the main frame still shows document. what names the field.
func (h *Host) focusedOn(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target, document, what string) error {
	// Bounded: a page with a navigation under way answers no fixed function until it ends.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := h.sameDocument(ctx, b, s, document, what); err != nil {
		return err
	}
	focused, err := h.callFixed(ctx, b, s, t.BackendNodeID, t.FrameID, fnFocused)
	if err != nil {
		if nerr := navUnderWay(s, what); nerr != nil {
			return nerr
		}
		return err
	}
	if !focused {
		return errNotFocused(what)
	}
	return nil
}

// readyToType gives the page and the field t the focus, then checks, as focusedOn does, the document and
// that the field has the focus, and selects its content, so that what is typed replaces it:
// one fixed function (fnTypeReady), which with noSave first marks the field
// autocomplete=off. what names the field.
func (h *Host) readyToType(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target, document, what string, noSave bool) error {
	// The page's window must have the focus for its document to have it: a page the browser
	// opened at launch starts without it (input events, such as a select-all, would give it).
	if err := b.Call(ctx, s.sid, "Page.bringToFront", nil, nil); err != nil {
		return h.browserErr(err)
	}
	if err := b.Call(ctx, s.sid, "DOM.focus", map[string]any{"backendNodeId": t.BackendNodeID}, nil); err != nil {
		return h.nodeErr(err)
	}
	if err := navUnderWay(s, what); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := h.sameDocument(ctx, b, s, document, what); err != nil {
		return err
	}
	var status string
	for try := 0; ; try++ {
		if err := h.callFixedWith(ctx, b, s, t.BackendNodeID, t.FrameID, fnTypeReady, []any{noSave}, &status); err != nil {
			if nerr := navUnderWay(s, what); nerr != nil {
				return nerr
			}
			return err
		}
		if status != "no_page_focus" || try > 0 {
			break
		}
		// The window's focus (Page.bringToFront) had not reached the page yet: an input event
		// gives it in order (the browser focuses the page before it delivers the event).
		if err := selectAll(ctx, b, s); err != nil {
			return h.browserErr(err)
		}
	}
	switch status {
	case "ok":
		return nil
	case "no_save":
		return wire.Errorf(wire.CodeDocumentChanged, "the field did not take autocomplete=off; nothing was typed")
	default:
		return errNotFocused(what)
	}
}

func errNotFocused(what string) error {
	return wire.Errorf(wire.CodeDocumentChanged, "the focus is not on the verified %s field; nothing more was typed or submitted", what)
}

// sameDocument checks that the main frame still shows document (DOCUMENT_CHANGED when it
// navigated; a navigation under way is said so). what names the field being typed.
func (h *Host) sameDocument(ctx context.Context, b *cdp.Browser, s *session, document, what string) error {
	now, err := h.documentID(ctx, b, s)
	if err != nil {
		if nerr := navUnderWay(s, what); nerr != nil {
			return nerr
		}
		return err
	}
	if now != document {
		return wire.Errorf(wire.CodeDocumentChanged, "the page navigated while the %s was being typed", what)
	}
	return nil
}

func originOf(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	host, _, _ := strings.Cut(rest, "/")
	host, _, _ = strings.Cut(host, "?")
	host, _, _ = strings.Cut(host, "#")
	return scheme + "://" + host
}

func (h *Host) documentID(ctx context.Context, b *cdp.Browser, s *session) (string, error) {
	var tree struct {
		FrameTree struct {
			Frame struct {
				ID       string `json:"id"`
				LoaderID string `json:"loaderId"`
			} `json:"frame"`
		} `json:"frameTree"`
	}
	if err := b.Call(ctx, s.sid, "Page.getFrameTree", nil, &tree); err != nil {
		return "", h.browserErr(err)
	}
	return tree.FrameTree.Frame.ID + "/" + tree.FrameTree.Frame.LoaderID, nil
}

// visible checks that the element is still connected and has a box.
func (h *Host) visible(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target) error {
	var q struct {
		Quads [][]float64 `json:"quads"`
	}
	if err := b.Call(ctx, s.sid, "DOM.getContentQuads", map[string]any{"backendNodeId": t.BackendNodeID}, &q); err != nil || len(q.Quads) == 0 {
		return wire.Errorf(wire.CodeNoLoginForm, "the login field is no longer visible; nothing was typed")
	}
	return nil
}

func selectAll(ctx context.Context, b *cdp.Browser, s *session) error {
	for _, typ := range []string{"keyDown", "keyUp"} {
		ev := map[string]any{"type": typ, "key": "a", "code": "KeyA", "modifiers": 2, "windowsVirtualKeyCode": 65}
		if typ == "keyDown" {
			ev["commands"] = []string{"selectAll"}
		}
		if err := b.Call(ctx, s.sid, "Input.dispatchKeyEvent", ev, nil); err != nil {
			return err
		}
	}
	return nil
}

// typeAccount replaces the content of the account field t with account, with the same focus
// checks as the password: the focus on exactly t (not a frame that took it) right before and
// after typing.
func (h *Host) typeAccount(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target, document, account string) error {
	if err := h.readyToType(ctx, b, s, t, document, "account", false); err != nil {
		return err
	}
	if err := b.Call(ctx, s.sid, "Input.insertText", map[string]any{"text": account}, nil); err != nil {
		return h.browserErr(err)
	}
	return h.focusedOn(ctx, b, s, t, document, "account")
}

// submit clicks the form's visible default submit button, whose action origin checkForm
// verified. It never presses Enter: Enter submits through the form's first submit button in
// page order, which may be a hidden one with a formaction elsewhere.
func (h *Host) submit(ctx context.Context, b *cdp.Browser, s *session, st pageState, f snapshot.LoginForm, field string) error {
	t, ok := st.refs[f.Submit]
	if f.Submit == "" || !ok {
		return wire.Errorf(wire.CodeNoLoginForm, "the login form has no visible submit button")
	}
	return h.clickNode(ctx, b, s, t)
}

// verify decides the outcome from what the page shows after submitting, polling (bounded) until
// the page says something definite:
//   - authenticated: the browser navigated to a new document, it loaded, and it has no login
//     form and no error;
//   - failed: after a navigation the login form is back, or an error alert is shown;
//   - unknown: anything else when the time is up (for example a form that vanished in place).
func (h *Host) verify(ctx context.Context, b *cdp.Browser, s *session, before pageState, status *string, ev *control.Evidence, pageOrigin string) (err error) {
	res := struct {
		Evidence *control.Evidence
		Origin   string
	}{ev, pageOrigin}
	*status = "unknown"
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
			ev.URLAfter = bound(withoutQuery(u), 512)
		}
		if doc, err := h.documentID(cctx, b, s); err == nil {
			ev.Navigated = doc != before.document
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, VerifyWait)
	defer cancel()
	s.settle(ctx)
	for {
		after, lerr := h.look(ctx, b, s)
		if errors.Is(lerr, errEchoed) {
			return lerr // the page was discarded: the outcome is not told
		}
		if lerr == nil {
			looked = true
			res.Evidence.URLAfter = bound(withoutQuery(after.outline.URL), 512)
			res.Evidence.Navigated = after.document != before.document
			res.Evidence.LoginFormPresent = hasPasswordForm(after)
			res.Evidence.ErrorText = bound(loginErrorText(after.outline), 200)
			afterOrigin, _ := origin.Canonical(after.outline.Origin)
			anyForm := len(after.forms) > 0 // username-only steps count too
			switch {
			case res.Evidence.ErrorText != "":
				*status = "failed"
				return nil
			case res.Evidence.Navigated && res.Evidence.LoginFormPresent:
				*status = "failed"
				return nil
			case res.Evidence.Navigated && !anyForm && !after.outline.Truncated && afterOrigin == res.Origin:
				*status = "authenticated"
				return nil
			case res.Evidence.Navigated:
				return // another origin, an error page, a cut outline or a first step again: unknown
			}
		}
		// Not definite yet: wait for a navigation to start (then for its load), or poll again.
		select {
		case ev := <-s.events:
			if ev.Method == "Page.frameStartedLoading" || ev.Method == "Page.frameNavigated" {
				s.waitLoad(ctx, "")
			}
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return nil
		}
	}
}

// VerifyWait bounds how long auth login watches the page for its outcome.
const VerifyWait = 10 * time.Second

// loginErrorText is the first text of o that reads like a failed sign-in ("" if none).
func loginErrorText(o snapshot.Outline) string {
	for _, e := range o.Elements {
		if e.Kind == "text" && looksLikeLoginError(e.Text) {
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

// stepUp types only the alias's one-time code into the one-time-code field of the session's
// page (a verification step of a signed-in site): a release of its own (purpose code, whose
// prompt says only the code is released), then the code-step rules of codeStep.
func (h *Host) stepUp(ctx context.Context, look *lookBound, b *cdp.Browser, s *session, p control.AuthParams, res *control.AuthResult) error {
	st, err := h.look(look.ctx, b, s)
	if err != nil {
		return err
	}
	res.Evidence.URLBefore = bound(withoutQuery(st.outline.URL), 512)
	o, err := origin.Canonical(st.outline.Origin)
	if err != nil {
		return wire.Errorf(wire.CodeNoLoginForm, "this page's origin cannot hold saved credentials: %w", err)
	}
	res.Origin = o
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
		err = h.withBroker(look.ctx, func(c *brokerapi.Client) error {
			ch, err := c.Challenge(look.ctx, brokerapi.ChallengeParams{Session: s.name, Document: st.document, Origin: o, Isolated: s.isolated})
			challengeID = ch.Challenge
			return err
		})
		if err != nil {
			return err
		}
	}
	loginPath, err := s.loadedPath(st.document)
	if err != nil {
		return err
	}
	if err := look.ask(); err != nil {
		return err
	}
	rel, secret, err := h.release(ctx, look.intact, brokerapi.ReleaseParams{Challenge: challengeID, Alias: p.Alias, Session: s.name, Document: st.document,
		Purpose: brokerapi.PurposeCode, Path: loginPath, Field: fieldLabel(st.outline, form.Password)})
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
	tctx, tcancel := context.WithTimeout(ctx, TypeWait)
	typed, err := h.fillVerified(tctx, b, s, st, form, o, "", rel.Listener, code, &res.Evidence, codePage)
	tcancel()
	credential.Zero(secret)
	if err == nil {
		res.Evidence.CodeTyped = true
		h.o.Log.Info("one-time code typed and submitted (step-up)", "session", s.name, "alias", rel.Alias, "origin", o)
		err = h.verify(ctx, b, s, st, &res.Status, &res.Evidence, o)
	}
	if typed {
		err = h.endAttempt(ctx, b, s, &res.Evidence, err)
	}
	return err
}
