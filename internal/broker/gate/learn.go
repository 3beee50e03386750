package gate

import (
	"slices"
	"time"

	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// signIn is an allowed form sign-in, kept for the host's credentials.learn_path once the
// sign-in ends authenticated: what was released, where, and whether the person allowed it at
// a new path.
type signIn struct {
	challenge string
	host      int // the pid of the genuine host it was released to
	at        time.Time
	store     *isoStore // nil: the vault
	session   string
	origin    string
	alias     string
	account   string
	path      string
	newPath   bool // the person allowed it at a path that was not one of the known ones
	used      bool
	passkey   bool // a passkey's sign-in: its sign count may be reported once
	counted   bool
}

// Bounds of the allowed sign-ins kept for learn_path: each for signInTTL, at most maxSignIns
// (the oldest go first), and none beyond the host process they were released to.
const (
	signInTTL  = 10 * time.Minute
	maxSignIns = 64
)

// rememberSignIn keeps an allowed form sign-in for learn_path.
func (s *Server) rememberSignIn(si *signIn) {
	s.loginMu.Lock()
	defer s.loginMu.Unlock()
	s.logins = append(s.forgetSignIns(si.at), si)
	if len(s.logins) > maxSignIns {
		s.logins = slices.Delete(s.logins, 0, len(s.logins)-maxSignIns)
	}
}

// forgetSignIns drops (s.loginMu held) the sign-ins older than signInTTL at now and those of
// a host that is not the running one, and returns the rest.
func (s *Server) forgetSignIns(now time.Time) []*signIn {
	running := 0
	if s.Hosts != nil {
		running, _ = s.Hosts.Running()
	}
	return slices.DeleteFunc(s.logins, func(o *signIn) bool { return o.host != running || now.Sub(o.at) >= signInTTL })
}

// takeSignIn finds the allowed sign-in of challenge released to conn's process (the genuine
// host: requireHost passed) and marks it used: once per challenge, within signInTTL.
//
// Any connection of that process may report it: the host releases on a connection of its own
// for each sign-in and closes it at once, and reports the outcome on its long-lived one.
func (s *Server) takeSignIn(conn *rpc.Conn, challenge string) (signIn, error) {
	s.loginMu.Lock()
	defer s.loginMu.Unlock()
	si := s.findSignIn(conn, challenge)
	if si == nil {
		return signIn{}, wire.Errorf(wire.CodeChallengeUnk, "no form sign-in released to this host for challenge %q; nothing was learned", procstat.Clean(challenge, 64))
	}
	switch {
	case si.used:
		return signIn{}, wire.Errorf(wire.CodeChallengeUsed, "the sign-in of challenge %q was reported already; nothing was learned", si.challenge)
	case s.now().Sub(si.at) >= signInTTL:
		return signIn{}, wire.Errorf(wire.CodeChallengeExp, "the sign-in of challenge %q was released more than %v ago; nothing was learned", si.challenge, signInTTL)
	}
	si.used = true
	return *si, nil
}

// findSignIn (s.loginMu held) is the allowed sign-in of challenge released to conn's process.
func (s *Server) findSignIn(conn *rpc.Conn, challenge string) *signIn {
	i := slices.IndexFunc(s.logins, func(si *signIn) bool { return si.challenge == challenge && si.host == conn.Peer.PID })
	if i < 0 {
		return nil
	}
	return s.logins[i]
}

// learn answers credentials.learn_path: the genuine host saying that the form sign-in it
// released a password for (named by its challenge) ended authenticated.
// A credential without known sign-in paths learns the sign-in's path; a sign-in the person
// allowed at a new path learns nothing (learnPath). Every call is audited (op "learn_path").
func (s *Server) learn(conn *rpc.Conn, p brokerapi.LearnPathParams) (res brokerapi.LearnPathResult, err error) {
	var peer Peer
	if conn != nil {
		peer = conn.Peer
	}
	ar := auditwriter.Record{}
	defer func() { s.record("learn_path", err, peer, ar) }()
	if err := s.requireHost(conn); err != nil {
		return res, err
	}
	if err := s.reserve("nothing was learned"); err != nil {
		return res, err
	}
	si, err := s.takeSignIn(conn, p.Challenge)
	if err != nil {
		return res, err
	}
	ar.Origin, ar.Alias, ar.Account, ar.Session, ar.Path = si.origin, si.alias, si.account, si.session, si.path
	if cur := s.isolated(si.session); si.store != nil && cur != si.store {
		return res, wire.Errorf(wire.CodeChallengeMism, "isolated session %q was closed since the sign-in; nothing was learned", si.session)
	}
	book := s.bookOf(si.store)
	if book == nil {
		return res, s.trusted("nothing was learned")
	}
	l, err := learnPath(book, si.origin, si.alias, si.account, si.path, si.newPath)
	if err != nil {
		return res, err
	}
	ar.Detail = l.note
	s.log().Info("sign-in path", "origin", si.origin, "alias", si.alias, "path", si.path, "learned", l.added, "note", l.note)
	return brokerapi.LearnPathResult{LoginPaths: l.paths, Learned: l.added}, nil
}

// maxEchoOutput bounds echo.seen's output name (a method name such as "snapshot").
const maxEchoOutput = 64

// echoSeen answers echo.seen: the genuine host reporting that a page showed a secret released
// into the browser and the output was refused. It appends one audit record (op "echo",
// decision "ok", the output's name in Detail) and changes nothing else. Only the host's
// report is recorded: a refused one changes nothing, so it is not.
func (s *Server) echoSeen(conn *rpc.Conn, p brokerapi.EchoSeenParams) (struct{}, error) {
	if err := s.requireHost(conn); err != nil {
		return struct{}{}, err
	}
	bad := func(format string, a ...any) error { return wire.Errorf(wire.CodeInvalidArgument, format, a...) }
	switch {
	case len(p.Session) > credential.MaxSessionLen || !procstat.Printable(p.Session):
		// Not ValidSession: the session of an answer is the caller's, whatever it named
		// ("" for none or the default one), and an echo in it is audited all the same.
		return struct{}{}, bad("the session is longer than %d bytes or not printable UTF-8", credential.MaxSessionLen)
	case len(p.Origin) > auditwriter.MaxField || !procstat.Printable(p.Origin):
		return struct{}{}, bad("the origin is longer than %d bytes or not printable UTF-8", auditwriter.MaxField)
	case p.Output == "" || len(p.Output) > maxEchoOutput || !procstat.Printable(p.Output):
		return struct{}{}, bad("the output name is empty, longer than %d bytes or not printable UTF-8", maxEchoOutput)
	}
	if err := s.reserve("the echo was not recorded"); err != nil {
		return struct{}{}, err
	}
	s.log().Warn("a page showed a released secret", "session", p.Session, "origin", p.Origin, "output", p.Output)
	return struct{}{}, s.record("echo", nil, conn.Peer, auditwriter.Record{Session: p.Session, Origin: p.Origin, Detail: p.Output})
}

// egressRefused answers egress.refused: the genuine host reporting that a page tried to send a
// secret typed into it where it may not go, and the request was refused before it left. One
// audit record (op "egress", decision "error", code SECRET_EGRESS, the destination and what
// carried it in Detail); from any other process nothing is recorded.
func (s *Server) egressRefused(conn *rpc.Conn, p brokerapi.EgressRefusedParams) (struct{}, error) {
	if err := s.requireHost(conn); err != nil {
		return struct{}{}, err
	}
	bad := func(format string, a ...any) error { return wire.Errorf(wire.CodeInvalidArgument, format, a...) }
	for name, v := range map[string]string{"session": p.Session, "origin": p.Origin, "destination": p.Destination, "carrier": p.Carrier} {
		if len(v) > auditwriter.MaxField || !procstat.Printable(v) {
			return struct{}{}, bad("the %s is longer than %d bytes or not printable UTF-8", name, auditwriter.MaxField)
		}
	}
	if p.Destination == "" || p.Carrier == "" {
		return struct{}{}, bad("the destination and the carrier are required")
	}
	detail := clip.Text(p.Destination+" ("+p.Carrier+")", auditwriter.MaxField)
	if err := s.reserve("the refusal was not recorded"); err != nil {
		return struct{}{}, err
	}
	s.log().Warn("a page's request carrying a typed secret was refused", "session", p.Session, "origin", p.Origin, "destination", p.Destination)
	return struct{}{}, s.record("egress", wire.Errorf(wire.CodeSecretEgress, "refused"), conn.Peer,
		auditwriter.Record{Session: p.Session, Origin: p.Origin, Detail: detail})
}
