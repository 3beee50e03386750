package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/wire"
)

// HTTP Basic authentication by alias.
//
// Every authentication challenge of a document request reaches the host (Fetch.authRequired,
// browser-wide: navpolicy.go), and the host cancels every one of them (the page shows the
// server's 401 body): Chromium is never handed a password for a challenge
// (Fetch.continueWithAuth), because it would keep it in its HTTP auth cache and send it, unasked,
// from every session of the same browser context (the durable one is shared).
//
// A main-frame challenge that is a server's (never a proxy's) with scheme Basic is remembered,
// so that the verb's result carries auth_required kind "basic" with the origin's aliases.
// 'auth login' answers it after presence (the prompt says "HTTP Basic authentication"): the
// session then holds the answer, and every request of the session's page (its frames and its
// workers: Fetch.requestPaused at the request stage, the interception of the allowlist and the
// network guard) to that origin's protection space — the challenged URL's directory and below,
// as RFC 7617 has browsers do — goes with an Authorization header of the host's own
// (cdp.ContinueWithBasic: the password's only way into Chromium, built by hand like
// Input.insertText's). So an application's scripts and API calls under the realm work as its
// document does.
//
//   - Never another origin, another path of the origin, another session, or a proxy's
//     challenge; each of those gets the 401 (and, for a main frame, auth_required again, which
//     needs its own approval).
//   - A second challenge for a request that carried the answer (the server refused it) ends
//     it: the answer is forgotten and zeroed, and a login waiting for it is "failed".
//   - The answer is zeroed when the session's page is replaced (a crash, a discard), when the
//     session closes, at a profile clear and when the host stops; the password is a released
//     secret like a typed one (the echo scan and the network guard know its forms, the
//     "account:password" of the header among them).

// basicState is a session's Basic-auth state, written by the event handler and the verbs.
type basicState struct {
	mu    sync.Mutex
	seen  *basicSeen  // the last main-frame Basic challenge that was cancelled
	space *basicSpace // the approved answer, for the protection space it was given for
}

type basicSeen struct {
	origin, realm, url string
	at                 time.Time
}

// basicSpace is an approved Basic answer and where it goes.
type basicSpace struct {
	origin   string
	prefix   string // the challenged URL's directory: the protection space's paths
	url      string // the challenged URL (the login's first request)
	account  string
	password []byte
	used     bool // a request carried it
	again    bool // a challenge came for a request that carried it: refused
}

// covers reports whether a request to u (of origin o) is in the space.
func (sp *basicSpace) covers(o, u string) bool {
	if sp == nil || sp.password == nil || o != sp.origin {
		return false
	}
	return strings.HasPrefix(pathOf(u), sp.prefix)
}

// forget zeroes the session's Basic answer (the page replaced, the session closed).
func (st *basicState) forget() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.space != nil {
		credential.Zero(st.space.password)
		st.space.password = nil
		st.space = nil
	}
}

// spaceOf is the protection space of a challenged URL: its path up to the last "/".
func spaceOf(u string) string {
	p := pathOf(u)
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i+1]
	}
	return "/"
}

// pathOf is u's path ("/" when empty), without query or fragment.
func pathOf(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return "/"
	}
	if i := strings.IndexAny(rest, "/?#"); i < 0 || rest[i] != '/' {
		return "/"
	} else {
		rest = rest[i:]
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// authChallenged answers one Fetch.authRequired (on the event reader's behalf: may block).
func (h *Host) authChallenged(b *cdp.Browser, params json.RawMessage) {
	var p struct {
		RequestID string `json:"requestId"`
		FrameID   string `json:"frameId"`
		Request   struct {
			URL string `json:"url"`
		} `json:"request"`
		Challenge struct {
			Source string `json:"source"`
			Origin string `json:"origin"`
			Scheme string `json:"scheme"`
			Realm  string `json:"realm"`
		} `json:"authChallenge"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cancelAuth := func() {
		b.Call(ctx, "", "Fetch.continueWithAuth", map[string]any{"requestId": p.RequestID, "authChallengeResponse": map[string]any{"response": "CancelAuth"}}, nil)
	}
	s := h.sessionOfTarget(p.FrameID) // main frames only: a frame's id is never a target's
	o, ok := offerable(p.Challenge.Source, p.Challenge.Scheme, p.Request.URL, p.Challenge.Origin)
	if s == nil || !ok {
		cancelAuth()
		return
	}
	s.basic.mu.Lock()
	if sp := s.basic.space; sp.covers(o, p.Request.URL) && sp.used {
		sp.again = true // the server refused the answer: it goes no further
		credential.Zero(sp.password)
		sp.password = nil
	}
	s.basic.seen = &basicSeen{origin: o, realm: printable(clip.Text(p.Challenge.Realm, 128)), url: p.Request.URL, at: time.Now()}
	s.basic.mu.Unlock()
	cancelAuth()
}

// offerable decides whether a challenge of a session's main frame may be offered to the agent
// (auth_required kind "basic") and so, after presence, answered: only a server's (never a
// proxy's: source "Proxy", a 407) Basic challenge from the origin of the request it answers.
// It returns that origin.
func offerable(source, scheme, requestURL, challengeOrigin string) (string, bool) {
	o, err := origin.Canonical(originOf(requestURL))
	co, cerr := origin.Canonical(challengeOrigin)
	if source != "Server" || !strings.EqualFold(scheme, "basic") || err != nil || cerr != nil || o != co {
		return "", false
	}
	return o, true
}

// pausedDoc is what the host reads of a paused document request (Fetch.requestPaused).
type pausedDoc struct {
	RequestID string `json:"requestId"`
	FrameID   string `json:"frameId"`
	Request   struct {
		URL     string            `json:"url"`
		Method  string            `json:"method"`
		Headers map[string]string `json:"headers"`
	} `json:"request"`
}

// basicPaused answers a paused request (Fetch.requestPaused, request stage, on the browser
// target) of a session's page, its frames or its workers, when it goes to the protection space
// of the session's approved Basic answer: it goes on with that answer in its Authorization
// header (cdp.ContinueWithBasic). It reports whether it took the request (answered or failed).
func (h *Host) basicPaused(b *cdp.Browser, p pausedDoc) bool {
	s := h.sessionOfFrame(p.FrameID)
	if s == nil {
		return false
	}
	o, err := origin.Canonical(originOf(p.Request.URL))
	if err != nil {
		return false
	}
	s.basic.mu.Lock()
	sp := s.basic.space
	if !sp.covers(o, p.Request.URL) {
		s.basic.mu.Unlock()
		return false
	}
	sp.used = true
	account, pw := sp.account, append([]byte(nil), sp.password...)
	s.basic.mu.Unlock()
	defer credential.Zero(pw)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.ContinueWithBasic(ctx, "", p.RequestID, p.Request.Headers, account, pw); err != nil {
		b.Call(ctx, "", "Fetch.failRequest", map[string]any{"requestId": p.RequestID, "errorReason": "Aborted"}, nil)
	}
	return true
}

// printable replaces what a prompt should not show (controls, quotes) in a page-chosen text.
func printable(t string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '"' || r == 0xfffd {
			return '?'
		}
		return r
	}, t)
}

// basicPending returns the session's last cancelled Basic challenge when the page still shows
// its URL (the 401 answer of that navigation).
func (s *session) basicPending(pageURL string) *basicSeen {
	s.basic.mu.Lock()
	defer s.basic.mu.Unlock()
	if s.basic.seen == nil || s.basic.seen.url != pageURL {
		return nil
	}
	c := *s.basic.seen
	return &c
}

// basicChallenged reports whether the session's main frame got, since since, a Basic challenge
// for url that the host cancelled (basicSeen).
func (s *session) basicChallenged(url string, since time.Time) bool {
	s.basic.mu.Lock()
	defer s.basic.mu.Unlock()
	return s.basic.seen != nil && s.basic.seen.url == url && !s.basic.seen.at.Before(since)
}

// basicAuthRequired issues a challenge for a pending Basic challenge of the session's page.
func (h *Host) basicAuthRequired(ctx context.Context, b *cdp.Browser, s *session) *control.AuthRequired {
	u, _, err := h.pageInfo(ctx, b, s)
	if err != nil {
		return nil
	}
	seen := s.basicPending(u)
	if seen == nil {
		return nil
	}
	doc, err := h.documentID(ctx, b, s)
	if err != nil {
		return nil
	}
	var ch brokerapi.ChallengeResult
	err = h.withBroker(ctx, func(c *brokerapi.Client) error {
		var err error
		ch, err = c.Challenge(ctx, brokerapi.ChallengeParams{Session: s.name, Document: doc, Origin: seen.origin, Isolated: s.isolated})
		return err
	})
	if err != nil {
		h.o.Log.Warn("no challenge for an HTTP Basic challenge", "session", s.name, "code", wire.CodeOf(err))
		return nil
	}
	return &control.AuthRequired{Kind: "basic", Challenge: ch.Challenge, Origin: ch.Origin, Aliases: ch.Aliases, ExpiresAt: ch.ExpiresAt}
}

// basicLogin answers the session page's pending Basic challenge with alias (AuthLogin when the
// page is a 401 with a Basic challenge): a release after presence whose prompt says "HTTP
// Basic authentication", then the same URL again, whose first Basic challenge from that
// origin's server, in the main frame, gets the password. The result is authenticated when
// that answer was taken (no second challenge, a document of the origin loaded), failed when
// the server challenged again.
func (h *Host) basicLogin(ctx context.Context, look *lookBound, b *cdp.Browser, s *session, p control.AuthParams, seen *basicSeen, res *control.AuthResult) error {
	doc, err := h.documentID(look.ctx, b, s)
	if err != nil {
		return err
	}
	res.Origin = seen.origin
	res.Evidence.URLBefore = clip.Text(withoutQuery(seen.url), 512)
	challengeID := p.Challenge
	if challengeID == "" {
		err = h.withBroker(look.ctx, func(c *brokerapi.Client) error {
			ch, err := c.Challenge(look.ctx, brokerapi.ChallengeParams{Session: s.name, Document: doc, Origin: seen.origin, Isolated: s.isolated})
			challengeID = ch.Challenge
			return err
		})
		if err != nil {
			return err
		}
	}
	realm := "HTTP Basic authentication"
	if seen.realm != "" {
		realm += ", realm " + seen.realm
	}
	// No window opened from the session's pages may hold the page when the answered document
	// loads: it could read what the server sends back for the header (red-team round 13b read
	// an echoed Authorization header from a popup). Closed before the person is asked; one
	// opened after that taints the answered document, which is then discarded (below).
	if _, err := h.closeOpened(look.ctx, b, s); err != nil {
		return h.browserErr(err)
	}
	if err := look.ask(); err != nil {
		return err
	}
	rel, secret, err := h.release(ctx, look.intact, brokerapi.ReleaseParams{Challenge: challengeID, Alias: p.Alias, Session: s.name, Document: doc,
		Purpose: brokerapi.PurposeBasic, Path: pathQuery(seen.url), Field: clip.Text(realm, brokerapi.MaxField)})
	defer func() { credential.Zero(secret) }()
	if err != nil {
		return err
	}
	if rel.Origin != seen.origin {
		return wire.Errorf(wire.CodeOriginMismatch, "the credential is for %s, the challenge is from %s", rel.Origin, seen.origin)
	}
	if err := credential.ValidSecret(secret); err != nil || rel.Account == "" || strings.ContainsRune(rel.Account, ':') {
		return wire.Errorf(wire.CodeInvalidArgument, "alias %q cannot answer HTTP Basic authentication (no account, an account with ':' or a password that is not text); nothing was sent", rel.Alias)
	}
	if err := h.sameListener(rel.Origin, rel.Listener); err != nil {
		return err
	}
	// While the person decided, the 401 page's script may have opened a window that would
	// hold the page when the answered document loads. The page goes to about:blank first (no
	// script runs there), the windows are closed, and any left is a refusal: the header is
	// not sent.
	if err := h.blankBeforeAnswer(ctx, b, s); err != nil {
		return err
	}
	// The answer is a released secret the browser's requests now carry: the network guard
	// lets it go only to its origin, in the Authorization header (wayout.go).
	h.egress.Add(secret, rel.Account, s.name, []string{rel.Origin}).SetInPage(false)
	if err := h.holdAll(ctx, b); err != nil {
		return h.browserErr(err)
	}
	sp := &basicSpace{origin: rel.Origin, prefix: spaceOf(seen.url), url: seen.url, account: rel.Account, password: append([]byte(nil), secret...)}
	credential.Zero(secret)
	s.basic.forget()
	s.basic.mu.Lock()
	s.basic.space, s.basic.seen = sp, nil
	s.basic.mu.Unlock()
	s.drain()
	nctx, ncancel := context.WithTimeout(ctx, NavigationWait)
	defer ncancel()
	var r struct {
		LoaderID  string `json:"loaderId"`
		ErrorText string `json:"errorText"`
	}
	if err := b.Call(nctx, s.sid, "Page.navigate", map[string]any{"url": seen.url}, &r); err != nil {
		return h.browserErr(err)
	}
	if r.LoaderID != "" {
		s.waitLoad(nctx, r.LoaderID)
	}
	res.Evidence.Steps = 1
	res.Evidence.Navigated = true
	if u, _, err := h.pageInfo(ctx, b, s); err == nil {
		res.Evidence.URLAfter = clip.Text(withoutQuery(u), 512)
	}
	s.basic.mu.Lock()
	used, again := sp.used, sp.again
	s.basic.mu.Unlock()
	if d := s.loaded.Load(); d != nil && d.tainted.Load() {
		h.discardPage(ctx, b, s)
		return errReachableAnswer
	}
	// The answered document may print the request it got (a debug page that shows the
	// headers): it falls under the echo rule at once (echoed.go).
	if err := h.pictureRefused(ctx, b, s); errors.Is(err, errEchoed) {
		return err
	}
	switch {
	case used && !again && r.ErrorText == "":
		res.Status = "authenticated"
	case used:
		res.Status = "failed"
	default:
		res.Status = "unknown" // the server did not challenge again
	}
	return nil
}

// blankBeforeAnswer takes the session's page to about:blank and closes every window opened
// from it; an error when one remains (nothing is sent then).
func (h *Host) blankBeforeAnswer(ctx context.Context, b *cdp.Browser, s *session) error {
	nctx, cancel := context.WithTimeout(ctx, NavigationWait)
	defer cancel()
	var r struct {
		LoaderID string `json:"loaderId"`
	}
	if err := b.Call(nctx, s.sid, "Page.navigate", map[string]any{"url": "about:blank"}, &r); err != nil {
		return h.browserErr(err)
	}
	if r.LoaderID != "" {
		s.waitLoad(nctx, r.LoaderID)
	}
	if _, err := h.closeOpened(nctx, b, s); err != nil {
		return h.browserErr(err)
	}
	if s.reachable() {
		return errReachableBasic
	}
	return nil
}
