package host

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/wire"
)

// fakeClock is the host's clock in tests: time moves only by Advance, which runs the timers due.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := t.stopped
		t.stopped = true
		return !was
	}
}

// Advance moves the clock by d and runs, in this goroutine, every timer that is then due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	for _, t := range c.timers {
		if !t.stopped && !t.at.After(c.now) {
			t.stopped = true
			due = append(due, t.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

func testHost() (*Host, *fakeClock) {
	clk := &fakeClock{now: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
	h := &Host{o: Options{Log: slog.New(slog.DiscardHandler), Now: clk.Now, AfterFunc: clk.AfterFunc},
		enroll: map[string]*pendingEnroll{}, isolated: map[string]bool{}}
	return h, clk
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
	h, clk := testHost()
	hold := func(token, session string, d time.Duration) []byte {
		secret := []byte("held-password")
		h.holdEnroll(token, &pendingEnroll{session: session, origin: "https://a.example", account: "a", secret: secret, expires: clk.Now().Add(d)})
		return secret
	}
	expiring := hold("t1", "s1", EnrollHold)
	clk.Advance(EnrollHold - time.Second)
	if zeroed(expiring) {
		t.Fatal("held password zeroed before its deadline")
	}
	clk.Advance(time.Second)
	if !zeroed(expiring) {
		t.Fatal("held password not zeroed at its deadline on the host's clock")
	}
	if _, err := h.EnrollDiscard(control.EnrollTokenParams{Token: "t1"}); wire.CodeOf(err) != wire.CodeEnrollUnknown {
		t.Fatalf("expired token: %v", err)
	}

	discarded := hold("t2", "s1", time.Minute)
	if _, err := h.EnrollDiscard(control.EnrollTokenParams{Token: "t2"}); err != nil || !zeroed(discarded) {
		t.Fatalf("discard: %v, zeroed %v", err, zeroed(discarded))
	}
	if _, err := h.EnrollDiscard(control.EnrollTokenParams{Token: "t2"}); wire.CodeOf(err) != wire.CodeEnrollUnknown {
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
	if _, err := h.EnrollSave(context.Background(), control.EnrollSaveParams{Token: "nope", Alias: "ok"}); wire.CodeOf(err) != wire.CodeEnrollUnknown {
		t.Fatalf("unknown token: %v", err)
	}
	if _, err := h.EnrollSave(context.Background(), control.EnrollSaveParams{Token: "nope", Alias: "bad alias"}); wire.CodeOf(err) != wire.CodeInvalidArgument {
		t.Fatalf("bad alias: %v", err)
	}
}

func TestEnrollRefusesPeersWithoutTerminal(t *testing.T) {
	if err := peerHasTTY(1 << 30); wire.CodeOf(err) != wire.CodeNoTTY {
		t.Fatalf("a pid that does not exist: %v", err)
	}
}
