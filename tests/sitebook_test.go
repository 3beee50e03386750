//go:build linux

package tests

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"sync"
)

// The scaffold every sign-in test site is built on (loginSite, hostileSite, echoSite,
// benchSite): the sites differ in their pages, not in how they keep accounts, sessions and what
// they received.

// siteBook is a test site's bookkeeping: the accounts it accepts, its signed-in sessions (one
// cookie), and every credential submission it received. mu guards the site's own fields too.
type siteBook struct {
	cookie http.Cookie // the session cookie's name and attributes (a persistent one has MaxAge)

	mu       sync.Mutex
	accounts map[string]string // account → the password the site accepts
	sessions map[string]string // session cookie → account
	posts    []loginPost
}

// loginPost is one credential submission received by a site.
type loginPost struct {
	Server   string // which of the site's servers: "main", "other", "site"
	Path     string
	Username string
	Password string
}

func (p loginPost) String() string {
	return fmt.Sprintf("%s %s user=%q password(%d bytes)", p.Server, p.Path, p.Username, len(p.Password))
}

func newSiteBook(cookie http.Cookie) siteBook {
	return siteBook{cookie: cookie, accounts: map[string]string{}, sessions: map[string]string{}}
}

// SetAccount makes the site accept password for account.
func (b *siteBook) SetAccount(account, password string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.accounts[account] = password
}

// check reports whether password is the one the site accepts for account.
func (b *siteBook) check(account, password string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	want, ok := b.accounts[account]
	return ok && want != "" && want == password
}

func (b *siteBook) record(p loginPost) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.posts = append(b.posts, p)
}

// Posts returns a copy of every credential submission received so far, in order.
func (b *siteBook) Posts() []loginPost {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]loginPost(nil), b.posts...)
}

// signIn starts a session for account: a fresh cookie.
func (b *siteBook) signIn(w http.ResponseWriter, account string) {
	sid := "s" + rand.Text()
	b.mu.Lock()
	b.sessions[sid] = account
	b.mu.Unlock()
	c := b.cookie
	c.Value, c.Path, c.HttpOnly = sid, "/", true
	http.SetCookie(w, &c)
}

// answer is a sign-in form's answer to account and password: signed in and sent home, or the
// form's error page.
func (b *siteBook) answer(w http.ResponseWriter, r *http.Request, account, password string) {
	if !b.check(account, password) {
		htmlPage(w, "Sign in", "", `<p role="alert">Invalid credentials</p>`)
		return
	}
	b.signIn(w, account)
	http.Redirect(w, r, "/home", http.StatusSeeOther)
}

// home is the page a signed-in session lands on: it greets the session's account.
func (b *siteBook) home(w http.ResponseWriter, r *http.Request) {
	htmlPage(w, "Home", "", `<h1>Welcome `+html.EscapeString(b.account(r))+`</h1>`)
}

// account is the account signed in on r's session, "" when none.
func (b *siteBook) account(r *http.Request) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.accountLocked(r)
}

func (b *siteBook) accountLocked(r *http.Request) string {
	c, err := r.Cookie(b.cookie.Name)
	if err != nil {
		return ""
	}
	return b.sessions[c.Value]
}

// signOut ends r's session.
func (b *siteBook) signOut(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(b.cookie.Name); err == nil {
		b.mu.Lock()
		delete(b.sessions, c.Value)
		b.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: b.cookie.Name, Value: "", Path: "/", MaxAge: -1})
}

// formLogin is a sign-in form's POST handler at path: the account and password from the
// form fields named user and pw, recorded as from server, answered as answer does.
func (b *siteBook) formLogin(server, path, user, pw string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		u, p := r.PostForm.Get(user), r.PostForm.Get(pw)
		b.record(loginPost{server, path, u, p})
		b.answer(w, r, u, p)
	}
}

// apiLogin is the JSON sign-in of the script-driven pages (POST /api/login
// {"username","password"}): recorded as from server, a session on success, {"ok":bool}.
func (b *siteBook) apiLogin(server string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Username, Password string }
		json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&in)
		b.record(loginPost{server, "/api/login", in.Username, in.Password})
		ok := b.check(in.Username, in.Password)
		if ok {
			b.signIn(w, in.Username)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, `{"ok":%v}`, ok)
	}
}

// htmlPage writes a UTF-8 HTML document: title (escaped), then head and body as given.
func htmlPage(w http.ResponseWriter, title, head, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><html><head><meta charset=\"utf-8\"><title>%s</title>%s</head><body>%s</body></html>",
		html.EscapeString(title), head, body)
}

// alertHTML is how the sites say a sign-in failed.
const alertHTML = `<p role="alert" id="error">Invalid credentials</p>`

// signInForm is the ordinary sign-in form: an email and a password field posting to action,
// after alert (alertHTML or "").
func signInForm(heading, action, alert string) string {
	return alert + `<h1>` + heading + `</h1>
<form method="post" action="` + action + `">
 <label>Email <input type="email" name="username" autocomplete="username"></label>
 <label>Password <input type="password" name="password" autocomplete="current-password"></label>
 <button type="submit">Sign in</button>
</form>`
}

// reserveScript is the shop's Reserve button (id button): it posts the quantity to
// /api/reserve and shows "Reserved" or "Not enough stock" and the stock left.
func reserveScript(button string) string {
	return `<script>
document.getElementById("` + button + `").addEventListener("click", function () {
  var q = Number(document.getElementById("quantity").value);
  fetch("/api/reserve", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({quantity: q})})
  .then(function (r) { return r.json(); })
  .then(function (j) {
    document.getElementById("status").textContent = j.ok ? "Reserved" : "Not enough stock";
    document.getElementById("stock").textContent = "Stock: " + j.stock;
  });
});
</script>`
}
