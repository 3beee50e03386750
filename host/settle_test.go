package host

import (
	"encoding/json"
	"fmt"
	"testing"

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
