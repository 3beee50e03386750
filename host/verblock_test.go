package host

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/wire"
)

// TestVerbLock: a free lock is taken at once; a waiter gives up when its context ends; at most
// MaxQueuedPerSession wait for one session and MaxQueuedVerbs for all, the next is BUSY at
// once; Unlock hands the lock to a waiter.
func TestVerbLock(t *testing.T) {
	var all atomic.Int32
	var l verbLock
	if err := l.LockCtx(context.Background(), &all, "s"); err != nil {
		t.Fatal(err)
	}
	// A waiter whose caller goes away gives up, and its place in the queue is free again.
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { gaveUp <- l.LockCtx(ctx, &all, "s") }()
	waitQueued(t, &all, 1)
	cancel()
	select {
	case err := <-gaveUp:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled waiter: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a waiter whose context ended still waits")
	}
	waitQueued(t, &all, 0)

	got := make(chan error, MaxQueuedPerSession)
	for range MaxQueuedPerSession {
		go func() { got <- l.LockCtx(context.Background(), &all, "s") }()
	}
	waitQueued(t, &all, MaxQueuedPerSession)
	if err := l.LockCtx(context.Background(), &all, "s"); wire.CodeOf(err) != wire.CodeBusy {
		t.Fatalf("waiter %d on one session: %v, want BUSY", MaxQueuedPerSession+1, err)
	}
	// Other sessions fill the host's queue: the one past MaxQueuedVerbs is BUSY.
	others := make([]verbLock, MaxQueuedVerbs)
	for i := range others {
		others[i].Lock()
	}
	for i := range MaxQueuedVerbs - MaxQueuedPerSession {
		go func() { others[i].LockCtx(context.Background(), &all, "o") }()
	}
	waitQueued(t, &all, MaxQueuedVerbs)
	last := MaxQueuedVerbs - 1
	if err := others[last].LockCtx(context.Background(), &all, "o"); wire.CodeOf(err) != wire.CodeBusy {
		t.Fatalf("waiter %d on the host: %v, want BUSY", MaxQueuedVerbs+1, err)
	}
	// Each Unlock lets one waiter of s in.
	for i := range MaxQueuedPerSession {
		l.Unlock()
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("waiter %d: %v", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("waiter %d did not get the lock", i)
		}
	}
	for i := range MaxQueuedVerbs - MaxQueuedPerSession {
		others[i].Unlock()
	}
}

func waitQueued(t *testing.T, all *atomic.Int32, n int32) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); all.Load() != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d verbs queued, want %d", all.Load(), n)
		}
	}
}
