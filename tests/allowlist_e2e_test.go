//go:build linux

package tests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// reqLog is a test web server that records the paths it was asked for.
type reqLog struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newReqLog(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) *reqLog {
	l := &reqLog{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" { // asked for by the browser whenever it likes
			http.NotFound(w, r)
			return
		}
		l.mu.Lock()
		l.paths = append(l.paths, r.URL.Path)
		l.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *reqLog) Paths() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.paths...)
}

func (l *reqLog) hostPort() string { u, _ := url.Parse(l.URL); return u.Host }

// refOf finds the ref of the element whose text contains text in a snapshot.
func refOf(t *testing.T, e *env, text string) string {
	t.Helper()
	var snap struct {
		Elements []struct {
			Ref, Text string
		} `json:"elements"`
	}
	e.ok(t, &snap, "snapshot")
	for _, el := range snap.Elements {
		if strings.Contains(el.Text, text) {
			return el.Ref
		}
	}
	t.Fatalf("no element %q in %+v", text, snap.Elements)
	return ""
}

// TestNavigationAllowlistE2E: 'headless start --allow' confines every way a page can change
// documents — visit, redirects, links, forms, frames and popups — to the listed hosts, and
// says so with UNSAFE_NAVIGATION while the page stays where it was; subresources are not
// filtered (a navigation policy, not a firewall).
func TestNavigationAllowlistE2E(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	off := newReqLog(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><head><title>off-list</title></head><body>off the list</body></html>`)
	})
	offURL := off.URL
	var site *reqLog
	site = newReqLog(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redir":
			http.Redirect(w, r, offURL+"/redirected", http.StatusFound)
		case "/ok":
			fmt.Fprint(w, `<html><head><title>ok page</title></head><body><h1>on the list</h1></body></html>`)
		case "/frame":
			fmt.Fprintf(w, `<html><head><title>framed</title></head><body><iframe src="%s/in-frame"></iframe></body></html>`, offURL)
		case "/img":
			fmt.Fprintf(w, `<html><head><title>img</title></head><body><img src="%s/pixel.png"></body></html>`, offURL)
		default:
			fmt.Fprintf(w, `<html><head><title>start</title></head><body>
<a href="%[1]s/linked">off-list link</a>
<a href="/ok">on-list link</a>
<form method="post" action="%[1]s/posted"><button>off-list form</button></form>
<button onclick="const w = window.open('%[1]s/popup'); setTimeout(() => { document.title = w.closed ? 'popup closed' : 'popup open' }, 1500)">open popup</button>
</body></html>`, offURL)
		}
	})
	me := site.hostPort()
	_, port, _ := strings.Cut(me, ":")

	// Refused at once, before anything starts.
	for _, bad := range []string{"*", "https://" + me, me + "/x", "user@" + me, "bücher.test"} {
		r := e.run("", "headless", "start", "--allow", bad, "--json")
		if r.code != 2 || errCode(t, r) != "USAGE" {
			t.Errorf("start --allow %q: %+v; want USAGE", bad, r)
		}
	}

	r := e.run("", "headless", "start", "--allow", me, "--allow", "example.invalid", "--json")
	if r.code != 0 {
		t.Fatalf("start --allow: %+v", r)
	}
	var st struct {
		Host struct {
			Allow []string `json:"allow"`
		} `json:"host"`
	}
	e.ok(t, &st, "status")
	if !slices.Equal(st.Host.Allow, []string{me, "example.invalid"}) && !slices.Equal(st.Host.Allow, []string{"example.invalid", me}) {
		t.Fatalf("status allow = %v", st.Host.Allow)
	}
	hr := e.run("", "headless", "status")
	if !strings.Contains(hr.stdout, "navigation: only") {
		t.Errorf("status does not show the list: %s", hr.stdout)
	}

	// The same list is a no-op; another list is refused while the host runs.
	var again struct {
		Started bool `json:"started"`
	}
	e.ok(t, &again, "start", "--allow", "example.invalid,"+me)
	if again.Started {
		t.Fatal("start with the same list started something")
	}
	if r := e.run("", "headless", "start", "--allow", me, "--json"); r.code == 0 || errCode(t, r) != "INVALID_ARGUMENT" {
		t.Fatalf("start with another list while running: %+v", r)
	}
	e.ok(t, nil, "start") // no list asked for: no-op

	// visit: on the list works; off it (another host name for the same server) is refused
	// before a request is made; a redirect off it is refused and the page stays.
	lsVisit(t, e, site.URL+"/ok")
	n := len(site.Paths())
	e.fails(t, "UNSAFE_NAVIGATION", "visit", "http://localhost:"+port+"/ok")
	if len(site.Paths()) != n {
		t.Fatalf("the off-list visit reached the server: %v", site.Paths()[n:])
	}
	res := e.fails(t, "UNSAFE_NAVIGATION", "visit", site.URL+"/redir")
	if !strings.Contains(res.stdout, off.hostPort()) {
		t.Errorf("the refusal does not name the host: %s", res.stdout)
	}
	var sess struct {
		Sessions []struct{ Name, URL string } `json:"sessions"`
	}
	e.ok(t, &sess, "session", "list")
	if len(sess.Sessions) != 1 || sess.Sessions[0].URL != site.URL+"/ok" {
		t.Fatalf("after a refused redirect the page is %+v, want it where it was", sess.Sessions)
	}

	// Links, forms and popups: refused, the page stays, nothing reaches the other host.
	lsVisit(t, e, site.URL+"/")
	for _, what := range []string{"off-list link", "off-list form"} {
		e.fails(t, "UNSAFE_NAVIGATION", "click", refOf(t, e, what))
		e.ok(t, &sess, "session", "list")
		if sess.Sessions[0].URL != site.URL+"/" {
			t.Fatalf("after a refused %s the page is %q", what, sess.Sessions[0].URL)
		}
	}
	e.fails(t, "UNSAFE_NAVIGATION", "click", refOf(t, e, "open popup"))
	e.ok(t, nil, "wait", "--text", "popup closed", "--timeout", "10s")
	var page struct{ URL string }
	e.ok(t, &page, "click", refOf(t, e, "on-list link"))
	if page.URL != site.URL+"/ok" {
		t.Fatalf("on-list link: %+v", page)
	}
	// Other browser contexts obey it too (an isolated session; journeys' fresh contexts are
	// the same kind of context).
	e.ok(t, nil, "session", "create", "iso", "--isolated")
	e.fails(t, "UNSAFE_NAVIGATION", "visit", site.URL+"/redir", "--session", "iso")
	e.ok(t, nil, "session", "close", "iso")
	// Frames: the off-list frame's document is refused; the page itself loads.
	lsVisit(t, e, site.URL+"/frame")
	// Subresources are not filtered: a navigation policy, not a network firewall.
	lsVisit(t, e, site.URL+"/img")
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(off.Paths(), "/pixel.png") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := off.Paths()
	if !slices.Equal(got, []string{"/pixel.png"}) {
		t.Fatalf("the off-list server saw %v; want only the subresource /pixel.png", got)
	}

	e.ok(t, nil, "stop")

	// The config's list is a ceiling --allow can narrow, never widen.
	e.writeConfig(fmt.Sprintf(`{"allow":["127.0.0.1"]}`))
	if r := e.run("", "headless", "start", "--allow", "localhost", "--json"); r.code == 0 || errCode(t, r) != "INVALID_ARGUMENT" {
		t.Fatalf("start --allow wider than the config: %+v", r)
	}
	e.start(t)
	e.ok(t, &st, "status")
	if !slices.Equal(st.Host.Allow, []string{"127.0.0.1"}) {
		t.Fatalf("status allow from the config = %v", st.Host.Allow)
	}
	e.fails(t, "UNSAFE_NAVIGATION", "visit", "http://localhost:"+port+"/ok")
	lsVisit(t, e, site.URL+"/ok")
	e.ok(t, nil, "stop")
	if r := e.run("", "headless", "start", "--allow", me, "--json"); r.code != 0 {
		t.Fatalf("start --allow narrower than the config: %+v", r)
	}
}

// BenchmarkNavigationAllowlist: what the allowlist costs a navigation. Two users' hosts run
// side by side, one with an allowlist and one without, and visit the same local page in turn
// (interleaved, so both see the same machine load); it reports the median 'headless visit'
// command of each and their difference.
func BenchmarkNavigationAllowlist(b *testing.B) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><head><title>ok</title></head><body>ok</body></html>`)
	}))
	defer page.Close()
	host := strings.TrimPrefix(page.URL, "http://")
	with, without := newEnv(b, envOptions{}), newEnv(b, envOptions{})
	if r := with.run("", "headless", "start", "--allow", host, "--json"); r.code != 0 {
		b.Fatalf("start --allow: %+v", r)
	}
	without.start(b)
	var dw, dn []time.Duration
	visit := func(e *env) time.Duration {
		t0 := time.Now()
		if r := e.run("", "headless", "visit", page.URL+"/", "--json"); r.code != 0 {
			b.Fatalf("visit: %+v", r)
		}
		return time.Since(t0)
	}
	visit(with)
	visit(without)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dw = append(dw, visit(with))
		dn = append(dn, visit(without))
	}
	b.StopTimer()
	med := func(ds []time.Duration) time.Duration {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	mw, mn := med(dw), med(dn)
	b.ReportMetric(float64(mw.Microseconds())/1000, "ms/visit-allowlist")
	b.ReportMetric(float64(mn.Microseconds())/1000, "ms/visit-none")
	b.ReportMetric(float64((mw-mn).Microseconds())/1000, "ms/overhead")
}

// TestSignInUnderAllowlist: the allowlist's browser-wide interception and the sign-in's own
// navigation gate (both Fetch) work together: a sign-in on a listed origin completes, and a
// navigation the page starts while the host types is still held and aborted.
func TestSignInUnderAllowlist(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	hs := newHostileSite(t)
	const account = "alice@example.test"
	canary := newCanary()
	hs.SetAccount(account, canary)
	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, hs.Origin(), "main", account, canary)
	if r := e.run("", "headless", "start", "--allow", "127.0.0.1", "--json"); r.code != 0 {
		t.Fatalf("start --allow: %+v", r)
	}
	e.ok(t, nil, "visit", hs.URL("/login-reveal"))
	var a lsAuth
	e.ok(t, &a, "auth", "login", "--alias", "main")
	if a.Status != "authenticated" {
		t.Fatalf("auth login under the allowlist: %+v", a)
	}
	e.ok(t, nil, "visit", hs.URL("/login-navfocus"))
	before := len(hs.AgentLog())
	// Another path of the origin than the first sign-in's: the person is asked for it as new.
	if r := e.run("", "headless", "auth", "login", "--alias", "main", "--new-login-path", "--json"); r.code == 0 || errCode(t, r) != "DOCUMENT_CHANGED" {
		t.Errorf("auth login on a page that navigates when the password field is focused, under the allowlist: %+v", r)
	}
	time.Sleep(300 * time.Millisecond)
	for _, l := range hs.AgentLog()[before:] {
		if strings.Contains(l, "/trap") {
			t.Errorf("the agent's server got %q while the host typed", l)
		}
	}
	assertNoCanary(t, "every output", e.allOutput(), canary)
}
