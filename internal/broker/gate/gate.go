package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/loopback"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/totp"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

// challengeMeta travels with a challenge: the store it was issued against (nil: the vault) and
// the records seen then.
type challengeMeta struct {
	store *isoStore
	recs  []vault.Record
}

// errDeniedRelease answers a release the person did not approve.
var errDeniedRelease = wire.Sentinel(wire.CodePresenceDenied, "the person did not approve this release at the prompt; nothing was released")

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
		if r.Passkey {
			res.Passkeys = append(res.Passkeys, r.Alias)
		}
	}
	return res, nil
}

// release checks the challenge, finds the alias at the challenge's origin, asks presence, and
// reads the secret only inside the presence grant. It returns the complete reply frame; the
// caller writes and zeroes it.
func (s *Server) release(ctx context.Context, peer Peer, id uint64, p brokerapi.ReleaseParams) (frame []byte, err error) {
	// Every outcome is audited: a denial after the fact, an allow before the secret is sent.
	ar := auditwriter.Record{Alias: p.Alias, Session: p.Session}
	defer func() {
		if err != nil {
			s.record("release", err, peer, ar)
		}
	}()
	// Only the genuine host: before the challenge is consumed and before anyone is asked.
	if err := s.requireHost(rpc.ConnOf(ctx)); err != nil {
		return nil, err
	}
	if err := s.trusted("nothing was asked or released"); err != nil {
		return nil, err
	}
	if err := validRelease(p); err != nil {
		return nil, err
	}
	ar.Purpose, ar.Path, ar.Field, ar.Agent, ar.Client = p.Purpose, p.Path, p.Field, p.Agent, p.Client
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
		return nil, wire.Errorf(wire.CodeChallengeMism, "session %q was opened or closed since the challenge was issued", clip.Text(ch.Session, 64))
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
	// A passkey answers a page's WebAuthn ceremony, and nothing else does: a passkey is never
	// typed, and a password never reaches an authenticator.
	passkey := p.Purpose == brokerapi.PurposePasskey
	if passkey != rec.Passkey {
		if rec.Passkey {
			return nil, wire.Errorf(wire.CodeInvalidArgument, "alias %q is a passkey: it answers a page's passkey request, never a password field or a code; nothing was asked or released", rec.Alias).
				WithHint("sign in with it on the site's passkey sign-in page: headless auth login --alias " + rec.Alias)
		}
		return nil, wire.Errorf(wire.CodeInvalidArgument, "alias %q is a password, not a passkey; nothing was asked or released", rec.Alias)
	}
	// A form sign-in goes only where the credential signed in before (or where the person
	// set at enrolment): anywhere else on the origin is refused before anyone is asked,
	// unless the host asks the person to allow the new path, with a prompt that says so first.
	// A passkey sign-in is held to the same known sign-in paths as a form's.
	login := p.Purpose == brokerapi.PurposeLogin || passkey
	path := p.Path
	var known, also []string
	if login {
		if path == "" {
			path = "/" // a URL's empty path is its root
		}
		if err := checkLoginPath(path); err != nil {
			return nil, wire.Errorf(wire.CodeInvalidArgument, "the page path %q is not a sign-in path: %v", procstat.Clean(path, 128), err)
		}
		ar.Path = path
		book := s.bookOf(meta.store)
		if book == nil {
			return nil, s.trusted("nothing was asked or released")
		}
		if known, also, err = knownPaths(book, ch.Origin, rec.Alias); err != nil {
			return nil, err
		}
	}
	newPath := len(known) > 0 && !slices.Contains(known, path)
	if newPath {
		ar.Detail = "known sign-in paths: " + shownPaths(known)
		if !p.NewPath {
			return nil, errPathChanged(path, rec.Alias, known)
		}
	}
	_, hostExe := s.Hosts.Running()
	req := presence.Request{Origin: ch.Origin, Account: rec.Account, Alias: rec.Alias, Session: ch.Session, PID: peer.PID, Exe: hostExe, Host: true,
		Verify: p.Purpose == brokerapi.PurposeVerify, Path: p.Path, Field: p.Field, Agent: p.Agent, Client: p.Client,
		// The one-time code goes with the password under this one approval, and the prompt
		// says so. (The record's metadata says whether a seed is stored; a record read
		// inside the grant that disagrees is refused below.)
		Code: rec.TOTP && p.Purpose == brokerapi.PurposeLogin, Basic: p.Purpose == brokerapi.PurposeBasic,
		CodeOnly: p.Purpose == brokerapi.PurposeCode, FirstLogin: login && len(known) == 0, Passkey: passkey}
	if login {
		req.Path = path
	}
	req.AlsoOrigins = also
	if newPath {
		req.KnownPaths = known
	}
	if req.CodeOnly && !rec.TOTP {
		return nil, wire.Errorf(wire.CodeInvalidArgument, "alias %q has no TOTP seed; nothing was asked or released", rec.Alias)
	}
	// A loopback origin is only as trustworthy as whatever listens there: name it, and refuse
	// one served by different processes, before anyone is asked.
	listenerKey := ""
	if loopback.IsLoopback(ch.Origin) {
		var l loopback.Listener
		var err error
		hardening.AsUser(func() { l, err = s.loopback().Find(ch.Origin) })
		if l.Origin != "" {
			ar.Listener = l.String()
		}
		if err != nil {
			return nil, err
		}
		req.Listener, listenerKey = l.String(), l.Key()
		req.AgentSite = agentSite(l, p.Agent)
	}
	// The record of this decision must fit in the log before anyone is asked.
	if err := s.reserve("nothing was asked or released"); err != nil {
		return nil, err
	}
	var (
		got    vault.Record
		secret []byte
	)
	defer func() { credential.Zero(secret) }()
	if sp, ok := s.Presence.(sealer); ok {
		got, secret, err = s.openSealed(ctx, sp, store, req, ch.Origin, rec.Alias)
	} else {
		err = s.Presence.Do(ctx, req, func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, VaultTimeout)
			defer cancel()
			var err error
			got, secret, err = store.Secret(ctx, ch.Origin, rec.Alias)
			if err == nil {
				secret, err = s.openKeyOnly(ctx, store, got, secret)
			}
			return err
		})
	}
	if ctx.Err() != nil {
		// The requester hung up (an MCP client cancelled its sign-in, say) while the person
		// was asked: whatever they answered, nothing is released.
		return nil, wire.Errorf(wire.CodeCancelled, "the requester withdrew the release while the person was asked; nothing was released")
	}
	if errors.Is(err, presence.ErrDenied) {
		// How the prompt said no (pinentry's gpg error number, a cancelled dialog) is for
		// brokerd's log: the requester learns that the person did not approve, nothing more.
		s.log().Info("release denied at the prompt", "origin", ch.Origin, "alias", rec.Alias, "detail", err.Error())
		return nil, errDeniedRelease
	}
	if err != nil {
		return nil, err
	}
	// The listed metadata (from the challenge, or an index file) named the account the person
	// was asked about; the record actually read must be that one.
	if got.Origin != ch.Origin || !strings.EqualFold(got.Alias, rec.Alias) || got.Account != rec.Account {
		return nil, wire.Errorf(wire.CodeAliasUnknown, "the saved record of alias %q changed since the challenge was issued (account or alias differ); nothing was released", p.Alias)
	}
	// The stored secret may carry a TOTP seed after the password (credential.JoinFactor): the
	// seed never leaves brokerd. With one, and a sign-in the person was told includes the
	// one-time code, the current code travels after the password in the same frame
	// (password, NUL, digits: credential.SplitFactor on the host). The seed is checked before
	// the release is audited, so that an allowed record says exactly what was sent.
	rel := brokerapi.Released{Origin: got.Origin, Account: got.Account, Alias: got.Alias, Listener: listenerKey, AlsoOrigins: also}
	if login {
		rel.CodePaths = append([]string{path}, known...)
	}
	if passkey {
		return s.releasePasskey(peer, id, p, ch.Session, meta.store, path, newPath, rel, secret, &ar)
	}
	if credential.IsPasskey(secret) {
		// The record's flag (an attribute any program of the user may change) said password;
		// what was read inside the grant says passkey: never typed anywhere.
		return nil, wire.Errorf(wire.CodeAliasUnknown, "the saved record of alias %q holds a passkey, not what its record says; nothing was released", p.Alias)
	}
	pw, factor := credential.SplitFactor(secret)
	var key totp.Key
	withCode := req.Code || req.CodeOnly
	if withCode {
		if factor == nil {
			return nil, wire.Errorf(wire.CodeAliasUnknown, "the saved record of alias %q no longer holds a TOTP seed; nothing was released", p.Alias)
		}
		if key, err = totp.Unmarshal(factor); err != nil {
			return nil, wire.Errorf(wire.CodeInvalidArgument, "the TOTP seed saved for alias %q is unusable (%w); nothing was released", p.Alias, err)
		}
		defer key.Zero()
	}
	switch {
	case req.CodeOnly:
		ar.Released = []string{"totp"}
	case req.Code:
		ar.Released = []string{"password", "totp"}
	default:
		ar.Released = []string{"password"}
	}
	s.log().Info("released", "origin", got.Origin, "alias", got.Alias, "session", ch.Session, "peer_pid", peer.PID, "provider", s.Presence.Name())
	if err := s.record("release", nil, peer, ar); err != nil {
		return nil, err // not audited, not released
	}
	if login {
		s.rememberSignIn(&signIn{challenge: p.Challenge, host: peer.PID, at: s.now(), store: meta.store, session: ch.Session,
			origin: got.Origin, alias: got.Alias, account: got.Account, path: path, newPath: newPath})
	}
	if !withCode {
		return brokerapi.ReleaseFrame(id, rel, pw)
	}
	out := make([]byte, 0, len(pw)+1+8)
	defer func() { credential.Zero(out) }()
	if !req.CodeOnly {
		out = append(out, pw...)
	}
	out = append(out, 0)
	out = key.AppendCode(out, s.now())
	rel.Code = true
	return brokerapi.ReleaseFrame(id, rel, out)
}

// maxAncestry bounds the generations walked from a loopback site's server to the agent.
const maxAncestry = 32

// agentSite is the process serving l when the agent asking started it: a holder of l's
// sockets that is, or descends from (maxAncestry generations at most), a process of agent, the
// chain the host reported (the control-socket peer and its ancestors), leaving out pid 1 and
// brokerd's own ancestors (a systemd --user or login shell that started both brokerd and the
// agent would otherwise make every listener the agent's). agent is the host's report, and a
// pid may be reused: this only warns the person, first in the prompt; it decides nothing.
func agentSite(l loopback.Listener, agent []brokerapi.Proc) procstat.Proc {
	if len(agent) == 0 || len(l.Procs) == 0 {
		return procstat.Proc{}
	}
	var site procstat.Proc
	hardening.AsUser(func() { // the user's processes, as the user sees them
		shared := map[int]bool{1: true}
		for _, pid := range procstat.Lineage(os.Getpid(), maxAncestry)[1:] {
			shared[pid] = true
		}
		asking := map[int]bool{}
		for _, a := range agent {
			if !shared[a.PID] {
				asking[a.PID] = true
			}
		}
		for _, h := range l.Procs {
			if slices.ContainsFunc(procstat.Lineage(h.PID, maxAncestry), func(pid int) bool { return asking[pid] }) {
				st, _ := procstat.Read(h.PID)
				site = procstat.Proc{PID: h.PID, Exe: procstat.Clean(h.Exe, procstat.MaxExe), Comm: st.Comm}
				return
			}
		}
	})
	return site
}
