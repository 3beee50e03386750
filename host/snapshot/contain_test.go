package snapshot

import (
	"strings"
	"testing"
)

// The containment rules of issue 10 at the snapshot level: a tainted node never shows its
// value whatever it has become, every submitter of a form is recorded (rendered or not), and
// only a sign-in form is one.

func TestTaintedNodeNeverShowsItsValue(t *testing.T) {
	const secret = "hunter2-typed"
	d := newTDoc("https://a.example/login")
	f := d.el(body, "FORM", "action", "/login", "method", "post")
	// The field the host typed into, after the page's "show password" toggle: a text input
	// with a generated name, which no heuristic recognises.
	asText := d.input(f, secret, "type", "text", "name", "f_9x2")
	// The same kind of field turned into a button: HTML copies the value into the attribute.
	asButton := d.input(f, "", "type", "button", "name", "q", "value", secret)
	ta := d.el(f, "TEXTAREA", "name", "note")
	d.nodes[ta].inputValue = nil
	plain := d.input(f, "visible value", "type", "text", "name", "other")
	raw := synth(t, d)
	node := func(i int) int64 { return int64(i + 1) }

	out, _, err := Build(raw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dump(out), secret) {
		t.Fatal("without taint the test page shows the value: the test would prove nothing")
	}
	out, _, err = Build(raw, Options{Tainted: map[int64]bool{node(asText): true, node(asButton): true}})
	if err != nil {
		t.Fatal(err)
	}
	if s := dump(out); strings.Contains(s, secret) {
		t.Errorf("a tainted node's value is in the outline:\n%s", s)
	}
	if !strings.Contains(dump(out), "visible value") {
		t.Error("an untainted field lost its value")
	}
	_ = plain

	for _, c := range []struct {
		name  string
		nodes map[int64]bool
		want  bool
	}{
		{"text field holding the value", map[int64]bool{node(asText): true}, true},
		{"button carrying it in its attribute", map[int64]bool{node(asButton): true}, true},
		{"empty textarea", map[int64]bool{node(ta): true}, false},
		{"no nodes", nil, false},
		{"unknown node", map[int64]bool{99999: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := HoldsValue(raw, c.nodes)
			if err != nil || got != c.want {
				t.Errorf("HoldsValue = %v, %v; want %v", got, err, c.want)
			}
		})
	}
	if _, err := HoldsValue([]byte("{"), map[int64]bool{1: true}); err == nil {
		t.Error("HoldsValue of a malformed snapshot: no error")
	}
}

func TestFormSubmittersIncludeHiddenOnes(t *testing.T) {
	d := newTDoc("https://a.example/login")
	f := d.el(body, "FORM", "id", "login", "action", "/session", "method", "POST")
	hidden := d.el(f, "BUTTON", "formaction", "https://evil.example/c")
	d.nodes[hidden].display = "none"
	d.input(f, "", "type", "email", "name", "username")
	d.input(f, "", "type", "password", "name", "password")
	d.text(d.el(f, "BUTTON"), "Sign in")
	d.text(d.el(f, "BUTTON", "type", "button"), "Show") // not a submitter
	d.input(f, "", "type", "image", "alt", "Go", "formmethod", "get")
	tmpl := d.el(f, "TEMPLATE")
	d.el(tmpl, "BUTTON")                                                       // inert: never submits
	d.text(d.el(body, "BUTTON", "form", "login", "formaction", ""), "Outside") // form= owner, empty formaction
	out, _, err := Build(synth(t, d), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lfs := LoginForms(out)
	if len(lfs) != 1 {
		t.Fatalf("LoginForms = %+v", lfs)
	}
	got := lfs[0].Submitters
	want := []Submitter{
		{ActionOrigin: "https://evil.example", Method: "post"},
		{Ref: lfs[0].Submit, ActionOrigin: "https://a.example", Method: "post", Rendered: true},
		{Ref: refOf(t, out, "button", "Go"), ActionOrigin: "https://a.example", Method: "get", Rendered: true},
		{Ref: refOf(t, out, "button", "Outside"), ActionOrigin: "https://a.example", Method: "post", Rendered: true},
	}
	if len(got) != len(want) {
		t.Fatalf("submitters = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("submitter %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if lfs[0].Method != "post" || lfs[0].ActionOrigin != "https://a.example" {
		t.Errorf("form method %q action origin %q", lfs[0].Method, lfs[0].ActionOrigin)
	}

	// More submitters than recorded: one that goes nowhere known is added, so a check of every
	// submitter refuses the form.
	d = newTDoc("https://a.example/login")
	f = d.el(body, "FORM", "action", "/s", "method", "post")
	d.input(f, "", "type", "password", "name", "password", "autocomplete", "current-password")
	for range maxSubmitters + 5 {
		d.el(f, "BUTTON")
	}
	out, _, err = Build(synth(t, d), Options{})
	if err != nil {
		t.Fatal(err)
	}
	subs := LoginForms(out)[0].Submitters
	if len(subs) != maxSubmitters+1 || subs[maxSubmitters].ActionOrigin != "null" {
		t.Errorf("%d submitters, last %+v; want %d and an unknown destination last", len(subs), subs[len(subs)-1], maxSubmitters+1)
	}
}

func refOf(t *testing.T, o Outline, kind, text string) string {
	t.Helper()
	for _, e := range o.Elements {
		if e.Kind == kind && e.Text == text {
			return e.Ref
		}
	}
	t.Fatalf("no %s %q", kind, text)
	return ""
}

func TestSignInEvidence(t *testing.T) {
	form := Element{Ref: "f", Kind: "form", ActionOrigin: "https://a.example", Method: "post"}
	in := func(ref, typ string, f func(*Element)) Element {
		e := Element{Ref: ref, Kind: "input", Type: typ, Form: "f"}
		if f != nil {
			f(&e)
		}
		return e
	}
	pw := func(f func(*Element)) Element { return in("pw", "password", f) }
	label := func(s string) func(*Element) { return func(e *Element) { e.Text = s } }
	for _, c := range []struct {
		name string
		els  []Element
		want bool
	}{
		{"email and password", []Element{form, in("u", "email", nil), pw(nil)}, true},
		{"user name by label", []Element{form, in("u", "text", label("Username")), pw(nil)}, true},
		{"current-password alone", []Element{form, pw(func(e *Element) { e.Autocomplete = "current-password" })}, true},
		{"text field named for nothing", []Element{form, in("u", "text", label("Display name")), pw(nil)}, false},
		{"settings: secret and URL", []Element{form, pw(label("Signing secret")), in("h", "url", label("Webhook URL"))}, false},
		{"secret field with current-password", []Element{form, in("u", "email", nil),
			pw(func(e *Element) { e.Name = "api_token"; e.Autocomplete = "current-password" })}, false},
		{"camel-case key", []Element{form, in("u", "email", nil), pw(func(e *Element) { e.Name = "apiKey" })}, false},
		// A bank's PIN is its sign-in password (issue 43): no longer refused.
		{"PIN", []Element{form, in("u", "email", nil), pw(label("PIN"))}, true},
		{"spinner is not a pin", []Element{form, in("u", "email", label("Spinner user")), pw(nil)}, true},
		{"sign-up: two passwords", []Element{form, in("u", "email", nil), pw(nil), in("pw2", "password", nil)}, false},
		{"new-password", []Element{form, in("u", "email", nil), pw(func(e *Element) { e.Autocomplete = "new-password" })}, false},
		// A sign-in with its optional second factor in the same form (issue 43).
		{"one-time code beside", []Element{form, in("u", "email", nil), pw(nil),
			in("c", "text", func(e *Element) { e.Autocomplete = "one-time-code" })}, true},
		{"card number beside", []Element{form, in("u", "email", nil), pw(nil),
			in("c", "text", func(e *Element) { e.Autocomplete = "cc-number" })}, false},
		{"token beside", []Element{form, in("u", "email", nil), pw(nil), in("c", "text", label("Access token"))}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			lfs := LoginForms(Outline{Elements: c.els})
			var got *LoginForm
			for i := range lfs {
				if lfs[i].Password == "pw" {
					got = &lfs[i]
				}
			}
			if got == nil {
				t.Fatalf("LoginForms = %+v: the password field is not listed at all", lfs)
			}
			if got.SignIn != c.want || got.SignIn == (got.NotSignIn != "") {
				t.Errorf("SignIn = %v (%q), want %v", got.SignIn, got.NotSignIn, c.want)
			}
		})
	}
	// A username-only first step is a sign-in step unless a secret sits beside it.
	step := []Element{form, in("u", "email", func(e *Element) { e.Autocomplete = "username" })}
	if lfs := LoginForms(Outline{Elements: step}); len(lfs) != 1 || !lfs[0].SignIn {
		t.Errorf("username step: %+v", lfs)
	}
	step = append(step, in("k", "text", label("API key")))
	if lfs := LoginForms(Outline{Elements: step}); len(lfs) > 1 || len(lfs) == 1 && lfs[0].SignIn {
		t.Errorf("username step beside an API key: %+v", lfs)
	}
}
