package rpc

import (
	"bufio"
	"context"
	"io"
	"net"
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
