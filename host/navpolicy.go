package host

import (
	"context"
	"encoding/json"
	"net/url"
	"sync"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/internal/allowlist"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/wire"
)

// The navigation allowlist ('headless start --allow', the config's "allow"; package
// allowlist). With a list, the host intercepts every document request of the whole browser
// (Fetch.enable on the browser target, resource type Document: pages and frames of every
// session, isolated and fresh contexts included, popups, redirects) and fails the ones to a
// host not on the list before they leave Chromium. A popup whose document is refused is
// closed. visit refuses an off-list URL before navigating; visit, click and press answer
// UNSAFE_NAVIGATION when the navigation they caused (a redirect, a link, a form, a popup) was
// refused, and the session's page stays where it was. Subresources are not filtered: this is
// a navigation policy, not a network firewall.

// navBlockKeep bounds how long and how many refusals are kept per target for the verbs that
// caused them.
const (
	navBlockKeep = 2 * time.Minute
	navBlockMax  = 8
)

// navPolicy holds the recent refusals, by the target (page) they happened in or were opened
// from, and the popups that have not had their first document's verdict yet.
type navPolicy struct {
	mu     sync.Mutex
	blocks map[string][]navBlock
	popups map[string]popup
	// changed is closed (and replaced) whenever a popup gets its verdict.
	changed chan struct{}
}

type navBlock struct {
	host string
	at   time.Time
}

// popup is a page opened by another (its opener), waiting for its first document's verdict.
type popup struct {
	opener string
	at     time.Time
}

// popupWait bounds how long a verb waits for the verdict on a popup it opened.
const popupWait = 1500 * time.Millisecond

// navAllowlist is the list a host enforces: the one asked for (flag, nil: not asked), which
// must stay within the config's (ceiling), else the config's.
func navAllowlist(flag, ceiling []string) (allowlist.List, error) {
	c, err := allowlist.Parse(ceiling)
	if err != nil {
		return allowlist.List{}, wire.Errorf(wire.CodeConfigInvalid, "the config's allow: %w", err)
	}
	if flag == nil {
		return c, nil
	}
	f, err := allowlist.Parse(flag)
	if err != nil {
		return allowlist.List{}, err
	}
	if f.Empty() {
		return allowlist.List{}, wire.Errorf(wire.CodeInvalidArgument, "an empty 'headless start --allow' would allow nothing")
	}
	if !c.Covers(f) {
		return allowlist.List{}, wire.Errorf(wire.CodeInvalidArgument, "start --allow %v is wider than the config's allow %v", f.Strings(), c.Strings()).
			WithHint("the config's \"allow\" is the most that may be visited: 'headless start --allow' can only narrow it (edit the config to change it)")
	}
	return f, nil
}

func (h *Host) allowStrings() []string {
	if h.o.Allow.Empty() {
		return nil
	}
	return h.o.Allow.Strings()
}

// navAllowed refuses, before any navigation, a URL whose host is not on the list.
func (h *Host) navAllowed(raw string) error {
	u, err := url.Parse(raw)
	if err == nil && h.o.Allow.Allows(u) {
		return nil
	}
	host := raw
	if err == nil {
		host = u.Host
	}
	return wire.Errorf(wire.CodeUnsafeNav, "%s is not on the navigation allowlist (%v)", clip.Text(host, 200), h.o.Allow.Strings()).
		WithHint("this host was started with a navigation allowlist ('headless status' shows it); only those hosts can be visited")
}

// navErr is UNSAFE_NAVIGATION when a navigation of session s (or a popup it opened) was
// refused since since; nil otherwise.
func (h *Host) navErr(s *session, since time.Time) error {
	if h.o.Allow.Empty() {
		return nil
	}
	// A popup the verb opened is judged by its first document request, which comes a moment
	// after the verb's own navigation settled: wait for it (bounded).
	deadline := time.After(popupWait)
	h.nav.mu.Lock()
	defer h.nav.mu.Unlock()
	for waiting := true; waiting; {
		waiting = false
		for _, p := range h.nav.popups {
			if p.opener == s.targetID && !p.at.Before(since) && time.Since(p.at) < popupWait {
				waiting = true
			}
		}
		if waiting {
			changed := h.nav.changedChan()
			h.nav.mu.Unlock()
			select {
			case <-changed:
			case <-deadline:
				waiting = false
			}
			h.nav.mu.Lock()
		}
	}
	for _, b := range h.nav.blocks[s.targetID] {
		if !b.at.Before(since) {
			return wire.Errorf(wire.CodeUnsafeNav, "the page tried to open %s, which is not on the navigation allowlist (%v): refused, the page stayed where it was",
				clip.Text(b.host, 200), h.o.Allow.Strings()).
				WithHint("this host was started with a navigation allowlist ('headless status' shows it); links, redirects and popups to other hosts are refused")
		}
	}
	return nil
}

// changedChan returns the channel closed at the next popup verdict; n.mu is held.
func (n *navPolicy) changedChan() chan struct{} {
	if n.changed == nil {
		n.changed = make(chan struct{})
	}
	return n.changed
}

// popupOpened notes a page target opened by another (Target.targetCreated).
func (h *Host) popupOpened(params json.RawMessage) {
	var p struct {
		Info struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
			OpenerID string `json:"openerId"`
		} `json:"targetInfo"`
	}
	if json.Unmarshal(params, &p) != nil || p.Info.Type != "page" || p.Info.OpenerID == "" {
		return
	}
	h.nav.mu.Lock()
	defer h.nav.mu.Unlock()
	if h.nav.popups == nil {
		h.nav.popups = map[string]popup{}
	}
	for id, q := range h.nav.popups {
		if time.Since(q.at) > navBlockKeep {
			delete(h.nav.popups, id)
		}
	}
	h.nav.popups[p.Info.TargetID] = popup{opener: p.Info.OpenerID, at: time.Now()}
}

// popupJudged ends the wait for a popup's verdict and returns its opener ("" when id is no
// popup waiting for one).
func (h *Host) popupJudged(id string) string {
	h.nav.mu.Lock()
	defer h.nav.mu.Unlock()
	p, ok := h.nav.popups[id]
	if !ok {
		return ""
	}
	delete(h.nav.popups, id)
	if h.nav.changed != nil {
		close(h.nav.changed)
		h.nav.changed = nil
	}
	return p.opener
}

// enforceAllowlist has browser b pause every document request for the list's verdict.
//
// The same browser-wide interception also takes every authentication challenge of a document
// (handleAuthRequests; see basicauth.go): one Fetch.enable on the browser target serves both,
// so neither can switch the other off. Without a list, paused document requests simply go on.
func (h *Host) enforceAllowlist(ctx context.Context, b *cdp.Browser) error {
	b.Subscribe(func(ev cdp.Event) {
		switch {
		case ev.SessionID != "":
		case ev.Method == "Fetch.requestPaused":
			go h.requestPaused(b, ev.Params) // wayout.go; the reader must not wait for our calls
		case ev.Method == "Fetch.authRequired":
			go h.authChallenged(b, ev.Params)
		case ev.Method == "Target.targetCreated" && !h.o.Allow.Empty():
			h.popupOpened(ev.Params)
		}
	})
	// Target.targetCreated comes from watchOpeners' Target.setDiscoverTargets, which runs
	// for every browser right after this (openDefault), before any page exists.
	// Every request once a secret was typed into a page (wayout.go), else documents only.
	h.way.mu.Lock()
	defer h.way.mu.Unlock()
	all := h.egress.Active()
	if err := b.Call(ctx, "", "Fetch.enable", h.fetchPatterns(), nil); err != nil {
		return err
	}
	if all {
		h.way.all.Store(b)
	}
	return nil
}

// continuePaused lets a paused document request go on (no allowlist), with the approved
// Basic answer when it is the one request that gets it (basicPaused).
func (h *Host) continuePaused(b *cdp.Browser, p pausedDoc) {
	if h.basicPaused(b, p) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.Call(ctx, "", "Fetch.continueRequest", map[string]any{"requestId": p.RequestID}, nil)
}

// navPaused answers one paused document request: on the list it goes on; otherwise it fails
// (as aborted: the page that asked stays, no error page replaces it), the refusal is recorded
// for the page (and the opener of a popup), a popup is closed, and a verb waiting for the
// navigation is woken.
func (h *Host) navPaused(b *cdp.Browser, p pausedDoc) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := url.Parse(p.Request.URL)
	if err == nil && h.o.Allow.Allows(u) {
		if !h.basicPaused(b, p) {
			b.Call(ctx, "", "Fetch.continueRequest", map[string]any{"requestId": p.RequestID}, nil)
		}
		h.popupJudged(p.FrameID)
		return
	}
	host := "a URL that is not http(s)"
	if err == nil && u.Host != "" {
		host = u.Host
	}
	// The refusal is on record before the request fails: a verb that sees its navigation end
	// (an aborted one fires no load) finds it, however slowly this goroutine runs.
	s := h.sessionOfTarget(p.FrameID)
	if s != nil {
		h.recordRefusal(host, p.FrameID)
	}
	b.Call(ctx, "", "Fetch.failRequest", map[string]any{"requestId": p.RequestID, "errorReason": "Aborted"}, nil)
	h.o.Log.Info("navigation refused: not on the allowlist", "host", clip.Text(host, 200))
	targets := []string{p.FrameID}
	defer func() { h.popupJudged(p.FrameID) }() // after the refusal is recorded
	if s == nil {
		// Not a session's page: a frame inside one, or a page of its own (a popup), which is
		// closed. A popup's target may be announced a moment after its first request: look
		// for it for up to a second.
		opener := ""
		h.nav.mu.Lock()
		if q, ok := h.nav.popups[p.FrameID]; ok {
			opener = q.opener
		}
		h.nav.mu.Unlock()
		var ti struct {
			Info struct {
				Type     string `json:"type"`
				OpenerID string `json:"openerId"`
			} `json:"targetInfo"`
		}
		for try := 0; opener == "" && try < 20; try++ {
			if b.Call(ctx, "", "Target.getTargetInfo", map[string]any{"targetId": p.FrameID}, &ti) == nil {
				if ti.Info.Type == "page" {
					opener = ti.Info.OpenerID
				}
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if opener != "" || ti.Info.Type == "page" {
			b.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": p.FrameID}, nil)
		}
		if opener != "" {
			targets = append(targets, opener)
		}
		h.recordRefusal(host, targets...)
	}
	// A verb that saw the navigation start waits for its load, which an aborted navigation
	// never fires: wake it as a load would.
	for _, id := range targets {
		if s := h.sessionOfTarget(id); s != nil {
			select {
			case s.events <- cdp.Event{Method: "Page.loadEventFired", SessionID: s.sid}:
			default:
			}
		}
	}
}

// recordRefusal records a refused navigation (to host) for each of targets, for navErr;
// older records are dropped (navBlockKeep, navBlockMax).
func (h *Host) recordRefusal(host string, targets ...string) {
	now := time.Now()
	h.nav.mu.Lock()
	defer h.nav.mu.Unlock()
	if h.nav.blocks == nil {
		h.nav.blocks = map[string][]navBlock{}
	}
	for id, bs := range h.nav.blocks {
		for len(bs) > 0 && now.Sub(bs[0].at) > navBlockKeep {
			bs = bs[1:]
		}
		if len(bs) == 0 {
			delete(h.nav.blocks, id)
		} else {
			h.nav.blocks[id] = bs
		}
	}
	for _, id := range targets {
		bs := append(h.nav.blocks[id], navBlock{host: host, at: now})
		if len(bs) > navBlockMax {
			bs = bs[len(bs)-navBlockMax:]
		}
		h.nav.blocks[id] = bs
	}
}

// sessionOfTarget is the session whose page is target id (nil: none). It holds h.mu, under
// which sessions are made; a revive (a crashed page replaced, under s.mu only) may change a
// targetID meanwhile, so the answer for a page being replaced can be stale: at worst a
// refusal on that page is not reported by the verb (the navigation was refused all the same).
// It never waits for s.mu, which a verb holds while it waits for the navigation.
func (h *Host) sessionOfTarget(id string) *session {
	if id == "" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.sessions {
		if s.targetID == id {
			return s
		}
	}
	return nil
}
