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
	mux.HandleFunc("GET /basic/more", protected)
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
// exact origin after presence (prompt: "HTTP Basic authentication"), once; a wrong password is
// "failed"; a 401 from another origin framed in a page is never answered (not even offered);
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
	// One challenge only: the answer is one request's Authorization header, never Chromium's
	// HTTP auth cache, which would send the password again, unasked, with every later request
	// to the origin of this session and of every other session in the same browser context.
	t.Run("one challenge only", func(t *testing.T) {
		before := len(site.received())
		e.ok(t, nil, "session", "create", "second")
		var p basicPage
		e.ok(t, &p, "visit", site.URL+"/basic", "--session", "second")
		if p.AuthRequired == nil || p.AuthRequired.Kind != "basic" {
			t.Fatalf("another session of the same browser context got the protected page without its own approval: %+v", p)
		}
		if got := site.received(); len(got) != before {
			t.Fatalf("the password went again, unasked, to another session's request: %v", got)
		}
		// The same session, later: the same URL and another path of the protection space.
		for _, path := range []string{"/basic", "/basic/more"} {
			p := visit(t, site.URL+path)
			if p.AuthRequired == nil || p.AuthRequired.Kind != "basic" {
				t.Fatalf("a later navigation of the session to %s was answered without a new approval: %+v", path, p)
			}
		}
		if got := site.received(); len(got) != before {
			t.Fatalf("the password went again, unasked, with a later request of the session: %v", got)
		}
	})
	// A redirect of the answered request does not carry the header to where it leads.
	t.Run("redirect", func(t *testing.T) {
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
		p := visit(t, site.URL+"/basic/away")
		if p.AuthRequired == nil || p.AuthRequired.Kind != "basic" {
			t.Fatalf("auth_required %+v", p.AuthRequired)
		}
		lsLoginOK(t, e, "authenticated", "--challenge", p.AuthRequired.Challenge, "--alias", "staging")
		if got := site.received(); len(got) != before+1 {
			t.Fatalf("the site received %v, want one more answer", got[before:])
		}
		snapshotHasIn(t, e, "Elsewhere")
		mu.Lock()
		defer mu.Unlock()
		if len(leaked) != 0 {
			t.Fatalf("LEAK: the redirect's target (another origin) received Authorization %q", leaked)
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
		if p := visit(t, listed.URL+"/basic/more"); p.AuthRequired == nil {
			t.Fatalf("a later navigation was answered without a new approval: %+v", p)
		}
		if got := listed.received(); len(got) != 1 || got[0] != "staff true" {
			t.Fatalf("the site received %v, want one right answer", got)
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
