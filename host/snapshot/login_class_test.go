package snapshot

import "testing"

// Page classes found on DuckDuckGo's corpus (host/snapshot/internal/ddgeval), each as a small
// synthetic outline: what the first sign-in candidate is, or that there is none.
func TestLoginFormsClasses(t *testing.T) {
	form := func(ref string) Element {
		return Element{Ref: ref, Kind: "form", ActionOrigin: "https://a.example", Method: "post"}
	}
	in := func(ref, form, typ string, f func(*Element)) Element {
		e := Element{Ref: ref, Kind: "input", Type: typ, Form: form}
		if f != nil {
			f(&e)
		}
		return e
	}
	named := func(name string) func(*Element) { return func(e *Element) { e.Name = name } }
	label := func(s string) func(*Element) { return func(e *Element) { e.Text = s } }
	button := func(ref, form, typ, text string) Element {
		return Element{Ref: ref, Kind: "button", Type: typ, Form: form, Text: text}
	}
	heading := func(ref, text string) Element { return Element{Ref: ref, Kind: "heading", Text: text} }
	for _, c := range []struct {
		name                      string
		title                     string
		els                       []Element
		password, account, submit string // "" password and account: nothing offered
	}{
		{"account named accessid, submit type=button", "", []Element{form("f"),
			in("u", "f", "text", named("accessid")), in("pw", "f", "password", nil), button("b", "f", "button", "Log in")},
			"pw", "u", "b"},
		{"password named pin, remember-me checkbox named pin", "", []Element{form("f"),
			in("u", "f", "text", named("memberId")), in("pw", "f", "password", named("pin")),
			in("r", "f", "checkbox", func(e *Element) { e.Name = "pin"; e.Text = "Remember me" }), button("b", "f", "submit", "Sign in")},
			"pw", "u", "b"},
		{"new-password on a plain sign-in", "", []Element{form("f"),
			in("u", "f", "email", nil), in("pw", "f", "password", func(e *Element) { e.Autocomplete = "new-password" }),
			button("b", "f", "submit", "Log in")},
			"pw", "u", "b"},
		{"sign-up with one password", "", []Element{heading("h", "Create your account"), form("f"),
			in("n", "f", "text", label("First name")), in("u", "f", "email", nil),
			in("pw", "f", "password", func(e *Element) { e.Autocomplete = "new-password" }), button("b", "f", "submit", "Create account")},
			"", "", ""},
		{"change password", "", []Element{form("f"),
			in("o", "f", "password", label("Current password")), in("n", "f", "password", label("New password")),
			in("c", "f", "password", label("Confirm new password")), button("b", "f", "submit", "Change password")},
			"", "", ""},
		{"forgot-password lone e-mail is no first step", "Sign in", []Element{heading("h", "Forgot your password?"), form("f"),
			in("u", "f", "email", nil), button("b", "f", "submit", "Send reset link")},
			"", "", ""},
		{"newsletter is no first step", "", []Element{form("f"),
			in("u", "f", "email", nil), button("b", "f", "submit", "Subscribe")},
			"", "", ""},
		{"first step", "", []Element{heading("h", "Sign in"), form("f"),
			in("u", "f", "email", nil), button("b", "f", "submit", "Next")},
			"", "u", "b"},
		{"a password form wins over a lone field further down", "", []Element{form("f"),
			in("u", "f", "text", named("uName")), in("pw", "f", "password", nil), button("b", "f", "submit", "Entrar"),
			form("g"), in("e", "g", "email", nil), button("r", "g", "submit", "Réinitialiser le mot de passe")},
			"pw", "u", "b"},
		{"fields outside a form, a link to submit", "", []Element{
			in("u", "", "text", func(e *Element) { e.Name = "codeUtilisateur"; e.Anc = []int64{3, 2, 1} }),
			in("pw", "", "password", func(e *Element) { e.Anc = []int64{4, 2, 1} }),
			{Ref: "l", Kind: "link", Text: "Se connecter", Anc: []int64{5, 2, 1}}},
			"pw", "u", "l"},
		{"no submit control: Enter", "", []Element{form("f"),
			in("u", "f", "text", named("login")), in("pw", "f", "password", func(e *Element) { e.Autocomplete = "current-password" })},
			"pw", "u", ""},
		{"password-only sign-in", "", []Element{heading("h", "Log in"), form("f"),
			in("pw", "f", "password", nil), button("b", "f", "submit", "Log in")},
			"pw", "", "b"},
		{"search box before the password is no account", "", []Element{form("f"),
			in("q", "f", "search", named("q")), in("pw", "f", "password", nil), button("b", "f", "submit", "Anmelden")},
			"pw", "", "b"},
		{"login and sign-up in one form", "", []Element{form("f"),
			in("u", "f", "email", func(e *Element) { e.Anc = []int64{10, 2, 1} }),
			in("pw", "f", "password", func(e *Element) { e.Anc = []int64{11, 2, 1} }),
			{Ref: "b", Kind: "button", Type: "submit", Form: "f", Text: "Sign in", Anc: []int64{12, 2, 1}},
			in("u2", "f", "email", func(e *Element) { e.Anc = []int64{20, 3, 1} }),
			in("p2", "f", "password", func(e *Element) { e.Anc = []int64{21, 3, 1} }),
			in("p3", "f", "password", func(e *Element) { e.Anc = []int64{22, 3, 1}; e.Text = "Confirm password" }),
			{Ref: "b2", Kind: "button", Type: "submit", Form: "f", Text: "Register", Anc: []int64{23, 3, 1}}},
			"pw", "u", "b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got *LoginForm
			lfs := LoginForms(Outline{Title: c.title, Elements: c.els})
			for i := range lfs {
				if lfs[i].SignIn && lfs[i].Frame == "" {
					got = &lfs[i]
					break
				}
			}
			if c.password == "" && c.account == "" {
				if got != nil {
					t.Fatalf("offered %+v, want nothing", *got)
				}
				return
			}
			if got == nil {
				t.Fatalf("nothing offered: %+v", lfs)
			}
			if got.Password != c.password || got.Username != c.account || got.Submit != c.submit {
				t.Errorf("password %q account %q submit %q, want %q %q %q (%+v)", got.Password, got.Username, got.Submit,
					c.password, c.account, c.submit, *got)
			}
			if got.PasswordOnly != (got.Password != "" && got.Username == "") {
				t.Errorf("PasswordOnly = %v", got.PasswordOnly)
			}
		})
	}
}
