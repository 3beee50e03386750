// Package gate is brokerd's release gate: the server on broker.sock that decides every
// password release. Its protocol and client are package internal/brokerapi; only cmd/brokerd
// links this package (internal/test/archtest).
//
// # Guarantees (SECURITY.md has each in full; the file named holds it)
//
//   - Every connection's peer uid is checked (SO_PEERCRED) before a request is read; frames are
//     bounded, strictly decoded, and malformed input affects no other connection (server.go).
//   - A password leaves only in a "release" reply, after a valid, unexpired, unused challenge
//     bound to the same session and document, an alias saved for exactly that origin, and the
//     presence provider's explicit allow, which runs the vault read inside its grant (gate.go).
//   - A release goes only to the genuine host: the process brokerd started (package hostproc),
//     which said how it runs in agreement with brokerd's config and build; anyone else gets
//     PEER_NOT_HOST before anyone is asked (host.go).
//   - A form sign-in goes only to a path the credential signed in at before (loginpaths.go,
//     learn.go); an isolated session's store answers only the connection that registered it
//     and is zeroed when it ends (isolated.go). Every outcome is audited (audit.go).
//   - Secrets are []byte in hand-built frames, zeroed after use, and in no log.
//
// # Not guaranteed
//
// What the host reports (page, field, agent chain) is shown labelled as such; brokerd cannot
// verify it. A credential with no known path learns its first approved sign-in's. A same-user
// process that can replace a user-owned host binary or edit the user-only config chooses
// what brokerd starts and trusts.
package gate

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/headless-dev/headless/challenge"
	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/broker/seal"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/loopback"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

// Peer is the kernel's identity of a connection's process.
type Peer = rpc.Peer

// VaultTimeout bounds every vault call made for one request.
const VaultTimeout = 30 * time.Second

// Server is brokerd's request handler. Fields must be set before use, but for Vault and
// Presence when Pending is set.
type Server struct {
	Vault    vault.Store
	Presence presence.Provider
	// Pending, when set, is closed once Vault and Presence are set (brokerd finds its Secret
	// Service while it already answers): every request but host.start, host.hello and ping
	// waits for it first.
	Pending    <-chan struct{}
	Challenges *challenge.Registry
	Log        *slog.Logger
	Version    string
	PID        int // our pid, reported by "version"
	MaxConns   int // concurrent connections (default 128)
	// Audit receives one record per release, denial, add, remove, init and clear. Required:
	// Serve and ServeConn refuse to serve without it, and a release whose record cannot be
	// written is refused.
	Audit Auditor
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
	// Now is the clock of one-time codes; nil means time.Now.
	Now func() time.Time
	// Key is the machine's seal key (seal.LoadKey): every saved secret is sealed with it, and
	// only a brokerd the kernel gave the key's group can read it. nil: this brokerd has no
	// key, and every release and save is BROKER_UNTRUSTED, with Untrusted as the reason.
	Key       *seal.Key
	Untrusted string
	// Paths keeps the vault's credentials' known sign-in paths (OpenLoginPaths, in
	// hardening.StateDir, which no process of the user can write). nil: this brokerd has
	// nowhere to keep them, and every release and save is BROKER_UNTRUSTED, as without Key.
	Paths *LoginPaths
	// FileStore is the directory of the store of files a person adds for uploads (package
	// filestore: its runtime dir's); the files it approved are recorded beside Paths.
	FileStore string
	// Window is how a host with windows is started (handover.go); HandoverTimeout bounds a
	// hand-over's prompt (default DefaultHandoverTimeout).
	Window          WindowSetup
	HandoverTimeout time.Duration

	isoMu sync.Mutex
	iso   map[string]*isoStore // by session name

	helloMu sync.Mutex
	hellos  map[*rpc.Conn]*wire.Error // each connection's host.hello verdict (nil: it matched)

	loginMu sync.Mutex
	logins  []*signIn // the allowed form sign-ins, for learn_path, oldest first

	tableOnce sync.Once
	table     *rpc.Methods
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

// Serve serves broker.sock on l for peers of uid until ctx is done.
// Without an audit log it serves nothing and returns an error at once.
func (s *Server) Serve(ctx context.Context, l net.Listener, uid int) error {
	if s.Audit == nil {
		return errNoAudit
	}
	return s.rpc(uid).Serve(ctx, l)
}

// ServeConn serves one already-identified connection (tests use it over net.Pipe). Without an
// audit log it closes the connection unanswered.
func (s *Server) ServeConn(ctx context.Context, rw io.ReadWriteCloser, peer Peer) {
	if s.Audit == nil {
		s.log().Error("refusing to serve", "err", errNoAudit)
		rw.Close()
		return
	}
	s.rpc(peer.UID).ServeConn(ctx, rw, peer)
}

func (s *Server) rpc(uid int) *rpc.Server {
	return &rpc.Server{Handler: s.methods().Serve, Log: s.log(), UID: uid, MaxConns: s.MaxConns, OnClose: s.connClosed}
}

func (s *Server) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// An add's params carry the password: zeroed by the table when they fail to decode, by the
// handler otherwise.
var _ rpc.Zeroer = (*brokerapi.AddParams)(nil)

// methods is broker.sock's method table (built once).
func (s *Server) methods() *rpc.Methods {
	s.tableOnce.Do(func() {
		t := &rpc.Methods{
			Log:      s.log(),
			Internal: func(error) string { return "internal error" }, // the details are in brokerd.log
			Context:  s.requestContext,
			// A release whose requester hung up has no one to type for: its prompt is
			// withdrawn at once, not after the connection's drain grace.
			CancelOnHangup: map[string]bool{brokerapi.MethodRelease: true, brokerapi.MethodHandover: true},
			Stopping:       errStopping,
		}
		rpc.Handle(t, brokerapi.MethodVersion, func(ctx context.Context, _ struct{}) (brokerapi.VersionResult, error) {
			v := brokerapi.VersionResult{Version: s.Version, Protocol: brokerapi.Protocol, PID: s.PID, Presence: s.Presence.Name(), Started: s.Started}
			if s.Hosts != nil {
				v.HostPID, _ = s.Hosts.Running()
			}
			if s.Facts != nil {
				v.Facts = s.Facts()
			}
			v.Untrusted = s.untrusted()
			return v, nil
		})
		rpc.Handle(t, brokerapi.MethodPing, func(ctx context.Context, _ struct{}) (struct{}, error) { return struct{}{}, nil })
		rpc.Handle(t, brokerapi.MethodHostStart, func(ctx context.Context, p brokerapi.HostStartParams) (brokerapi.HostStartResult, error) {
			return s.startHost(ctx, p)
		})
		rpc.Handle(t, brokerapi.MethodHostHello, func(ctx context.Context, p brokerapi.HelloParams) (struct{}, error) {
			return s.hello(rpc.ConnOf(ctx), p)
		})
		rpc.Handle(t, brokerapi.MethodCredentialsList, func(ctx context.Context, p brokerapi.ListParams) (brokerapi.ListResult, error) {
			rpc.Note(ctx, "origin", p.Origin, "session", p.Session)
			return s.list(ctx, rpc.ConnOf(ctx), p)
		})
		rpc.Handle(t, brokerapi.MethodCredentialsAdd, func(ctx context.Context, p brokerapi.AddParams) (brokerapi.Credential, error) {
			defer credential.Zero(p.Secret)
			rpc.Note(ctx, "origin", p.Origin, "alias", p.Alias, "session", p.Session)
			// An add the audit log has no space for is refused before the store is written.
			var res brokerapi.Credential
			err := s.reserve("nothing was saved")
			if err == nil {
				res, err = s.add(ctx, rpc.ConnOf(ctx), p)
			}
			s.record("add", err, rpc.PeerOf(ctx), auditwriter.Record{Origin: p.Origin, Account: p.Account, Alias: p.Alias, Session: p.Session})
			return res, err
		})
		// An init, a repair or a remove the audit log has no space for is refused the same
		// way, before the keyring is asked or changed.
		rpc.Handle(t, brokerapi.MethodCredentialsInit, func(ctx context.Context, _ struct{}) (brokerapi.InitResult, error) {
			var res brokerapi.InitResult
			err := s.reserve("no keyring was created")
			if err == nil {
				res, err = s.init(ctx)
			}
			s.record("init", err, rpc.PeerOf(ctx), auditwriter.Record{})
			return res, err
		})
		rpc.Handle(t, brokerapi.MethodCredentialsRepair, func(ctx context.Context, _ struct{}) (brokerapi.RepairResult, error) {
			var res brokerapi.RepairResult
			err := s.reserve("nothing was repaired")
			if err == nil {
				res, err = s.repair(ctx)
			}
			if res.Repaired || err != nil {
				s.record("repair", err, rpc.PeerOf(ctx), auditwriter.Record{})
			}
			return res, err
		})
		rpc.Handle(t, brokerapi.MethodCredentialsRm, func(ctx context.Context, p brokerapi.RemoveParams) (struct{}, error) {
			rpc.Note(ctx, "origin", p.Origin, "alias", p.Alias, "session", p.Session)
			var res struct{}
			err := s.reserve("nothing was removed")
			if err == nil {
				res, err = s.remove(ctx, rpc.ConnOf(ctx), p)
			}
			s.record("remove", err, rpc.PeerOf(ctx), auditwriter.Record{Origin: p.Origin, Alias: p.Alias, Session: p.Session})
			return res, err
		})
		rpc.Handle(t, brokerapi.MethodChallengeIssue, func(ctx context.Context, p brokerapi.ChallengeParams) (brokerapi.ChallengeResult, error) {
			rpc.Note(ctx, "origin", p.Origin, "session", p.Session)
			return s.issue(ctx, rpc.ConnOf(ctx), p)
		})
		rpc.Handle(t, brokerapi.MethodSessionOpen, func(ctx context.Context, p brokerapi.SessionOpenParams) (struct{}, error) {
			rpc.Note(ctx, "session", p.Session)
			return s.openSession(rpc.ConnOf(ctx), p)
		})
		rpc.Handle(t, brokerapi.MethodSessionClose, func(ctx context.Context, p brokerapi.SessionCloseParams) (struct{}, error) {
			rpc.Note(ctx, "session", p.Session)
			return s.closeSession(rpc.ConnOf(ctx), p)
		})
		rpc.Handle(t, brokerapi.MethodProfileCleared, func(ctx context.Context, p brokerapi.ProfileClearedParams) (struct{}, error) {
			if p.Reserve {
				// Before the clear: one the audit log has no space for is refused first.
				return struct{}{}, s.reserve("nothing was cleared")
			}
			n := s.wipeOwned(rpc.ConnOf(ctx), "profile cleared")
			s.record("clear", nil, rpc.PeerOf(ctx), auditwriter.Record{})
			rpc.Note(ctx, "sessions_closed", p.SessionsClosed, "stores_wiped", n)
			return struct{}{}, nil
		})
		rpc.Handle(t, brokerapi.MethodLearnPath, func(ctx context.Context, p brokerapi.LearnPathParams) (brokerapi.LearnPathResult, error) {
			return s.learn(rpc.ConnOf(ctx), p)
		})
		rpc.Handle(t, brokerapi.MethodPasskeySigned, func(ctx context.Context, p brokerapi.PasskeySignedParams) (struct{}, error) {
			rpc.Note(ctx, "sign_count", p.SignCount)
			return s.passkeySigned(rpc.ConnOf(ctx), p)
		})
		rpc.Handle(t, brokerapi.MethodEgressRefused, func(ctx context.Context, p brokerapi.EgressRefusedParams) (struct{}, error) {
			rpc.Note(ctx, "session", p.Session, "destination", p.Destination)
			return s.egressRefused(rpc.ConnOf(ctx), p)
		})
		rpc.Handle(t, brokerapi.MethodEchoSeen, func(ctx context.Context, p brokerapi.EchoSeenParams) (struct{}, error) {
			rpc.Note(ctx, "session", p.Session, "output", p.Output)
			return s.echoSeen(rpc.ConnOf(ctx), p)
		})
		rpc.Handle(t, brokerapi.MethodFilesApprove, func(ctx context.Context, p brokerapi.FileApproveParams) (brokerapi.FileEntry, error) {
			rpc.Note(ctx, "file", p.Name, "bytes", p.Size)
			return s.approveFile(ctx, rpc.PeerOf(ctx), p)
		})
		rpc.Handle(t, brokerapi.MethodFilesList, func(ctx context.Context, _ struct{}) (brokerapi.FileList, error) {
			return s.listFiles()
		})
		rpc.Handle(t, brokerapi.MethodFilesRemove, func(ctx context.Context, p brokerapi.FileRemoveParams) (brokerapi.FileEntry, error) {
			rpc.Note(ctx, "file", p.Name)
			return s.removeFile(rpc.PeerOf(ctx), p)
		})
		rpc.Handle(t, brokerapi.MethodHandover, func(ctx context.Context, p brokerapi.HandoverParams) (brokerapi.HandoverResult, error) {
			rpc.Note(ctx, "session", p.Session)
			return s.handover(ctx, rpc.PeerOf(ctx), p)
		})
		// The one reply that carries a secret: release builds its frame by hand.
		rpc.HandleFrame(t, brokerapi.MethodRelease, func(ctx context.Context, id uint64, p brokerapi.ReleaseParams) ([]byte, error) {
			rpc.Note(ctx, "alias", p.Alias, "session", p.Session)
			return s.release(ctx, rpc.PeerOf(ctx), id, p)
		})
		s.table = t
	})
	return s.table
}

// errStopping answers a request cut short because brokerd is stopping.
var errStopping = wire.SentinelHint(wire.CodeBrokerUnavail, "brokerd is stopping; the request was not completed",
	"run the command again: headless starts brokerd when it is not running")

// requestContext bounds every request but a release, host.start and a write that waits for
// the keyring's prompt: a hung Secret Service must not hold a request forever. A release (and
// a write that needs the keyring's prompt) is bounded by the presence timeout plus this bound
// on each vault call (see release and write).
func (s *Server) requestContext(ctx context.Context, method string) (context.Context, context.CancelFunc) {
	switch method {
	case brokerapi.MethodHostStart, brokerapi.MethodHostHello, brokerapi.MethodPing:
	default:
		if s.Pending != nil {
			<-s.Pending // the Secret Service's look ends within its own bound
		}
	}
	if method == brokerapi.MethodRelease || method == brokerapi.MethodHandover || method == brokerapi.MethodHostStart || s.prompts(method) {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, VaultTimeout)
}
