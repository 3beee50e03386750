//go:build linux

package tests

// Issue 43: a sign-in form whose fields cannot take what would be typed is refused before the
// person is asked, with a code that says why. Found on the real-site corpus: kdocs.net's
// sign-in fields are disabled until a script of the site enables them, and the person was
// asked, approved, and the sign-in then failed with REF_STALE ("the element is no longer in
// the page", which it was); Deutsche Bank's and MUFG's account fields hold 2 and 7 characters,
// and the account was typed there cut, another account than the person's sent. Here:
//   - fields disabled for good: NOT_INTERACTABLE, nobody asked, nothing posted;
//   - fields the page enables a moment after it loads: waited for, and signed in;
//   - an account field whose maxlength is shorter than the account: NO_LOGIN_FORM naming the
//     lengths, nobody asked, nothing posted; one exactly as long as the account signs in. The
//     account holds a character outside the BMP, which a page counts as two (maxlength counts
//     UTF-16 code units): a maxlength of its count of characters is one short;
//   - a password field marked aria-disabled only (which the browser does not enforce): signed in;
//   - an interactive login (the person types the password at the terminal) is refused the same,
//     before anything is typed into the page.

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

func TestSignInFieldsItCannotType(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	book := newSiteBook(http.Cookie{Name: "ft_sid"})
	// 19 characters, 20 UTF-16 code units (a page's count), 22 bytes.
	const account = "staff\U0001F600@example.test"
	form := func(attrs, script string) string {
		return `<h1>Sign in</h1>
<form method="post" action="/login">
 <label>User <input name="user" ` + attrs + `></label>
 <label>Password <input type="password" name="pw" ` + strings.ReplaceAll(attrs, "maxlength", "data-x") + `></label>
 <button ` + strings.ReplaceAll(attrs, "maxlength", "data-x") + `>Sign in</button>
</form>` + script
	}
	mux := http.NewServeMux()
	pages := map[string]string{
		"/disabled": form(`disabled`, ""),
		"/late": form(`disabled`, `<script>
setTimeout(function () { document.querySelectorAll("input, button").forEach(function (x) { x.disabled = false; }); }, 700);
</script>`),
		"/short": form(`maxlength="2"`, ""),
		"/cut":   form(`maxlength="19"`, ""),
		"/fits":  form(`maxlength="20"`, ""),
		// (A field marked so is no account field to the detection: only the password here.)
		"/aria": `<h1>Sign in</h1>
<form method="post" action="/login">
 <label>User <input name="user"></label>
 <label>Password <input type="password" name="pw" aria-disabled="true"></label>
 <button aria-disabled="true">Sign in</button>
</form>`,
	}
	for path, body := range pages {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) { htmlPage(w, "Sign in", "", body) })
	}
	mux.HandleFunc("POST /login", book.formLogin("site", "/login", "user", "pw"))
	mux.HandleFunc("GET /home", book.home)
	mux.HandleFunc("GET /logout", func(w http.ResponseWriter, r *http.Request) {
		book.signOut(w, r)
		htmlPage(w, "Signed out", "", `<p>Signed out.</p>`)
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)

	pw := newCanary()
	book.SetAccount(account, pw)
	approve, approveLog := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, site.URL, "staff", account, pw)
	e.start(t)
	prompts := func() int { return len(presencetest.Prompts(t, approveLog)) }
	// open signs the session out and shows path.
	open := func(path string) {
		e.run("", "headless", "visit", site.URL+"/logout", "--json")
		if r := e.run("", "headless", "visit", site.URL+path, "--json"); r.code != 0 {
			t.Fatalf("visit %s: %+v", path, r)
		}
	}
	login := func(path string) result {
		open(path)
		return lsLogin(e, "--alias", "staff", "--new-login-path")
	}

	for _, c := range []struct {
		path, code, says string
	}{
		{"/disabled", "NOT_INTERACTABLE", "the sign-in form's password field is disabled"},
		{"/short", "NO_LOGIN_FORM", "holds at most 2 characters and the credential's account has 20"},
		{"/cut", "NO_LOGIN_FORM", "holds at most 19 characters and the credential's account has 20"},
	} {
		t.Run("refused before anyone is asked: "+c.path, func(t *testing.T) {
			n, posts := prompts(), len(book.Posts())
			r := login(c.path)
			if r.code == 0 || errCode(t, r) != c.code || !strings.Contains(r.stdout+r.stderr, c.says) {
				t.Fatalf("auth login on %s: %+v, want %s saying %q", c.path, r, c.code, c.says)
			}
			if prompts() != n {
				t.Errorf("the person was asked for a form that could not take the account or the password")
			}
			if p := book.Posts(); len(p) != posts {
				t.Errorf("something was posted: %v", p[posts:])
			}
		})
	}
	t.Run("an interactive login is refused the same", func(t *testing.T) {
		posts := len(book.Posts())
		open("/cut")
		r := e.runTTY(typed(account, pw), "headless", "auth", "login", "--interactive", "--json")
		if r.code == 0 || errCode(t, r) != "NO_LOGIN_FORM" || !strings.Contains(r.stdout, "holds at most 19 characters") {
			t.Fatalf("auth login --interactive on /cut: %+v, want NO_LOGIN_FORM", r)
		}
		if p := book.Posts(); len(p) != posts {
			t.Errorf("something was posted: %v", p[posts:])
		}
		noSecretIn(t, "interactive login on /cut", r, pw)
	})
	for _, path := range []string{"/late", "/fits", "/aria"} {
		t.Run("signed in: "+path, func(t *testing.T) {
			r := login(path)
			if r.code != 0 || !strings.Contains(r.stdout, `"status":"authenticated"`) {
				t.Fatalf("auth login on %s: %+v", path, r)
			}
			p := book.Posts()
			if len(p) == 0 || p[len(p)-1].Username != account || p[len(p)-1].Password != pw {
				t.Fatalf("the site did not get the whole account and the password: %d posts", len(p))
			}
		})
	}
}
