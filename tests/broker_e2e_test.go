//go:build linux

package tests

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/test/realtest"
)

const origin = "https://staging.example.test"

func newCanary() string { return "cnry-" + rand.Text() + "-Ü" }

// canaryForms are the encodings a leak could take.
func canaryForms(c string) []string {
	return []string{c, base64.StdEncoding.EncodeToString([]byte(c)), base64.RawURLEncoding.EncodeToString([]byte(c)),
		hex.EncodeToString([]byte(c)), url.QueryEscape(c), strings.TrimPrefix(c, "cnry-")}
}

func assertNoCanary(t *testing.T, where, hay, canary string) {
	t.Helper()
	for _, f := range canaryForms(canary) {
		if strings.Contains(hay, f) {
			t.Errorf("canary (form %q) found in %s", f, where)
		}
	}
}

// addCredential enrolls through the CLI with a real pty, as a person would.
func (e *env) addCredential(alias, account, password string) result {
	e.t.Helper()
	r := e.runTTY([]step{
		{"Password for", password + "\n"},
		{"Repeat the password", password + "\n"},
	}, "headless", "credentials", "add", "--origin", origin, "--account", account, "--alias", alias, "--json")
	return r
}

type jsonErr struct {
	Error struct{ Code, Message, Hint string } `json:"error"`
}

func errCode(t *testing.T, r result) string {
	t.Helper()
	var je jsonErr
	if err := json.Unmarshal([]byte(r.stdout), &je); err != nil {
		t.Fatalf("stdout is not a JSON error: %q (stderr %q)", r.stdout, r.stderr)
	}
	if je.Error.Hint == "" || je.Error.Message == "" {
		t.Errorf("error without message or hint: %q", r.stdout)
	}
	return je.Error.Code
}

func TestBrokerdFlags(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{noBus: true})
	r := e.run("", "brokerd", "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "brokerd ") {
		t.Fatalf("--version: %+v", r)
	}
	r = e.run("", "brokerd", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "Usage:") || !strings.Contains(r.stdout, "config.json") {
		t.Fatalf("--help: %+v", r)
	}
	r = e.run("", "brokerd", "--bogus")
	if r.code != 2 || !strings.Contains(r.stderr, "brokerd: error:") || !strings.Contains(r.stderr, "hint:") {
		t.Fatalf("bad flag: %+v", r)
	}
	r = e.run("", "headless", "help")
	if r.code != 0 || !strings.Contains(r.stdout, "credentials add") || !strings.Contains(r.stdout, "NO_TTY") {
		t.Fatalf("help: %+v", r)
	}
}

func TestRuntimeDirAndSocketModes(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	b := e.startBrokerd()
	fi, err := os.Stat(e.runDir())
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("runtime dir: %v %v", fi.Mode(), err)
	}
	for name, want := range map[string]os.FileMode{"broker.sock": 0o600, "broker.lock": 0o600, "brokerd.log": 0o600} {
		fi, err := os.Stat(filepath.Join(e.runDir(), name))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, err %v", name, fi.Mode().Perm(), err)
		}
	}
	// A second brokerd exits non-zero naming the running pid.
	r := e.run("", "brokerd")
	if r.code != 1 || !strings.Contains(r.stderr, "pid "+strconv.Itoa(b.Pid())) || !strings.Contains(r.stderr, "hint:") {
		t.Fatalf("second brokerd: %+v (running pid %d)", r, b.Pid())
	}
	// SIGTERM: exit 0, socket removed.
	if err := b.Stop(); err != nil {
		t.Fatalf("brokerd after SIGTERM: %v", err)
	}
	if _, err := os.Lstat(e.sockPath()); !os.IsNotExist(err) {
		t.Fatalf("socket left behind after SIGTERM: %v", err)
	}
}

func TestStaleSocketIsReplacedOtherFilesAreNot(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	os.MkdirAll(e.runDir(), 0o700)
	// A socket nobody listens on (a crashed brokerd's).
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: e.sockPath(), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	if fi, err := os.Lstat(e.sockPath()); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatal("stale socket not in place")
	}
	if err := e.startBrokerd().Stop(); err != nil {
		t.Fatal(err)
	}
	// A regular file at the socket path is not ours to delete.
	os.WriteFile(e.sockPath(), []byte("not a socket"), 0o600)
	r := e.run("", "brokerd")
	if r.code != 1 || !strings.Contains(r.stderr, "not a socket") {
		t.Fatalf("brokerd over a regular file: %+v", r)
	}
	if b, _ := os.ReadFile(e.sockPath()); string(b) != "not a socket" {
		t.Fatal("regular file was touched")
	}
}

func TestRuntimeDirOfAnotherUserIsRefused(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{noBus: true})
	os.MkdirAll(e.runDir(), 0o700)
	if err := os.Chown(e.runDir(), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	r := e.run("", "brokerd")
	if r.code != 1 || !strings.Contains(r.stderr, "owned by another user") {
		t.Fatalf("%+v", r)
	}
	r = e.run("", "headless", "credentials", "list", "--json")
	if r.code != 1 || errCode(t, r) != "RUNTIME_DIR_UNSAFE" {
		t.Fatalf("%+v", r)
	}
}

// TestEnrollListVerifyRemove is the main broker flow through the real CLI, a real pty, the
// real keyring, and the scripted pinentry; then a canary sweep of every surface.
func TestEnrollListVerifyRemove(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	program, plog := presencetest.FakePinentry(t, "approve")
	e.pinentryConfig(program)
	canary := newCanary()

	// The CLI starts brokerd itself.
	r := e.addCredential("staging-admin", "admin@example.test", canary)
	if r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	var added struct{ Origin, Account, Alias string }
	if err := json.Unmarshal([]byte(r.stdout), &added); err != nil || added.Alias != "staging-admin" || added.Origin != origin {
		t.Fatalf("add output %q", r.stdout)
	}
	if e.brokerPID() == 0 {
		t.Fatal("CLI did not start brokerd")
	}
	if strings.Contains(r.tty, canary) {
		t.Fatal("password echoed on the terminal")
	}

	// Duplicate alias, differently cased.
	r = e.addCredential("Staging-ADMIN", "other", "x-"+canary)
	if r.code != 1 || errCode(t, r) != "ALIAS_EXISTS" {
		t.Fatalf("duplicate: %+v", r)
	}

	// list --json shape, exact origin filter, never a secret.
	r = e.run("", "headless", "credentials", "list", "--origin", "HTTPS://Staging.Example.Test:443", "--json")
	if r.code != 0 {
		t.Fatalf("list: %+v", r)
	}
	var list struct {
		Credentials []map[string]any `json:"credentials"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list.Credentials) != 1 {
		t.Fatalf("list output %q", r.stdout)
	}
	c := list.Credentials[0]
	if len(c) != 4 || c["origin"] != origin || c["account"] != "admin@example.test" || c["alias"] != "staging-admin" || c["created"] == nil {
		t.Fatalf("credential %v", c)
	}
	r = e.run("", "headless", "credentials", "list", "--origin", "https://staging.example.test:8443", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"credentials":[]`) {
		t.Fatalf("other port must not match: %q", r.stdout)
	}

	// The item is in the real keyring with its attributes, visible to secret-tool.
	st := exec.Command(realtest.Binary(t, "secret-tool"), "search", "--all", "xdg:schema", "dev.headless.Credential")
	st.Env = e.vars
	out, _ := st.CombinedOutput()
	for _, want := range []string{"attribute.origin = " + origin, "attribute.alias = staging-admin", "attribute.account = admin@example.test"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("secret-tool search lacks %q:\n%s", want, out)
		}
	}

	// verify goes through the browser host: without one it is HOST_UNAVAILABLE, asking nobody.
	r = e.run("", "headless", "credentials", "verify", "--origin", origin, "--alias", "staging-admin", "--json")
	if r.code != 1 || errCode(t, r) != "HOST_UNAVAILABLE" || !strings.Contains(r.stdout, "headless start") {
		t.Fatalf("verify without a host: %+v", r)
	}
	if n := len(presencetest.Prompts(t, plog)); n != 0 {
		t.Fatalf("%d prompts without a host", n)
	}
	// With the host: challenge + presence + release to the host, which zeroes it; the prompt
	// says it is a verification and names the host as requester and the CLI behind it.
	e.start(t)
	r = e.run("", "headless", "credentials", "verify", "--origin", origin, "--alias", "staging-admin", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"released":true`) {
		t.Fatalf("verify: %+v", r)
	}
	prompts := presencetest.Prompts(t, plog)
	if len(prompts) != 1 {
		t.Fatalf("prompts: %q", prompts)
	}
	for _, want := range []string{"Verify that the saved password", "nothing will be typed", origin, "admin@example.test", "staging-admin",
		"Requested by pid ", `("` + filepath.Join(binDir, "headless") + `"), the browser host`, "Asked by pid ", "(as reported by the host)"} {
		if !strings.Contains(prompts[0], want) {
			t.Errorf("prompt %q does not name %q", prompts[0], want)
		}
	}

	// remove: answering no keeps it; yes removes it.
	r = e.runTTY([]step{{"[y/N]", "n\n"}}, "headless", "credentials", "remove", "--origin", origin, "--alias", "staging-admin", "--json")
	if r.code != 1 || errCode(t, r) != "CANCELLED" {
		t.Fatalf("remove answered no: %+v", r)
	}
	r = e.runTTY([]step{{"[y/N]", "y\n"}}, "headless", "credentials", "remove", "--origin", origin, "--alias", "STAGING-admin", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"removed"`) {
		t.Fatalf("remove: %+v", r)
	}
	r = e.run("", "headless", "credentials", "verify", "--origin", origin, "--alias", "staging-admin", "--json")
	if r.code != 1 || errCode(t, r) != "ALIAS_UNKNOWN" {
		t.Fatalf("verify after remove: %+v", r)
	}

	// Canary sweep: outputs, broker log, brokerd's cmdline and environ, the runtime dir.
	pid := e.brokerPID()
	assertNoCanary(t, "CLI output", e.allOutput(), canary)
	for _, f := range []string{"cmdline", "environ"} {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + f)
		if err != nil {
			t.Fatal(err)
		}
		assertNoCanary(t, "brokerd "+f, string(b), canary)
	}
	filepath.Walk(e.root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && !strings.Contains(p, "/keyrings") {
			b, _ := os.ReadFile(p)
			assertNoCanary(t, p, string(b), canary)
		}
		return nil
	})
	logb, _ := os.ReadFile(filepath.Join(e.runDir(), "brokerd.log"))
	if !strings.Contains(string(logb), "released") || !strings.Contains(string(logb), "staging-admin") {
		t.Fatalf("broker log does not record the release (so the sweep proves little):\n%s", logb)
	}
}

func TestNoTTYNeverReadsStdin(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	canary := newCanary()
	r := e.run(canary+"\n"+canary+"\n", "headless", "credentials", "add", "--origin", origin, "--account", "a", "--alias", "piped", "--json")
	if r.code != 1 || errCode(t, r) != "NO_TTY" {
		t.Fatalf("add without a terminal: %+v", r)
	}
	r = e.run("", "headless", "credentials", "add", "--origin", origin, "--account", "a", "--alias", "piped")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "headless: error: NO_TTY: ") || !strings.Contains(r.stderr, "\nhint: ") {
		t.Fatalf("human error format: %+v", r)
	}
	r = e.run("", "headless", "credentials", "list", "--json")
	if r.code != 0 || strings.Contains(r.stdout, "piped") {
		t.Fatalf("something was saved: %+v", r)
	}
	// Removal is confirmed only at the terminal: a "y" on stdin does not count.
	if r := e.addCredential("kept", "a", canary); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	r = e.run("y\n", "headless", "credentials", "remove", "--origin", origin, "--alias", "kept", "--json")
	if r.code != 1 || errCode(t, r) != "NO_TTY" {
		t.Fatalf("remove with y on stdin: %+v", r)
	}
	r = e.run("", "headless", "credentials", "list", "--json")
	if !strings.Contains(r.stdout, `"alias":"kept"`) {
		t.Fatalf("removed without terminal confirmation: %+v", r)
	}
}

func TestPresenceOutcomes(t *testing.T) {
	parallel(t)
	cases := []struct {
		mode, want string
	}{
		{"deny", "PRESENCE_DENIED"},
		{"notconfirmed", "PRESENCE_DENIED"},
		{"crash", "PRESENCE_DENIED"},
		{"garbage", "PRESENCE_DENIED"},
		{"timeout", "PRESENCE_TIMEOUT"},
		{"hang", "PRESENCE_TIMEOUT"},
		{"nogreeting", "PRESENCE_UNAVAILABLE"},
		{"", "PRESENCE_UNAVAILABLE"}, // no config at all
	}
	e := newEnv(t, envOptions{})
	canary := newCanary()
	if r := e.addCredential("ops", "ops@example.test", canary); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			e.stopBroker() // its host goes with it
			if tc.mode == "" {
				os.Remove(filepath.Join(e.root, "config", "headless", "config.json"))
			} else {
				program, _ := presencetest.FakePinentry(t, tc.mode)
				e.writeConfig(`{"presence":{"provider":"pinentry","program":"` + program + `","timeout_seconds":1}}`)
			}
			e.start(t)
			r := e.run("", "headless", "credentials", "verify", "--origin", origin, "--alias", "ops", "--json")
			if r.code != 1 || errCode(t, r) != tc.want {
				t.Fatalf("%s: %+v", tc.mode, r)
			}
			assertNoCanary(t, "output", r.stdout+r.stderr, canary)
		})
	}
	// The keyring daemon survived every outcome.
	if !e.k.Alive() {
		t.Fatal("gnome-keyring died")
	}
}

func TestVaultLockedAndUnavailable(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	program, plog := presencetest.FakePinentry(t, "approve")
	e.pinentryConfig(program)
	if r := e.addCredential("ops", "ops@example.test", newCanary()); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	e.start(t) // before the lock: the host refuses to launch Chromium with a locked keyring
	lock := exec.Command("dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.secrets",
		"/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login")
	lock.Env = e.vars
	if out, err := lock.CombinedOutput(); err != nil {
		t.Fatalf("lock: %v %s", err, out)
	}
	r := e.run("", "headless", "credentials", "verify", "--origin", origin, "--alias", "ops", "--json")
	if r.code != 1 || errCode(t, r) != "VAULT_LOCKED" {
		t.Fatalf("locked: %+v", r)
	}
	// Presence was asked first (nothing is read before it), and the read then failed closed.
	if n := len(presencetest.Prompts(t, plog)); n != 1 {
		t.Fatalf("prompts = %d", n)
	}
	r = e.run("", "headless", "credentials", "list", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"alias":"ops"`) {
		t.Fatalf("list while locked (attributes are readable): %+v", r)
	}

	// A broker with no session bus at all: VAULT_UNAVAILABLE, and no fallback store.
	e2 := newEnv(t, envOptions{noBus: true})
	r = e2.run("", "headless", "credentials", "list", "--json")
	if r.code != 1 || errCode(t, r) != "VAULT_UNAVAILABLE" {
		t.Fatalf("no bus: %+v", r)
	}
	// The keyring going away under a running broker.
	e.stopBroker()
	syscall.Kill(e.k.KeyringPID, syscall.SIGTERM)
	for i := 0; i < 100 && e.k.Alive(); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	r = e.run("", "headless", "credentials", "list", "--json")
	if r.code != 1 || errCode(t, r) != "VAULT_UNAVAILABLE" {
		t.Fatalf("keyring gone: %+v", r)
	}
	for _, dir := range []string{e.root, e2.root} {
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if fi != nil && fi.IsDir() && (p == filepath.Join(dir, "data", "headless", "profile") || p == filepath.Join(dir, "run", "dconf")) {
				return filepath.SkipDir // the browser's own profile (the host ran for verify)
			}
			if err == nil && fi.Mode().IsRegular() && strings.Contains(p, "headless") && !strings.HasSuffix(p, ".log") && !strings.HasSuffix(p, ".lock") && !strings.HasSuffix(p, "config.json") && !strings.HasSuffix(p, "audit.jsonl") {
				t.Errorf("unexpected file on disk: %s", p)
			}
			return nil
		})
	}
}

func TestUnsafeConfigStopsBroker(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	p := e.writeConfig(`{"presence":{"provider":"none"}}`)
	os.Chmod(p, 0o666)
	r := e.run("", "headless", "credentials", "list", "--json")
	if r.code != 1 || errCode(t, r) != "BROKER_UNAVAILABLE" || !strings.Contains(r.stdout, "brokerd.log") {
		t.Fatalf("CLI with an unsafe config: %+v", r)
	}
	r = e.run("", "brokerd")
	if r.code != 1 || !strings.Contains(r.stderr, "writable") {
		t.Fatalf("brokerd with an unsafe config: %+v", r)
	}
	os.Chmod(p, 0o600)
	e.writeConfig(`{"presence":{"provider":"pinentry","program":"/bin/true","approve":true}}`)
	r = e.run("", "brokerd")
	if r.code != 1 || !strings.Contains(r.stderr, "approve") {
		t.Fatalf("unknown key accepted: %+v", r)
	}
}

// TestPendingPromptDoesNotBlockOtherClients holds a real release at the scripted pinentry and
// checks that list, version and a challenge through other processes answer meanwhile.
func TestPendingPromptDoesNotBlockOtherClients(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	program, plog := presencetest.FakePinentry(t, "gate")
	e.writeConfig(`{"presence":{"provider":"pinentry","program":"` + program + `","timeout_seconds":60}}`)
	if r := e.addCredential("ops", "ops@example.test", newCanary()); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	e.start(t)
	verify := e.command("headless", "credentials", "verify", "--origin", origin, "--alias", "ops", "--json")
	var vout strings.Builder
	verify.Stdout = &vout
	if err := verify.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(presencetest.Prompts(t, plog)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("prompt never shown")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 3; i++ {
		r := e.run("", "headless", "credentials", "list", "--json")
		if r.code != 0 {
			t.Fatalf("list while a prompt is pending: %+v", r)
		}
	}
	// ping, version and a challenge from another client process's connection.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := brokerapi.Dial(ctx, e.sockPath())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Call(ctx, brokerapi.MethodPing, nil, nil); err != nil {
		t.Fatalf("ping while a prompt is pending: %v", err)
	}
	if _, err := c.Version(ctx); err != nil {
		t.Fatalf("version while a prompt is pending: %v", err)
	}
	if ch, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: origin}); err != nil || len(ch.Aliases) != 1 {
		t.Fatalf("challenge while a prompt is pending: %+v %v", ch, err)
	}
	if err := verify.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatal("verify finished before the gate opened: the test proves nothing")
	}
	os.WriteFile(plog+".gate", nil, 0o600)
	if err := verify.Wait(); err != nil || !strings.Contains(vout.String(), "released") {
		t.Fatalf("gated verify: %v %s", err, vout.String())
	}
}

// TestDBusMonitorSeesNoPlaintext watches the private bus while a credential is added and
// released through brokerd; the monitor must capture the traffic but never the password.
func TestDBusMonitorSeesNoPlaintext(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	program, _ := presencetest.FakePinentry(t, "approve")
	e.pinentryConfig(program)
	capture := filepath.Join(e.root, "monitor.txt")
	f, _ := os.Create(capture)
	mon := exec.Command(realtest.Binary(t, "dbus-monitor"), "--address", e.k.Addr)
	mon.Stdout, mon.Stderr = f, f
	if err := mon.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { mon.Process.Kill(); mon.Wait(); f.Close() }()
	time.Sleep(300 * time.Millisecond) // let it subscribe; verified below by the captured calls
	canary := newCanary()
	if r := e.addCredential("mon", "mon@example.test", canary); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	e.start(t)
	if r := e.run("", "headless", "credentials", "verify", "--origin", origin, "--alias", "mon", "--json"); r.code != 0 {
		t.Fatalf("verify: %+v", r)
	}
	var got string
	for i := 0; i < 200; i++ {
		b, _ := os.ReadFile(capture)
		got = string(b)
		if strings.Contains(got, "GetSecret") && strings.Contains(got, "CreateItem") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{"dh-ietf1024-sha256-aes128-cbc-pkcs7", "CreateItem", "GetSecret"} {
		if !strings.Contains(got, want) {
			t.Fatalf("monitor did not capture %q, so it would not have seen a leak either", want)
		}
	}
	// dbus-monitor prints byte arrays as hex bytes and strings as text; check both.
	assertNoCanary(t, "dbus-monitor capture", got, canary)
	if strings.Contains(strings.ReplaceAll(got, " ", ""), hex.EncodeToString([]byte(canary))) {
		t.Error("canary bytes in the monitor capture")
	}
}

// TestConcurrentAutoStart starts several CLIs at once with no brokerd running: all succeed and
// exactly one brokerd remains.
func TestConcurrentAutoStart(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	const n = 6
	results := make(chan result, n)
	for i := 0; i < n; i++ {
		go func() { results <- e.run("", "headless", "credentials", "list", "--json") }()
	}
	for i := 0; i < n; i++ {
		if r := <-results; r.code != 0 || !strings.Contains(r.stdout, `"credentials":[]`) {
			t.Errorf("concurrent CLI %d: %+v", i, r)
		}
	}
	// Losing brokerds exit on their own (lock held); give them a moment to finish exiting.
	var brokers []int
	for try := 0; try < 100; try++ {
		brokers = brokers[:0]
		for _, pid := range processesFrom(binDir) {
			if exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); filepath.Base(exe) == "brokerd" && !isZombie(pid) {
				env, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
				if strings.Contains(string(env), e.root) {
					brokers = append(brokers, pid)
				}
			}
		}
		if len(brokers) == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(brokers) != 1 || brokers[0] != e.brokerPID() {
		t.Fatalf("brokerd processes for this env: %v (lock holder %d)", brokers, e.brokerPID())
	}
}
