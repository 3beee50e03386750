//go:build linux

package tests

import (
	"crypto/rand"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/websocket"
)

// browseSite is the site of issue 44's tests (dialogs, windows a page opens, the small verbs):
// two origins on loopback, an app and an identity provider (idp), each a server of its own.
//
// App (App()):
//
//	/app          "Sign in with IdP": opens idp /authorize in a pop-up; signed in once the
//	              pop-up's /callback posted the code back (then "Signed in to the app as …")
//	/callback     posts ?code= to its opener and closes its window
//	/exchange     the app's side of the code: signs the app's session in
//	/dialogs      Delete (confirm), Rename (prompt), Hello (alert), Arm (a beforeunload handler)
//	/alert-once   an alert after the load; /alert-loop an alert again and again
//	/count        "loaded N times"; /a, /b plain pages (history)
//	/keys, /clicks, /net, /longpoll, /swarm   the small verbs' pages
//	/agent/…      pages the agent wrote: openers of idp pop-ups (the hostile cases)
//
// IdP (IdP()):
//
//	/authorize    the sign-in form (POST /login); success: /consent, which returns to the app's
//	              /callback with a code after a moment
//	/spa          a script sign-in that always fails, with a Confirm button (confirm())
//	/echo         an alert that shows the password it knows (a site that says it back)
//	/u/agent/…    pages the agent published on the idp's origin
type browseSite struct {
	app, idp    *httptest.Server
	appBook     siteBook
	idpBook     siteBook
	mu          sync.Mutex
	codes       map[string]string // code → account
	count       int
	echo        string // what /echo shows
	consentWait time.Duration
	quit        chan struct{} // closed before the servers close: what never answers ends
}

func newBrowseSite(t testing.TB) *browseSite {
	s := &browseSite{appBook: newSiteBook(http.Cookie{Name: "app_sid"}), idpBook: newSiteBook(http.Cookie{Name: "idp_sid"}),
		codes: map[string]string{}, consentWait: 3 * time.Second, quit: make(chan struct{})}
	s.idp = httptest.NewServer(s.idpMux())
	t.Cleanup(s.idp.Close)
	s.app = httptest.NewServer(s.appMux())
	t.Cleanup(s.app.Close)
	t.Cleanup(func() { close(s.quit) }) // first: a server's Close waits for its requests
	return s
}

// hang answers nothing until the request or the site ends.
func (s *browseSite) hang(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.quit:
	}
}

func (s *browseSite) App() string { return s.app.URL }
func (s *browseSite) IdP() string { return s.idp.URL }

func (s *browseSite) appMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		if a := s.appBook.account(r); a != "" {
			htmlPage(w, "App", "", `<h1>Signed in to the app as `+html.EscapeString(a)+`</h1>`)
			return
		}
		htmlPage(w, "App", "", `<h1>The app</h1><p id="st">not signed in</p>
<button onclick="window.open('`+s.idp.URL+`/authorize?return=`+url.QueryEscape(s.app.URL+"/callback")+`', 'idp', 'popup,width=500,height=600')">Sign in with IdP</button>
<script>
window.addEventListener("message", function (e) {
  if (e.origin !== location.origin || !e.data || !e.data.code) { return; }
  fetch("/exchange?code=" + encodeURIComponent(e.data.code)).then(function () { location.reload(); });
});
</script>`)
	})
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		j := html.EscapeString(r.URL.Query().Get("code"))
		htmlPage(w, "Returning", "", `<p>Returning to the app…</p>
<script>window.opener.postMessage({code: "`+j+`"}, location.origin); window.close();</script>`)
	})
	mux.HandleFunc("GET /exchange", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		a := s.codes[r.URL.Query().Get("code")]
		delete(s.codes, r.URL.Query().Get("code"))
		s.mu.Unlock()
		if a == "" {
			http.Error(w, "no such code", http.StatusForbidden)
			return
		}
		s.appBook.signIn(w, a)
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("GET /dialogs", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Dialogs", "", `<h1>Dialogs</h1><p id="st">nothing yet</p>
<button onclick="st.textContent = confirm('Delete item 7?') ? 'deleted' : 'kept'">Delete</button>
<button onclick="var n = prompt('New name?', 'old name'); st.textContent = n === null ? 'rename cancelled' : 'renamed to ' + n">Rename</button>
<button onclick="alert('Hi there'); st.textContent = 'greeted'">Hello</button>
<button onclick="onbeforeunload = function (e) { e.preventDefault(); return 'leave?'; }; st.textContent = 'armed'">Arm</button>
<input aria-label="Note">
<script>var st = document.getElementById("st");</script>`)
	})
	mux.HandleFunc("GET /alert-once", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Alert once", "", `<h1>Alert once</h1><script>setTimeout(function () { alert("Hold me"); }, 300);</script>`)
	})
	mux.HandleFunc("GET /alert-loop", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Alert loop", "", `<h1>Alert loop</h1><script>setTimeout(function () { for (;;) { alert("again"); } }, 300);</script>`)
	})
	// /bounce?n=N leaves itself by script before its load, as a sign-in page bouncing to its
	// identity provider does, for /bounce?n=N-1, and /bounce?n=0 for /bounced: their images
	// never load, so their own loads never fire.
	mux.HandleFunc("GET /bounce", func(w http.ResponseWriter, r *http.Request) {
		next := "/bounced"
		if n, _ := strconv.Atoi(r.URL.Query().Get("n")); n > 0 {
			next = fmt.Sprintf("/bounce?n=%d", n-1)
		}
		htmlPage(w, "Bounce", "", `<script>location.replace("`+next+`")</script><img src="/hang" alt="">`)
	})
	mux.HandleFunc("GET /bounced", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Bounced", "", `<h1>Bounced</h1>`)
	})
	mux.HandleFunc("GET /count", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.count++
		n := s.count
		s.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		htmlPage(w, "Count", "", fmt.Sprintf(`<h1>loaded %d times</h1>`, n))
	})
	for _, p := range []string{"a", "b"} {
		mux.HandleFunc("GET /"+p, func(w http.ResponseWriter, r *http.Request) {
			htmlPage(w, "Page "+strings.ToUpper(p), "", `<h1>Page `+strings.ToUpper(p)+`</h1>`)
		})
	}
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Keys", "", `<h1>Keys</h1><p id="st">-</p>
<input aria-label="First" id="first" onfocus="st.textContent = 'first focused'">
<input aria-label="Second" id="second" value="hello world">
<textarea aria-label="Message" onkeydown="if (event.metaKey && event.key === 'Enter') { st.textContent = 'meta-enter sent'; event.preventDefault(); }"></textarea>
<script>var st = document.getElementById("st");</script>`)
	})
	mux.HandleFunc("GET /clicks", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Clicks", "", `<h1>Clicks</h1><p id="st">-</p>
<button ondblclick="st.textContent = 'double clicked'" onclick="st.textContent = 'clicked once'">Twice</button>
<button oncontextmenu="event.preventDefault(); st.textContent = 'context menu'" onclick="st.textContent = 'left clicked'">Menu</button>
<script>var st = document.getElementById("st");</script>`)
	})
	// /net: Load starts a request the server answers after a moment; the page also keeps an
	// EventSource stream and a WebSocket open for good, which network idle does not count.
	mux.HandleFunc("GET /net", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Net", "", `<h1>Net</h1><p id="st">idle page</p>
<button onclick="fetch('/slow').then(function (r) { return r.text(); }).then(function (t) { st.textContent = t; })">Load</button>
<script>
var st = document.getElementById("st");
new EventSource("/stream");
var ws = new WebSocket("ws://" + location.host + "/ws");
ws.onopen = function () { document.title = "Net (socket open)"; };
</script>`)
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(1500 * time.Millisecond):
		case <-r.Context().Done():
		}
		fmt.Fprint(w, "slow answer arrived")
	})
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: hello\n\n")
		w.(http.Flusher).Flush()
		s.hang(w, r)
	})
	mux.Handle("GET /ws", websocket.Handler(func(c *websocket.Conn) {
		go func() {
			<-s.quit
			c.Close()
		}()
		buf := make([]byte, 64)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}))
	// /longpoll: a request that never ends keeps the page busy.
	mux.HandleFunc("GET /longpoll", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Long poll", "", `<h1>Long poll</h1><script>fetch("/hang");</script>`)
	})
	mux.HandleFunc("GET /hang", s.hang)
	// /swarm: more requests in flight at once than the host follows (to the other origin:
	// those that wait for one of its six connections are in flight too, and the app's own
	// stay free for the next visit).
	mux.HandleFunc("GET /swarm", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Swarm", "", `<h1>Swarm</h1><script>for (var i = 0; i < 1100; i++) { fetch("`+s.idp.URL+`/hang?i=" + i, {mode: "no-cors"}); }</script>`)
	})
	// The agent's pages on the app's origin.
	mux.HandleFunc("GET /agent/framed", func(w http.ResponseWriter, r *http.Request) {
		// A cross-origin opener with a frame of the idp's origin (a page the agent published
		// there): that frame can script the pop-up.
		htmlPage(w, "Agent", "", `<h1>Agent</h1><iframe src="`+s.idp.URL+`/u/agent/page" title="x"></iframe>
<button onclick="window.open('`+s.idp.URL+`/authorize', 'idp')">Open</button>`)
	})
	mux.HandleFunc("GET /agent/siblings", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Agent", "", `<h1>Agent</h1>
<button onclick="window.open('`+s.idp.URL+`/authorize', 'idp')">Open</button>
<button onclick="window.open('`+s.idp.URL+`/u/agent/page', 'other')">Other</button>`)
	})
	mux.HandleFunc("GET /agent/moves", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Agent", "", `<h1>Agent</h1>
<button onclick="window.open('`+s.idp.URL+`/authorize', 'idp')">Open</button>
<button onclick="location.href = '`+s.idp.URL+`/u/agent/page'">Move</button>`)
	})
	mux.HandleFunc("GET /agent/many", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Agent", "", `<h1>Agent</h1>
<button onclick="n = (window.n || 0) + 1; window.open('/a?w=' + n, 'w' + n)">Open</button>`)
	})
	mux.HandleFunc("GET /agent/closer", func(w http.ResponseWriter, r *http.Request) {
		// "Close slowly" closes the window right after the click and keeps its renderer busy
		// for 1.5 s then: the window goes only after, as on a busy machine.
		htmlPage(w, "Closer", "", `<h1>Closer</h1><button onclick="window.close()">Close me</button>
<button onclick="setTimeout(function () { window.close(); var t = Date.now() + 1500; while (Date.now() < t) {} }, 0)">Close slowly</button>
<button onclick="alert('from the pop-up')">Say</button>`)
	})
	mux.HandleFunc("GET /agent/opens", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Opener", "", `<h1>Opener</h1><a href="/agent/closer" target="_blank">New tab</a>`)
	})
	return mux
}

func (s *browseSite) idpMux() *http.ServeMux {
	mux := http.NewServeMux()
	form := func(alert string) string {
		return signInForm("Sign in to IdP", "/login", alert)
	}
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "return", Value: r.URL.Query().Get("return"), Path: "/"})
		htmlPage(w, "Sign in to IdP", "", form(""))
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		u, p := r.PostForm.Get("username"), r.PostForm.Get("password")
		s.idpBook.record(loginPost{"idp", "/login", u, p})
		if !s.idpBook.check(u, p) {
			htmlPage(w, "Sign in to IdP", "", form(alertHTML))
			return
		}
		s.idpBook.signIn(w, u)
		http.Redirect(w, r, "/consent", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /consent", func(w http.ResponseWriter, r *http.Request) {
		a := s.idpBook.account(r)
		ret := ""
		if c, err := r.Cookie("return"); err == nil {
			ret = c.Value
		}
		if a == "" || ret == "" {
			htmlPage(w, "IdP", "", `<h1>Not signed in</h1>`)
			return
		}
		code := "c" + rand.Text()
		s.mu.Lock()
		s.codes[code] = a
		wait := s.consentWait
		s.mu.Unlock()
		htmlPage(w, "IdP", "", fmt.Sprintf(`<h1>Signed in to IdP as %s</h1><p>Returning to the app…</p>
<script>setTimeout(function () { location.href = %q; }, %d);</script>`, html.EscapeString(a), ret+"?code="+code, wait.Milliseconds()))
	})
	mux.HandleFunc("GET /spa", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Sign in to IdP", "", `<h1>Sign in to IdP</h1><div id="msg"></div>
<form id="f" method="post" action="/spa">
 <label>Email <input type="email" name="username" autocomplete="username"></label>
 <label>Password <input type="password" name="password" autocomplete="current-password"></label>
 <button type="submit">Sign in</button>
</form>
<button onclick="document.getElementById('msg').textContent = confirm('Proceed?') ? 'proceeding' : 'staying'">Confirm</button>
<script>
document.getElementById("f").addEventListener("submit", function (ev) {
  ev.preventDefault();
  fetch("/api/never", {method: "POST", body: "x"}).then(function () {
    document.getElementById("msg").innerHTML = '<p role="alert">Invalid credentials</p>';
  });
});
</script>`)
	})
	mux.HandleFunc("POST /api/never", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"ok":false}`) })
	mux.HandleFunc("GET /hang", s.hang)
	mux.HandleFunc("GET /echo", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		e := s.echo
		s.mu.Unlock()
		htmlPage(w, "Echo", "", `<h1>Echo</h1><script>setTimeout(function () { alert("your password is `+e+`"); }, 200);</script>`)
	})
	mux.HandleFunc("GET /u/agent/page", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Agent's page", "", `<h1>A page the agent published</h1>`)
	})
	mux.HandleFunc("GET /u/agent/opener", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Agent's page", "", `<h1>A page the agent published</h1>
<button onclick="window.open('/authorize', 'idp')">Open</button>`)
	})
	return mux
}
