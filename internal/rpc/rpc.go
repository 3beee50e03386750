// Package rpc serves the NDJSON protocol of broker.sock and control.sock on a Unix listener.
//
// # Security contract
//
//   - Every accepted connection is identified by the kernel (SO_PEERCRED); a peer of another uid
//     gets PEER_REFUSED and is closed before any request is read.
//   - Connections (MaxConns) and in-flight requests per connection (MaxInflight) are bounded;
//     beyond them the peer gets BUSY.
//   - Frames are read with wire.Reader (1 MiB cap, consumed bytes zeroed) and decoded strictly;
//     malformed input gets BAD_REQUEST, echoing the id when it can be read; an oversize frame
//     gets FRAME_TOO_LARGE and the connection is closed; a truncated frame closes it. None of
//     this touches other connections or the handler's state.
//   - Requests on one connection run concurrently, so one slow request (a presence prompt, a
//     page load) never blocks the others; when the peer disconnects, its requests' context is
//     cancelled.
//   - Request params are zeroed after the handler returns, and reply frames after they are
//     written, because either may carry a secret on broker.sock.
//   - Each served connection has an identity ([Conn], from [ConnOf] in a handler's context)
//     and OnClose runs exactly once when it ends, after its last handler returned, so state a
//     connection owns (brokerd's isolated-session stores) can be disposed of when its peer
//     goes away for any reason: a clean close, a crash or SIGKILL.
package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/headless-dev/headless/internal/peercred"
	"github.com/headless-dev/headless/internal/wire"
)

// Peer is the kernel's identity of a connection's process.
type Peer struct {
	UID int
	PID int
	Exe string
}

// Conn is the identity of one served connection, compared by pointer. It carries the peer
// and when the connection began to be served (after it was accepted).
type Conn struct {
	Peer     Peer
	Accepted time.Time

	hangup     chan struct{} // closed when the peer stopped sending (nil: never)
	hangupOnce sync.Once
	mu         sync.Mutex
	client     string
}

// Hangup is closed when the peer stopped sending: it closed the connection, crashed or was
// killed. A request it is still waiting for has no one left to answer (methods that act on
// its behalf are cancelled at once, [Methods.CancelOnHangup]).
func (c *Conn) Hangup() <-chan struct{} { return c.hangupChan() }

func (c *Conn) hangupChan() chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hangup == nil {
		c.hangup = make(chan struct{})
	}
	return c.hangup
}

func (c *Conn) hungUp() {
	ch := c.hangupChan()
	c.hangupOnce.Do(func() { close(ch) })
}

// SetClient records what the peer says it is (an MCP client's name and version, say): a
// label, never an identity. The caller bounds and cleans it.
func (c *Conn) SetClient(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.client = s
}

// Client is the label the peer gave ([Conn.SetClient]); "" when it gave none.
func (c *Conn) Client() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.client
}

type connKey struct{}

// ConnOf returns the connection a handler's request arrived on (nil outside ServeConn).
func ConnOf(ctx context.Context) *Conn {
	c, _ := ctx.Value(connKey{}).(*Conn)
	return c
}

// Handler answers one request with one complete reply frame (newline included). The server
// writes the frame and then zeroes it.
type Handler func(ctx context.Context, peer Peer, req wire.Request) []byte

// Server serves one listener. Fields must be set before Serve.
type Server struct {
	Handler     Handler
	Log         *slog.Logger
	UID         int // the only peer uid accepted
	MaxConns    int // concurrent connections; default 128
	MaxInflight int // concurrent requests per connection; default 8
	// OnClose, if set, runs once per connection after it ended and its last handler returned.
	OnClose func(*Conn)

	once  sync.Once
	conns chan struct{}
	wg    sync.WaitGroup
}

func (s *Server) init() {
	s.once.Do(func() {
		if s.MaxConns <= 0 {
			s.MaxConns = 128
		}
		if s.MaxInflight <= 0 {
			s.MaxInflight = 8
		}
		if s.Log == nil {
			s.Log = slog.New(slog.DiscardHandler)
		}
		s.conns = make(chan struct{}, s.MaxConns)
	})
}

// Serve accepts connections on l until ctx is done, then closes l, cancels in-flight requests
// and waits for their handlers to finish.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	s.init()
	go func() { <-ctx.Done(); l.Close() }()
	var tempDelay time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				s.wg.Wait()
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				tempDelay = min(max(2*tempDelay, 5*time.Millisecond), time.Second)
				select {
				case <-time.After(tempDelay):
				case <-ctx.Done():
				}
				continue
			}
			s.wg.Wait()
			return fmt.Errorf("accept: %w", err)
		}
		tempDelay = 0
		cred, err := peercred.Get(c)
		if err != nil {
			s.Log.Warn("peer credentials unreadable; connection closed", "err", err)
			c.Close()
			continue
		}
		if cred.UID != s.UID {
			s.Log.Warn("connection refused: other uid", "peer_uid", cred.UID, "peer_pid", cred.PID)
			refuse(c, wire.Errorf(wire.CodePeerRefused, "uid %d may not use this socket", cred.UID))
			continue
		}
		select {
		case s.conns <- struct{}{}:
		default:
			s.Log.Warn("connection refused: limit reached", "limit", s.MaxConns, "peer_pid", cred.PID)
			refuse(c, wire.Errorf(wire.CodeBusy, "too many connections (limit %d)", s.MaxConns))
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.conns }()
			s.ServeConn(ctx, c, Peer{UID: cred.UID, PID: cred.PID, Exe: cred.Exe()})
		}()
	}
}

func refuse(c net.Conn, e *wire.Error) {
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write(wire.ErrorFrame(0, e))
	c.Close()
}

type deadliner interface{ SetWriteDeadline(time.Time) error }

// drainGrace is how long requests may still run after their peer stopped sending.
const drainGrace = 2 * time.Second

// ServeConn serves one already-identified connection until it closes or ctx is done.
func (s *Server) ServeConn(ctx context.Context, rw io.ReadWriteCloser, peer Peer) {
	s.init()
	conn := &Conn{Peer: peer, Accepted: time.Now()}
	if s.OnClose != nil {
		defer s.OnClose(conn) // deferred first: runs after the handlers are waited for below
	}
	ctx, cancel := context.WithCancel(context.WithValue(ctx, connKey{}, conn))
	defer cancel()
	go func() { <-ctx.Done(); rw.Close() }()

	r := wire.NewReader(rw)
	defer r.Wipe()
	var wmu sync.Mutex
	write := func(b []byte) {
		wmu.Lock()
		defer wmu.Unlock()
		if d, ok := rw.(deadliner); ok {
			d.SetWriteDeadline(time.Now().Add(10 * time.Second))
		}
		rw.Write(b)
	}
	inflight := make(chan struct{}, s.MaxInflight)
	var handlers sync.WaitGroup
	// When the peer stops sending, give its requests a moment to be answered (a client may
	// half-close after its last request), then cancel what still waits (a pending prompt)
	// and wait for the handlers.
	defer func() {
		finished := make(chan struct{})
		go func() { handlers.Wait(); close(finished) }()
		select {
		case <-finished:
		case <-time.After(drainGrace):
		}
		cancel()
		handlers.Wait()
	}()
	for {
		frame, err := r.ReadFrame()
		if err != nil {
			conn.hungUp()
			if errors.Is(err, wire.ErrFrameTooLarge) {
				s.Log.Warn("oversize frame; connection closed", "peer_pid", peer.PID)
				write(wire.ErrorFrame(0, wire.Errorf(wire.CodeFrameTooLarge, "frame exceeds %d bytes", wire.MaxFrame)))
			}
			return
		}
		var req wire.Request
		if err := wire.DecodeStrict(frame, &req); err != nil {
			var probe struct {
				ID uint64 `json:"id"`
			}
			json.Unmarshal(frame, &probe) // best effort, to echo the id (never a Decoder: it copies)
			clear(frame)
			clear(req.Params)
			write(wire.ErrorFrame(probe.ID, wire.Errorf(wire.CodeBadRequest, "malformed request: %s", Sanitize(err))))
			continue
		}
		clear(frame)
		select {
		case inflight <- struct{}{}:
		default:
			clear(req.Params)
			write(wire.ErrorFrame(req.ID, wire.Errorf(wire.CodeBusy, "too many requests in flight on this connection (limit %d)", s.MaxInflight)))
			continue
		}
		handlers.Add(1)
		go func() {
			defer handlers.Done()
			defer func() { <-inflight }()
			out := s.Handler(ctx, peer, req)
			clear(req.Params)
			write(out)
			clear(out)
		}()
	}
}

// Sanitize shortens a decode error for a reply; json errors name types and offsets, and
// unknown field names are bounded here.
func Sanitize(err error) string {
	m := err.Error()
	if len(m) > 200 {
		m = m[:200]
	}
	return m
}

// DecodeParams decodes raw params strictly into v ({} when absent), as a BAD_REQUEST *wire.Error
// on failure.
func DecodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := wire.DecodeStrict(raw, v); err != nil {
		return wire.Errorf(wire.CodeBadRequest, "malformed params: %s", Sanitize(err))
	}
	return nil
}
