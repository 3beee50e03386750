//go:build linux

package tests

// Issue 27: what the site sends back. A hostile agent, with only headless's verbs and a person
// approving every prompt, signs in on a site that echoes what it received — in the failure
// page's text and error alert, a text field's value, a hidden input, the page after a
// successful sign-in (as typed, URL-encoded, JSON-escaped), a settings page that shows the
// password, a code step's rejection of the one-time code, and a debug page behind HTTP Basic
// that prints the request's headers — and then reads every output it can. Each must answer
// SECRET_ON_PAGE (the page discarded, the echo audited) and carry no encoding of the secret.

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/journey"
	"github.com/headless-dev/headless/internal/totp"
)

// echoSite is a staging site that says back what it was sent. The mode cookie (set by GET
// /mode?m=…) picks how POST /login answers; /profile shows the password of whoever is signed
// in; /verify rejects every code by quoting it; /debug/headers is behind HTTP Basic and prints
// the request's headers and the decoded credentials.
type echoSite struct {
	*httptest.Server
	siteBook // cookie sid; mu guards keys and codes too
	keys     map[string]*totp.Key
	codes    []string // every one-time code received
	basic    string   // the Basic account
}

// postCount is how many sign-in posts the site received.
func (s *echoSite) postCount() int { return len(s.Posts()) }

func newEchoSite(t testing.TB) *echoSite {
	s := &echoSite{siteBook: newSiteBook(http.Cookie{Name: "sid"}), keys: map[string]*totp.Key{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /app.css", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Content-Type", "text/css") })
	mux.HandleFunc("POST /typed", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /mode", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "mode", Value: r.URL.Query().Get("m"), Path: "/"})
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) { lsPage(w, "Sign in", lsLoginForm("/login", "")) })
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		u, p := r.PostForm.Get("username"), r.PostForm.Get("password")
		mode := ""
		if c, err := r.Cookie("mode"); err == nil {
			mode = c.Value
		}
		s.record(loginPost{"main", "/login", u, p})
		s.mu.Lock()
		want, ok := s.accounts[u]
		_, twoFactor := s.keys[u]
		s.mu.Unlock()
		good := ok && subtle.ConstantTimeCompare([]byte(want), []byte(p)) == 1
		esc := html.EscapeString(p)
		switch {
		case mode == "fail-text": // the alert quotes it: auth login's error_text would too
			lsPage(w, "Sign in", lsLoginForm("/login", `<p role="alert">Wrong password "`+esc+`" for `+html.EscapeString(u)+`</p>`))
		case mode == "fail-value":
			lsPage(w, "Sign in", lsLoginForm("/login", `<p role="alert">Invalid credentials</p><label>You typed <input type="text" name="shown" value="`+esc+`"></label>`))
		case mode == "fail-hidden":
			lsPage(w, "Sign in", lsLoginForm("/login", `<p role="alert">Invalid credentials</p><input type="hidden" name="retry" value="`+esc+`">`))
		case !good:
			lsPage(w, "Sign in", lsLoginForm("/login", lsAlertHTML))
		case twoFactor:
			s.signIn(w, u)
			http.Redirect(w, r, "/verify", http.StatusSeeOther)
		case mode == "ok-text":
			s.signIn(w, u)
			lsPage(w, "Welcome", "<h1>Welcome</h1><p>Debug: received password "+esc+"</p>")
		case mode == "ok-json":
			j, _ := json.Marshal(map[string]string{"user": u, "password": p})
			s.signIn(w, u)
			lsPage(w, "Welcome", "<h1>Welcome</h1><pre>"+html.EscapeString(string(j))+"</pre>")
		case mode == "ok-urlencoded":
			s.signIn(w, u)
			lsPage(w, "Welcome", "<h1>Welcome</h1><p>Request body: "+html.EscapeString(r.PostForm.Encode())+"</p>")
		default:
			s.signIn(w, u)
			http.Redirect(w, r, "/home", http.StatusSeeOther)
		}
	})
	mux.HandleFunc("GET /logout", func(w http.ResponseWriter, r *http.Request) {
		s.signOut(w, r)
		lsPage(w, "Signed out", "<h1>Signed out</h1>")
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Home", "<h1>Welcome home</h1><p>You are signed in.</p>")
	})
	mux.HandleFunc("GET /profile", func(w http.ResponseWriter, r *http.Request) {
		u := s.account(r)
		s.mu.Lock()
		p := s.accounts[u]
		s.mu.Unlock()
		if u == "" {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		lsPage(w, "Profile", "<h1>Your account</h1><p>Your password is <b>"+html.EscapeString(p)+"</b></p>")
	})
	mux.HandleFunc("GET /profile-late", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Profile", `<h1>Your account</h1><p id="pw">loading…</p>
<script>setTimeout(function () { fetch("/profile.txt").then(function (r) { return r.text(); }).then(function (t) { document.getElementById("pw").textContent = "Your password is " + t; }); }, 700);</script>`)
	})
	mux.HandleFunc("GET /profile.txt", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		p := s.accounts[s.accountLocked(r)]
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, p)
	})
	verifyForm := func(alert string) string {
		return alert + `<h1>Enter your verification code</h1>
<form method="post" action="/verify">
 <label>Code from your authenticator app <input type="text" name="otp" autocomplete="one-time-code" inputmode="numeric" maxlength="6"></label>
 <button type="submit">Verify</button>
</form>`
	}
	mux.HandleFunc("GET /verify", func(w http.ResponseWriter, r *http.Request) { lsPage(w, "Verification", verifyForm("")) })
	mux.HandleFunc("POST /verify", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		c := r.PostForm.Get("otp")
		s.mu.Lock()
		s.codes = append(s.codes, c)
		s.mu.Unlock()
		lsPage(w, "Verification", verifyForm(`<p role="alert">The code `+html.EscapeString(c)+` is not valid</p>`))
	})
	mux.HandleFunc("GET /debug/headers", func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		s.mu.Lock()
		good := ok && u == s.basic && s.accounts[u] == p
		s.mu.Unlock()
		if !good {
			w.Header().Set("WWW-Authenticate", `Basic realm="staging"`)
			w.WriteHeader(http.StatusUnauthorized)
			lsPage(w, "Unauthorized", "<h1>401 Unauthorized</h1>")
			return
		}
		var b strings.Builder
		for k, v := range r.Header {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td></tr>", html.EscapeString(k), html.EscapeString(strings.Join(v, ", ")))
		}
		lsPage(w, "Request headers", "<h1>Request headers</h1><table>"+b.String()+"</table><p>PHP_AUTH_USER "+html.EscapeString(u)+" PHP_AUTH_PW "+html.EscapeString(p)+"</p>")
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestSiteEchoes(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	site := newEchoSite(t)
	const account, mfaAccount = "alice@example.test", "bob@example.test"
	pw, mfaPW := newCanary(), newCanary()
	key, seedB32 := newSeed(t)
	site.mu.Lock()
	site.accounts[account], site.accounts[mfaAccount], site.keys[mfaAccount], site.basic = pw, mfaPW, key, account
	site.mu.Unlock()
	approve, approveLog := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, site.URL, "main", account, pw)
	mfaEnroll(t, e, site.URL, "mfa", mfaAccount, mfaPW, seedB32, "--login-path", "/login", "--login-path", "/verify")
	e.start(t)

	var needles []lsNeedle
	for _, sec := range []struct{ label, s string }{{"password", pw}, {"mfa password", mfaPW}} {
		needles = append(needles, lsNeedles(sec.label, sec.s)...)
	}
	basic := base64.StdEncoding.EncodeToString([]byte(account + ":" + pw))
	needles = append(needles, lsNeedle{"Basic header", []byte(basic)}, lsNeedle{"Basic header (JSON)", []byte(strings.TrimSuffix(basic, "="))})
	sees := func(t *testing.T, where, text string) {
		t.Helper()
		for _, n := range needles {
			if strings.Contains(text, string(n.b)) {
				t.Errorf("LEAK: %s in %s", n.name, where)
			}
		}
	}
	run := func(t *testing.T, args ...string) result {
		t.Helper()
		r := e.run("", "headless", withJSON(args)...)
		sees(t, "headless "+strings.Join(args, " "), r.stdout+r.stderr)
		return r
	}
	// refused: the command must answer SECRET_ON_PAGE, with the one fixed message.
	refused := func(t *testing.T, args ...string) {
		t.Helper()
		r := run(t, args...)
		if r.code == 0 || errCode(t, r) != "SECRET_ON_PAGE" || !strings.Contains(r.stdout+r.stderr, "released into the browser") {
			t.Fatalf("headless %v: want SECRET_ON_PAGE for a page that shows the secret: %+v", args, r)
		}
	}
	// discarded: the session shows a blank page now, and every output works again.
	discarded := func(t *testing.T) {
		t.Helper()
		r := run(t, "snapshot")
		var o outline
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &o) != nil || o.URL != "about:blank" {
			t.Fatalf("after an echo the page is not discarded: %+v", r)
		}
		if r := run(t, "screenshot"); r.code != 0 {
			t.Fatalf("screenshot of the blank page: %+v", r)
		}
	}
	echoAudits := func() int {
		b, _ := os.ReadFile(filepath.Join(e.root, "data", "headless", "audit.jsonl"))
		return strings.Count(string(b), `"op":"echo"`)
	}
	login := func(t *testing.T, mode, alias string) result {
		t.Helper()
		e.run("", "headless", "visit", site.URL+"/logout", "--json")
		run(t, "visit", site.URL+"/mode?m="+mode)
		return run(t, "auth", "login", "--alias", alias)
	}

	// Before anything was released the scan finds nothing: a page that holds the password's
	// text is an ordinary page (nothing to compare it with).
	for _, mode := range []string{"fail-text", "fail-value", "fail-hidden", "ok-text", "ok-json", "ok-urlencoded"} {
		t.Run(mode, func(t *testing.T) {
			audits := echoAudits()
			r := login(t, mode, "main")
			if r.code == 0 || errCode(t, r) != "SECRET_ON_PAGE" {
				t.Fatalf("auth login on a page that echoes the password (%s): %+v", mode, r)
			}
			if echoAudits() != audits+1 {
				t.Errorf("the echo was not audited (%d echo records, want %d)", echoAudits(), audits+1)
			}
			discarded(t)
		})
	}

	t.Run("signed-in page shows it", func(t *testing.T) {
		if r := login(t, "ok", "main"); r.code != 0 || !strings.Contains(r.stdout, `"authenticated"`) {
			t.Fatalf("a plain sign-in: %+v", r)
		}
		// The page that shows the password at once: its visit is refused (the look for a
		// sign-in form finds it), and the page discarded.
		refused(t, "visit", site.URL+"/profile")
		discarded(t)
		// A page that shows it a moment after it loaded (fetched by its script): the visit
		// answers, and then every output of it is refused, each time discarding the page.
		for _, args := range [][]string{
			{"snapshot"},
			{"wait", "--text", "Your password", "--timeout", "5s"},
			{"screenshot"},
			{"screenshot", "--full-page"},
		} {
			if r := run(t, "visit", site.URL+"/profile-late"); r.code != 0 {
				t.Fatalf("visit /profile-late: %+v", r)
			}
			if args[0] != "wait" {
				time.Sleep(1500 * time.Millisecond)
			}
			refused(t, args...)
			discarded(t)
		}
		// A journey in the signed-in session that looks at it: it cannot look.
		rep, r := e.runJourney(t, jPlan{"journey_id": "echo", "origin": site.URL, "path": "/profile", "session": "default",
			"expected_states": []any{map[string]any{"id": "profile", "expected": "the account page"}},
			"actions":         []any{jAction("kind", "assert", "state_id", "profile", "role", "heading", "name", "Your account", "assertion", "visible")}})
		sees(t, "journey run", r.stdout+r.stderr)
		b, _ := json.Marshal(rep)
		sees(t, "journey report", string(b))
		if rep.Status == journey.StatusPassed || !strings.Contains(r.stdout+r.stderr, "SECRET_ON_PAGE") {
			t.Errorf("a journey on the page that shows the password: status %q, %+v", rep.Status, r)
		}
	})

	t.Run("code step", func(t *testing.T) {
		r := login(t, "ok", "mfa")
		site.mu.Lock()
		codes := append([]string(nil), site.codes...)
		site.mu.Unlock()
		if len(codes) == 0 {
			t.Fatalf("no code reached the site: %+v", r)
		}
		for _, c := range codes {
			if strings.Contains(r.stdout+r.stderr, c) {
				t.Errorf("LEAK: the one-time code %s in auth login's answer", c)
			}
			needles = append(needles, lsNeedle{"one-time code", []byte(c)})
		}
		if r.code == 0 || errCode(t, r) != "SECRET_ON_PAGE" {
			t.Fatalf("auth login on a code step that quotes the code: %+v", r)
		}
		discarded(t)
	})

	t.Run("basic with a header-echo page", func(t *testing.T) {
		target := site.URL + "/debug/headers?dump=all&x=1"
		p := lsVisit(t, e, target)
		if p.AuthRequired == nil {
			t.Fatalf("no auth_required on the Basic-protected page: %+v", p)
		}
		before := len(presencetest.Prompts(t, approveLog))
		refused(t, "auth", "login", "--alias", "main", "--challenge", p.AuthRequired.Challenge)
		prompts := presencetest.Prompts(t, approveLog)
		if len(prompts) != before+1 || !strings.Contains(prompts[len(prompts)-1], "/debug/headers?dump=all&x=1") {
			t.Fatalf("the Basic prompt does not show the path and query its header goes to: %q", prompts[before:])
		}
		discarded(t)
	})

	// Everything the agent could read, and the disk after a graceful stop.
	e.ok(t, nil, "stop")
	sweep := &lsSweep{t: t, needles: needles, files: map[string]int{}, seen: map[string]bool{}}
	sweep.search("every CLI output", []byte(e.allOutput()))
	sweep.search("the pinentry's log", mustRead(t, approveLog))
	sweep.tree("runtime dir after stop", e.runDir())
	sweep.tree("data dir after stop", filepath.Join(e.root, "data", "headless"))
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
