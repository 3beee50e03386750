//go:build linux

package tests

import (
	"context"
	"encoding/json"
	"io"
	"log"
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
	"github.com/headless-dev/headless/internal/test/realtest"
)

// proxyLog is a forward proxy of the agent's: it records every request it is sent (the
// method, the URL and the body) and forwards nothing.
type proxyLog struct {
	mu   sync.Mutex
	reqs []string
}

func (p *proxyLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	p.mu.Lock()
	p.reqs = append(p.reqs, r.Method+" "+r.URL.String()+" "+string(body))
	p.mu.Unlock()
	http.Error(w, "no", http.StatusBadGateway)
}

func (p *proxyLog) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reqs...)
}

// plantProxy writes, as any same-user process can while the host is stopped, a proxy into
// the profile's Default/Preferences (red-team round 6b's way to the password) and a resolver
// of its own into Local State.
func plantProxy(t *testing.T, profile, proxyURL string) {
	t.Helper()
	for _, f := range []struct {
		path, key string
		value     any
	}{
		{filepath.Join(profile, "Default", "Preferences"), "proxy", map[string]any{"mode": "fixed_servers", "server": proxyURL, "bypass_list": "<-loopback>"}},
		{filepath.Join(profile, "Local State"), "dns_over_https", map[string]any{"mode": "secure", "templates": proxyURL + "/dns-query"}},
	} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		m[f.key] = f.value
		if b, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlantedProxyGetsNothing: a proxy planted in the durable profile's Preferences while the
// host was stopped would receive the sign-in's POST, password included (red-team round 6b;
// checked here first with a bare Chromium on a copy of the profile, which does send the page's
// request to it). headless removes it at start and launches Chromium with --no-proxy-server:
// the proxy gets nothing, the sign-in goes to the site.
func TestPlantedProxyGetsNothing(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	const account = "alice@example.test"
	canary := newCanary()
	ls.SetAccount(account, canary)
	program, _ := presencetest.FakePinentry(t, "approve")
	e.pinentryConfig(program)
	lsEnroll(t, e, ls.Origin(), "main", account, canary)
	e.start(t)
	e.run("", "headless", "stop")
	profile := filepath.Join(e.root, "data", "headless", "profile")

	proxy := &proxyLog{}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)

	// The plant works on a Chromium without headless's defences.
	bare := filepath.Join(t.TempDir(), "profile")
	if out, err := exec.Command("cp", "-a", profile, bare).CombinedOutput(); err != nil {
		t.Fatalf("copy the profile: %v %s", err, out)
	}
	plantProxy(t, bare, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/lib/chromium/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--password-store=gnome-libsecret", "--user-data-dir="+bare, "--dump-dom", ls.URL("/login"))
	cmd.Env = []string{"HOME=" + e.root, "TMPDIR=" + t.TempDir(), "PATH=/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS=" + e.k.Addr}
	cmd.Run()
	if got := proxy.seen(); !strings.Contains(strings.Join(got, "\n"), "GET "+ls.URL("/login")) {
		t.Fatalf("a bare Chromium on the planted profile sent the proxy %q; want the login page's request (the plant must work for this test to mean anything)", got)
	}
	proxy.mu.Lock()
	proxy.reqs = nil
	proxy.mu.Unlock()

	// The same plant in headless's durable profile.
	plantProxy(t, profile, srv.URL)
	e.start(t)
	b, _ := os.ReadFile(filepath.Join(profile, "Default", "Preferences"))
	if strings.Contains(string(b), `"proxy"`) {
		t.Fatal("the planted proxy is still in Preferences after the start")
	}
	posts := len(ls.Posts())
	lsVisit(t, e, ls.URL("/login"))
	lsLoginOK(t, e, "authenticated", "--alias", "main")
	if p := ls.Posts(); len(p) != posts+1 || p[len(p)-1].Password != canary {
		t.Fatalf("the site received %v", p[posts:])
	}
	if got := proxy.seen(); len(got) != 0 {
		t.Fatalf("the planted proxy received %d requests: %q", len(got), got)
	}
	e.run("", "headless", "stop")
}

// TestRelaunchDisarmsThePlantedProfile: what a same-user process plants in the profile while
// the browser runs, then kills it (red-team round 6c: a service worker, and a chrome://flags
// entry that the relaunched Chromium applied), is removed before the relaunch too, not only at
// the host's start.
func TestRelaunchDisarmsThePlantedProfile(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	e.start(t)
	st := e.hostStatus(t)
	profile := filepath.Join(e.root, "data", "headless", "profile")
	if err := syscall.Kill(st.BrowserPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Chromium is gone (and wrote nothing more): plant before anything relaunches it.
	for i := 0; i < 200 && syscall.Kill(st.BrowserPID, 0) == nil && !isZombie(st.BrowserPID); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	plantProxy(t, profile, "http://127.0.0.1:9")
	lsPath := filepath.Join(profile, "Local State")
	b, _ := os.ReadFile(lsPath)
	m := map[string]any{}
	json.Unmarshal(b, &m)
	m["browser"] = map[string]any{"enabled_labs_experiments": []string{"enable-experimental-web-platform-features"}}
	b, _ = json.Marshal(m)
	os.WriteFile(lsPath, b, 0o600)
	sw := filepath.Join(profile, "Default", "Service Worker", "Database")
	os.MkdirAll(sw, 0o700)
	os.WriteFile(filepath.Join(sw, "planted"), []byte("x"), 0o600)

	// The next command relaunches the browser.
	r := e.run("", "headless", "snapshot", "--json")
	if r.code == 0 {
		r = e.run("", "headless", "snapshot", "--json")
	}
	if nst := e.hostStatus(t); nst.BrowserPID == 0 || nst.BrowserPID == st.BrowserPID {
		t.Fatalf("the browser was not relaunched (%d → %d): %+v", st.BrowserPID, nst.BrowserPID, r)
	}
	if _, err := os.Stat(filepath.Join(profile, "Default", "Service Worker", "Database", "planted")); err == nil {
		t.Error("the planted service worker storage survived the relaunch")
	}
	ls, _ := os.ReadFile(lsPath)
	prefs, _ := os.ReadFile(filepath.Join(profile, "Default", "Preferences"))
	for _, s := range []string{"enable-experimental-web-platform-features", "dns_over_https"} {
		if strings.Contains(string(ls), s) {
			t.Errorf("Local State still holds %s after the relaunch", s)
		}
	}
	if strings.Contains(string(prefs), "127.0.0.1:9") {
		t.Error("Preferences still hold the planted proxy after the relaunch")
	}
	// No process of the relaunched browser runs with the planted flag's switch.
	for _, pid := range lsDescendants(e.hostStatus(t).PID) {
		if cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); strings.Contains(string(cmd), "experimental-web-platform-features") {
			t.Errorf("pid %d runs with the planted flag: %q", pid, cmd)
		}
	}
	e.run("", "headless", "stop")
}

// nssModule builds a PKCS#11 "module" whose constructor creates marker when a process loads
// it, and lists it in the NSS databases of home and dataHome, as any process of the user can.
func nssModule(t *testing.T, marker string, dirs ...string) {
	t.Helper()
	gcc := realtest.Binary(t, "gcc")
	src := filepath.Join(t.TempDir(), "hook.c")
	lib := filepath.Join(filepath.Dir(src), "hook.so")
	os.WriteFile(src, []byte(`#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void loaded(void) { int fd = open(MARKER, O_CREAT|O_WRONLY, 0600); if (fd >= 0) close(fd); }
int C_GetFunctionList(void **p) { return 5; /* CKR_GENERAL_ERROR */ }
`), 0o600)
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", lib, `-DMARKER="`+marker+`"`, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	os.Chmod(filepath.Dir(src), 0o755)
	os.Chmod(lib, 0o755)
	list := "library=\nname=NSS Internal PKCS #11 Module\nparameters=configdir='sql:.' certPrefix='' keyPrefix='' secmod='secmod.db' flags=\n" +
		"NSS=Flags=internal,critical trustOrder=75 cipherOrder=100 slotParams=(1={slotFlags=[RSA,RANDOM,SHA1,SSL,TLS,AES,SHA256] askpw=any timeout=30})\n\n" +
		"library=" + lib + "\nname=agent\n"
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "pkcs11.txt"), []byte(list), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNoPlantedNSSModule: NSS loads every PKCS#11 module listed in the user's NSS database
// (~/.pki/nssdb, or $XDG_DATA_HOME/pki/nssdb) into the browser process, which any process of
// the user can write — red-team round 6d ran code in the browser so and read the typed password
// off the DevTools pipe. Checked first with a bare Chromium (it loads the module at its first
// certificate check); the host's Chromium has a home nobody can write and loads nothing.
func TestNoPlantedNSSModule(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	home, data := filepath.Join(e.root, "home"), filepath.Join(e.root, "data")
	marker := filepath.Join(t.TempDir(), "module-loaded")
	nssModule(t, marker, filepath.Join(home, ".pki", "nssdb"), filepath.Join(data, "pki", "nssdb"))
	tls := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<p>tls</p>")) }))
	tls.Config.ErrorLog = log.New(io.Discard, "", 0) // Chromium refuses its certificate: expected
	tls.StartTLS()
	t.Cleanup(tls.Close)

	bare := filepath.Join(t.TempDir(), "bare-profile")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/lib/chromium/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--password-store=gnome-libsecret", "--user-data-dir="+bare, "--dump-dom", tls.URL)
	cmd.Env = []string{"HOME=" + home, "XDG_DATA_HOME=" + data, "TMPDIR=" + t.TempDir(), "PATH=/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS=" + e.k.Addr}
	cmd.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("a bare Chromium with the user's home did not load the planted module (%v): the test would prove nothing", err)
	}
	os.Remove(marker)

	e.start(t)
	e.run("", "headless", "visit", tls.URL) // a certificate check (the page itself fails: not a trusted certificate)
	e.run("", "headless", "stop")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the host's Chromium loaded the PKCS#11 module planted in the user's NSS database")
	}
}
