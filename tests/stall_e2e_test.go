//go:build linux

package tests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// stormSite serves the pages an agent can use to keep the browser busy:
//
//	/basic     401 with a Basic challenge
//	/storm     30 frames, each loaded again at /basic every 25 ms (a challenge storm)
//	/topstorm  the main frame itself challenged again and again (a 401 page that reloads)
//	/dialogs   an alert, confirm and prompt after another, from the page and 10 frames
//	/stormdialogs  both
//	/spin      a page whose script never yields (while (true) {}), from 50 ms after it began
//	/spinnow   the same from the start, before its load
func newStormSite(t testing.TB) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /basic", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="storm"`)
		w.WriteHeader(http.StatusUnauthorized)
		lsPage(w, "Unauthorized", "<h1>401</h1>")
	})
	mux.HandleFunc("GET /topstorm", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="storm"`)
		w.WriteHeader(http.StatusUnauthorized)
		lsPage(w, "Unauthorized", `<h1>401</h1><script>setTimeout(function(){ location.reload(); }, 10);</script>`)
	})
	// storm is 30 frames, each loaded again at /basic every 25 ms, and then extra.
	storm := func(extra string) string {
		var b strings.Builder
		for i := 0; i < 30; i++ {
			fmt.Fprintf(&b, `<iframe src="/basic?f=%d"></iframe>`, i)
		}
		return "<h1>Storm</h1>" + b.String() + `<script>
var n = 0;
setInterval(function () {
  var fs = document.querySelectorAll("iframe");
  for (var i = 0; i < fs.length; i++) { fs[i].src = "/basic?f=" + i + "&n=" + (n++); }
}, 25);
` + extra + `</script>`
	}
	mux.HandleFunc("GET /storm", func(w http.ResponseWriter, r *http.Request) { lsPage(w, "Storm", storm("")) })
	mux.HandleFunc("GET /dialog", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Dialog", `<script>
setInterval(function () { alert("a"); confirm("c"); prompt("p", "x"); }, 1);
</script>`)
	})
	mux.HandleFunc("GET /dialogs", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		for i := 0; i < 10; i++ {
			b.WriteString(`<iframe src="/dialog"></iframe>`)
		}
		lsPage(w, "Dialogs", "<h1>Dialogs</h1>"+b.String()+`<script>
setInterval(function () { alert("a"); confirm("c"); prompt("p", "x"); }, 1);
</script>`)
	})
	// /stormdialogs: the storm with a dialog always open (a page stopped or closed with a
	// dialog waiting for its DevTools answer ended the whole browser in SIGSEGV).
	mux.HandleFunc("GET /stormdialogs", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Storm", storm(`setTimeout(function () { setInterval(function () { alert("a"); }, 1); }, 100);`+"\n"))
	})
	mux.HandleFunc("GET /spin", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Spin", `<h1>Spin</h1><script>setTimeout(function () { while (true) {} }, 50);</script>`)
	})
	mux.HandleFunc("GET /spinnow", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Spin", `<h1>Spin</h1><script>while (true) {}</script>`)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// bounded runs headless args and fails t when it does not exit within limit (it is then
// killed). It returns the result and how long it took.
func (e *env) bounded(t *testing.T, limit time.Duration, args ...string) (result, time.Duration) {
	t.Helper()
	cmd := e.command("headless", withJSON(args)...)
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Errorf("headless %v: no answer within %v", args, limit)
		return result{code: -1}, time.Since(t0)
	}
	r := result{stdout: so.String(), stderr: se.String(), code: exitCode(t, err)}
	e.record(r.stdout, r.stderr)
	return r, time.Since(t0)
}

// TestHostilePageStallsNoOneElse: one session's page does its worst — a storm of HTTP Basic
// challenges from 30 frames every 25 ms, the main frame challenged again and again, a storm
// of alert/confirm/prompt dialogs from the page and its frames, a script that never yields —
// and in another session 'session create', 'visit', 'auth login', 'snapshot', 'session
// close', and 'status' answer within their bounds, each time; the hostile session itself
// answers 'snapshot' and 'session close' within theirs; 'stop' ends it all (issue 30: a
// challenge storm left 'session create' elsewhere unanswered for 30 s and an
// 'auth login --code-only' hanging 632 s).
func TestHostilePageStallsNoOneElse(t *testing.T) {
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	storm := newStormSite(t)
	const account = "alice@example.test"
	canary := newCanary()
	ls.SetAccount(account, canary)
	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 10)
	lsEnroll(t, e, ls.Origin(), "main", account, canary)
	e.start(t)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(e.runDir(), "host.log"))
			t.Logf("host.log (last 6000 bytes):\n%s", b[max(0, len(b)-6000):])
		}
	})

	// The others' bounds: generous against a loaded CI machine, far below the minutes the
	// storms cost before.
	const quick = 20 * time.Second
	const login = 40 * time.Second
	// The hostile session's own verbs answer within the host's overall deadline of a verb
	// (host.VerbWait, 45 s), and so does the first after a sign-in's look (host.LookWait).
	const own = 60 * time.Second
	cases := []struct {
		page string
		// visit and snapshot: what the hostile session's own visit and its later snapshot
		// answer ("" the page as it is, a code the error).
		visit, snapshot string
		// either: the page is stopped during its visit or before the snapshot after it:
		// one of them answers PAGE_STOPPED, the other success.
		either bool
		// held: a dialog holds the page (issue 44): each answers with it, or PAGE_STOPPED
		// once the page opened one again right after the host dismissed one unanswered
		// (20 s: how far the rounds beside it got decides which).
		held bool
	}{
		{page: "/storm", visit: "PAGE_STOPPED"},
		{page: "/topstorm"},
		// A page of dialog loops: its first dialog is held for the agent (issue 44), which
		// holds the page's script with it (nothing loops while it is open; a page that
		// opens one again right after one the host dismissed is stopped:
		// TestDialogUnansweredAndLooping); the visit and the snapshot answer with the
		// dialog, and a visit away dismisses it and leaves.
		{page: "/dialogs", held: true},
		// The storm with a dialog: the dialog holds the page's script, and the storm with
		// it, or the storm's budget stops the page first (Chromium 156 ended in SIGSEGV,
		// every session with it, when a page was stopped with a dialog waiting, before the
		// host quieted a page before it goes: cdp.Quiet).
		{page: "/stormdialogs", held: true},
		// Stopped at its verb's deadline: the snapshot's, or, on a loaded machine, the
		// visit's own when the script starts before the visit has read the page (before its
		// load, even: then the visit stops the page it found stuck, TestVisitStuckPage).
		{page: "/spin", either: true},
	}
	// codeOf is a command's error code: "" for a success, NO_ANSWER for one killed at its
	// bound (bounded has failed t already).
	codeOf := func(t *testing.T, r result) string {
		switch r.code {
		case 0:
			return ""
		case -1:
			return "NO_ANSWER"
		}
		return errCode(t, r)
	}
	for i, c := range cases {
		page := c.page
		t.Run(strings.TrimPrefix(page, "/"), func(t *testing.T) {
			bad, good := fmt.Sprintf("bad%d", i), fmt.Sprintf("good%d", i)
			if r, _ := e.bounded(t, quick, "session", "create", bad); r.code != 0 {
				t.Fatalf("session create %s: %+v", bad, r)
			}
			r, d := e.bounded(t, own, "visit", storm.URL+page, "--session", bad)
			t.Logf("visit %s: exit %d in %v: %.300s%.300s", page, r.code, d.Round(time.Millisecond), r.stdout, r.stderr)
			visitCode := codeOf(t, r)
			if c.either && visitCode == "" {
				c.snapshot = "PAGE_STOPPED"
			} else if c.either {
				c.visit = "PAGE_STOPPED"
			}
			if c.held && visitCode == "PAGE_STOPPED" {
				c.visit, c.snapshot = visitCode, ""
			}
			if visitCode != c.visit {
				t.Errorf("visit %s answered %q, want %q", page, visitCode, c.visit)
			}
			time.Sleep(2 * time.Second) // let the storm build
			for round := 0; round < 2; round++ {
				steps := [][]string{
					{"status"},
					{"session", "create", good},
					{"visit", ls.URL("/login"), "--session", good},
					{"auth", "login", "--alias", "main", "--session", good},
					{"snapshot", "--session", good},
					{"session", "close", good},
				}
				for _, args := range steps {
					limit := quick
					if args[0] == "auth" {
						limit = login
					}
					r, d := e.bounded(t, limit, args...)
					if r.code != 0 {
						t.Errorf("round %d: headless %v beside %s: exit %d in %v: %s%s", round, args, page, r.code, d.Round(time.Millisecond), r.stdout, r.stderr)
					} else {
						t.Logf("round %d: headless %v: %v", round, args, d.Round(time.Millisecond))
					}
				}
			}
			r, d = e.bounded(t, own, "snapshot", "--session", bad)
			t.Logf("snapshot of %s: exit %d in %v: %.300s%.300s", page, r.code, d.Round(time.Millisecond), r.stdout, r.stderr)
			if got := codeOf(t, r); got != c.snapshot && !(c.held && got == "PAGE_STOPPED" && c.visit == "") {
				t.Errorf("snapshot of %s answered %q, want %q", page, got, c.snapshot)
			}
			// The hostile session can leave its page: a visit elsewhere loads (after
			// PAGE_STOPPED once, when the page was stopped). In the soak, a page of dialog
			// loops let no navigation away from it finish (TIMEOUT, twice, 30 s each).
			for try := 0; ; try++ {
				r, d = e.bounded(t, own, "visit", ls.URL("/login"), "--session", bad)
				t.Logf("visit away from %s: exit %d in %v: %.300s%.300s", page, r.code, d.Round(time.Millisecond), r.stdout, r.stderr)
				if got := codeOf(t, r); got == "PAGE_STOPPED" && try == 0 {
					continue
				} else if got != "" {
					t.Errorf("visit away from %s answered %q, want a page", page, got)
				}
				break
			}
			r, d = e.bounded(t, quick, "session", "close", bad)
			if r.code != 0 {
				t.Errorf("session close %s (%s): exit %d in %v: %s%s", bad, page, r.code, d, r.stdout, r.stderr)
			}
		})
	}
	if r, _ := e.bounded(t, quick, "stop"); r.code != 0 {
		t.Errorf("stop: %+v", r)
	}
	if strings.Contains(e.allOutput(), canary) {
		t.Error("the password is in an output")
	}
}

// TestVisitStuckPage: a page whose script never yields from before its load never loads; the
// visit answers PAGE_STOPPED once its bound and StuckWait (5 s) have passed, not TIMEOUT with
// a hint to wait longer, and the session's next command finds a fresh blank page at once
// instead of waiting on the stuck one to that command's deadline (45 s). A page that is only
// slow to load answers TIMEOUT as before, and stays.
func TestVisitStuckPage(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	storm := newStormSite(t)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/img" {
			time.Sleep(8 * time.Second) // the page's load waits for it
			return
		}
		lsPage(w, "Slow", `<h1>Slow</h1><img src="/img" alt="">`)
	}))
	t.Cleanup(slow.Close)
	e.start(t)

	r, d := e.bounded(t, 60*time.Second, "visit", storm.URL+"/spinnow", "--timeout", "3s", "--json")
	if code := errCode(t, r); r.code == 0 || code != "PAGE_STOPPED" || !strings.Contains(r.stdout, "never yields") {
		t.Errorf("visit of a page that never yields: exit %d in %v: %s%s; want PAGE_STOPPED", r.code, d.Round(time.Millisecond), r.stdout, r.stderr)
	}
	r, d = e.bounded(t, 20*time.Second, "snapshot", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, "about:blank") {
		t.Errorf("snapshot after the stuck page: exit %d in %v: %s%s; want the fresh blank page", r.code, d.Round(time.Millisecond), r.stdout, r.stderr)
	}

	r, _ = e.bounded(t, 60*time.Second, "visit", slow.URL+"/", "--timeout", "3s", "--json")
	if code := errCode(t, r); r.code == 0 || code != "TIMEOUT" {
		t.Errorf("visit of a page slow to load: %s%s; want TIMEOUT", r.stdout, r.stderr)
	}
	if r := e.run("", "headless", "snapshot", "--json"); r.code != 0 || !strings.Contains(r.stdout, "Slow") {
		t.Errorf("snapshot of the slow page: %s%s; want the page, kept", r.stdout, r.stderr)
	}
}
