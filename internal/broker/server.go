// Package broker is brokerd's release gate: the server on broker.sock that decides every
// password release. The protocol it speaks (method names, params, the secret frames) and the
// client the browser host and the CLI use are package internal/brokerapi; only cmd/brokerd
// links this package (internal/archtest).
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
// # Isolated-session stores
//
// The browser host registers each isolated session over its persistent connection with
// "session.open" {"session","isolated":true} and closes it with "session.close" {"session"}.
// brokerd then keeps, for that session only, a bounded in-memory store (vault.Memory:
// exact-origin, MaxIsolatedRecords records, passwords at most credential.MaxSecretLen bytes), and at
// most MaxIsolated such stores at once. The store is owned by the registering connection and is
// zeroed when the session is closed or when that connection ends for any reason (host stop,
// crash, SIGKILL): nothing of it survives its host.
//
//   - A store answers only the connection that registered it: credentials.list/add/remove and
//     challenge.issue naming it from any other connection are SESSION_UNKNOWN, exactly as for
//     a session that does not exist (the CLI reaches a store through the host).
//   - credentials.list/add/remove with "session" address that store, never the vault; a
//     session that is not a registered isolated session is SESSION_UNKNOWN.
//   - challenge.issue and release for a registered isolated session see only its store: a
//     vault alias there is ALIAS_UNKNOWN, and every other session (and the CLI) sees only the
//     vault, so an isolated store's alias is ALIAS_UNKNOWN everywhere else. A challenge is
//     bound to the store it was issued against: one whose session was closed or re-opened
//     since is CHALLENGE_MISMATCH.
//   - Releases from an isolated store pass the same presence gate, and every add, remove and
//     release is audited with its session.
//
// # Releases go only to the genuine host
//
// brokerd starts the browser host itself ("host.start", package hostproc: the one trusted
// executable, exec'd from the very inode it checked) and owns the process. A secret (a
// "release" reply) is sent only on a connection whose SO_PEERCRED pid is that host process,
// while it runs, accepted after it was started, and on which the host said how it runs
// ("host.hello": its Chromium, the names in Chromium's environment, its config file, its
// version) in agreement with brokerd's own config and build, with a Chromium that is an ELF
// executable not writable by group or others. Everything else gets PEER_NOT_HOST before the
// challenge is consumed and before anyone is asked; the refusal is audited with the peer's
// process chain. The prompt and the audit also name what the host reports: the page path,
// the field's label, the agent chain behind the request, and for a loopback origin the
// process listening there (an origin served by different processes is ORIGIN_AMBIGUOUS,
// refused before the prompt); the release reply carries that listener's key for the host to
// check again before typing.
//
// # Not guaranteed
//
// What the host reports (page, field, agent chain, purpose) is shown labelled as such; brokerd
// cannot verify it. A same-user process that can replace a user-owned host binary, or edit the
// user-only config, chooses what brokerd starts and trusts (see SECURITY.md).
package broker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/challenge"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/loopback"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/presence"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

// Peer is the kernel's identity of a connection's process.
type Peer = rpc.Peer

// VaultTimeout bounds every vault call made for one request.
const VaultTimeout = 30 * time.Second

// Server is brokerd's request handler. Fields must be set before use.
type Server struct {
	Vault      vault.Store
	Presence   presence.Provider
	Challenges *challenge.Registry
	Log        *slog.Logger
	Version    string
	PID        int // our pid, reported by "version"
	MaxConns   int // concurrent connections (default 128)
	// Audit receives one record per release, denial, add and remove; nil disables it (unit
	// tests). A release whose record cannot be written is refused.
	Audit *audit.Log
	// MaxIsolated bounds isolated-session stores (default MaxIsolated).
	MaxIsolated int
	// Hosts starts the browser host and says which peer is it; nil: no connection is the
	// host, so every release is PEER_NOT_HOST.
	Hosts HostSupervisor
	// Expect is what the host must report in host.hello.
	Expect HostExpect
	// Started is StartedAuto or StartedPerson, reported by "version".
	Started string
	// Facts reports the doctor's facts for "version" (hardening.Facts); nil: none.
	Facts func() hardening.Report
	// Loopback names the process serving a loopback origin; nil means loopback.Finder{}.
	Loopback LoopbackFinder

	isoMu sync.Mutex
	iso   map[string]*isoStore // by session name

	helloMu sync.Mutex
	hellos  map[*rpc.Conn]*wire.Error // each connection's host.hello verdict (nil: it matched)
}

// LoopbackFinder names the process listening on a loopback origin (loopback.Finder).
type LoopbackFinder interface {
	Find(origin string) (loopback.Listener, error)
}

func (s *Server) loopback() LoopbackFinder {
	if s.Loopback == nil {
		return loopback.Finder{}
	}
	return s.Loopback
}

// isoStore is one isolated session's credential store, owned by the connection that opened it.
type isoStore struct {
	session string
	owner   *rpc.Conn
	mem     *vault.Memory
}

// challengeMeta travels with a challenge: the store it was issued against (nil: the vault) and
// the records seen then.
type challengeMeta struct {
	store *isoStore
	recs  []vault.Record
}

func errNoIsolated(session string) error {
	return &wire.Error{Code: wire.CodeSessionUnknown, Message: fmt.Sprintf("no isolated session %q", truncate(session, 64)),
		Hint: "--session names an isolated session of the running host ('headless session create NAME --isolated'); normal sessions use the vault: omit --session"}
}

// isolated returns the registered isolated session's store, or nil.
func (s *Server) isolated(session string) *isoStore {
	s.isoMu.Lock()
	defer s.isoMu.Unlock()
	return s.iso[session]
}

// storeFor resolves an explicit --session: "" is the vault; anything else must be an isolated
// session registered by conn itself (another connection's is SESSION_UNKNOWN, as if it did
// not exist).
func (s *Server) storeFor(conn *rpc.Conn, session string) (vault.Store, error) {
	if session == "" {
		return s.Vault, nil
	}
	st := s.isolated(session)
	if st == nil || st.owner != conn {
		return nil, errNoIsolated(session)
	}
	return st.mem, nil
}

func (s *Server) openSession(conn *rpc.Conn, p brokerapi.SessionOpenParams) (struct{}, error) {
	if credential.ValidSession(p.Session) != nil {
		return struct{}{}, wire.Errorf(wire.CodeInvalidArgument, "%s", credential.SessionRule)
	}
	if !p.Isolated {
		return struct{}{}, wire.Errorf(wire.CodeInvalidArgument, "only isolated sessions are registered; normal sessions use the vault")
	}
	if conn == nil {
		return struct{}{}, wire.Errorf(wire.CodeInternal, "no connection identity")
	}
	max := s.MaxIsolated
	if max <= 0 {
		max = brokerapi.MaxIsolated
	}
	s.isoMu.Lock()
	defer s.isoMu.Unlock()
	if s.iso == nil {
		s.iso = map[string]*isoStore{}
	}
	if old, ok := s.iso[p.Session]; ok {
		if old.owner == conn {
			return struct{}{}, nil // idempotent for its owner (the store is kept)
		}
		return struct{}{}, wire.Errorf(wire.CodeSessionExists, "isolated session %q is registered by another connection", p.Session)
	}
	if len(s.iso) >= max {
		return struct{}{}, wire.Errorf(wire.CodeSessionLimit, "at most %d isolated sessions", max)
	}
	s.iso[p.Session] = &isoStore{session: p.Session, owner: conn, mem: vault.NewMemory(vault.MemoryOptions{MaxRecords: brokerapi.MaxIsolatedRecords})}
	s.log().Info("isolated store opened", "session", p.Session, "peer_pid", conn.Peer.PID)
	return struct{}{}, nil
}

func (s *Server) closeSession(conn *rpc.Conn, p brokerapi.SessionCloseParams) (struct{}, error) {
	s.isoMu.Lock()
	st, ok := s.iso[p.Session]
	if ok && st.owner == conn {
		delete(s.iso, p.Session)
	}
	s.isoMu.Unlock()
	if !ok || st.owner != conn {
		return struct{}{}, errNoIsolated(p.Session)
	}
	st.mem.Wipe()
	s.log().Info("isolated store wiped", "session", st.session, "reason", "session closed")
	return struct{}{}, nil
}

// connClosed zeroes every isolated store the ended connection owned and forgets its hello.
func (s *Server) connClosed(conn *rpc.Conn) {
	s.wipeOwned(conn, "host connection ended")
	s.helloMu.Lock()
	delete(s.hellos, conn)
	s.helloMu.Unlock()
}

// wipeOwned zeroes every isolated store conn owns and returns how many there were.
func (s *Server) wipeOwned(conn *rpc.Conn, reason string) int {
	if conn == nil {
		return 0
	}
	s.isoMu.Lock()
	var gone []*isoStore
	for name, st := range s.iso {
		if st.owner == conn {
			gone = append(gone, st)
			delete(s.iso, name)
		}
	}
	s.isoMu.Unlock()
	for _, st := range gone {
		st.mem.Wipe()
		s.log().Info("isolated store wiped", "session", st.session, "reason", reason, "peer_pid", conn.Peer.PID)
	}
	return len(gone)
}

// record appends an audit record; for a release it must succeed before the secret is sent.
func (s *Server) record(op string, err error, peer Peer, r audit.Record) error {
	if s.Audit == nil {
		return nil
	}
	r.Op, r.PID = op, peer.PID
	r.Chain = s.chainOf(peer)
	if len(r.Chain) > 0 {
		r.Exe = r.Chain[0].Exe
	}
	switch {
	case err == nil && op == "release":
		r.Decision = "allow"
	case err == nil:
		r.Decision = "ok"
	case op == "release":
		r.Decision, r.Code = "deny", string(s.toWire(err).Code)
	default:
		r.Decision, r.Code = "error", string(s.toWire(err).Code)
	}
	if op == "release" {
		r.Provider = s.Presence.Name()
	}
	if aerr := s.Audit.Append(r); aerr != nil {
		s.log().Error("audit append failed", "op", op, "err", aerr)
		return wire.Errorf(wire.CodeInternal, "the audit log cannot be written")
	}
	return nil
}

// Serve serves broker.sock on l for peers of uid until ctx is done.
func (s *Server) Serve(ctx context.Context, l net.Listener, uid int) error {
	return s.rpc(uid).Serve(ctx, l)
}

// ServeConn serves one already-identified connection (tests use it over net.Pipe).
func (s *Server) ServeConn(ctx context.Context, rw io.ReadWriteCloser, peer Peer) {
	s.rpc(peer.UID).ServeConn(ctx, rw, peer)
}

func (s *Server) rpc(uid int) *rpc.Server {
	return &rpc.Server{Handler: s.handle, Log: s.log(), UID: uid, MaxConns: s.MaxConns, OnClose: s.connClosed}
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// handle answers one request with one frame.
func (s *Server) handle(ctx context.Context, peer Peer, req wire.Request) []byte {
	start := time.Now()
	if req.Method != brokerapi.MethodRelease && req.Method != brokerapi.MethodHostStart && !s.prompts(req.Method) {
		// A hung Secret Service must not hold a request forever. A release (and a write that
		// needs the keyring's prompt) is bounded by the presence timeout plus this bound on
		// each vault call (see release and write).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, VaultTimeout)
		defer cancel()
	}
	var (
		result any
		err    error
		attrs  []any
	)
	switch req.Method {
	case brokerapi.MethodVersion:
		v := brokerapi.VersionResult{Version: s.Version, Protocol: brokerapi.Protocol, PID: s.PID, Presence: s.Presence.Name(), Started: s.Started}
		if s.Hosts != nil {
			v.HostPID, _ = s.Hosts.Running()
		}
		if s.Facts != nil {
			v.Facts = s.Facts()
		}
		result = v
	case brokerapi.MethodHostStart:
		if err = rpc.DecodeParams(req.Params, &struct{}{}); err == nil {
			result, err = s.startHost(ctx)
		}
	case brokerapi.MethodHostHello:
		var p brokerapi.HelloParams
		if err = rpc.DecodeParams(req.Params, &p); err == nil {
			result, err = s.hello(rpc.ConnOf(ctx), p)
		}
	case brokerapi.MethodPing:
		result = struct{}{}
	case brokerapi.MethodCredentialsList:
		var p brokerapi.ListParams
		if err = rpc.DecodeParams(req.Params, &p); err == nil {
			result, err = s.list(ctx, rpc.ConnOf(ctx), p)
			attrs = append(attrs, "origin", p.Origin, "session", p.Session)
		}
	case brokerapi.MethodCredentialsAdd:
		var p brokerapi.AddParams
		err = rpc.DecodeParams(req.Params, &p)
		if err == nil {
			attrs = append(attrs, "origin", p.Origin, "alias", p.Alias, "session", p.Session)
			result, err = s.add(ctx, rpc.ConnOf(ctx), p)
			s.record("add", err, peer, audit.Record{Origin: p.Origin, Account: p.Account, Alias: p.Alias, Session: p.Session})
		}
		credential.Zero(p.Secret)
	case brokerapi.MethodCredentialsInit:
		if err = rpc.DecodeParams(req.Params, &struct{}{}); err == nil {
			result, err = s.init(ctx)
			s.record("init", err, peer, audit.Record{})
		}
	case brokerapi.MethodCredentialsRm:
		var p brokerapi.RemoveParams
		if err = rpc.DecodeParams(req.Params, &p); err == nil {
			attrs = append(attrs, "origin", p.Origin, "alias", p.Alias, "session", p.Session)
			result, err = s.remove(ctx, rpc.ConnOf(ctx), p)
			s.record("remove", err, peer, audit.Record{Origin: p.Origin, Alias: p.Alias, Session: p.Session})
		}
	case brokerapi.MethodChallengeIssue:
		var p brokerapi.ChallengeParams
		if err = rpc.DecodeParams(req.Params, &p); err == nil {
			attrs = append(attrs, "origin", p.Origin, "session", p.Session)
			result, err = s.issue(ctx, rpc.ConnOf(ctx), p)
		}
	case brokerapi.MethodSessionOpen:
		var p brokerapi.SessionOpenParams
		if err = rpc.DecodeParams(req.Params, &p); err == nil {
			attrs = append(attrs, "session", p.Session)
			result, err = s.openSession(rpc.ConnOf(ctx), p)
		}
	case brokerapi.MethodSessionClose:
		var p brokerapi.SessionCloseParams
		if err = rpc.DecodeParams(req.Params, &p); err == nil {
			attrs = append(attrs, "session", p.Session)
			result, err = s.closeSession(rpc.ConnOf(ctx), p)
		}
	case brokerapi.MethodProfileCleared:
		var p brokerapi.ProfileClearedParams
		if err = rpc.DecodeParams(req.Params, &p); err == nil {
			n := s.wipeOwned(rpc.ConnOf(ctx), "profile cleared")
			result = struct{}{}
			s.record("clear", nil, peer, audit.Record{})
			attrs = append(attrs, "sessions_closed", p.SessionsClosed, "stores_wiped", n)
		}
	case brokerapi.MethodRelease:
		var p brokerapi.ReleaseParams
		if err = rpc.DecodeParams(req.Params, &p); err == nil {
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
	for _, a := range attrs {
		if v, ok := a.(string); ok {
			a = truncate(v, 128) // values are logged before validation; keep lines bounded
		}
		args = append(args, a)
	}
	if werr != nil {
		s.log().Info("request failed", append(args, "code", werr.Code)...)
		return
	}
	s.log().Info("request", args...)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func (s *Server) list(ctx context.Context, conn *rpc.Conn, p brokerapi.ListParams) (brokerapi.ListResult, error) {
	o := ""
	if p.Origin != "" {
		var err error
		if o, err = origin.Canonical(p.Origin); err != nil {
			return brokerapi.ListResult{}, err
		}
	}
	store, err := s.storeFor(conn, p.Session)
	if err != nil {
		return brokerapi.ListResult{}, err
	}
	recs, err := store.List(ctx, o)
	if err != nil {
		return brokerapi.ListResult{}, err
	}
	out := brokerapi.ListResult{Credentials: make([]brokerapi.Credential, 0, len(recs))}
	for _, r := range recs {
		out.Credentials = append(out.Credentials, brokerapi.Credential(r))
	}
	return out, nil
}

func (s *Server) add(ctx context.Context, conn *rpc.Conn, p brokerapi.AddParams) (brokerapi.Credential, error) {
	o, err := origin.Canonical(p.Origin)
	if err != nil {
		return brokerapi.Credential{}, err
	}
	store, err := s.storeFor(conn, p.Session)
	if err != nil {
		return brokerapi.Credential{}, err
	}
	rec := vault.Record{Origin: o, Account: p.Account, Alias: p.Alias}
	if err := s.write(ctx, p.Session, true, func(ctx context.Context) error { return store.Add(ctx, rec, p.Secret) }); err != nil {
		return brokerapi.Credential{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, VaultTimeout)
	defer cancel()
	// Report what the store recorded (its creation time).
	recs, err := store.List(ctx, o)
	if err == nil {
		for _, r := range recs {
			if strings.EqualFold(r.Alias, p.Alias) {
				return brokerapi.Credential(r), nil
			}
		}
	}
	return brokerapi.Credential(rec), nil
}

func (s *Server) remove(ctx context.Context, conn *rpc.Conn, p brokerapi.RemoveParams) (struct{}, error) {
	o, err := origin.Canonical(p.Origin)
	if err != nil {
		return struct{}{}, err
	}
	store, err := s.storeFor(conn, p.Session)
	if err != nil {
		return struct{}{}, err
	}
	return struct{}{}, s.write(ctx, p.Session, false, func(ctx context.Context) error { return store.Remove(ctx, o, p.Alias) })
}

// unlocker is a presence provider whose vault is locked at rest (secret-service): writes run
// while the person has it unlocked, and it can create the vault.
type unlocker interface {
	Unlocked(ctx context.Context, create bool, use func(context.Context) error) error
	Init(ctx context.Context) (created bool, err error)
}

// prompts reports whether method may wait for the keyring's prompt.
func (s *Server) prompts(method string) bool {
	_, ok := s.Presence.(unlocker)
	return ok && (method == brokerapi.MethodCredentialsAdd || method == brokerapi.MethodCredentialsRm || method == brokerapi.MethodCredentialsInit)
}

// write runs a vault write, inside the provider's unlock window when the vault is locked at
// rest (the keyring prompts the person); each vault call is bounded by VaultTimeout. Writes to
// an isolated session's in-memory store (session != "") need no unlock.
func (s *Server) write(ctx context.Context, session string, create bool, fn func(context.Context) error) error {
	bounded := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, VaultTimeout)
		defer cancel()
		return fn(ctx)
	}
	if u, ok := s.Presence.(unlocker); ok && session == "" {
		return u.Unlocked(ctx, create, bounded)
	}
	return bounded(ctx)
}

// init creates the locked credentials keyring of the secret-service provider.
func (s *Server) init(ctx context.Context) (brokerapi.InitResult, error) {
	u, ok := s.Presence.(unlocker)
	if !ok {
		return brokerapi.InitResult{}, wire.Errorf(wire.CodeInvalidArgument,
			"'credentials init' creates the locked keyring of the secret-service presence provider; this brokerd uses %q", s.Presence.Name())
	}
	created, err := u.Init(ctx)
	return brokerapi.InitResult{Created: created, Provider: s.Presence.Name()}, err
}

func (s *Server) issue(ctx context.Context, conn *rpc.Conn, p brokerapi.ChallengeParams) (brokerapi.ChallengeResult, error) {
	o, err := origin.Canonical(p.Origin)
	if err != nil {
		return brokerapi.ChallengeResult{}, err
	}
	// An isolated session sees only its own store, and only its owner sees it; every other
	// session only the vault.
	iso := s.isolated(p.Session)
	var store vault.Store = s.Vault
	switch {
	case iso != nil && iso.owner != conn:
		return brokerapi.ChallengeResult{}, errNoIsolated(p.Session)
	case iso != nil:
		store = iso.mem
	case p.Isolated:
		return brokerapi.ChallengeResult{}, errNoIsolated(p.Session)
	}
	recs, err := store.List(ctx, o)
	if err != nil {
		return brokerapi.ChallengeResult{}, err
	}
	// The metadata goes with the challenge, so a release can name the account in its prompt
	// without another vault round trip.
	ch, err := s.Challenges.IssueWith(p.Session, p.Document, o, challengeMeta{store: iso, recs: recs})
	if err != nil {
		return brokerapi.ChallengeResult{}, err
	}
	res := brokerapi.ChallengeResult{Challenge: ch.ID, Origin: ch.Origin, ExpiresAt: ch.Expires.UTC(), Aliases: make([]string, 0, len(recs))}
	for _, r := range recs {
		res.Aliases = append(res.Aliases, r.Alias)
	}
	return res, nil
}

// release checks the challenge, finds the alias at the challenge's origin, asks presence, and
// reads the secret only inside the presence grant. It returns the complete reply frame; the
// caller writes and zeroes it.
func (s *Server) release(ctx context.Context, peer Peer, id uint64, p brokerapi.ReleaseParams) (frame []byte, err error) {
	// Every outcome is audited: a denial after the fact, an allow before the secret is sent.
	ar := audit.Record{Alias: p.Alias, Session: p.Session}
	defer func() {
		if err != nil {
			s.record("release", err, peer, ar)
		}
	}()
	// Only the genuine host: before the challenge is consumed and before anyone is asked.
	if err := s.requireHost(rpc.ConnOf(ctx)); err != nil {
		return nil, err
	}
	if err := validRelease(p); err != nil {
		return nil, err
	}
	ar.Purpose, ar.Path, ar.Field, ar.Agent = p.Purpose, p.Path, p.Field, p.Agent
	if err := credential.ValidAlias(p.Alias); err != nil {
		return nil, err
	}
	ch, err := s.Challenges.Consume(p.Challenge, p.Session, p.Document)
	if err != nil {
		return nil, err
	}
	ar.Origin = ch.Origin
	meta, _ := ch.Meta.(challengeMeta)
	// The store is the one the challenge was issued against, and still the session's own.
	if cur := s.isolated(ch.Session); cur != meta.store {
		return nil, wire.Errorf(wire.CodeChallengeMism, "session %q was opened or closed since the challenge was issued", truncate(ch.Session, 64))
	}
	var store vault.Store = s.Vault
	if meta.store != nil {
		// The host's release connection is not the one that registered the store; it must
		// be the same (genuine) process.
		if meta.store.owner.Peer.PID != peer.PID {
			return nil, errNoIsolated(ch.Session)
		}
		store = meta.store.mem
	}
	lctx, cancel := context.WithTimeout(ctx, VaultTimeout)
	defer cancel()
	find := func(recs []vault.Record) *vault.Record {
		for i := range recs {
			if strings.EqualFold(recs[i].Alias, p.Alias) {
				return &recs[i]
			}
		}
		return nil
	}
	recs := meta.recs // as seen when the challenge was issued
	rec := find(recs)
	if rec == nil { // added since, or no metadata: look again
		if recs, err = store.List(lctx, ch.Origin); err != nil {
			return nil, err
		}
		rec = find(recs)
	}
	if rec == nil {
		all, err := store.List(lctx, "")
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
	ar.Account, ar.Alias = rec.Account, rec.Alias
	_, hostExe := s.Hosts.Running()
	req := presence.Request{Origin: ch.Origin, Account: rec.Account, Alias: rec.Alias, Session: ch.Session, PID: peer.PID, Exe: hostExe, Host: true,
		Verify: p.Purpose == brokerapi.PurposeVerify, Path: p.Path, Field: p.Field, Agent: p.Agent}
	// A loopback origin is only as trustworthy as whatever listens there: name it, and refuse
	// one served by different processes, before anyone is asked.
	listenerKey := ""
	if loopback.IsLoopback(ch.Origin) {
		l, err := s.loopback().Find(ch.Origin)
		if l.Origin != "" {
			ar.Listener = l.String()
		}
		if err != nil {
			return nil, err
		}
		req.Listener, listenerKey = l.String(), l.Key()
	}
	var (
		got    vault.Record
		secret []byte
	)
	defer func() { credential.Zero(secret) }()
	err = s.Presence.Do(ctx, req, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, VaultTimeout)
		defer cancel()
		var err error
		got, secret, err = store.Secret(ctx, ch.Origin, rec.Alias)
		return err
	})
	if err != nil {
		return nil, err
	}
	// The listed metadata (from the challenge, or an index file) named the account the person
	// was asked about; the record actually read must be that one.
	if got.Origin != ch.Origin || !strings.EqualFold(got.Alias, rec.Alias) || got.Account != rec.Account {
		return nil, wire.Errorf(wire.CodeAliasUnknown, "the saved record of alias %q changed since the challenge was issued (account or alias differ); nothing was released", p.Alias)
	}
	s.log().Info("released", "origin", got.Origin, "alias", got.Alias, "session", ch.Session, "peer_pid", peer.PID, "provider", s.Presence.Name())
	if err := s.record("release", nil, peer, ar); err != nil {
		return nil, err // not audited, not released
	}
	return brokerapi.ReleaseFrame(id, brokerapi.Released{Origin: got.Origin, Account: got.Account, Alias: got.Alias, Listener: listenerKey}, secret)
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
		{presence.ErrAutoUnlock, wire.CodePresenceAutoUnlock},
		{vault.ErrNoKeyring, wire.CodeVaultNoKeyring},
		{vault.ErrLocked, wire.CodeVaultLocked},
		{vault.ErrUnavailable, wire.CodeVaultUnavail},
		{vault.ErrAliasExists, wire.CodeAliasExists},
		{vault.ErrAliasUnknown, wire.CodeAliasUnknown},
		{vault.ErrFull, wire.CodeVaultFull},
		{credential.ErrInvalid, wire.CodeInvalidArgument},
		{origin.ErrInvalid, wire.CodeInvalidOrigin},
		{loopback.ErrAmbiguous, wire.CodeOriginAmbiguous},
		{loopback.ErrUnavailable, wire.CodeOriginUnverified},
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
	s.log().Error("internal error", "err", err)
	return wire.Errorf(wire.CodeInternal, "internal error")
}
