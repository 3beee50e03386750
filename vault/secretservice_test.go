//go:build linux

package vault_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/test/realtest"
	"github.com/headless-dev/headless/vault"
	"github.com/headless-dev/headless/vault/vaulttest"
)

const (
	secretsName = "org.freedesktop.secrets"
	secretsPath = dbus.ObjectPath("/org/freedesktop/secrets")
)

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// openStore opens a SecretService on the keyring's bus and closes it at cleanup.
func openStore(t testing.TB, addr string) *vault.SecretService {
	t.Helper()
	s, err := vault.OpenSecretService(testCtx(t, 10*time.Second), vault.SecretServiceOptions{Address: addr})
	if err != nil {
		t.Fatalf("OpenSecretService: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rawConn is the test's own connection to the bus, for what the vault API does not do.
func rawConn(t testing.TB, addr string) *dbus.Conn {
	t.Helper()
	c, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connect to test bus: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func defaultCollection(t testing.TB, c *dbus.Conn) dbus.ObjectPath {
	t.Helper()
	var coll dbus.ObjectPath
	err := c.Object(secretsName, secretsPath).Call("org.freedesktop.Secret.Service.ReadAlias", 0, "default").Store(&coll)
	if err != nil || coll == "/" {
		t.Fatalf("ReadAlias(default) = %q, %v", coll, err)
	}
	return coll
}

func lockCollection(t testing.TB, c *dbus.Conn, coll dbus.ObjectPath) {
	t.Helper()
	var (
		locked []dbus.ObjectPath
		prompt dbus.ObjectPath
	)
	err := c.Object(secretsName, secretsPath).Call("org.freedesktop.Secret.Service.Lock", 0, []dbus.ObjectPath{coll}).Store(&locked, &prompt)
	if err != nil || prompt != "/" {
		t.Fatalf("Lock = %v, %q, %v", locked, prompt, err)
	}
}

// plainSession opens a "plain" session on the test's own connection: the control that shows
// what a same-user dbus-monitor would see without transfer encryption.
func plainSession(t testing.TB, c *dbus.Conn) dbus.ObjectPath {
	t.Helper()
	var (
		out     dbus.Variant
		session dbus.ObjectPath
	)
	err := c.Object(secretsName, secretsPath).Call("org.freedesktop.Secret.Service.OpenSession", 0, "plain", dbus.MakeVariant("")).Store(&out, &session)
	if err != nil {
		t.Fatalf("OpenSession(plain): %v", err)
	}
	return session
}

type rawSecret struct {
	Session     dbus.ObjectPath
	Parameters  []byte
	Value       []byte
	ContentType string
}

// unlockWithMasterPassword unlocks coll through gnome-keyring's private interface, without a
// prompt.
func unlockWithMasterPassword(t testing.TB, c *dbus.Conn, coll dbus.ObjectPath, password string) {
	t.Helper()
	s := rawSecret{Session: plainSession(t, c), Value: []byte(password), ContentType: "text/plain"}
	err := c.Object(secretsName, secretsPath).Call("org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface.UnlockWithMasterPassword", 0, coll, s).Store()
	if err != nil {
		t.Fatalf("UnlockWithMasterPassword: %v", err)
	}
}

func TestSecretService(t *testing.T) {
	k := realtest.StartKeyring(t, realtest.KeyringOptions{})
	vaulttest.Run(t, func(t *testing.T) vault.Store { return openStore(t, k.Addr) })
}

func TestSecretServiceLocked(t *testing.T) {
	k := realtest.StartKeyring(t, realtest.KeyringOptions{})
	s := openStore(t, k.Addr)
	ctx := testCtx(t, 30*time.Second)
	const o = "https://locked.test"
	if err := s.Add(ctx, vault.Record{Origin: o, Account: "alice", Alias: "main"}, []byte("pw-locked")); err != nil {
		t.Fatal(err)
	}
	c := rawConn(t, k.Addr)
	coll := defaultCollection(t, c)
	lockCollection(t, c, coll)

	if locked, err := s.Locked(ctx); err != nil || !locked {
		t.Fatalf("Locked = %v, %v; want true", locked, err)
	}
	if _, secret, err := s.Secret(ctx, o, "main"); !errors.Is(err, vault.ErrLocked) || secret != nil {
		t.Fatalf("Secret on locked collection: %v (secret %v); want ErrLocked", err, secret != nil)
	}
	if err := s.Add(ctx, vault.Record{Origin: o, Account: "bob", Alias: "second"}, []byte("pw")); !errors.Is(err, vault.ErrLocked) {
		t.Fatalf("Add on locked collection: %v; want ErrLocked", err)
	}
	if err := s.Remove(ctx, o, "main"); !errors.Is(err, vault.ErrLocked) {
		t.Fatalf("Remove on locked collection: %v; want ErrLocked", err)
	}
	recs, err := s.List(ctx, o)
	if err != nil {
		t.Fatalf("List on locked collection: %v", err)
	}
	if len(recs) != 1 || recs[0].Alias != "main" || recs[0].Account != "alice" || recs[0].Created.IsZero() {
		t.Fatalf("List on locked collection = %+v", recs)
	}
	if _, _, err := s.Secret(ctx, o, "nope"); !errors.Is(err, vault.ErrAliasUnknown) {
		t.Fatalf("Secret(unknown) on locked collection: %v; want ErrAliasUnknown", err)
	}

	// No prompter on this bus: the unlock prompt completes dismissed at once.
	if _, err := s.Unlock(ctx); !errors.Is(err, vault.ErrLocked) {
		t.Fatalf("Unlock without a prompter: %v; want ErrLocked", err)
	}
	if !k.Alive() {
		t.Fatal("keyring died")
	}

	// Unlocked again behind the store's back, the same store works without reopening.
	unlockWithMasterPassword(t, c, coll, k.Password)
	_, secret, err := s.Secret(ctx, o, "main")
	if err != nil || string(secret) != "pw-locked" {
		t.Fatalf("Secret after unlock: %v", err)
	}
	if err := s.Lock(ctx); err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if locked, err := s.Locked(ctx); err != nil || !locked {
		t.Fatalf("Locked after Lock = %v, %v", locked, err)
	}
}

func TestSecretServiceUnavailable(t *testing.T) {
	realtest.Need(t)
	t.Run("NoBus", func(t *testing.T) {
		addr := "unix:path=" + filepath.Join(t.TempDir(), "no-bus")
		_, err := vault.OpenSecretService(testCtx(t, 5*time.Second), vault.SecretServiceOptions{Address: addr})
		if !errors.Is(err, vault.ErrUnavailable) {
			t.Fatalf("OpenSecretService on a missing socket: %v; want ErrUnavailable", err)
		}
		s, err := vault.OpenSecretService(testCtx(t, 5*time.Second), vault.SecretServiceOptions{Address: addr, Lazy: true})
		if err != nil {
			t.Fatalf("lazy OpenSecretService: %v", err)
		}
		defer s.Close()
		for range 2 { // and the next call retries
			if _, err := s.List(testCtx(t, 5*time.Second), ""); !errors.Is(err, vault.ErrUnavailable) {
				t.Fatalf("List without a bus: %v; want ErrUnavailable", err)
			}
		}
	})
	t.Run("RefusedSocket", func(t *testing.T) {
		// A socket file nobody listens on: connection refused.
		path := filepath.Join(t.TempDir(), "bus")
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		l.Close()
		_, err = vault.OpenSecretService(testCtx(t, 5*time.Second), vault.SecretServiceOptions{Address: "unix:path=" + path})
		if !errors.Is(err, vault.ErrUnavailable) {
			t.Fatalf("OpenSecretService on a dead socket: %v; want ErrUnavailable", err)
		}
	})
	t.Run("NoCollection", func(t *testing.T) {
		k := realtest.StartKeyring(t, realtest.KeyringOptions{})
		_, err := vault.OpenSecretService(testCtx(t, 5*time.Second), vault.SecretServiceOptions{Address: k.Addr, Collection: "no-such-alias"})
		if !errors.Is(err, vault.ErrUnavailable) || !strings.Contains(err.Error(), "no-such-alias") {
			t.Fatalf("OpenSecretService on a missing collection alias: %v; want ErrUnavailable naming it", err)
		}
	})
	t.Run("KeyringGoneAndBack", func(t *testing.T) {
		k := realtest.StartKeyring(t, realtest.KeyringOptions{})
		s := openStore(t, k.Addr)
		ctx := testCtx(t, 30*time.Second)
		if err := s.Add(ctx, vault.Record{Origin: "https://gone.test", Account: "a", Alias: "x"}, []byte("pw")); err != nil {
			t.Fatal(err)
		}
		c := rawConn(t, k.Addr)
		if err := syscall.Kill(k.KeyringPID, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		waitNameOwner(t, c, false)
		for range 2 {
			if _, err := s.List(ctx, ""); !errors.Is(err, vault.ErrUnavailable) {
				t.Fatalf("List with the keyring gone: %v; want ErrUnavailable", err)
			}
			if _, _, err := s.Secret(ctx, "https://gone.test", "x"); !errors.Is(err, vault.ErrUnavailable) {
				t.Fatalf("Secret with the keyring gone: %v; want ErrUnavailable", err)
			}
			if err := s.Add(ctx, vault.Record{Origin: "https://gone.test", Account: "a", Alias: "y"}, []byte("pw")); !errors.Is(err, vault.ErrUnavailable) {
				t.Fatalf("Add with the keyring gone: %v; want ErrUnavailable", err)
			}
		}
		// A new keyring daemon on the same bus: the same store reconnects by itself.
		startKeyringDaemon(t, k.Addr, "test2")
		waitNameOwner(t, c, true)
		if err := s.Add(ctx, vault.Record{Origin: "https://back.test", Account: "a", Alias: "x"}, []byte("pw-back")); err != nil {
			t.Fatalf("Add after the keyring came back: %v", err)
		}
		_, secret, err := s.Secret(ctx, "https://back.test", "x")
		if err != nil || string(secret) != "pw-back" {
			t.Fatalf("Secret after the keyring came back: %v", err)
		}
	})
	t.Run("BusGone", func(t *testing.T) {
		k := realtest.StartKeyring(t, realtest.KeyringOptions{})
		s := openStore(t, k.Addr)
		ctx := testCtx(t, 30*time.Second)
		if _, err := s.List(ctx, ""); err != nil {
			t.Fatal(err)
		}
		syscall.Kill(k.KeyringPID, syscall.SIGTERM)
		if err := syscall.Kill(k.BusPID, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, err := s.List(ctx, "")
			if errors.Is(err, vault.ErrUnavailable) {
				break
			}
			if err != nil || time.Now().After(deadline) {
				t.Fatalf("List with the bus gone: %v; want ErrUnavailable", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("Closed", func(t *testing.T) {
		k := realtest.StartKeyring(t, realtest.KeyringOptions{})
		s := openStore(t, k.Addr)
		s.Close()
		if _, err := s.List(testCtx(t, 5*time.Second), ""); !errors.Is(err, vault.ErrUnavailable) {
			t.Fatalf("List after Close: %v; want ErrUnavailable", err)
		}
	})
}

// waitNameOwner waits until org.freedesktop.secrets has (or has not) an owner.
func waitNameOwner(t testing.TB, c *dbus.Conn, want bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var has bool
		err := c.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, secretsName).Store(&has)
		if err != nil {
			t.Fatalf("NameHasOwner: %v", err)
		}
		if has == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("secret service owner present = %v after 10s, want %v", has, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startKeyringDaemon starts another unlocked gnome-keyring-daemon on the bus at addr, with a
// fresh data directory, and stops it at cleanup.
func startKeyringDaemon(t testing.TB, addr, password string) {
	t.Helper()
	bin := realtest.Binary(t, "gnome-keyring-daemon")
	dir, err := os.MkdirTemp("", "vault-gkd.")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, d := range []string{"home", "data", "run"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "--foreground", "--unlock", "--components=secrets", "--control-directory="+filepath.Join(dir, "run", "keyring"))
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"DBUS_SESSION_BUS_ADDRESS=" + addr,
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_RUNTIME_DIR=" + filepath.Join(dir, "run"),
	}
	cmd.Stdin = strings.NewReader(password)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
}

func TestOpenRefusesAutolaunch(t *testing.T) {
	if _, err := vault.OpenSecretService(context.Background(), vault.SecretServiceOptions{Address: "autolaunch:"}); err == nil {
		t.Fatal("OpenSecretService accepted an autolaunch address")
	}
}

// monitor runs dbus-monitor on addr into a file.
type monitor struct {
	path string
	conn *dbus.Conn
}

func startMonitor(t *testing.T, addr string) *monitor {
	t.Helper()
	bin := realtest.Binary(t, "dbus-monitor")
	m := &monitor{path: filepath.Join(t.TempDir(), "monitor.txt"), conn: rawConn(t, addr)}
	f, err := os.Create(m.path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin, "--address", addr)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	m.mark(t, "ready")
	return m
}

// mark sends a call naming a fresh marker and waits until the monitor has written it: then
// everything sent before it is in the file.
func (m *monitor) mark(t *testing.T, what string) string {
	t.Helper()
	b := make([]byte, 8)
	rand.Read(b)
	marker := "org.example.Marker" + strings.ToUpper(what[:1]) + what[1:] + hex.EncodeToString(b)
	deadline := time.Now().Add(10 * time.Second)
	for {
		m.conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, marker)
		time.Sleep(10 * time.Millisecond)
		out := m.read(t)
		if i := strings.Index(out, marker); i >= 0 {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("dbus-monitor did not show marker %s within 10s; output:\n%s", what, out)
		}
	}
}

func (m *monitor) read(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(m.path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// canaryForms are the ways a dbus-monitor line could show b.
func canaryForms(b []byte) []string {
	var spaced []string
	for _, c := range b {
		spaced = append(spaced, hex.EncodeToString([]byte{c}))
	}
	return []string{
		string(b),
		hex.EncodeToString(b),
		strings.ToUpper(hex.EncodeToString(b)),
		strings.Join(spaced, " "),
		base64.StdEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
	}
}

func showsCanary(out string, canary []byte) (string, bool) {
	for _, f := range canaryForms(canary) {
		if strings.Contains(out, f) {
			return f, true
		}
	}
	// A long canary is also caught when dbus-monitor splits the hex over lines.
	squashed := strings.Join(strings.Fields(out), "")
	if strings.Contains(squashed, hex.EncodeToString(canary)) {
		return "hex split over lines", true
	}
	return "", false
}

func TestSecretServiceDBusMonitor(t *testing.T) {
	k := realtest.StartKeyring(t, realtest.KeyringOptions{})
	m := startMonitor(t, k.Addr)
	ctx := testCtx(t, 30*time.Second)

	b := make([]byte, 12)
	rand.Read(b)
	canary := []byte("canary-" + hex.EncodeToString(b))
	const o = "https://monitor.test"

	s := openStore(t, k.Addr)
	if err := s.Add(ctx, vault.Record{Origin: o, Account: "alice", Alias: "watched"}, bytes.Clone(canary)); err != nil {
		t.Fatal(err)
	}
	_, got, err := s.Secret(ctx, o, "watched")
	if err != nil || !bytes.Equal(got, canary) {
		t.Fatalf("Secret: %v", err)
	}
	out := m.mark(t, "vault")
	if !strings.Contains(out, "dh-ietf1024-sha256-aes128-cbc-pkcs7") {
		t.Fatal("monitor did not see the store's OpenSession")
	}
	if !strings.Contains(out, "CreateItem") || !strings.Contains(out, "GetSecret") {
		t.Fatal("monitor did not see CreateItem and GetSecret")
	}
	if strings.Contains(out, `"plain"`) {
		t.Fatal("the store opened a plain session")
	}
	if form, ok := showsCanary(out, canary); ok {
		t.Fatalf("dbus-monitor saw the password (%s) while the vault used it", form)
	}

	// Control: the same secret read over a plain session is visible, so the check above can
	// fail.
	c := rawConn(t, k.Addr)
	session := plainSession(t, c)
	var unlocked, locked []dbus.ObjectPath
	err = c.Object(secretsName, secretsPath).Call("org.freedesktop.Secret.Service.SearchItems", 0,
		map[string]string{"origin": o, "alias": "watched"}).Store(&unlocked, &locked)
	if err != nil || len(unlocked) != 1 {
		t.Fatalf("SearchItems: %v, %v", unlocked, err)
	}
	var sec rawSecret
	if err := c.Object(secretsName, unlocked[0]).Call("org.freedesktop.Secret.Item.GetSecret", 0, session).Store(&sec); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sec.Value, canary) {
		t.Fatal("plain GetSecret returned another value")
	}
	out = m.mark(t, "control")
	if _, ok := showsCanary(out, canary); !ok {
		t.Fatalf("control failed: dbus-monitor did not show a plain-session secret; the absence check proves nothing. Output:\n%s", out)
	}
}

func TestSecretServiceSecretTool(t *testing.T) {
	k := realtest.StartKeyring(t, realtest.KeyringOptions{})
	bin := realtest.Binary(t, "secret-tool")
	s := openStore(t, k.Addr)
	ctx := testCtx(t, 30*time.Second)
	if err := s.Add(ctx, vault.Record{Origin: "https://tool.test:8443", Account: "alice@example.com", Alias: "Work"}, []byte("visible-to-secret-tool")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "search", "--all", "xdg:schema", vault.SecretServiceSchema)
	cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+k.Addr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("secret-tool search: %v\n%s", err, out)
	}
	for _, want := range []string{
		"attribute.origin = https://tool.test:8443",
		"attribute.account = alice@example.com",
		"attribute.alias = Work",
		"label = headless: Work (alice@example.com) at https://tool.test:8443",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("secret-tool output lacks %q:\n%s", want, out)
		}
	}
}

func BenchmarkSecretServiceGet(b *testing.B) {
	k := realtest.StartKeyring(b, realtest.KeyringOptions{})
	s := openStore(b, k.Addr)
	ctx := testCtx(b, time.Minute)
	for i, a := range []string{"a", "b", "c", "bench"} { // a few neighbours at the origin
		if err := s.Add(ctx, vault.Record{Origin: "https://bench.test", Account: "acct", Alias: a}, []byte("benchmark-password-"+string(rune('0'+i)))); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		_, secret, err := s.Secret(ctx, "https://bench.test", "bench")
		if err != nil {
			b.Fatal(err)
		}
		credential.Zero(secret)
	}
}

func TestSecretServicePromptTimeout(t *testing.T) {
	const prompterName = "org.example.HeadlessTestPrompter"
	k := realtest.StartKeyring(t, realtest.KeyringOptions{Env: []string{"GNOME_KEYRING_TEST_PROMPTER=" + prompterName}})
	m := startMonitor(t, k.Addr)

	// The person walked away from the dialog: every prompt is held.
	p := presencetest.StartPrompter(t, k.Addr, prompterName, presencetest.Answer{Hold: true})

	s := openStore(t, k.Addr)
	ctx := testCtx(t, 30*time.Second)
	if err := s.Add(ctx, vault.Record{Origin: "https://prompt.test", Account: "a", Alias: "x"}, []byte("pw")); err != nil {
		t.Fatal(err)
	}
	if err := s.Lock(ctx); err != nil {
		t.Fatal(err)
	}

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Unlock(short)
	elapsed := time.Since(start)
	if !errors.Is(err, vault.ErrLocked) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Unlock with an unanswered prompt: %v; want ErrLocked and DeadlineExceeded", err)
	}
	if elapsed > 2*time.Second {
		t.Fatalf("Unlock returned %v after its 300ms context ended", elapsed)
	}
	if p.WaitPrompts(1, 2*time.Second) < 1 {
		t.Fatal("the keyring never asked the test prompter: the prompt path was not exercised")
	}

	// The keyring survived: it is running and answers the same store.
	if !k.Alive() {
		t.Fatal("gnome-keyring-daemon died")
	}
	if locked, err := s.Locked(ctx); err != nil || !locked {
		t.Fatalf("Locked after the abandoned prompt = %v, %v", locked, err)
	}
	if _, _, err := s.Secret(ctx, "https://prompt.test", "x"); !errors.Is(err, vault.ErrLocked) {
		t.Fatalf("Secret while locked: %v", err)
	}
	out := m.mark(t, "prompt")
	if !strings.Contains(out, "member=Prompt\n") && !strings.Contains(out, "member=Prompt ") {
		t.Fatal("monitor did not see Prompt.Prompt")
	}
	if strings.Contains(out, "member=Dismiss") {
		t.Fatal("the store called Prompt.Dismiss")
	}

	// The prompter goes away: gkd ends the pending prompt dismissed and stays up.
	p.Close()
	c := rawConn(t, k.Addr)
	var has bool
	if err := c.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, secretsName).Store(&has); err != nil || !has {
		t.Fatalf("secret service gone after the prompter left: %v, %v", has, err)
	}
	if locked, err := s.Locked(ctx); err != nil || !locked {
		t.Fatalf("Locked after the prompter left = %v, %v", locked, err)
	}
}

func TestSecretServiceUnlockPrompt(t *testing.T) {
	const prompterName = "org.example.HeadlessTestPrompter"
	k := realtest.StartKeyring(t, realtest.KeyringOptions{Env: []string{"GNOME_KEYRING_TEST_PROMPTER=" + prompterName}})
	m := startMonitor(t, k.Addr)
	// The person types the right password (the first prompt only after Unlock gave up).
	p := presencetest.StartPrompter(t, k.Addr, prompterName, presencetest.Answer{Password: k.Password})
	p.Script(presencetest.Answer{Hold: true})
	s := openStore(t, k.Addr)
	ctx := testCtx(t, 30*time.Second)
	const o = "https://unlock.test"
	if err := s.Add(ctx, vault.Record{Origin: o, Account: "a", Alias: "x"}, []byte("pw-unlock")); err != nil {
		t.Fatal(err)
	}
	if err := s.Lock(ctx); err != nil {
		t.Fatal(err)
	}

	// Abandoned: the person answers only after Unlock gave up. The store locks again.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := s.Unlock(short); !errors.Is(err, vault.ErrLocked) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Unlock with a late answer: %v; want ErrLocked and DeadlineExceeded", err)
	}
	p.AnswerHeld(presencetest.Answer{Password: k.Password})
	// The monitor shows the sequence: the prompt completes not dismissed (gkd unlocked the
	// collection), then the store calls Service.Lock.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := m.mark(t, "relock")
		i := strings.Index(out, "member=Completed\n   boolean false")
		if i >= 0 && strings.Contains(out[i:], "interface=org.freedesktop.Secret.Service; member=Lock") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Completed(false) followed by Lock within 10s:\n%s", out)
		}
	}
	if locked, err := s.Locked(ctx); err != nil || !locked {
		t.Fatalf("Locked after the abandoned prompt was answered = %v, %v; want true", locked, err)
	}
	if _, _, err := s.Secret(ctx, o, "x"); !errors.Is(err, vault.ErrLocked) {
		t.Fatalf("Secret after the abandoned prompt: %v; want ErrLocked", err)
	}

	// Answered in time: Unlock succeeds and the secret is readable.
	start := time.Now()
	if _, err := s.Unlock(ctx); err != nil {
		t.Fatalf("Unlock with an answering prompter: %v", err)
	}
	t.Logf("unlock through the scripted prompter took %v", time.Since(start))
	_, secret, err := s.Secret(ctx, o, "x")
	if err != nil || string(secret) != "pw-unlock" {
		t.Fatalf("Secret after Unlock: %v", err)
	}
	if !k.Alive() {
		t.Fatal("gnome-keyring-daemon died")
	}
}

// BenchmarkSecretServiceRawGetSecret is the floor for BenchmarkSecretServiceGet: one bare
// Item.GetSecret round trip on a plain session (the vault itself never uses plain sessions).
func BenchmarkSecretServiceRawGetSecret(b *testing.B) {
	k := realtest.StartKeyring(b, realtest.KeyringOptions{})
	s := openStore(b, k.Addr)
	if err := s.Add(testCtx(b, time.Minute), vault.Record{Origin: "https://bench.test", Account: "acct", Alias: "bench"}, []byte("benchmark-password")); err != nil {
		b.Fatal(err)
	}
	c := rawConn(b, k.Addr)
	session := plainSession(b, c)
	var unlocked, locked []dbus.ObjectPath
	if err := c.Object(secretsName, secretsPath).Call("org.freedesktop.Secret.Service.SearchItems", 0,
		map[string]string{"alias": "bench"}).Store(&unlocked, &locked); err != nil || len(unlocked) != 1 {
		b.Fatalf("SearchItems: %v %v", unlocked, err)
	}
	item := c.Object(secretsName, unlocked[0])
	b.ResetTimer()
	for b.Loop() {
		var sec rawSecret
		if err := item.Call("org.freedesktop.Secret.Item.GetSecret", 0, session).Store(&sec); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSecretServiceAbandonedPromptSurvivesReconnect: a prompt nobody waits for stays open in
// gnome-keyring; dropping the store's connection (as any classified bus error does) must not
// stop the watch, or a late answer would unlock the collection for whoever asks next.
func TestSecretServiceAbandonedPromptSurvivesReconnect(t *testing.T) {
	k := realtest.StartKeyring(t, realtest.KeyringOptions{})
	pr := presencetest.StartPrompter(t, k.Addr, presencetest.SystemPrompterName, presencetest.Answer{Cancel: true})
	s := openStore(t, k.Addr)
	ctx := testCtx(t, 30*time.Second)
	const o = "https://abandon.test"
	if err := s.Add(ctx, vault.Record{Origin: o, Account: "a", Alias: "x"}, []byte("pw-abandon")); err != nil {
		t.Fatal(err)
	}
	if err := s.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	pr.Script(presencetest.Answer{Hold: true})
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := s.Unlock(short); !errors.Is(err, vault.ErrLocked) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Unlock unanswered: %v", err)
	}
	idle := func() bool {
		select {
		case <-s.Idle():
			return true
		default:
			return false
		}
	}
	if idle() {
		t.Fatal("Idle with an abandoned prompt open")
	}
	vault.DropConnForTest(s)
	if locked, err := s.Locked(ctx); err != nil || !locked {
		t.Fatalf("Locked on a new connection = %v, %v", locked, err)
	}
	time.Sleep(200 * time.Millisecond)
	if idle() {
		t.Fatal("dropping the connection ended the watch on the abandoned prompt")
	}
	// The person answers late: the old connection's watcher locks the collection again.
	pr.AnswerHeld(presencetest.Answer{Password: k.Password})
	select {
	case <-s.Idle():
	case <-time.After(10 * time.Second):
		t.Fatal("the abandoned prompt never settled")
	}
	if locked, err := s.Locked(ctx); err != nil || !locked {
		t.Fatalf("after the late answer: locked = %v, %v; want locked", locked, err)
	}
	if _, _, err := s.Secret(ctx, o, "x"); !errors.Is(err, vault.ErrLocked) {
		t.Fatalf("Secret after the late answer: %v; want ErrLocked", err)
	}
}
