package snapshot

import (
	"reflect"
	"testing"
)

const passwordAlone = "a password field alone, with no account field and no sign-in words around it (button, heading, autocomplete)"

func TestLoginFormsFixtures(t *testing.T) {
	const top, cross = "http://127.0.0.1:47801", "http://localhost:47802"
	for _, c := range []struct {
		name string
		want []LoginForm
	}{
		{"login", []LoginForm{{Password: "e4", Username: "e3", Submit: "e5", SubmitBy: "button", Form: "e2", ActionOrigin: top, Method: "post",
			Submitters: []Submitter{{Ref: "e5", ActionOrigin: top, Method: "post", Rendered: true}}, SignIn: true, Purpose: "sign-in", Label: "Password"}}},
		// Two-step login: the username page, then the password page (the username is a hidden
		// input there, so no username field: not a sign-in form on its own, only as the second
		// step of one).
		{"step1", []LoginForm{{Username: "e3", Submit: "e4", SubmitBy: "button", Form: "e2", ActionOrigin: top, Method: "get",
			Submitters: []Submitter{{Ref: "e4", ActionOrigin: top, Method: "get", Rendered: true}}, SignIn: true, Purpose: "sign-in"}}},
		// (Issue 43: a password form with no account field and sign-in words of its own is
		// a password-only sign-in, no longer "no account field".)
		{"step2", []LoginForm{{Password: "e4", Submit: "e5", SubmitBy: "button", Form: "e3", ActionOrigin: top, Method: "post",
			Submitters: []Submitter{{Ref: "e5", ActionOrigin: top, Method: "post", Rendered: true}},
			SignIn:     true, Purpose: "sign-in", PasswordOnly: true, Label: "Enter your password"}}},
		{"frames", []LoginForm{
			{Password: "e5", Username: "e4", Submit: "e6", SubmitBy: "button", Form: "e3", ActionOrigin: top, Frame: top, Method: "post",
				Submitters: []Submitter{{Ref: "e6", ActionOrigin: top, Method: "post", Rendered: true}}, SignIn: true, Purpose: "sign-in", Label: "Password"},
			{Password: "e11", Username: "e10", Submit: "e12", SubmitBy: "button", Form: "e9", ActionOrigin: cross, Frame: cross, Method: "post",
				Submitters: []Submitter{{Ref: "e12", ActionOrigin: cross, Method: "post", Rendered: true}}, SignIn: true, Purpose: "sign-in", Label: "Password"},
			// (The text just before a field without a label of its own is read as its label.)
			{Password: "e15", Frame: "null", SubmitBy: "enter", Purpose: "sign-in", NotSignIn: passwordAlone, Label: "srcdoc text"},
		}},
		// Best first: the form whose action path says login is judged the likelier sign-in;
		// its default button's formaction (another origin) is what the host refuses.
		{"tricky", []LoginForm{
			{Password: "e11", Username: "e10", Submit: "e12", SubmitBy: "button", Form: "e8", ActionOrigin: "https://evil.example", Method: "get",
				Submitters: []Submitter{{Ref: "e12", ActionOrigin: "https://evil.example", Method: "post", Rendered: true}}, SignIn: true, Purpose: "sign-in"},
			{Password: "e5", Username: "e4", SubmitBy: "enter", Form: "e3", ActionOrigin: top, Method: "get", SignIn: true, Purpose: "sign-in"},
			{Username: "e16", SubmitBy: "enter", Form: "e15", ActionOrigin: "https://cdn.example.com", Method: "get", Purpose: "sign-in",
				NotSignIn: "a lone field that does not look like an account field (user name, e-mail, phone) is not a first step"},
		}},
		{"basic", nil},
		{"large", nil}, // the password field is beyond the cut
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _ := build(t, c.name, Options{})
			got := LoginForms(out)
			for k := range got {
				got[k].Scores = ""   // measured weights, not the contract
				got[k].Container = 0 // a backend node id of the capture
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("LoginForms =\n%+v\nwant\n%+v\noutline:\n%s", got, c.want, dump(out))
			}
		})
	}
}

// The host's sign-in looks are built with SignInOptions: a sign-in form below the agent's
// outline's cut is found there, and every text carries its block's ancestors (a sign-in's
// group holds the texts beside its fields).
func TestSignInOptions(t *testing.T) {
	out, _ := build(t, "large", SignInOptions())
	if out.Truncated {
		t.Fatalf("the large page is cut with SignInOptions (%d elements)", len(out.Elements))
	}
	lfs := LoginForms(out)
	if len(lfs) == 0 || !lfs[0].SignIn || lfs[0].Password == "" || lfs[0].Username == "" {
		t.Fatalf("LoginForms(large, SignInOptions) = %+v, want its sign-in form", lfs)
	}
	texts := 0
	out, _ = build(t, "tricky", Options{})
	for _, e := range out.Elements {
		if e.Kind == "text" {
			texts++
			if len(e.Anc) == 0 || e.Node == 0 {
				t.Fatalf("text %s has no ancestors or node: %+v", e.Ref, e)
			}
		}
	}
	if texts == 0 {
		t.Fatal("no text element: the check proves nothing")
	}
}

func TestLoginFormsUsername(t *testing.T) {
	in := func(ref string, f func(*Element)) Element {
		e := Element{Ref: ref, Kind: "input", Type: "text", Form: "f"}
		if f != nil {
			f(&e)
		}
		return e
	}
	form := Element{Ref: "f", Kind: "form", ActionOrigin: "https://a.example"}
	pw := in("pw", func(e *Element) { e.Type = "password" })
	for _, c := range []struct {
		name string
		els  []Element
		want string
	}{
		{"autocomplete beats order", []Element{form,
			in("a", nil), in("b", func(e *Element) { e.Autocomplete = "section-x username" }), in("c", nil), pw}, "b"},
		{"autocomplete email", []Element{form,
			in("a", func(e *Element) { e.Type = "email" }), in("b", func(e *Element) { e.Autocomplete = "email" }), pw}, "b"},
		{"type email", []Element{form,
			in("a", func(e *Element) { e.Name = "username" }), in("b", func(e *Element) { e.Type = "email" }), pw}, "b"},
		{"name", []Element{form,
			in("a", nil), in("b", func(e *Element) { e.Name = "LoginName" }), in("c", nil), pw}, "b"},
		{"id", []Element{form, in("a", func(e *Element) { e.ID = "user-id" }), in("c", nil), pw}, "a"},
		{"nearest preceding", []Element{form, in("a", nil), in("b", nil), pw, in("c", nil)}, "b"},
		{"only after", []Element{form, pw, in("c", nil)}, ""},
		// A text field after the password is the account only when it says so strongly.
		{"named after", []Element{form, pw, in("c", func(e *Element) { e.Name = "email" })}, ""},
		{"email after", []Element{form, pw, in("c", func(e *Element) { e.Type = "email"; e.Name = "email" })}, "c"},
		{"prefer before", []Element{form, in("a", func(e *Element) { e.Type = "email" }), pw,
			in("c", func(e *Element) { e.Type = "email" })}, "a"},
		{"disabled skipped", []Element{form, in("a", nil), in("b", func(e *Element) { e.Disabled = true }), pw}, "a"},
		{"other form skipped", []Element{form, in("a", func(e *Element) { e.Form = "g"; e.Type = "email" }), pw}, ""},
		{"search and checkbox skipped", []Element{form,
			in("a", func(e *Element) { e.Type = "search" }), in("b", func(e *Element) { e.Type = "checkbox"; e.Name = "user" }), pw}, ""},
		// Outside forms, the nearest container (ancestors 10 and 11) holding the password.
		{"formless container", []Element{
			in("a", func(e *Element) { e.Form = ""; e.Anc = []int64{20, 1} }),
			{Ref: "fr", Kind: "iframe"},
			in("b", func(e *Element) { e.Form = ""; e.Anc = []int64{12, 10, 1} }),
			in("pw", func(e *Element) { e.Form = ""; e.Type = "password"; e.Anc = []int64{11, 10, 1} }),
		}, "b"},
		{"formless run ends at another frame", []Element{
			in("a", func(e *Element) { e.Form = ""; e.Frame = "https://b.example" }),
			in("pw", func(e *Element) { e.Form = ""; e.Type = "password" }),
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []LoginForm
			for _, lf := range LoginForms(Outline{Elements: c.els}) {
				if lf.Password != "" {
					got = append(got, lf)
				}
			}
			if len(got) != 1 || got[0].Password != "pw" {
				t.Fatalf("LoginForms = %+v, want one for pw", got)
			}
			if got[0].Username != c.want {
				t.Errorf("username %q, want %q (%+v)", got[0].Username, c.want, got[0])
			}
		})
	}
}

func TestLoginFormsUsernameStep(t *testing.T) {
	form := Element{Ref: "f", Kind: "form", ActionOrigin: "https://a.example"}
	for _, c := range []struct {
		name string
		els  []Element
		want int
	}{
		// A first step is a lone field: with another text field beside it, it is not one.
		{"autocomplete username beside another field", []Element{form,
			{Ref: "a", Kind: "input", Type: "text", Form: "f", Autocomplete: "username"},
			{Ref: "b", Kind: "input", Type: "text", Form: "f"}}, 0},
		{"autocomplete username", []Element{form,
			{Ref: "a", Kind: "input", Type: "text", Form: "f", Autocomplete: "username"}}, 1},
		{"lone email", []Element{form, {Ref: "a", Kind: "input", Type: "email", Form: "f"}}, 1},
		{"email among others", []Element{form,
			{Ref: "a", Kind: "input", Type: "email", Form: "f"},
			{Ref: "b", Kind: "input", Type: "text", Form: "f", Name: "message"}}, 0},
		{"search box", []Element{form, {Ref: "a", Kind: "input", Type: "text", Form: "f", Name: "q"}}, 0},
		{"disabled", []Element{form, {Ref: "a", Kind: "input", Type: "email", Form: "f", Disabled: true}}, 0},
		{"two account fields are no first step", []Element{form,
			{Ref: "a", Kind: "input", Type: "text", Form: "f", Autocomplete: "username"},
			{Ref: "b", Kind: "input", Type: "text", Form: "f", Autocomplete: "username"}}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			lfs := LoginForms(Outline{Elements: c.els})
			if len(lfs) != c.want {
				t.Fatalf("LoginForms = %+v, want %d", lfs, c.want)
			}
			if c.want == 1 && (lfs[0].Password != "" || lfs[0].Username != "a" || lfs[0].ActionOrigin != "https://a.example") {
				t.Errorf("step = %+v", lfs[0])
			}
		})
	}
}

// A form cut from a truncated outline leaves its fields with no form and no action origin.
func TestLoginFormsMissingForm(t *testing.T) {
	lfs := LoginForms(Outline{Elements: []Element{
		{Ref: "e1", Kind: "input", Type: "password", Form: "e9"},
	}})
	if len(lfs) != 1 || lfs[0].ActionOrigin != "" || lfs[0].Form != "e9" {
		t.Errorf("LoginForms = %+v", lfs)
	}
}

// A read-only password input hidden from assistive technology or out of the tab order is an
// autofill decoy (nytimes' e-mail step holds one): the page is the sign-in's first step, and
// the decoy is never the field the password goes to. A read-only password field a person can
// reach is the password field (sites drop readonly on focus to keep autofill out).
func TestLoginFormsDecoyPassword(t *testing.T) {
	for _, c := range []struct {
		name  string
		attrs []string
		step  bool
	}{
		{"aria-hidden and tabindex -1 (nytimes')", []string{"readonly", "", "aria-hidden", "true", "tabindex", "-1"}, true},
		{"out of the tab order", []string{"readonly", "", "tabindex", "-1"}, true},
		{"hidden from assistive technology", []string{"readonly", "", "aria-hidden", "true"}, true},
		{"read-only, reachable", []string{"readonly", ""}, false},
		{"hidden from assistive technology, not read-only", []string{"aria-hidden", "true", "tabindex", "-1"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newTDoc("https://a.example/auth/login")
			box := d.el(body, "DIV")
			d.text(d.el(box, "H2"), "Log in or create an account")
			d.input(box, "", "type", "email", "name", "email", "autocomplete", "username", "aria-label", "Email Address")
			d.input(box, "", append([]string{"type", "password", "name", "hiddenPassword"}, c.attrs...)...)
			d.text(d.el(box, "BUTTON", "type", "submit"), "Continue")
			out, _, err := Build(synth(t, d), Options{})
			if err != nil {
				t.Fatal(err)
			}
			lfs := LoginForms(out)
			if len(lfs) != 1 {
				t.Fatalf("LoginForms = %+v, want one", lfs)
			}
			pw := refNamed(out, "hiddenPassword")
			if step := lfs[0].Password == ""; step != c.step || !c.step && lfs[0].Password != pw {
				t.Errorf("LoginForms = %+v (the field %s): a first step %v, want %v", lfs[0], pw, step, c.step)
			}
			if lfs[0].Username == "" {
				t.Errorf("no account field: %+v", lfs[0])
			}
		})
	}
}

// Two sign-in forms alike (goethe-campus: a mobile one, hidden by the site's style sheet,
// with no submit control of its own, a "Zur Anmeldung" button just after it, then the
// desktop one with its Anmelden): the form with a submit button of its own comes first, so a
// sign-in types where its submit sends the fields.
func TestLoginFormsOwnButtonFirst(t *testing.T) {
	d := newTDoc("https://a.example/login")
	for k, id := range []string{"mobileLoginForm", "loginForm"} {
		box := d.el(body, "DIV")
		f := d.el(box, "FORM", "method", "post", "action", "/auth", "id", id)
		d.input(f, "", "type", "text", "name", "asdf", "placeholder", "Benutzerkennung")
		d.input(f, "", "type", "password", "name", "fdsa", "placeholder", "Passwort")
		if k == 0 {
			d.text(d.el(box, "BUTTON"), "Zur Anmeldung")
		} else {
			d.text(d.el(f, "BUTTON", "type", "submit"), "Anmelden")
		}
	}
	out, _, err := Build(synth(t, d), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lfs := LoginForms(out)
	if len(lfs) != 2 {
		t.Fatalf("LoginForms = %+v, want both forms", lfs)
	}
	for _, e := range out.Elements {
		if e.Ref == lfs[0].Form && e.ID != "loginForm" {
			t.Errorf("the first sign-in is form %s (%+v), want loginForm's with its Anmelden", e.ID, lfs[0])
		}
	}
}

// A decoy just before the real password field, alike (same parent, same placeholder), is
// not the real field's show-password twin: the real field stays the password field.
func TestLoginFormsDecoyBeforeThePassword(t *testing.T) {
	d := newTDoc("https://a.example/login")
	f := d.el(body, "FORM", "method", "post", "action", "/session")
	d.input(f, "", "type", "email", "name", "email", "placeholder", "Email")
	box := d.el(f, "DIV")
	d.input(box, "", "type", "password", "name", "decoy", "placeholder", "Password", "readonly", "", "aria-hidden", "true")
	d.input(box, "", "type", "password", "name", "password", "placeholder", "Password")
	d.text(d.el(f, "BUTTON", "type", "submit"), "Sign in")
	out, _, err := Build(synth(t, d), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := refNamed(out, "password")
	if lfs := LoginForms(out); len(lfs) == 0 || lfs[0].Password != want || want == "" {
		t.Fatalf("LoginForms = %+v, want the password field %s", lfs, want)
	}
}

// refNamed is the ref of o's element named name ("" when none).
func refNamed(o Outline, name string) string {
	for _, e := range o.Elements {
		if e.Name == name {
			return e.Ref
		}
	}
	return ""
}
