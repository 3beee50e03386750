package host

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/headless-dev/headless/host/cdp"
)

func reqEvent(method, id string) cdp.Event {
	p, _ := json.Marshal(id)
	return cdp.Event{SessionID: "s", Method: method, Params: p}
}

// TestRequestTrack: the requests an action started are those after its mark; a redirect
// (the same id again) counts once, an end or a failure ends it, and the tracker is bounded.
func TestRequestTrack(t *testing.T) {
	r := newRequestTrack()
	r.event(reqEvent(cdp.RequestStarted, "before"))
	mark := r.mark()
	if n := r.since(mark); n != 0 {
		t.Fatalf("a request from before the mark counts: %d", n)
	}
	r.event(reqEvent(cdp.RequestStarted, "a"))
	r.event(reqEvent(cdp.RequestStarted, "a")) // a redirect
	r.event(reqEvent(cdp.RequestStarted, "b"))
	if n := r.since(mark); n != 2 {
		t.Fatalf("since: %d, want 2", n)
	}
	select {
	case <-r.changed:
	default:
		t.Fatal("no change signalled")
	}
	r.event(reqEvent(cdp.RequestEnded, "a"))
	r.event(reqEvent(cdp.RequestFailed, "b"))
	r.event(reqEvent(cdp.RequestEnded, "unknown"))
	r.event(cdp.Event{Method: cdp.RequestStarted, Params: json.RawMessage(`{}`)}) // no id: ignored
	if n := r.since(mark); n != 0 {
		t.Fatalf("after their ends: %d", n)
	}
	for i := range maxTrackedRequests + 10 {
		r.event(reqEvent(cdp.RequestStarted, fmt.Sprint("x", i)))
	}
	if n := len(r.open); n != maxTrackedRequests {
		t.Fatalf("%d tracked, want the bound %d", n, maxTrackedRequests)
	}
}

// TestNetworkIdle: idle is no request in flight, for how long; an overflow of the tracker
// fails closed (idle cannot be told) until the next document, which forgets the old
// document's requests (those queued for a connection are not all told ended) but not the
// new document's own.
func TestNetworkIdle(t *testing.T) {
	r := newRequestTrack()
	if _, told := r.idle(time.Now()); !told {
		t.Fatal("a fresh page's idle cannot be told")
	}
	r.event(reqEvent(cdp.RequestStarted, "a"))
	if q, told := r.idle(time.Now().Add(time.Hour)); !told || q != 0 {
		t.Fatalf("a request in flight: idle %v %v", q, told)
	}
	r.event(reqEvent(cdp.RequestEnded, "a"))
	if q, _ := r.idle(time.Now().Add(time.Second)); q < 900*time.Millisecond {
		t.Fatalf("idle a second after the last end: %v", q)
	}
	r.event(reqEvent(cdp.RequestEnded, "never-started")) // an unknown end moves nothing
	for i := range maxTrackedRequests + 1 {
		r.event(reqEvent(cdp.RequestStarted, fmt.Sprint("x", i)))
	}
	if _, told := r.idle(time.Now()); told {
		t.Fatal("an overflowed tracker tells idle")
	}
	r.navigating()
	r.event(reqEvent(cdp.RequestStarted, "document")) // the navigation's own request
	r.newDocument()
	if _, told := r.idle(time.Now()); !told {
		t.Fatal("the next document's idle cannot be told")
	}
	if q, _ := r.idle(time.Now().Add(time.Hour)); q != 0 || len(r.open) != 1 {
		t.Fatalf("after the commit: idle %v with %d open, want the document's request alone", q, len(r.open))
	}
	r.event(reqEvent(cdp.RequestEnded, "document"))
	if q, _ := r.idle(time.Now().Add(time.Second)); q == 0 {
		t.Fatal("not idle once the document loaded")
	}
}
