package host

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/clip"
)

// A session's console messages and requests, for 'console list' and 'network list' (issue
// 44). The event reader feeds them (cdp.ConsoleEvent, cdp.NetworkEvent: already stripped of
// headers, bodies and post data) into the page's log:
//
//   - one log per page of the session, started again when its main frame commits a new
//     document (the requests of that document's own loader are kept: the list begins with the
//     request that loaded it); a fresh page (a crash, a discard) gets a fresh log;
//   - bounded: control.MaxLogEntries messages and requests each (the oldest go, counted as
//     Dropped), a text cut at control.MaxLogText and a URL at control.MaxLogURL; and a page
//     that logs more than control.MaxLogFlood messages has its console no longer read until
//     its next document (the browser stops sending them: Runtime.disable);
//   - a text or URL holding a released secret is marked when it arrives, scanned whole before
//     it is cut (host/echo: a secret cut in half would pass a scan of what is shown): an
//     answer that would list such an entry is refused as every output showing one is
//     (SECRET_ON_PAGE, the page discarded, audited), and every answer is scanned again as it
//     is sent (echoed.go).

// pageLists is a session's lists and downloads: its page's log, replaced with the page.
type pageLists struct {
	log       atomic.Pointer[pageLog]
	downloads atomic.Int64 // downloads its pages started (each denied: downloads.go)
	lastDown  atomic.Pointer[string]
}

// logGen numbers the documents of every log: a cursor names the one it was made on.
var logGen atomic.Uint64

// pageLog is what one page of a session logged and requested since its document loaded.
type pageLog struct {
	mu       sync.Mutex
	gen      uint64
	seq      uint64 // of the last entry added, either list
	console  []logMessage
	cDropped int
	// cLastDropped and nLastDropped are the seqs of the newest entries the bound dropped (a
	// cursor before them is stale).
	cLastDropped, nLastDropped uint64
	cSeen                      int    // messages of this document, dropped ones included
	stopped                    string // why the console is no longer read
	net                        []logRequest
	byID                       map[string]uint64 // request id → seq of its latest entry
	nDropped                   int
	// match is the echo scan of released secrets (nil while nothing was released).
	match func() func(string) bool
	// flood is called once when the page logged more than MaxLogFlood messages.
	flood func()
}

type logMessage struct {
	seq    uint64
	m      control.ConsoleMessage
	secret bool
}

type logRequest struct {
	seq    uint64
	id     string
	loader string
	t0     float64 // the browser's monotonic clock at the start
	r      control.NetworkRequest
	secret bool
}

func newPageLog(match func() func(string) bool, flood func()) *pageLog {
	return &pageLog{gen: logGen.Add(1), byID: map[string]uint64{}, match: match, flood: flood}
}

// bounded cuts s to n bytes, reporting whether it held a released secret (scanned whole).
func (l *pageLog) bounded(s string, n int, cut bool) (string, bool, bool) {
	secret := false
	if m := l.match(); m != nil && s != "" {
		secret = m(s)
	}
	if len(s) > n {
		s, cut = clip.Text(s, n), true
	}
	return s, cut, secret
}

// consoleEvent adds a message (called on the event reader: never blocks).
func (l *pageLog) consoleEvent(ev cdp.Event) {
	var c cdp.Console
	if json.Unmarshal(ev.Params, &c) != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped != "" {
		return
	}
	l.cSeen++
	if l.cSeen > control.MaxLogFlood {
		l.stopped = "the page logged more than 5000 messages since its document loaded: the host stopped reading them until it loads another"
		if l.flood != nil {
			go l.flood()
		}
		return
	}
	if c.Dropped {
		l.cDropped++
		return
	}
	text, cut, secret := l.bounded(c.Text, control.MaxLogText, c.Cut)
	l.seq++
	l.console = append(l.console, logMessage{seq: l.seq, secret: secret,
		m: control.ConsoleMessage{Level: c.Level, Text: text, Cut: cut, Time: msTime(c.Time)}})
	if len(l.console) > control.MaxLogEntries {
		l.cLastDropped = l.console[0].seq
		l.console = l.console[1:] // append copies what is left when it grows
		l.cDropped++
	}
}

// networkEvent adds or completes a request (called on the event reader: never blocks).
func (l *pageLog) networkEvent(ev cdp.Event) {
	var r cdp.Request
	if json.Unmarshal(ev.Params, &r) != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Dropped {
		l.nDropped++
		return
	}
	e := l.request(r.ID)
	if r.Kind != "start" {
		if e == nil {
			return // its start was dropped, or came before this document's log
		}
		switch r.Kind {
		case "response":
			e.r.Status = r.Status
		case "end":
			e.r.Bytes, e.r.Pending = r.Bytes, false
			e.r.DurationMS = durationMS(e.t0, r.Time)
		case "fail":
			e.r.Error, e.r.Pending = r.Error, false
			e.r.DurationMS = durationMS(e.t0, r.Time)
		}
		return
	}
	if e != nil && r.Redirect {
		// The hop before a redirect ends with the redirect's status; the request goes on
		// as a new entry of the same id.
		e.r.Status, e.r.Pending, e.r.DurationMS = r.Status, false, durationMS(e.t0, r.Time)
	}
	url, cut, secret := l.bounded(r.URL, control.MaxLogURL, r.Cut)
	l.seq++
	l.net = append(l.net, logRequest{seq: l.seq, id: r.ID, loader: r.Loader, t0: r.Time, secret: secret,
		r: control.NetworkRequest{Method: r.Method, URL: url, Cut: cut, Type: r.Type, Pending: true, Start: secTime(r.Wall)}})
	l.byID[r.ID] = l.seq
	if len(l.net) > control.MaxLogEntries {
		old := l.net[0]
		if l.byID[old.id] == old.seq {
			delete(l.byID, old.id)
		}
		l.nLastDropped = old.seq
		l.net = l.net[1:]
		l.nDropped++
	}
}

// request is the latest entry of request id, nil when none (l.mu held).
func (l *pageLog) request(id string) *logRequest {
	seq, ok := l.byID[id]
	if !ok {
		return nil
	}
	i, found := slices.BinarySearchFunc(l.net, seq, func(e logRequest, seq uint64) int { return cmp.Compare(e.seq, seq) })
	if !found {
		return nil
	}
	return &l.net[i]
}

// committed starts the log again for the main frame's new document of loader (called on the
// event reader), keeping that loader's own requests; it reports whether the console had been
// stopped (the caller has the browser send it again).
func (l *pageLog) committed(loader string) (wasStopped bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gen = logGen.Add(1)
	wasStopped = l.stopped != ""
	l.console, l.cDropped, l.cSeen, l.stopped = nil, 0, 0, ""
	kept := l.net[:0:0]
	for _, e := range l.net {
		if e.loader == loader && loader != "" {
			kept = append(kept, e)
		}
	}
	l.net, l.nDropped = kept, 0
	clear(l.byID)
	for _, e := range l.net {
		l.byID[e.id] = e.seq
	}
	return wasStopped
}

func msTime(ms float64) time.Time {
	if ms <= 0 || math.IsNaN(ms) || math.IsInf(ms, 0) {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}

func secTime(s float64) time.Time {
	if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return time.Time{}
	}
	return time.UnixMicro(int64(s * 1e6)).UTC()
}

func durationMS(t0, t1 float64) int64 {
	if t1 < t0 || t0 <= 0 {
		return 0
	}
	return int64((t1 - t0) * 1000)
}

// pageLog is the session's page's log (an empty one before it has a page).
func (s *session) pageLog() *pageLog {
	if l := s.lists.log.Load(); l != nil {
		return l
	}
	return newPageLog(func() func(string) bool { return nil }, nil)
}

// logEvent routes a console or request event, or the main frame's commit, to the session's
// page's log (called on the event reader).
func (h *Host) logEvent(s *session, ev cdp.Event) {
	l := s.lists.log.Load()
	if l == nil {
		return
	}
	switch ev.Method {
	case cdp.ConsoleEvent:
		l.consoleEvent(ev)
	case cdp.NetworkEvent:
		l.networkEvent(ev)
	case "Page.frameNavigated":
		var p struct {
			Frame struct {
				ParentID string `json:"parentId"`
				LoaderID string `json:"loaderId"`
			} `json:"frame"`
		}
		if json.Unmarshal(ev.Params, &p) != nil || p.Frame.ParentID != "" {
			return
		}
		if l.committed(p.Frame.LoaderID) {
			go h.consoleAgain(s, s.live())
		}
	}
}

// newLog gives the session's new page (sid) a fresh log.
func (h *Host) newLog(s *session, sid string) {
	s.lists.log.Store(newPageLog(h.echoOption, func() { h.consoleFlooded(s, sid) }))
}

// consoleFlooded stops the browser sending page sid's console messages (a page logging in a
// loop would otherwise keep the browser's one DevTools pipe busy for every session). It waits
// for the session's running verb: Runtime.disable forgets the page's objects a verb may be
// using.
func (h *Host) consoleFlooded(s *session, sid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sid != sid {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.o.Log.Warn("a page flooded its console: no longer read until its next document", "session", s.name)
	s.browser.Call(ctx, sid, "Runtime.disable", nil, nil)
}

// consoleAgain has the browser send page sid's console messages again, for its new document.
func (h *Host) consoleAgain(s *session, sid string) {
	if sid == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.browser.Call(ctx, sid, "Runtime.enable", nil, nil)
}

// levels and types the filters take.
var (
	consoleLevels = []string{"error", "warning", "info", "log", "debug"}
	resourceTypes = []string{"document", "stylesheet", "image", "media", "font", "script", "texttrack", "xhr", "fetch", "prefetch",
		"eventsource", "websocket", "manifest", "signedexchange", "ping", "cspviolationreport", "preflight", "fedcm", "other"}
)
