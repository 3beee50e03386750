package gate

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/headless-dev/headless/internal/allowlist"
	"github.com/headless-dev/headless/internal/broker/hostproc"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// HostSupervisor starts the browser host and knows its process (package hostproc).
type HostSupervisor interface {
	// Start starts the host unless the one it started still runs; allow (nil: not asked
	// for) is the navigation allowlist 'headless start --allow' asks for, display (nil: no
	// window) where the person sees the browser's windows.
	Start(ctx context.Context, allow, display []string) (hostproc.Result, error)
	// Genuine reports whether pid, of effective gid gid, is the running host it started,
	// for a connection accepted at accepted.
	Genuine(pid, gid int, accepted time.Time) bool
	// Running returns the running host's pid and executable (0, "" when none).
	Running() (pid int, exe string)
}

var _ HostSupervisor = (*hostproc.Supervisor)(nil)

// HostExpect is what the genuine host must report in host.hello: brokerd's own view of how
// the host should run.
type HostExpect struct {
	Chromium string // the Chromium executable of brokerd's config
	Config   string // brokerd's config file
	Version  string // brokerd's version (the host is built with it)
	// CheckChromium checks the Chromium file itself (hostproc.CheckChromium); nil checks
	// nothing (unit tests).
	CheckChromium func(path string) error
}

// StartTimeout bounds a host.start request.
const StartTimeout = 110 * time.Second

// peerNotHost is the refusal of a secret to anything but the genuine host.
func peerNotHost(format string, a ...any) *wire.Error {
	return wire.Errorf(wire.CodePeerNotHost, format, a...)
}

// requireHost refuses (PEER_NOT_HOST) a request for a secret unless conn's peer is the
// running host brokerd started and it said how it runs on this connection, matching brokerd's
// own config and build. It runs before anything is consumed or anyone is asked.
func (s *Server) requireHost(conn *rpc.Conn) error {
	if conn == nil {
		return peerNotHost("no connection identity")
	}
	peer := conn.Peer
	if s.Hosts == nil || !s.Hosts.Genuine(peer.PID, peer.GID, conn.Accepted) {
		return peerNotHost("%s is not the browser host this brokerd started; nothing was asked or released", s.describePeer(peer))
	}
	s.helloMu.Lock()
	verdict, ok := s.hellos[conn]
	s.helloMu.Unlock()
	if !ok {
		return peerNotHost("the browser host did not say how it runs (host.hello) on this connection; nothing was asked or released")
	}
	if verdict != nil {
		return peerNotHost("the browser host does not run as brokerd's config says (%s); nothing was asked or released", verdict.Message)
	}
	return nil
}

// describePeer names a peer for an error: its pid and executable (or comm).
func (s *Server) describePeer(peer Peer) string {
	if c := s.chainOf(peer); len(c) > 0 {
		return c[0].String()
	}
	return fmt.Sprintf("pid %d", peer.PID)
}

// chainOf is the peer and up to three ancestors, from /proc. The genuine host is undumpable,
// so brokerd (not root) cannot read its executable there: it is the file brokerd started.
func (s *Server) chainOf(peer Peer) []procstat.Proc {
	var c []procstat.Proc
	hardening.AsUser(func() { c = procstat.Chain(peer.PID, 4) }) // the user's processes, as the user sees them
	if len(c) == 0 {
		return nil
	}
	if s.Hosts != nil {
		if pid, exe := s.Hosts.Running(); pid == peer.PID && c[0].Exe == "" {
			c[0].Exe = exe
		}
	}
	if c[0].Exe == "" && peer.Exe != "" {
		c[0].Exe = procstat.Clean(peer.Exe, procstat.MaxExe)
	}
	return c
}

// hello records what the host says about how it runs, for this connection; a mismatch is
// answered with PEER_NOT_HOST (and every later release here is refused with the reason).
func (s *Server) hello(conn *rpc.Conn, p brokerapi.HelloParams) (struct{}, error) {
	if conn == nil {
		return struct{}{}, wire.Errorf(wire.CodeInternal, "no connection identity")
	}
	verdict := s.checkHello(p)
	if s.Hosts != nil && s.Hosts.Genuine(conn.Peer.PID, conn.Peer.GID, conn.Accepted) {
		// The genuine host's connection waits between its sign-ins for as long as the host
		// runs: it is never closed for idleness or to make room.
		conn.Pin()
	}
	s.helloMu.Lock()
	if s.hellos == nil {
		s.hellos = map[*rpc.Conn]*wire.Error{}
	}
	s.hellos[conn] = verdict
	s.helloMu.Unlock()
	if verdict != nil {
		s.log().Warn("host.hello refused", "peer_pid", conn.Peer.PID, "reason", verdict.Message)
		return struct{}{}, peerNotHost("%s", verdict.Message)
	}
	return struct{}{}, nil
}

func (s *Server) checkHello(p brokerapi.HelloParams) *wire.Error {
	e := s.Expect
	q := func(v string) string { return fmt.Sprintf("%q", clip.Text(v, 200)) }
	switch {
	case p.Version != e.Version:
		return peerNotHost("the host is version %s, brokerd is %s", q(p.Version), q(e.Version))
	case p.Config != e.Config:
		return peerNotHost("the host read the config %s, brokerd reads %s (another XDG_CONFIG_HOME or HOME)", q(p.Config), q(e.Config))
	case p.Chromium != e.Chromium:
		return peerNotHost("the host launches Chromium %s, brokerd's config names %s", q(p.Chromium), q(e.Chromium))
	}
	if len(p.ChromiumEnv) > len(brokerapi.ChromiumEnv) {
		return peerNotHost("Chromium's environment has %d variables; the allowlist has %d", len(p.ChromiumEnv), len(brokerapi.ChromiumEnv))
	}
	for _, name := range p.ChromiumEnv {
		if !slices.Contains(brokerapi.ChromiumEnv, name) {
			return peerNotHost("Chromium's environment has %s, which is not allowlisted", q(name))
		}
	}
	if e.CheckChromium != nil {
		if err := e.CheckChromium(e.Chromium); err != nil {
			return peerNotHost("the configured Chromium is refused: %s", clip.Text(err.Error(), 300))
		}
	}
	return nil
}

// startHost answers host.start.
func (s *Server) startHost(ctx context.Context, p brokerapi.HostStartParams) (brokerapi.HostStartResult, error) {
	if s.Hosts == nil {
		return brokerapi.HostStartResult{}, wire.Errorf(wire.CodeHostUnavail, "this brokerd starts no browser host")
	}
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	var allow []string
	if p.Allow != nil {
		l, err := allowlist.Parse(p.Allow)
		if err != nil {
			return brokerapi.HostStartResult{}, err
		}
		allow = l.Strings()
	}
	var display []string
	if p.Window || s.Window.Default {
		if len(s.Window.Display) == 0 {
			return brokerapi.HostStartResult{}, wire.Errorf(wire.CodeNoDisplay,
				"a browser with windows was asked for (--window, or \"window\" in the config), and brokerd knows no display of yours to show it on (the config names none, and brokerd was started by headless, so it takes none from the environment); the host was not started")
		}
		display = s.Window.Display
	}
	r, err := s.Hosts.Start(ctx, allow, display)
	if err != nil {
		return brokerapi.HostStartResult{}, err
	}
	return brokerapi.HostStartResult{Status: r.Status, PID: r.PID, Ready: r.Ready}, nil
}

// validRelease checks what the host reports about a release: bounded, printable.
func validRelease(p brokerapi.ReleaseParams) error {
	bad := func(format string, a ...any) error { return wire.Errorf(wire.CodeInvalidArgument, format, a...) }
	switch {
	case p.Purpose != brokerapi.PurposeLogin && p.Purpose != brokerapi.PurposeVerify && p.Purpose != brokerapi.PurposeBasic && p.Purpose != brokerapi.PurposeCode && p.Purpose != brokerapi.PurposePasskey:
		return bad("unknown release purpose %q", clip.Text(p.Purpose, 32))
	case len(p.Path) > brokerapi.MaxPath || !procstat.Printable(p.Path):
		return bad("the page path is longer than %d bytes or not printable UTF-8", brokerapi.MaxPath)
	case len(p.Field) > brokerapi.MaxField || !procstat.Printable(p.Field):
		return bad("the field label is longer than %d bytes or not printable UTF-8", brokerapi.MaxField)
	case len(p.Client) > brokerapi.MaxClient || !procstat.Printable(p.Client):
		return bad("the client label is longer than %d bytes or not printable UTF-8", brokerapi.MaxClient)
	case p.NewPath && p.Purpose != brokerapi.PurposeLogin && p.Purpose != brokerapi.PurposePasskey:
		return bad("new_path allows a sign-in at a new path; a release of purpose %q has no sign-in path", p.Purpose)
	case len(p.Agent) > brokerapi.MaxAgent:
		return bad("the agent chain has more than %d processes", brokerapi.MaxAgent)
	}
	for _, a := range p.Agent {
		if a.PID <= 0 || len(a.Exe) > procstat.MaxExe || len(a.Comm) > procstat.MaxComm || !procstat.Printable(a.Exe) || !procstat.Printable(a.Comm) {
			return bad("an agent process entry is out of bounds (pid > 0, exe at most %d bytes, comm at most %d, printable)", procstat.MaxExe, procstat.MaxComm)
		}
	}
	return nil
}
