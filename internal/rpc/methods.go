package rpc

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/wire"
)

// Methods is a server's method table: for each method, the type its params decode into, its
// handler and the type of its result. Its Serve is a [Handler]: it decodes the params strictly
// (unknown fields, wrong types and trailing data are BAD_REQUEST; absent params are {}),
// answers an unknown method UNKNOWN_METHOD, encodes the result as the reply, answers every
// error in its wire form ([wire.From]: the code is the error's own), and logs every request:
// its method, the peer's pid, how long it took, the code of a failure and what the handler
// noted ([Note]), never its params.
//
// Register methods with [Handle] and [HandleFrame] before serving; the table is read-only
// after that.
type Methods struct {
	Log *slog.Logger
	// Internal is what the peer is told of an error that no code claims (a bug; the error is
	// logged in full). nil: its message, bounded.
	Internal func(err error) string
	// Context, if set, derives the context a method's handler runs with (a bound on the
	// request, for example); the table calls the cancel function when the handler returned.
	Context func(ctx context.Context, method string) (context.Context, context.CancelFunc)
	// CancelOnHangup lists the methods whose handler's context ends the moment the peer
	// stops sending (rather than after the connection's drain grace): those that act for a
	// caller who must see the outcome, such as a release that waits for a person. A caller
	// that hung up (or cancelled, which closes the connection) has withdrawn the request.
	CancelOnHangup map[string]bool
	// Stopping, if set, answers a request that the server's stopping cut short (its context
	// was cancelled while its caller still waited): the daemon is going away (HOST_UNAVAILABLE
	// on control.sock, BROKER_UNAVAILABLE on broker.sock), not "its caller went away".
	Stopping error
	// Error, if set, sees every handler's error before it is answered and may replace it
	// (the host relaunches a Chromium that died under a verb, whatever call noticed it).
	Error func(err error) error

	m map[string]func(ctx context.Context, req wire.Request) ([]byte, error)
}

// Zeroer is implemented by params that carry a secret. A value that failed to decode (it may
// hold part of the secret) is zeroed by the table; one that decoded belongs to the handler,
// which zeroes it when done.
type Zeroer interface {
	ZeroSecret()
}

// Handle registers method: its params decode into a P, h answers them, and its result R is
// encoded as the reply.
func Handle[P, R any](t *Methods, method string, h func(ctx context.Context, p P) (R, error)) {
	t.add(method, func(ctx context.Context, req wire.Request) ([]byte, error) {
		p, err := decode[P](req)
		if err != nil {
			return nil, err
		}
		r, err := h(ctx, p)
		if err != nil {
			return nil, err
		}
		return wire.ResultFrame(req.ID, r)
	})
}

// HandleFrame registers method with a handler that builds its own reply frame for request id:
// a reply that carries a secret, built by hand so that no encoder buffer holds it (the server
// zeroes the frame after writing it). Its errors are answered like any handler's.
func HandleFrame[P any](t *Methods, method string, h func(ctx context.Context, id uint64, p P) ([]byte, error)) {
	t.add(method, func(ctx context.Context, req wire.Request) ([]byte, error) {
		p, err := decode[P](req)
		if err != nil {
			return nil, err
		}
		return h(ctx, req.ID, p)
	})
}

func decode[P any](req wire.Request) (P, error) {
	var p P
	if err := DecodeParams(req.Params, &p); err != nil {
		if z, ok := any(&p).(Zeroer); ok {
			z.ZeroSecret()
		}
		var zero P
		return zero, err
	}
	return p, nil
}

func (t *Methods) add(method string, h func(ctx context.Context, req wire.Request) ([]byte, error)) {
	if t.m == nil {
		t.m = map[string]func(ctx context.Context, req wire.Request) ([]byte, error){}
	}
	if _, dup := t.m[method]; dup {
		panic("rpc: method " + method + " registered twice")
	}
	t.m[method] = h
}

// Has reports whether method is registered.
func (t *Methods) Has(method string) bool {
	_, ok := t.m[method]
	return ok
}

// Serve answers one request with one frame; it is the [Handler] of a [Server].
func (t *Methods) Serve(ctx context.Context, peer Peer, req wire.Request) []byte {
	start := time.Now()
	n := &notes{}
	ctx = context.WithValue(ctx, notesKey{}, n)
	var (
		out []byte
		err error
	)
	if h, ok := t.m[req.Method]; !ok {
		err = wire.Errorf(wire.CodeUnknownMethod, "unknown method %q", clip.Text(req.Method, 64))
	} else {
		if t.Context != nil {
			var cancel context.CancelFunc
			ctx, cancel = t.Context(ctx, req.Method)
			defer cancel()
		}
		if c := ConnOf(ctx); c != nil && t.CancelOnHangup[req.Method] {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			hup := c.Hangup()
			go func() {
				select {
				case <-hup:
					cancel()
				case <-ctx.Done():
				}
			}()
		}
		out, err = h(ctx, req)
		if err != nil && t.Stopping != nil && cutShort(ctx, err) {
			err = t.Stopping
		} else if err != nil && t.Error != nil {
			err = t.Error(err)
		}
	}
	args := append([]any{"method", clip.Text(req.Method, 64), "peer_pid", peer.PID, "ms", float64(time.Since(start).Microseconds()) / 1000}, n.get()...)
	if err == nil {
		t.log().Info("request", args...)
		return out
	}
	we := wire.From(err)
	if we.Code == wire.CodeInternal {
		t.log().Error("internal error", append(args, "err", err)...)
	}
	if wire.Uncoded(err) {
		msg := clip.Text(err.Error(), 300)
		if t.Internal != nil {
			msg = t.Internal(err)
		}
		we = &wire.Error{Code: wire.CodeInternal, Message: msg, Hint: wire.Hint(wire.CodeInternal)}
	}
	t.log().Info("request failed", append(args, "code", we.Code)...)
	return wire.ErrorFrame(req.ID, we)
}

// cutShort reports whether err ended a request because its server is stopping: the
// connection is no longer served, its peer did not hang up, and err is a cancellation (a
// context's, or an error coded TIMEOUT or CANCELLED).
func cutShort(ctx context.Context, err error) bool {
	c := ConnOf(ctx)
	if c == nil || !c.Stopping() || c.hungUpNow() {
		return false
	}
	code := wire.CodeOf(err)
	return errors.Is(err, context.Canceled) || code == wire.CodeTimeout || code == wire.CodeCancelled
}

func (t *Methods) log() *slog.Logger {
	if t.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return t.Log
}

type notesKey struct{}

type notes struct {
	mu    sync.Mutex
	attrs []any
}

func (n *notes) get() []any {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.attrs
}

// Note adds key/value pairs to the log line of the request ctx belongs to (the session, the
// origin, the alias: never a secret or page content). String values are bounded, since they
// may come from the request before it was validated.
func Note(ctx context.Context, kv ...any) {
	n, _ := ctx.Value(notesKey{}).(*notes)
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, v := range kv {
		if s, ok := v.(string); ok {
			v = clip.Text(s, 128)
		}
		n.attrs = append(n.attrs, v)
	}
}

// PeerOf is the peer of the connection ctx's request arrived on (zero outside a served
// connection).
func PeerOf(ctx context.Context) Peer {
	if c := ConnOf(ctx); c != nil {
		return c.Peer
	}
	return Peer{}
}
