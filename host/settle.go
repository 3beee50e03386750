package host

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/internal/origin"
)

// An action (click, key, select, a sign-in's submit, a journey's step) settles on what it
// caused, with no fixed wait: a navigation it started is waited for to load; requests of the
// page it started are waited for to end (at most settleRequests, so a request that never ends
// — a stream, a long poll — costs a bounded time); and the page must then stay quiet
// (nothing new started) for settleQuiet. An action that starts nothing costs settleQuiet.
const (
	settleQuiet    = 50 * time.Millisecond
	settleRequests = 2 * time.Second
	// settleRequested is the quiet an action gets once it requested a navigation
	// (Page.frameRequestedNavigation) that has not started yet: a loaded machine may take more
	// than settleQuiet to start it (or to refuse it: the allowlist).
	settleRequested = 500 * time.Millisecond
)

// maxTrackedRequests bounds the requests a page's tracker holds; a page with more in flight
// gets its later ones uncounted (an action then settles on those it holds; network idle is
// not told for the document: overflow).
const maxTrackedRequests = 1024

// requestTrack follows the page's requests in flight, by the order in which they started
// (fed from the event reader with their ids only: cdp.requestEvent; a stream, EventSource,
// never counts).
type requestTrack struct {
	mu       sync.Mutex
	seq      uint64
	open     map[string]uint64 // request id → seq at its start
	changed  chan struct{}     // a start or an end since the last receive (cap 1)
	lastBusy time.Time         // when the last request started or ended
	// overflow: a request of the page's document started beyond the bound: whether the
	// page's network is idle cannot be told until its next document (fails closed).
	overflow bool
	// navMark is seq when the main frame last started a navigation to another document: the
	// requests started before are the old document's.
	navMark uint64
	// sockets are the origins (ws: and wss: as http: and https:) of the WebSockets the
	// document opened (Network.webSocketCreated), whose messages the network guard does not
	// see; socketsCut: more than maxSocketOrigins, or one whose URL could not be read.
	sockets    map[string]bool
	socketsCut bool
}

// maxSocketOrigins bounds the WebSocket origins a document's tracker keeps.
const maxSocketOrigins = 16

// socketOpened notes that the page opened a WebSocket to URL u (called on the event reader).
func (r *requestTrack) socketOpened(u string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, err := origin.Canonical(strings.Replace(strings.Replace(u, "wss://", "https://", 1), "ws://", "http://", 1))
	switch {
	case err != nil || len(r.sockets) >= maxSocketOrigins:
		r.socketsCut = true
	case r.sockets == nil:
		r.sockets = map[string]bool{o: true}
	default:
		r.sockets[o] = true
	}
}

// socketTo reports whether the document opened a WebSocket to one of origins (canonical), or
// may have (socketsCut).
func (r *requestTrack) socketTo(origins []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.socketsCut || slices.ContainsFunc(origins, func(o string) bool { return r.sockets[o] })
}

func newRequestTrack() *requestTrack {
	return &requestTrack{open: map[string]uint64{}, changed: make(chan struct{}, 1), lastBusy: time.Now()}
}

// navigating notes that the page's main frame started a navigation to another document. A
// full tracker forgets the old document's requests now (it cannot tell of them anyway: its
// overflow stays until the commit), so that the new document's are followed.
func (r *requestTrack) navigating() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.navMark = r.seq
	if r.overflow {
		clear(r.open)
	}
}

// newDocument notes that the page's main frame committed a new document: the requests of the
// old one (started before its navigation) are forgotten, as the browser cancels them as it
// goes (not all of them are told ended: those still queued for a connection), and so is one
// left uncounted.
func (r *requestTrack) newDocument() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.overflow = false
	r.sockets, r.socketsCut = nil, false
	for id, seq := range r.open {
		if seq <= r.navMark {
			delete(r.open, id)
		}
	}
	r.lastBusy = time.Now()
}

// idle reports for how long the page has had no request in flight (0 while it has one), and
// false when that cannot be told (overflow).
func (r *requestTrack) idle(now time.Time) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.overflow {
		return 0, false
	}
	if len(r.open) > 0 {
		return 0, true
	}
	return now.Sub(r.lastBusy), true
}

// event records a request event of the page (called on the event reader: never blocks).
func (r *requestTrack) event(ev cdp.Event) {
	id := cdp.RequestID(ev)
	if id == "" {
		return
	}
	r.mu.Lock()
	switch ev.Method {
	case cdp.RequestStarted:
		// A redirect starts the same request again: it counts once.
		if _, ok := r.open[id]; !ok {
			if len(r.open) < maxTrackedRequests {
				r.seq++
				r.open[id] = r.seq
			} else {
				r.overflow = true
			}
		}
		r.lastBusy = time.Now()
	case cdp.RequestEnded, cdp.RequestFailed:
		if _, ok := r.open[id]; ok {
			delete(r.open, id)
			r.lastBusy = time.Now()
		}
	}
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// requests is the tracker of the session's current page (an empty one before it has a page);
// s.mu held.
func (s *session) requests() *requestTrack {
	if s.cur != nil {
		return s.cur.reqs
	}
	return newRequestTrack()
}

// mark is the point after which started requests count as an action's.
func (r *requestTrack) mark() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// since counts the requests in flight that started after mark.
func (r *requestTrack) since(mark uint64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, seq := range r.open {
		if seq > mark {
			n++
		}
	}
	return n
}

// effects waits for what the action since the last drain caused. It returns true when the
// action started a navigation (an event nav accepts, which it consumed), for the caller to
// wait for its load; false when the requests it started have ended (or settleRequests has
// passed) and the page stayed quiet for settleQuiet, or when the page or ctx went.
func (s *session) effects(ctx context.Context, nav func(method string) bool) bool {
	reqs, mark := s.requests(), s.actMark
	quiet := time.NewTimer(settleQuiet)
	defer quiet.Stop()
	limit := time.NewTimer(settleRequests)
	defer limit.Stop()
	pending := reqs.since(mark)
	for {
		select {
		case ev := <-s.events:
			if nav(ev.Method) {
				return true
			}
			if ev.Method == "Page.frameRequestedNavigation" {
				quiet.Reset(settleRequested)
			}
		case <-reqs.changed:
			if n := reqs.since(mark); n != pending {
				pending = n
				if n == 0 {
					quiet.Reset(settleQuiet) // what the answers change lands in the quiet
				}
			}
		case <-quiet.C:
			if pending = reqs.since(mark); pending == 0 {
				return false
			}
		case <-limit.C:
			return false
		case <-s.gone:
			return false
		case <-s.browser.SessionDone(s.sid):
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// settle waits for what an action (click, key, select, submit, a journey's step) caused: a
// navigation it started until the frame has loaded (or stopped loading: a navigation within
// the document has no load event), else the end of the requests it started and a quiet page.
func (s *session) settle(ctx context.Context) {
	if !s.effects(ctx, func(m string) bool { return m == "Page.frameStartedLoading" || m == "Page.frameNavigated" }) {
		return
	}
	s.await(ctx, NavigationWait, "finish loading", stoppedLoading)
}
