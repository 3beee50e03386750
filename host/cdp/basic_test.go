package cdp

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// TestContinueWithBasic: the hand-built Fetch.continueRequest is valid JSON with the request's
// headers, the one Authorization header of the answer (an Authorization the request had is
// dropped), and nothing else; a password that is not text is refused before anything is sent.
func TestContinueWithBasic(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	b := &Browser{w: w, pending: map[int64]chan reply{}, psess: map[int64]string{}, gone: map[string]error{}, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pw := []byte(`p"w\é:x`)
	errc := make(chan error, 1)
	go func() {
		errc <- b.ContinueWithBasic(ctx, "", "interception-7", map[string]string{"Accept": "text/html", "authorization": "Basic stale", "Referer": "http://a.test/"}, "staff", pw)
	}()
	raw, err := bufio.NewReader(r).ReadBytes(0)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("ContinueWithBasic: %v", err)
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			RequestID string `json:"requestId"`
			Headers   []struct{ Name, Value string }
		} `json:"params"`
	}
	if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
		t.Fatalf("not JSON: %v: %q", err, raw)
	}
	if m.Method != "Fetch.continueRequest" || m.Params.RequestID != "interception-7" {
		t.Fatalf("message %+v", m)
	}
	got := map[string]string{}
	for _, h := range m.Params.Headers {
		if _, dup := got[h.Name]; dup {
			t.Fatalf("header %s twice", h.Name)
		}
		got[h.Name] = h.Value
	}
	want := map[string]string{"Accept": "text/html", "Referer": "http://a.test/",
		"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(`staff:p"w\é:x`))}
	if len(got) != len(want) {
		t.Fatalf("headers %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("header %s = %q, want %q", k, got[k], v)
		}
	}
	if err := b.ContinueWithBasic(context.Background(), "", "i", nil, "staff", []byte{0xff}); !errors.Is(err, ErrNotText) {
		t.Fatalf("a password that is not text: %v", err)
	}
}
