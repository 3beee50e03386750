//go:build linux

package tests

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// loginSite is the local site the alias-login tests sign in to: two httptest servers on
// loopback, so two origins (same host, different ports). The main server holds the login
// pages; the other one plays a partner or an attacker (a cross-origin iframe, a cross-origin
// form action). Both record every credential submission they receive and every "something
// was typed" report of their pages, so a test can tell what really reached them.
//
// Main server (origin Origin()):
//
//	GET  /login        username + password form, POST /login
//	POST /login        right password: 303 /home with a session cookie; wrong: the form again
//	                   with role=alert "Invalid credentials"
//	GET  /home         "Welcome ACCOUNT" when signed in (sets local and session storage)
//	GET  /step1        username-only form, POST /step1 → 303 /step2?u=ACCOUNT
//	GET  /step2        password-only form (same origin), POST /step2 → 303 /home or the form
//	                   again with the alert
//	GET  /spa          a script-driven login: the form posts JSON to /api/login with fetch and
//	                   shows the alert on failure, leaving the typed password in the field
//	GET  /hostile      no form of its own: only an iframe of the other origin's /frame
//	GET  /crossaction  a password form on this origin whose action is the other origin
//	GET  /shop …       the journey pages (journeysite_test.go)
//
// Other server (origin OtherOrigin()):
//
//	GET  /frame        a login form (posting to /frame-login on the other origin)
//	POST /frame-login, POST /collect   record what arrives
//
// Every form page reports each input event to its own server as /typed?f=NAME&n=LENGTH (the
// length only, never the value), so "nothing was typed" is checked even when nothing is
// submitted.
type loginSite struct {
	siteBook    // cookie login_sid; mu guards typed and stock too
	main, other *httptest.Server

	typed []string
	stock map[string]int // journey pages: units left per account (journeysite_test.go)
}

func newLoginSite(t testing.TB) *loginSite {
	ls := &loginSite{siteBook: newSiteBook(http.Cookie{Name: "login_sid", MaxAge: 86400})}
	ls.other = httptest.NewServer(ls.otherMux())
	t.Cleanup(ls.other.Close)
	ls.main = httptest.NewServer(ls.mainMux())
	t.Cleanup(ls.main.Close)
	return ls
}

// Origin is the main server's origin, http://127.0.0.1:PORT (loopback http is allowed).
func (ls *loginSite) Origin() string      { return ls.main.URL }
func (ls *loginSite) OtherOrigin() string { return ls.other.URL }
func (ls *loginSite) URL(path string) string {
	return ls.main.URL + path
}
func (ls *loginSite) OtherURL(path string) string { return ls.other.URL + path }

// Typed returns a copy of every input report received so far ("server field length").
func (ls *loginSite) Typed() []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return append([]string(nil), ls.typed...)
}

// lsReporter reports input events (field name and value length only) to the page's own server.
const lsReporter = `<script>
document.addEventListener("input", function (e) {
  var t = e.target;
  navigator.sendBeacon("/typed?f=" + encodeURIComponent(t.name || t.id || "?") + "&n=" + String((t.value || "").length));
}, true);
</script>`

// lsPage is a page of the login site: its stylesheet, and the input reporter.
func lsPage(w http.ResponseWriter, title, body string) {
	htmlPage(w, title, `<link rel="stylesheet" href="/app.css">`, body+lsReporter)
}

const lsAlertHTML = alertHTML

func lsLoginForm(action, alert string) string { return signInForm("Sign in to Example", action, alert) }

func (ls *loginSite) typedHandler(server string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, io.LimitReader(r.Body, 1<<10))
		q := r.URL.Query()
		ls.mu.Lock()
		ls.typed = append(ls.typed, server+" "+q.Get("f")+" "+q.Get("n"))
		ls.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}
}

func (ls *loginSite) mainMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /app.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fmt.Fprint(w, "body{font-family:sans-serif} [role=alert]{color:#a00}")
	})
	mux.HandleFunc("POST /typed", ls.typedHandler("main"))
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Sign in", lsLoginForm("/login", ""))
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		u, p := r.PostForm.Get("username"), r.PostForm.Get("password")
		ls.record(loginPost{"main", "/login", u, p})
		if !ls.check(u, p) {
			lsPage(w, "Sign in", lsLoginForm("/login", lsAlertHTML))
			return
		}
		ls.signIn(w, u)
		http.Redirect(w, r, "/home", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		a := ls.account(r)
		if a == "" {
			lsPage(w, "Example", `<h1>Not signed in</h1><a href="/login">Sign in</a>`)
			return
		}
		w.Header().Set("Cache-Control", "private, max-age=600")
		j, _ := json.Marshal(a)
		lsPage(w, "Example home", `<h1>Welcome `+html.EscapeString(a)+`</h1><p>You are signed in.</p>
<script>localStorage.setItem("last_user", `+string(j)+`); sessionStorage.setItem("signed_in", "yes");</script>`)
	})
	mux.HandleFunc("GET /step1", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Sign in", `<h1>Sign in, step 1 of 2</h1>
<form method="post" action="/step1">
 <label>Email <input type="email" name="username" autocomplete="username"></label>
 <button type="submit">Next</button>
</form>`)
	})
	mux.HandleFunc("POST /step1", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		u := r.PostForm.Get("username")
		ls.record(loginPost{"main", "/step1", u, r.PostForm.Get("password")})
		http.Redirect(w, r, "/step2?u="+url.QueryEscape(u), http.StatusSeeOther)
	})
	step2 := func(w http.ResponseWriter, u, alert string) {
		lsPage(w, "Sign in", alert+`<h1>Sign in, step 2 of 2</h1><p>Signing in as `+html.EscapeString(u)+`</p>
<form method="post" action="/step2">
 <input type="hidden" name="username" value="`+html.EscapeString(u)+`">
 <label>Password <input type="password" name="password" autocomplete="current-password"></label>
 <button type="submit">Sign in</button>
</form>`)
	}
	mux.HandleFunc("GET /step2", func(w http.ResponseWriter, r *http.Request) {
		step2(w, r.URL.Query().Get("u"), "")
	})
	mux.HandleFunc("POST /step2", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		u, p := r.PostForm.Get("username"), r.PostForm.Get("password")
		ls.record(loginPost{"main", "/step2", u, p})
		if !ls.check(u, p) {
			step2(w, u, lsAlertHTML)
			return
		}
		ls.signIn(w, u)
		http.Redirect(w, r, "/home", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /spa", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Sign in", `<h1>Sign in (app)</h1><div id="msg"></div>
<form id="f" method="post" action="/spa">
 <label>Email <input type="email" name="username" autocomplete="username"></label>
 <label>Password <input type="password" name="password" autocomplete="current-password"></label>
 <button type="submit">Sign in</button>
</form>
<script>
document.getElementById("f").addEventListener("submit", function (ev) {
  ev.preventDefault();
  var f = ev.target;
  fetch("/api/login", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({username: f.username.value, password: f.password.value})})
  .then(function (r) { return r.json(); })
  .then(function (j) {
    if (j.ok) { location.href = "/home"; return; }
    document.getElementById("msg").innerHTML = '<p role="alert">Invalid credentials</p>';
  });
});
</script>`)
	})
	mux.HandleFunc("POST /api/login", ls.apiLogin("main"))
	mux.HandleFunc("GET /hostile", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Partner portal", `<h1>Partner portal</h1><p>Sign in below to continue.</p>
<iframe src="`+ls.other.URL+`/frame" width="600" height="320" title="sign in"></iframe>`)
	})
	mux.HandleFunc("GET /crossaction", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Sign in", lsLoginForm(ls.other.URL+"/collect", ""))
	})
	ls.journeyRoutes(mux) // journeysite_test.go
	return mux
}

func (ls *loginSite) otherMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /typed", ls.typedHandler("other"))
	mux.HandleFunc("GET /app.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, "body{margin:0}")
	})
	mux.HandleFunc("GET /frame", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Sign in", lsLoginForm("/frame-login", ""))
	})
	for _, p := range []string{"/frame-login", "/collect"} {
		mux.HandleFunc("POST "+p, func(w http.ResponseWriter, r *http.Request) {
			r.ParseForm()
			ls.record(loginPost{"other", p, r.PostForm.Get("username"), r.PostForm.Get("password")})
			lsPage(w, "Thanks", `<p>Thanks</p>`)
		})
	}
	return mux
}
