//go:build linux

package tests

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// faultSite is a login site (the bench site's form: username + password posting to /login)
// whose password field holds the host at one exact point of a sign-in, for the kill -9 tests
// (faults_points_test.go). Its script reports to the site synchronously (a blocking XHR) and
// the site's handler blocks the first such report until the test calls resume: while it
// blocks, the page's renderer is stuck in the event handler, so the CDP call of the host that
// fired the event (DOM.focus for "focus", Input.insertText for "input") does not return.
//
//   - hook "focus": the password field's focus handler reports to /focused. The host focuses
//     the password field (DOM.focus) after brokerd released the password and before it types it.
//   - hook "input": the password field's input handler reports the value's LENGTH (never the
//     value) to /typed. The input event fires while Input.insertText delivers the password:
//     typed, and not submitted.
//
// posts counts every POST /login (right password or not): "the site never received a submit".
type faultSite struct {
	*httptest.Server
	accepted atomic.Int64
	posts    atomic.Int64
	typedLen atomic.Int64  // the length the first /typed reported
	held     chan struct{} // closed when the first report arrived (and is being held)
	resume   func()        // lets the held report (and every later one) through
}

func newFaultSite(t testing.TB, account, password, hook string) *faultSite {
	s := &faultSite{held: make(chan struct{})}
	release := make(chan struct{})
	var once, heldOnce sync.Once
	s.resume = func() { once.Do(func() { close(release) }) }
	var reports atomic.Int64
	script := map[string]string{
		"focus": `pw.addEventListener("focus", function () { report("/focused"); });`,
		"input": `pw.addEventListener("input", function () { report("/typed?len=" + pw.value.length); });`,
	}[hook]
	if script == "" {
		t.Fatalf("faultSite: unknown hook %q", hook)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Sign in", "", signInForm("Sign in", "/login", "")+`
<script>
var pw = document.querySelector("input[type=password]");
function report(path) {
  var x = new XMLHttpRequest();
  x.open("POST", path, false);
  try { x.send(); } catch (e) {}
}
`+script+`
</script>`)
	})
	hold := func(w http.ResponseWriter, r *http.Request) {
		if reports.Add(1) == 1 {
			heldOnce.Do(func() { close(s.held) })
			select {
			case <-release:
			case <-r.Context().Done():
			case <-time.After(2 * time.Minute): // bounded: a test that never resumes
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}
	mux.HandleFunc("POST /focused", hold)
	mux.HandleFunc("POST /typed", func(w http.ResponseWriter, r *http.Request) {
		if n, err := strconv.Atoi(r.URL.Query().Get("len")); err == nil && reports.Load() == 0 {
			s.typedLen.Store(int64(n))
		}
		hold(w, r)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		s.posts.Add(1)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		if r.PostForm.Get("username") != account || subtle.ConstantTimeCompare([]byte(r.PostForm.Get("password")), []byte(password)) != 1 {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `<!doctype html><title>Sign in</title><p role="alert">Invalid credentials</p>`)
			return
		}
		s.accepted.Add(1)
		http.SetCookie(w, &http.Cookie{Name: "fault_session", Value: "1", Path: "/", HttpOnly: true})
		http.Redirect(w, r, "/home", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Home</title><h1>Welcome</h1><a href="/logout">Sign out</a>`)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(func() { s.resume(); s.Close() })
	return s
}
