package host

import (
	"maps"
	"slices"
	"testing"
	"time"
)

// TestSpareContexts: what status does not count is exactly the spare's contexts (being
// opened, ready, being disposed of) and the last few it disposed of; one a journey took, and
// one whose disposal failed (a leak), are counted.
func TestSpareContexts(t *testing.T) {
	h := &Host{}
	sp := &h.spare
	got := func() []string { return slices.Sorted(maps.Keys(h.spareContexts())) }
	sp.hold("opening", true, false)
	sp.hold("taken", true, false)
	sp.hold("leaked", true, false)
	sp.hold("disposed", true, false)
	sp.hold("taken", false, false)
	sp.hold("leaked", false, false)
	sp.hold("disposed", false, true)
	if g := got(); !slices.Equal(g, []string{"disposed", "opening"}) {
		t.Fatalf("not counted: %v, want [disposed opening]", g)
	}
	for _, id := range []string{"a", "b", "c", "d"} { // the record of disposed ones is bounded
		sp.hold(id, true, false)
		sp.hold(id, false, true)
	}
	if g := got(); !slices.Equal(g, []string{"a", "b", "c", "d", "opening"}) {
		t.Fatalf("not counted: %v", g)
	}

	// A context being asked for while the browser listed its own is waited for.
	sp.opening.Lock()
	done := make(chan []string)
	go func() { done <- got() }()
	select {
	case g := <-done:
		t.Fatalf("counted while a spare's context was being asked for: %v", g)
	case <-time.After(50 * time.Millisecond):
	}
	sp.hold("new", true, false)
	sp.opening.Unlock()
	if g := <-done; !slices.Contains(g, "new") {
		t.Fatalf("the context asked for meanwhile is counted: %v", g)
	}
}
