//go:build linux

package tests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// basicSite answers /basic with 401 and WWW-Authenticate: Basic realm="staging" unless the
// request carries the account's password; /framed embeds another server's /basic in an iframe.
// It records every Authorization header it receives (whether one came at all).
type basicSite struct {
	*httptest.Server
	mu      sync.Mutex
	authz   []string // "user ok" / "user bad" for each Authorization received
	account string
	pw      string
	away    string // where /basic/away redirects once answered
}

func newBasicSite(t testing.TB, account, pw string) *basicSite {
	s := &basicSite{account: account, pw: pw}
	mux := http.NewServeMux()
	protected := func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if ok {
			s.mu.Lock()
			s.authz = append(s.authz, fmt.Sprintf("%s %v", u, u == s.account && p == s.pw))
			s.mu.Unlock()
		}
		if !ok || u != s.account || p != s.pw {
			w.Header().Set("WWW-Authenticate", `Basic realm="staging"`)
			w.WriteHeader(http.StatusUnauthorized)
			lsPage(w, "Unauthorized", "<h1>401 Unauthorized</h1>")
			return
		}
		lsPage(w, "Staging", "<h1>Welcome to staging, "+u+"</h1>")
	}
	mux.HandleFunc("GET /basic", protected)
	// /bare: a 401 with no body, as some applications answer (TiddlyWiki): Chromium fails
	// such a navigation, which must still be offered as the challenge it is.
	mux.HandleFunc("GET /bare/", func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); ok && u == s.account && p == s.pw {
			lsPage(w, "Staging", "<h1>Bare welcome, "+u+"</h1>")
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="staging"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("GET /basic/more", protected)
	// /basic/app is an application under the realm: its page loads its script, which calls
	// its API; both need the header as the document does.
	mux.HandleFunc("GET /basic/app", func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != s.account || p != s.pw {
			protected(w, r)
			return
		}
		lsPage(w, "App", `<h1>App</h1><p id="out">loading</p><script src="/basic/app.js"></script>`)
	})
	mux.HandleFunc("GET /basic/app.js", func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != s.account || p != s.pw {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `fetch("/basic/api").then(function (r) { return r.ok ? r.text() : "API " + r.status; }).then(function (t) { document.getElementById("out").textContent = t; });`)
	})
	mux.HandleFunc("GET /basic/api", func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != s.account || p != s.pw {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "API says hello to "+u)
	})
	// /basic/away: protected; once answered, a redirect to s.away (another origin).
	mux.HandleFunc("GET /basic/away", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		away := s.away
		s.mu.Unlock()
		if u, p, ok := r.BasicAuth(); ok && u == s.account && p == s.pw && away != "" {
			s.mu.Lock()
			s.authz = append(s.authz, u+" true")
			s.mu.Unlock()
			http.Redirect(w, r, away, http.StatusFound)
			return
		}
		protected(w, r)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *basicSite) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.authz...)
}

type basicPage struct {
	URL          string `json:"url"`
	AuthRequired *struct {
		Kind      string   `json:"kind"`
		Challenge string   `json:"challenge"`
		Origin    string   `json:"origin"`
		Aliases   []string `json:"aliases"`
	} `json:"auth_required"`
}

// TestBasicAuth: a Basic challenge of the page's server is answered with an alias of that
// exact origin after presence (prompt: "HTTP Basic authentication"), and then every request of
// that session to the protection space carries the answer (documents, scripts, API calls;
// never another session's or another origin's); a wrong password is "failed" and goes no
// further; a 401 from another origin framed in a page is never answered (not even offered);
// the password appears on no surface.
func TestBasicAuth(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	good, wrong, framedPW := newCanary(), newCanary(), newCanary()
	site := newBasicSite(t, "staff", good)
	other := newBasicSite(t, "staff", good)      // the wrong-password case
	framed := newBasicSite(t, "staff", framedPW) // framed by a page of site
	framer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Framer", `<h1>Framer</h1><iframe src="`+framed.URL+`/basic"></iframe>`)
	}))
	t.Cleanup(framer.Close)
	approve, approveLog := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	mfaEnroll(t, e, site.URL, "staging", "staff", good, "")
	mfaEnroll(t, e, other.URL, "staging-wrong", "staff", wrong, "")
	mfaEnroll(t, e, framed.URL, "framed", "staff", framedPW, "")
	listed := newBasicSite(t, "staff", good) // served under the navigation allowlist
	mfaEnroll(t, e, listed.URL, "listed", "staff", good, "")
	e.start(t)

	visit := func(t *testing.T, url string) basicPage {
		t.Helper()
		var p basicPage
		e.ok(t, &p, "visit", url)
		return p
	}
	t.Run("success", func(t *testing.T) {
		p := visit(t, site.URL+"/basic")
		a := p.AuthRequired
		if a == nil || a.Kind != "basic" || a.Origin != site.URL || len(a.Aliases) != 1 || a.Aliases[0] != "staging" {
			t.Fatalf("visit of a Basic-protected page: auth_required %+v", a)
		}
		res := lsLoginOK(t, e, "authenticated", "--challenge", a.Challenge, "--alias", "staging")
		if res.Origin != site.URL {
			t.Fatalf("result %+v", res)
		}
		if got := site.received(); len(got) != 1 || got[0] != "staff true" {
			t.Fatalf("the site received %v, want one right answer", got)
		}
		snapshotHasIn(t, e, "Welcome to staging, staff")
		if prompts := strings.Join(presencetest.Prompts(t, approveLog), "\n"); !strings.Contains(prompts, "HTTP Basic authentication") {
			t.Fatalf("prompt: %s", prompts)
		}
	})
	// The session's protection space (issue 43, point 4): the answer goes with every request
	// of the session's page to the challenged URL's directory and below — its later
	// navigations, an application's script and its API calls — never Chromium's HTTP auth
	// cache, which would send it from every other session of the same browser context too.
	t.Run("the session's protection space", func(t *testing.T) {
		before := len(site.received())
		e.ok(t, nil, "session", "create", "second")
		var p basicPage
		e.ok(t, &p, "visit", site.URL+"/basic", "--session", "second")
		if p.AuthRequired == nil || p.AuthRequired.Kind != "basic" {
			t.Fatalf("another session of the same browser context got the protected page without its own approval: %+v", p)
		}
		if got := site.received(); len(got) != before {
			t.Fatalf("the password went, unasked, with another session's request: %v", got)
		}
		for _, path := range []string{"/basic", "/basic/more"} {
			if p := visit(t, site.URL+path); p.AuthRequired != nil {
				t.Fatalf("a later navigation of the signed-in session to %s was challenged again: %+v", path, p)
			}
		}
		visit(t, site.URL+"/basic/app")
		if r := e.run("", "headless", "wait", "--text", "API says hello to staff", "--timeout", "10s", "--json"); r.code != 0 {
			t.Fatalf("the application's script and API call under the realm did not get the answer: %+v", r)
		}
		if got := site.received(); len(got) != before+2 {
			t.Fatalf("the site received %v after the sign-in, want the two documents' answers", got[before:])
		}
	})
	// A redirect of the answered request does not carry the header to where it leads. (A
	// session of its own: the default one holds the answer for the whole origin already.)
	t.Run("redirect", func(t *testing.T) {
		e.ok(t, nil, "session", "create", "redir")
		var mu sync.Mutex
		var leaked []string
		away := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			leaked = append(leaked, r.Header.Values("Authorization")...)
			mu.Unlock()
			lsPage(w, "Elsewhere", "<h1>Elsewhere</h1>")
		}))
		t.Cleanup(away.Close)
		site.mu.Lock()
		site.away = away.URL + "/landed"
		site.mu.Unlock()
		before := len(site.received())
		var p basicPage
		e.ok(t, &p, "visit", site.URL+"/basic/away", "--session", "redir")
		if p.AuthRequired == nil || p.AuthRequired.Kind != "basic" {
			t.Fatalf("auth_required %+v", p.AuthRequired)
		}
		lsLoginOK(t, e, "authenticated", "--challenge", p.AuthRequired.Challenge, "--alias", "staging", "--session", "redir")
		if got := site.received(); len(got) != before+1 {
			t.Fatalf("the site received %v, want one more answer", got[before:])
		}
		if r := e.run("", "headless", "snapshot", "--session", "redir", "--json"); r.code != 0 || !strings.Contains(r.stdout, "Elsewhere") {
			t.Fatalf("snapshot of the redirect's target: %+v", r)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(leaked) != 0 {
			t.Fatalf("LEAK: the redirect's target (another origin) received Authorization %q", leaked)
		}
	})
	t.Run("a 401 without a body", func(t *testing.T) {
		e.ok(t, nil, "session", "create", "bare")
		var p basicPage
		e.ok(t, &p, "visit", site.URL+"/bare/", "--session", "bare")
		if p.AuthRequired == nil || p.AuthRequired.Kind != "basic" {
			t.Fatalf("a 401 without a body: auth_required %+v, want kind basic", p.AuthRequired)
		}
		lsLoginOK(t, e, "authenticated", "--challenge", p.AuthRequired.Challenge, "--alias", "staging", "--session", "bare")
		if r := e.run("", "headless", "snapshot", "--session", "bare", "--json"); r.code != 0 || !strings.Contains(r.stdout, "Bare welcome") {
			t.Fatalf("snapshot after the answer: %+v", r)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		p := visit(t, other.URL+"/basic")
		if p.AuthRequired == nil || p.AuthRequired.Kind != "basic" {
			t.Fatalf("auth_required %+v", p.AuthRequired)
		}
		lsLoginOK(t, e, "failed", "--challenge", p.AuthRequired.Challenge, "--alias", "staging-wrong")
		if got := other.received(); len(got) != 1 || got[0] != "staff false" {
			t.Fatalf("the site received %v, want exactly one (wrong) answer: one challenge only", got)
		}
	})
	t.Run("framed 401 of another origin", func(t *testing.T) {
		p := visit(t, framer.URL+"/")
		if p.AuthRequired != nil {
			t.Fatalf("a framed 401 was offered: %+v", p.AuthRequired)
		}
		r := lsLogin(e, "--alias", "framed")
		if r.code == 0 {
			t.Fatalf("auth login answered on a page without a challenge of its own: %+v", r)
		}
		if got := framed.received(); len(got) != 0 {
			t.Fatalf("the framed origin received Authorization %v", got)
		}
	})
	// With a navigation allowlist the same interception judges the request first: the answer
	// still goes to that one request only.
	t.Run("under the navigation allowlist", func(t *testing.T) {
		e.ok(t, nil, "stop")
		if r := e.run("", "headless", "start", "--allow", strings.TrimPrefix(listed.URL, "http://"), "--json"); r.code != 0 {
			t.Fatalf("start --allow: %+v", r)
		}
		p := visit(t, listed.URL+"/basic")
		if p.AuthRequired == nil || p.AuthRequired.Kind != "basic" {
			t.Fatalf("auth_required %+v", p.AuthRequired)
		}
		lsLoginOK(t, e, "authenticated", "--challenge", p.AuthRequired.Challenge, "--alias", "listed")
		snapshotHasIn(t, e, "Welcome to staging, staff")
		if p := visit(t, listed.URL+"/basic/more"); p.AuthRequired != nil {
			t.Fatalf("a later navigation of the signed-in session was challenged again: %+v", p)
		}
		if got := listed.received(); len(got) != 2 || got[0] != "staff true" || got[1] != "staff true" {
			t.Fatalf("the site received %v, want two right answers", got)
		}
	})
	for _, pw := range []string{good, wrong, framedPW} {
		if strings.Contains(e.allOutput(), pw) {
			t.Fatal("LEAK: a Basic-auth password is in the CLI output")
		}
	}
}

// snapshotHasIn checks that the default session's snapshot shows text.
func snapshotHasIn(t *testing.T, e *env, text string) {
	t.Helper()
	r := e.run("", "headless", "snapshot", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, text) {
		t.Fatalf("snapshot does not show %q: %+v", text, r)
	}
}
