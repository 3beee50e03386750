package vault

import (
	"context"
	"sync"
)

// rounds lets concurrent reads of one key share a call to the service. A read that arrives
// while none of its key runs starts one; a read that arrives while one runs does not join it
// (that call began before it asked, and may miss a write it saw answered) but waits for the
// next round, which starts when the running one ends and serves every read that arrived
// meanwhile. So every caller gets what the service said at some moment after it asked, as if
// it had called alone, and the service sees at most one call per key at a time however many
// clients ask: brokerd's 64 concurrent credentials.list and challenge.issue requests were 64
// searches queued at gnome-keyring, which answers one message at a time.
//
// A round runs with the context of none of its callers: one caller giving up (its client hung
// up, its deadline passed) answers that caller alone; the round is cancelled only when every
// caller it serves has given up. The keys held are bounded by the reads in flight.
type rounds[T any] struct {
	mu   sync.Mutex
	keys map[string]*roundKey[T]
}

// roundKey is a key's running round and the one gathering the reads that arrived since.
type roundKey[T any] struct {
	running, next *round[T]
}

type round[T any] struct {
	ctx     context.Context
	cancel  context.CancelFunc
	waiters int           // callers still waiting for it
	done    chan struct{} // closed once val and err are set
	val     T
	err     error
}

func newRound[T any](ctx context.Context) *round[T] {
	// The caller's values (none matter to a search) without its cancellation or deadline:
	// each caller's own deadline ends its own wait.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &round[T]{ctx: rctx, cancel: cancel, done: make(chan struct{})}
}

// do returns the result of a call of fn for key that started after do was called, shared with
// the other callers of that round. The result is shared: callers must not modify it.
func (r *rounds[T]) do(ctx context.Context, key string, fn func(ctx context.Context) (T, error)) (T, error) {
	r.mu.Lock()
	if r.keys == nil {
		r.keys = map[string]*roundKey[T]{}
	}
	k := r.keys[key]
	var rd *round[T]
	switch {
	case k == nil:
		rd = newRound[T](ctx)
		k = &roundKey[T]{running: rd}
		r.keys[key] = k
		go r.run(key, k, fn)
	case k.next == nil || k.next.waiters == 0:
		// (A next round every caller of which gave up is cancelled: a fresh one replaces it.)
		rd = newRound[T](ctx)
		k.next = rd
	default:
		rd = k.next
	}
	rd.waiters++
	r.mu.Unlock()

	select {
	case <-rd.done:
		return rd.val, rd.err
	case <-ctx.Done():
	}
	r.mu.Lock()
	rd.waiters--
	if rd.waiters == 0 {
		rd.cancel() // no one left to answer: a round not yet started is skipped (run)
	}
	r.mu.Unlock()
	var zero T
	return zero, ctx.Err()
}

// run runs key's rounds, one after another, until no read waits for another.
func (r *rounds[T]) run(key string, k *roundKey[T], fn func(ctx context.Context) (T, error)) {
	for {
		r.mu.Lock()
		rd := k.running
		r.mu.Unlock()
		if rd.ctx.Err() == nil {
			rd.val, rd.err = fn(rd.ctx)
		} else {
			rd.err = rd.ctx.Err()
		}
		rd.cancel()
		close(rd.done)

		r.mu.Lock()
		if k.next == nil {
			delete(r.keys, key)
			r.mu.Unlock()
			return
		}
		k.running, k.next = k.next, nil
		r.mu.Unlock()
	}
}
