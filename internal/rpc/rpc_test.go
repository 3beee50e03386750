package rpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/wire"
)

// TestOnCloseAfterHandlers: every request of a connection sees the same Conn, and OnClose
// gets that Conn once, after the connection ended and its last handler returned.
func TestOnCloseAfterHandlers(t *testing.T) {
	var seen atomic.Pointer[Conn]
	var running atomic.Int32
	closed := make(chan *Conn, 2)
	s := &Server{
		Handler: func(ctx context.Context, peer Peer, req wire.Request) []byte {
			running.Add(1)
			defer running.Add(-1)
			c := ConnOf(ctx)
			if old := seen.Swap(c); old != nil && old != c {
				t.Error("two requests of one connection saw different Conns")
			}
			if req.Method == "slow" {
				time.Sleep(100 * time.Millisecond)
			}
			return wire.ErrorFrame(req.ID, wire.Errorf(wire.CodeBusy, "x"))
		},
		OnClose: func(c *Conn) {
			if running.Load() != 0 {
				t.Error("OnClose ran while a handler still ran")
			}
			closed <- c
		},
	}
	a, b := net.Pipe()
	go s.ServeConn(context.Background(), b, Peer{PID: 42})
	go io.Copy(io.Discard, bufio.NewReader(a))
	io.WriteString(a, `{"id":1,"method":"fast"}`+"\n"+`{"id":2,"method":"slow"}`+"\n")
	time.Sleep(20 * time.Millisecond)
	a.Close()
	select {
	case c := <-closed:
		if c == nil || c != seen.Load() || c.Peer.PID != 42 {
			t.Fatalf("OnClose got %+v, handlers saw %+v", c, seen.Load())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OnClose never ran")
	}
	select {
	case <-closed:
		t.Fatal("OnClose ran twice")
	case <-time.After(50 * time.Millisecond):
	}
	if ConnOf(context.Background()) != nil {
		t.Fatal("ConnOf outside a connection")
	}
}

// pipeClient serves t over net.Pipe and returns a client of it.
func pipeClient(t *testing.T, m *Methods, socket error) *Client {
	t.Helper()
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); (&Server{Handler: m.Serve}).ServeConn(ctx, b, Peer{PID: 7}) }()
	c := NewClient(a, socket)
	t.Cleanup(func() { c.Close(); cancel(); <-done })
	return c
}

type echoParams struct {
	Name   string `json:"name"`
	Secret []byte `json:"secret,omitempty"`
}

var zeroed atomic.Int32

func (p *echoParams) ZeroSecret() {
	clear(p.Secret)
	zeroed.Add(1)
}

// TestMethodsTable: params decode strictly into the registered type, results encode, errors
// answer their own code, an unknown method is UNKNOWN_METHOD, an error no code claims is
// INTERNAL with what Internal says, and a failed decode zeroes a secret-carrying params value.
func TestMethodsTable(t *testing.T) {
	zeroed.Store(0)
	errGone := wire.Sentinel(wire.CodeSessionUnknown, "no such thing")
	errRelaunched := wire.Sentinel(wire.CodeBrowserCrashed, "relaunched")
	m := &Methods{Internal: func(error) string { return "internal error" }, Error: func(err error) error {
		if wire.CodeOf(err) == wire.CodeBrowserCrashed {
			return fmt.Errorf("%w (was: %v)", errRelaunched, err)
		}
		return err
	}}
	Handle(m, "echo", func(ctx context.Context, p echoParams) (echoParams, error) {
		if PeerOf(ctx).PID != 7 {
			t.Errorf("peer %+v", PeerOf(ctx))
		}
		Note(ctx, "name", p.Name)
		return echoParams{Name: p.Name}, nil
	})
	Handle(m, "gone", func(ctx context.Context, _ struct{}) (struct{}, error) {
		return struct{}{}, fmt.Errorf("look it up: %w", errGone)
	})
	Handle(m, "bug", func(ctx context.Context, _ struct{}) (struct{}, error) {
		return struct{}{}, errors.New("nil map in /secret/path")
	})
	Handle(m, "crash", func(ctx context.Context, _ struct{}) (struct{}, error) {
		return struct{}{}, wire.Errorf(wire.CodeBrowserCrashed, "pipe: EOF")
	})
	HandleFrame(m, "frame", func(ctx context.Context, id uint64, _ struct{}) ([]byte, error) {
		return fmt.Appendf(nil, `{"id":%d,"result":{"name":"by hand"}}`+"\n", id), nil
	})
	c := pipeClient(t, m, nil)
	ctx := context.Background()
	var r echoParams
	if err := c.Call(ctx, "echo", echoParams{Name: "x"}, &r); err != nil || r.Name != "x" {
		t.Fatalf("echo: %+v %v", r, err)
	}
	if err := c.Call(ctx, "frame", nil, &r); err != nil || r.Name != "by hand" {
		t.Fatalf("frame: %+v %v", r, err)
	}
	for _, tc := range []struct {
		method string
		params any
		code   wire.Code
		msg    string
	}{
		{"echo", map[string]any{"name": "x", "extra": 1}, wire.CodeBadRequest, "extra: unknown key"},
		{"echo", map[string]any{"name": 5}, wire.CodeBadRequest, "malformed params"},
		{"echo", map[string]any{"name": "x", "secret": "YQ==", "Name": "y"}, wire.CodeBadRequest, "unknown key"},
		{"gone", nil, wire.CodeSessionUnknown, "look it up: no such thing"},
		{"gone", map[string]any{"x": 1}, wire.CodeBadRequest, "unknown key"},
		{"bug", nil, wire.CodeInternal, "internal error"},
		{"crash", nil, wire.CodeBrowserCrashed, "relaunched (was: pipe: EOF)"}, // the Error hook
		{"nope", nil, wire.CodeUnknownMethod, `unknown method "nope"`},
	} {
		err := c.Call(ctx, tc.method, tc.params, nil)
		var we *wire.Error
		if !errors.As(err, &we) || we.Code != tc.code || !strings.Contains(we.Message, tc.msg) || we.Hint == "" {
			t.Errorf("%s %v: %v, want %s %q", tc.method, tc.params, err, tc.code, tc.msg)
		}
	}
	if zeroed.Load() != 3 {
		t.Errorf("%d params values zeroed after a failed decode, want 3 (one per echo refused)", zeroed.Load())
	}
	if !m.Has("echo") || m.Has("nope") {
		t.Fatal("Has")
	}
}

// TestClientDeadlineIsTheContexts: when the caller's deadline passes before the server
// answers, the error is the context's, never ErrUnreachable (the socket's deadline is set only
// once the context is done, so it can never fire first as an i/o timeout).
func TestClientDeadlineIsTheContexts(t *testing.T) {
	errSock := wire.Sentinel(wire.CodeHostUnavail, "thing unreachable")
	m := &Methods{}
	// hang answers only once every call has given up (a sleep of its own was a race with the
	// callers' timers: under load a 1 ms deadline can fire after a 10 ms sleep ends).
	answer := make(chan struct{})
	Handle(m, "hang", func(ctx context.Context, _ struct{}) (struct{}, error) {
		<-answer
		return struct{}{}, nil
	})
	Handle(m, "ping", func(ctx context.Context, _ struct{}) (struct{}, error) { return struct{}{}, nil })
	a, b := net.Pipe()
	sctx, scancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&Server{Handler: m.Serve, MaxInflight: 64}).ServeConn(sctx, b, Peer{PID: 7}) // room for every hanging call
	}()
	c := NewClient(a, errSock)
	t.Cleanup(func() { c.Close(); scancel(); <-done })
	for i := 0; i < 50; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+i%5)*time.Millisecond)
		err := c.Call(ctx, "hang", nil, nil)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrUnreachable) || errors.Is(err, errSock) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	close(answer)
	// The connection still works: no late deadline from an earlier call hits the next one.
	if err := c.Call(context.Background(), "ping", nil, nil); err != nil {
		t.Fatal(err)
	}
}

// TestClientUnreachable: a server that goes away mid-call, or is not there, is ErrUnreachable
// and the socket's own sentinel (its code), with the cause in the message.
func TestClientUnreachable(t *testing.T) {
	errSock := wire.Sentinel(wire.CodeHostUnavail, "thing unreachable")
	a, b := net.Pipe()
	go func() {
		buf := make([]byte, 256)
		b.Read(buf)
		b.Close()
	}()
	c := NewClient(a, errSock)
	defer c.Close()
	err := c.Call(context.Background(), "x", nil, nil)
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, errSock) || wire.CodeOf(err) != wire.CodeHostUnavail || !strings.HasPrefix(err.Error(), "thing unreachable: ") {
		t.Fatalf("%v", err)
	}
	_, err = Dial(context.Background(), filepath.Join(t.TempDir(), "none.sock"), errSock)
	if !errors.Is(err, ErrUnreachable) || wire.From(err).Code != wire.CodeHostUnavail || !strings.Contains(err.Error(), "none.sock") {
		t.Fatalf("%v", err)
	}
}
