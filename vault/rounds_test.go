package vault

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedFn is a read whose calls are numbered and each held until released: the n-th call
// answers n.
type gatedFn struct {
	calls   atomic.Int64
	started chan int64
	release chan struct{}
}

func newGatedFn() *gatedFn {
	return &gatedFn{started: make(chan int64, 16), release: make(chan struct{})}
}

func (g *gatedFn) fn(ctx context.Context) (int64, error) {
	n := g.calls.Add(1)
	g.started <- n
	select {
	case <-g.release:
		return n, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// waitStarted waits for the call numbered n to begin.
func (g *gatedFn) waitStarted(t *testing.T, n int64) {
	t.Helper()
	select {
	case got := <-g.started:
		if got != n {
			t.Fatalf("call %d started, want %d", got, n)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("call %d never started", n)
	}
}

type answer struct {
	v   int64
	err error
}

func ask(r *rounds[int64], ctx context.Context, key string, g *gatedFn) chan answer {
	ch := make(chan answer, 1)
	go func() {
		v, err := r.do(ctx, key, g.fn)
		ch <- answer{v, err}
	}()
	return ch
}

// waiting waits until key's next round has n callers.
func waiting(t *testing.T, r *rounds[int64], key string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		k := r.keys[key]
		got := 0
		if k != nil && k.next != nil {
			got = k.next.waiters
		}
		r.mu.Unlock()
		if got == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%d callers never gathered for the next round of %q", n, key)
}

// A read that arrives while a call runs never gets that call's answer: it and every other read
// that arrived meanwhile share the next call, which begins after the running one ended.
func TestRoundsNeverAnswerFromACallThatBeganBeforeTheRead(t *testing.T) {
	var r rounds[int64]
	g := newGatedFn()
	ctx := context.Background()
	first := ask(&r, ctx, "o", g)
	g.waitStarted(t, 1)
	var later []chan answer
	for range 5 {
		later = append(later, ask(&r, ctx, "o", g))
	}
	waiting(t, &r, "o", 5)
	g.release <- struct{}{}
	if a := <-first; a.v != 1 || a.err != nil {
		t.Fatalf("first read: %+v, want call 1", a)
	}
	g.waitStarted(t, 2)
	close(g.release)
	for i, ch := range later {
		if a := <-ch; a.v != 2 || a.err != nil {
			t.Errorf("read %d: %+v, want call 2 (the one that began after it)", i, a)
		}
	}
	if n := g.calls.Load(); n != 2 {
		t.Errorf("%d calls for 6 reads, want 2", n)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.keys) != 0 {
		t.Errorf("%d keys held after every read was answered", len(r.keys))
	}
}

// Keys do not wait for each other.
func TestRoundsKeysAreIndependent(t *testing.T) {
	var r rounds[int64]
	a, b := newGatedFn(), newGatedFn()
	ctx := context.Background()
	ra := ask(&r, ctx, "a", a)
	a.waitStarted(t, 1)
	rb := ask(&r, ctx, "b", b)
	b.waitStarted(t, 1)
	close(b.release)
	if got := <-rb; got.err != nil {
		t.Fatal(got.err)
	}
	close(a.release)
	<-ra
}

// One caller giving up answers that caller alone; the call goes on for the others, and is
// cancelled only when every caller of its round gave up.
func TestRoundsCallerGivingUpAnswersOnlyItself(t *testing.T) {
	var r rounds[int64]
	g := newGatedFn()
	quitter, quit := context.WithCancel(context.Background())
	q := ask(&r, quitter, "o", g)
	g.waitStarted(t, 1)
	// Another read of the same round cannot exist (it would be a next round), so the stayer
	// shares round 2 with a second quitter.
	stayer := ask(&r, context.Background(), "o", g)
	quitter2, quit2 := context.WithCancel(context.Background())
	q2 := ask(&r, quitter2, "o", g)
	waiting(t, &r, "o", 2)
	quit() // round 1's only caller: its call is cancelled
	if a := <-q; !errors.Is(a.err, context.Canceled) {
		t.Fatalf("quitter: %+v, want its own cancellation", a)
	}
	g.waitStarted(t, 2)
	quit2()
	if a := <-q2; !errors.Is(a.err, context.Canceled) {
		t.Fatalf("second quitter: %+v", a)
	}
	g.release <- struct{}{}
	if a := <-stayer; a.v != 2 || a.err != nil {
		t.Fatalf("the caller that stayed: %+v, want call 2's answer", a)
	}
}

// A next round whose every caller gave up before it began is not run, and a read arriving
// after that gets a round of its own, not the abandoned one's cancellation.
func TestRoundsAbandonedNextRoundIsReplaced(t *testing.T) {
	var r rounds[int64]
	g := newGatedFn()
	first := ask(&r, context.Background(), "o", g)
	g.waitStarted(t, 1)
	gone, cancel := context.WithCancel(context.Background())
	abandoned := ask(&r, gone, "o", g)
	waiting(t, &r, "o", 1)
	cancel()
	if a := <-abandoned; !errors.Is(a.err, context.Canceled) {
		t.Fatalf("abandoned read: %+v", a)
	}
	late := ask(&r, context.Background(), "o", g)
	waiting(t, &r, "o", 1)
	close(g.release)
	if a := <-first; a.v != 1 {
		t.Fatalf("first: %+v", a)
	}
	if a := <-late; a.err != nil || a.v != 2 {
		t.Fatalf("late read: %+v, want call 2", a)
	}
}

// Under many concurrent readers every read is answered, and the calls made are far fewer than
// the reads (race detector: the shared answer is published by the round's end).
func TestRoundsManyReaders(t *testing.T) {
	var r rounds[int64]
	var started atomic.Int64
	fn := func(ctx context.Context) (int64, error) {
		n := started.Add(1)
		time.Sleep(time.Millisecond)
		return n, nil
	}
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				before := started.Load()
				v, err := r.do(context.Background(), "o", fn)
				if err != nil || v <= before {
					t.Errorf("answer of call %d (err %v): that call began before the read (%d had begun)", v, err, before)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := started.Load(); n >= 64*50 {
		t.Errorf("%d calls for %d reads: nothing shared", n, 64*50)
	}
}
