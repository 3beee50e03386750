//go:build linux

package tests

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// benchSite is the login site of the login benchmarks (tests/login_bench_test.go), the same
// shape as the demo's site (scripts/demosite): /login with username + password posting to
// /login; the right pair sets a session cookie and redirects (303) to /home, "Welcome ACCOUNT";
// a wrong pair shows the form again with role=alert "Invalid credentials"; /logout ends the
// session and redirects to /login. accepted counts the sign-ins with the right password, so a
// benchmark can check that the site really received it.
type benchSite struct {
	*httptest.Server
	siteBook // cookie bench_session
	accepted atomic.Int64
	refused  atomic.Int64
	reserved atomic.Int64 // reservations the shop accepted (the journey benchmark)
}

func newBenchSite(t testing.TB, account, password string) *benchSite {
	s := &benchSite{siteBook: newSiteBook(http.Cookie{Name: "bench_session", SameSite: http.SameSiteLaxMode})}
	s.SetAccount(account, password)
	signedIn := func(r *http.Request) bool { return s.account(r) != "" }
	form := func(w http.ResponseWriter, alert string) {
		htmlPage(w, "Sign in", "", signInForm("Sign in", "/login", alert))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) { form(w, "") })
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		u := r.PostForm.Get("username")
		if !s.check(u, r.PostForm.Get("password")) {
			s.refused.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			form(w, alertHTML)
			return
		}
		s.accepted.Add(1)
		s.signIn(w, u)
		http.Redirect(w, r, "/home", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		if !signedIn(r) {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>Home</title><h1>Welcome %s</h1><a href="/logout">Sign out</a>`, html.EscapeString(account))
	})
	// The journey benchmark's pages (journey_bench_test.go): a shop with a quantity field and
	// a Reserve button whose script posts to /api/reserve and shows "Reserved" and the stock
	// left (10 less the quantity: every page starts at 10, so runs never run out).
	mux.HandleFunc("GET /shop", func(w http.ResponseWriter, r *http.Request) {
		if !signedIn(r) {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Shop</title><h1>Shop</h1><p id="stock">Stock: 10</p>
<label>Quantity <input type="number" name="quantity" id="quantity"></label>
<button type="button" id="reserve">Reserve</button>
<p id="status" role="status"></p>`+reserveScript("reserve"))
	})
	mux.HandleFunc("POST /api/reserve", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Quantity int `json:"quantity"`
		}
		json.NewDecoder(io.LimitReader(r.Body, 1<<10)).Decode(&in)
		w.Header().Set("Content-Type", "application/json")
		if !signedIn(r) || in.Quantity < 1 || in.Quantity > 10 {
			fmt.Fprint(w, `{"ok":false,"stock":10}`)
			return
		}
		s.reserved.Add(1)
		fmt.Fprintf(w, `{"ok":true,"stock":%d}`, 10-in.Quantity)
	})
	// /big: a long page (a table of 600 rows, each a link, a text and a button: about 2,000
	// outline elements and 120 KB of outline), for the cost of reading a page.
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString("<h1>Orders</h1><table>")
		for i := range 600 {
			fmt.Fprintf(&b, `<tr><td><a href="/order/%d">Order %d</a></td><td>Shipped to Example Street %d, 12345 Town &amp; Country</td><td><button>Track %d</button></td></tr>`, i, i, i, i)
		}
		b.WriteString("</table>")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>Orders</title></head><body>%s</body></html>", b.String())
	})
	// /assets: a page of an application with 40 images, 8 scripts, 4 style sheets and 8 API
	// calls, each its own request: what the network guard holds after a sign-in.
	mux.HandleFunc("GET /assets", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<h1>Dashboard</h1>`)
		for i := range 4 {
			fmt.Fprintf(&b, `<link rel="stylesheet" href="/a/s%d.css">`, i)
		}
		for i := range 40 {
			fmt.Fprintf(&b, `<img src="/a/i%d.png" width="8" height="8" alt="">`, i)
		}
		for i := range 8 {
			fmt.Fprintf(&b, `<script src="/a/j%d.js"></script>`, i)
		}
		b.WriteString(`<p id="api">0</p>`)
		htmlPage(w, "Dashboard", "", b.String())
	})
	mux.HandleFunc("GET /a/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		switch {
		case strings.HasSuffix(r.URL.Path, ".js"):
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `fetch("/a/api.json").then(function (r) { return r.json(); }).then(function () { var p = document.getElementById("api"); p.textContent = +p.textContent + 1; });`)
		case strings.HasSuffix(r.URL.Path, ".css"):
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, `h1 { color: #333 }`)
		case strings.HasSuffix(r.URL.Path, ".json"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"ok":true}`)
		default:
			w.Header().Set("Content-Type", "image/png")
			w.Write(onePixelPNG)
		}
	})
	mux.HandleFunc("GET /logout", func(w http.ResponseWriter, r *http.Request) {
		s.signOut(w, r)
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// onePixelPNG is a 1×1 transparent PNG.
var onePixelPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")
