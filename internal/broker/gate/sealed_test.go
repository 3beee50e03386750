package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/broker/seal"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

// fakeSealer is the person at a passphrase prompt: at each try they type the next of typed
// (the last one again once they run out). Like the real provider, three tries at most.
type fakeSealer struct {
	mu      sync.Mutex
	typed   []string
	asks    []presence.Request
	repeats []bool
	tries   int
}

func (f *fakeSealer) Name() string { return "passphrase" }
func (f *fakeSealer) Do(context.Context, presence.Request, func(context.Context) error) error {
	return presence.ErrUnavailable
}

func (f *fakeSealer) Ask(ctx context.Context, r presence.Request, repeat bool, check func([]byte) error) error {
	f.mu.Lock()
	f.asks = append(f.asks, r)
	f.repeats = append(f.repeats, repeat)
	f.mu.Unlock()
	for try := 1; ; try++ {
		f.mu.Lock()
		pass := f.typed[min(f.tries, len(f.typed)-1)]
		f.tries++
		f.mu.Unlock()
		err := check([]byte(pass))
		if err == nil || !errors.Is(err, presence.ErrTryAgain) {
			return err
		}
		if try == presence.MaxPassphraseTries {
			return fmt.Errorf("%w: %w", presence.ErrDenied, err)
		}
	}
}

func (f *fakeSealer) typing(p ...string) {
	f.mu.Lock()
	f.typed, f.tries = p, 0
	f.mu.Unlock()
}

func (f *fakeSealer) asked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asks)
}

// newSealedFixture is a fixture whose presence is the passphrase, with an empty vault.
func newSealedFixture(t *testing.T) (*fixture, *fakeSealer) {
	f := newFixture(t)
	ctx := context.Background()
	for _, k := range [][2]string{{"https://app.example", "staging-admin"}, {"https://other.example", "other-bob"}} {
		if err := f.store.Remove(ctx, k[0], k[1]); err != nil {
			t.Fatal(err)
		}
	}
	sp := &fakeSealer{}
	f.srv.Presence = sp
	return f, sp
}

const passphrase = "a passphrase of some length"

func (f *fixture) release(t *testing.T, c *brokerapi.Client, o, alias string, purpose string) (brokerapi.Released, []byte, error) {
	t.Helper()
	ch, err := c.Challenge(context.Background(), brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: o})
	if err != nil {
		t.Fatal(err)
	}
	return c.Release(context.Background(), brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: alias, Session: "s", Document: "d", Purpose: purpose})
}

// TestSealedCredentials: with the passphrase provider a credential is saved sealed (the vault
// holds nothing usable without the passphrase), the first passphrase is chosen (asked twice,
// long enough), later ones must open what is saved, a release is the person opening it, and a
// wrong passphrase three times releases nothing.
func TestSealedCredentials(t *testing.T) {
	ctx := context.Background()
	f, sp := newSealedFixture(t)
	c := f.client(t)

	// The first add chooses the passphrase: too short is asked again.
	sp.typing("short", passphrase)
	cred, err := c.Add(ctx, "https://app.example", "admin@example", "staging-admin", []byte(canary))
	if err != nil || cred.Alias != "staging-admin" {
		t.Fatalf("first add: %+v %v", cred, err)
	}
	if !sp.repeats[0] || !sp.asks[0].Save || sp.asks[0].Alias != "staging-admin" || sp.tries != 2 {
		t.Fatalf("first add asked %+v (repeat %v) over %d tries; want a save prompt, asked twice, two tries", sp.asks[0], sp.repeats[0], sp.tries)
	}
	_, text, err := f.store.Store.Secret(ctx, "https://app.example", "staging-admin")
	if err != nil || !credential.IsSealed(text) || bytes.Contains(text, []byte(canary)) {
		t.Fatalf("the vault holds %q (%v); want a sealed text without the password", text, err)
	}

	// Released: the person types the passphrase.
	sp.typing(passphrase)
	rel, secret, err := f.release(t, c, "https://app.example", "staging-admin", "")
	if err != nil || string(secret) != canary || rel.Alias != "staging-admin" {
		t.Fatalf("release: %+v, %v (got the canary: %v)", rel, err, string(secret) == canary)
	}
	if r := sp.asks[len(sp.asks)-1]; r.Save || !r.Host || r.Origin != "https://app.example" || r.Account != "admin@example" {
		t.Fatalf("release prompt %+v", r)
	}
	released(t, f, `"released":["password"]`)

	// Wrong once, then right: released. Wrong three times: denied, nothing released, audited.
	sp.typing("not it", passphrase)
	if _, secret, err := f.release(t, c, "https://app.example", "staging-admin", ""); err != nil || string(secret) != canary {
		t.Fatalf("wrong then right: %v", err)
	}
	sp.typing("not it", "nor this", "nope", passphrase)
	if _, secret, err := f.release(t, c, "https://app.example", "staging-admin", ""); code(err) != wire.CodePresenceDenied || secret != nil {
		t.Fatalf("wrong three times: %v (%d bytes)", err, len(secret))
	}
	if r := f.audit.records(); r[len(r)-1].Decision != "deny" || r[len(r)-1].Code != "PRESENCE_DENIED" {
		t.Fatalf("audit of the wrong passphrase: %+v", r[len(r)-1])
	}

	// A second add must use the same passphrase (checked against the saved one); with a TOTP
	// seed, the sealed text says so and a release gives the code too.
	f.srv.Now = func() time.Time { return time.Unix(1111111109, 0) }
	const factor = "totp1:SHA1:8:30:GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
	sp.typing("a different passphrase!", passphrase)
	n := sp.asked()
	if cred, err := c.Add(ctx, "https://app.example", "otp@example", "with-otp", credential.JoinFactor([]byte("otp-pw"), []byte(factor))); err != nil || !cred.TOTP {
		t.Fatalf("second add: %+v %v", cred, err)
	}
	if sp.repeats[n] || sp.tries != 2 {
		t.Fatalf("second add: repeat %v, %d tries; want checked against the saved one (no repeat), two tries", sp.repeats[n], sp.tries)
	}
	sp.typing(passphrase)
	rel, secret, err = f.release(t, c, "https://app.example", "with-otp", "")
	if pw, code := credential.SplitFactor(secret); err != nil || !rel.Code || string(pw) != "otp-pw" || string(code) != "07081804" {
		t.Fatalf("sealed release with a code: %+v %v", rel, err)
	}
	if bytes.Contains(secret, []byte("GEZD")) {
		t.Fatal("the seed left brokerd")
	}

	// Nothing in the audit or any error holds a secret.
	for _, r := range f.audit.records() {
		if s := fmt.Sprintf("%+v", r); strings.Contains(s, canary) || strings.Contains(s, passphrase) || strings.Contains(s, "hlseal1") {
			t.Fatalf("audit record holds a secret: %s", s)
		}
	}
}

// TestSealedRefusals: a record in plain text is not released by the passphrase provider, a
// sealed one not by any other, and a sealed text moved to another record does not open.
func TestSealedRefusals(t *testing.T) {
	ctx := context.Background()
	f, sp := newSealedFixture(t)
	c := f.client(t)
	sp.typing(passphrase)
	if _, err := c.Add(ctx, "https://app.example", "admin@example", "staging-admin", []byte(canary)); err != nil {
		t.Fatal(err)
	}

	// Plain text, saved behind brokerd's back (or before the provider was chosen).
	if err := f.store.Add(ctx, vault.Record{Origin: "https://app.example", Account: "old", Alias: "plain"}, []byte("plain-pw")); err != nil {
		t.Fatal(err)
	}
	n := sp.asked()
	if _, secret, err := f.release(t, c, "https://app.example", "plain", ""); code(err) != wire.CodeNotSealed || secret != nil || sp.asked() != n {
		t.Fatalf("plain record: %v, asked %d more; want CREDENTIAL_NOT_SEALED and nobody asked", err, sp.asked()-n)
	}

	// The sealed text of staging-admin copied into a record of another origin: the binding
	// fails, whatever the passphrase. The right passphrase, which opens the other saved
	// credential, ends it at the first try, saying the record was altered (asking again would
	// only have the person try their other passwords); a wrong one is asked again.
	_, text, _ := f.store.Store.Secret(ctx, "https://app.example", "staging-admin")
	if err := f.store.Add(ctx, vault.Record{Origin: "https://evil.example", Account: "admin@example", Alias: "staging-admin"}, text); err != nil {
		t.Fatal(err)
	}
	sp.typing(passphrase)
	if _, secret, err := f.release(t, c, "https://evil.example", "staging-admin", ""); code(err) != wire.CodeAliasUnknown || secret != nil ||
		!strings.Contains(err.Error(), "altered") || sp.tries != 1 {
		t.Fatalf("moved sealed text, right passphrase: %v after %d tries; want ALIAS_UNKNOWN (altered) at the first", err, sp.tries)
	}
	sp.typing("wrong one", "wrong two", "wrong three")
	if _, secret, err := f.release(t, c, "https://evil.example", "staging-admin", ""); code(err) != wire.CodePresenceDenied || secret != nil || sp.tries != 3 {
		t.Fatalf("moved sealed text, wrong passphrases: %v after %d tries; want PRESENCE_DENIED after 3", err, sp.tries)
	}

	// Another provider finds a sealed text: it is not typed as a password.
	f.srv.Presence = f.pres
	if _, secret, err := f.release(t, c, "https://app.example", "staging-admin", ""); code(err) != wire.CodeSealed || secret != nil {
		t.Fatalf("sealed record under another provider: %v (%q)", err, secret)
	}

	// A cancelled save saves nothing.
	f.srv.Presence = &cancelling{&fakeSealer{typed: []string{passphrase}}}
	if _, err := c.Add(ctx, "https://app.example", "x", "cancelled", []byte("pw")); code(err) != wire.CodePresenceDenied {
		t.Fatalf("cancelled add: %v", err)
	}
	if recs, _ := f.store.List(ctx, "https://app.example"); len(recs) != 2 {
		t.Fatalf("records after a cancelled add: %+v", recs)
	}
}

// cancelling is a person who cancels the prompt.
type cancelling struct{ *fakeSealer }

func (c *cancelling) Ask(ctx context.Context, r presence.Request, repeat bool, check func([]byte) error) error {
	return fmt.Errorf("%w: cancelled", presence.ErrDenied)
}

// TestSealRefPastPlainAndMalformed: the passphrase a new credential is checked against is the
// oldest sealed credential's however many plain records (saved under another provider) are
// older, and a malformed sealed-looking record is passed over rather than failing every add;
// a password that looks sealed is refused with a code of its own (second reviewer).
func TestSealRefPastPlainAndMalformed(t *testing.T) {
	ctx := context.Background()
	f, sp := newSealedFixture(t)
	c := f.client(t)
	for i := range maxRefTries + 1 {
		if err := f.store.Add(ctx, vault.Record{Origin: "https://app.example", Account: "old", Alias: fmt.Sprintf("plain-%d", i)}, []byte("plain-pw")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // distinct creation times
	}
	// Sealed-looking, but with a work factor out of bounds.
	if err := f.store.Add(ctx, vault.Record{Origin: "https://app.example", Account: "old", Alias: "malformed"}, []byte(credential.SealedPrefix+"p:AAAAAQ"+strings.Repeat("A", 80))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	sp.typing(passphrase)
	if _, err := c.Add(ctx, "https://app.example", "a@example", "first-sealed", []byte(canary)); err != nil {
		t.Fatalf("first sealed add: %v", err)
	}
	if !sp.repeats[len(sp.repeats)-1] {
		t.Fatal("the first sealed credential's passphrase was not chosen (asked twice)")
	}
	// A second add with another passphrase: checked against first-sealed, past nine plain
	// records and a malformed one, so refused — not chosen anew.
	sp.typing("another passphrase entirely")
	if _, err := c.Add(ctx, "https://app.example", "b@example", "second", []byte(canary)); code(err) != wire.CodePresenceDenied {
		t.Fatalf("second add with another passphrase: %v; want PRESENCE_DENIED", err)
	}
	if sp.repeats[len(sp.repeats)-1] || sp.tries != 3 {
		t.Fatalf("second add: asked twice %v, %d tries; want checked against the saved one, 3 tries", sp.repeats[len(sp.repeats)-1], sp.tries)
	}
	sp.typing(passphrase)
	if _, err := c.Add(ctx, "https://app.example", "b@example", "second", []byte(canary)); err != nil {
		t.Fatalf("second add with the passphrase: %v", err)
	}
	n := sp.asked()
	if _, err := c.Add(ctx, "https://app.example", "c@example", "looks-sealed", []byte(credential.SealedPrefix+"p:x")); code(err) != wire.CodeInvalidArgument || sp.asked() != n {
		t.Fatalf("a password that looks sealed: %v, asked %d more; want INVALID_ARGUMENT, nobody asked", err, sp.asked()-n)
	}
}

// TestUntrustedSavesNothing: a brokerd without the seal key (not granted its group: traced
// from its exec, in a user namespace, not installed set-gid) saves no secret and asks nobody.
func TestUntrustedSavesNothing(t *testing.T) {
	ctx := context.Background()
	f, sp := newSealedFixture(t)
	f.srv.Key, f.srv.Untrusted = nil, "this brokerd may not read the seal key"
	c := f.client(t)
	sp.typing(passphrase)
	if _, err := c.Add(ctx, "https://app.example", "a@example", "untrusted", []byte(canary)); code(err) != wire.CodeBrokerUntrusted || !strings.Contains(err.Error(), "may not read the seal key") {
		t.Fatalf("add on a brokerd without the key: %v; want BROKER_UNTRUSTED with the reason", err)
	}
	if sp.asked() != 0 {
		t.Fatalf("the person was asked %d times", sp.asked())
	}
	if recs, _ := f.store.List(ctx, "https://app.example"); len(recs) != 0 {
		t.Fatalf("records after a refused add: %+v", recs)
	}
}

// TestSealedWithTheKey: under a provider without a passphrase a credential is saved sealed with
// the seal key (the vault holds nothing another program of the user could use), a release opens
// it, and a brokerd with another machine's key — or none — releases nothing.
func TestSealedWithTheKey(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := f.client(t)
	if _, err := c.Add(ctx, "https://app.example", "k@example", "keyed", []byte("keyed-canary-77")); err != nil {
		t.Fatal(err)
	}
	_, saved, err := f.store.Secret(ctx, "https://app.example", "keyed")
	if err != nil || !seal.Current(saved) || seal.NeedsPassphrase(saved) || bytes.Contains(saved, []byte("keyed-canary-77")) {
		t.Fatalf("saved %q, %v; want a seal with the key alone", saved, err)
	}
	if _, pw, err := f.release(t, c, "https://app.example", "keyed", brokerapi.PurposeLogin); err != nil || string(pw) != "keyed-canary-77" {
		t.Fatalf("release = %q, %v", pw, err)
	}
	other, _ := seal.NewKey(bytes.Repeat([]byte{1}, seal.KeyLen))
	f.srv.Key = other
	asked := int(f.pres.asked.Load())
	if _, pw, err := f.release(t, c, "https://app.example", "keyed", brokerapi.PurposeLogin); code(err) != wire.CodeAliasUnknown || pw != nil {
		t.Fatalf("release with another key = %q, %v; want ALIAS_UNKNOWN", pw, err)
	}
	f.srv.Key, f.srv.Untrusted = nil, "this brokerd may not read the seal key"
	if _, pw, err := f.release(t, c, "https://app.example", "keyed", brokerapi.PurposeLogin); code(err) != wire.CodeBrokerUntrusted || pw != nil {
		t.Fatalf("release without a key = %q, %v; want BROKER_UNTRUSTED", pw, err)
	}
	if n := int(f.pres.asked.Load()) - asked; n != 1 {
		t.Fatalf("the person was asked %d times for the two refused releases; want once (the one with another key; none without a key)", n)
	}
}

// TestSavedBeforeTheKeyKeepsWorking: a credential saved in plain text (under a provider
// without a passphrase) or sealed with the passphrase alone (v1) before the seal key existed is
// released as before, and its first approved release seals it again with the key.
func TestSavedBeforeTheKeyKeepsWorking(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t) // its records were saved in plain text
	c := f.client(t)
	if _, pw, err := f.release(t, c, "https://app.example", "staging-admin", brokerapi.PurposeLogin); err != nil || string(pw) != canary {
		t.Fatalf("release of a plain record = %q, %v", pw, err)
	}
	_, saved, _ := f.store.Secret(ctx, "https://app.example", "staging-admin")
	if !seal.Current(saved) || bytes.Contains(saved, []byte(canary)) {
		t.Fatalf("after its release the record holds %q; want it sealed with the key", saved)
	}
	if _, pw, err := f.release(t, c, "https://app.example", "staging-admin", brokerapi.PurposeLogin); err != nil || string(pw) != canary {
		t.Fatalf("second release = %q, %v", pw, err)
	}

	f, sp := newSealedFixture(t)
	b := seal.Binding{Origin: "https://app.example", Account: "v1@example", Alias: "old"}
	v1, err := seal.SealV1([]byte("v1-canary-pw"), []byte(passphrase), b)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.Add(ctx, vault.Record{Origin: b.Origin, Account: b.Account, Alias: b.Alias}, v1); err != nil {
		t.Fatal(err)
	}
	c = f.client(t)
	sp.typing(passphrase)
	if _, pw, err := f.release(t, c, b.Origin, "old", brokerapi.PurposeLogin); err != nil || string(pw) != "v1-canary-pw" {
		t.Fatalf("release of a v1 record = %q, %v", pw, err)
	}
	_, saved, _ = f.store.Secret(ctx, b.Origin, "old")
	if !seal.Current(saved) || !seal.NeedsPassphrase(saved) {
		t.Fatalf("after its release the v1 record holds %q; want a v2 seal with key and passphrase", saved)
	}
	if pt, err := seal.Open(saved, nil, []byte(passphrase), b); err == nil {
		t.Fatalf("the passphrase alone opens the new seal: %q", pt)
	}
	sp.typing(passphrase)
	if _, pw, err := f.release(t, c, b.Origin, "old", brokerapi.PurposeLogin); err != nil || string(pw) != "v1-canary-pw" {
		t.Fatalf("release after the new seal = %q, %v", pw, err)
	}
}
