package gate

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

const isoCanary = "iso-c4nary-Ünïque-77"

// memSecrets returns the slices an isolated store's vault.Memory holds (not copies), so a test
// can see that they were zeroed. vault.MemorySecretsForTest lives in vault's own tests, so
// this reads the same fields by reflection.
func memSecrets(t *testing.T, m *vault.Memory) [][]byte {
	t.Helper()
	recs := reflect.ValueOf(m).Elem().FieldByName("recs")
	var out [][]byte
	for it := recs.MapRange(); it.Next(); {
		out = append(out, it.Value().Elem().FieldByName("secret").Bytes())
	}
	return out
}

func allZero(bufs [][]byte) bool {
	for _, b := range bufs {
		for _, c := range b {
			if c != 0 {
				return false
			}
		}
	}
	return true
}

// isoFixture opens isolated session "iso" on a host connection and saves alias "iso-admin" in
// its store through that connection (the only one the store answers). It returns the host
// client and the store's secret slices.
func isoFixture(t *testing.T, f *fixture) (*brokerapi.Client, [][]byte) {
	t.Helper()
	ctx := context.Background()
	hostc := f.client(t)
	if err := hostc.OpenSession(ctx, "iso"); err != nil {
		t.Fatal(err)
	}
	cred, err := hostc.AddTo(ctx, "iso", "https://app.example", "iso@example", "iso-admin", []byte(isoCanary))
	if err != nil || cred.Alias != "iso-admin" || cred.Created.IsZero() {
		t.Fatalf("add to the isolated store: %+v %v", cred, err)
	}
	st := f.srv.isolated("iso")
	if st == nil {
		t.Fatal("no store for iso")
	}
	secrets := memSecrets(t, st.mem)
	if len(secrets) != 1 || string(secrets[0]) != isoCanary {
		t.Fatalf("store holds %d secrets", len(secrets))
	}
	return hostc, secrets
}

func aliases(creds []brokerapi.Credential) []string {
	var out []string
	for _, c := range creds {
		out = append(out, c.Alias)
	}
	return out
}

func TestIsolatedStoreSeparation(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	hostc, _ := isoFixture(t, f)
	rc := f.client(t) // the host's release connection: same process, not the store's owner
	c := hostc

	// Listing: the isolated store and the vault never mix.
	if got, err := c.ListIn(ctx, "iso", ""); err != nil || !slices.Equal(aliases(got), []string{"iso-admin"}) {
		t.Fatalf("list --session iso: %v %v", aliases(got), err)
	}
	if got, err := c.List(ctx, ""); err != nil || slices.Contains(aliases(got), "iso-admin") {
		t.Fatalf("vault list shows the isolated alias: %v %v", aliases(got), err)
	}
	for _, s := range []string{"default", "nosuch"} {
		if _, err := c.ListIn(ctx, s, ""); code(err) != wire.CodeSessionUnknown {
			t.Errorf("list --session %s: %v, want SESSION_UNKNOWN", s, err)
		}
	}

	// The isolated session's challenge offers only its own aliases; a vault alias is unknown.
	ch, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "iso", Document: "d1", Origin: "https://app.example", Isolated: true})
	if err != nil || !slices.Equal(ch.Aliases, []string{"iso-admin"}) {
		t.Fatalf("isolated challenge: %+v %v", ch, err)
	}
	asked := f.pres.asked.Load()
	if _, secret, err := rc.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "staging-admin", Session: "iso", Document: "d1"}); code(err) != wire.CodeAliasUnknown || secret != nil {
		t.Fatalf("vault alias in the isolated session: %v, want ALIAS_UNKNOWN", err)
	}
	if f.store.secrets.Load() != 0 || f.pres.asked.Load() != asked {
		t.Fatal("the vault was read or presence asked for a refused alias")
	}

	// Its own alias is released through the same presence gate.
	ch, _ = c.Challenge(ctx, brokerapi.ChallengeParams{Session: "iso", Document: "d2", Origin: "https://app.example", Isolated: true})
	rel, secret, err := rc.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "ISO-ADMIN", Session: "iso", Document: "d2"})
	if err != nil || string(secret) != isoCanary || rel.Account != "iso@example" {
		t.Fatalf("isolated release: %+v %v", rel, err)
	}
	credential.Zero(secret)
	if f.pres.asked.Load() != asked+1 || f.pres.last.Load().Session != "iso" {
		t.Fatalf("presence not asked for the isolated release")
	}
	if f.store.secrets.Load() != 0 {
		t.Fatal("the vault was read for an isolated release")
	}

	// A normal session never sees the isolated alias.
	ch, err = c.Challenge(ctx, brokerapi.ChallengeParams{Session: "default", Document: "d3", Origin: "https://app.example"})
	if err != nil || slices.Contains(ch.Aliases, "iso-admin") {
		t.Fatalf("normal challenge: %+v %v", ch, err)
	}
	if _, _, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "iso-admin", Session: "default", Document: "d3"}); code(err) != wire.CodeAliasUnknown {
		t.Fatalf("isolated alias in a normal session: %v, want ALIAS_UNKNOWN", err)
	}

	// A requester that says the session is isolated never falls back to the vault.
	if _, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "gone", Document: "d", Origin: "https://app.example", Isolated: true}); code(err) != wire.CodeSessionUnknown {
		t.Fatalf("isolated challenge for an unregistered session: %v", err)
	}

	// Remove works in the store only.
	if err := c.Remove(ctx, "https://app.example", "iso-admin"); code(err) != wire.CodeAliasUnknown {
		t.Fatalf("vault remove of the isolated alias: %v", err)
	}
	if err := c.RemoveIn(ctx, "iso", "https://app.example", "staging-admin"); code(err) != wire.CodeAliasUnknown {
		t.Fatalf("isolated remove of a vault alias: %v", err)
	}
	st := f.srv.isolated("iso")
	secrets := memSecrets(t, st.mem)
	if err := c.RemoveIn(ctx, "iso", "https://app.example", "iso-admin"); err != nil {
		t.Fatal(err)
	}
	if !allZero(secrets) {
		t.Fatal("removed secret not zeroed")
	}
}

func TestIsolatedStoreWipedOnSessionClose(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	hostc, secrets := isoFixture(t, f)
	c := f.client(t)
	// A challenge issued before the close is bound to the old store.
	ch, _ := hostc.Challenge(ctx, brokerapi.ChallengeParams{Session: "iso", Document: "d", Origin: "https://app.example"})

	// Only the owner closes it.
	if err := c.CloseSession(ctx, "iso"); code(err) != wire.CodeSessionUnknown {
		t.Fatalf("close by another connection: %v", err)
	}
	if err := c.OpenSession(ctx, "iso"); code(err) != wire.CodeSessionExists {
		t.Fatalf("open by another connection: %v", err)
	}
	if err := hostc.CloseSession(ctx, "iso"); err != nil {
		t.Fatal(err)
	}
	if !allZero(secrets) {
		t.Fatal("session close did not zero the store")
	}
	if _, err := hostc.ListIn(ctx, "iso", ""); code(err) != wire.CodeSessionUnknown {
		t.Fatalf("list after close: %v", err)
	}
	// Re-created, it is empty, and the old challenge does not reach the new store.
	if err := hostc.OpenSession(ctx, "iso"); err != nil {
		t.Fatal(err)
	}
	if got, err := hostc.ListIn(ctx, "iso", ""); err != nil || len(got) != 0 {
		t.Fatalf("re-created store: %v %v", got, err)
	}
	if _, _, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "iso-admin", Session: "iso", Document: "d"}); code(err) != wire.CodeChallengeMism {
		t.Fatalf("old challenge after re-open: %v, want CHALLENGE_MISMATCH", err)
	}
}

func TestIsolatedStoreWipedOnDisconnect(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	hostc, secrets := isoFixture(t, f)
	if err := hostc.OpenSession(ctx, "iso2"); err != nil {
		t.Fatal(err)
	}
	if _, err := hostc.AddTo(ctx, "iso2", "https://app.example", "a", "b", []byte("second-secret")); err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, memSecrets(t, f.srv.isolated("iso2").mem)...)
	hostc.Close() // as a crash or SIGKILL of the host would
	deadline := time.Now().Add(5 * time.Second)
	for f.srv.isolated("iso") != nil || f.srv.isolated("iso2") != nil {
		if time.Now().After(deadline) {
			t.Fatal("stores not dropped after the host connection ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !allZero(secrets) {
		t.Fatal("stores not zeroed after the host connection ended")
	}
	if _, err := f.client(t).ListIn(ctx, "iso", ""); code(err) != wire.CodeSessionUnknown {
		t.Fatalf("list after disconnect: %v", err)
	}
}

// TestIsolatedStoreAnswersOnlyItsOwner: any other connection naming the session — another
// process, or another connection of the same one — gets SESSION_UNKNOWN for list, add,
// remove and challenge, exactly as for a session that does not exist; nothing changes.
func TestIsolatedStoreAnswersOnlyItsOwner(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	_, secrets := isoFixture(t, f)
	for name, c := range map[string]*brokerapi.Client{
		"another process":                brokerapi.NewClient(f.connAs(t, Peer{PID: 31337, Exe: "/usr/bin/python3"})),
		"another connection of the host": f.client(t),
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := c.ListIn(ctx, "iso", ""); code(err) != wire.CodeSessionUnknown || got != nil {
				t.Errorf("list: %v %v", got, err)
			}
			if _, err := c.AddTo(ctx, "iso", "https://app.example", "x", "planted", []byte("pw")); code(err) != wire.CodeSessionUnknown {
				t.Errorf("add: %v", err)
			}
			if err := c.RemoveIn(ctx, "iso", "https://app.example", "iso-admin"); code(err) != wire.CodeSessionUnknown {
				t.Errorf("remove: %v", err)
			}
			for _, isolated := range []bool{true, false} {
				if ch, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "iso", Document: "d", Origin: "https://app.example", Isolated: isolated}); code(err) != wire.CodeSessionUnknown {
					t.Errorf("challenge (isolated=%v): %+v %v", isolated, ch, err)
				}
			}
		})
	}
	if got := memSecrets(t, f.srv.isolated("iso").mem); len(got) != 1 || string(got[0]) != isoCanary || len(secrets) != 1 {
		t.Fatalf("the store changed: %d secrets", len(got))
	}
}

func TestIsolatedStoreBounds(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.srv.MaxIsolated = 2
	hostc := f.client(t)
	for _, s := range []string{"a", "b"} {
		if err := hostc.OpenSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := hostc.OpenSession(ctx, "a"); err != nil {
		t.Fatalf("re-open by the owner: %v", err)
	}
	if err := hostc.OpenSession(ctx, "c"); code(err) != wire.CodeSessionLimit {
		t.Fatalf("third store: %v, want SESSION_LIMIT", err)
	}
	if err := hostc.Call(ctx, brokerapi.MethodSessionOpen, brokerapi.SessionOpenParams{Session: "d"}, nil); code(err) != wire.CodeInvalidArgument {
		t.Fatalf("non-isolated open: %v", err)
	}
	for _, bad := range []string{"", "-x", strings.Repeat("x", 65), "a b", "ü"} {
		if err := hostc.CloseSession(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := hostc.OpenSession(ctx, bad); code(err) != wire.CodeInvalidArgument {
			t.Errorf("open %q: %v", bad, err)
		}
		hostc.OpenSession(ctx, "a")
	}
	conn := f.conn(t)
	if r := raw(t, conn, `{"id":3,"method":"session.open","params":{"session":"z","isolated":true,"extra":1}}`+"\n"); r.Error == nil || r.Error.Code != wire.CodeBadRequest {
		t.Fatalf("unknown field: %+v", r)
	}
	for i := 0; i < brokerapi.MaxIsolatedRecords; i++ {
		if _, err := hostc.AddTo(ctx, "a", "https://app.example", "u", "alias"+string(rune('a'+i%26))+strings.Repeat("x", i/26), []byte("pw")); err != nil {
			t.Fatalf("add %d: %v", i, err)
		}
	}
	if _, err := hostc.AddTo(ctx, "a", "https://app.example", "u", "one-more", []byte("pw")); code(err) != wire.CodeVaultFull {
		t.Fatalf("record %d: %v, want VAULT_FULL", brokerapi.MaxIsolatedRecords+1, err)
	}
	if _, err := hostc.AddTo(ctx, "b", "https://app.example", "u", "big", make([]byte, credential.MaxSecretLen+1)); code(err) != wire.CodeInvalidArgument {
		t.Fatalf("oversize secret: %v, want INVALID_ARGUMENT", err)
	}
}

// TestFreshSessionUsesTheVault: a journey's fresh browser context (host/journey.go) is a third
// kind of session, beside normal and isolated, that brokerd never hears of: the host names it
// (journey.ID.RUN) in challenges and releases without registering it and without claiming it
// is isolated. brokerd then answers it as a normal session: from the vault, behind the same
// presence gate, never from an isolated store — not even one of the same host connection.
func TestFreshSessionUsesTheVault(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	hostc, _ := isoFixture(t, f)
	rc := f.client(t)
	const fresh = "journey.reserve-stock.k3x9q2wa"
	ch, err := hostc.Challenge(ctx, brokerapi.ChallengeParams{Session: fresh, Document: "d1", Origin: "https://app.example"})
	if err != nil || !slices.Contains(ch.Aliases, "staging-admin") || slices.Contains(ch.Aliases, "iso-admin") {
		t.Fatalf("a fresh context's challenge: %+v %v, want the vault's aliases only", ch, err)
	}
	asked := f.pres.asked.Load()
	rel, secret, err := rc.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "staging-admin", Session: fresh, Document: "d1"})
	if err != nil || rel.Alias != "staging-admin" || len(secret) == 0 {
		t.Fatalf("a fresh context's release of a vault alias: %+v %v", rel, err)
	}
	credential.Zero(secret)
	if f.pres.asked.Load() != asked+1 || f.pres.last.Load().Session != fresh {
		t.Fatal("presence was not asked for the fresh context's release, naming it")
	}
	// The isolated store's alias is not the fresh context's.
	ch, _ = hostc.Challenge(ctx, brokerapi.ChallengeParams{Session: fresh, Document: "d2", Origin: "https://app.example"})
	if _, _, err := rc.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "iso-admin", Session: fresh, Document: "d2"}); code(err) != wire.CodeAliasUnknown {
		t.Fatalf("an isolated alias in a fresh context: %v, want ALIAS_UNKNOWN", err)
	}
	// Had the host registered it as isolated (it must not), its store would be empty: the
	// vault alias would be unknown, which is what the journey tests would see.
	if err := hostc.OpenSession(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	ch, err = hostc.Challenge(ctx, brokerapi.ChallengeParams{Session: fresh, Document: "d3", Origin: "https://app.example", Isolated: true})
	if err != nil || len(ch.Aliases) != 0 {
		t.Fatalf("registered as isolated: %+v %v", ch, err)
	}
}
