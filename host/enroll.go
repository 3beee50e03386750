package host

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/wire"
)

// Interactive enrollment ('headless auth login --interactive'): the CLI reads the account and
// password from the person's terminal and sends them in one hand-built frame (method
// auth.enroll). The host fills the page's login form once, with the same checks as alias login,
// and verifies the outcome. Only after "authenticated" does it keep the password, in memory, for
// at most EnrollHold, under a one-time token: auth.enroll.save {token, alias} then sends it to
// brokerd on the host's own broker connection (the vault, or an isolated session's store), and
// auth.enroll.discard {token} (or the timeout, the session's close, the host's stop) zeroes it.
const (
	EnrollHold       = 2 * time.Minute // how long a password waits for the save decision
	MaxPendingEnroll = 4               // passwords waiting for a save decision at once
)

type pendingEnroll struct {
	session  string
	isolated bool
	origin   string
	account  string
	path     string // the sign-in page's path: the credential's first known sign-in path
	secret   []byte
	expires  time.Time   // on the host's clock
	stop     func() bool // stops the expiry timer
}

func errEnrollToken() error {
	return wire.Errorf(wire.CodeEnrollUnknown, "no interactive login is waiting for a save decision under that token")
}

// Enroll fills the session's login form once with the person's account and password, submits
// it and verifies the outcome. It owns p.Secret: zeroed before it returns, unless the outcome is
// authenticated, in which case it is held (EnrollHold at most) for the save decision.
func (h *Host) Enroll(ctx context.Context, p control.EnrollParams) (control.EnrollResult, error) {
	secret := p.Secret
	defer func() { credential.Zero(secret) }() // nil once handed to a pending enrollment
	if err := credential.ValidAccount(p.Account); err != nil {
		return control.EnrollResult{}, err
	}
	if p.Account == "" {
		return control.EnrollResult{}, wire.Errorf(wire.CodeInvalidArgument, "the account is empty")
	}
	if err := credential.ValidSecret(secret); err != nil {
		return control.EnrollResult{}, err
	}
	h.emu.Lock()
	full := len(h.enroll) >= MaxPendingEnroll
	h.emu.Unlock()
	if full {
		return control.EnrollResult{}, wire.Errorf(wire.CodeBusy, "%d interactive logins already wait for a save decision", MaxPendingEnroll)
	}
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return control.EnrollResult{}, err
	}
	defer unlock()
	clear(s.refs)
	res := control.EnrollResult{Session: s.name}
	si := &signIn{h: h, b: b, s: s, ev: &res.Evidence}
	st, form, err := si.loginPage(ctx)
	res.Origin = si.origin
	if err != nil {
		return res, err
	}
	page := firstPage
	if form.Password == "" {
		page = secondPage
		if st, form, err = si.typable(ctx, st, form, p.Account); err != nil {
			return res, err
		}
		if st, form, err = si.firstStep(ctx, st, form, p.Account); err != nil {
			return res, err
		}
	}
	if st, form, err = si.typable(ctx, st, form, p.Account); err != nil {
		return res, err
	}
	if err := checkForm(st, form, si.origin); err != nil {
		return res, err
	}
	loginPath, err := s.loadedPath(st.document)
	if err != nil {
		return res, err
	}
	// The person's password goes into the page: every later output is scanned for it as for a
	// released one (echoed.go).
	h.remember(brokerapi.Released{Account: p.Account}, secret)
	tctx, tcancel := context.WithTimeout(ctx, TypeWait)
	typed, err := si.fillVerified(tctx, st, form, p.Account, secret, page)
	tcancel()
	if err == nil {
		res.Status, err = si.verify(ctx, st)
	}
	if typed {
		err = h.endAttempt(ctx, b, s, &res.Evidence, err)
	}
	if err != nil {
		return res, err
	}
	h.o.Log.Info("interactive login typed and submitted", "session", s.name, "origin", si.origin, "status", res.Status)
	if res.Status != "authenticated" {
		return res, nil // no save is offered: the password is zeroed on return
	}
	h.emu.Lock()
	full = len(h.enroll) >= MaxPendingEnroll
	h.emu.Unlock()
	if full {
		return res, nil // raced with another login: no save offered
	}
	token := "enr-" + rand.Text()
	h.holdEnroll(token, &pendingEnroll{session: s.name, isolated: s.isolated, origin: si.origin, account: p.Account, path: loginPath, secret: secret, expires: h.o.Now().Add(EnrollHold)})
	secret = nil // held until the save decision now
	res.Token = token
	return res, nil
}

// takeEnroll removes the pending enrollment of token and returns it (nil if none); the caller
// zeroes its password.
func (h *Host) takeEnroll(token string) *pendingEnroll {
	h.emu.Lock()
	defer h.emu.Unlock()
	pe := h.enroll[token]
	if pe == nil {
		return nil
	}
	delete(h.enroll, token)
	pe.stop()
	return pe
}

// holdEnroll keeps pe under token until its deadline on the host's clock, then zeroes it.
func (h *Host) holdEnroll(token string, pe *pendingEnroll) {
	h.emu.Lock()
	defer h.emu.Unlock()
	h.enroll[token] = pe
	pe.stop = h.o.AfterFunc(pe.expires.Sub(h.o.Now()), func() {
		if pe := h.takeEnroll(token); pe != nil {
			credential.Zero(pe.secret)
			h.o.Log.Info("interactive login password discarded: no save decision in time", "session", pe.session)
		}
	})
}

// dropEnrollments zeroes the held passwords of session ("" = every session).
func (h *Host) dropEnrollments(session string) {
	h.emu.Lock()
	var tokens []string
	for t, pe := range h.enroll {
		if session == "" || pe.session == session {
			tokens = append(tokens, t)
		}
	}
	h.emu.Unlock()
	for _, t := range tokens {
		if pe := h.takeEnroll(t); pe != nil {
			credential.Zero(pe.secret)
		}
	}
}

// EnrollDiscard zeroes the held password of token now.
func (h *Host) EnrollDiscard(p control.EnrollTokenParams) (control.EnrollDiscarded, error) {
	pe := h.takeEnroll(p.Token)
	if pe == nil {
		return control.EnrollDiscarded{}, errEnrollToken()
	}
	credential.Zero(pe.secret)
	h.o.Log.Info("interactive login password discarded", "session", pe.session)
	return control.EnrollDiscarded{Discarded: true}, nil
}

// EnrollSave saves the held password of token under alias: host → brokerd on the host's broker
// connection, as one hand-built frame; into the vault for a normal session, into the session's
// own store for an isolated one. The token is used up unless the alias was refused
// (ALIAS_EXISTS, INVALID_ARGUMENT), so that the person can choose another name.
func (h *Host) EnrollSave(ctx context.Context, p control.EnrollSaveParams) (control.EnrollSaved, error) {
	if err := credential.ValidAlias(p.Alias); err != nil {
		return control.EnrollSaved{}, err
	}
	pe := h.takeEnroll(p.Token)
	if pe == nil {
		return control.EnrollSaved{}, errEnrollToken()
	}
	store, session := "vault", ""
	if pe.isolated {
		store, session = "isolated", pe.session
	}
	// A connection of its own, as for a release: saving into the locked keyring waits for the
	// person at the keyring's prompt, and the shared connection must not wait with it. An
	// isolated session's store answers only the connection that registered it (no prompt
	// there): the shared one.
	var cred brokerapi.Credential
	var err error = wire.Errorf(wire.CodeBrokerUnavail, "no broker configured")
	if h.o.Broker != nil && pe.isolated {
		err = h.withBroker(ctx, func(c *brokerapi.Client) error {
			var err error
			cred, err = c.AddCredential(ctx, brokerapi.AddParams{Session: session, Origin: pe.origin, Account: pe.account, Alias: p.Alias, LoginPaths: loginPaths(pe.path), Secret: pe.secret})
			return err
		})
	} else if h.o.Broker != nil {
		var c *brokerapi.Client
		if c, err = h.o.Broker(ctx); err != nil {
			err = wire.Errorf(wire.CodeBrokerUnavail, "%w", err)
		} else {
			cred, err = c.AddCredential(ctx, brokerapi.AddParams{Session: session, Origin: pe.origin, Account: pe.account, Alias: p.Alias, LoginPaths: loginPaths(pe.path), Secret: pe.secret})
			c.Close()
		}
	}
	if code := wire.CodeOf(err); (code == wire.CodeAliasExists || code == wire.CodeInvalidArgument) && h.o.Now().Before(pe.expires) {
		h.holdEnroll(p.Token, pe)
		return control.EnrollSaved{}, err
	}
	credential.Zero(pe.secret)
	if err != nil {
		return control.EnrollSaved{}, err
	}
	h.o.Log.Info("interactive login saved", "session", pe.session, "origin", cred.Origin, "alias", cred.Alias, "store", store)
	return control.EnrollSaved{Saved: cred.Alias, Origin: cred.Origin, Account: cred.Account, Session: pe.session, Store: store}, nil
}

// loginPaths is the sign-in path of an enrollment as AddParams.LoginPaths (none when unknown).
func loginPaths(path string) []string {
	if path == "" {
		return nil
	}
	return []string{path}
}
