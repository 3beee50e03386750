package host

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/wire"
)

func consoleEv(t *testing.T, c cdp.Console) cdp.Event {
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return cdp.Event{SessionID: "S", Method: cdp.ConsoleEvent, Params: b}
}

func requestEv(t *testing.T, r cdp.Request) cdp.Event {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return cdp.Event{SessionID: "S", Method: cdp.NetworkEvent, Params: b}
}

func noMatch() func(string) bool { return nil }

// TestPageLogBounds: the lists keep the newest MaxLogEntries (the oldest counted as dropped),
// cut texts and URLs, and stop reading a page's console after MaxLogFlood messages.
func TestPageLogBounds(t *testing.T) {
	var flooded atomic.Int32
	called := make(chan struct{}, 2)
	l := newPageLog(noMatch, func() { flooded.Add(1); called <- struct{}{} })
	long := strings.Repeat("é", control.MaxLogText)
	l.consoleEvent(consoleEv(t, cdp.Console{Level: "log", Text: long, Time: 1700000000000}))
	if m := l.console[0].m; !m.Cut || len(m.Text) > control.MaxLogText || m.Time.Unix() != 1700000000 {
		t.Fatalf("a long message: cut %v, %d bytes, %v", m.Cut, len(m.Text), m.Time)
	}
	l.consoleEvent(consoleEv(t, cdp.Console{Dropped: true}))
	if l.cDropped != 1 || len(l.console) != 1 {
		t.Fatalf("an event too large: dropped %d, %d kept", l.cDropped, len(l.console))
	}
	for i := range control.MaxLogEntries + 10 {
		l.consoleEvent(consoleEv(t, cdp.Console{Level: "log", Text: fmt.Sprint(i)}))
	}
	if len(l.console) != control.MaxLogEntries || l.cDropped != 12 || l.console[0].m.Text != "10" {
		t.Fatalf("%d kept, %d dropped, first %q", len(l.console), l.cDropped, l.console[0].m.Text)
	}
	for range control.MaxLogFlood {
		l.consoleEvent(consoleEv(t, cdp.Console{Level: "log", Text: "flood"}))
	}
	select { // the flood callback runs on its own goroutine
	case <-called:
	case <-time.After(30 * time.Second):
	}
	if l.stopped == "" || flooded.Load() != 1 {
		t.Fatalf("after a flood: stopped %q, flood called %d times", l.stopped, flooded.Load())
	}
	if !l.committed("L2") || l.stopped != "" || len(l.console) != 0 || l.cDropped != 0 {
		t.Fatalf("a new document does not start the console again: %+v", l.stopped)
	}

	for i := range control.MaxLogEntries + 3 {
		l.networkEvent(requestEv(t, cdp.Request{Kind: "start", ID: fmt.Sprint(i), Method: "GET", URL: "http://x/" + fmt.Sprint(i), Type: "Fetch", Time: 1}))
	}
	if len(l.net) != control.MaxLogEntries || l.nDropped != 3 || l.request("0") != nil || l.request("3") == nil {
		t.Fatalf("%d requests kept, %d dropped", len(l.net), l.nDropped)
	}
	l.networkEvent(requestEv(t, cdp.Request{Kind: "start", ID: "u", Method: "GET", URL: "http://x/" + strings.Repeat("a", control.MaxLogURL), Time: 1}))
	if r := l.request("u").r; !r.Cut || len(r.URL) > control.MaxLogURL {
		t.Fatalf("a long URL: cut %v, %d bytes", r.Cut, len(r.URL))
	}
}

// TestPageLogRequests: a request's entry is completed by its response and its end or
// failure; a redirect ends a hop with its status and goes on in a new entry; a new document
// keeps only its own loader's requests.
func TestPageLogRequests(t *testing.T) {
	l := newPageLog(noMatch, nil)
	for _, r := range []cdp.Request{
		{Kind: "start", ID: "D", Loader: "L1", Method: "GET", URL: "http://x/a", Type: "Document", Time: 10, Wall: 1700000000},
		{Kind: "start", ID: "D", Loader: "L1", Method: "GET", URL: "http://x/b", Type: "Document", Time: 10.5, Redirect: true, Status: 302},
		{Kind: "response", ID: "D", Status: 200},
		{Kind: "end", ID: "D", Bytes: 1234, Time: 10.75},
		{Kind: "start", ID: "F", Loader: "L0", Method: "POST", URL: "http://x/api", Type: "Fetch", Time: 11},
		{Kind: "fail", ID: "F", Error: "net::ERR_FAILED", Time: 11.5},
		{Kind: "end", ID: "unknown", Bytes: 1},
		{Kind: "start", ID: "P", Loader: "L1", Method: "GET", URL: "http://x/poll", Type: "XHR", Time: 12},
	} {
		l.networkEvent(requestEv(t, r))
	}
	got := make([]control.NetworkRequest, len(l.net))
	for i, e := range l.net {
		got[i] = e.r
	}
	want := []control.NetworkRequest{
		{Method: "GET", URL: "http://x/a", Type: "Document", Status: 302, DurationMS: 500, Start: time.Unix(1700000000, 0).UTC()},
		{Method: "GET", URL: "http://x/b", Type: "Document", Status: 200, Bytes: 1234, DurationMS: 250},
		{Method: "POST", URL: "http://x/api", Type: "Fetch", Error: "net::ERR_FAILED", DurationMS: 500},
		{Method: "GET", URL: "http://x/poll", Type: "XHR", Pending: true},
	}
	if len(got) != len(want) {
		t.Fatalf("requests %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	l.committed("L1")
	if len(l.net) != 3 || l.request("F") != nil || l.request("P") == nil {
		t.Fatalf("after the commit of L1: %+v", l.net)
	}
}

// TestPageLogSecrets: a text or URL that holds a released secret is marked as it arrives,
// scanned whole before it is cut (a secret across the cut is not missed).
func TestPageLogSecrets(t *testing.T) {
	const secret = "s3cret-Pw"
	match := func() func(string) bool { return func(s string) bool { return strings.Contains(s, secret) } }
	l := newPageLog(match, nil)
	across := strings.Repeat("x", control.MaxLogText-4) + secret
	l.consoleEvent(consoleEv(t, cdp.Console{Level: "log", Text: across}))
	l.consoleEvent(consoleEv(t, cdp.Console{Level: "log", Text: "fine"}))
	if !l.console[0].secret || strings.Contains(l.console[0].m.Text, secret) || l.console[1].secret {
		t.Fatalf("marks %v %v", l.console[0].secret, l.console[1].secret)
	}
	l.networkEvent(requestEv(t, cdp.Request{Kind: "start", ID: "1", URL: "http://x/?" + strings.Repeat("y", control.MaxLogURL) + secret}))
	if !l.net[0].secret {
		t.Fatal("a URL holding the secret beyond the cut is not marked")
	}
}

// TestCursors: one pagination: a cursor resumes its own session's list with its filters; it
// is invalid for another, once expired or evicted, and stale once its document changed or
// entries it had not reached were dropped.
func TestCursors(t *testing.T) {
	now := time.Unix(1700000000, 0)
	tab := &cursorTable{now: func() time.Time { return now }}
	if after, err := tab.resume("", "s", "console", "", 1, 0); after != 0 || err != nil {
		t.Fatalf("no cursor: %d %v", after, err)
	}
	// The position, 9081, cannot appear in a random base32 cursor by chance (its alphabet has
	// no 0, 1, 8 or 9; 42 appeared in one, "c3YJPOZUG7423VALFRIOHF33XXN", 1 run in ~40).
	c := tab.issue("s", "console", "level=error", 7, 9081)
	if !strings.HasPrefix(c, "c") || strings.Contains(c, "9081") {
		t.Fatalf("cursor %q", c)
	}
	if after, err := tab.resume(c, "s", "console", "level=error", 7, 9080); after != 9081 || err != nil {
		t.Fatalf("resume: %d %v", after, err)
	}
	for name, tc := range map[string]struct {
		session, list, filter string
		gen, dropped          uint64
		want                  wire.Code
	}{
		"other session":  {"t", "console", "level=error", 7, 0, wire.CodeCursorInvalid},
		"other list":     {"s", "network", "level=error", 7, 0, wire.CodeCursorInvalid},
		"other filter":   {"s", "console", "", 7, 0, wire.CodeCursorInvalid},
		"other document": {"s", "console", "level=error", 8, 0, wire.CodeCursorStale},
		"dropped ahead":  {"s", "console", "level=error", 7, 9082, wire.CodeCursorStale},
	} {
		if _, err := tab.resume(c, tc.session, tc.list, tc.filter, tc.gen, tc.dropped); wire.CodeOf(err) != tc.want {
			t.Errorf("%s: %v, want %s", name, err, tc.want)
		}
	}
	if _, err := tab.resume("c-forged", "s", "console", "level=error", 7, 0); wire.CodeOf(err) != wire.CodeCursorInvalid {
		t.Errorf("an unknown cursor: %v", err)
	}
	now = now.Add(control.CursorTTL + time.Second)
	if _, err := tab.resume(c, "s", "console", "level=error", 7, 0); wire.CodeOf(err) != wire.CodeCursorInvalid || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired cursor: %v", err)
	}
	// At most MaxCursors live: the oldest go.
	first := tab.issue("s", "network", "", 1, 1)
	for i := range control.MaxCursors {
		now = now.Add(time.Millisecond)
		tab.issue("s", "network", "", 1, uint64(i))
	}
	if len(tab.m) != control.MaxCursors {
		t.Fatalf("%d cursors live", len(tab.m))
	}
	if _, err := tab.resume(first, "s", "network", "", 1, 0); wire.CodeOf(err) != wire.CodeCursorInvalid {
		t.Errorf("the oldest cursor after %d more: %v", control.MaxCursors, err)
	}
}
