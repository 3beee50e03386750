package cdp

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// TestNetworkEventsDropped: the Network domain is on for its service-worker bypass, and its
// events — a request's can carry what a page sent, a sign-in's body included — reach no
// subscriber but as a page's request starting or ending, with its id alone (an action settles
// on them), and as what 'network list' shows (method, URL, type, status, size, times): never a
// header, a body, post data or a cookie. Every other event still does, in order.
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
		`{"method":"Network.requestWillBeSent","sessionId":"S","params":{"requestId":"7.1","loaderId":"L","type":"Fetch","timestamp":5.5,"wallTime":1700000000.25,"initiator":{"stack":"CANARY"},"request":{"url":"http://x/?q=1","method":"POST","headers":{"Cookie":"CANARY"},"postData":"password=CANARY-pw","hasPostData":true}}}`,
		`{"method":"Network.responseReceived","sessionId":"S","params":{"requestId":"7.1","type":"Fetch","timestamp":5.75,"response":{"status":201,"headers":{"Set-Cookie":"CANARY"},"headersText":"CANARY"}}}`,
		`{"method":"Network.dataReceived","sessionId":"S","params":{"requestId":"7.1","data":"CANARY"}}`,
		`{"method":"Network.loadingFinished","sessionId":"S","params":{"requestId":"7.1","encodedDataLength":9,"timestamp":6}}`,
		`{"method":"Network.loadingFailed","sessionId":"S","params":{"requestId":"7.2","errorText":"net::ERR_FAILED","timestamp":7}}`,
		`{"method":"Page.loadEventFired","params":{"n":2}}`,
	} {
		if _, err := w.Write(append([]byte(m), 0)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	<-b.done
	want := []string{`Page.frameNavigated {"n":1}`,
		`Network.requestWillBeSent "7.1"`,
		`headless.request {"kind":"start","id":"7.1","loader":"L","method":"POST","url":"http://x/?q=1","type":"Fetch","time":5.5,"wall":1700000000.25}`,
		`headless.request {"kind":"response","id":"7.1","type":"Fetch","status":201,"time":5.75}`,
		`Network.loadingFinished "7.1"`,
		`headless.request {"kind":"end","id":"7.1","bytes":9,"time":6}`,
		`Network.loadingFailed "7.2"`,
		`headless.request {"kind":"fail","id":"7.2","error":"net::ERR_FAILED","time":7}`,
		`Page.loadEventFired {"n":2}`}
	if !slices.Equal(got, want) {
		t.Fatalf("events seen\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, e := range got {
		if strings.Contains(e, "CANARY") {
			t.Fatalf("an event with the canary reached a subscriber: %s", e)
		}
	}
}

// TestConsoleEvents: a console call reaches the host as its level and one line of text (the
// arguments' values or the browser's descriptions, a format string applied), an uncaught
// exception as an error; an object's preview never.
func TestConsoleEvents(t *testing.T) {
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
		`{"method":"Runtime.consoleAPICalled","params":{"type":"log","args":[{"type":"string","value":"hello"},{"type":"number","value":42,"description":"42"},{"type":"object","className":"Object","description":"Object","objectId":"1","preview":{"properties":[{"name":"pw","value":"CANARY"}]}},{"type":"object","subtype":"null","value":null},{"type":"undefined"},{"type":"bigint","unserializableValue":"1n","description":"1n"},{"type":"function","description":"function f() {\n return 'CANARY' }"}],"executionContextId":2,"timestamp":1000.5,"stackTrace":{"callFrames":[{"url":"CANARY"}]}},"sessionId":"S"}`,
		`{"method":"Runtime.consoleAPICalled","params":{"type":"warning","args":[{"type":"string","value":"%s and %d%% of %c%o"},{"type":"string","value":"fmt"},{"type":"number","value":5.7,"description":"5.7"},{"type":"string","value":"color: red"},{"type":"object","description":"Array(2)"},{"type":"string","value":"extra"}],"timestamp":1},"sessionId":"S"}`,
		`{"method":"Runtime.consoleAPICalled","params":{"type":"assert","args":[],"timestamp":2},"sessionId":"S"}`,
		`{"method":"Runtime.exceptionThrown","params":{"timestamp":3,"exceptionDetails":{"text":"Uncaught","exception":{"type":"object","subtype":"error","description":"Error: boom\n    at x.js:1"}}},"sessionId":"S"}`,
		`{"method":"Runtime.executionContextCreated","params":{"context":{"id":3}},"sessionId":"S"}`,
	} {
		if _, err := w.Write(append([]byte(m), 0)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	<-b.done
	want := []string{
		`headless.console {"level":"log","text":"hello 42 Object null undefined 1n function f() {","time":1000.5}`,
		`headless.console {"level":"warning","text":"fmt and 5% of Array(2) extra","time":1}`,
		`headless.console {"level":"error","time":2}`,
		`headless.console {"level":"error","text":"Uncaught Error: boom\n    at x.js:1","time":3}`,
		`Runtime.executionContextCreated {"context":{"id":3}}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events seen\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEventsBounded: a console message or a request event larger than MaxEvent (a page
// logging megabytes) is read to its end without being kept — the host learns it was dropped,
// the browser is not given up, and what follows arrives — and a text or URL under it is cut
// at MaxEventText.
func TestEventsBounded(t *testing.T) {
	b, w := pipeBrowser(t)
	var mu sync.Mutex
	var got []Event
	b.Subscribe(func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev)
	})
	go b.read()
	huge := strings.Repeat("x", 3*MaxEvent)
	long := strings.Repeat("é", MaxEventText)
	go func() {
		for _, m := range []string{
			`{"method":"Runtime.consoleAPICalled","params":{"type":"log","args":[{"type":"string","value":"` + huge + `"}],"timestamp":1},"sessionId":"S1"}`,
			`{"method":"Network.requestWillBeSent","params":{"requestId":"1","request":{"url":"http://x/` + huge + `","method":"GET"}},"sessionId":"S2"}`,
			`{"method":"Runtime.consoleAPICalled","params":{"type":"log","args":[{"type":"string","value":"` + long + `"}],"timestamp":2},"sessionId":"S1"}`,
			`{"method":"Page.loadEventFired","params":{},"sessionId":"S1"}`,
		} {
			w.Write(append([]byte(m), 0))
		}
		w.Close()
	}()
	<-b.done
	if err := b.Err(); err != nil && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("the browser was given up: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 4 {
		t.Fatalf("%d events, want 4", len(got))
	}
	if got[0].Method != ConsoleEvent || got[0].SessionID != "S1" || string(got[0].Params) != `{"dropped":true}` {
		t.Errorf("the huge console message: %s %s %.80s", got[0].Method, got[0].SessionID, got[0].Params)
	}
	if got[1].Method != NetworkEvent || got[1].SessionID != "S2" || string(got[1].Params) != `{"dropped":true}` {
		t.Errorf("the huge request: %s %s %.80s", got[1].Method, got[1].SessionID, got[1].Params)
	}
	var c Console
	if err := json.Unmarshal(got[2].Params, &c); err != nil || !c.Cut || len(c.Text) > MaxEventText || !utf8.ValidString(c.Text) || len(c.Text) < MaxEventText-1 {
		t.Errorf("the long message: cut %v, %d bytes, %v", c.Cut, len(c.Text), err)
	}
	if got[3].Method != "Page.loadEventFired" {
		t.Errorf("the event after them: %s", got[3].Method)
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
