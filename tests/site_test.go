//go:build linux

package tests

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"testing"
)

// site is the local test site the browser tests visit: served by the test process itself on
// 127.0.0.1 (http is allowed for loopback).
func site(t testing.TB) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Home</title><h1>Welcome</h1>
<a href="/next">Next page</a>
<form action="/submitted" method="post">
 <label>User <input name="user" id="user"></label>
 <label>Password <input type="password" name="pw" value="prefilled-pw-canary"></label>
 <button>Sign in</button>
</form>`)
	})
	mux.HandleFunc("/next", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Next</title><h2>Second page</h2><input id="q" name="q"><p>ready</p>`)
	})
	mux.HandleFunc("/submitted", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		fmt.Fprintf(w, `<!doctype html><title>Submitted</title><p>user=%s</p>`, html.EscapeString(r.PostForm.Get("user")))
	})
	mux.HandleFunc("/set", func(w http.ResponseWriter, r *http.Request) {
		v := r.URL.Query().Get("v")
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: v, Path: "/", MaxAge: 86400})
		fmt.Fprintf(w, `<!doctype html><title>Set</title><p id="done">set</p>
<script>localStorage.setItem("ls", %q);</script>`, v)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("sid")
		v := "none"
		if err == nil {
			v = c.Value
		}
		fmt.Fprintf(w, `<!doctype html><title>Echo</title><p>cookie=%s</p><p id="ls">storage=?</p>
<script>document.getElementById("ls").textContent = "storage=" + (localStorage.getItem("ls") || "none");</script>`, html.EscapeString(v))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}
