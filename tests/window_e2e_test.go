//go:build linux

package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// The pages a person acts on during a hand-over: a sign-in whose password field the person
// can show in clear (a checkbox, as many sites have), and one whose script writes what is typed
// into the page's text.
func handoverSite(t testing.TB) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/signin", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Sign in by hand</title><h1>Sign in</h1>
<label>Secret <input id="k" name="k" type="password" autofocus></label>
<label><input id="show" type="checkbox" onchange="document.getElementById('k').type = this.checked ? 'text' : 'password'"> Show</label>
<button id="go" type="button">Continue</button>`)
	})
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Log in</title><h1>Log in</h1><form method="post" action="/login">
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button>Log in</button></form>`)
	})
	mux.HandleFunc("/echoing", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Echoing</title><h1>Code</h1>
<label>Code <input id="k" name="k" type="password" autofocus oninput="document.getElementById('said').textContent = this.value.length >= 12 ? 'you typed ' + this.value : ''"></label>
<p id="said"></p>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// handover runs 'headless handover' in the background; the result arrives on the channel.
func (e *env) handover(session, reason string) <-chan result {
	out := make(chan result, 1)
	go func() { out <- e.run("", "headless", "handover", session, "--reason", reason, "--json") }()
	return out
}

// confirms waits (bounded) until the fake pinentry at logFile was asked n times in all.
func confirms(t *testing.T, logFile string, n int) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if count(presencetest.Received(t, logFile), "CONFIRM") >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the person was never asked (prompt %d); the pinentry received %q", n, presencetest.Received(t, logFile))
		}
	}
}

func count(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

// handoverStatus decodes a finished 'headless handover --json'.
func handoverStatus(t *testing.T, r result) string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("handover: %+v", r)
	}
	var out struct{ Status, Session string }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("handover output %q", r.stdout)
	}
	return out.Status
}

// TestWindowX11: with --window on an X11 display (Xvfb) each session is a window titled with
// its name; a hand-over is the person's answer at brokerd's prompt (done, declined); while it
// waits every verb of the agent on that session answers HANDED_OVER and the other sessions
// work; afterwards what the person typed into a secret field is never shown to the agent,
// even when the person shows it in clear or the page writes it into its text.
func TestWindowX11(t *testing.T) {
	parallel(t)
	display := xvfb(t)
	e := newEnv(t, envOptions{})
	program, logFile := presencetest.FakePinentry(t, "switch")
	e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"pinentry","program":%q,"timeout_seconds":5,"handover_timeout_seconds":120,"display":%q}}`, program, display))
	srv := handoverSite(t)

	var started struct {
		Host struct{ Window string }
	}
	e.ok(t, &started, "start", "--window")
	if started.Host.Window != "x11" {
		t.Fatalf("start --window: the host's window is %q, want x11", started.Host.Window)
	}
	x11Window(t, display, "default")
	e.ok(t, nil, "session", "create", "shop")
	shop := x11Window(t, display, "shop")
	e.ok(t, nil, "session", "create", "iso", "--isolated")
	e.ok(t, nil, "visit", srv.URL+"/signin", "--session", "shop")

	// Hand over; the person takes their time.
	hold := logFile + ".hold"
	if err := os.WriteFile(hold, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	done := e.handover("shop", "sign in by hand, please")
	confirms(t, logFile, 1)
	prompt := presencetest.Prompts(t, logFile)[0]
	for _, part := range []string{`browser session "shop"`, `"sign in by hand, please"`, `titled "Sign in by hand"`, srv.URL + "/signin", "Press Done"} {
		if !strings.Contains(prompt, part) {
			t.Errorf("the person's prompt %q does not say %q", prompt, part)
		}
	}
	for _, verb := range [][]string{{"snapshot"}, {"screenshot"}, {"wait", "--text", "Sign in", "--timeout", "2s"}, {"click", "e1"},
		{"visit", srv.URL + "/echoing"}, {"auth", "login", "--alias", "x"}, {"console", "list"}, {"network", "list"}, {"session", "pages"}} {
		e.fails(t, "HANDED_OVER", append(verb, "--session", "shop")...)
	}
	e.fails(t, "HANDED_OVER", "handover", "shop", "--reason", "again")
	e.fails(t, "HANDED_OVER", "session", "close", "shop")
	e.fails(t, "HANDED_OVER", "profile", "clear", "--yes")
	var list struct {
		Sessions []struct {
			Name, URL, Title string
			HandedOver       bool `json:"handed_over"`
		}
	}
	e.ok(t, &list, "session", "list")
	for _, s := range list.Sessions {
		if s.Name == "shop" && (!s.HandedOver || s.URL != "" || s.Title != "") {
			t.Errorf("session list shows the handed-over session as %+v", s)
		}
	}
	// Other sessions work meanwhile.
	e.ok(t, nil, "visit", srv.URL+"/echoing", "--session", "iso")
	e.ok(t, nil, "snapshot", "--session", "default")

	// The person types a secret into the window and shows it in clear.
	const canary = "person-typed-Canary-7q1"
	if _, err := x11(t, display, "xdotool", "windowfocus", "--sync", shop); err != nil {
		t.Fatal(err)
	}
	if out, err := x11(t, display, "xdotool", "type", "--delay", "40", canary); err != nil {
		t.Fatalf("xdotool type: %v %s", err, out)
	}
	x11(t, display, "xdotool", "key", "Tab", "space")
	os.Remove(hold)
	if st := handoverStatus(t, <-done); st != "done" {
		t.Fatalf("handover = %q, want done", st)
	}

	// The page is the agent's again, and the secret is not shown to it.
	r := e.run("", "headless", "snapshot", "--session", "shop", "--json")
	if r.code != 0 || strings.Contains(r.stdout, canary) {
		t.Fatalf("snapshot after the hand-over: %+v", r)
	}
	if !strings.Contains(r.stdout, `"Show"`) {
		t.Fatalf("the snapshot does not show the page: %s", r.stdout)
	}
	e.fails(t, "SECRET_ON_PAGE", "screenshot", "--session", "shop")
	e.fails(t, "TIMEOUT", "wait", "--text", canary, "--timeout", "1s", "--session", "shop")

	// Declined: the person says no.
	e.ok(t, nil, "visit", srv.URL+"/echoing", "--session", "shop")
	os.WriteFile(logFile+".deny", nil, 0o600)
	if st := handoverStatus(t, <-e.handover("shop", "approve it on your phone")); st != "declined" {
		t.Fatalf("handover = %q, want declined", st)
	}
	os.Remove(logFile + ".deny")

	// A page that writes what the person typed into its text: every output of it is refused.
	os.WriteFile(hold, nil, 0o600)
	done = e.handover("shop", "type the code")
	confirms(t, logFile, 3)
	const code = "code-Canary-from-person-55"
	x11(t, display, "xdotool", "windowfocus", "--sync", shop)
	x11(t, display, "xdotool", "type", "--delay", "40", code)
	os.Remove(hold)
	if st := handoverStatus(t, <-done); st != "done" {
		t.Fatalf("handover = %q, want done", st)
	}
	e.fails(t, "SECRET_ON_PAGE", "snapshot", "--session", "shop")

	// Every hand-over is in the audit log, and no output of the agent's holds what was typed.
	a := e.run("", "headless", "audit", "list", "--json")
	if n := strings.Count(a.stdout, `"op":"handover"`); n != 3 || !strings.Contains(a.stdout, `"decision":"done"`) || !strings.Contains(a.stdout, `"decision":"declined"`) {
		t.Errorf("audit: %d hand-overs in %s", n, a.stdout)
	}
	if out := e.allOutput(); strings.Contains(out, canary) || strings.Contains(out, code) {
		t.Fatal("an output of the agent's holds what the person typed")
	}

	// No password is typed into a window on X11, where any X client can type a javascript: URL
	// into its address bar and read the field: X11_WINDOW before anyone is asked.
	const saved = "X11-Saved-Canary-pw-31"
	lsEnroll(t, e, srv.URL, "x11", "alice", saved)
	asked := len(presencetest.Prompts(t, logFile))
	e.ok(t, nil, "visit", srv.URL+"/login", "--session", "shop")
	e.fails(t, "X11_WINDOW", "auth", "login", "--alias", "x11", "--session", "shop")
	if n := len(presencetest.Prompts(t, logFile)); n != asked {
		t.Errorf("the person was asked %d more time(s) for a sign-in that could not be typed", n-asked)
	}
	if out := e.allOutput(); strings.Contains(out, saved) {
		t.Fatal("an output holds the saved password")
	}
}

// TestWindowWayland: on a Wayland compositor (weston, headless) the browser is a Wayland
// client whose windows carry the sessions' names; a hand-over works as under X11.
func TestWindowWayland(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	socket, protoLog := westonHeadless(t, filepath.Join(e.root, "run"))
	program, logFile := presencetest.FakePinentry(t, "approve")
	e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"pinentry","program":%q,"timeout_seconds":5,"wayland_display":%q}}`, program, socket))
	var started struct {
		Host struct{ Window string }
	}
	e.ok(t, &started, "start", "--window")
	if started.Host.Window != "wayland" {
		t.Fatalf("start --window: the host's window is %q, want wayland", started.Host.Window)
	}
	e.ok(t, nil, "session", "create", "shop")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		titles := waylandTitles(t, protoLog)
		if slices.Contains(titles, "default") && slices.Contains(titles, "shop") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("window titles on the compositor: %q, want default and shop", titles)
		}
	}
	if st := handoverStatus(t, <-e.handover("shop", "press the key")); st != "done" {
		t.Fatalf("handover = %q, want done", st)
	}
	if env := presencetest.Env(t, logFile); len(env) != 1 || !slices.Contains(env[0], "WAYLAND_DISPLAY="+socket) {
		t.Errorf("the prompt was not drawn where the windows are: %q", env)
	}
}

// TestWindowNeedsADisplay: --window without a display of the person's is NO_DISPLAY, and no
// host starts (never a silent headless start); a DISPLAY in the agent's own environment does
// not count (brokerd, started by headless, takes none from it).
func TestWindowNeedsADisplay(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	e.vars = append(e.vars, "DISPLAY=:0", "WAYLAND_DISPLAY=wayland-0")
	e.fails(t, "NO_DISPLAY", "start", "--window")
	var st struct{ Host struct{ Running bool } }
	if e.ok(t, &st, "status"); st.Host.Running {
		t.Fatal("a host runs after start --window failed NO_DISPLAY")
	}
	e.writeConfig(`{"window":true}`)
	e.stopBroker() // the config is read when brokerd starts
	e.fails(t, "NO_DISPLAY", "start")
}

// TestHandoverWithoutWindow: a browser without windows hands over only where no window could
// be shown (no display: the prompt names the page and says so, for what the person does
// elsewhere), and refuses NO_WINDOW where one could; nobody answering is PRESENCE_TIMEOUT.
func TestHandoverWithoutWindow(t *testing.T) {
	parallel(t)
	srv := handoverSite(t)
	t.Run("no display", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		program, logFile := presencetest.FakePinentry(t, "switch")
		e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"pinentry","program":%q,"timeout_seconds":2,"handover_timeout_seconds":4}}`, program))
		e.start(t)
		e.ok(t, nil, "visit", srv.URL+"/signin")
		if st := handoverStatus(t, <-e.handover("default", "approve the sign-in on your phone")); st != "done" {
			t.Fatalf("handover = %q, want done", st)
		}
		prompt := presencetest.Prompts(t, logFile)[0]
		for _, part := range []string{"has no window here", "elsewhere", srv.URL + "/signin", `"Sign in by hand"`} {
			if !strings.Contains(prompt, part) {
				t.Errorf("prompt %q does not say %q", prompt, part)
			}
		}
		os.WriteFile(logFile+".hold", nil, 0o600)
		r := <-e.handover("default", "nobody is there")
		if r.code == 0 || errCode(t, r) != "PRESENCE_TIMEOUT" {
			t.Fatalf("handover nobody answered: %+v", r)
		}
		os.Remove(logFile + ".hold")
		e.ok(t, nil, "snapshot") // the page is the agent's again
	})
	t.Run("a display but no window", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		program, logFile := presencetest.FakePinentry(t, "approve")
		e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"pinentry","program":%q,"timeout_seconds":5,"display":":99"}}`, program))
		e.start(t)
		r := <-e.handover("default", "solve it")
		if r.code == 0 || errCode(t, r) != "NO_WINDOW" || len(presencetest.Prompts(t, logFile)) != 0 {
			t.Fatalf("handover without a window: %+v", r)
		}
	})
}
