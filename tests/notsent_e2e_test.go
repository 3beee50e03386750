//go:build linux

package tests

// Issue 43: a sign-in page that keeps the sign-in to itself (its submit does nothing: a
// captured page without its scripts, a captcha not solved, a button the host did not press)
// answers SIGNIN_NOT_SENT in a few seconds, with the typed password cleared from the page,
// rather than "unknown" after VerifyWait; one whose script posts what the network guard cannot
// read as the password (as a script that encrypts it does), or that hands it to a worker, is
// never said to be unsent.

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

func TestSigninNotSent(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	var (
		mu     sync.Mutex
		posted []string
	)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		onSubmit := `ev.preventDefault();`
		switch r.URL.Query().Get("how") {
		case "sealed":
			onSubmit = `ev.preventDefault(); fetch("/api/session", {method: "POST", body: btoa(String(pw.value.length))});`
		case "courier":
			// A worker takes the password and goes (as one that sends it over a WebSocket,
			// whose messages the guard does not see, would): never said to be unsent.
			onSubmit = `ev.preventDefault(); new Worker("/w.js").postMessage(pw.value.length);`
		}
		htmlPage(w, "Sign in", "", `<h1>Sign in to Example</h1>
<form id="f" method="post" action="/login">
 <label for="u">Email</label> <input type="email" id="u" name="username" autocomplete="username">
 <label for="p">Password</label> <input type="password" id="p" name="password" autocomplete="current-password">
 <button type="submit">Sign in</button>
</form>
<script>
var f = document.getElementById("f"), pw = document.getElementById("p");
f.addEventListener("submit", function (ev) { `+onSubmit+` });
</script>`)
	})
	mux.HandleFunc("GET /w.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Write([]byte(`onmessage = function () { close(); };`))
	})
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posted = append(posted, r.URL.Path)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	pw := newCanary()
	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, site.URL, "main", "alice@example.test", pw)
	e.start(t)

	for _, c := range []struct{ how, code, status, posted string }{
		{"kept", "SIGNIN_NOT_SENT", "", ""},
		{"sealed", "", "unknown", "/api/session"},
		{"courier", "", "unknown", ""},
	} {
		if r := e.run("", "headless", "visit", site.URL+"/login?how="+c.how, "--json"); r.code != 0 {
			t.Fatalf("visit: %+v", r)
		}
		r := e.run("", "headless", "auth", "login", "--alias", "main", "--json")
		switch {
		case c.code != "" && (r.code == 0 || errCode(t, r) != c.code || !strings.Contains(r.stdout, "the typed password was cleared from the page")):
			t.Errorf("auth login (%s): %+v; want %s, the password cleared", c.how, r, c.code)
		case c.code == "" && (r.code != 0 || !strings.Contains(r.stdout, `"status":"`+c.status+`"`)):
			t.Errorf("auth login (%s): %+v; want status %s", c.how, r, c.status)
		}
		mu.Lock()
		if got := strings.Join(posted, ","); got != c.posted {
			t.Errorf("%s: the site got POSTs to %q; want %q", c.how, got, c.posted)
		}
		posted = nil
		mu.Unlock()
	}
	e.ok(t, nil, "stop")
	assertNoCanary(t, "every output", e.allOutput(), pw)
}
