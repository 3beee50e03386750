package host

import (
	"context"
	"crypto/rand"
	"strings"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/wire"
)

// Credential commands that go through the host (control.sock):
//
//   - credentials.list/add/remove with an isolated session: that session's store lives in
//     brokerd and answers only the host connection that registered it, so the CLI asks the
//     host. credentials.add carries the person's password from the CLI's terminal in one
//     hand-built frame (like auth.enroll), accepted only from a peer with a controlling
//     terminal, and goes on to brokerd as one hand-built frame; it is zeroed on every path.
//   - credentials.verify: the whole release gate (challenge, presence, vault) with the host as
//     the receiver, purpose "verify" (the prompt says nothing will be typed); the host zeroes
//     the password at once and answers released or the typed denial. No release ever goes to
//     the CLI.

// verifySession is the session name of verification challenges: not a valid browser session
// name, so no real session's challenge can be confused with it.
const verifySession = "-verify"

// isolatedSession checks that name is one of this host's isolated sessions.
func (h *Host) isolatedSession(name string) error {
	h.bmu.Lock()
	ok := h.isolated[name]
	h.bmu.Unlock()
	if !ok {
		return wire.Errorf(wire.CodeSessionUnknown, "no isolated session %q in the running host", clip.Text(name, 64))
	}
	return nil
}

// CredentialsList lists an isolated session's store.
func (h *Host) CredentialsList(ctx context.Context, p control.CredentialsListParams) (brokerapi.ListResult, error) {
	if err := h.isolatedSession(p.Session); err != nil {
		return brokerapi.ListResult{}, err
	}
	var creds []brokerapi.Credential
	err := h.withBroker(ctx, func(c *brokerapi.Client) error {
		var err error
		creds, err = c.ListIn(ctx, p.Session, p.Origin)
		return err
	})
	if creds == nil {
		creds = []brokerapi.Credential{}
	}
	return brokerapi.ListResult{Credentials: creds}, err
}

// CredentialsAdd saves the person's password into an isolated session's store. It owns
// p.Secret and zeroes it.
func (h *Host) CredentialsAdd(ctx context.Context, p control.CredentialsAddParams) (brokerapi.Credential, error) {
	defer credential.Zero(p.Secret)
	if err := h.isolatedSession(p.Session); err != nil {
		return brokerapi.Credential{}, err
	}
	if _, err := credential.ValidStored(p.Secret); err != nil {
		return brokerapi.Credential{}, err
	}
	var cred brokerapi.Credential
	err := h.withBroker(ctx, func(c *brokerapi.Client) error {
		var err error
		cred, err = c.AddCredential(ctx, brokerapi.AddParams{Session: p.Session, Origin: p.Origin, Account: p.Account, Alias: p.Alias, LoginPaths: p.LoginPaths, AlsoOrigins: p.AlsoOrigins, Secret: p.Secret})
		return err
	})
	if err == nil {
		h.o.Log.Info("credential added to an isolated store", "session", p.Session, "origin", cred.Origin, "alias", cred.Alias)
	}
	return cred, err
}

// CredentialsRemove removes a credential from an isolated session's store.
func (h *Host) CredentialsRemove(ctx context.Context, p control.CredentialsRemoveParams) (struct{}, error) {
	if err := h.isolatedSession(p.Session); err != nil {
		return struct{}{}, err
	}
	return struct{}{}, h.withBroker(ctx, func(c *brokerapi.Client) error { return c.RemoveIn(ctx, p.Session, p.Origin, p.Alias) })
}

// CredentialsVerify proves that the vault credential can be released: challenge, presence,
// vault, to this host, which zeroes the password unseen and types nothing.
func (h *Host) CredentialsVerify(ctx context.Context, p control.VerifyParams) (control.VerifyResult, error) {
	o, err := origin.Canonical(p.Origin)
	if err != nil {
		return control.VerifyResult{}, err
	}
	if err := credential.ValidAlias(p.Alias); err != nil {
		return control.VerifyResult{}, err
	}
	if h.o.Broker == nil {
		return control.VerifyResult{}, wire.Errorf(wire.CodeBrokerUnavail, "no broker configured")
	}
	doc := "verify-" + strings.ToLower(rand.Text())
	var ch brokerapi.ChallengeResult
	if err := h.withBroker(ctx, func(c *brokerapi.Client) error {
		var err error
		ch, err = c.Challenge(ctx, brokerapi.ChallengeParams{Session: verifySession, Document: doc, Origin: o})
		return err
	}); err != nil {
		return control.VerifyResult{}, err
	}
	// A connection of its own: the prompt may wait for a person.
	rc, err := h.o.Broker(ctx)
	if err != nil {
		return control.VerifyResult{}, wire.Errorf(wire.CodeBrokerUnavail, "%w", err)
	}
	rel, secret, err := rc.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: p.Alias, Session: verifySession, Document: doc,
		Purpose: brokerapi.PurposeVerify, Agent: agentChain(ctx), Client: agentClient(ctx)})
	rc.Close()
	credential.Zero(secret)
	if err != nil {
		return control.VerifyResult{}, err
	}
	h.o.Log.Info("credential verified (released to the host and zeroed)", "origin", rel.Origin, "alias", rel.Alias)
	return control.VerifyResult{Released: true, Origin: rel.Origin, Account: rel.Account, Alias: rel.Alias}, nil
}
