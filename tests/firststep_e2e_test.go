//go:build linux

package tests

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// TestFirstStepErrorShownBefore: a two-step sign-in whose e-mail step shows an error text
// from the start (a template the page keeps on screen, as hindustantimes' "Incorrect OTP*"
// beside its e-mail field) is not answered by that text: the step goes on to the password
// page, typed there and signed in. An error the page shows only after the step (an unknown
// e-mail) still ends the sign-in with NO_LOGIN_FORM, nothing typed but the account.
func TestFirstStepErrorShownBefore(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	book := newSiteBook(http.Cookie{Name: "fs_sid"})
	const account = "reader@example.test"
	// step is the e-mail step: the page's script sends the account with fetch and, a moment
	// later (a busy single-page app), goes to the password page or shows the site's error.
	step := func(shownBefore string) string {
		return `<h1>Sign in</h1>
<form id="f" method="post" action="/step"><label>Email <input type="email" name="email" autocomplete="username"></label>
 <p class="err">` + shownBefore + `</p>
 <button type="submit">Continue</button></form>
<script>
document.getElementById("f").addEventListener("submit", function (ev) {
  ev.preventDefault();
  var f = this;
  fetch("/step", {method: "POST", body: new URLSearchParams({email: f.email.value})}).then(function (r) { return r.text(); }).then(function (next) {
    setTimeout(function () {
      if (next === "unknown") {
        var p = document.createElement("p");
        p.setAttribute("role", "alert");
        p.textContent = "Invalid e-mail address, try again";
        f.prepend(p);
        return;
      }
      location.assign(next);
    }, 800);
  });
});
</script>`
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Sign in", "", step("Incorrect OTP*"))
	})
	mux.HandleFunc("GET /login-unknown", func(w http.ResponseWriter, r *http.Request) { htmlPage(w, "Sign in", "", step("")) })
	mux.HandleFunc("POST /step", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		u := r.PostForm.Get("email")
		book.record(loginPost{"site", "/step", u, ""})
		if strings.Contains(r.Referer(), "/login-unknown") {
			w.Write([]byte("unknown"))
			return
		}
		w.Write([]byte("/password"))
	})
	mux.HandleFunc("GET /password", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Sign in", "", `<h1>Enter your password</h1>
<form method="post" action="/password"><label>Password <input type="password" name="password" autocomplete="current-password"></label>
 <button type="submit">Sign in</button></form>`)
	})
	mux.HandleFunc("POST /password", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		p := r.PostForm.Get("password")
		book.record(loginPost{"site", "/password", "", p})
		book.answer(w, r, account, p)
	})
	mux.HandleFunc("GET /home", book.home)
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)

	pw := newCanary()
	book.SetAccount(account, pw)
	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, site.URL, "reader", account, pw)
	e.start(t)

	t.Run("an error shown before the step", func(t *testing.T) {
		n := len(book.Posts())
		lsVisit(t, e, site.URL+"/login")
		lsLoginOK(t, e, "authenticated", "--alias", "reader", "--new-login-path")
		if got := book.Posts()[n:]; len(got) != 2 || got[0] != (loginPost{"site", "/step", account, ""}) || got[1] != (loginPost{"site", "/password", "", pw}) {
			t.Errorf("the site got %+v, want the account at /step, then the password at /password", got)
		}
	})
	t.Run("an error shown after the step", func(t *testing.T) {
		n := len(book.Posts())
		lsVisit(t, e, site.URL+"/login-unknown")
		r := e.run("", "headless", "auth", "login", "--alias", "reader", "--new-login-path", "--json")
		if r.code == 0 || errCode(t, r) != "NO_LOGIN_FORM" || !strings.Contains(r.stdout, "answered the first login step with an error") {
			t.Errorf("auth login on an unknown e-mail: %+v, want NO_LOGIN_FORM (the site answered the first step with an error)", r)
		}
		if got := book.Posts()[n:]; len(got) != 1 || got[0] != (loginPost{"site", "/step", account, ""}) {
			t.Errorf("the site got %+v, want the account at /step only", got)
		}
		if strings.Contains(r.stdout+r.stderr, pw) {
			t.Errorf("the password in auth login's answer")
		}
	})
}
