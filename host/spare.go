package host

import (
	"context"
	"sync"
	"time"

	"github.com/headless-dev/headless/host/cdp"
)

// A journey's fresh browser context is opened ahead of it (issue 31): a context and its window
// take about 130 ms to open, most of it the new renderer starting, a fifth of a short journey.
// After a journey that ran in a fresh context ends, the host opens one spare exactly as the
// journey would have (makeSession: a browser context of its own, one window on about:blank),
// and the next journey takes it instead of opening one.
//
// The spare is the context the journey would have had: it has loaded nothing but about:blank,
// no verb can name it (it is in no session list), and it is renamed to the journey's context
// name when taken. There is at most one; it is disposed after spareIdle with no journey, when
// its browser goes (a taken spare of another browser is disposed, not used), at the host's
// stop and at a profile clear. Status's browser_contexts does not count it, nor one being
// opened or disposed of (spareContexts), and counts it again once a journey took it.

// spareIdle is how long a spare waits for a journey before it is disposed.
const spareIdle = 2 * time.Minute

// spareSlot holds the spare. mu is never held while h.mu is taken.
type spareSlot struct {
	mu     sync.Mutex
	s      *session      // nil: none
	making chan struct{} // closed when the spare being opened is ready or failed; nil: none
	timer  *time.Timer

	// opening is held while a spare's browser context is asked for until its id is in held,
	// so that a count that takes it after the browser listed its contexts knows every spare
	// among them (spareContexts).
	opening sync.Mutex
	// held is every browser context of the spare's (being opened, ready, being disposed of),
	// under mu; gone the last few of them disposed of (ids are never reused): the browser may
	// have listed one just before it went. A context a journey took is in neither, and one
	// that failed to go is counted: a leak stays visible.
	held map[string]bool
	gone [4]string
	next int
}

// hold marks id as the spare's (on) or no longer (disposed: gone for sure).
func (sp *spareSlot) hold(id string, on, disposed bool) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if on {
		if sp.held == nil {
			sp.held = map[string]bool{}
		}
		sp.held[id] = true
		return
	}
	delete(sp.held, id)
	if disposed {
		sp.gone[sp.next] = id
		sp.next = (sp.next + 1) % len(sp.gone)
	}
}

// spareContexts lists the browser contexts not to count: the spare's, and the last few it
// disposed of. Called after the browser listed its contexts, it waits for a spare's context
// being asked for meanwhile to be known.
func (h *Host) spareContexts() map[string]bool {
	sp := &h.spare
	sp.opening.Lock() // a barrier: a context asked for before now is in held once it is free
	sp.opening.Unlock()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	m := make(map[string]bool, len(sp.held)+len(sp.gone))
	for id := range sp.held {
		m[id] = true
	}
	for _, id := range sp.gone {
		if id != "" {
			m[id] = true
		}
	}
	return m
}

// takeSpare returns the spare (waiting for one being opened) if it is on b and its page is
// alive, named name; nil otherwise (the caller opens a context itself).
func (h *Host) takeSpare(b *cdp.Browser, name string) *session {
	s := h.spareOut() // one being opened is further along than a new one
	if s == nil {
		return nil
	}
	if s.browser != b || b.SessionErr(s.sid) != nil {
		go h.disposeSpare(s)
		return nil
	}
	h.spare.hold(s.contextID, false, false) // the journey's now: counted
	s.name = name
	return s
}

// refillSpare opens a spare on b in the background, unless there is one or one is being
// opened, or the host is closing or clearing the profile.
func (h *Host) refillSpare(b *cdp.Browser) {
	sp := &h.spare
	sp.mu.Lock()
	if sp.s != nil || sp.making != nil {
		sp.mu.Unlock()
		return
	}
	done := make(chan struct{})
	sp.making = done
	sp.mu.Unlock()
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), journeyTeardown)
		defer cancel()
		h.mu.Lock()
		ok := !h.closed && !h.clearing && h.browser == b
		h.mu.Unlock()
		var s *session
		var err error
		if ok {
			s, err = h.openSpare(ctx, b)
		}
		if ok && err == nil {
			s.isolated, s.fresh = false, true
			h.mu.Lock()
			ok = !h.closed && !h.clearing && h.browser == b
			h.mu.Unlock()
		}
		sp.mu.Lock()
		sp.making = nil
		if ok && err == nil && sp.s == nil {
			sp.s = s
			sp.timer = time.AfterFunc(spareIdle, h.dropSpare)
			s = nil
		}
		sp.mu.Unlock()
		if s != nil {
			h.disposeSpare(s)
		}
	}()
}

// openSpare opens a spare on b: its browser context is in the slot's held from the moment
// the browser makes it until it is disposed of or taken.
func (h *Host) openSpare(ctx context.Context, b *cdp.Browser) (*session, error) {
	sp := &h.spare
	sp.opening.Lock()
	id, err := newBrowserContext(ctx, b)
	if err == nil {
		sp.hold(id, true, false)
	}
	sp.opening.Unlock()
	if err != nil {
		return nil, err
	}
	s, err := h.sessionIn(ctx, b, "spare", true, "", id)
	if err != nil {
		sp.hold(id, false, disposeBrowserContext(b, id))
		return nil, err
	}
	return s, nil
}

// disposeSpare disposes of a spare no journey took.
func (h *Host) disposeSpare(s *session) {
	h.spare.hold(s.contextID, false, h.disposeFresh(context.Background(), s.browser, s))
}

// dropSpare disposes the spare, after waiting (bounded) for one being opened.
func (h *Host) dropSpare() {
	if s := h.spareOut(); s != nil {
		h.disposeSpare(s)
	}
}

// spareOut takes the spare out of its slot (nil: none), after waiting (bounded) for one
// being opened.
func (h *Host) spareOut() *session {
	h.spareWait(journeyTeardown)
	sp := &h.spare
	sp.mu.Lock()
	defer sp.mu.Unlock()
	s := sp.s
	sp.s = nil
	if sp.timer != nil {
		sp.timer.Stop()
	}
	return s
}

// spareWait waits, at most wait, for a spare being opened.
func (h *Host) spareWait(wait time.Duration) {
	sp := &h.spare
	sp.mu.Lock()
	making := sp.making
	sp.mu.Unlock()
	if making != nil {
		select {
		case <-making:
		case <-time.After(wait):
		}
	}
}
