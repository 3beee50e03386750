package challenge

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	sess = "default"
	doc  = "B5E4C7D0A1F2E3D4C5B6A7980F1E2D3C"
	orig = "https://example.com"
)

// clock is a fake clock that tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newRegistry(t testing.TB, max int) (*Registry, *clock) {
	t.Helper()
	c := newClock()
	return New(Options{TTL: 120 * time.Second, Max: max, Now: c.Now}), c
}

func mustIssue(t testing.TB, r *Registry, session, document, origin string) Challenge {
	t.Helper()
	ch, err := r.Issue(session, document, origin)
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	return ch
}

func TestDefaults(t *testing.T) {
	for _, o := range []Options{{}, {TTL: -1, Max: -1}} {
		r := New(o)
		if r.ttl != DefaultTTL || r.max != DefaultMax || r.now == nil {
			t.Errorf("New(%+v): ttl %v, max %d", o, r.ttl, r.max)
		}
		before := time.Now()
		ch := mustIssue(t, r, sess, doc, orig)
		if d := ch.Expires.Sub(before); d < DefaultTTL || d > DefaultTTL+time.Minute {
			t.Errorf("Expires - now = %v, want about %v", d, DefaultTTL)
		}
	}
}

func TestIssue(t *testing.T) {
	r, c := newRegistry(t, 0)
	ch := mustIssue(t, r, sess, doc, orig)
	if IDLen != 26 || len(ch.ID) != IDLen {
		t.Errorf("ID %q has length %d, want 26", ch.ID, len(ch.ID))
	}
	for _, b := range ch.ID {
		if !strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", b) {
			t.Fatalf("ID %q is not base32", ch.ID)
		}
	}
	want := Challenge{ID: ch.ID, Session: sess, Document: doc, Origin: orig, Expires: c.Now().Add(120 * time.Second)}
	if ch != want {
		t.Errorf("Issue = %+v, want %+v", ch, want)
	}
	if r.Len() != 1 {
		t.Errorf("Len = %d, want 1", r.Len())
	}
}

func TestIssueInvalid(t *testing.T) {
	long := strings.Repeat("x", MaxField+1)
	tests := []struct {
		name                        string
		session, document, inOrigin string
		msg                         string
	}{
		{"empty session", "", doc, orig, "session is empty"},
		{"empty document", sess, "", orig, "document is empty"},
		{"empty origin", sess, doc, "", "origin is empty"},
		{"long session", long, doc, orig, "session is longer than 256 bytes"},
		{"long document", sess, long, orig, "document is longer than 256 bytes"},
		{"long origin", sess, doc, "https://" + strings.Repeat("a", 250) + ".example", "origin is longer"},
		{"control in session", "a\nb", doc, orig, "session contains a control character"},
		{"C1 in document", sess, "a\u0085b", orig, "document contains a control character"},
		{"bad UTF-8", "\xff", doc, orig, "session is not valid UTF-8"},
		{"non-canonical origin", sess, doc, "https://Example.com/", `origin is not canonical (want "https://example.com")`},
		{"default port", sess, doc, "https://example.com:443", "not canonical"},
		{"invalid origin", sess, doc, "http://example.com", "http is only allowed"},
		{"origin with path", sess, doc, "https://example.com/login", "path is not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newRegistry(t, 0)
			ch, err := r.Issue(tt.session, tt.document, tt.inOrigin)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Issue = %+v, %v; want ErrInvalid", ch, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			if ch != (Challenge{}) || r.Len() != 0 {
				t.Errorf("Issue returned %+v and left %d entries", ch, r.Len())
			}
		})
	}
	// Exactly MaxField bytes is fine.
	r, _ := newRegistry(t, 0)
	max := strings.Repeat("x", MaxField)
	if _, err := r.Issue(max, max, orig); err != nil {
		t.Errorf("Issue with %d-byte fields: %v", MaxField, err)
	}
}

func TestConsume(t *testing.T) {
	// Each case issues one challenge, runs the steps against it, and checks every answer.
	type step struct {
		advance           time.Duration
		session, document string
		wantErr           error
	}
	ok := step{0, sess, doc, nil}
	used := step{0, sess, doc, ErrUsed}
	tests := []struct {
		name  string
		steps []step
	}{
		{"success", []step{ok}},
		{"second use is ErrUsed", []step{ok, used, used}},
		{"just before expiry", []step{{120*time.Second - time.Nanosecond, sess, doc, nil}}},
		{"exactly at expiry", []step{{120 * time.Second, sess, doc, ErrExpired}}},
		{"after expiry", []step{{time.Hour, sess, doc, ErrExpired}}},
		{"expiry burns", []step{{120 * time.Second, sess, doc, ErrExpired}, used}},
		{"wrong session", []step{{0, "other", doc, ErrMismatch}}},
		{"wrong document", []step{{0, sess, "other", ErrMismatch}}},
		{"empty session", []step{{0, "", doc, ErrMismatch}}},
		{"session prefix", []step{{0, sess[:3], doc, ErrMismatch}}},
		{"document longer", []step{{0, sess, doc + "0", ErrMismatch}}},
		{"mismatch burns", []step{{0, "other", doc, ErrMismatch}, used}},
		{"used before expired", []step{ok, {time.Hour, sess, doc, ErrUsed}}},
		{"used before mismatch", []step{ok, {0, "other", "other", ErrUsed}}},
		{"expired before mismatch", []step{{time.Hour, "other", doc, ErrExpired}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, c := newRegistry(t, 0)
			issued := mustIssue(t, r, sess, doc, orig)
			for i, s := range tt.steps {
				c.Advance(s.advance)
				got, err := r.Consume(issued.ID, s.session, s.document)
				if err != s.wantErr { // sentinels are returned unwrapped
					t.Fatalf("step %d: Consume = %v, want %v", i, err, s.wantErr)
				}
				if err == nil && got != issued {
					t.Fatalf("step %d: Consume = %+v, want %+v", i, got, issued)
				}
				if err != nil && got != (Challenge{}) {
					t.Fatalf("step %d: Consume returned %+v with %v", i, got, err)
				}
			}
		})
	}
}

func TestConsumeUnknown(t *testing.T) {
	r, _ := newRegistry(t, 0)
	issued := mustIssue(t, r, sess, doc, orig)
	for _, id := range []string{
		"",
		"AAAAAAAAAAAAAAAAAAAAAAAAAA",
		strings.ToLower(issued.ID),
		issued.ID[:IDLen-1],
		issued.ID + "A",
		" " + issued.ID,
		strings.Repeat("A", 1<<16),
	} {
		if got, err := r.Consume(id, sess, doc); err != ErrUnknown || got != (Challenge{}) {
			t.Errorf("Consume(%.30q) = %+v, %v; want ErrUnknown", id, got, err)
		}
	}
	// Unknown IDs burn nothing.
	if _, err := r.Consume(issued.ID, sess, doc); err != nil {
		t.Errorf("Consume of the issued challenge after unknown attempts: %v", err)
	}
}

func TestBindingsAreIndependent(t *testing.T) {
	r, _ := newRegistry(t, 0)
	a := mustIssue(t, r, "a", "doc-a", orig)
	b := mustIssue(t, r, "b", "doc-b", "https://other.example")
	// Another challenge's bindings do not open this one; the failed attempt burns only a.
	if _, err := r.Consume(a.ID, "b", "doc-b"); err != ErrMismatch {
		t.Fatalf("Consume(a with b's bindings) = %v, want ErrMismatch", err)
	}
	if got, err := r.Consume(b.ID, "b", "doc-b"); err != nil || got != b {
		t.Fatalf("Consume(b) = %+v, %v", got, err)
	}
	if _, err := r.Consume(a.ID, "a", "doc-a"); err != ErrUsed {
		t.Fatalf("Consume(a) after mismatch = %v, want ErrUsed", err)
	}
}

func TestEvictionKeepsNewest(t *testing.T) {
	const max = 8
	r, c := newRegistry(t, max)
	var all []Challenge
	for i := range 3 * max {
		all = append(all, mustIssue(t, r, sess, fmt.Sprint("doc", i), orig))
		c.Advance(time.Second) // well inside the TTL: nothing expires
		if want := min(i+1, max); r.Len() != want {
			t.Fatalf("after %d issues Len = %d, want %d", i+1, r.Len(), want)
		}
	}
	for i, ch := range all {
		_, err := r.Consume(ch.ID, ch.Session, ch.Document)
		if i < len(all)-max {
			if err != ErrUnknown {
				t.Errorf("evicted challenge %d: Consume = %v, want ErrUnknown", i, err)
			}
		} else if err != nil {
			t.Errorf("newest challenge %d: Consume = %v", i, err)
		}
	}
}

func TestEvictionCountsTombstones(t *testing.T) {
	r, _ := newRegistry(t, 2)
	a := mustIssue(t, r, sess, "a", orig)
	if _, err := r.Consume(a.ID, sess, "a"); err != nil {
		t.Fatal(err)
	}
	b := mustIssue(t, r, sess, "b", orig)
	cc := mustIssue(t, r, sess, "c", orig) // evicts the tombstone a, the oldest entry
	if r.Len() != 2 {
		t.Fatalf("Len = %d, want 2", r.Len())
	}
	if _, err := r.Consume(a.ID, sess, "a"); err != ErrUnknown {
		t.Errorf("evicted tombstone: Consume = %v, want ErrUnknown", err)
	}
	for _, ch := range []Challenge{b, cc} {
		if _, err := r.Consume(ch.ID, sess, ch.Document); err != nil {
			t.Errorf("Consume(%s) = %v", ch.Document, err)
		}
	}
}

func TestTombstonesPrunedAfterExpiry(t *testing.T) {
	r, c := newRegistry(t, 0)
	used := mustIssue(t, r, sess, "used", orig)
	if _, err := r.Consume(used.ID, sess, "used"); err != nil {
		t.Fatal(err)
	}
	unused := mustIssue(t, r, sess, "unused", orig)
	c.Advance(60 * time.Second)
	later := mustIssue(t, r, sess, "later", orig)

	// Before expiry the tombstone answers ErrUsed.
	c.Advance(59 * time.Second)
	mustIssue(t, r, sess, "x", orig)
	if r.Len() != 4 {
		t.Fatalf("Len = %d, want 4", r.Len())
	}
	if _, err := r.Consume(used.ID, sess, "used"); err != ErrUsed {
		t.Fatalf("replay before expiry = %v, want ErrUsed", err)
	}

	// At expiry the next Issue prunes the first two, used or not, and keeps the later ones.
	c.Advance(time.Second)
	if r.Len() != 4 {
		t.Fatalf("Len before Issue = %d, want 4 (pruning happens on Issue)", r.Len())
	}
	mustIssue(t, r, sess, "y", orig)
	if r.Len() != 3 {
		t.Fatalf("Len after pruning = %d, want 3", r.Len())
	}
	for _, id := range []string{used.ID, unused.ID} {
		if _, err := r.Consume(id, sess, "used"); err != ErrUnknown {
			t.Errorf("pruned entry: Consume = %v, want ErrUnknown", err)
		}
	}
	if _, err := r.Consume(later.ID, sess, "later"); err != nil {
		t.Errorf("Consume(later) = %v", err)
	}

	// Long after, everything goes.
	c.Advance(time.Hour)
	mustIssue(t, r, sess, "z", orig)
	if r.Len() != 1 {
		t.Fatalf("Len = %d, want 1", r.Len())
	}
}

func TestClockGoingBack(t *testing.T) {
	r, c := newRegistry(t, 4)
	a := mustIssue(t, r, sess, "a", orig)
	c.Advance(-time.Hour)
	b := mustIssue(t, r, sess, "b", orig) // expires before a
	c.Advance(time.Hour + 120*time.Second)
	mustIssue(t, r, sess, "c", orig)
	// a is at the front and expired: pruned. b is behind it and expired too: pruned as well.
	if r.Len() != 1 {
		t.Errorf("Len = %d, want 1", r.Len())
	}
	for _, ch := range []Challenge{a, b} {
		if _, err := r.Consume(ch.ID, sess, ch.Document); err != ErrUnknown {
			t.Errorf("Consume(%s) = %v, want ErrUnknown", ch.Document, err)
		}
	}
	// Whatever the clock does, the bound holds.
	for i := range 20 {
		c.Advance(time.Duration(i%3-1) * time.Hour)
		mustIssue(t, r, sess, "d", orig)
		if r.Len() > 4 {
			t.Fatalf("Len = %d, over Max", r.Len())
		}
	}
}

func TestIDsUnique(t *testing.T) {
	r, _ := newRegistry(t, 1<<20)
	seen := make(map[string]bool)
	for range 20000 {
		ch := mustIssue(t, r, sess, doc, orig)
		if len(ch.ID) != 26 {
			t.Fatalf("ID %q: length %d", ch.ID, len(ch.ID))
		}
		if seen[ch.ID] {
			t.Fatalf("duplicate ID %q", ch.ID)
		}
		seen[ch.ID] = true
	}
}

// TestConcurrent: workers issue and consume at once under a tight bound. Each worker consumes
// some of its own challenges right after issuing them, and races every other worker for theirs
// (only its own bindings match). No challenge is ever consumed twice, no one else's is ever
// consumed, the bound holds throughout, and every worker's own consumptions succeed except
// where the bound evicted the challenge first (ErrUnknown: other workers issued more than Max
// in between) or the shared clock expired it; each worker gets at least one through, so the
// test cannot pass with nothing consumed.
func TestConcurrent(t *testing.T) {
	const (
		workers = 16
		rounds  = 500
		max     = 64
		ownEach = 10 // every ownEach-th challenge is consumed by its owner at once
	)
	r, c := newRegistry(t, max)
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		successes = make(map[string]int)
		owned     = make(map[int]int) // worker → own challenges consumed
	)
	type issued struct{ id, document string }
	ids := make(chan issued, workers*rounds)
	for w := range workers {
		wg.Go(func() {
			document := fmt.Sprint("doc", w)
			for i := range rounds {
				ch, err := r.Issue(sess, document, orig)
				if err != nil {
					t.Error(err)
					return
				}
				if i%ownEach == 0 {
					_, err := r.Consume(ch.ID, sess, document)
					switch err {
					case nil:
						mu.Lock()
						successes[ch.ID]++
						owned[w]++
						mu.Unlock()
					case ErrUnknown, ErrExpired: // evicted by the bound, or expired by the shared clock
					default:
						t.Errorf("worker %d: its own fresh challenge: Consume = %v", w, err)
					}
				} else {
					ids <- issued{ch.ID, document}
				}
				if i%50 == 0 {
					c.Advance(time.Second)
				}
				// Race every worker for someone's challenge; only its owner's bindings match.
				select {
				case other := <-ids:
					if _, err := r.Consume(other.id, sess, document); err == nil {
						if other.document != document {
							t.Errorf("worker %d consumed a challenge bound to %s", w, other.document)
						}
						mu.Lock()
						successes[other.id]++
						mu.Unlock()
					}
				default:
				}
				if n := r.Len(); n > max {
					t.Errorf("Len = %d, over Max %d", n, max)
				}
			}
		})
	}
	wg.Wait()
	for id, n := range successes {
		if n != 1 {
			t.Errorf("challenge %s consumed %d times", id, n)
		}
	}
	for w := range workers {
		if owned[w] == 0 {
			t.Errorf("worker %d consumed none of its %d own fresh challenges", w, rounds/ownEach)
		}
	}
}

func TestConcurrentSingleUse(t *testing.T) {
	// Many goroutines race to consume the same challenge with the right bindings: exactly one wins.
	r, _ := newRegistry(t, 0)
	for range 50 {
		ch := mustIssue(t, r, sess, doc, orig)
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs = make(map[error]int)
		)
		for range 8 {
			wg.Go(func() {
				_, err := r.Consume(ch.ID, sess, doc)
				mu.Lock()
				errs[err]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if errs[nil] != 1 || errs[ErrUsed] != 7 {
			t.Fatalf("outcomes %v, want one success and seven ErrUsed", errs)
		}
	}
}

func BenchmarkIssue(b *testing.B) {
	r := New(Options{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Issue(sess, doc, orig); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIssueParallel(b *testing.B) {
	r := New(Options{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := r.Issue(sess, doc, orig); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkIssueConsume(b *testing.B) {
	r := New(Options{})
	b.ReportAllocs()
	for b.Loop() {
		ch, err := r.Issue(sess, doc, orig)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Consume(ch.ID, sess, doc); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMetaReturnedOnceThenDropped(t *testing.T) {
	r := New(Options{})
	c, err := r.IssueWith("s", "d", "https://a.example", []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Consume(c.ID, "s", "d")
	if err != nil || got.Meta.([]string)[0] != "x" {
		t.Fatalf("%+v %v", got, err)
	}
	if r.entries[c.ID].c.Meta != nil {
		t.Fatal("tombstone kept the issuer's data")
	}
}
