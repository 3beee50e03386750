package host

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/egress"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/wire"
)

// The password's way out, guarded at the network (package egress has the contract).
//
//   - Before the first character of a secret is typed into a page (guardSecret), the host adds
//     it to h.egress, and from then on, for the host's life, the browser holds every request of
//     every target (pages, frames, workers, service workers, windows; every resource type) at
//     the request stage (Fetch.requestPaused on the browser target: the same interception as
//     the allowlist's and Basic's, widened from documents to all) until egress.Check let it go.
//   - A refused request fails before it leaves (BlockedByClient); the page that holds the secret
//     (and the page that sent the request, when another session's) is stopped at once — its
//     renderer crashed, its session's next command answers SECRET_EGRESS naming where the
//     request was going and opens a fresh blank page — and brokerd audits it (egress.refused).
//     A sign-in under way answers SECRET_EGRESS (its calls into the stopped page fail so).
//   - While the secret may be in the page (until its document is gone: trackNavigation), the
//     page target's WebSockets to other origins and its peer-to-peer connections are offline
//     (egress.ChannelRules), and a body the browser does not hand over counts as carrying it.

// wayOut is the host's per-browser state of the guard.
type wayOut struct {
	mu sync.Mutex
	// all is the browser whose browser-wide interception takes every resource type (read
	// without mu by the event reader).
	all atomic.Pointer[cdp.Browser]
	// children are the sessions of targets attached under a page holding a secret (or, nil,
	// under the browser: shared workers), for their own attachments (coverChild); pending
	// counts those whose rules are not set yet.
	children sync.Map
	pending  sync.WaitGroup
	// shared are the shared workers attached (guarded by mu).
	shared map[string]bool
	// attachedEver counts the targets of their own ever attached (coverChild).
	attachedEver atomic.Int64
}

// attachedSince reports whether a target of its own was attached under any page (or the
// browser) since mark (attachedEver's value then), or runs under session s's page now: one
// may have taken a secret and sent it where its messages are not seen (a WebSocket), and
// have gone since.
func (w *wayOut) attachedSince(mark int64, s *session) bool {
	return w.attachedEver.Load() != mark || w.hasChild(s)
}

// hasChild reports whether a target of its own runs under session s's page (a frame of
// another site, a worker, its service worker) or under the browser (a shared worker), as the
// guard attached them.
func (w *wayOut) hasChild(s *session) bool {
	found := false
	w.children.Range(func(_, v any) bool {
		c := v.(child)
		found = c.s == nil || c.s == s
		return !found
	})
	return found
}

// typedSecret is a secret typed into a session's page, with the document it is in.
type typedSecret struct {
	sec      *egress.Secret
	document string
}

// fetchPatterns are the browser-wide interception's: documents only (the allowlist, Basic)
// until a secret was typed into a page, then every request.
func (h *Host) fetchPatterns() map[string]any {
	pat := map[string]any{"urlPattern": "*", "requestStage": "Request"}
	if !h.egress.Active() {
		pat["resourceType"] = "Document"
	}
	return map[string]any{"handleAuthRequests": true, "patterns": []map[string]any{pat}}
}

// holdAll has browser b hold every request from now on (a no-op once it does).
func (h *Host) holdAll(ctx context.Context, b *cdp.Browser) error {
	h.way.mu.Lock()
	defer h.way.mu.Unlock()
	if h.way.all.Load() == b {
		return nil
	}
	if err := b.Call(ctx, "", "Fetch.enable", h.fetchPatterns(), nil); err != nil {
		return err
	}
	h.way.all.Store(b)
	return nil
}

// attachSharedWorkers attaches every running shared worker not attached yet, for coverChild,
// and waits until they have their rules: shared workers belong to no page, so no page's
// auto-attach reaches them; each new one is attached as it is discovered (sharedWorker).
// (Not by the browser's auto-attach: with it, Chromium 156 holds every new window, whatever
// the filter, and a popup froze its opener's renderer.)
func (h *Host) attachSharedWorkers(ctx context.Context, b *cdp.Browser) error {
	var ts struct {
		Infos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfos"`
	}
	if err := b.Call(ctx, "", "Target.getTargets", nil, &ts); err != nil {
		return err
	}
	for _, t := range ts.Infos {
		if t.Type == "shared_worker" && h.way.newShared(t.TargetID) {
			b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true}, nil)
		}
	}
	return h.way.covered(ctx)
}

// maxShared bounds the shared workers the guard remembers attaching.
const maxShared = 256

// newShared records shared worker id as attached; false when it was already.
func (w *wayOut) newShared(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.shared[id] {
		return false
	}
	if w.shared == nil || len(w.shared) >= maxShared {
		w.shared = map[string]bool{}
	}
	w.shared[id] = true
	return true
}

// sharedGone forgets a shared worker that ended (Target.targetDestroyed, on the reader).
func (w *wayOut) sharedGone(params json.RawMessage) {
	var p struct {
		TargetID string `json:"targetId"`
	}
	if json.Unmarshal(params, &p) == nil {
		w.mu.Lock()
		delete(w.shared, p.TargetID)
		w.mu.Unlock()
	}
}

// sharedWorker attaches a shared worker the browser reports (Target.targetCreated, on the
// reader) while a secret may be in a page: its attachment gets the rules (attached).
func (h *Host) sharedWorker(params json.RawMessage) {
	var p struct {
		Info struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfo"`
	}
	b := h.way.all.Load()
	if b == nil || json.Unmarshal(params, &p) != nil || p.Info.Type != "shared_worker" || len(h.egress.InPage("")) == 0 ||
		!h.way.newShared(p.Info.TargetID) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": p.Info.TargetID, "flatten": true}, nil)
	}()
}

// guardSecret starts guarding secret (a password, or with code a one-time code) that the host
// is about to type into document of session s, for the origins of the sign-in si; the
// caller types only when it returns nil, and still zeroes secret.
func (si *signIn) guardSecret(ctx context.Context, document string, account string, secret []byte, code bool) error {
	h, b, s := si.h, si.b, si.s
	origins := append([]string{si.origin}, si.also...)
	var sec *egress.Secret
	if code {
		sec = h.egress.AddCode(secret, s.name, origins)
	} else {
		sec = h.egress.Add(secret, account, s.name, origins)
	}
	s.way.mu.Lock()
	s.way.typed = append(s.way.typed, typedSecret{sec: sec, document: document})
	s.way.mu.Unlock()
	si.secrets = append(si.secrets, sec)
	if err := h.holdAll(ctx, b); err != nil {
		return h.browserErr(err)
	}
	if err := h.attachSharedWorkers(ctx, b); err != nil {
		return wire.Errorf(wire.CodeBrowserFailed, "the browser's shared workers could not be held (%v); nothing was typed", err)
	}
	if err := b.Call(ctx, s.sid, "Network.emulateNetworkConditionsByRule",
		map[string]any{"matchedNetworkConditions": egress.ChannelRules(s.way.origins())}, nil); err != nil {
		return wire.Errorf(wire.CodeBrowserFailed, "the page's WebSockets and peer connections could not be held (%v); nothing was typed", err)
	}
	// The page's frames of other sites and its workers are targets of their own: each is
	// attached as it appears, held before it runs, and gets the same rules (coverChild). Those
	// that run already are attached by this call (their events come before its answer): the
	// typing waits until they have their rules.
	if err := b.Call(ctx, s.sid, "Target.setAutoAttach", autoAttach(), nil); err != nil {
		return wire.Errorf(wire.CodeBrowserFailed, "the page's frames and workers could not be held (%v); nothing was typed", err)
	}
	if err := h.way.covered(ctx); err != nil {
		return err
	}
	si.childMark = h.way.attachedEver.Load()
	return nil
}

// covered waits until every target attached so far has its rules (coverChild).
func (w *wayOut) covered(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		w.pending.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return wire.Errorf(wire.CodeBrowserFailed, "the page's frames and workers could not be held in time; nothing was typed")
	}
}

// autoAttach is Target.setAutoAttach's params for a page's session: every related target
// (frames of other sites, workers, its service worker) attached, flat, and held until the
// host lets it run (runIfWaitingForDebugger).
func autoAttach() map[string]any {
	return map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}
}

// origins are the origins the secrets typed into the session's page may go to.
func (w *sessionWayOut) origins() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, t := range w.typed {
		for _, o := range t.sec.Origins() {
			if !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	return out
}

// coverChild gives a target attached under session s's page (a frame of another site, a
// worker, the page's service worker; or, under the browser, a shared worker: s nil) the
// channel rules before it runs. One that cannot be held stops the page the secret is in:
// nothing may leave unheld.
func (h *Host) coverChild(b *cdp.Browser, s *session, params json.RawMessage) {
	var p struct {
		SessionID string `json:"sessionId"`
		Info      struct {
			Type string `json:"type"`
		} `json:"targetInfo"`
	}
	if json.Unmarshal(params, &p) != nil || p.SessionID == "" {
		return
	}
	h.way.children.Store(p.SessionID, child{s: s, b: b})
	h.way.attachedEver.Add(1)
	h.way.pending.Add(1)
	go func() {
		defer h.way.pending.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var origins []string
		if s != nil {
			origins = s.way.origins()
		} else {
			origins = h.egress.InPageOrigins()
		}
		// The rules hold only where the Network domain is on (measured): on, as for pages,
		// keeping no bodies (sessions.go).
		err := b.Call(ctx, p.SessionID, "Network.enable", map[string]any{"maxTotalBufferSize": 0, "maxResourceBufferSize": 0, "maxPostDataSize": 1}, nil)
		if err == nil {
			err = b.Call(ctx, p.SessionID, "Network.emulateNetworkConditionsByRule", map[string]any{"matchedNetworkConditions": egress.ChannelRules(origins)}, nil)
		}
		if err == nil && (p.Info.Type == "iframe" || p.Info.Type == "page") {
			err = b.Call(ctx, p.SessionID, "Target.setAutoAttach", autoAttach(), nil)
		}
		if err != nil && b.SessionErr(p.SessionID) == nil {
			h.o.Log.Warn("a frame or worker of a page holding a secret could not be held: stopping the page", "type", p.Info.Type, "err", err)
			for _, sec := range h.egress.InPage("") {
				if t := h.sessionNamed(sec.Session); t != nil && (s == nil || t == s) {
					if sid := t.live(); sid != "" {
						b.StopSession(sid, &pageStoppedError{why: "a frame or worker of the page could not be held while a secret was in it", code: wire.CodeSecretEgress})
					}
				}
			}
		}
		b.Call(ctx, p.SessionID, "Runtime.runIfWaitingForDebugger", nil, nil)
		h.o.Log.Info("a frame or worker of a page holding a secret is held", "type", p.Info.Type, "ok", err == nil)
	}()
}

// sessionWayOut is a session's share of the guard, written by the verbs and the event reader.
type sessionWayOut struct {
	mu    sync.Mutex
	typed []typedSecret // the secrets typed into the session's pages that may still be there
	// refused is the guard's last refusal of a request of the session's page, or of one
	// carrying a secret typed there: a sign-in under way answers it (refusedSince).
	refused atomic.Pointer[refusal]
}

type refusal struct {
	err *egressError
	at  time.Time
}

// refusedSince is SECRET_EGRESS when the guard refused a request of the session (or carrying
// its secret) at or after since, else nil.
func (w *sessionWayOut) refusedSince(since time.Time) error {
	r := w.refused.Load()
	if r == nil || r.at.Before(since) {
		return nil
	}
	return wire.Errorf(wire.CodeSecretEgress, "%s", r.err.Error())
}

// documentGone ends, for the secrets typed into session s's pages, their time in the page
// once the main frame of their window shows another document (called on the event reader, or
// when the session's pages are replaced: document ""). Those of the session's other windows
// stay (pages.go).
func (s *session) documentGone(document string) {
	frame, _, _ := strings.Cut(document, "/")
	s.way.mu.Lock()
	defer s.way.mu.Unlock()
	kept := s.way.typed[:0]
	for _, t := range s.way.typed {
		if t.document == document || document != "" && !strings.HasPrefix(t.document, frame+"/") {
			kept = append(kept, t)
			continue
		}
		t.sec.SetInPage(false)
	}
	clear(s.way.typed[len(kept):])
	s.way.typed = kept
}

// pausedRequest is what the host reads of a request the browser holds (Fetch.requestPaused).
type pausedRequest struct {
	RequestID    string `json:"requestId"`
	FrameID      string `json:"frameId"`
	ResourceType string `json:"resourceType"`
	Request      struct {
		URL         string            `json:"url"`
		Method      string            `json:"method"`
		Headers     map[string]string `json:"headers"`
		PostData    string            `json:"postData"`
		HasPostData bool              `json:"hasPostData"`
		Entries     []struct {
			Bytes *string `json:"bytes"`
		} `json:"postDataEntries"`
	} `json:"request"`
}

// egressRequest is p as egress.Check reads it: the body from its entries (exact bytes) or its
// postData, and withheld when an entry has no bytes (a file, a stream) or a body was announced
// and none handed over.
func (p *pausedRequest) egressRequest() egress.Request {
	r := egress.Request{Method: p.Request.Method, URL: p.Request.URL, Headers: p.Request.Headers}
	switch {
	case len(p.Request.Entries) > 0:
		for _, e := range p.Request.Entries {
			if e.Bytes == nil {
				r.Withheld = true
				continue
			}
			b, err := base64.StdEncoding.DecodeString(*e.Bytes)
			if err != nil {
				r.Withheld = true
				continue
			}
			r.Body = append(r.Body, b...)
		}
	case p.Request.PostData != "":
		r.Body = []byte(p.Request.PostData)
	case p.Request.HasPostData:
		r.Withheld = true
	}
	return r
}

// requestPaused answers one request held by the browser-wide interception (on its own
// goroutine: the reader must not wait for our calls): the guard first, then a document's
// allowlist verdict and Basic answer; anything else goes on.
func (h *Host) requestPaused(b *cdp.Browser, params json.RawMessage) {
	var p pausedRequest
	if json.Unmarshal(params, &p) != nil || p.RequestID == "" {
		return
	}
	r := p.egressRequest()
	refusal := h.egress.Check(r)
	clear(r.Body)
	if refusal != nil {
		h.refuseEgress(b, p, refusal)
		return
	}
	doc := pausedDoc{RequestID: p.RequestID, FrameID: p.FrameID}
	doc.Request.URL, doc.Request.Method, doc.Request.Headers = p.Request.URL, p.Request.Method, p.Request.Headers
	switch {
	case p.ResourceType != "Document":
		if h.basicPaused(b, doc) { // a subresource under a session's approved Basic answer
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Call(ctx, "", "Fetch.continueRequest", map[string]any{"requestId": p.RequestID}, nil)
	case h.o.Allow.Empty():
		h.continuePaused(b, doc)
	default:
		h.navPaused(b, doc)
	}
}

// egressError is why a page was stopped by the guard: its session's next command (and a
// sign-in under way) answers SECRET_EGRESS.
type egressError struct{ where, why string }

func (e *egressError) Error() string {
	return "the page tried to send a secret typed into it (in " + e.why + ") to " + e.where +
		"; the request was stopped before it left and the page was discarded"
}

// refuseEgress fails a request the guard refused, stops the pages that may hold the secret
// and the one that sent it, and has brokerd audit it.
func (h *Host) refuseEgress(b *cdp.Browser, p pausedRequest, r *egress.Refusal) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.Call(ctx, "", "Fetch.failRequest", map[string]any{"requestId": p.RequestID, "errorReason": "BlockedByClient"}, nil)
	why := &egressError{where: r.Where, why: r.Why}
	h.o.Log.Warn("a request carrying a secret was refused", "session", r.Secret.Session, "to", r.Where, "in", r.Why)
	stopped := map[string]bool{}
	for _, s := range []*session{h.sessionNamed(r.Secret.Session), h.sessionOfTarget(p.FrameID)} {
		if s == nil || stopped[s.name] {
			continue
		}
		stopped[s.name] = true
		s.way.refused.Store(&refusal{err: why, at: time.Now()})
		if sid := s.live(); sid != "" && b.SessionErr(sid) == nil {
			b.StopSession(sid, &pageStoppedError{why: why.Error(), code: wire.CodeSecretEgress})
		}
	}
	err := h.withBroker(ctx, func(c *brokerapi.Client) error {
		return c.EgressRefused(ctx, brokerapi.EgressRefusedParams{Session: r.Secret.Session, Origin: r.Secret.Origin,
			Destination: clip.Text(r.Where, 300), Carrier: clip.Text(r.Why, 100)})
	})
	if err != nil {
		h.o.Log.Warn("the refused request could not be audited", "session", r.Secret.Session, "code", wire.CodeOf(err))
	}
}

// sessionNamed is the session called name (nil: none), without waiting for its verb lock.
func (h *Host) sessionNamed(name string) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[name]
}

// attached routes a Target.attachedToTarget of the guard's auto-attachments (on the reader):
// under a session's page or a target attached under it, or, under the browser, a shared
// worker. Other attachments (the host's own Target.attachToTarget) are not the guard's.
func (h *Host) attached(ev cdp.Event) {
	if ev.SessionID == "" {
		b := h.way.all.Load()
		if b == nil {
			return
		}
		var p struct {
			Info struct {
				Type string `json:"type"`
			} `json:"targetInfo"`
			Waiting bool `json:"waitingForDebugger"`
		}
		if json.Unmarshal(ev.Params, &p) == nil && p.Info.Type == "shared_worker" {
			h.coverChild(b, nil, ev.Params)
		}
		return
	}
	if v, ok := h.routes.Load(ev.SessionID); ok {
		s := v.(*session)
		h.coverChild(s.browser, s, ev.Params)
		return
	}
	if v, ok := h.way.children.Load(ev.SessionID); ok {
		c := v.(child)
		h.coverChild(c.b, c.s, ev.Params)
	}
}

// child is a target the guard attached: the session of the page it is under (nil: a shared
// worker, under the browser) and its browser.
type child struct {
	s *session
	b *cdp.Browser
}

// detached forgets a target the guard attached (Target.detachedFromTarget, on the reader).
func (h *Host) detached(params json.RawMessage) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(params, &p) == nil && p.SessionID != "" {
		h.way.children.Delete(p.SessionID)
	}
}
