package gate

import (
	"fmt"

	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// A passkey (credential.Passkey) is released like a password, after the same checks and the
// same approval ("Use the saved passkey for …"), to the genuine host only, which adds it to a
// virtual authenticator of the session for one ceremony of the page and removes it after. Its
// sign count is not part of the sealed secret (a passphrase seal could not be written again
// without the person): the highest count the host reports (passkey.signed) is kept in the
// credential's entry of the sign-in paths book and released with the key.

// releasePasskey finishes an approved passkey release: the stored secret read inside the grant
// must be a passkey (the record's flag said so; the seal binds the kind), the reply carries the
// sign count brokerd knows, and the sign-in is kept for passkey.signed and learn_path.
func (s *Server) releasePasskey(peer Peer, id uint64, p brokerapi.ReleaseParams, session string, store *isoStore,
	path string, newPath bool, rel brokerapi.Released, secret []byte, ar *auditwriter.Record) ([]byte, error) {
	pk, err := credential.ParsePasskey(secret)
	defer pk.Zero()
	if err != nil {
		return nil, wire.Errorf(wire.CodeAliasUnknown, "the saved record of alias %q is not a usable passkey; nothing was released", p.Alias)
	}
	book := s.bookOf(store)
	if book == nil {
		return nil, s.trusted("nothing was released")
	}
	count, err := signCount(book, rel.Origin, rel.Alias)
	if err != nil {
		return nil, err
	}
	rel.SignCount = max(count, pk.SignCount)
	// The next count is reserved now: a release whose report never comes (the host killed,
	// the report lost), or a second release before the first reports, still hands out a
	// higher count than this one's authenticator signs.
	if err := raiseSignCount(book, rel.Origin, rel.Alias, rel.Account, rel.SignCount+1); err != nil {
		return nil, err
	}
	ar.Released = []string{"passkey"}
	s.log().Info("released", "origin", rel.Origin, "alias", rel.Alias, "session", session, "peer_pid", peer.PID, "provider", s.Presence.Name(), "kind", "passkey")
	if err := s.record("release", nil, peer, *ar); err != nil {
		return nil, err // not audited, not released
	}
	s.rememberSignIn(&signIn{challenge: p.Challenge, host: peer.PID, at: s.now(), store: store, session: session,
		origin: rel.Origin, alias: rel.Alias, account: rel.Account, path: path, newPath: newPath, passkey: true})
	return brokerapi.ReleaseFrame(id, rel, secret)
}

// passkeySigned answers passkey.signed: the genuine host reporting the sign count the passkey
// of a release reached in the page's ceremony. Once per release; a count never goes back.
func (s *Server) passkeySigned(conn *rpc.Conn, p brokerapi.PasskeySignedParams) (struct{}, error) {
	if err := s.requireHost(conn); err != nil {
		return struct{}{}, err
	}
	s.loginMu.Lock()
	si := s.findSignIn(conn, p.Challenge)
	var got signIn
	if si != nil && si.passkey && !si.counted && s.now().Sub(si.at) < signInTTL {
		si.counted = true
		got = *si
	}
	s.loginMu.Unlock()
	if !got.passkey {
		return struct{}{}, wire.Errorf(wire.CodeChallengeUnk, "no passkey released to this host for that challenge awaits its sign count")
	}
	if cur := s.isolated(got.session); got.store != nil && cur != got.store {
		return struct{}{}, wire.Errorf(wire.CodeChallengeMism, "isolated session %q was closed since the sign-in", got.session)
	}
	book := s.bookOf(got.store)
	if book == nil {
		return struct{}{}, s.trusted("the sign count was not kept")
	}
	cerr := raiseSignCount(book, got.origin, got.alias, got.account, p.SignCount)
	if p.Uses > 1 {
		// More answers than the one ceremony the person approved: on record, whatever else.
		s.log().Error("a page had a passkey answer more than once under one approval", "origin", got.origin, "alias", got.alias, "session", got.session, "uses", p.Uses)
		if err := s.record("passkey_overused", nil, conn.Peer, auditwriter.Record{Origin: got.origin, Alias: got.alias, Account: got.account,
			Session: got.session, Detail: fmt.Sprintf("the page had the passkey answer %d times under one approval; sign count now %d", p.Uses, p.SignCount)}); err != nil {
			return struct{}{}, err
		}
	}
	return struct{}{}, cerr
}
