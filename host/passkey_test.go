package host

import (
	"testing"

	"github.com/headless-dev/headless/host/snapshot"
)

// TestPasskeyTrigger: the passkey button is a top-document button or link named for a passkey;
// one in a frame, a disabled one or any other control is not.
func TestPasskeyTrigger(t *testing.T) {
	page := func(es ...snapshot.Element) pageState { return pageState{outline: snapshot.Outline{Elements: es}} }
	for _, c := range []struct {
		name string
		st   pageState
		want string
	}{
		{"button", page(snapshot.Element{Ref: "e1", Kind: "button", Text: "Sign in"}, snapshot.Element{Ref: "e2", Kind: "button", Text: "Sign in with a passkey"}), "e2"},
		{"link", page(snapshot.Element{Ref: "e3", Kind: "link", Text: "Use a security key"}), "e3"},
		{"pass-key", page(snapshot.Element{Ref: "e4", Kind: "button", Text: "PASS-KEY login"}), "e4"},
		{"framed", page(snapshot.Element{Ref: "e5", Kind: "button", Text: "Sign in with a passkey", Frame: "https://other.example"}), ""},
		{"disabled", page(snapshot.Element{Ref: "e6", Kind: "button", Text: "Sign in with a passkey", Disabled: true}), ""},
		{"heading", page(snapshot.Element{Ref: "e7", Kind: "heading", Text: "Passkeys"}), ""},
		{"registration", page(snapshot.Element{Ref: "e8", Kind: "button", Text: "Create a passkey"}), ""},
		{"management", page(snapshot.Element{Ref: "e9", Kind: "link", Text: "Manage passkeys"}, snapshot.Element{Ref: "e10", Kind: "button", Text: "Add a security key"}), ""},
	} {
		ref, _, ok := passkeyTrigger(c.st)
		if ref != c.want || ok != (c.want != "") {
			t.Errorf("%s: %q %v; want %q", c.name, ref, ok, c.want)
		}
	}
}

// TestPasskeyOrigins: a passkey's RP ID must be its origin's host; a frame's security origin is
// canonical, opaque ones are none, and one that cannot hold credentials is still an origin.
func TestPasskeyOrigins(t *testing.T) {
	if h := rpHost("http://localhost:8080"); h != "localhost" {
		t.Errorf("rpHost = %q", h)
	}
	if h := rpHost("https://app.example.com"); h != "app.example.com" {
		t.Errorf("rpHost = %q", h)
	}
	for in, want := range map[string]string{
		"": "", "null": "", "://": "",
		"HTTPS://App.Example.com:443": "https://app.example.com",
		"http://partner.example":      "http://partner.example",
	} {
		if got := canonicalOrigin(in); got != want {
			t.Errorf("canonicalOrigin(%q) = %q; want %q", in, got, want)
		}
	}
}
