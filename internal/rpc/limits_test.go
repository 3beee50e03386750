package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/wire"
)

// limitsServer serves a method table on a real Unix socket with short timeouts: ping
// answers, pin pins its connection, hold waits until release is closed (or the server
// stops), and gone fails as a verb does when its context was cancelled.
func limitsServer(t *testing.T, s *Server, release <-chan struct{}) (sock string, stop func()) {
	t.Helper()
	m := &Methods{Stopping: wire.SentinelHint(wire.CodeHostUnavail, "the thing is stopping", "start it")}
	Handle(m, "ping", func(ctx context.Context, _ struct{}) (struct{}, error) { return struct{}{}, nil })
	Handle(m, "pin", func(ctx context.Context, _ struct{}) (struct{}, error) {
		ConnOf(ctx).Pin()
		return struct{}{}, nil
	})
	Handle(m, "hold", func(ctx context.Context, _ struct{}) (struct{}, error) {
		select {
		case <-release:
			return struct{}{}, nil
		case <-ctx.Done():
			return struct{}{}, wire.Errorf(wire.CodeTimeout, "the request was abandoned (its caller went away): %w", ctx.Err())
		}
	})
	s.Handler, s.UID = m.Serve, os.Getuid()
	sock = filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Serve(ctx, l) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return sock, stop
}

func dialT(t *testing.T, sock string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// replies reads reply frames until EOF (or 10 s), returning each one's error code ("" for a
// result) and whether the connection ended with EOF.
func replies(t *testing.T, c net.Conn) (codes []string, eof bool) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var resp wire.Response
			if jerr := json.Unmarshal(line, &resp); jerr != nil {
				t.Fatalf("reply %q: %v", line, jerr)
			}
			if resp.Error != nil {
				codes = append(codes, string(resp.Error.Code))
			} else {
				codes = append(codes, "")
			}
		}
		if err != nil {
			return codes, !errors.Is(err, os.ErrDeadlineExceeded)
		}
	}
}

// call sends one request on c and returns its reply's code ("" for a result).
func call(t *testing.T, c net.Conn, method string) string {
	t.Helper()
	if _, err := c.Write([]byte(`{"id":3,"method":"` + method + `"}` + "\n")); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return reply1(t, c, method)
}

// reply1 reads one reply frame on c and returns its code ("" for a result).
func reply1(t *testing.T, c net.Conn, method string) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		t.Fatalf("%s: no reply: %v", method, err)
	}
	var resp wire.Response
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		return string(resp.Error.Code)
	}
	return ""
}

// TestFrameTimeout: a frame begun and stalled, or trickled slower than the frame timeout, is
// answered FRAME_TIMEOUT and the connection closed; a frame that arrives in time is served.
func TestFrameTimeout(t *testing.T) {
	sock, _ := limitsServer(t, &Server{FrameTimeout: 200 * time.Millisecond, IdleTimeout: time.Hour}, nil)
	stalled := dialT(t, sock)
	stalled.Write([]byte(`{"id":1,"method":`))
	trickle := dialT(t, sock)
	go func() {
		for _, b := range []byte(`{"id":1,"method":"ping"}` + "\n") {
			if _, err := trickle.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	for name, c := range map[string]net.Conn{"stalled": stalled, "trickled": trickle} {
		if codes, eof := replies(t, c); strings.Join(codes, ",") != "FRAME_TIMEOUT" || !eof {
			t.Errorf("%s frame: replies %q, eof %v; want FRAME_TIMEOUT then EOF", name, codes, eof)
		}
	}
	// A quick frame in two writes is served; the connection stays open after it.
	ok := dialT(t, sock)
	ok.Write([]byte(`{"id":3,"meth`))
	time.Sleep(20 * time.Millisecond)
	ok.Write([]byte(`od":"ping"}` + "\n"))
	ok.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := bufio.NewReader(ok).ReadBytes('\n'); err != nil || !strings.Contains(string(line), `"result"`) {
		t.Errorf("a frame in two writes: %q %v", line, err)
	}
	if code := call(t, ok, "ping"); code != "" {
		t.Errorf("ping after: %q", code)
	}
}

// TestIdleTimeout: a connection with nothing in flight is closed after the idle timeout
// (without a reply: no one waits for one); a pinned one and one with a request in flight
// longer than the timeout are not.
func TestIdleTimeout(t *testing.T) {
	release := make(chan struct{})
	sock, _ := limitsServer(t, &Server{FrameTimeout: time.Hour, IdleTimeout: 200 * time.Millisecond}, release)
	idle := dialT(t, sock)
	if code := call(t, idle, "ping"); code != "" {
		t.Fatalf("ping: %q", code)
	}
	pinned := dialT(t, sock)
	if code := call(t, pinned, "pin"); code != "" {
		t.Fatalf("pin: %q", code)
	}
	holding := dialT(t, sock)
	holding.Write([]byte(`{"id":9,"method":"hold"}` + "\n"))
	if codes, eof := replies(t, idle); len(codes) != 0 || !eof {
		t.Errorf("idle connection: replies %q, eof %v; want closed without a reply", codes, eof)
	}
	time.Sleep(300 * time.Millisecond) // past the idle timeout for the other two as well
	close(release)
	if code := reply1(t, holding, "hold"); code != "" {
		t.Errorf("a request held past the idle timeout: %q, want its result", code)
	}
	if code := call(t, pinned, "ping"); code != "" {
		t.Errorf("pinned connection after the idle timeout: %q", code)
	}
}

// TestEvictWhenFull: at the connection limit, a new connection takes the place of the one that
// has done nothing for longest (never used first; it gets BUSY and is closed); connections
// with a request in flight or pinned are never evicted, and when all are, the new one is
// refused BUSY.
func TestEvictWhenFull(t *testing.T) {
	release := make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	sock, _ := limitsServer(t, &Server{MaxConns: 4, FrameTimeout: time.Hour, IdleTimeout: time.Hour}, release)
	used := dialT(t, sock)
	if code := call(t, used, "ping"); code != "" {
		t.Fatal(code)
	}
	pinned := dialT(t, sock)
	if code := call(t, pinned, "pin"); code != "" {
		t.Fatal(code)
	}
	holding := dialT(t, sock)
	holding.Write([]byte(`{"id":9,"method":"hold"}` + "\n"))
	half := dialT(t, sock)
	half.Write([]byte(`{"id":1,"method":`))
	time.Sleep(50 * time.Millisecond) // all four admitted
	// Full: the half-open one (never completed a frame) goes first, then the used idle one.
	for i, victim := range []net.Conn{half, used} {
		c := dialT(t, sock)
		if code := call(t, c, "ping"); code != "" {
			t.Fatalf("new connection %d at the limit: %q, want served", i, code)
		}
		if codes, eof := replies(t, victim); strings.Join(codes, ",") != "BUSY" || !eof {
			t.Errorf("victim %d: replies %q, eof %v; want BUSY then EOF", i, codes, eof)
		}
		if code := call(t, c, "pin"); code != "" {
			t.Fatal(code)
		}
	}
	// Now: pinned, holding, and two pinned newcomers. Nothing may go.
	c := dialT(t, sock)
	if codes, eof := replies(t, c); strings.Join(codes, ",") != "BUSY" || !eof {
		t.Errorf("connection with every other busy or pinned: %q, eof %v; want BUSY", codes, eof)
	}
	close(release)
	if code := reply1(t, holding, "hold"); code != "" {
		t.Errorf("the held request: %q, want its result", code)
	}
	if code := call(t, pinned, "ping"); code != "" {
		t.Errorf("pinned: %q", code)
	}
}

// TestStoppingAnswer: a request the server's stopping cuts short is answered Methods.Stopping
// (its code), not "its caller went away", and the connection closes after.
func TestStoppingAnswer(t *testing.T) {
	sock, stop := limitsServer(t, &Server{}, nil)
	c := dialT(t, sock)
	c.Write([]byte(`{"id":9,"method":"hold"}` + "\n"))
	time.Sleep(50 * time.Millisecond)
	go stop()
	if codes, eof := replies(t, c); strings.Join(codes, ",") != "HOST_UNAVAILABLE" || !eof {
		t.Errorf("a request cut short by the stop: %q, eof %v; want HOST_UNAVAILABLE then EOF", codes, eof)
	}
}
