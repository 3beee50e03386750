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
	// at places an element under ancestors (nearest first), for groups outside forms and
	// for texts inside a form (the form element's own node given with node).
	at := func(e Element, anc ...int64) Element { e.Anc = anc; return e }
	node := func(e Element, n int64) Element { e.Node = n; return e }
	txt := func(ref, s string) Element { return Element{Ref: ref, Kind: "text", Text: s} }
	both := func(fs ...func(*Element)) func(*Element) {
		return func(e *Element) {
			for _, f := range fs {
				f(e)
			}
		}
	}
	auto := func(ac string) func(*Element) { return func(e *Element) { e.Autocomplete = ac } }
	for _, c := range []struct {
		name                      string
		title                     string
		url                       string
		els                       []Element
		password, account, submit string // "" password and account: nothing offered
	}{
		{"a server's settings beside the sign-in (Socket.IO's Admin UI: its advanced options open)", "", "", []Element{heading("h", "Connection"), form("f"),
			in("s", "f", "text", both(label("Server URL"), func(e *Element) { e.Placeholder = "https://example.com" })),
			in("u", "f", "text", label("Username")), in("pw", "f", "password", label("Password")),
			in("ws", "f", "checkbox", label("WebSocket only?")),
			in("p", "f", "text", both(label("Path"), func(e *Element) { e.Value = "/socket.io" })),
			in("ns", "f", "text", both(label("Admin namespace"), func(e *Element) { e.Value = "/admin" })),
			button("b", "f", "submit", "Connect")},
			"pw", "u", "b"},
		{"account named accessid, submit type=button", "", "", []Element{form("f"),
			in("u", "f", "text", named("accessid")), in("pw", "f", "password", nil), button("b", "f", "button", "Log in")},
			"pw", "u", "b"},
		{"password named pin, remember-me checkbox named pin", "", "", []Element{form("f"),
			in("u", "f", "text", named("memberId")), in("pw", "f", "password", named("pin")),
			in("r", "f", "checkbox", func(e *Element) { e.Name = "pin"; e.Text = "Remember me" }), button("b", "f", "submit", "Sign in")},
			"pw", "u", "b"},
		{"new-password on a plain sign-in", "", "", []Element{form("f"),
			in("u", "f", "email", nil), in("pw", "f", "password", func(e *Element) { e.Autocomplete = "new-password" }),
			button("b", "f", "submit", "Log in")},
			"pw", "u", "b"},
		{"sign-up with one password", "", "", []Element{heading("h", "Create your account"), form("f"),
			in("n", "f", "text", label("First name")), in("u", "f", "email", nil),
			in("pw", "f", "password", func(e *Element) { e.Autocomplete = "new-password" }), button("b", "f", "submit", "Create account")},
			"", "", ""},
		{"change password", "", "", []Element{form("f"),
			in("o", "f", "password", label("Current password")), in("n", "f", "password", label("New password")),
			in("c", "f", "password", label("Confirm new password")), button("b", "f", "submit", "Change password")},
			"", "", ""},
		{"forgot-password lone e-mail is no first step", "Sign in", "", []Element{heading("h", "Forgot your password?"), form("f"),
			in("u", "f", "email", nil), button("b", "f", "submit", "Send reset link")},
			"", "", ""},
		{"newsletter is no first step", "", "", []Element{form("f"),
			in("u", "f", "email", nil), button("b", "f", "submit", "Subscribe")},
			"", "", ""},
		{"first step", "", "", []Element{heading("h", "Sign in"), form("f"),
			in("u", "f", "email", nil), button("b", "f", "submit", "Next")},
			"", "u", "b"},
		{"a password form wins over a lone field further down", "", "", []Element{form("f"),
			in("u", "f", "text", named("uName")), in("pw", "f", "password", nil), button("b", "f", "submit", "Entrar"),
			form("g"), in("e", "g", "email", nil), button("r", "g", "submit", "Réinitialiser le mot de passe")},
			"pw", "u", "b"},
		{"fields outside a form, a link to submit", "", "", []Element{
			in("u", "", "text", func(e *Element) { e.Name = "codeUtilisateur"; e.Anc = []int64{3, 2, 1} }),
			in("pw", "", "password", func(e *Element) { e.Anc = []int64{4, 2, 1} }),
			{Ref: "l", Kind: "link", Text: "Se connecter", Anc: []int64{5, 2, 1}}},
			"pw", "u", "l"},
		{"no submit control: Enter", "", "", []Element{form("f"),
			in("u", "f", "text", named("login")), in("pw", "f", "password", func(e *Element) { e.Autocomplete = "current-password" })},
			"pw", "u", ""},
		{"password-only sign-in", "", "", []Element{heading("h", "Log in"), form("f"),
			in("pw", "f", "password", nil), button("b", "f", "submit", "Log in")},
			"pw", "", "b"},
		{"search box before the password is no account", "", "", []Element{form("f"),
			in("q", "f", "search", named("q")), in("pw", "f", "password", nil), button("b", "f", "submit", "Anmelden")},
			"pw", "", "b"},
		{"login and sign-up in one form", "", "", []Element{form("f"),
			in("u", "f", "email", func(e *Element) { e.Anc = []int64{10, 2, 1} }),
			in("pw", "f", "password", func(e *Element) { e.Anc = []int64{11, 2, 1} }),
			{Ref: "b", Kind: "button", Type: "submit", Form: "f", Text: "Sign in", Anc: []int64{12, 2, 1}},
			in("u2", "f", "email", func(e *Element) { e.Anc = []int64{20, 3, 1} }),
			in("p2", "f", "password", func(e *Element) { e.Anc = []int64{21, 3, 1} }),
			in("p3", "f", "password", func(e *Element) { e.Anc = []int64{22, 3, 1}; e.Text = "Confirm password" }),
			{Ref: "b2", Kind: "button", Type: "submit", Form: "f", Text: "Register", Anc: []int64{23, 3, 1}}},
			"pw", "u", "b"},

		// Fixed on the corpus's second round (each named after a page of its class).
		{"bluesky: a forgot-password button beside the password is no submit, nor a purpose", "", "", []Element{form("f"),
			in("u", "f", "text", both(label("Username or email address"), auto("username"))), in("pw", "f", "password", label("Password")),
			button("b", "f", "button", "Forgot password?")},
			"pw", "u", ""},
		{"my_terra: a form with a password field is no search form", "", "", []Element{form("f"),
			in("u", "f", "text", named("identifier")), in("pw", "f", "password", named("qualification")),
			button("b", "f", "submit", "Find Account")},
			"pw", "u", "b"},
		{"mein_ziv: the account's label naming a person's details too", "", "", []Element{form("f"),
			in("u", "f", "text", label("WWU ID (or email address or given name and surname)")), in("pw", "f", "password", label("WWU password:")),
			button("b", "f", "submit", "Continue")},
			"pw", "u", "b"},
		{"ugyfelkapu: a field called name before the password is the account", "", "", []Element{form("f"),
			in("u", "f", "text", both(named("name"), label("Felhasználónév"))), in("pw", "f", "password", label("Jelszó")),
			button("b", "f", "submit", "Bejelentkezés")},
			"pw", "u", "b"},
		{"membernet: a sign in name", "", "", []Element{form("f"),
			in("u", "f", "text", named("Sign in name")), in("pw", "f", "password", auto("current-password")), button("b", "f", "submit", "Sign in")},
			"pw", "u", "b"},
		{"quicksight: an MFA code in a password field is no second password", "", "", []Element{form("f"),
			in("u", "f", "text", named("username")), in("pw", "f", "password", named("password")),
			in("m", "f", "checkbox", label("I have an MFA token")), in("c", "f", "password", both(named("mfacode"), label("MFA code"))),
			button("b", "f", "submit", "Sign in")},
			"pw", "u", "b"},
		{"indiapost: a password labelled Password/OTP is the password", "", "", []Element{form("f"),
			in("u", "f", "text", label("User ID:*")), in("pw", "f", "password", both(named("password"), label("Password/OTP#:*"))),
			button("b", "f", "button", "Sign In")},
			"pw", "u", "b"},
		{"accesuniversitat: a show-password twin is no second password", "", "", []Element{
			at(in("u", "", "text", both(named("identificador"), label("Identificador d'estudiant"))), 10, 2, 1),
			at(in("pw", "", "password", both(named("contrasenya"), label("Contrasenya"))), 20, 3, 2, 1),
			at(in("p2", "", "password", label("Contrasenya")), 20, 3, 2, 1),
			at(button("r", "", "submit", "No t'has registrat mai? Registra't"), 30, 4, 2, 1),
			at(button("b", "", "submit", "Accedir"), 31, 4, 2, 1)},
			"pw", "u", "b"},
		{"centrum: a password field named secret, labelled as a password", "", "", []Element{form("f"),
			in("u", "f", "text", both(named("ego_user"), label("Jméno"))), in("pw", "f", "password", both(named("ego_secret"), label("Heslo"))),
			button("b", "f", "submit", "Přihlásit")},
			"pw", "u", "b"},
		{"hindustantimes: a field without a label takes the text before it", "", "", []Element{
			at(heading("h", "Enjoy with signing in"), 5, 1),
			node(at(txt("t", "Email or mobile number"), 11, 2, 1), 12),
			at(in("u", "", "text", nil), 13, 11, 2, 1),
			at(Element{Ref: "b", Kind: "button", Type: "button", Text: "Continue", Disabled: true}, 14, 2, 1)},
			"", "u", "b"},
		{"fedex: the walk up goes past a show-password toggle to the account", "", "", []Element{
			at(in("u", "", "text", both(label("User ID"), auto("username"))), 20, 3, 1),
			at(in("pw", "", "password", label("Password")), 30, 31, 32, 33, 3, 1),
			at(button("t", "", "submit", ""), 34, 31, 32, 33, 3, 1),
			at(button("b", "", "button", "Log in"), 40, 3, 1)},
			"pw", "u", "b"},
		{"sberbank: \"can't sign in\" is no submit", "", "", []Element{
			at(in("u", "", "text", label("Логин")), 10, 2, 1), at(in("pw", "", "password", label("Пароль")), 11, 2, 1),
			at(button("x", "", "button", "Не могу войти"), 12, 2, 1), at(button("b", "", "button", "Войти"), 13, 2, 1)},
			"pw", "u", "b"},
		{"mapquest: a first step's Next comes before Create account", "", "https://a.example/signin", []Element{form("f"),
			in("u", "f", "email", both(named("username"), label("Email address"))), button("b", "f", "button", "Next"),
			button("c", "f", "button", "Create account")},
			"", "u", "b"},
		{"google: Next outside the form, not Create account", "", "", []Element{heading("h", "Sign in"),
			at(node(form("f"), 100), 2, 1), in("u", "f", "email", both(named("identifier"), auto("username"))),
			at(button("b", "", "button", "Next"), 5, 2, 1), at(button("c", "", "submit", "Create account"), 6, 2, 1)},
			"", "u", "b"},
		{"infineon: \"don't have an account?\" is a sign-in's", "", "", []Element{node(form("f"), 100),
			at(txt("t", "Don't have an account? Register now"), 101, 100), in("u", "f", "text", label("E-Mail / Username")),
			at(button("b", "", "button", "Next"), 102, 100), at(button("r", "", "button", "Register now"), 103, 100)},
			"", "u", "b"},
		{"revolut: an Enter password step with no account field", "", "https://a.example/login", []Element{heading("h", "Enter password"),
			form("f"), in("pw", "f", "password", both(named("passcode"), label("Password"))), button("x", "f", "button", "Forgot password"),
			{Ref: "b", Kind: "button", Type: "submit", Form: "f", Text: "Continue", Disabled: true}},
			"pw", "", "b"},
		{"sso_treasury: of two alike forms, the one with a submit button", "", "", []Element{
			form("f"), in("u", "f", "text", label("User ID")), in("pw", "f", "password", label("Passcode")), button("x", "f", "button", ""),
			form("g"), in("u2", "g", "text", label("User ID")), in("p2", "g", "password", label("Passcode")), button("b", "g", "submit", "Submit")},
			"p2", "u2", "b"},
		{"joybird: names and a new password's rules make a sign-up, current-password or not", "", "", []Element{node(form("f"), 100),
			in("u", "f", "text", both(named("email"), label("Email address"), auto("username"))),
			in("n", "f", "text", both(named("first_name"), auto("given-name"))), in("l", "f", "text", both(named("last_name"), auto("family-name"))),
			at(txt("t", "Your password must contain at least"), 101, 100),
			in("pw", "f", "password", auto("current-password")), button("b", "f", "submit", "Continue")},
			"", "", ""},
		{"mylo: password rules and \"already have an account?\" make a sign-up", "", "https://a.example/signup", []Element{node(form("f"), 100),
			in("u", "f", "email", both(named("email"), auto("username"))), in("pw", "f", "password", auto("current-password")),
			at(txt("t", "contains at least 8 characters"), 101, 100), button("b", "f", "submit", ""),
			at(txt("a", "Already have an account?"), 102, 100)},
			"", "", ""},
		{"iqgunder: a guest entry at a login address is no first step", "", "https://a.example/access/login", []Element{
			txt("t", "Continue as a guest (recommended)"),
			{Ref: "f", Kind: "form", Action: "https://a.example/access/login", ActionOrigin: "https://a.example", Method: "get"},
			in("u", "f", "email", label("Email Address")), button("b", "f", "submit", "Submit")},
			"", "", ""},
		{"two bare password fields side by side are no twins", "", "", []Element{
			at(in("u", "", "email", nil), 10, 2, 1), at(in("pw", "", "password", nil), 20, 2, 1), at(in("p2", "", "password", nil), 20, 2, 1),
			at(button("b", "", "submit", "Continue"), 30, 2, 1)},
			"", "", ""},
		{"display name and password is no sign-in", "", "", []Element{form("f"),
			in("u", "f", "text", label("Display name")), in("pw", "f", "password", nil), button("b", "f", "submit", "Save")},
			"", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got *LoginForm
			lfs := LoginForms(Outline{Title: c.title, URL: c.url, Elements: c.els})
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
