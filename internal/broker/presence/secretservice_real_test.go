//go:build linux

package presence_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/test/realtest"
	"github.com/headless-dev/headless/vault"
)

// ssFixture is a private bus with a real gnome-keyring, a scripted person at the keyring's
// system prompter, the dedicated "headless" collection (created through the prompter) holding
// one credential, and the provider on it.
type ssFixture struct {
	index  string
	k      *realtest.Keyring
	pr     *presencetest.Prompter
	store  *vault.SecretService
	p      *presence.SecretService
	keypw  string
	canary string
}

const (
	ssOrigin = "https://ss.test"
	ssAlias  = "work"
)

func newSSFixtureB(b *testing.B) *ssFixture { return newSSFixture(b, 10*time.Second) }

func newSSFixture(t testing.TB, timeout time.Duration) *ssFixture {
	t.Helper()
	k := realtest.StartKeyring(t, realtest.KeyringOptions{})
	f := &ssFixture{k: k, keypw: "keyring-pw-" + rand8(t), canary: "canary-" + rand8(t), index: indexPath(t)}
	f.pr = presencetest.StartPrompter(t, k.Addr, presencetest.SystemPrompterName, presencetest.Answer{Cancel: true})
	s, err := vault.OpenSecretService(context.Background(), vault.SecretServiceOptions{Address: k.Addr, Label: "headless", Index: f.index})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f.store = s
	f.p = presence.NewSecretService(presence.SecretServiceOptions{Keyring: s, Timeout: timeout})
	ctx := testContext(t)

	// First add: the keyring asks for the new keyring's password (the person types it).
	f.pr.Script(presencetest.Answer{Password: f.keypw})
	err = f.p.Unlocked(ctx, true, func(ctx context.Context) error {
		return s.Add(ctx, vault.Record{Origin: ssOrigin, Account: "alice", Alias: ssAlias}, []byte(f.canary))
	})
	if err != nil {
		t.Fatalf("first add: %v", err)
	}
	if got := f.pr.Prompts(); len(got) != 1 || !got[0].PasswordNew {
		t.Fatalf("first add prompts = %+v; want one new-keyring-password prompt", got)
	}
	f.assertLocked(t)
	return f
}

func indexPath(t testing.TB) string { return filepath.Join(t.TempDir(), "credentials.json") }

func rand8(t testing.TB) string {
	b := make([]byte, 4)
	f, err := os.Open("/dev/urandom")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Read(b)
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 8)
	for _, c := range b {
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (f *ssFixture) assertLocked(t testing.TB) {
	t.Helper()
	locked, err := f.store.Locked(testContext(t))
	if err != nil || !locked {
		t.Fatalf("the headless keyring: locked = %v, %v; want locked", locked, err)
	}
}

// release runs one release through the provider and returns the secret read (if any).
func (f *ssFixture) release(ctx context.Context) (string, error) {
	var got string
	err := f.p.Do(ctx, presence.Request{Origin: ssOrigin, Alias: ssAlias}, func(ctx context.Context) error {
		_, pw, err := f.store.Secret(ctx, ssOrigin, ssAlias)
		got = string(pw)
		credential.Zero(pw)
		return err
	})
	return got, err
}

func TestSecretServiceProviderReal(t *testing.T) {
	f := newSSFixture(t, 2*time.Second)
	ctx := testContext(t)

	// A same-user program cannot read the item while no release is in progress: secret-tool
	// has to ask the keyring to unlock, the person (who did not ask for it) cancels.
	bin := realtest.Binary(t, "secret-tool")
	n := len(f.pr.Prompts())
	cmd := exec.CommandContext(ctx, bin, "lookup", "origin", ssOrigin, "alias", ssAlias)
	cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+f.k.Addr)
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), f.canary) {
		t.Fatalf("secret-tool lookup while locked: err %v, output %q; want a failure without the secret", err, out)
	}
	if got := len(f.pr.Prompts()); got != n+1 {
		t.Fatalf("secret-tool lookup caused %d prompts, want 1 (the keyring must ask the person)", got-n)
	}
	f.assertLocked(t)

	// The locked keyring is listed from the index: metadata only, exact bytes.
	idx, err := os.ReadFile(f.index)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Version     int
		Credentials []vault.Record
	}
	if err := json.Unmarshal(idx, &file); err != nil || file.Version != 1 || len(file.Credentials) != 1 {
		t.Fatalf("index %s: %v", idx, err)
	}
	created := file.Credentials[0].Created.UTC().Format(time.RFC3339)
	want := `{"version":1,"credentials":[{"origin":"https://ss.test","account":"alice","alias":"work","created":"` + created + `"}]}` + "\n"
	if string(idx) != want {
		t.Fatalf("index bytes:\n%s\nwant\n%s", idx, want)
	}
	if fi, err := os.Stat(f.index); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("index mode: %v %v", fi.Mode(), err)
	}
	// Another program plants an entry: it is listed (and could only fail a release after the
	// prompt), and the next approved unlock rebuilds the index from the collection.
	planted := strings.Replace(want, `]}`, `,{"origin":"https://ss.test","account":"mallory","alias":"planted","created":"`+created+`"}]}`, 1)
	if err := os.WriteFile(f.index, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	if recs, err := f.store.List(ctx, ssOrigin); err != nil || len(recs) != 2 {
		t.Fatalf("List with a planted entry = %v, %v", recs, err)
	}

	// Approve: the person types the keyring's password; the secret is read, then locked again.
	f.pr.Script(presencetest.Answer{Password: f.keypw})
	got, err := f.release(ctx)
	if err != nil || got != f.canary {
		t.Fatalf("approved release: %q, %v", got, err)
	}
	f.assertLocked(t)
	if idx, err := os.ReadFile(f.index); err != nil || string(idx) != want {
		t.Fatalf("index after an unlock: %s (%v); want it rebuilt:\n%s", idx, err, want)
	}

	// Wrong password, then Cancel: denied, nothing read.
	n = len(f.pr.Prompts())
	f.pr.Script(presencetest.Answer{Password: "wrong"}, presencetest.Answer{Cancel: true})
	got, err = f.release(ctx)
	if !errors.Is(err, presence.ErrDenied) || got != "" {
		t.Fatalf("wrong password then cancel: %q, %v; want ErrDenied", got, err)
	}
	if p := len(f.pr.Prompts()) - n; p != 2 {
		t.Fatalf("wrong password: %d prompts, want 2 (a re-prompt)", p)
	}
	f.assertLocked(t)

	// No answer: PRESENCE_TIMEOUT by ceasing to wait, never Prompt.Dismiss; the keyring lives.
	f.pr.Script(presencetest.Answer{Hold: true})
	start := time.Now()
	got, err = f.release(ctx)
	if !errors.Is(err, presence.ErrTimeout) || got != "" {
		t.Fatalf("unanswered prompt: %q, %v; want ErrTimeout", got, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("timeout took %v", d)
	}
	if !f.k.Alive() {
		t.Fatal("gnome-keyring-daemon died after a timeout")
	}
	// While the abandoned prompt is open, a new release does not reach the keyring.
	n = len(f.pr.Prompts())
	if _, err := f.release(ctx); !errors.Is(err, presence.ErrTimeout) || !strings.Contains(err.Error(), "earlier keyring prompt") {
		t.Fatalf("release behind an open prompt: %v", err)
	}
	// The person answers the abandoned prompt late: the collection is locked again at once.
	f.pr.AnswerHeld(presencetest.Answer{Password: f.keypw})
	select {
	case <-f.store.Idle():
	case <-time.After(10 * time.Second):
		t.Fatal("the abandoned prompt never settled")
	}
	f.assertLocked(t)
	if got := len(f.pr.Prompts()); got != n {
		t.Fatalf("%d prompts while the window was held, want 0", got-n)
	}

	// And the next release works again; an unchanged index is not rewritten.
	before, err := os.Stat(f.index)
	if err != nil {
		t.Fatal(err)
	}
	f.pr.Script(presencetest.Answer{Password: f.keypw})
	if got, err := f.release(ctx); err != nil || got != f.canary {
		t.Fatalf("release after recovery: %q, %v", got, err)
	}
	if after, err := os.Stat(f.index); err != nil || !os.SameFile(before, after) {
		t.Fatalf("the index was rewritten although nothing changed (%v)", err)
	}

	// A FIFO planted at the index path cannot hang a release (the index is read inside the
	// unlock window) and the keyring ends locked; listing says it could not look.
	if err := os.Remove(f.index); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(f.index, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.List(ctx, ""); !errors.Is(err, vault.ErrUnavailable) {
		t.Fatalf("List with a FIFO index = %v, want ErrUnavailable", err)
	}
	f.pr.Script(presencetest.Answer{Password: f.keypw})
	fifoDone := make(chan error, 1)
	go func() { _, err := f.release(ctx); fifoDone <- err }()
	select {
	case err := <-fifoDone:
		if err != nil {
			t.Fatalf("release with a FIFO index: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a FIFO at the index path hung the release")
	}
	f.assertLocked(t)
	// The approved unlock rebuilt the index as a regular file.
	if recs, err := f.store.List(ctx, ""); err != nil || len(recs) != 1 {
		t.Fatalf("List after the rebuild = %v, %v", recs, err)
	}

	// The prompter disappears mid-prompt: the keyring ends the prompt dismissed (denied),
	// stays alive, and the collection stays locked.
	f.pr.Script(presencetest.Answer{Hold: true})
	done := make(chan error, 1)
	go func() { _, err := f.release(ctx); done <- err }()
	f.pr.WaitPrompts(len(f.pr.Prompts())+1, 10*time.Second)
	f.pr.Close()
	if err := <-done; !errors.Is(err, presence.ErrDenied) {
		t.Fatalf("prompter gone mid-prompt: %v; want ErrDenied", err)
	}
	if !f.k.Alive() {
		t.Fatal("gnome-keyring-daemon died after a dismissed prompt")
	}
	f.assertLocked(t)

	// No prompter at all: PRESENCE_UNAVAILABLE, nobody was asked, nothing unlocked.
	if _, err := f.release(ctx); !errors.Is(err, presence.ErrUnavailable) {
		t.Fatalf("release without a prompter: %v; want ErrUnavailable", err)
	}
	f.assertLocked(t)
}

func TestSecretServiceProviderAutoUnlockTrap(t *testing.T) {
	f := newSSFixture(t, 5*time.Second)
	ctx := testContext(t)

	// The person approves but leaves "automatically unlock" ticked: gnome-keyring now stores
	// the password and would unlock with nobody asked. Fail closed, now and later.
	f.pr.Script(presencetest.Answer{Password: f.keypw, KeepAutoUnlock: true})
	if got, err := f.release(ctx); !errors.Is(err, presence.ErrAutoUnlock) || got != "" {
		t.Fatalf("approve with auto-unlock ticked: %q, %v; want ErrAutoUnlock", got, err)
	}
	f.assertLocked(t)
	stored, err := f.store.AutoUnlockStored(ctx)
	if err != nil || !stored {
		t.Fatalf("AutoUnlockStored = %v, %v; want true", stored, err)
	}
	// The trap is real: a bare Unlock now succeeds without any prompt.
	n := len(f.pr.Prompts())
	if _, err := f.store.Unlock(ctx); err != nil {
		t.Fatalf("bare unlock: %v", err)
	}
	if len(f.pr.Prompts()) != n {
		t.Fatal("the keyring prompted; the auto-unlock trap was not set up")
	}
	if err := f.store.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// So the provider refuses before touching the collection.
	if got, err := f.release(ctx); !errors.Is(err, presence.ErrAutoUnlock) || got != "" {
		t.Fatalf("release with a stored auto-unlock password: %q, %v; want ErrAutoUnlock", got, err)
	}
	if len(f.pr.Prompts()) != n {
		t.Fatal("prompted although the release was refused")
	}
	f.assertLocked(t)
}

func TestSecretServiceProviderInit(t *testing.T) {
	k := realtest.StartKeyring(t, realtest.KeyringOptions{})
	pr := presencetest.StartPrompter(t, k.Addr, presencetest.SystemPrompterName, presencetest.Answer{Cancel: true})
	s, err := vault.OpenSecretService(context.Background(), vault.SecretServiceOptions{Address: k.Addr, Label: "headless", Index: indexPath(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := presence.NewSecretService(presence.SecretServiceOptions{Keyring: s, Timeout: 5 * time.Second})
	ctx := testContext(t)

	// Before init: nothing listed (nothing exists), Lock says there is no keyring.
	if recs, err := s.List(ctx, ""); err != nil || len(recs) != 0 {
		t.Fatalf("List before init = %v, %v", recs, err)
	}
	if err := s.Lock(ctx); !errors.Is(err, vault.ErrNoKeyring) {
		t.Fatalf("Lock before init = %v, want ErrNoKeyring", err)
	}
	// The person cancels the new-password prompt: denied, nothing created.
	if _, err := p.Init(ctx); !errors.Is(err, presence.ErrDenied) {
		t.Fatalf("Init cancelled = %v, want ErrDenied", err)
	}
	if err := s.Lock(ctx); !errors.Is(err, vault.ErrNoKeyring) {
		t.Fatalf("Lock after a cancelled init = %v, want ErrNoKeyring", err)
	}
	// The person answers the new-password prompt only after Init gave up: the collection is
	// made, locked at once by the watcher, and found by the store without a restart.
	pr.Script(presencetest.Answer{Hold: true})
	short := presence.NewSecretService(presence.SecretServiceOptions{Keyring: s, Timeout: 300 * time.Millisecond})
	if _, err := short.Init(ctx); !errors.Is(err, presence.ErrTimeout) {
		t.Fatalf("Init unanswered = %v, want ErrTimeout", err)
	}
	pr.AnswerHeld(presencetest.Answer{Password: "new-keyring-pw"})
	select {
	case <-s.Idle():
	case <-time.After(10 * time.Second):
		t.Fatal("the abandoned create prompt never settled")
	}
	if locked, err := s.Locked(ctx); err != nil || !locked {
		t.Fatalf("after a late-answered create: locked = %v, %v; want the new keyring, locked", locked, err)
	}
	created, err := p.Init(ctx)
	if err != nil || created {
		t.Fatalf("Init after the late create = %v, %v; want it to exist", created, err)
	}
	_ = created
	// A decoy: a second collection with the same label makes the store refuse to guess.
	c, err := dbus.Connect(k.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pr.Script(presencetest.Answer{Password: "decoy"})
	var coll, prompt dbus.ObjectPath
	err = c.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").Call("org.freedesktop.Secret.Service.CreateCollection", 0,
		map[string]dbus.Variant{"org.freedesktop.Secret.Collection.Label": dbus.MakeVariant("headless")}, "").Store(&coll, &prompt)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *dbus.Signal, 4)
	c.Signal(ch)
	c.AddMatchSignal(dbus.WithMatchInterface("org.freedesktop.Secret.Prompt"))
	if err := c.Object("org.freedesktop.secrets", prompt).Call("org.freedesktop.Secret.Prompt.Prompt", 0, "").Err; err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("decoy collection prompt did not complete")
	}
	s2, err := vault.OpenSecretService(ctx, vault.SecretServiceOptions{Address: k.Addr, Label: "headless", Index: indexPath(t)})
	if !errors.Is(err, vault.ErrUnavailable) || !strings.Contains(err.Error(), "2 collections are labelled") {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("open with two 'headless' collections = %v; want ErrUnavailable naming the ambiguity", err)
	}
}

// benchRelease measures one approved release per iteration and reports p50/p99.
func benchRelease(b *testing.B, run func(f *ssFixture, ctx context.Context) error) {
	f := newSSFixtureB(b)
	ctx := context.Background()
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.pr.Script(presencetest.Answer{Password: f.keypw})
		start := time.Now()
		if err := run(f, ctx); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkSecretServiceRelease: the provider's whole window (auto-unlock checks, lock,
// unlock through the scripted prompter, read, lock).
func BenchmarkSecretServiceRelease(b *testing.B) {
	benchRelease(b, func(f *ssFixture, ctx context.Context) error {
		_, err := f.release(ctx)
		return err
	})
}

// BenchmarkSecretServiceBaselineUnlock: the same unlock, read and lock done bare on the vault.
func BenchmarkSecretServiceBaselineUnlock(b *testing.B) {
	benchRelease(b, func(f *ssFixture, ctx context.Context) error {
		if _, err := f.store.Unlock(ctx); err != nil {
			return err
		}
		_, pw, err := f.store.Secret(ctx, ssOrigin, ssAlias)
		credential.Zero(pw)
		if err != nil {
			return err
		}
		return f.store.Lock(ctx)
	})
}

// TestSecretServiceRemoveRefusedKeepsIndexEntry: the index entry goes first in a remove (so a
// full disk refuses it with nothing removed); when the keyring then refuses to delete the item
// (here: the collection is locked; gnome-keyring 42.1 refuses a locked item's Delete, and
// should it prompt instead, the person cancels), the entry is put back and the item is still
// there.
func TestSecretServiceRemoveRefusedKeepsIndexEntry(t *testing.T) {
	f := newSSFixture(t, 5*time.Second)
	ctx := testContext(t)
	before, err := os.ReadFile(f.index)
	if err != nil || !strings.Contains(string(before), `"`+ssAlias+`"`) {
		t.Fatalf("index before the remove: %q, %v", before, err)
	}
	err = f.store.Remove(ctx, ssOrigin, ssAlias) // the fixture's person cancels any prompt
	if !errors.Is(err, vault.ErrLocked) {
		t.Fatalf("Remove on the locked keyring: %v; want ErrLocked", err)
	}
	after, err := os.ReadFile(f.index)
	if err != nil {
		t.Fatal(err)
	}
	var b, a any
	if err := json.Unmarshal(before, &b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(after, &a); err != nil {
		t.Fatalf("index after the refused remove is not JSON: %v: %q", err, after)
	}
	bj, _ := json.Marshal(b)
	aj, _ := json.Marshal(a)
	if string(aj) != string(bj) {
		t.Fatalf("index after the refused remove:\n%s\nwant it as before:\n%s", after, before)
	}
	if recs, err := f.store.List(ctx, ssOrigin); err != nil || len(recs) != 1 || recs[0].Alias != ssAlias {
		t.Fatalf("List after the refused remove = %+v, %v", recs, err)
	}
	f.assertLocked(t)
	// The item itself is still in the keyring: an approved release reads it.
	f.pr.Script(presencetest.Answer{Password: f.keypw})
	got, err := f.release(ctx)
	if err != nil || got != f.canary {
		t.Fatalf("release after the refused remove: err %v, got the canary: %v", err, got == f.canary)
	}
}
