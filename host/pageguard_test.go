package host

import (
	"context"
	"testing"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/wire"
)

// TestFloodMeter: a page may start FloodBurst navigations at once and FloodRate a second
// after that; the one past the budget trips the meter, once.
func TestFloodMeter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := newFloodMeter(t0)
	for i := 0; i < FloodBurst; i++ {
		if m.spend(t0, 1) {
			t.Fatalf("tripped at navigation %d of a burst of %d", i+1, FloodBurst)
		}
	}
	// A second later the page has FloodRate more.
	t1 := t0.Add(time.Second)
	for i := 0; i < FloodRate; i++ {
		if m.spend(t1, 1) {
			t.Fatalf("tripped at navigation %d of the second's %d", i+1, FloodRate)
		}
	}
	if !m.spend(t1, 1) {
		t.Fatal("the navigation past the budget did not trip the meter")
	}
	if m.spend(t1.Add(time.Hour), 1) {
		t.Fatal("a tripped meter tripped again")
	}
	// A page at its sustained rate never trips.
	m = newFloodMeter(t0)
	for i := 0; i < 10*FloodRate; i++ {
		if m.spend(t0.Add(time.Duration(i)*time.Second/FloodRate), 1) {
			t.Fatalf("a page at %d a second tripped after %d", FloodRate, i)
		}
	}
}

// TestDialogBudget: a page may open DialogBurst dialogs at once and DialogBurst/5 a second
// after that (each costs DialogCost navigations); the one past trips the meter.
func TestDialogBudget(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := newFloodMeter(t0)
	for i := 0; i < DialogBurst; i++ {
		if m.spend(t0, DialogCost) {
			t.Fatalf("tripped at dialog %d of a burst of %d", i+1, DialogBurst)
		}
	}
	if !m.spend(t0, DialogCost) {
		t.Fatalf("dialog %d at once did not trip the meter", DialogBurst+1)
	}
	// A page showing a dialog every 250 ms (4 a second) never trips.
	m = newFloodMeter(t0)
	for i := 0; i < 400; i++ {
		if m.spend(t0.Add(time.Duration(i)*250*time.Millisecond), DialogCost) {
			t.Fatalf("a page at 4 dialogs a second tripped after %d", i)
		}
	}
}

// TestVerbAnswerStopped: a verb whose page was stopped while it held it answers PAGE_STOPPED,
// even when its own work succeeded (the soak: a visit of a page whose script never yields
// answered success after 46 s, its page already replaced by a blank one); one that reached
// its deadline without a stop answers TIMEOUT; one that did neither keeps its answer.
func TestVerbAnswerStopped(t *testing.T) {
	ctx, cancel := withVerbDeadline(context.Background(), time.Hour)
	defer cancel()
	if err := verbAnswer(ctx, time.Hour, nil); err != nil {
		t.Fatalf("a verb with its page left alone: %v", err)
	}
	n := noteOf(ctx)
	n.stopped = "it did not answer its command in time"
	if got := wire.CodeOf(verbAnswer(ctx, time.Hour, nil)); got != wire.CodePageStopped {
		t.Errorf("a successful verb whose page was stopped under it answered %q, want %s", got, wire.CodePageStopped)
	}
	dctx, dcancel := withVerbDeadline(context.Background(), time.Nanosecond)
	defer dcancel()
	<-dctx.Done()
	if got := wire.CodeOf(verbAnswer(dctx, time.Nanosecond, dctx.Err())); got != wire.CodeTimeout {
		t.Errorf("a verb at its deadline answered %q, want %s", got, wire.CodeTimeout)
	}
}

// TestVerbLimit: every verb that drives a page has an overall deadline; wait's (and a visit's
// with a timeout) is its own timeout plus VerbWait; a sign-in and a journey keep their own bounds.
func TestVerbLimit(t *testing.T) {
	for _, m := range []string{"visit", "snapshot", "click", "fill", "press", "screenshot", "back", "select", "hover", "scroll"} {
		if got := verbLimit(m, nil); got != VerbWait {
			t.Errorf("verbLimit(%s) = %v, want %v", m, got, VerbWait)
		}
	}
	if got := verbLimit("wait", control.WaitParams{TimeoutMS: 60_000}); got != time.Minute+VerbWait {
		t.Errorf("wait 60 s: %v", got)
	}
	if got := verbLimit("wait", control.WaitParams{}); got != control.DefaultWait+VerbWait {
		t.Errorf("wait default: %v", got)
	}
	if got := verbLimit("wait", control.WaitParams{TimeoutMS: 1 << 40}); got != control.MaxWait+VerbWait {
		t.Errorf("wait past control.MaxWait: %v", got)
	}
	// visit --timeout: its page's wait, bounded as wait's, plus VerbWait; VerbWait without one.
	if got := verbLimit("visit", control.VisitParams{TimeoutMS: 120_000}); got != 2*time.Minute+VerbWait {
		t.Errorf("visit 2 min: %v", got)
	}
	if got := verbLimit("visit", control.VisitParams{}); got != VerbWait {
		t.Errorf("visit default: %v", got)
	}
	if got := verbLimit("visit", control.VisitParams{TimeoutMS: 1 << 40}); got != control.MaxWait+VerbWait {
		t.Errorf("visit past control.MaxWait: %v", got)
	}
	for _, m := range []string{"auth.login", "journey.run", "status", "session.close"} {
		if got := verbLimit(m, nil); got != 0 {
			t.Errorf("verbLimit(%s) = %v, want 0", m, got)
		}
	}
}
