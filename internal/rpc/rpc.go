// Package rpc serves the NDJSON protocol of broker.sock and control.sock on a Unix listener.
//
// # Security contract
//
//   - Every accepted connection is identified by the kernel (SO_PEERCRED); a peer of another uid
//     gets PEER_REFUSED and is closed before any request is read.
//   - Connections (MaxConns) and in-flight requests per connection (MaxInflight) are bounded.
//     When the connection limit is reached, a new connection takes the place of the one that
//     has done nothing for longest (no request in flight, not pinned: one that never completed
//     a frame first), which is answered BUSY and closed; only when every connection is busy
//     or pinned is the new one refused BUSY. Half-open connections cannot starve the others.
//     A connection that completed a frame is busy from that moment, and one chosen for
//     eviction refuses any frame after (one lock decides which came first), so an eviction
//     never cuts short a request already read.
//   - A frame must arrive whole within FrameTimeout of its first byte (a stalled or trickled
//     frame is answered FRAME_TIMEOUT and the connection closed), and a connection with no
//     request in flight is closed after IdleTimeout, unless a handler pinned it ([Conn.Pin]:
//     it owns state, such as the MCP server's lease of its sessions or the host's broker
//     connection, until [Conn.Unpin] says that state is gone). These apply to connections
//     that support read deadlines (every net.Conn).
//   - When the server stops, requests cut short by it are answered [Methods.Stopping] (the
//     daemon is going away), never as if their caller had gone.
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
	"os"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/headless-dev/headless/internal/peercred"
	"github.com/headless-dev/headless/internal/wire"
)

// Peer is the kernel's identity of a connection's process.
type Peer struct {
	UID int
	// GID is the peer's effective gid when it connected (SO_PEERCRED): the group a set-gid
	// executable gave it, which only root can grant.
	GID int
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

	stop <-chan struct{} // the server's: closed when it stops serving
	rd   readDeadliner   // nil: the connection has no deadlines (no timeouts apply)
	live liveness
}

// liveness is what the idle and frame timeouts and eviction look at.
type liveness struct {
	mu           sync.Mutex
	frameTimeout time.Duration
	idleTimeout  time.Duration
	busy         int       // frames being handled (decoding, or a request in flight)
	frames       int       // complete frames read
	pins         int       // Pin calls not yet undone by Unpin: exempt from the idle timeout and eviction
	partialSince time.Time // first byte of the frame being read (zero: none)
	idleSince    time.Time // since when nothing has been in flight
	evicted      bool      // the server closes it to make room
}

type readDeadliner interface{ SetReadDeadline(time.Time) error }

// Pin exempts the connection from the idle timeout and from eviction when the server is full:
// a handler calls it when the connection comes to own state that lives as long as it does
// (sessions an MCP server's lease connection owns, the genuine host's broker connection, an
// isolated-session store), and [Conn.Unpin] once for each Pin when that state is gone. A
// partial frame still times out.
func (c *Conn) Pin() {
	if c == nil {
		return
	}
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	c.live.pins++
	c.armLocked()
}

// Unpin undoes one [Conn.Pin]: when none is left, the connection is again subject to the idle
// timeout (counted from when it last had nothing in flight) and to eviction. An Unpin without
// a Pin does nothing.
func (c *Conn) Unpin() {
	if c == nil {
		return
	}
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	if c.live.pins > 0 {
		c.live.pins--
	}
	c.armLocked()
}

// Pinned reports whether the connection is pinned ([Conn.Pin] not undone by [Conn.Unpin]).
func (c *Conn) Pinned() bool {
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	return c.live.pins > 0
}

// Stopping reports whether the server stopped serving this connection (it is shutting down).
func (c *Conn) Stopping() bool {
	if c.stop == nil {
		return false
	}
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// hungUpNow reports whether the peer stopped sending.
func (c *Conn) hungUpNow() bool {
	select {
	case <-c.hangupChan():
		return true
	default:
		return false
	}
}

// armLocked sets the read deadline the connection's state calls for: now when it is evicted
// or the server stops;
// the end of the frame timeout while a frame is partly read; the end of the idle timeout when
// nothing is in flight and it is not pinned; none otherwise. c.live.mu is held.
func (c *Conn) armLocked() {
	if c.rd == nil {
		return
	}
	l := &c.live
	var d time.Time
	switch {
	case l.evicted || c.Stopping():
		d = time.Now()
	case !l.partialSince.IsZero() && l.frameTimeout > 0:
		d = l.partialSince.Add(l.frameTimeout)
	case l.busy == 0 && l.pins == 0 && l.idleTimeout > 0:
		d = l.idleSince.Add(l.idleTimeout)
	}
	c.rd.SetReadDeadline(d)
}

// beforeRead records whether a frame is partly read (partial) and arms the deadline.
func (c *Conn) beforeRead(partial bool) {
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	switch {
	case !partial:
		c.live.partialSince = time.Time{}
	case c.live.partialSince.IsZero():
		c.live.partialSince = time.Now()
	}
	c.armLocked()
}

// frameRead records a complete frame; it reports false (the frame must be dropped unread)
// when the connection is being evicted. It and [Conn.tryEvict] hold c.live.mu, so a frame is
// either counted busy before an eviction looks (which then spares the connection) or refused.
func (c *Conn) frameRead() bool {
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	if c.live.evicted {
		return false
	}
	c.live.partialSince = time.Time{}
	c.live.frames++
	c.live.busy++
	return true
}

// frameDone records that a frame's handling ended (its reply is written, or it was refused).
func (c *Conn) frameDone() {
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	c.live.busy--
	if c.live.busy == 0 {
		c.live.idleSince = time.Now()
		c.armLocked()
	}
}

// evictable reports whether the server may close c to make room, and its rank: connections
// that never completed a frame first, then the longest idle. It is a snapshot for ranking
// only: [Conn.tryEvict] decides.
func (c *Conn) evictable() (ok bool, neverUsed bool, since time.Time) {
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	l := &c.live
	return l.busy == 0 && l.pins == 0 && !l.evicted, l.frames == 0, l.idleSince
}

// tryEvict marks c evicted, and arms its deadline to close it now, only if it is still
// evictable (nothing in flight, not pinned) under the lock its frames are counted under; it
// reports whether it did. A frame completed after this is refused by [Conn.frameRead].
func (c *Conn) tryEvict() bool {
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	l := &c.live
	if l.busy != 0 || l.pins != 0 || l.evicted {
		return false
	}
	l.evicted = true
	c.armLocked()
	return true
}

// connReader arms the connection's read deadline before every read of the wire.Reader.
type connReader struct {
	c        *Conn
	r        io.Reader
	buffered func() int
}

func (cr *connReader) Read(p []byte) (int, error) {
	cr.c.beforeRead(cr.buffered() > 0)
	return cr.r.Read(p)
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
	// FrameTimeout bounds how long a frame may take to arrive once its first byte has;
	// default DefaultFrameTimeout.
	FrameTimeout time.Duration
	// IdleTimeout closes a connection that has had no request in flight for this long,
	// unless it is pinned ([Conn.Pin]); default DefaultIdleTimeout.
	IdleTimeout time.Duration
	// OnClose, if set, runs once per connection after it ended and its last handler returned.
	OnClose func(*Conn)
	// ShutdownGrace bounds how long Serve, once its context is done, waits for the handlers it
	// cancelled; default DefaultShutdownGrace.
	ShutdownGrace time.Duration

	once sync.Once
	mu   sync.Mutex
	live map[*Conn]struct{} // the connections Serve admitted
	wg   sync.WaitGroup
}

const (
	// DefaultFrameTimeout is how long a frame may take once begun.
	DefaultFrameTimeout = 10 * time.Second
	// DefaultIdleTimeout is how long an unpinned connection may wait with nothing in flight.
	// It is longer than any pause a client makes between calls on one connection (an
	// interactive login's save question waits at most host.EnrollHold, 2 minutes).
	DefaultIdleTimeout = 5 * time.Minute
	// DefaultShutdownGrace is how long a stopping server waits for cancelled handlers.
	DefaultShutdownGrace = 10 * time.Second
)

func (s *Server) init() {
	s.once.Do(func() {
		if s.MaxConns <= 0 {
			s.MaxConns = 128
		}
		if s.MaxInflight <= 0 {
			s.MaxInflight = 8
		}
		if s.FrameTimeout <= 0 {
			s.FrameTimeout = DefaultFrameTimeout
		}
		if s.ShutdownGrace <= 0 {
			s.ShutdownGrace = DefaultShutdownGrace
		}
		if s.IdleTimeout <= 0 {
			s.IdleTimeout = DefaultIdleTimeout
		}
		if s.Log == nil {
			s.Log = slog.New(slog.DiscardHandler)
		}
		s.live = map[*Conn]struct{}{}
	})
}

// admit adds c to the served connections; when the limit is reached it evicts the connection
// that has done nothing for longest (one that never completed a frame first), or reports
// false when every connection is busy or pinned.
func (s *Server) admit(c *Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.live) >= s.MaxConns {
		type candidate struct {
			c     *Conn
			never bool
			since time.Time
		}
		var cands []candidate
		for o := range s.live {
			if ok, never, since := o.evictable(); ok {
				cands = append(cands, candidate{o, never, since})
			}
		}
		// Never used first, then the longest idle. A candidate that read a frame (or was
		// pinned) since it was ranked is spared by tryEvict, and the next one is tried.
		sort.Slice(cands, func(i, j int) bool {
			a, b := cands[i], cands[j]
			if a.never != b.never {
				return a.never
			}
			return a.since.Before(b.since)
		})
		evicted := false
		for _, v := range cands {
			if !v.c.tryEvict() {
				continue
			}
			delete(s.live, v.c)
			s.Log.Warn("connection limit reached; closing the longest idle connection", "limit", s.MaxConns,
				"peer_pid", v.c.Peer.PID, "never_used", v.never, "idle_ms", time.Since(v.since).Milliseconds())
			evicted = true
			break
		}
		if !evicted {
			return false
		}
	}
	s.live[c] = struct{}{}
	return true
}

func (s *Server) release(c *Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, c)
}

// newConn makes the identity of a connection served on rw until ctx is done. Every field is
// set before it is published (admit), since an eviction reads them from another goroutine.
func (s *Server) newConn(ctx context.Context, rw io.ReadWriteCloser, peer Peer) *Conn {
	now := time.Now()
	c := &Conn{Peer: peer, Accepted: now, stop: ctx.Done()}
	if d, ok := rw.(readDeadliner); ok {
		c.rd = d
	}
	c.live.frameTimeout, c.live.idleTimeout, c.live.idleSince = s.FrameTimeout, s.IdleTimeout, now
	return c
}

// Serve accepts connections on l until ctx is done, then closes l, cancels in-flight requests
// and waits for their handlers to finish, at most ShutdownGrace: a handler that ignores its
// cancellation does not keep the daemon from stopping (Serve then returns an error naming the
// wait, and the caller exits with the handler still running).
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	s.init()
	go func() { <-ctx.Done(); l.Close() }()
	var tempDelay time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return s.drain()
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
			return errors.Join(fmt.Errorf("accept: %w", err), s.drain())
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
		conn := s.newConn(ctx, c, Peer{UID: cred.UID, GID: cred.GID, PID: cred.PID, Exe: cred.Exe()})
		if !s.admit(conn) {
			s.Log.Warn("connection refused: limit reached", "limit", s.MaxConns, "peer_pid", cred.PID)
			refuse(c, wire.Errorf(wire.CodeBusy, "too many connections, every one busy (limit %d)", s.MaxConns))
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.release(conn)
			s.serveConn(ctx, c, conn)
		}()
	}
}

// drain waits for the connections' handlers, at most ShutdownGrace.
func (s *Server) drain() error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	t := time.NewTimer(s.ShutdownGrace)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		s.mu.Lock()
		n := len(s.live)
		s.mu.Unlock()
		return fmt.Errorf("stopped with %d connection(s) still busy after %v: a handler ignored its cancellation", n, s.ShutdownGrace)
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
	s.serveConn(ctx, rw, s.newConn(ctx, rw, peer))
}

func (s *Server) serveConn(ctx context.Context, rw io.ReadWriteCloser, conn *Conn) {
	peer := conn.Peer
	if s.OnClose != nil {
		defer s.OnClose(conn) // deferred first: runs after the handlers are waited for below
	}
	defer rw.Close()
	parent := ctx
	ctx, cancel := context.WithCancel(context.WithValue(ctx, connKey{}, conn))
	defer cancel()
	// When the server stops, reading stops (the handlers, cancelled, still answer: Stopping);
	// the connection closes once they did.
	go func() {
		<-ctx.Done()
		if parent.Err() != nil {
			if conn.rd != nil {
				conn.rd.SetReadDeadline(time.Now())
				return
			}
			rw.Close()
		}
	}()

	cr := &connReader{c: conn, r: rw}
	r := wire.NewReader(cr)
	cr.buffered = r.Buffered
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
		if err == nil && !conn.frameRead() {
			clear(frame)
			err = os.ErrDeadlineExceeded // evicted: the frame is not served
		}
		if err != nil {
			conn.live.mu.Lock()
			evicted, partial := conn.live.evicted, !conn.live.partialSince.IsZero()
			conn.live.mu.Unlock()
			timedOut := errors.Is(err, os.ErrDeadlineExceeded)
			switch {
			case parent.Err() != nil:
				return // the server stops: not a hang-up (the handlers answer Stopping)
			case timedOut && evicted:
				write(wire.ErrorFrame(0, wire.Errorf(wire.CodeBusy, "this connection was closed to make room: it was idle while the server was at its limit of %d connections", s.MaxConns)))
			case timedOut && partial:
				s.Log.Warn("frame not completed in time; connection closed", "peer_pid", peer.PID, "timeout", s.FrameTimeout)
				write(wire.ErrorFrame(0, wire.Errorf(wire.CodeFrameTimeout, "a frame was begun and not completed within %v; the connection is closed", s.FrameTimeout)))
			case timedOut:
				s.Log.Info("idle connection closed", "peer_pid", peer.PID, "timeout", s.IdleTimeout)
			case errors.Is(err, wire.ErrFrameTooLarge):
				s.Log.Warn("oversize frame; connection closed", "peer_pid", peer.PID)
				write(wire.ErrorFrame(0, wire.Errorf(wire.CodeFrameTooLarge, "frame exceeds %d bytes", wire.MaxFrame)))
			}
			conn.hungUp()
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
			conn.frameDone()
			continue
		}
		clear(frame)
		select {
		case inflight <- struct{}{}:
		default:
			clear(req.Params)
			write(wire.ErrorFrame(req.ID, wire.Errorf(wire.CodeBusy, "too many requests in flight on this connection (limit %d)", s.MaxInflight)))
			conn.frameDone()
			continue
		}
		handlers.Add(1)
		go func() {
			defer handlers.Done()
			defer conn.frameDone()
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
