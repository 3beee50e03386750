package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/broker"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

// AuthRequired is attached to a page result when the page holds a login form.
type AuthRequired struct {
	Challenge string    `json:"challenge"`
	Origin    string    `json:"origin"`
	Aliases   []string  `json:"aliases"`
	ExpiresAt time.Time `json:"expires_at"`
}

// AuthParams is auth.login.
type AuthParams struct {
	Session   string `json:"session,omitempty"`
	Alias     string `json:"alias"`
	Challenge string `json:"challenge,omitempty"`
}

// AuthResult answers auth.login. Status is "authenticated", "failed" or "unknown": never a
// guess (see verify).
type AuthResult struct {
	Status   string   `json:"status"`
	Origin   string   `json:"origin"`
	Alias    string   `json:"alias"`
	Session  string   `json:"session"`
	Evidence Evidence `json:"evidence"`
}

// Evidence is what the outcome was decided on (bounded; page-derived strings are untrusted).
type Evidence struct {
	URLBefore        string `json:"url_before"`
	URLAfter         string `json:"url_after"`
	Navigated        bool   `json:"navigated"`
	LoginFormPresent bool   `json:"login_form_present"`
	ErrorText        string `json:"error_text,omitempty"`
	Steps            int    `json:"steps"`
}

// MethodAuthLogin signs a session in by alias.
const MethodAuthLogin = "auth.login"

// brokerClient returns the host's broker connection, dialling it when needed.
func (h *Host) brokerClient(ctx context.Context) (*broker.Client, error) {
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
		return nil, wire.Errorf(wire.CodeBrokerUnavail, "%v", err)
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
	err := h.withBroker(ctx, func(c *broker.Client) error { return c.OpenSession(ctx, name) })
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
func (h *Host) withBroker(ctx context.Context, fn func(*broker.Client) error) error {
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
func (h *Host) loginPage(ctx context.Context, b *cdp.Browser, s *session, ev *Evidence) (st pageState, pageOrigin string, form snapshot.LoginForm, err error) {
	if st, err = h.look(ctx, b, s); err != nil {
		return st, "", form, err
	}
	ev.URLBefore = bound(st.outline.URL, 512)
	if pageOrigin, err = origin.Canonical(st.outline.Origin); err != nil {
		return st, "", form, wire.Errorf(wire.CodeNoLoginForm, "this page's origin cannot hold saved credentials: %v", err)
	}
	form, ok := usable(st, pageOrigin, true)
	if !ok {
		return st, pageOrigin, form, wire.Errorf(wire.CodeNoLoginForm, "no login form in this page or a same-origin frame")
	}
	return st, pageOrigin, form, nil
}

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
	if st.document, err = h.documentID(ctx, b, s); err != nil {
		return st, err
	}
	raw, err := captureSnapshot(ctx, b, s)
	if err != nil {
		return st, h.browserErr(err)
	}
	st.outline, st.refs, err = snapshot.Build(raw, snapshot.Options{})
	if err != nil {
		return st, fmt.Errorf("snapshot: %w", err)
	}
	st.forms = snapshot.LoginForms(st.outline)
	return st, nil
}

// usable picks the first login form whose fields live in the top document or a frame of the
// page's own origin; forms in cross-origin frames are never used. twoStep allows a
// username-only first step.
func usable(st pageState, pageOrigin string, twoStep bool) (snapshot.LoginForm, bool) {
	for _, f := range st.forms {
		if f.Frame != "" && f.Frame != pageOrigin {
			continue
		}
		if f.Password != "" || twoStep && f.Username != "" {
			return f, true
		}
	}
	return snapshot.LoginForm{}, false
}

// authRequired issues a challenge when the session's page holds a usable login form. Any
// failure (no broker, no form) just means no auth_required.
func (h *Host) authRequired(ctx context.Context, b *cdp.Browser, s *session) *AuthRequired {
	st, err := h.look(ctx, b, s)
	if err != nil {
		return nil
	}
	o, err := origin.Canonical(st.outline.Origin)
	if err != nil {
		return nil
	}
	if _, ok := usable(st, o, true); !ok {
		return nil
	}
	var ch broker.ChallengeResult
	err = h.withBroker(ctx, func(c *broker.Client) error {
		var err error
		ch, err = c.Challenge(ctx, broker.ChallengeParams{Session: s.name, Document: st.document, Origin: o, Isolated: s.isolated})
		return err
	})
	if err != nil {
		h.o.Log.Warn("no challenge for a login form", "session", s.name, "code", wire.CodeOf(err))
		return nil
	}
	return &AuthRequired{Challenge: ch.Challenge, Origin: ch.Origin, Aliases: ch.Aliases, ExpiresAt: ch.ExpiresAt}
}

// AuthLogin signs the session in with the saved credential alias: finds the login form, gets
// a challenge for this exact document, has brokerd release the password (after presence),
// re-checks document, frame origin, form action origin and the fields right before typing,
// types with Input.insertText, zeroes the password, submits and verifies the outcome.
func (h *Host) AuthLogin(ctx context.Context, p AuthParams) (AuthResult, error) {
	if err := vault.ValidAlias(p.Alias); err != nil {
		return AuthResult{}, err
	}
	b, s, err := h.session(ctx, p.Session)
	if err != nil {
		return AuthResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.refs)
	res := AuthResult{Alias: p.Alias, Session: s.name}

	st, pageOrigin, form, err := h.loginPage(ctx, b, s, &res.Evidence)
	res.Origin = pageOrigin
	if err != nil {
		return res, err
	}

	// Two-step login: type the account (metadata, no release needed) and submit, then continue
	// on the password page of the same origin.
	if form.Password == "" {
		account, err := h.accountFor(ctx, s, pageOrigin, p.Alias)
		if err != nil {
			return res, err
		}
		if st, form, err = h.firstStep(ctx, b, s, st, form, pageOrigin, account, &res.Evidence); err != nil {
			return res, err
		}
		p.Challenge = "" // the caller's challenge was for the first page
	}

	// Refuse a form that could never take the password before anyone is asked to approve.
	if err := checkForm(st, form, pageOrigin); err != nil {
		return res, err
	}
	challengeID := p.Challenge
	if challengeID == "" {
		err = h.withBroker(ctx, func(c *broker.Client) error {
			ch, err := c.Challenge(ctx, broker.ChallengeParams{Session: s.name, Document: st.document, Origin: pageOrigin, Isolated: s.isolated})
			challengeID = ch.Challenge
			return err
		})
		if err != nil {
			return res, err
		}
	}
	var (
		rel    broker.Released
		secret []byte
	)
	defer func() { vault.Zero(secret) }()
	// The release waits for a person; it gets a connection of its own so that the host's
	// other broker calls (challenges for other sessions) are not queued behind the prompt.
	if h.o.Broker == nil {
		return res, wire.Errorf(wire.CodeBrokerUnavail, "no broker configured")
	}
	rc, err := h.o.Broker(ctx)
	if err != nil {
		return res, wire.Errorf(wire.CodeBrokerUnavail, "%v", err)
	}
	rel, secret, err = rc.Release(ctx, broker.ReleaseParams{Challenge: challengeID, Alias: p.Alias, Session: s.name, Document: st.document,
		Path: pagePath(st.outline.URL), Field: fieldLabel(st.outline, form.Password), Agent: agentChain(ctx)})
	rc.Close()
	if err != nil {
		return res, err
	}

	if rel.Origin != pageOrigin {
		return res, wire.Errorf(wire.CodeOriginMismatch, "the credential is for %s, the page is %s", rel.Origin, pageOrigin)
	}
	err = h.fillVerified(ctx, b, s, st, form, rel.Origin, rel.Account, secret, &res.Evidence)
	vault.Zero(secret)
	if err != nil {
		return res, err
	}
	h.o.Log.Info("credential typed and submitted", "session", s.name, "alias", rel.Alias, "origin", rel.Origin)
	h.verify(ctx, b, s, st, &res.Status, &res.Evidence, res.Origin)
	return res, nil
}

// firstStep types account into the username-only first step of a two-step login, submits it
// and returns the password step's page and form (same origin only).
func (h *Host) firstStep(ctx context.Context, b *cdp.Browser, s *session, st pageState, form snapshot.LoginForm, pageOrigin, account string, ev *Evidence) (pageState, snapshot.LoginForm, error) {
	if err := checkForm(st, form, pageOrigin); err != nil {
		return st, form, err
	}
	if err := h.typeText(ctx, b, s, st.refs[form.Username], account); err != nil {
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
	form, ok := usable(st, pageOrigin, false)
	if !ok {
		return st, form, wire.Errorf(wire.CodeNoLoginForm, "no password field after the first login step")
	}
	return st, form, nil
}

// fillVerified types account and secret into form (found in st) and submits it, after a fresh
// look at the page: same document, the same field nodes still in a login form, frame and form
// action on credOrigin, fields visible, and the focus on exactly the password field right
// before and after typing. The secret goes only through the hand-built Input.insertText; the
// caller still zeroes it.
func (h *Host) fillVerified(ctx context.Context, b *cdp.Browser, s *session, st pageState, form snapshot.LoginForm, credOrigin, account string, secret []byte, ev *Evidence) error {
	fresh, err := h.look(ctx, b, s)
	if err != nil {
		return err
	}
	if fresh.document != st.document {
		return wire.Errorf(wire.CodeDocumentChanged, "the page changed after the challenge was issued; nothing was typed")
	}
	form, ok := sameForm(st, form, fresh)
	if !ok {
		return wire.Errorf(wire.CodeNoLoginForm, "the login form changed after the challenge was issued; nothing was typed")
	}
	st.refs, st.outline = fresh.refs, fresh.outline
	if err := checkForm(st, form, credOrigin); err != nil {
		return err
	}
	for _, ref := range []string{form.Username, form.Password} {
		if ref == "" {
			continue
		}
		if err := h.visible(ctx, b, s, st.refs[ref]); err != nil {
			return err
		}
	}
	if form.Username != "" {
		if err := h.typeText(ctx, b, s, st.refs[form.Username], account); err != nil {
			return err
		}
	}
	pw := st.refs[form.Password]
	if err := b.Call(ctx, s.sid, "DOM.focus", map[string]any{"backendNodeId": pw.BackendNodeID}, nil); err != nil {
		return nodeErr(err)
	}
	if err := selectAll(ctx, b, s); err != nil {
		return err
	}
	// The last checks, as close to typing as the protocol allows: the same document (no
	// navigation slipped in) and the focus on exactly the verified password field.
	if err := h.focusedOn(ctx, b, s, pw, st.document); err != nil {
		return err
	}
	err = b.InsertSecret(ctx, s.sid, secret)
	if err != nil {
		return h.browserErr(err)
	}
	if err := h.focusedOn(ctx, b, s, pw, st.document); err != nil {
		// Focus or document moved while typing: do not submit whatever received the text.
		return err
	}
	s.drain()
	if err := h.submit(ctx, b, s, st, form, form.Password); err != nil {
		return err
	}
	ev.Steps++
	return nil
}

// accountFor reads the account of alias at origin from the broker's metadata (no secret): the
// isolated session's own store, or the vault for a normal session.
func (h *Host) accountFor(ctx context.Context, s *session, o, alias string) (string, error) {
	var creds []broker.Credential
	err := h.withBroker(ctx, func(c *broker.Client) error {
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

// checkForm verifies that the fields' frame and the form's action are on want.
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
	if f.Form == "" || f.ActionOrigin == "" || f.Submit == "" {
		return wire.Errorf(wire.CodeNoLoginForm, "no login form with a visible submit button and a known action")
	}
	ao, err := origin.Canonical(f.ActionOrigin)
	if err != nil || ao != want {
		return wire.Errorf(wire.CodeFormCrossOrigin, "the login form submits to %s, not %s", bound(f.ActionOrigin, 200), want)
	}
	return nil
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
// is exactly t, and that the main frame still shows document.
func (h *Host) focusedOn(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target, document string) error {
	if now, err := h.documentID(ctx, b, s); err != nil {
		return err
	} else if now != document {
		return wire.Errorf(wire.CodeDocumentChanged, "the page navigated while the credential was being typed")
	}
	var world struct {
		ID int `json:"executionContextId"`
	}
	if err := b.Call(ctx, s.sid, "Page.createIsolatedWorld", map[string]any{"frameId": strings.SplitN(document, "/", 2)[0], "worldName": "headless-check"}, &world); err != nil {
		return h.browserErr(err)
	}
	var node struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err := b.Call(ctx, s.sid, "DOM.resolveNode", map[string]any{"backendNodeId": t.BackendNodeID, "executionContextId": world.ID}, &node); err != nil {
		return nodeErr(err)
	}
	var r struct {
		Result struct {
			Value bool `json:"value"`
		} `json:"result"`
	}
	err := b.Call(ctx, s.sid, "Runtime.callFunctionOn", map[string]any{
		"objectId":            node.Object.ObjectID,
		"functionDeclaration": "function() { return this.isConnected && this.ownerDocument.hasFocus() && this.ownerDocument.activeElement === this; }",
		"returnByValue":       true,
	}, &r)
	if err != nil {
		return h.browserErr(err)
	}
	if !r.Result.Value {
		return wire.Errorf(wire.CodeDocumentChanged, "the focus is not on the verified password field; nothing was submitted")
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

// typeText replaces the content of a (non-secret) field with text.
func (h *Host) typeText(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target, text string) error {
	if err := b.Call(ctx, s.sid, "DOM.focus", map[string]any{"backendNodeId": t.BackendNodeID}, nil); err != nil {
		return nodeErr(err)
	}
	if err := selectAll(ctx, b, s); err != nil {
		return h.browserErr(err)
	}
	return h.browserErr(b.Call(ctx, s.sid, "Input.insertText", map[string]any{"text": text}, nil))
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
func (h *Host) verify(ctx context.Context, b *cdp.Browser, s *session, before pageState, status *string, ev *Evidence, pageOrigin string) {
	res := struct {
		Evidence *Evidence
		Origin   string
	}{ev, pageOrigin}
	*status = "unknown"
	ctx, cancel := context.WithTimeout(ctx, VerifyWait)
	defer cancel()
	s.settle(ctx)
	for {
		after, err := h.look(ctx, b, s)
		if err == nil {
			res.Evidence.URLAfter = bound(after.outline.URL, 512)
			res.Evidence.Navigated = after.document != before.document
			res.Evidence.LoginFormPresent = false
			for _, f := range after.forms {
				if f.Password != "" {
					res.Evidence.LoginFormPresent = true
				}
			}
			res.Evidence.ErrorText = ""
			for _, e := range after.outline.Elements {
				if e.Kind == "text" && looksLikeLoginError(e.Text) {
					res.Evidence.ErrorText = bound(e.Text, 200)
					break
				}
			}
			afterOrigin, _ := origin.Canonical(after.outline.Origin)
			anyForm := len(after.forms) > 0 // username-only steps count too
			switch {
			case res.Evidence.ErrorText != "":
				*status = "failed"
				return
			case res.Evidence.Navigated && res.Evidence.LoginFormPresent:
				*status = "failed"
				return
			case res.Evidence.Navigated && !anyForm && !after.outline.Truncated && afterOrigin == res.Origin:
				*status = "authenticated"
				return
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
			return
		}
	}
}

// VerifyWait bounds how long auth login watches the page for its outcome.
const VerifyWait = 10 * time.Second

func looksLikeLoginError(t string) bool {
	t = strings.ToLower(t)
	for _, w := range []string{"invalid", "incorrect", "wrong password", "failed", "try again"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}
