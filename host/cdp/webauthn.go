package cdp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headless-dev/headless/internal/credential"
)

// A virtual authenticator (the DevTools WebAuthn domain) holds a passkey's private key, and
// its events (WebAuthn.credentialAdded, WebAuthn.credentialAsserted) carry it: no WebAuthn
// event ever reaches a subscriber. The reader hands each to the [Authenticator] it names, which
// keeps only what its owner asked for, and zeroes the message. The key goes into Chromium only
// in a message built by hand and zeroed after writing ([Authenticator.AddCredential]); nothing
// here reads a key back out of Chromium: no call lists or returns an authenticator's credentials.

// Authenticator is one virtual authenticator of one page session.
type Authenticator struct {
	b   *Browser
	sid string
	id  string
	// Events are the authenticator's credential events, in order (bounded; one that does not
	// fit is dropped, but still counted). An Added event's passkey is the owner's to zero.
	Events chan AuthenticatorEvent
	// asserted counts the assertions the authenticator reported, and maxCount is the highest
	// sign count among them: every one, whether or not it fit in Events, until Remove.
	asserted atomic.Int32
	maxCount atomic.Uint32
}

// Used is how many assertions the authenticator reported and the highest sign count among
// them. Once Remove returned, they are all of them: Chromium sends every event it raised
// before the removal's reply.
func (a *Authenticator) Used() (int, uint32) { return int(a.asserted.Load()), a.maxCount.Load() }

// AuthenticatorEvent is a credential of the authenticator created (Added) or used in an
// assertion. An assertion's Passkey holds the RP ID, the credential id and the sign count, never
// the key.
type AuthenticatorEvent struct {
	Added   bool
	Passkey credential.Passkey
}

type authenticators struct {
	mu sync.Mutex
	m  map[string]*Authenticator // by authenticator id
}

// AddAuthenticator gives session sid a virtual authenticator: CTAP2, internal transport,
// resident keys, user verification reported as done (the host asks the person before a
// credential is ever added), presence simulated. The caller removes it ([Authenticator.Remove]).
func (b *Browser) AddAuthenticator(ctx context.Context, sid string) (*Authenticator, error) {
	if err := b.Call(ctx, sid, "WebAuthn.enable", map[string]any{"enableUI": false}, nil); err != nil {
		return nil, err
	}
	var r struct {
		AuthenticatorID string `json:"authenticatorId"`
	}
	opts := map[string]any{"protocol": "ctap2", "ctap2Version": "ctap2_1", "transport": "internal",
		"hasResidentKey": true, "hasUserVerification": true, "isUserVerified": true, "automaticPresenceSimulation": true}
	if err := b.Call(ctx, sid, "WebAuthn.addVirtualAuthenticator", map[string]any{"options": opts}, &r); err != nil {
		return nil, err
	}
	a := &Authenticator{b: b, sid: sid, id: r.AuthenticatorID, Events: make(chan AuthenticatorEvent, 4)}
	b.auths.mu.Lock()
	if b.auths.m == nil {
		b.auths.m = map[string]*Authenticator{}
	}
	b.auths.m[a.id] = a
	b.auths.mu.Unlock()
	return a, nil
}

// removeWait bounds a removal, which runs even when the caller's context ended.
const removeWait = 5 * time.Second

// Remove removes the authenticator and every credential in it, and turns the session's
// WebAuthn domain off. It runs on a context of its own (bounded), so that a cancelled caller
// still removes it; its events stop.
func (a *Authenticator) Remove() error {
	ctx, cancel := context.WithTimeout(context.Background(), removeWait)
	defer cancel()
	err := a.b.Call(ctx, a.sid, "WebAuthn.removeVirtualAuthenticator", map[string]any{"authenticatorId": a.id}, nil)
	if err != nil && a.b.SessionErr(a.sid) == nil {
		// Still there, perhaps: its events are still counted (the caller stops the page).
		return err
	}
	a.b.auths.mu.Lock()
	delete(a.b.auths.m, a.id)
	a.b.auths.mu.Unlock()
	if err != nil {
		return nil // the page is gone, and its authenticator with it
	}
	a.b.Call(ctx, a.sid, "WebAuthn.disable", nil, nil)
	return nil
}

// AddCredential adds p (a resident credential) to the authenticator, in a message built by
// hand and zeroed after writing.
func (a *Authenticator) AddCredential(ctx context.Context, p credential.Passkey) error {
	id := a.b.next.Add(1)
	head, err := json.Marshal(message{ID: id, Method: "WebAuthn.addCredential", SessionID: a.sid})
	if err != nil {
		return err
	}
	b64 := base64.StdEncoding
	msg := make([]byte, 0, len(head)+256+b64.EncodedLen(len(p.ID))+b64.EncodedLen(len(p.Key))+b64.EncodedLen(len(p.UserHandle))+len(p.RPID))
	defer func() { clear(msg) }()
	msg = append(msg, head[:len(head)-1]...)
	msg = append(msg, `,"params":{"authenticatorId":`...)
	msg = strconv.AppendQuote(msg, a.id)
	msg = append(msg, `,"credential":{"isResidentCredential":true,"rpId":`...)
	msg = strconv.AppendQuote(msg, p.RPID) // Valid: printable ASCII
	msg = append(msg, `,"credentialId":"`...)
	msg = b64.AppendEncode(msg, p.ID)
	msg = append(msg, `","userHandle":"`...)
	msg = b64.AppendEncode(msg, p.UserHandle)
	msg = append(msg, `","privateKey":"`...)
	msg = b64.AppendEncode(msg, p.Key)
	msg = append(msg, `","signCount":`...)
	msg = strconv.AppendUint(msg, uint64(p.SignCount), 10)
	msg = append(msg, "}}}\x00"...)
	return a.b.send(ctx, id, a.sid, "WebAuthn.addCredential", msg, nil)
}

// webauthnEvent hands a WebAuthn event (raw: the whole message) to its authenticator, and
// zeroes what it decoded. Called on the reader.
func (b *Browser) webauthnEvent(method string, params json.RawMessage) {
	var p struct {
		AuthenticatorID string `json:"authenticatorId"`
		Credential      struct {
			CredentialID []byte `json:"credentialId"`
			RPID         string `json:"rpId"`
			PrivateKey   []byte `json:"privateKey"`
			UserHandle   []byte `json:"userHandle"`
			SignCount    uint32 `json:"signCount"`
		} `json:"credential"`
	}
	err := json.Unmarshal(params, &p)
	c := &p.Credential
	defer func() { clear(c.CredentialID); clear(c.PrivateKey); clear(c.UserHandle) }()
	if err != nil {
		return
	}
	b.auths.mu.Lock()
	a := b.auths.m[p.AuthenticatorID]
	b.auths.mu.Unlock()
	if a == nil {
		return
	}
	ev := AuthenticatorEvent{Passkey: credential.Passkey{RPID: c.RPID, ID: bytes.Clone(c.CredentialID), SignCount: c.SignCount}}
	switch method {
	case "WebAuthn.credentialAdded":
		ev.Added = true
		ev.Passkey.UserHandle, ev.Passkey.Key = bytes.Clone(c.UserHandle), bytes.Clone(c.PrivateKey)
	case "WebAuthn.credentialAsserted":
		a.asserted.Add(1)
		for {
			m := a.maxCount.Load()
			if c.SignCount <= m || a.maxCount.CompareAndSwap(m, c.SignCount) {
				break
			}
		}
	default:
		return
	}
	select {
	case a.Events <- ev:
	default:
		ev.Passkey.Zero()
	}
}
