package host

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/wire"
)

func testHost() *Host {
	return &Host{o: Options{Log: slog.New(slog.DiscardHandler)}, enroll: map[string]*pendingEnroll{}, isolated: map[string]bool{}}
}

func zeroed(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// TestEnrollHeldPasswordIsZeroed: a held password is zeroed when its time is up, when it is
// discarded, when its session closes and when the host closes; a token works once.
func TestEnrollHeldPasswordIsZeroed(t *testing.T) {
	h := testHost()
	hold := func(token, session string, d time.Duration) []byte {
		secret := []byte("held-password")
		h.holdEnroll(token, &pendingEnroll{session: session, origin: "https://a.example", account: "a", secret: secret, expires: time.Now().Add(d)})
		return secret
	}
	expiring := hold("t1", "s1", 50*time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for !zeroed(expiring) {
		if time.Now().After(deadline) {
			t.Fatal("held password not zeroed after its deadline")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := h.EnrollDiscard(EnrollTokenParams{Token: "t1"}); wire.CodeOf(err) != wire.CodeEnrollUnknown {
		t.Fatalf("expired token: %v", err)
	}

	discarded := hold("t2", "s1", time.Minute)
	if _, err := h.EnrollDiscard(EnrollTokenParams{Token: "t2"}); err != nil || !zeroed(discarded) {
		t.Fatalf("discard: %v, zeroed %v", err, zeroed(discarded))
	}
	if _, err := h.EnrollDiscard(EnrollTokenParams{Token: "t2"}); wire.CodeOf(err) != wire.CodeEnrollUnknown {
		t.Fatalf("second discard: %v", err)
	}

	a, b := hold("t3", "s1", time.Minute), hold("t4", "s2", time.Minute)
	h.dropEnrollments("s1")
	if !zeroed(a) || zeroed(b) {
		t.Fatalf("session close: s1 zeroed %v, s2 zeroed %v", zeroed(a), zeroed(b))
	}
	h.dropEnrollments("")
	if !zeroed(b) || len(h.enroll) != 0 {
		t.Fatal("host close left a held password")
	}

	// A save with a bad alias or an unknown token never reaches brokerd.
	if _, err := h.EnrollSave(context.Background(), EnrollSaveParams{Token: "nope", Alias: "ok"}); wire.CodeOf(err) != wire.CodeEnrollUnknown {
		t.Fatalf("unknown token: %v", err)
	}
	if _, err := h.EnrollSave(context.Background(), EnrollSaveParams{Token: "nope", Alias: "bad alias"}); wire.CodeOf(ToWire(err)) != wire.CodeInvalidArgument {
		t.Fatalf("bad alias: %v", err)
	}
}

func TestEnrollRefusesPeersWithoutTerminal(t *testing.T) {
	if err := peerHasTTY(1 << 30); wire.CodeOf(err) != wire.CodeNoTTY {
		t.Fatalf("a pid that does not exist: %v", err)
	}
}
