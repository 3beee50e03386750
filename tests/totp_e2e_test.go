//go:build linux

package tests

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/totp"
)

// mfaSite is a local site whose sign-in asks for a TOTP code after the password, for accounts
// that have a seed:
//
//	GET  /login   username + password (POST /login)
//	POST /login   right password: a seed-less account is signed in (303 /home); one with a
//	              seed gets a pending cookie and 303 /verify; wrong: the form with an alert
//	GET  /verify  "Two-factor verification": one input (autocomplete=one-time-code,
//	              inputmode=numeric, maxlength 6), POST /verify
//	POST /verify  the current code (±1 period): signed in, 303 /home; else the page again
//	              with role=alert "Invalid code"
//	GET  /home    "Welcome ACCOUNT" when signed in
//	GET  /logout  ends the session
type mfaSite struct {
	*httptest.Server
	siteBook                      // cookie mfa_sid; mu guards the fields below too
	keys     map[string]*totp.Key // account → seed (none: no second step)
	pending  map[string]string    // pending cookie → account
	codes    []string             // every code received at /verify
	stepups  []string             // every code received at /stepup
	typed    []string             // input reports (field and length)
}

// spaPage is the body of /spa.
const spaPage = `<div id="alert"></div><h1>Sign in to Example</h1>
<form method="post" action="/spa/login" id="pwform">
 <label>Email <input type="email" name="username" autocomplete="username"></label>
 <label>Password <input type="password" name="password" autocomplete="current-password"></label>
 <button type="submit">Sign in</button>
</form>
<form method="post" action="/spa/verify" id="codeform" style="display:none">
 <h2>Enter your verification code</h2>
 <label>Code from your authenticator app <input type="text" name="otp" autocomplete="one-time-code" inputmode="numeric" maxlength="6"></label>
 <button type="submit">Verify</button>
</form>
<script>
const post = (f) => fetch(f.action, {method: "POST", body: new URLSearchParams(new FormData(f))}).then(r => r.text());
const alertMsg = (t) => { document.getElementById("alert").innerHTML = '<p role="alert">' + t + '</p>'; };
document.getElementById("pwform").addEventListener("submit", (e) => {
  e.preventDefault();
  post(e.target).then(t => {
    if (t === "code") {
      e.target.style.display = "none";
      e.target.reset();
      document.getElementById("codeform").style.display = "block";
    } else if (t === "ok") { location.href = "/home"; } else { alertMsg("Invalid credentials"); }
  });
});
document.getElementById("codeform").addEventListener("submit", (e) => {
  e.preventDefault();
  post(e.target).then(t => { if (t === "ok") { location.href = "/home"; } else { alertMsg("Invalid code"); } });
});
</script>`

func newMFASite(t testing.TB) *mfaSite {
	s := &mfaSite{siteBook: newSiteBook(http.Cookie{Name: "mfa_sid"}), keys: map[string]*totp.Key{}, pending: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /typed", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, io.LimitReader(r.Body, 1<<10))
		s.mu.Lock()
		s.typed = append(s.typed, r.URL.Query().Get("f")+" "+r.URL.Query().Get("n"))
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /app.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, "body{font-family:sans-serif}")
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) { lsPage(w, "Sign in", lsLoginForm("/login", "")) })
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		u, p := r.PostForm.Get("username"), r.PostForm.Get("password")
		s.record(loginPost{"main", "/login", u, p})
		s.mu.Lock()
		want, ok := s.accounts[u]
		_, hasKey := s.keys[u]
		s.mu.Unlock()
		if !ok || want != p {
			lsPage(w, "Sign in", lsLoginForm("/login", lsAlertHTML))
			return
		}
		if !hasKey {
			s.signIn(w, u)
			http.Redirect(w, r, "/home", http.StatusSeeOther)
			return
		}
		tok := rand.Text()
		s.mu.Lock()
		s.pending[tok] = u
		s.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "mfa_pending", Value: tok, Path: "/", HttpOnly: true})
		http.Redirect(w, r, "/verify", http.StatusSeeOther)
	})
	verifyPage := func(w http.ResponseWriter, alert string) {
		lsPage(w, "Two-factor verification", alert+`<h1>Enter your verification code</h1>
<form method="post" action="/verify">
 <label>Code from your authenticator app <input type="text" name="otp" autocomplete="one-time-code" inputmode="numeric" maxlength="6"></label>
 <button type="submit">Verify</button>
</form>`)
	}
	mux.HandleFunc("GET /verify", func(w http.ResponseWriter, r *http.Request) {
		if s.pendingOf(r) == "" {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		verifyPage(w, "")
	})
	mux.HandleFunc("POST /verify", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		u, code := s.pendingOf(r), r.PostForm.Get("otp")
		s.mu.Lock()
		s.codes = append(s.codes, code)
		k := s.keys[u]
		s.mu.Unlock()
		if u == "" || k == nil {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		now := time.Now()
		for _, d := range []time.Duration{0, -30 * time.Second, 30 * time.Second} {
			if string(k.AppendCode(nil, now.Add(d))) == code {
				s.signIn(w, u)
				http.Redirect(w, r, "/home", http.StatusSeeOther)
				return
			}
		}
		verifyPage(w, `<p role="alert" id="error">Invalid code</p>`)
	})
	// Step-up: a signed-in page that asks for a fresh code before the admin area.
	mux.HandleFunc("GET /stepup", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Verify it's you", `<h1>Enter your verification code</h1>
<form method="post" action="/stepup">
 <label>Code <input type="text" name="otp" autocomplete="one-time-code" inputmode="numeric" maxlength="6"></label>
 <button type="submit">Continue</button>
</form>`)
	})
	mux.HandleFunc("POST /stepup", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		code := r.PostForm.Get("otp")
		s.mu.Lock()
		s.stepups = append(s.stepups, code)
		k := s.keys[s.accountLocked(r)]
		s.mu.Unlock()
		if k != nil {
			for _, d := range []time.Duration{0, -30 * time.Second, 30 * time.Second} {
				if string(k.AppendCode(nil, time.Now().Add(d))) == code {
					lsPage(w, "Admin", "<h1>Admin area</h1>")
					return
				}
			}
		}
		lsPage(w, "Verify it's you", `<p role="alert">Invalid code</p>`)
	})
	// The same sign-in as a single-page app: /spa shows the password form; its submit is a
	// fetch (POST /spa/login), after which the same document hides it and shows the code form
	// (no navigation); the code's submit is a fetch too (POST /spa/verify), then /home.
	// /spa?slow=1: the site answers the password 2.5 s later (an identity provider taking its
	// time). /spa?both=1: the code form is shown beside the password from the start.
	mux.HandleFunc("GET /spa", func(w http.ResponseWriter, r *http.Request) {
		page := spaPage
		if r.URL.Query().Get("slow") != "" {
			page = strings.Replace(page, `action="/spa/login"`, `action="/spa/login?slow=1"`, 1)
		}
		if r.URL.Query().Get("both") != "" {
			page = strings.Replace(page, `id="codeform" style="display:none"`, `id="codeform"`, 1)
		}
		lsPage(w, "Sign in", page)
	})
	mux.HandleFunc("POST /spa/login", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("slow") != "" {
			time.Sleep(2500 * time.Millisecond)
		}
		r.ParseForm()
		u, p := r.PostForm.Get("username"), r.PostForm.Get("password")
		s.record(loginPost{"main", "/spa/login", u, p})
		s.mu.Lock()
		want, ok := s.accounts[u]
		_, hasKey := s.keys[u]
		s.mu.Unlock()
		switch {
		case !ok || want != p:
			fmt.Fprint(w, "invalid")
		case !hasKey:
			s.signIn(w, u)
			fmt.Fprint(w, "ok")
		default:
			tok := rand.Text()
			s.mu.Lock()
			s.pending[tok] = u
			s.mu.Unlock()
			http.SetCookie(w, &http.Cookie{Name: "mfa_pending", Value: tok, Path: "/", HttpOnly: true})
			fmt.Fprint(w, "code")
		}
	})
	mux.HandleFunc("POST /spa/verify", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		u, code := s.pendingOf(r), r.PostForm.Get("otp")
		s.mu.Lock()
		s.codes = append(s.codes, code)
		k := s.keys[u]
		s.mu.Unlock()
		if k != nil {
			for _, d := range []time.Duration{0, -30 * time.Second, 30 * time.Second} {
				if string(k.AppendCode(nil, time.Now().Add(d))) == code {
					s.signIn(w, u)
					fmt.Fprint(w, "ok")
					return
				}
			}
		}
		fmt.Fprint(w, "invalid")
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		a := s.account(r)
		if a == "" {
			lsPage(w, "Example", `<h1>Not signed in</h1><a href="/login">Sign in</a>`)
			return
		}
		lsPage(w, "Example", "<h1>Welcome "+a+"</h1>")
	})
	mux.HandleFunc("GET /logout", func(w http.ResponseWriter, r *http.Request) {
		s.signOut(w, r)
		lsPage(w, "Example", "<h1>Signed out</h1>")
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *mfaSite) pendingOf(r *http.Request) string {
	c, err := r.Cookie("mfa_pending")
	if err != nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending[c.Value]
}

func (s *mfaSite) stepupCodes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.stepups...)
}

// received is every code, credential post ("path account") and input report so far.
func (s *mfaSite) received() (codes, posts, typed []string) {
	for _, p := range s.Posts() {
		posts = append(posts, p.Path+" "+p.Username)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.codes...), posts, append([]string(nil), s.typed...)
}

// newSeed returns a random 20-byte seed and its base32 form.
func newSeed(t testing.TB) (*totp.Key, string) {
	seed := make([]byte, 20)
	rand.Read(seed)
	k := &totp.Key{Seed: seed, Algorithm: totp.SHA1, Digits: 6, Period: 30}
	return k, base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(seed)
}

// mfaEnroll enrolls through the CLI on a real pty: the password twice, then (with uri) the seed.
func mfaEnroll(t testing.TB, e *env, origin, alias, account, password, uri string, extra ...string) {
	t.Helper()
	steps := []step{{"Password for", password + "\n"}, {"Repeat the password", password + "\n"}}
	args := append([]string{"credentials", "add", "--origin", origin, "--account", account, "--alias", alias, "--json"}, extra...)
	if uri != "" {
		steps = append(steps, step{"TOTP seed", uri + "\n"})
		args = append(args, "--totp")
	}
	r := e.runTTY(steps, "headless", args...)
	if r.code != 0 || !strings.Contains(r.stdout, `"alias":"`+alias+`"`) || (uri != "") != strings.Contains(r.stdout, `"totp":true`) {
		t.Fatalf("credentials add %s: %+v", alias, r)
	}
}

// TestTOTPLogin: a credential with a TOTP seed signs in through the site's code step under
// one approval whose prompt says "password and one-time code"; a wrong seed is "failed"; a
// denial types nothing; neither the seed nor any code appears on any agent surface, in the
// host's or brokerd's files or in the pinentry's log. It also measures the sign-in latency
// with the code step against the same site's password-only sign-in, in the same run.
func TestTOTPLogin(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	site := newMFASite(t)
	key, seedB32 := newSeed(t)
	_, wrongB32 := newSeed(t)
	otpPW, plainPW := newCanary(), newCanary()
	site.SetAccount("otp@example.test", otpPW)
	site.SetAccount("plain@example.test", plainPW)
	site.mu.Lock()
	site.keys["otp@example.test"] = key
	site.mu.Unlock()
	approve, approveLog := presencetest.FakePinentry(t, "approve")
	deny, denyLog := presencetest.FakePinentry(t, "deny")
	lsPresence(e, approve, 5)
	// The site's code page is one of the credential's sign-in paths: the code released with
	// the password is typed there without asking again (elsewhere: CODE_PATH_UNKNOWN, below).
	paths := []string{"--login-path", "/login", "--login-path", "/verify", "--login-path", "/spa"}
	mfaEnroll(t, e, site.URL, "otp", "otp@example.test", otpPW, "otpauth://totp/Example:otp@example.test?secret="+seedB32+"&issuer=Example", paths...)
	mfaEnroll(t, e, site.URL, "badseed", "otp@example.test", otpPW, wrongB32, paths...)
	mfaEnroll(t, e, site.URL, "nocodepath", "otp@example.test", otpPW, seedB32)
	mfaEnroll(t, e, site.URL, "plain", "plain@example.test", plainPW, "")
	e.start(t)

	// credentials list: that a second factor exists, nothing more.
	r := e.run("", "headless", "credentials", "list", "--origin", site.URL)
	if r.code != 0 || !strings.Contains(r.stdout, "KIND") || strings.Count(r.stdout, "totp") != 3 {
		t.Fatalf("credentials list: %+v", r)
	}

	login := func(t *testing.T, alias, want string) (lsAuth, time.Duration) {
		t.Helper()
		start := time.Now()
		p := lsVisit(t, e, site.URL+"/login")
		if p.AuthRequired == nil {
			t.Fatal("no auth_required on the login page")
		}
		a := lsLoginOK(t, e, want, "--challenge", p.AuthRequired.Challenge, "--alias", alias)
		d := time.Since(start)
		e.run("", "headless", "visit", site.URL+"/logout", "--json")
		return a, d
	}

	t.Run("success", func(t *testing.T) {
		before, _, _ := site.received()
		a, _ := login(t, "otp", "authenticated")
		codes, _, _ := site.received()
		if len(codes) != len(before)+1 {
			t.Fatalf("the site received %d codes, want one", len(codes)-len(before))
		}
		if a.Evidence["code_typed"] != true {
			t.Fatalf("evidence %v: the code step is not reported", a.Evidence)
		}
		prompts := strings.Join(presencetest.Prompts(t, approveLog), "\n")
		if !strings.Contains(prompts, "password and one-time code") {
			t.Fatalf("the prompt does not say the code is released: %s", prompts)
		}
	})
	// Red-team round 5: after a sign-in whose code step succeeded, Blink kept the code field's
	// value in the /verify history entry's form state: a back step restored it into a
	// document the taint did not know (a screenshot showed the code), and Chromium wrote it
	// into the profile's Sessions/ files. The host marks every field it types a secret into
	// autocomplete=off first, so nothing of it is saved.
	t.Run("no code kept in history", func(t *testing.T) {
		before, _, _ := site.received()
		p := lsVisit(t, e, site.URL+"/login")
		lsLoginOK(t, e, "authenticated", "--challenge", p.AuthRequired.Challenge, "--alias", "otp")
		codes, _, _ := site.received()
		if len(codes) != len(before)+1 {
			t.Fatalf("the site received %d codes, want one", len(codes)-len(before))
		}
		code := codes[len(codes)-1]
		if r := e.run("", "headless", "back", "--json"); r.code != 0 || !strings.Contains(r.stdout, "/verify") {
			t.Fatalf("back: %+v", r)
		}
		// The agent may look at the page now: no snapshot shows the code, and a screenshot
		// is allowed (not SECRET_ON_PAGE) because the field holds nothing.
		if r := e.run("", "headless", "snapshot", "--json"); r.code != 0 || strings.Contains(r.stdout, code) {
			t.Fatalf("snapshot after back: %+v", r)
		}
		// Step-up: the site answers the code's POST with 200 in place, so its history entry
		// holds the body (otp=…) until the host rewrites it (red-team round 5b read it from
		// the session files when Chromium wrote them first).
		// A process of the agent's (same user) removes the block first: the browser's watch
		// of the profile sees it, so the sign-in is refused and the browser killed before
		// anything is released (profile.Guard).
		profile := filepath.Join(e.root, "data", "headless", "profile")
		if err := os.Remove(filepath.Join(profile, "Default", "Sessions")); err != nil {
			t.Fatal(err)
		}
		lsVisit(t, e, site.URL+"/stepup")
		lsLoginFails(t, e, []string{"BROWSER_TAMPERED"}, "--code-only", "--alias", "otp")
		// The next command relaunches the browser (answering BROWSER_CRASHED), on a profile
		// whose block is back: sign in again, then step up.
		if r := e.run("", "headless", "visit", site.URL+"/login", "--json"); r.code != 0 && !strings.Contains(r.stdout, "BROWSER_CRASHED") {
			t.Fatalf("the visit after the kill: %+v", r)
		}
		p = lsVisit(t, e, site.URL+"/login")
		lsLoginOK(t, e, "authenticated", "--challenge", p.AuthRequired.Challenge, "--alias", "otp")
		lsVisit(t, e, site.URL+"/stepup")
		lsLoginOK(t, e, "authenticated", "--code-only", "--alias", "otp")
		stepups := site.stepupCodes()
		if len(stepups) == 0 {
			t.Fatal("the step-up sent no code")
		}
		// A graceful stop makes Chromium write what it keeps. It can keep no session restore
		// data (Default/Sessions is a regular empty file it cannot replace), and no file of
		// the profile holds either code (as Blink stores DOM strings, UTF-16, or as a body).
		if r := e.run("", "headless", "stop", "--json"); r.code != 0 {
			t.Fatalf("stop: %+v", r)
		}
		for _, name := range []string{"Sessions", "Sessions_Encrypted"} {
			if fi, err := os.Lstat(filepath.Join(profile, "Default", name)); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
				t.Errorf("Default/%s after a stop: %v %v, want a regular empty file", name, fi, err)
			}
		}
		// No session restore file of any name anywhere (round 5c found Chromium writing
		// Sessions_Encrypted/ once Sessions/ was blocked): SNSS files start "SNSS".
		filepath.WalkDir(profile, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if b, _ := os.ReadFile(path); bytes.HasPrefix(b, []byte("SNSS")) || strings.HasPrefix(d.Name(), "Session_") || strings.HasPrefix(d.Name(), "Tabs_") {
				t.Errorf("session restore data in the profile: %s", path)
			}
			return nil
		})
		for _, c := range []string{code, stepups[len(stepups)-1]} {
			u16 := make([]byte, 0, 2*len(c))
			for _, d := range []byte(c) {
				u16 = append(u16, d, 0)
			}
			filepath.WalkDir(profile, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				b, _ := os.ReadFile(path)
				if bytes.Contains(b, u16) || bytes.Contains(b, []byte("otp="+c)) {
					t.Errorf("LEAK: the one-time code %s is in %s", c, path)
				}
				return nil
			})
		}
		e.start(t)
	})
	t.Run("step-up", func(t *testing.T) {
		p := lsVisit(t, e, site.URL+"/login")
		lsLoginOK(t, e, "authenticated", "--challenge", p.AuthRequired.Challenge, "--alias", "otp")
		lsVisit(t, e, site.URL+"/stepup")
		n := len(presencetest.Prompts(t, approveLog))
		before := len(site.stepupCodes())
		a := lsLoginOK(t, e, "authenticated", "--alias", "otp", "--code-only")
		if a.Evidence["code_typed"] != true {
			t.Fatalf("evidence %v", a.Evidence)
		}
		if got := len(site.stepupCodes()) - before; got != 1 {
			t.Fatalf("the step-up page received %d codes, want 1", got)
		}
		prompts := presencetest.Prompts(t, approveLog)
		if len(prompts) == n || !strings.Contains(strings.Join(prompts[n:], "\n"), "only the one-time code (not the password)") {
			t.Fatalf("the step-up prompt: %v", prompts[n:])
		}
		// An alias without a seed: refused before anyone is asked.
		lsVisit(t, e, site.URL+"/stepup")
		lsLoginFails(t, e, []string{"INVALID_ARGUMENT"}, "--alias", "plain", "--code-only")
		e.run("", "headless", "visit", site.URL+"/logout", "--json")
	})
	// A code page the person was not asked about (not a sign-in path of the credential: a
	// redirect after the sign-in may be the agent's to steer, /login?next=…): the password is
	// sent, the code is not typed; --code-only types it there, the prompt naming the page.
	t.Run("code page elsewhere", func(t *testing.T) {
		before := len(site.stepupCodes())
		codes0, _, _ := site.received()
		p := lsVisit(t, e, site.URL+"/login")
		lsLoginFails(t, e, []string{"CODE_PATH_UNKNOWN"}, "--challenge", p.AuthRequired.Challenge, "--alias", "nocodepath")
		if codes, _, _ := site.received(); len(codes) != len(codes0) || len(site.stepupCodes()) != before {
			t.Fatalf("a code reached the site: %d codes before, %d after", len(codes0), len(codes))
		}
		n := len(presencetest.Prompts(t, approveLog))
		a := lsLoginOK(t, e, "authenticated", "--alias", "nocodepath", "--code-only")
		if a.Evidence["code_typed"] != true {
			t.Fatalf("evidence %v", a.Evidence)
		}
		if prompts := presencetest.Prompts(t, approveLog); len(prompts) != n+1 || !strings.Contains(prompts[n], "/verify") {
			t.Fatalf("the code's own prompt does not name the page: %v", prompts[n:])
		}
		e.run("", "headless", "visit", site.URL+"/logout", "--json")
	})
	// The code step on the same document (a single-page app): typed under the same approval
	// and the same rules, once.
	t.Run("same-page code step", func(t *testing.T) {
		before, _, _ := site.received()
		n := len(presencetest.Prompts(t, approveLog))
		p := lsVisit(t, e, site.URL+"/spa")
		if p.AuthRequired == nil {
			t.Fatal("no auth_required on the SPA login page")
		}
		// /spa, not /login where otp signed in first: a new sign-in path to the person.
		a := lsLoginOK(t, e, "authenticated", "--challenge", p.AuthRequired.Challenge, "--alias", "otp", "--new-login-path")
		codes, _, _ := site.received()
		if len(codes) != len(before)+1 || a.Evidence["code_typed"] != true {
			t.Fatalf("the site received %d codes (want one), evidence %v", len(codes)-len(before), a.Evidence)
		}
		if got := len(presencetest.Prompts(t, approveLog)) - n; got != 1 {
			t.Fatalf("%d prompts for one sign-in", got)
		}
		snapshotHasIn(t, e, "Welcome otp@example.test")
		e.run("", "headless", "visit", site.URL+"/logout", "--json")
		// A wrong seed on the same page: one (wrong) code, then "failed".
		p = lsVisit(t, e, site.URL+"/spa")
		lsLoginOK(t, e, "failed", "--challenge", p.AuthRequired.Challenge, "--alias", "badseed")
		if c, _, _ := site.received(); len(c) != len(codes)+1 {
			t.Fatalf("the site received %d codes for the wrong seed, want one", len(c)-len(codes))
		}
		// A site that takes 2.5 s to answer the password: the code step waits for it (it
		// gave up after about a second, with the code released and never typed).
		codes, _, _ = site.received()
		// (/spa was allowed once above, not learned: each sign-in there asks as a new path.)
		p = lsVisit(t, e, site.URL+"/spa?slow=1")
		a = lsLoginOK(t, e, "authenticated", "--challenge", p.AuthRequired.Challenge, "--alias", "otp", "--new-login-path")
		if c, _, _ := site.received(); len(c) != len(codes)+1 || a.Evidence["code_typed"] != true {
			t.Fatalf("slow site: %d codes (want one), evidence %v", len(c)-len(codes), a.Evidence)
		}
		e.run("", "headless", "visit", site.URL+"/logout", "--json")
		// A code field shown beside the password from the start is not the step after it:
		// it never gets the code, neither at the password nor after its submit.
		codes, _, _ = site.received()
		p = lsVisit(t, e, site.URL+"/spa?both=1")
		a = lsLoginOK(t, e, "unknown", "--challenge", p.AuthRequired.Challenge, "--alias", "otp", "--new-login-path")
		if c, _, _ := site.received(); len(c) != len(codes) || a.Evidence["code_typed"] == true {
			t.Fatalf("code field shown beside the password: %d codes (want none), evidence %v", len(c)-len(codes), a.Evidence)
		}
	})
	t.Run("wrong seed", func(t *testing.T) {
		before, _, _ := site.received()
		login(t, "badseed", "failed")
		codes, _, _ := site.received()
		if len(codes) != len(before)+1 {
			t.Fatalf("the site received %d codes, want one (the wrong one)", len(codes)-len(before))
		}
	})
	t.Run("latency", func(t *testing.T) {
		const n = 5
		var with, without []time.Duration
		for i := 0; i < n; i++ {
			_, d := login(t, "otp", "authenticated")
			with = append(with, d)
			_, d = login(t, "plain", "authenticated")
			without = append(without, d)
		}
		med := func(d []time.Duration) time.Duration {
			sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
			return d[len(d)/2]
		}
		t.Logf("LATENCY visit+auth login, median of %d interleaved (same run, same site, same host): with TOTP step %v, password only %v, difference %v; all with %v, without %v",
			n, med(with), med(without), med(with)-med(without), with, without)
	})

	t.Run("denied", func(t *testing.T) {
		lsPresence(e, deny, 5)
		e.stopBroker()
		e.start(t)
		beforeCodes, beforePosts, beforeTyped := site.received()
		p := lsVisit(t, e, site.URL+"/login")
		if p.AuthRequired == nil {
			t.Fatal("no auth_required on the login page")
		}
		lsLoginFails(t, e, []string{"PRESENCE_DENIED"}, "--challenge", p.AuthRequired.Challenge, "--alias", "otp")
		codes, posts, typed := site.received()
		if len(codes) != len(beforeCodes) || len(posts) != len(beforePosts) {
			t.Fatalf("denied: the site received %v %v", codes[len(beforeCodes):], posts[len(beforePosts):])
		}
		for _, x := range typed[len(beforeTyped):] {
			if strings.HasPrefix(x, "password ") || strings.HasPrefix(x, "otp ") {
				t.Fatalf("denied, yet typed: %v", typed[len(beforeTyped):])
			}
		}
		if len(presencetest.Prompts(t, denyLog)) == 0 {
			t.Fatal("the deny pinentry was never asked")
		}
	})

	// The leak sweep for the seeds and the codes: every agent-visible output, brokerd's and
	// the host's files (profile, logs, audit), and the pinentry logs.
	codes, _, _ := site.received()
	site.mu.Lock()
	codes = append(codes, site.stepups...)
	site.mu.Unlock()
	sweep := &lsSweep{t: t, files: map[string]int{}, seen: map[string]bool{}}
	for _, sec := range []struct{ label, s string }{{"seed", seedB32}, {"wrong seed", wrongB32}, {"raw seed", string(key.Seed)}, {"otp password", otpPW}, {"plain password", plainPW}} {
		sweep.needles = append(sweep.needles, lsNeedle{sec.label, []byte(sec.s)})
	}
	sweep.needles = append(sweep.needles, lsNeedle{"lower-case seed", []byte(strings.ToLower(seedB32))})
	out := e.allOutput()
	for _, c := range codes {
		// A 6-digit code can occur by chance in any large binary; search it where text is.
		if strings.Contains(out, c) {
			t.Errorf("LEAK: a one-time code the site received is in the CLI output")
		}
	}
	sweep.search("every CLI stdout, stderr and tty transcript", []byte(out))
	for _, dir := range []string{e.runDir(), filepath.Join(e.root, "data")} {
		sweep.tree(dir, dir)
	}
	for _, l := range []string{approveLog, denyLog} {
		b, _ := os.ReadFile(l)
		sweep.search("pinentry log", b)
		for _, c := range codes {
			if strings.Contains(string(b), c) {
				t.Errorf("LEAK: a one-time code is in the pinentry log")
			}
		}
	}
	if logs, _ := filepath.Glob(filepath.Join(e.runDir(), "*.log*")); len(logs) > 0 {
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			for _, c := range codes {
				if strings.Contains(string(b), c) {
					t.Errorf("LEAK: a one-time code is in %s", l)
				}
			}
		}
	}
	t.Logf("TOTP sweep: %v files, %d bytes, %d codes checked", sweep.files, sweep.bytes, len(codes))
}
