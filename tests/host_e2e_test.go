//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func (e *env) start(t testing.TB) map[string]any {
	t.Helper()
	r := e.run("", "headless", "start", "--json")
	if r.code != 0 {
		t.Fatalf("start: %+v", r)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("start output %q", r.stdout)
	}
	return m
}

// ok runs a headless command that must succeed and decodes its --json output.
// withJSON adds --json before a "--" (after which everything is literal text).
func withJSON(args []string) []string {
	for i, a := range args {
		if a == "--" {
			return append(append(append([]string(nil), args[:i]...), "--json"), args[i:]...)
		}
	}
	return append(append([]string(nil), args...), "--json")
}

func (e *env) ok(t testing.TB, v any, args ...string) {
	t.Helper()
	r := e.run("", "headless", withJSON(args)...)
	if r.code != 0 {
		t.Fatalf("headless %v: %+v", args, r)
	}
	if v != nil {
		// Decoded into a zero value: an answer that leaves a field out must not show the
		// last answer's (a cursor's next page, an error).
		if p := reflect.ValueOf(v); p.Kind() == reflect.Pointer && !p.IsNil() {
			p.Elem().SetZero()
		}
		if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
			t.Fatalf("headless %v output %q: %v", args, r.stdout, err)
		}
	}
}

// fails runs a headless command that must fail with code.
func (e *env) fails(t *testing.T, code string, args ...string) result {
	t.Helper()
	r := e.run("", "headless", withJSON(args)...)
	if r.code == 0 || errCode(t, r) != code {
		t.Fatalf("headless %v: %+v, want %s", args, r, code)
	}
	return r
}

type outline struct {
	Session   string `json:"session"`
	URL       string `json:"url"`
	Untrusted string `json:"untrusted"`
	Elements  []struct {
		Ref, Kind, Text, Type, Name, Value, Href, Form string
		ActionOrigin                                   string   `json:"action_origin"`
		Options                                        []string `json:"options"`
		Multiple                                       bool     `json:"multiple"`
	} `json:"elements"`
	Truncated bool `json:"truncated"`
}

func (o outline) ref(t testing.TB, kind, text string) string {
	t.Helper()
	for _, e := range o.Elements {
		if e.Kind == kind && (text == "" || strings.Contains(e.Text, text) || e.Name == text) {
			return e.Ref
		}
	}
	t.Fatalf("no %s %q in %+v", kind, text, o.Elements)
	return ""
}

func TestStartIsIdempotentAndStatusReports(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	first := e.start(t)
	if first["started"] != true {
		t.Fatalf("first start: %v", first)
	}
	second := e.start(t)
	if second["started"] != false {
		t.Fatalf("second start: %v", second)
	}
	h1, _ := first["host"].(map[string]any)
	h2, _ := second["host"].(map[string]any)
	if h1["pid"] != h2["pid"] || first["broker_pid"] != second["broker_pid"] {
		t.Fatalf("second start changed processes: %v vs %v", first, second)
	}
	var st struct {
		Host struct {
			Running    bool   `json:"running"`
			PID        int    `json:"pid"`
			Chromium   string `json:"chromium"`
			BrowserPID int    `json:"browser_pid"`
			Profile    string `json:"profile"`
			LockOwner  int    `json:"lock_owner"`
		} `json:"host"`
		Broker struct {
			Running bool `json:"running"`
			PID     int  `json:"pid"`
		} `json:"broker"`
	}
	e.ok(t, &st, "status")
	if !st.Host.Running || !st.Broker.Running || st.Host.LockOwner != st.Host.PID || st.Host.BrowserPID == 0 ||
		!strings.Contains(st.Host.Chromium, "Chrome/") || st.Host.Profile != filepath.Join(e.root, "data", "headless", "profile") {
		t.Fatalf("status %+v", st)
	}
	fi, err := os.Stat(st.Host.Profile)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("profile dir: %v %v", fi.Mode(), err)
	}
	fi, err = os.Stat(filepath.Join(e.runDir(), "control.sock"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("control.sock: %v %v", fi.Mode(), err)
	}
	// stop, then status says nothing runs; a second stop is a no-op success.
	e.ok(t, nil, "stop")
	e.ok(t, &st, "status")
	if st.Host.Running || st.Broker.Running {
		t.Fatalf("after stop: %+v", st)
	}
	e.ok(t, nil, "stop")
	if left := e.leftovers(); len(left) > 0 {
		t.Fatalf("left running after stop: %v", left)
	}
}

func TestVerbsAgainstLocalSite(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	e.fails(t, "HOST_UNAVAILABLE", "visit", srv.URL)
	e.start(t)

	for _, u := range []string{"file:///etc/passwd", "javascript:alert(1)", "data:text/html,hi", "chrome://settings", "about:blank", "ftp://127.0.0.1/", "http://user:pw@127.0.0.1/"} {
		e.fails(t, "UNSAFE_NAVIGATION", "visit", u)
	}
	var page struct{ Session, URL, Title string }
	e.ok(t, &page, "visit", srv.URL+"/")
	if page.Title != "Home" || page.Session != "default" {
		t.Fatalf("visit: %+v", page)
	}
	r := e.run("", "headless", "snapshot", "--json")
	if r.code != 0 {
		t.Fatalf("snapshot: %+v", r)
	}
	if strings.Contains(r.stdout, "prefilled-pw-canary") {
		t.Fatal("snapshot shows the value of a password field")
	}
	var o outline
	json.Unmarshal([]byte(r.stdout), &o)
	if o.Untrusted == "" || o.URL != srv.URL+"/" {
		t.Fatalf("snapshot lacks the untrusted marker or URL: %+v", o)
	}
	pw := o.ref(t, "input", "pw")
	user := o.ref(t, "input", "user")
	form := o.ref(t, "form", "")
	for _, el := range o.Elements {
		if el.Ref == form && el.ActionOrigin != srv.URL {
			t.Errorf("form action origin %q, want %q", el.ActionOrigin, srv.URL)
		}
	}
	// Human output marks page text as untrusted too.
	if h := e.run("", "headless", "snapshot"); !strings.Contains(h.stdout, "untrusted") || strings.Contains(h.stdout, "prefilled-pw-canary") {
		t.Fatalf("human snapshot: %q", h.stdout)
	}
	e.fails(t, "DIRECT_FILL_DISABLED", "fill", pw, "--", "typed-into-password")
	// wait --text must not be an oracle for a password field's value.
	e.fails(t, "TIMEOUT", "wait", "--text", "prefilled-pw-canary", "--timeout", "500ms")
	e.ok(t, nil, "wait", "--text", "Welcome", "--timeout", "5s")
	e.fails(t, "REF_UNKNOWN", "click", "e999")
	var fill map[string]any
	e.ok(t, &fill, "fill", user, "--", "alice")
	if strings.Contains(e.allOutput(), "alice") {
		t.Fatal("fill echoed the text it typed")
	}
	e.ok(t, &page, "click", o.ref(t, "button", "Sign in"))
	if page.Title != "Submitted" {
		t.Fatalf("after clicking submit: %+v", page)
	}
	e.ok(t, &page, "wait", "--text", "user=alice", "--timeout", "5s")
	e.fails(t, "TIMEOUT", "wait", "--text", "never-there", "--timeout", "300ms")

	e.ok(t, &page, "visit", srv.URL+"/")
	json.Unmarshal([]byte(e.run("", "headless", "snapshot", "--json").stdout), &o)
	e.ok(t, &page, "click", o.ref(t, "link", "Next page"))
	if !strings.HasSuffix(page.URL, "/next") {
		t.Fatalf("link click: %+v", page)
	}
	e.fails(t, "REF_STALE", "click", o.ref(t, "link", "Next page")) // refs die with the page: a ref of an earlier snapshot
	e.fails(t, "REF_UNKNOWN", "click", "e9999")                     // one no snapshot gave
	json.Unmarshal([]byte(e.run("", "headless", "snapshot", "--json").stdout), &o)
	e.ok(t, nil, "fill", o.ref(t, "input", "q"), "--", "x")
	e.ok(t, &page, "press", "Tab")
	e.fails(t, "INVALID_ARGUMENT", "press", "NotAKey")

	var shot struct {
		Path, SHA256 string
		Bytes        int
	}
	e.ok(t, &shot, "screenshot")
	png, err := os.ReadFile(shot.Path)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) || len(png) != shot.Bytes {
		t.Fatalf("screenshot %+v: %v", shot, err)
	}
	sum := sha256.Sum256(png)
	if hex.EncodeToString(sum[:]) != shot.SHA256 {
		t.Fatal("screenshot hash mismatch")
	}
	fi, _ := os.Stat(filepath.Dir(shot.Path))
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("artifact store mode %v", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(shot.Path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("artifact mode %v", fi.Mode().Perm())
	}
	// The host log never holds page content or typed text.
	logb, _ := os.ReadFile(filepath.Join(e.runDir(), "host.log"))
	for _, s := range []string{"alice", "prefilled-pw-canary", "Welcome", "Second page"} {
		if bytes.Contains(logb, []byte(s)) {
			t.Errorf("host.log holds page content or typed text %q", s)
		}
	}
	if !bytes.Contains(logb, []byte("method=visit")) {
		t.Fatalf("host.log does not record verbs, so the check above proves nothing:\n%s", logb)
	}
}

func TestDirectPasswordFillWhenAllowed(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	e.writeConfig(`{"allow_direct_password_fill": true}`)
	srv := site(t)
	e.start(t)
	e.ok(t, nil, "visit", srv.URL+"/")
	var o outline
	e.ok(t, &o, "snapshot")
	e.ok(t, nil, "fill", o.ref(t, "input", "pw"), "--", "now-allowed")
}

func TestIsolatedSessionsAreSeparate(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	e.start(t)
	echo := func(session string) string {
		e.ok(t, nil, "visit", srv.URL+"/echo", "--session", session)
		var o outline
		e.ok(t, &o, "snapshot", "--session", session)
		var texts []string
		for _, el := range o.Elements {
			texts = append(texts, el.Text)
		}
		b, _ := json.Marshal(o)
		return string(b)
	}
	e.ok(t, nil, "session", "create", "shared")
	e.ok(t, nil, "session", "create", "iso1", "--isolated")
	e.ok(t, nil, "session", "create", "iso2", "--isolated")
	e.fails(t, "SESSION_EXISTS", "session", "create", "iso1")
	e.fails(t, "INVALID_ARGUMENT", "session", "create", "bad name!")

	e.ok(t, nil, "visit", srv.URL+"/set?v=default-cookie")
	e.ok(t, nil, "visit", srv.URL+"/set?v=iso1-cookie", "--session", "iso1")

	if s := echo("shared"); !strings.Contains(s, "cookie=default-cookie") || !strings.Contains(s, "storage=default-cookie") {
		t.Errorf("a normal session must share the default session's cookies and storage: %s", s)
	}
	if s := echo("iso1"); !strings.Contains(s, "cookie=iso1-cookie") || !strings.Contains(s, "storage=iso1-cookie") {
		t.Errorf("iso1: %s", s)
	}
	if s := echo("iso2"); !strings.Contains(s, "cookie=none") || !strings.Contains(s, "storage=none") {
		t.Errorf("iso2 sees another session's cookies or storage: %s", s)
	}
	if s := echo("default"); !strings.Contains(s, "cookie=default-cookie") {
		t.Errorf("default: %s", s)
	}

	var list struct {
		Sessions []struct {
			Name       string `json:"name"`
			Isolated   bool   `json:"isolated"`
			URL        string `json:"url"`
			Title      string `json:"title"`
			Responsive bool   `json:"responsive"`
		} `json:"sessions"`
	}
	e.ok(t, &list, "session", "list")
	names := []string{}
	for _, s := range list.Sessions {
		names = append(names, s.Name)
		if !s.Responsive || s.Isolated != strings.HasPrefix(s.Name, "iso") || !strings.HasSuffix(s.URL, "/echo") || s.Title != "Echo" {
			t.Errorf("session %+v", s)
		}
	}
	if strings.Join(names, ",") != "default,iso1,iso2,shared" {
		t.Fatalf("session list: %+v", list)
	}
	// Closing an isolated session disposes its context: a new one of the same name starts empty.
	e.ok(t, nil, "session", "close", "iso1")
	e.fails(t, "SESSION_UNKNOWN", "visit", srv.URL, "--session", "iso1")
	e.ok(t, nil, "session", "create", "iso1", "--isolated")
	if s := echo("iso1"); !strings.Contains(s, "cookie=none") {
		t.Errorf("a re-created isolated session kept the old context's cookies: %s", s)
	}
	e.fails(t, "INVALID_ARGUMENT", "session", "close", "default")
}

func TestTwoSessionsInParallel(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	e.start(t)
	e.ok(t, nil, "session", "create", "a")
	e.ok(t, nil, "session", "create", "b", "--isolated")
	var wg sync.WaitGroup
	errs := make(chan string, 2*5)
	for _, s := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				path := "/"
				if i%2 == 1 {
					path = "/next"
				}
				r := e.run("", "headless", "visit", srv.URL+path, "--session", s, "--json")
				if r.code != 0 {
					errs <- s + ": " + r.stdout + r.stderr
					continue
				}
				if r := e.run("", "headless", "snapshot", "--session", s, "--json"); r.code != 0 {
					errs <- s + " snapshot: " + r.stdout
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestControlSocketSurvivesGarbage(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	e.start(t)
	c := dialRaw(t, filepath.Join(e.runDir(), "control.sock"))
	for _, frame := range []string{"garbage\n", `{"id":1,"method":"visit","params":{"url":7}}` + "\n", `{"id":2,"method":"eval","params":{"js":"1"}}` + "\n"} {
		c.Write([]byte(frame))
	}
	c.Write(bytes.Repeat([]byte("x"), 2<<20))
	c.Close()
	var st map[string]any
	e.ok(t, &st, "status")
}

// TestWaitFloodLeavesControlSocketFree: an agent's flood of long waits on one session, more
// than control.sock's 128 connections, no longer takes them all. One wait runs, eight queue
// behind it, and the rest are refused BUSY at once: 'status' is served during the flood. When the queued
// waits' callers hang up they give up at once (status counts them: queued_verbs), so new
// commands queue in their places, the running wait still running, and the ninth is BUSY.
func TestWaitFloodLeavesControlSocketFree(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	e.start(t)
	sock := filepath.Join(e.runDir(), "control.sock")
	type outcome struct {
		c    net.Conn
		code string
	}
	outcomes := make(chan outcome, 512)
	wait := func() net.Conn {
		c := dialRaw(t, sock)
		c.Write([]byte(`{"id":1,"method":"wait","params":{"session":"default","text":"never-on-this-page","timeout_ms":120000}}` + "\n"))
		go func() {
			line, _ := bufio.NewReader(c).ReadBytes('\n')
			var r struct {
				Error *struct{ Code string } `json:"error"`
			}
			code := "closed"
			if json.Unmarshal(line, &r) == nil {
				code = "result"
				if r.Error != nil {
					code = r.Error.Code
				}
			}
			outcomes <- outcome{c, code}
		}()
		return c
	}
	queued := func() int { return e.hostStatus(t).QueuedVerbs }
	// awaitQueued waits (20 s at most) until n verbs queue; when says at which point.
	awaitQueued := func(n int, when string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); queued() != n; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("queued_verbs %d %s; want %d", queued(), when, n)
			}
		}
	}
	running := wait()
	// It must be the one running before the flood: on a loaded machine the host could read a
	// flood's wait first and refuse this one BUSY (then no wait ran after the flood's were
	// closed, and the first of the 8 new ones ran instead of queueing). A probe queued behind
	// it shows one runs; hung up, the probe gives up (or, had it taken the session, this one
	// runs after it).
	probe := wait()
	awaitQueued(1, "with two waits sent (one runs)")
	probe.Close()
	select {
	case o := <-outcomes:
		if o.c != probe {
			t.Fatalf("%q answered before the flood; want only the probe's hang-up", o.code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the probe's connection did not end")
	}
	awaitQueued(0, "after the probe hung up")
	const flood = 140
	answered := map[net.Conn]bool{}
	var all []net.Conn
	for range flood {
		all = append(all, wait())
	}
	for len(answered) < flood-8 {
		select {
		case o := <-outcomes:
			if o.code != "BUSY" {
				t.Fatalf("a wait answered %q while its session was busy; want BUSY or queued", o.code)
			}
			answered[o.c] = true
			o.c.Close() // done: a connection left idle would be the next newcomer's room
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of %d waits refused BUSY; want %d (one runs, eight queue)", len(answered), flood, flood-8)
		}
	}
	if n := queued(); n != 8 {
		t.Fatalf("queued_verbs %d during the flood; want 8", n)
	}
	// The queued waits' callers hang up: they give up, and new commands take their places.
	closed := map[net.Conn]bool{}
	for _, c := range all {
		if !answered[c] {
			closed[c] = true
			c.Close()
		}
	}
	awaitQueued(0, "after their callers hung up")
	for range 8 {
		wait()
	}
	for deadline := time.Now().Add(20 * time.Second); queued() != 8; time.Sleep(50 * time.Millisecond) {
		select {
		case o := <-outcomes:
			if !closed[o.c] && !answered[o.c] {
				t.Fatalf("a wait answered %q while 8 new ones queue; want none answered (running %v)", o.code, o.c == running)
			}
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("queued_verbs %d; want the 8 new waits", queued())
		}
	}
	ninth := wait()
	for {
		select {
		case o := <-outcomes:
			if closed[o.c] || answered[o.c] {
				continue
			}
			if o.c != ninth || o.code != "BUSY" {
				t.Fatalf("%q answered; want the ninth new wait BUSY", o.code)
			}
			return
		case <-time.After(30 * time.Second):
			t.Fatal("the ninth new wait was not refused")
		}
	}
}

// hostFigures is what tests watch in the host part of 'headless status --json'.
type hostFigures struct {
	PID             int `json:"pid"`
	BrowserPID      int `json:"browser_pid"`
	BrowserContexts int `json:"browser_contexts"`
	QueuedVerbs     int `json:"queued_verbs"`
}

// hostStatus runs 'headless status' and returns the host's figures.
func (e *env) hostStatus(t *testing.T) hostFigures {
	t.Helper()
	var out struct {
		Host hostFigures `json:"host"`
	}
	e.ok(t, &out, "status")
	return out.Host
}
