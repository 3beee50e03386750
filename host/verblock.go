package host

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headless-dev/headless/internal/wire"
)

// Bounds on the verbs that wait for a session's verb lock. A running verb holds one
// control.sock connection and so does every verb queued behind it: without a bound, an
// agent's flood of long waits on one session (140 'wait --timeout 5m') filled all 128
// connections, and its own sign-in, 'status' and 'stop' were refused BUSY. With at most
// MaxSessions verbs running and MaxQueuedVerbs queued, control.sock keeps connections free.
const (
	// MaxQueuedPerSession bounds the verbs waiting for one session's lock.
	MaxQueuedPerSession = 8
	// MaxQueuedVerbs bounds the verbs waiting for any session's lock, together.
	MaxQueuedVerbs = 32
)

// verbLock is a session's one-verb-at-a-time lock. A verb waiting for it gives up when its
// caller does (its context ends: a caller that hung up no longer holds a connection behind
// a long verb), and a verb that would wait beyond the bounds is refused BUSY at once. The
// zero value is unlocked.
type verbLock struct {
	once   sync.Once
	ch     chan struct{} // holds one token while locked
	queued atomic.Int32
}

func (l *verbLock) tokens() chan struct{} {
	l.once.Do(func() { l.ch = make(chan struct{}, 1) })
	return l.ch
}

// Lock waits for the lock whatever happens (closing a session, a journey's own context).
func (l *verbLock) Lock() { l.tokens() <- struct{}{} }

// LockWithin takes the lock if it is free within d, and reports whether it did.
func (l *verbLock) LockWithin(d time.Duration) bool {
	select {
	case l.tokens() <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case l.tokens() <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

// Unlock releases the lock.
func (l *verbLock) Unlock() { <-l.tokens() }

// LockCtx takes the lock for a verb of session name: at once when it is free; else it waits
// in line, counted in l's queue and in all (the host's), until the lock is free or ctx ends
// (ctx.Err()). A full queue is BUSY.
func (l *verbLock) LockCtx(ctx context.Context, all *atomic.Int32, name string) error {
	select {
	case l.tokens() <- struct{}{}:
		return nil
	default:
	}
	if n := l.queued.Add(1); n > MaxQueuedPerSession {
		l.queued.Add(-1)
		return wire.Errorf(wire.CodeBusy, "session %q already has %d commands waiting for the one it runs; retry when they end", name, MaxQueuedPerSession)
	}
	defer l.queued.Add(-1)
	if n := all.Add(1); n > MaxQueuedVerbs {
		all.Add(-1)
		return wire.Errorf(wire.CodeBusy, "%d commands already wait for their sessions; retry when they end", MaxQueuedVerbs)
	}
	defer all.Add(-1)
	select {
	case l.tokens() <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
