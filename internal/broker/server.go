// Package broker is brokerd's protocol on broker.sock: the server that gates every password
// release, and the client the CLI and the browser host use.
//
// # Security contract
//
//   - Every accepted connection is identified by SO_PEERCRED; a peer of another uid gets
//     PEER_REFUSED and is closed before any request is read.
//   - Frames are bounded (1 MiB), decoded strictly, and answered with the request id; malformed
//     input gets an error reply (or, for an oversize or truncated frame, a closed connection)
//     and never affects other connections or the broker's state.
//   - A password leaves the broker only in a "release" reply, and only after: a valid,
//     unexpired, unused challenge bound to the same session and document; an alias saved for
//     exactly the challenge's origin; and an explicit allow from the presence provider, which
//     runs the vault read inside its grant. Every other outcome is a typed error and nothing is
//     read from the vault.
//   - Secrets are held as []byte, written into hand-built frames, and zeroed after use. Logs
//     record methods, codes, aliases, origins and peer pids, never a secret or raw request.
//   - Connections are served concurrently (bounded), and each connection serves a bounded
//     number of requests at once, so a pending prompt never blocks other requests.
//
// # Not guaranteed
//
// Any process of the same user can connect and request a release; the presence prompt, which
// names the requesting pid and executable, is the barrier (see SECURITY.md).
package broker

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/headless-dev/headless/challenge"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/peercred"
	"github.com/headless-dev/headless/internal/presence"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

// Peer is the kernel's identity of a connection's process.
type Peer struct {
	UID int
	PID int
	Exe string
}

// Server serves broker.sock. Fields must be set before Serve.
type Server struct {
	Vault       vault.Store
	Presence    presence.Provider
	Challenges  *challenge.Registry
	Log         *slog.Logger
	Version     string
	UID         int // the only peer uid accepted
	PID         int // our pid, reported by "version"
	MaxConns    int // concurrent connections; default 64
	MaxInflight int // concurrent requests per connection; default 8

	once  sync.Once
	conns chan struct{}
	wg    sync.WaitGroup
}

func (s *Server) init() {
	s.once.Do(func() {
		if s.MaxConns <= 0 {
			s.MaxConns = 64
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
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, errTooManyFiles) {
				tempDelay = min(max(2*tempDelay, 5*time.Millisecond), time.Second)
				time.Sleep(tempDelay)
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
			refuse(c, wire.Errorf(wire.CodePeerRefused, "uid %d may not use this broker", cred.UID))
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

// ServeConn serves one already-identified connection until it closes or ctx is done.
func (s *Server) ServeConn(ctx context.Context, rw io.ReadWriteCloser, peer Peer) {
	s.init()
	ctx, cancel := context.WithCancel(ctx)
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
	// When the peer goes away, cancel what it still waits for (a pending prompt), then wait.
	defer func() { cancel(); handlers.Wait() }()
	for {
		frame, err := r.ReadFrame()
		if err != nil {
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
			json.NewDecoder(bytes.NewReader(frame)).Decode(&probe) // best effort, to echo the id
			clear(frame)
			clear(req.Params)
			write(wire.ErrorFrame(probe.ID, wire.Errorf(wire.CodeBadRequest, "malformed request: %s", sanitize(err))))
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
			out := s.handle(ctx, peer, req)
			clear(req.Params)
			write(out)
			clear(out)
		}()
	}
}

// sanitize shortens a decode error; it never echoes input values (json errors name types and
// offsets, not values, except for unknown field names, which are bounded here).
func sanitize(err error) string {
	m := err.Error()
	if len(m) > 200 {
		m = m[:200]
	}
	return m
}

// handle answers one request with one frame.
func (s *Server) handle(ctx context.Context, peer Peer, req wire.Request) []byte {
	start := time.Now()
	var (
		result any
		err    error
		attrs  []any
	)
	switch req.Method {
	case MethodVersion:
		result = VersionResult{Version: s.Version, Protocol: Protocol, PID: s.PID, Presence: s.Presence.Name()}
	case MethodPing:
		result = struct{}{}
	case MethodCredentialsList:
		var p ListParams
		if err = decodeParams(req.Params, &p); err == nil {
			result, err = s.list(ctx, p)
			attrs = append(attrs, "origin", p.Origin)
		}
	case MethodCredentialsAdd:
		var p AddParams
		err = decodeParams(req.Params, &p)
		if err == nil {
			attrs = append(attrs, "origin", p.Origin, "alias", p.Alias)
			result, err = s.add(ctx, p)
		}
		vault.Zero(p.Secret)
	case MethodCredentialsRm:
		var p RemoveParams
		if err = decodeParams(req.Params, &p); err == nil {
			attrs = append(attrs, "origin", p.Origin, "alias", p.Alias)
			result, err = s.remove(ctx, p)
		}
	case MethodChallengeIssue:
		var p ChallengeParams
		if err = decodeParams(req.Params, &p); err == nil {
			attrs = append(attrs, "origin", p.Origin, "session", p.Session)
			result, err = s.issue(ctx, p)
		}
	case MethodRelease:
		var p ReleaseParams
		if err = decodeParams(req.Params, &p); err == nil {
			attrs = append(attrs, "alias", p.Alias, "session", p.Session)
			var frame []byte
			frame, err = s.release(ctx, peer, req.ID, p)
			if err == nil {
				s.logDone(req.Method, peer, start, nil, attrs)
				return frame
			}
		}
	default:
		err = wire.Errorf(wire.CodeUnknownMethod, "unknown method %q", truncate(req.Method, 64))
	}
	if err == nil {
		out, eerr := wire.ResultFrame(req.ID, result)
		if eerr == nil {
			s.logDone(req.Method, peer, start, nil, attrs)
			return out
		}
		err = eerr
	}
	werr := s.toWire(err)
	s.logDone(req.Method, peer, start, werr, attrs)
	return wire.ErrorFrame(req.ID, werr)
}

func (s *Server) logDone(method string, peer Peer, start time.Time, werr *wire.Error, attrs []any) {
	args := []any{"method", truncate(method, 64), "peer_pid", peer.PID, "ms", float64(time.Since(start).Microseconds()) / 1000}
	args = append(args, attrs...)
	if werr != nil {
		s.Log.Info("request failed", append(args, "code", werr.Code)...)
		return
	}
	s.Log.Info("request", args...)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func decodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := wire.DecodeStrict(raw, v); err != nil {
		return wire.Errorf(wire.CodeBadRequest, "malformed params: %s", sanitize(err))
	}
	return nil
}

func (s *Server) list(ctx context.Context, p ListParams) (ListResult, error) {
	o := ""
	if p.Origin != "" {
		var err error
		if o, err = origin.Canonical(p.Origin); err != nil {
			return ListResult{}, err
		}
	}
	recs, err := s.Vault.List(ctx, o)
	if err != nil {
		return ListResult{}, err
	}
	out := ListResult{Credentials: make([]Credential, 0, len(recs))}
	for _, r := range recs {
		out.Credentials = append(out.Credentials, Credential(r))
	}
	return out, nil
}

func (s *Server) add(ctx context.Context, p AddParams) (Credential, error) {
	o, err := origin.Canonical(p.Origin)
	if err != nil {
		return Credential{}, err
	}
	rec := vault.Record{Origin: o, Account: p.Account, Alias: p.Alias}
	if err := s.Vault.Add(ctx, rec, p.Secret); err != nil {
		return Credential{}, err
	}
	// Report what the store recorded (its creation time).
	recs, err := s.Vault.List(ctx, o)
	if err == nil {
		for _, r := range recs {
			if strings.EqualFold(r.Alias, p.Alias) {
				return Credential(r), nil
			}
		}
	}
	return Credential(rec), nil
}

func (s *Server) remove(ctx context.Context, p RemoveParams) (struct{}, error) {
	o, err := origin.Canonical(p.Origin)
	if err != nil {
		return struct{}{}, err
	}
	return struct{}{}, s.Vault.Remove(ctx, o, p.Alias)
}

func (s *Server) issue(ctx context.Context, p ChallengeParams) (ChallengeResult, error) {
	o, err := origin.Canonical(p.Origin)
	if err != nil {
		return ChallengeResult{}, err
	}
	recs, err := s.Vault.List(ctx, o)
	if err != nil {
		return ChallengeResult{}, err
	}
	ch, err := s.Challenges.Issue(p.Session, p.Document, o)
	if err != nil {
		return ChallengeResult{}, err
	}
	res := ChallengeResult{Challenge: ch.ID, Origin: ch.Origin, ExpiresAt: ch.Expires.UTC(), Aliases: make([]string, 0, len(recs))}
	for _, r := range recs {
		res.Aliases = append(res.Aliases, r.Alias)
	}
	return res, nil
}

// release checks the challenge, finds the alias at the challenge's origin, asks presence, and
// reads the secret only inside the presence grant. It returns the complete reply frame; the
// caller writes and zeroes it.
func (s *Server) release(ctx context.Context, peer Peer, id uint64, p ReleaseParams) ([]byte, error) {
	if err := vault.ValidAlias(p.Alias); err != nil {
		return nil, err
	}
	ch, err := s.Challenges.Consume(p.Challenge, p.Session, p.Document)
	if err != nil {
		return nil, err
	}
	recs, err := s.Vault.List(ctx, ch.Origin)
	if err != nil {
		return nil, err
	}
	var rec *vault.Record
	for i := range recs {
		if strings.EqualFold(recs[i].Alias, p.Alias) {
			rec = &recs[i]
			break
		}
	}
	if rec == nil {
		all, err := s.Vault.List(ctx, "")
		if err != nil {
			return nil, err
		}
		for _, r := range all {
			if strings.EqualFold(r.Alias, p.Alias) {
				return nil, wire.Errorf(wire.CodeOriginMismatch, "alias %q is not saved for %s", p.Alias, ch.Origin)
			}
		}
		return nil, fmt.Errorf("alias %q at %s: %w", p.Alias, ch.Origin, vault.ErrAliasUnknown)
	}
	req := presence.Request{Origin: ch.Origin, Account: rec.Account, Alias: rec.Alias, Session: ch.Session, PID: peer.PID, Exe: peer.Exe}
	var (
		got    vault.Record
		secret []byte
	)
	defer func() { vault.Zero(secret) }()
	err = s.Presence.Do(ctx, req, func(ctx context.Context) error {
		var err error
		got, secret, err = s.Vault.Secret(ctx, ch.Origin, rec.Alias)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.Log.Info("released", "origin", got.Origin, "alias", got.Alias, "session", ch.Session, "peer_pid", peer.PID, "provider", s.Presence.Name())
	return ReleaseFrame(id, Released{Origin: got.Origin, Account: got.Account, Alias: got.Alias}, secret)
}

// ReleaseFrame builds a release reply by hand so that no encoder buffer holds the secret.
// The caller zeroes the returned frame after writing it.
func ReleaseFrame(id uint64, meta Released, secret []byte) ([]byte, error) {
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	return secretFrame(fmt.Appendf(nil, `{"id":%d,"result":`, id), m, secret, "}}\n")
}

// secretFrame is head + meta-without-closing-brace + ,"secret":"B64" + tail.
func secretFrame(head, meta, secret []byte, tail string) ([]byte, error) {
	n := len(head) + len(meta) + 12 + base64.StdEncoding.EncodedLen(len(secret)) + len(tail)
	if n > wire.MaxFrame {
		return nil, wire.ErrFrameTooLarge
	}
	b := make([]byte, 0, n)
	b = append(b, head...)
	b = append(b, meta[:len(meta)-1]...)
	b = append(b, `,"secret":"`...)
	b = base64.StdEncoding.AppendEncode(b, secret)
	b = append(b, '"')
	b = append(b, tail...)
	return b, nil
}

// toWire maps an error to its stable code.
func (s *Server) toWire(err error) *wire.Error {
	var we *wire.Error
	if errors.As(err, &we) {
		return we
	}
	codes := []struct {
		sentinel error
		code     wire.Code
	}{
		{vault.ErrLocked, wire.CodeVaultLocked},
		{vault.ErrUnavailable, wire.CodeVaultUnavail},
		{vault.ErrAliasExists, wire.CodeAliasExists},
		{vault.ErrAliasUnknown, wire.CodeAliasUnknown},
		{vault.ErrFull, wire.CodeVaultFull},
		{vault.ErrInvalid, wire.CodeInvalidArgument},
		{origin.ErrInvalid, wire.CodeInvalidOrigin},
		{presence.ErrDenied, wire.CodePresenceDenied},
		{presence.ErrTimeout, wire.CodePresenceTimeout},
		{presence.ErrUnavailable, wire.CodePresenceUnavail},
		{challenge.ErrUnknown, wire.CodeChallengeUnk},
		{challenge.ErrExpired, wire.CodeChallengeExp},
		{challenge.ErrUsed, wire.CodeChallengeUsed},
		{challenge.ErrMismatch, wire.CodeChallengeMism},
		{challenge.ErrInvalid, wire.CodeInvalidArgument},
	}
	for _, c := range codes {
		if errors.Is(err, c.sentinel) {
			return wire.Errorf(c.code, "%s", err.Error())
		}
	}
	s.Log.Error("internal error", "err", err)
	return wire.Errorf(wire.CodeInternal, "internal error")
}
