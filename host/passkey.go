package host

import (
	"cmp"
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/wire"
)

// Passkeys by alias. A passkey is a WebAuthn credential whose private key lives in the vault
// like a password (credential.Passkey, sealed by brokerd). It reaches Chromium only as one
// credential of a virtual authenticator (the DevTools WebAuthn domain, cdp/webauthn.go) that
// the host gives one session for one ceremony:
//
//   - Enrolment ('credentials add --passkey', the person's command, from a terminal): the
//     session's page must be of the record's origin; the host gives it an empty authenticator,
//     the person completes the site's registration, and the new credential (RP ID exactly the
//     origin's host) goes from the authenticator's event to brokerd; the authenticator is
//     removed at once, whatever happens.
//   - Sign-in ('auth login --alias N' of a passkey alias, a journey's login, MCP auth_login):
//     on a page of the credential's origin showing a passkey sign-in button, brokerd asks the
//     person ("Use the saved passkey …") under the challenge of that document and path; the
//     host checks the document and the loopback listener again, adds the one credential to a
//     new authenticator of the session, clicks the button, and removes the authenticator at
//     the first assertion, a navigation of the page, PasskeyWait, a cancellation or the page's
//     end. The sign count reached goes back to brokerd.
//
// Not guaranteed: a second ceremony the page starts in the moment between the first one's
// answer and the removal (one DevTools round trip) is answered too; a navigation is seen from
// the page's events, so a new document of the same origin could be answered in that same
// moment. Both need the page's own script, on the credential's origin.

// PasskeyWait bounds a passkey sign-in's ceremony, from the click to the assertion.
const PasskeyWait = 15 * time.Second

// passkeyWords name a page's passkey sign-in control; notSignIn names one that creates or
// manages passkeys instead.
var (
	passkeyWords = regexp.MustCompile(`(?i)pass-?key|security key|webauthn`)
	notSignIn    = regexp.MustCompile(`(?i)\b(create|register|add|new|set ?up|manage|remove|delete|rename)\b`)
)

// passkeyTrigger is the ref of the top document's passkey sign-in button or link.
func passkeyTrigger(st pageState) (string, string, bool) {
	for _, e := range st.outline.Elements {
		if e.Frame == "" && !e.Disabled && (e.Kind == "button" || e.Kind == "link") && passkeyWords.MatchString(e.Text) && !notSignIn.MatchString(e.Text) {
			return e.Ref, e.Text, true
		}
	}
	return "", "", false
}

// rpHost is the host name of a canonical origin: a passkey's RP ID must be exactly it.
func rpHost(o string) string {
	u, err := url.Parse(o)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// isPasskey reports whether alias is one of the challenge's passkeys.
func isPasskey(ch brokerapi.ChallengeResult, alias string) bool {
	for _, a := range ch.Passkeys {
		if strings.EqualFold(a, alias) {
			return true
		}
	}
	return false
}

// passkeyLogin signs in with the passkey alias p.Alias on the page st (origin si.origin),
// under challenge challengeID.
func (si *signIn) passkeyLogin(ctx context.Context, p control.AuthParams, res *control.AuthResult, st pageState, challengeID string) error {
	h, b, s, look := si.h, si.b, si.s, si.look
	ref, label, ok := passkeyTrigger(st)
	if !ok {
		return wire.Errorf(wire.CodeNoLoginForm, "alias %q is a passkey, and this page shows no passkey sign-in button; nothing was asked or released", p.Alias).
			WithHint("open the site's sign-in page that offers a passkey (a button such as 'Sign in with a passkey'), then sign in again")
	}
	if _, err := h.closeOpened(look.ctx, b, s); err != nil {
		return h.browserErr(err)
	}
	if err := si.noForeignFrames(look.ctx, "nothing was asked or released"); err != nil {
		return err
	}
	rel, secret, err := si.release(ctx, st, brokerapi.ReleaseParams{Challenge: challengeID, Alias: p.Alias,
		Purpose: brokerapi.PurposePasskey, Field: label, NewPath: p.NewLoginPath})
	defer func() { credential.Zero(secret) }()
	if err != nil {
		return err
	}
	pk, err := credential.ParsePasskey(secret)
	credential.Zero(secret)
	defer pk.Zero()
	if err != nil {
		return wire.Errorf(wire.CodeInvalidArgument, "brokerd's passkey for alias %q is malformed; nothing was used", rel.Alias)
	}
	if rel.Origin != si.origin {
		return wire.Errorf(wire.CodeOriginMismatch, "the credential is for %s, the page is %s", rel.Origin, si.origin)
	}
	if pk.RPID != rpHost(si.origin) {
		return wire.Errorf(wire.CodeOriginMismatch, "the passkey of alias %q is for RP ID %q, not %q (the page's host); nothing was used", rel.Alias, pk.RPID, rpHost(si.origin))
	}
	pk.SignCount = max(pk.SignCount, rel.SignCount)
	si.listener = rel.Listener
	// What the person approved must still be what the key is given to.
	if err := h.sameListener(si.origin, rel.Listener); err != nil {
		return err
	}
	if err := h.sameDocument(ctx, b, s, st.document, "passkey sign-in page"); err != nil {
		return err
	}
	uses, count, err := si.ceremony(ctx, st, ref, pk)
	pk.Zero()
	if uses > 0 {
		h.passkeySigned(ctx, challengeID, count, uses)
	}
	if err != nil {
		return err
	}
	h.o.Log.Info("passkey used", "session", s.name, "alias", rel.Alias, "origin", rel.Origin)
	res.Status, err = si.verify(ctx, st)
	if err == nil && res.Status == "authenticated" {
		h.learnPath(ctx, challengeID)
	}
	return err
}

// ceremony gives the session an authenticator holding pk alone, clicks ref and waits for the
// page's assertion; the authenticator is removed on every way out. It answers how many
// assertions the authenticator made before its removal and the highest sign count among them:
// more than one (the page asked again before the removal, or the host was held up meanwhile,
// stopped by a process of the user, say) is PASSKEY_OVERUSED, whatever else happened.
func (si *signIn) ceremony(ctx context.Context, st pageState, ref string, pk credential.Passkey) (uses int, count uint32, err error) {
	h, b, s := si.h, si.b, si.s
	a, err := b.AddAuthenticator(ctx, s.sid)
	if err != nil {
		return 0, 0, h.browserErr(err)
	}
	removed := false
	var removeErr error
	remove := func() {
		if !removed {
			removed = true
			removeErr = a.Remove()
		}
	}
	defer func() {
		remove()
		if removeErr != nil {
			// The key may still be in the page's authenticator, its uses uncounted: the page
			// goes, and the key with its frame tree.
			h.o.Log.Error("could not remove a passkey's virtual authenticator; stopping the page", "session", s.name, "err", removeErr)
			h.stopPage(b, s, s.sid, "its passkey could not be taken back from the browser")
			uses, count = 0, 0
			err = wire.Errorf(wire.CodeBrowserFailed, "the browser did not take the passkey back (%v); the page was stopped, and whether it signed in is unknown", removeErr)
			return
		}
		if uses, count = a.Used(); uses > 1 {
			h.o.Log.Error("a page had a passkey answer more than once under one approval", "session", s.name, "uses", uses)
			err = wire.Errorf(wire.CodePasskeyOverused, "the page had the passkey answer %d times under one approval before the host could remove it (was the host held up, stopped?); the page may be signed in, and it holds %d sign-ins of the site", uses, uses)
		}
	}()
	// From here every event of the page counts: a navigation that commits, or a frame that
	// comes, while the key is in the browser ends the ceremony. The document must still be the
	// one the person approved, with no navigation under way and no frame of another origin
	// (a subdomain may claim its parent's RP ID).
	s.watchFrames.Store(true)
	defer s.watchFrames.Store(false)
	s.drain()
	if err := h.sameDocument(ctx, b, s, st.document, "passkey sign-in page"); err != nil {
		return 0, 0, err
	}
	if err := navUnderWay(s, "passkey sign-in"); err != nil {
		return 0, 0, err
	}
	if err := si.noForeignFrames(ctx, "the passkey was not used"); err != nil {
		return 0, 0, err
	}
	if err := a.AddCredential(ctx, pk); err != nil {
		return 0, 0, h.browserErr(err)
	}
	// WebAuthn answers only a page that has the focus.
	if err := b.Call(ctx, s.sid, "Page.bringToFront", nil, nil); err != nil {
		return 0, 0, h.browserErr(err)
	}
	t, ok := st.refs[ref]
	if !ok {
		return 0, 0, wire.Errorf(wire.CodeNoLoginForm, "the passkey sign-in button is gone")
	}
	if err := h.clickNode(ctx, b, s, t); err != nil {
		return 0, 0, err
	}
	si.ev.Steps++
	wctx, cancel := context.WithTimeout(ctx, PasskeyWait)
	defer cancel()
	pageDone := b.SessionDone(s.sid)
	unused := "the passkey was removed"
	// The session's record of its document (navguard.go) is updated before a main-frame
	// navigation's event reaches s.events, and whatever that buffer drops: it is looked at on
	// every event and every 20 ms.
	moved := func() bool { d := s.loaded.Load(); return d == nil || d.document != st.document }
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if moved() {
				remove()
				return 0, 0, wire.Errorf(wire.CodeDocumentChanged, "the page navigated before it used the passkey; %s", unused)
			}
		case ev := <-a.Events:
			remove() // first: the rest is checked with the key out of the browser
			if ev.Added || string(ev.Passkey.ID) != string(pk.ID) || ev.Passkey.RPID != pk.RPID {
				ev.Passkey.Zero()
				return 0, 0, wire.Errorf(wire.CodeDocumentChanged, "the page's authenticator saw another credential than the passkey; it was removed, and the page may not be signed in")
			}
			return 1, ev.Passkey.SignCount, nil
		case ev := <-s.events:
			if moved() {
				remove()
				return 0, 0, wire.Errorf(wire.CodeDocumentChanged, "the page navigated before it used the passkey; %s", unused)
			}
			if o, ok := frameOrigin(ev); ok && o != si.origin {
				remove()
				return 0, 0, errForeignFrame(o, unused)
			}
			if ev.Method == "Page.frameAttached" {
				// (Its origin is not known yet: a frame added during the ceremony ends it.)
				remove()
				return 0, 0, errForeignFrame("a frame added during the ceremony", unused)
			}
		case <-pageDone:
			remove()
			return 0, 0, s.pageLost()
		case <-wctx.Done():
			remove()
			if ctx.Err() != nil {
				return 0, 0, withdrawn(ctx)
			}
			return 0, 0, wire.Errorf(wire.CodeTimeout, "the page did not use the passkey within %v of the click on its passkey button; %s", PasskeyWait, unused)
		}
	}
}

// errForeignFrame refuses a passkey ceremony on a page holding a frame of origin o.
func errForeignFrame(o, nothing string) error {
	return wire.Errorf(wire.CodeOriginMismatch, "the page holds a frame of another origin (%s), which could answer the passkey's ceremony in its place; %s", o, nothing).
		WithHint("sign in with a passkey on a page without frames of other origins (the site's own sign-in page)")
}

// noForeignFrames checks the session's frame tree: no frame of an origin other than
// si.origin (opaque ones, which no ceremony can come from, aside).
func (si *signIn) noForeignFrames(ctx context.Context, nothing string) error {
	var r struct {
		Tree frameNode `json:"frameTree"`
	}
	if err := si.b.Call(ctx, si.s.sid, "Page.getFrameTree", nil, &r); err != nil {
		return si.h.browserErr(err)
	}
	n := 0
	var walk func(f frameNode) error
	walk = func(f frameNode) error {
		if n++; n > maxFrames {
			return errForeignFrame("too many frames to check", nothing)
		}
		if o := canonicalOrigin(f.Frame.SecurityOrigin); o != "" && o != si.origin {
			return errForeignFrame(o, nothing)
		}
		for _, c := range f.Children {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(r.Tree); err != nil {
		return err
	}
	// A frame of another site runs in a process of its own, a target of its own that the page's
	// frame tree leaves out: every iframe target whose parents lead to the page is one.
	var ts struct {
		Infos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
			URL      string `json:"url"`
			ParentID string `json:"parentId"`
		} `json:"targetInfos"`
	}
	if err := si.b.Call(ctx, "", "Target.getTargets", nil, &ts); err != nil {
		return si.h.browserErr(err)
	}
	parent := map[string]string{}
	for _, t := range ts.Infos {
		parent[t.TargetID] = t.ParentID
	}
	page := si.s.pageTarget()
	for _, t := range ts.Infos {
		if t.Type != "iframe" {
			continue
		}
		id := t.ParentID
		for hops := 0; id != "" && id != page && hops < maxFrames; hops++ {
			id = parent[id]
		}
		if id == page {
			return errForeignFrame(cmp.Or(canonicalOrigin(originOf(t.URL)), "a frame of another site"), nothing)
		}
	}
	return nil
}

// maxFrames bounds the frames of a page a passkey ceremony may be run on.
const maxFrames = 256

type frameNode struct {
	Frame struct {
		SecurityOrigin string `json:"securityOrigin"`
	} `json:"frame"`
	Children []frameNode `json:"childFrames"`
}

// canonicalOrigin is a frame's security origin o canonical; "" for an opaque one ("null", or
// none yet). One that cannot hold credentials (plain http away from loopback, say) is returned
// as Chromium wrote it: it is still another origin.
func canonicalOrigin(o string) string {
	if o == "" || o == "null" || o == "://" {
		return ""
	}
	if c, err := origin.Canonical(o); err == nil {
		return c
	}
	return o
}

// frameOrigin is the origin of a child frame's new document (ev Page.frameNavigated).
func frameOrigin(ev cdp.Event) (string, bool) {
	if ev.Method != "Page.frameNavigated" {
		return "", false
	}
	var p struct {
		Frame struct {
			ParentID       string `json:"parentId"`
			SecurityOrigin string `json:"securityOrigin"`
		} `json:"frame"`
	}
	if json.Unmarshal(ev.Params, &p) != nil || p.Frame.ParentID == "" {
		return "", false
	}
	o := canonicalOrigin(p.Frame.SecurityOrigin)
	return o, o != ""
}

// passkeySigned tells brokerd the sign count a released passkey reached (logged, not fatal: the
// next release gives the authenticator a lower count, which a site may reject as a clone).
func (h *Host) passkeySigned(ctx context.Context, challenge string, count uint32, uses int) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := h.withBroker(ctx, func(c *brokerapi.Client) error { return c.PasskeySigned(ctx, challenge, count, uses) }); err != nil {
		h.o.Log.Warn("brokerd did not keep a passkey's sign count", "err", err)
	}
}

// PasskeyAdd is credentials.add_passkey: the person's command that saves the passkey the site
// of the session's page registers within the wait.
func (h *Host) PasskeyAdd(ctx context.Context, p control.PasskeyAddParams) (brokerapi.Credential, error) {
	o, err := origin.Canonical(p.Origin)
	if err != nil {
		return brokerapi.Credential{}, err
	}
	if err := credential.ValidAlias(p.Alias); err != nil {
		return brokerapi.Credential{}, err
	}
	if err := credential.ValidAccount(p.Account); err != nil {
		return brokerapi.Credential{}, err
	}
	wait := control.PasskeyAddWait
	if p.WaitMS > 0 {
		wait = min(time.Duration(p.WaitMS)*time.Millisecond, control.MaxPasskeyAddWait)
	}
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return brokerapi.Credential{}, err
	}
	u, _, err := h.pageInfo(ctx, b, s)
	if err != nil {
		unlock()
		return brokerapi.Credential{}, err
	}
	if po, err := origin.Canonical(originOf(u)); err != nil || po != o {
		unlock()
		return brokerapi.Credential{}, wire.Errorf(wire.CodeOriginMismatch, "session %q shows a page of %s, not %s; nothing was armed", s.name, originOf(u), o).
			WithHint("open the site's passkey registration page in that session first: headless visit --session " + s.name + " URL")
	}
	a, err := b.AddAuthenticator(ctx, s.sid)
	if err == nil {
		err = b.Call(ctx, s.sid, "Page.bringToFront", nil, nil)
	}
	name, isolated, sid := s.name, s.isolated, s.sid
	// The person completes the registration with the session's own verbs meanwhile.
	unlock()
	if a != nil {
		defer a.Remove()
	}
	if err != nil {
		return brokerapi.Credential{}, h.browserErr(err)
	}
	h.o.Log.Info("waiting for a passkey registration", "session", name, "origin", o, "wait", wait)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var pk credential.Passkey
	defer func() { pk.Zero() }()
	defer func() { // what is left of the authenticator's events: zeroed
		for {
			select {
			case ev := <-a.Events:
				ev.Passkey.Zero()
			default:
				return
			}
		}
	}()
	for pk.ID == nil {
		select {
		case ev := <-a.Events:
			if ev.Added && len(ev.Passkey.ID) > 0 && ev.Passkey.RPID == rpHost(o) {
				pk = ev.Passkey
			} else {
				// An assertion, or a credential for another RP ID: not this enrolment's.
				h.o.Log.Warn("a passkey registration of another RP ID was not saved", "session", name, "rp_id", ev.Passkey.RPID)
				ev.Passkey.Zero()
			}
		case <-b.SessionDone(sid):
			return brokerapi.Credential{}, wire.Errorf(wire.CodeSessionUnknown, "session %q's page went away before the site registered a passkey; nothing was saved", name)
		case <-wctx.Done():
			if ctx.Err() != nil {
				return brokerapi.Credential{}, withdrawn(ctx)
			}
			return brokerapi.Credential{}, wire.Errorf(wire.CodeTimeout, "the site did not register a passkey for RP ID %q in session %q within %v; nothing was saved", rpHost(o), name, wait).
				WithHint("start the site's passkey registration (its 'create a passkey' button) while the command waits, or give 'headless credentials add' longer with --wait; a passkey for another RP ID than the origin's host is never saved")
		}
	}
	if err := a.Remove(); err != nil {
		h.o.Log.Warn("could not remove the enrolment's virtual authenticator", "session", name, "err", err)
	}
	stored, err := credential.StorePasskey(pk)
	defer func() { credential.Zero(stored) }()
	if err != nil {
		return brokerapi.Credential{}, err
	}
	store := ""
	if isolated {
		store = name
	}
	var cred brokerapi.Credential
	err = h.withBroker(ctx, func(c *brokerapi.Client) error {
		cred, err = c.AddCredential(ctx, brokerapi.AddParams{Session: store, Origin: o, Account: p.Account, Alias: p.Alias, LoginPaths: p.LoginPaths, Secret: stored})
		return err
	})
	if err == nil {
		h.o.Log.Info("passkey saved", "session", name, "origin", cred.Origin, "alias", cred.Alias)
	}
	return cred, err
}
