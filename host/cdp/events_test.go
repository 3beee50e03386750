package cdp

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestNetworkEventsDropped: the Network domain is on for its service-worker bypass, and its
// events — a request's can carry what a page sent, a sign-in's body included — reach no
// subscriber but as a page's request starting or ending, with its id alone (an action settles
// on them); every other event still does, in order.
func TestNetworkEventsDropped(t *testing.T) {
	b, w := pipeBrowser(t)
	var mu sync.Mutex
	var got []string
	b.Subscribe(func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev.Method+" "+string(ev.Params))
	})
	go b.read()
	for _, m := range []string{
		`{"method":"Page.frameNavigated","params":{"n":1}}`,
		`{"method":"Network.requestWillBeSent","params":{"request":{"postData":"user=a&password=CANARY-pw"}}}`,
		`{"method":"Network.requestWillBeSentExtraInfo","sessionId":"S","params":{"headers":{"Authorization":"Basic CANARY"}}}`,
		`{"method":"Network.requestWillBeSent","sessionId":"S","params":{"requestId":"7.1","request":{"url":"http://x/?q=CANARY","postData":"password=CANARY-pw"}}}`,
		`{"method":"Network.responseReceived","sessionId":"S","params":{"requestId":"7.1","response":{"headers":{"Set-Cookie":"CANARY"}}}}`,
		`{"method":"Network.loadingFinished","sessionId":"S","params":{"requestId":"7.1","encodedDataLength":9}}`,
		`{"method":"Page.loadEventFired","params":{"n":2}}`,
	} {
		if _, err := w.Write(append([]byte(m), 0)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	<-b.done
	want := []string{`Page.frameNavigated {"n":1}`, `Network.requestWillBeSent "7.1"`, `Network.loadingFinished "7.1"`, `Page.loadEventFired {"n":2}`}
	if !slices.Equal(got, want) {
		t.Fatalf("events seen %q; want %q", got, want)
	}
	for _, e := range got {
		if strings.Contains(e, "CANARY") {
			t.Fatalf("an event with the canary reached a subscriber: %s", e)
		}
	}
}

// TestWebAuthnEventsPrivate: a WebAuthn event carries a private key: no subscriber sees one,
// of any authenticator; the authenticator it names gets the credential (the key only when it
// was added), and an event of an authenticator nobody holds is dropped.
func TestWebAuthnEventsPrivate(t *testing.T) {
	b, w := pipeBrowser(t)
	a := &Authenticator{b: b, sid: "S", id: "A1", Events: make(chan AuthenticatorEvent, 4)}
	b.auths.m = map[string]*Authenticator{"A1": a}
	var mu sync.Mutex
	var got []string
	b.Subscribe(func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev.Method)
	})
	go b.read()
	const key = "Q0FOQVJZLUtFWQ==" // "CANARY-KEY"
	for _, m := range []string{
		`{"method":"WebAuthn.credentialAdded","sessionId":"S","params":{"authenticatorId":"A1","credential":{"credentialId":"aWQ=","rpId":"localhost","privateKey":"` + key + `","userHandle":"AQI=","signCount":1}}}`,
		`{"method":"WebAuthn.credentialAsserted","sessionId":"S","params":{"authenticatorId":"A1","credential":{"credentialId":"aWQ=","rpId":"localhost","privateKey":"` + key + `","signCount":2}}}`,
		`{"method":"WebAuthn.credentialAdded","sessionId":"S","params":{"authenticatorId":"other","credential":{"credentialId":"aWQ=","privateKey":"` + key + `"}}}`,
		`{"method":"Page.loadEventFired","params":{}}`,
	} {
		if _, err := w.Write(append([]byte(m), 0)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	<-b.done
	if !slices.Equal(got, []string{"Page.loadEventFired"}) {
		t.Fatalf("subscribers saw %q", got)
	}
	if len(a.Events) != 2 {
		t.Fatalf("the authenticator got %d events; want 2", len(a.Events))
	}
	added, asserted := <-a.Events, <-a.Events
	if !added.Added || string(added.Passkey.Key) != "CANARY-KEY" || string(added.Passkey.ID) != "id" || added.Passkey.RPID != "localhost" || added.Passkey.SignCount != 1 {
		t.Fatalf("added: %+v", added)
	}
	if asserted.Added || asserted.Passkey.Key != nil || asserted.Passkey.SignCount != 2 {
		t.Fatalf("asserted: %+v (an assertion never hands over the key)", asserted)
	}
	if n, max := a.Used(); n != 1 || max != 2 {
		t.Fatalf("Used = %d, %d; want 1 assertion, sign count 2", n, max)
	}
}

// TestWebAuthnUsesCounted: every assertion is counted, with the highest sign count, also those
// that no longer fit in the authenticator's event buffer (a page that asked again and again
// while the host was held up).
func TestWebAuthnUsesCounted(t *testing.T) {
	b, w := pipeBrowser(t)
	a := &Authenticator{b: b, sid: "S", id: "A1", Events: make(chan AuthenticatorEvent, 4)}
	b.auths.m = map[string]*Authenticator{"A1": a}
	go b.read()
	for _, n := range []int{5, 9, 7, 6, 8, 12, 10, 11, 4, 3} {
		m := `{"method":"WebAuthn.credentialAsserted","sessionId":"S","params":{"authenticatorId":"A1","credential":{"credentialId":"aWQ=","rpId":"localhost","signCount":` + strconv.Itoa(n) + `}}}`
		if _, err := w.Write(append([]byte(m), 0)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	<-b.done
	if n, max := a.Used(); n != 10 || max != 12 || len(a.Events) != 4 {
		t.Fatalf("Used = %d, %d with %d events kept; want 10, 12 with 4", n, max, len(a.Events))
	}
}

// pipeBrowser is a Browser reading the messages written to w (not started: go b.read()).
func pipeBrowser(t *testing.T) (*Browser, *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return &Browser{r: r, pending: map[int64]chan reply{}, psess: map[int64]string{}, gone: map[string]error{},
		subs: map[int]func(Event){}, done: make(chan struct{})}, w
}
