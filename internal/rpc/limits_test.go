package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/wire"
)

// limitsServer serves a method table on a real Unix socket with short timeouts: ping
// answers, pin pins its connection, unpin undoes it, hold signals started (when not nil)
// and waits until release is closed (or the server stops), failing as a verb does when its
// context was cancelled.
func limitsServer(t *testing.T, s *Server, release <-chan struct{}, started chan<- struct{}) (sock string, stop func()) {
	t.Helper()
	m := &Methods{Stopping: wire.SentinelHint(wire.CodeHostUnavail, "the thing is stopping", "start it")}
	Handle(m, "ping", func(ctx context.Context, _ struct{}) (struct{}, error) { return struct{}{}, nil })
	Handle(m, "pin", func(ctx context.Context, _ struct{}) (struct{}, error) {
		ConnOf(ctx).Pin()
		return struct{}{}, nil
	})
	Handle(m, "unpin", func(ctx context.Context, _ struct{}) (struct{}, error) {
		ConnOf(ctx).Unpin()
		return struct{}{}, nil
	})
	Handle(m, "hold", func(ctx context.Context, _ struct{}) (struct{}, error) {
		if started != nil {
			select {
			case started <- struct{}{}:
			case <-ctx.Done():
			}
		}
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

// waitStarted waits for a hold request to have begun (it is in flight).
func waitStarted(t *testing.T, started <-chan struct{}) {
	t.Helper()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the hold request never started")
	}
}

// waitLive waits until the server has admitted n connections, busy of them with a frame
// being handled. (A reply is written before its handling is counted done: a client that
// has its reply cannot tell whether its connection is idle yet.)
func waitLive(t *testing.T, s *Server, n, busy int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		got, gotBusy := len(s.live), 0
		for c := range s.live {
			c.live.mu.Lock()
			if c.live.busy > 0 {
				gotBusy++
			}
			c.live.mu.Unlock()
		}
		s.mu.Unlock()
		if got == n && gotBusy == busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections admitted, %d busy; want %d, %d busy", got, gotBusy, n, busy)
		}
	}
}

// tryCall sends one request on a new connection and returns its reply's code; ok is false
// when the connection was closed without one (the server's idle timeout came first).
func tryCall(t *testing.T, c net.Conn, method string) (code string, ok bool) {
	t.Helper()
	if _, err := c.Write([]byte(`{"id":3,"method":"` + method + `"}` + "\n")); err != nil {
		return "", false
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: no reply and no close in 10 s", method)
	}
	if err != nil {
		return "", false
	}
	var resp wire.Response
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		return string(resp.Error.Code), true
	}
	return "", true
}

// establish dials until try succeeds on a connection. With a short idle timeout, a loaded
// machine may close a new connection before its first frame is read: that is the defence at
// work, not what a test is about, so it dials again (at most 20 times).
func establish(t *testing.T, sock, what string, try func(c net.Conn) bool) net.Conn {
	t.Helper()
	for i := 0; i < 20; i++ {
		c := dialT(t, sock)
		if try(c) {
			return c
		}
		c.Close()
	}
	t.Fatalf("%s: 20 connections closed before their first frame was read", what)
	return nil
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
	sock, _ := limitsServer(t, &Server{FrameTimeout: 200 * time.Millisecond, IdleTimeout: time.Hour}, nil, nil)
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
	// A frame in two writes is served; the connection stays open after it. (A server of its
	// own, with a long frame timeout: the pause between the writes must not race 200 ms.)
	sock, _ = limitsServer(t, &Server{FrameTimeout: time.Hour, IdleTimeout: time.Hour}, nil, nil)
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
	release, started := make(chan struct{}), make(chan struct{}, 1)
	sock, _ := limitsServer(t, &Server{FrameTimeout: time.Hour, IdleTimeout: 200 * time.Millisecond}, release, started)
	pinned := establish(t, sock, "pin", func(c net.Conn) bool {
		code, ok := tryCall(t, c, "pin")
		if ok && code != "" {
			t.Fatalf("pin: %q", code)
		}
		return ok
	})
	// The hold's reply is read by a goroutine, so that a connection closed before its frame
	// was read is noticed while waiting for the hold to start.
	var holdReply chan string
	establish(t, sock, "hold", func(c net.Conn) bool {
		if _, err := c.Write([]byte(`{"id":9,"method":"hold"}` + "\n")); err != nil {
			return false
		}
		got := make(chan string, 1)
		go func() {
			defer close(got)
			line, err := bufio.NewReader(c).ReadBytes('\n')
			if err != nil {
				return
			}
			var resp wire.Response
			switch {
			case json.Unmarshal(line, &resp) != nil:
				got <- "unreadable reply"
			case resp.Error != nil:
				got <- string(resp.Error.Code)
			default:
				got <- ""
			}
		}()
		select {
		case <-started:
			holdReply = got
			return true
		case code, ok := <-got:
			if ok {
				t.Fatalf("hold answered %q before it started", code)
			}
			return false
		case <-time.After(10 * time.Second):
			t.Fatal("hold neither started nor closed")
			return false
		}
	})
	// The idle connection is made last: when it has been closed for idleness, the idle timeout
	// has passed for the other two as well (their last frame was read before its).
	idle := establish(t, sock, "ping", func(c net.Conn) bool {
		code, ok := tryCall(t, c, "ping")
		if ok && code != "" {
			t.Fatalf("ping: %q", code)
		}
		return ok
	})
	if codes, eof := replies(t, idle); len(codes) != 0 || !eof {
		t.Errorf("idle connection: replies %q, eof %v; want closed without a reply", codes, eof)
	}
	close(release)
	select {
	case code, ok := <-holdReply:
		if !ok || code != "" {
			t.Errorf("a request held past the idle timeout: reply %q (connection open: %v), want its result", code, ok)
		}
	case <-time.After(10 * time.Second):
		t.Error("a request held past the idle timeout: no reply")
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
	started := make(chan struct{}, 1)
	srv := &Server{MaxConns: 4, FrameTimeout: time.Hour, IdleTimeout: time.Hour}
	sock, _ := limitsServer(t, srv, release, started)
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
	waitStarted(t, started) // holding has a request in flight
	waitLive(t, srv, 4, 1)  // half is admitted, and used's ping is done
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
	started := make(chan struct{}, 1)
	sock, stop := limitsServer(t, &Server{}, nil, started)
	c := dialT(t, sock)
	c.Write([]byte(`{"id":9,"method":"hold"}` + "\n"))
	waitStarted(t, started)
	go stop()
	if codes, eof := replies(t, c); strings.Join(codes, ",") != "HOST_UNAVAILABLE" || !eof {
		t.Errorf("a request cut short by the stop: %q, eof %v; want HOST_UNAVAILABLE then EOF", codes, eof)
	}
}

// TestEvictSparesAFrameRead: a connection ranked evictable that completes a frame before the
// eviction acts is spared (its request runs), and once evicted it refuses a frame.
func TestEvictSparesAFrameRead(t *testing.T) {
	s := &Server{MaxConns: 1}
	s.init()
	ctx := context.Background()
	v := s.newConn(ctx, nil, Peer{PID: 1})
	if !s.admit(v) {
		t.Fatal("first connection refused")
	}
	if ok, _, _ := v.evictable(); !ok {
		t.Fatal("an idle connection is not ranked evictable")
	}
	if !v.frameRead() { // it reads a request after it was ranked
		t.Fatal("frame refused before any eviction")
	}
	if v.tryEvict() {
		t.Fatal("tryEvict evicted a connection with a request in flight")
	}
	if s.admit(s.newConn(ctx, nil, Peer{PID: 2})) {
		t.Fatal("a new connection was admitted in the place of a busy one")
	}
	v.frameDone()
	if !s.admit(s.newConn(ctx, nil, Peer{PID: 3})) {
		t.Fatal("a new connection was refused with the other idle")
	}
	if v.frameRead() {
		t.Fatal("an evicted connection accepted a frame")
	}
}

// TestEvictNeverCutsShortARequest: a connection reading frames while new ones arrive at the
// limit is either spared (its frame counted busy first) or evicted before its next frame,
// which it then refuses; it is never marked evicted with a frame being handled (the frame's
// request would be cancelled by the hang-up that follows). Many rounds of the two racing.
func TestEvictNeverCutsShortARequest(t *testing.T) {
	ctx := context.Background()
	violations := 0
	for round := 0; round < 2000; round++ {
		s := &Server{MaxConns: 1}
		s.init()
		v := s.newConn(ctx, nil, Peer{PID: 1})
		s.admit(v)
		done := make(chan int)
		go func() {
			bad := 0
			for v.frameRead() {
				for i := 0; i < 3; i++ {
					v.live.mu.Lock()
					if v.live.evicted {
						bad++
					}
					v.live.mu.Unlock()
					runtime.Gosched()
				}
				v.frameDone()
			}
			done <- bad
		}()
		for !s.admit(s.newConn(ctx, nil, Peer{PID: 2})) {
			runtime.Gosched()
		}
		if <-done > 0 {
			violations++
		}
	}
	if violations > 0 {
		t.Fatalf("in %d of 2000 rounds a connection was evicted with a frame being handled", violations)
	}
}

// TestAdmitEvictConcurrently: connections arriving faster than they are served at a limit
// of 2 evict ones whose serving just began (run with -race: nothing an eviction reads may
// be written after the connection was admitted). Every connection but the last 2 admitted
// gets BUSY; those are closed without a reply when the server stops.
func TestAdmitEvictConcurrently(t *testing.T) {
	srv := &Server{MaxConns: 2, FrameTimeout: time.Hour, IdleTimeout: time.Hour}
	sock, stop := limitsServer(t, srv, nil, nil)
	const n = 64
	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				c, err := net.Dial("unix", sock)
				if err != nil {
					t.Error(err)
					return
				}
				conns[i] = c
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, c := range conns {
		t.Cleanup(func() { c.Close() })
	}
	// Accepted after all the others (the backlog is in order): when it is answered, every
	// other one was admitted, and evicted unless it is one of the last.
	last := dialT(t, sock)
	if code := call(t, last, "ping"); code != "" {
		t.Fatalf("ping: %q", code)
	}
	// Each connection's replies until it closes; the evicted ones end first.
	type outcome struct {
		i     int
		codes string
		err   error
	}
	out := make(chan outcome, n+1)
	all := append(conns, last)
	for i, c := range all {
		go func() {
			c.SetReadDeadline(time.Now().Add(20 * time.Second))
			b, err := io.ReadAll(c)
			var codes []string
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var resp wire.Response
				switch {
				case line == "":
				case json.Unmarshal([]byte(line), &resp) != nil:
					codes = append(codes, "unreadable")
				case resp.Error != nil:
					codes = append(codes, string(resp.Error.Code))
				default:
					codes = append(codes, "")
				}
			}
			out <- outcome{i, strings.Join(codes, ","), err}
		}()
	}
	for busy := 0; busy < n+1-2; busy++ {
		o := <-out
		if o.err != nil || o.codes != "BUSY" {
			t.Fatalf("connection %d (of %d; %d BUSY so far): replies %q, %v; want BUSY then EOF", o.i, n+1, busy, o.codes, o.err)
		}
	}
	stop() // the two still served are closed, without a reply
	for k := 0; k < 2; k++ {
		if o := <-out; o.err != nil || o.codes != "" {
			t.Errorf("connection %d, served until the stop: replies %q, %v; want EOF only", o.i, o.codes, o.err)
		}
	}
}

// TestUnpin: a connection pinned twice stays exempt until both pins are undone, then is
// closed by the idle timeout like any other; an extra Unpin does nothing.
func TestUnpin(t *testing.T) {
	c := &Conn{}
	c.Pin()
	c.Pin()
	c.Unpin()
	if !c.Pinned() {
		t.Fatal("one Unpin undid two Pins")
	}
	c.Unpin()
	if c.Pinned() {
		t.Fatal("still pinned after as many Unpins as Pins")
	}
	c.Unpin()
	c.Pin()
	if !c.Pinned() {
		t.Fatal("an Unpin without a Pin was counted")
	}
	var nilConn *Conn
	nilConn.Pin()
	nilConn.Unpin()

	sock, _ := limitsServer(t, &Server{FrameTimeout: time.Hour, IdleTimeout: 200 * time.Millisecond}, nil, nil)
	conn := establish(t, sock, "pin", func(c net.Conn) bool {
		code, ok := tryCall(t, c, "pin")
		if ok && code != "" {
			t.Fatalf("pin: %q", code)
		}
		return ok
	})
	if code := call(t, conn, "unpin"); code != "" {
		t.Fatalf("unpin: %q", code)
	}
	if codes, eof := replies(t, conn); len(codes) != 0 || !eof {
		t.Errorf("unpinned connection: replies %q, eof %v; want closed for idleness without a reply", codes, eof)
	}
}

// TestShutdownGrace: a handler that ignores its cancellation keeps a stopping server at most
// ShutdownGrace, and Serve then says so; a handler that honours it lets Serve return nil.
func TestShutdownGrace(t *testing.T) {
	for _, ignore := range []bool{true, false} {
		m := &Methods{}
		started, stuck := make(chan struct{}, 1), make(chan struct{})
		defer close(stuck)
		Handle(m, "stuck", func(ctx context.Context, _ struct{}) (struct{}, error) {
			started <- struct{}{}
			if ignore {
				<-stuck
			} else {
				<-ctx.Done()
			}
			return struct{}{}, nil
		})
		s := &Server{Handler: m.Serve, UID: os.Getuid(), ShutdownGrace: 200 * time.Millisecond}
		sock := filepath.Join(t.TempDir(), "s.sock")
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- s.Serve(ctx, l) }()
		c := dialT(t, sock)
		c.Write([]byte(`{"id":1,"method":"stuck"}` + "\n"))
		waitStarted(t, started)
		cancel()
		select {
		case err := <-served:
			if ignore && (err == nil || !strings.Contains(err.Error(), "1 connection(s) still busy after 200ms")) {
				t.Errorf("Serve with a handler ignoring its cancellation = %v; want the busy connection named", err)
			}
			if !ignore && err != nil {
				t.Errorf("Serve with a handler that honours its cancellation = %v; want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Serve (ignore %v) still waiting 10 s after its context ended", ignore)
		}
	}
}

// TestClientEvictedWhileIdle: a Client whose idle connection the server closed to make room
// does not take the eviction's BUSY for the answer to its next call: that call is unreachable
// (a caller that redials does), and a new connection is served.
func TestClientEvictedWhileIdle(t *testing.T) {
	closed := make(chan struct{}, 4)
	srv := &Server{MaxConns: 1, FrameTimeout: time.Hour, IdleTimeout: time.Hour, OnClose: func(*Conn) { closed <- struct{}{} }}
	sock, _ := limitsServer(t, srv, nil, nil)
	errSock := wire.Sentinel(wire.CodeHostUnavail, "thing unreachable")
	idle, err := Dial(context.Background(), sock, errSock)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if err := idle.Call(context.Background(), "ping", nil, nil); err != nil {
		t.Fatal(err)
	}
	waitLive(t, srv, 1, 0) // its ping is done: it is idle
	newcomer := dialT(t, sock)
	if code := call(t, newcomer, "ping"); code != "" {
		t.Fatalf("newcomer: %q", code)
	}
	select {
	case <-closed: // the idle connection was evicted, its BUSY written, and it is closed
	case <-time.After(10 * time.Second):
		t.Fatal("the idle connection was not closed")
	}
	err = idle.Call(context.Background(), "ping", nil, nil)
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, errSock) || wire.CodeOf(err) != wire.CodeHostUnavail ||
		!strings.Contains(err.Error(), "closed this connection while it was idle (BUSY") {
		t.Fatalf("next call on the evicted connection: %v (code %q); want unreachable naming the eviction", err, wire.CodeOf(err))
	}
}
