//go:build linux

package profile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/headless-dev/headless/internal/keyprobe"
	"github.com/headless-dev/headless/internal/test/realtest"
)

// TestChromiumHonoursProfile launches the real Chromium on a profile made by Open, with
// exactly ChromiumArgs for the profile, and checks that its password manager drops a
// submitted login instead of offering to save it, that Settings shows every password pref
// off, that the cookie key went to the Secret Service, and that the profile Chromium leaves
// behind passes Open's check untouched.
func TestChromiumHonoursProfile(t *testing.T) {
	chromium := os.Getenv("HEADLESS_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/lib/chromium/chromium"
	}
	chromium = realtest.Binary(t, chromium)
	k := realtest.StartKeyring(t, realtest.KeyringOptions{})
	ctx := testCtx(t, 3*time.Minute)
	if err := keyprobe.Check(ctx, k.Addr); err != nil {
		t.Fatalf("keyprobe.Check: %v", err)
	}
	dataDir := newDataDir(t)
	p := openT(t, dataDir)

	mux := http.NewServeMux()
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>login</title><form action="/done" method="post">`+
			`<input id="u" name="u" autocomplete="username"><input id="p" name="p" type="password" autocomplete="current-password">`+
			`<button id="b" type="submit">Sign in</button></form>`)
	})
	mux.HandleFunc("/done", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "durable-cookie-value", MaxAge: 3600, Path: "/"})
		fmt.Fprint(w, `<!doctype html><title>welcome</title><p>signed in`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	b := launchChromium(t, chromium, p.ChromiumArgs(), k.Addr)
	internals := b.newTab(ctx, t, "chrome://password-manager-internals")
	page := b.newTab(ctx, t, srv.URL+"/login")
	b.eval(ctx, t, page, `document.getElementById("u").focus()`)
	b.call(ctx, t, page, "Input.insertText", map[string]any{"text": "alice"}, nil)
	b.eval(ctx, t, page, `document.getElementById("p").focus()`)
	b.call(ctx, t, page, "Input.insertText", map[string]any{"text": "hunter2-not-saved"}, nil)
	b.eval(ctx, t, page, `document.getElementById("b").click()`)
	var log string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		json.Unmarshal(b.eval(ctx, t, internals, `document.body.innerText`), &log)
		if strings.Contains(log, "AskUserOrSavePassword") && strings.Contains(log, "Successful submission") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("password-manager-internals never logged the submission:\n%s", log)
		}
	}
	if !strings.Contains(log, "Saving disabled") || !strings.Contains(log, "Decision: DROP the password") ||
		strings.Contains(log, "Decision: ASK the user") || strings.Contains(log, "Show password prompt") {
		t.Fatalf("Chromium's password manager did not drop the login:\n%s", log)
	}

	settings := b.newTab(ctx, t, "chrome://settings/passwords")
	var prefs map[string]any
	raw := b.eval(ctx, t, settings, `new Promise(r => chrome.settingsPrivate.getAllPrefs(ps => r(Object.fromEntries(ps.map(p => [p.key, p.value])))))`)
	if err := json.Unmarshal(raw, &prefs); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{
		"credentials_enable_service", "credentials_enable_autosignin",
		"credentials_enable_automatic_passkey_upgrades", "automated_password_change_enabled",
		"profile.password_manager_leak_detection",
	} {
		if v, ok := prefs[key]; !ok || v != false {
			t.Errorf("Settings shows %s = %v (present %v), want false", key, v, ok)
		}
	}
	b.close(t)

	// The cookie key lives in the Secret Service, not in the "basic" store.
	c := busConn(t, k.Addr)
	var unlocked, locked []dbus.ObjectPath
	err := c.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").
		Call("org.freedesktop.Secret.Service.SearchItems", 0, map[string]string{"xdg:schema": "chrome_libsecret_os_crypt_password_v2"}).
		Store(&unlocked, &locked)
	if err != nil || len(unlocked)+len(locked) == 0 {
		t.Fatalf("no Chromium Safe Storage key in the keyring (%v)", err)
	}
	cookieDB := ""
	for _, name := range cookieFiles {
		if fi, err := os.Stat(filepath.Join(p.Dir(), name)); err == nil && fi.Size() > 0 {
			cookieDB = filepath.Join(p.Dir(), name)
		}
	}
	if cookieDB == "" {
		t.Fatal("Chromium wrote no cookie database")
	}
	db, _ := os.ReadFile(cookieDB)
	if !bytes.Contains(db, []byte("sid")) || !bytes.Contains(db, []byte("v11")) || bytes.Contains(db, []byte("durable-cookie-value")) {
		t.Fatalf("%s does not hold the cookie encrypted with the keyring key (v11)", cookieDB)
	}

	// What Chromium leaves behind is a healthy profile: Open changes nothing but removing the
	// stores that are disarmed at every start (the caches and service workers).
	p.Close()
	before := snapshot(t, p.Dir())
	for rel := range before {
		for _, d := range disarmDirs {
			if rel == filepath.Join("Default", d) || strings.HasPrefix(rel, filepath.Join("Default", d)+string(filepath.Separator)) {
				delete(before, rel)
			}
		}
	}
	p = openT(t, dataDir)
	if p.Report() != (Report{}) {
		t.Fatalf("Open after Chromium ran: %+v", p.Report())
	}
	if after := snapshot(t, p.Dir()); !reflect.DeepEqual(before, after) {
		t.Fatal("Open changed the profile Chromium left behind")
	}
	checkPasswordPrefs(t, p.Dir())

	// Saving turned back on in the file Chromium wrote: the next Open re-asserts it, and the
	// next launch honours that and still decrypts the cookie of the first.
	p.Close()
	path := filepath.Join(p.Dir(), "Default", "Preferences")
	raw, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.Replace(raw, []byte(`"credentials_enable_service":false`), []byte(`"credentials_enable_service":true`), 1)
	writeFile(t, path, raw)
	p = openT(t, dataDir)
	checkPasswordPrefs(t, p.Dir())
	b = launchChromium(t, chromium, p.ChromiumArgs(), k.Addr)
	settings = b.newTab(ctx, t, "chrome://settings/passwords")
	var on bool
	json.Unmarshal(b.eval(ctx, t, settings, `new Promise(r => chrome.settingsPrivate.getPref("credentials_enable_service", p => r(p.value)))`), &on)
	if on {
		t.Error("Chromium offers to save passwords after the re-assertion")
	}
	page = b.newTab(ctx, t, srv.URL+"/login")
	var cookie string
	json.Unmarshal(b.eval(ctx, t, page, `document.cookie`), &cookie)
	if cookie != "sid=durable-cookie-value" {
		t.Errorf("second launch sees cookie %q, want the first launch's", cookie)
	}
	b.close(t)
}

// browser is a Chromium driven over --remote-debugging-pipe (fd 3 it reads, fd 4 it writes;
// one JSON message and a NUL per write).
type browser struct {
	cmd  *exec.Cmd
	w    *os.File
	done chan struct{} // closed when the process was reaped

	mu      sync.Mutex
	next    int
	pending map[int]chan cdpReply
}

type cdpReply struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func launchChromium(t *testing.T, chromium string, profileArgs []string, busAddr string) *browser {
	t.Helper()
	home := t.TempDir()
	args := []string{"--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--remote-debugging-pipe"}
	if os.Getuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	args = append(args, profileArgs...)
	args = append(args, "about:blank")
	toChrome, ourW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ourR, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chromium, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"DBUS_SESSION_BUS_ADDRESS=" + busAddr}
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toChrome.Close()
	fromChrome.Close()
	b := &browser{cmd: cmd, w: ourW, done: make(chan struct{}), pending: map[int]chan cdpReply{}}
	go func() { cmd.Wait(); close(b.done) }()
	go b.read(ourR)
	t.Cleanup(func() {
		select {
		case <-b.done:
		default:
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-b.done
		}
		ourW.Close()
		if t.Failed() {
			t.Logf("chromium stderr:\n%s", stderr.String())
		}
	})
	return b
}

func (b *browser) read(r *os.File) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			for id, ch := range b.pending {
				close(ch)
				delete(b.pending, id)
			}
			b.mu.Unlock()
			return
		}
		var rep cdpReply
		if json.Unmarshal(msg[:len(msg)-1], &rep) != nil || rep.ID == 0 {
			continue // an event
		}
		b.mu.Lock()
		ch := b.pending[rep.ID]
		delete(b.pending, rep.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- rep
		}
	}
}

// call sends one CDP command (on a target session when session is not "") and decodes its
// result into out.
func (b *browser) call(ctx context.Context, t *testing.T, session, method string, params, out any) {
	t.Helper()
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan cdpReply, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	m := map[string]any{"id": id, "method": method, "params": params}
	if params == nil {
		m["params"] = map[string]any{}
	}
	if session != "" {
		m["sessionId"] = session
	}
	msg, _ := json.Marshal(m)
	if _, err := b.w.Write(append(msg, 0)); err != nil {
		t.Fatalf("%s: write: %v", method, err)
	}
	select {
	case rep, ok := <-ch:
		if !ok {
			t.Fatalf("%s: browser closed the pipe", method)
		}
		if rep.Error != nil {
			t.Fatalf("%s: %d %s", method, rep.Error.Code, rep.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(rep.Result, out); err != nil {
				t.Fatalf("%s: %v", method, err)
			}
		}
	case <-ctx.Done():
		t.Fatalf("%s: %v", method, ctx.Err())
	}
}

// newTab opens url in a new target, attaches to it and waits until it has loaded.
func (b *browser) newTab(ctx context.Context, t *testing.T, url string) (session string) {
	t.Helper()
	var target struct{ TargetID string }
	b.call(ctx, t, "", "Target.createTarget", map[string]any{"url": url}, &target)
	var att struct{ SessionID string }
	b.call(ctx, t, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var state, href string
		json.Unmarshal(b.eval(ctx, t, att.SessionID, `document.readyState`), &state)
		json.Unmarshal(b.eval(ctx, t, att.SessionID, `location.href`), &href)
		if state == "complete" && strings.HasPrefix(href, strings.TrimSuffix(url, "/passwords")) {
			return att.SessionID
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not load (state %q at %q)", url, state, href)
		}
	}
}

// eval evaluates expr in the page (awaiting a promise) and returns its JSON value.
func (b *browser) eval(ctx context.Context, t *testing.T, session, expr string) json.RawMessage {
	t.Helper()
	var res struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct{ Text string }
	}
	b.call(ctx, t, session, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res)
	if res.ExceptionDetails != nil {
		t.Fatalf("evaluate %q: %s", expr, res.ExceptionDetails.Text)
	}
	return res.Result.Value
}

// close asks the browser to close (which commits cookies) and waits for it to exit.
func (b *browser) close(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b.call(ctx, t, "", "Browser.close", nil, nil)
	select {
	case <-b.done:
	case <-ctx.Done():
		t.Fatal("Chromium did not exit within 20s of Browser.close")
	}
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// busConn is the test's own connection to the keyring's bus.
func busConn(t *testing.T, addr string) *dbus.Conn {
	t.Helper()
	c, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connect to test bus: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestPlantedLastUsedProfileIgnored: Local State's profile.last_used, which any process of
// the user can point at a profile directory of its own (with password saving on and no
// Sessions block), does not choose the profile: ChromiumArgs pins Default, and everything the
// profile's protections look after is written there, nothing in the planted one (second
// reviewer's finding; without the flag Chromium 156 opens the planted profile).
func TestPlantedLastUsedProfileIgnored(t *testing.T) {
	chromium := realtest.Binary(t, "/usr/lib/chromium/chromium")
	k := realtest.StartKeyring(t, realtest.KeyringOptions{})
	ctx := testCtx(t, 2*time.Minute)
	dataDir := newDataDir(t)
	p := openT(t, dataDir)
	dir := p.Dir()
	if err := os.WriteFile(filepath.Join(dir, "Local State"), []byte(`{"profile":{"last_used":"Planted","last_active_profiles":["Planted"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "Planted"), 0o700); err != nil {
		t.Fatal(err)
	}
	b := launchChromium(t, chromium, p.ChromiumArgs(), k.Addr)
	b.newTab(ctx, t, "about:blank")
	b.close(t)
	if ents, _ := os.ReadDir(filepath.Join(dir, "Planted")); len(ents) != 0 {
		t.Errorf("Chromium wrote %d entries into the planted profile (%s...): it opened it", len(ents), ents[0].Name())
	}
	if _, err := os.Stat(filepath.Join(dir, "Default", "Preferences")); err != nil {
		t.Errorf("Default/Preferences: %v", err)
	}
}
