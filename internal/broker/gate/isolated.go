package gate

// Isolated-session stores. The host registers each isolated session on its own connection
// ("session.open" with isolated: true) and closes it ("session.close"); brokerd keeps for it a
// bounded vault.Memory (MaxIsolatedRecords records, at most MaxIsolated stores), owned by that
// connection and zeroed when the session closes or the connection ends for any reason.
//
//   - Only the registering connection reaches the store: naming it from any other is
//     SESSION_UNKNOWN, exactly as for a session that does not exist.
//   - credentials.* with "session" address the store, never the vault; challenge.issue and
//     release for the session see only the store (a vault alias there is ALIAS_UNKNOWN, and
//     the store's aliases are ALIAS_UNKNOWN everywhere else). A challenge whose session was
//     closed or re-opened since it was issued is CHALLENGE_MISMATCH.
//   - Releases from a store pass the same presence gate; every add, remove and release is
//     audited with its session.

import (
	"fmt"

	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

// isoStore is one isolated session's credential store, owned by the connection that opened it.
type isoStore struct {
	session string
	owner   *rpc.Conn
	mem     *vault.Memory
	paths   *memPaths // its credentials' known sign-in paths, wiped with it
}

func errNoIsolated(session string) error {
	return &wire.Error{Code: wire.CodeSessionUnknown, Message: fmt.Sprintf("no isolated session %q", clip.Text(session, 64)),
		Hint: "the vault's credentials need no --session; an isolated session's are reached with 'headless credentials list --session NAME' (a session made with 'headless session create NAME --isolated')"}
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
	s.iso[p.Session] = &isoStore{session: p.Session, owner: conn, mem: vault.NewMemory(vault.MemoryOptions{MaxRecords: brokerapi.MaxIsolatedRecords}), paths: &memPaths{}}
	// While it owns the store, the connection is never closed for idleness or to make room;
	// every way the store leaves s.iso unpins it once (closeSession, wipeOwned).
	conn.Pin()
	s.log().Info("isolated store opened", "session", p.Session, "peer_pid", conn.Peer.PID)
	return struct{}{}, nil
}

func (s *Server) closeSession(conn *rpc.Conn, p brokerapi.SessionCloseParams) (struct{}, error) {
	s.isoMu.Lock()
	st, ok := s.iso[p.Session]
	if ok && st.owner == conn {
		delete(s.iso, p.Session)
		conn.Unpin()
	}
	s.isoMu.Unlock()
	if !ok || st.owner != conn {
		return struct{}{}, errNoIsolated(p.Session)
	}
	st.mem.Wipe()
	st.paths.wipe()
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

// bookOf is the known sign-in paths of st's credentials (nil: the vault's); nil when this
// brokerd keeps none (it is then untrusted).
func (s *Server) bookOf(st *isoStore) pathBook {
	if st != nil {
		return st.paths
	}
	if s.Paths == nil {
		return nil
	}
	return s.Paths
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
			conn.Unpin()
		}
	}
	s.isoMu.Unlock()
	for _, st := range gone {
		st.mem.Wipe()
		st.paths.wipe()
		s.log().Info("isolated store wiped", "session", st.session, "reason", reason, "peer_pid", conn.Peer.PID)
	}
	return len(gone)
}
