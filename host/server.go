package host

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/keyprobe"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/profile"
)

// Server answers control.sock requests with a Host.
type Server struct {
	Host     *Host
	Log      *slog.Logger
	Shutdown func() // called after the shutdown reply is written
}

// Serve serves control.sock on l for peers of uid until ctx is done.
func (s *Server) Serve(ctx context.Context, l net.Listener, uid int) error {
	return (&rpc.Server{Handler: s.handle, Log: s.Log, UID: uid}).Serve(ctx, l)
}

func (s *Server) handle(ctx context.Context, peer rpc.Peer, req wire.Request) []byte {
	start := time.Now()
	h := s.Host
	var (
		result  any
		err     error
		session string
	)
	decode := func(v any) bool {
		err = rpc.DecodeParams(req.Params, v)
		return err == nil
	}
	switch req.Method {
	case MethodPing:
		result = struct{}{}
	case MethodStatus:
		st := h.Status()
		if d, err := hardening.Dumpable(); err == nil {
			st.Undumpable = !d
		}
		result = st
	case MethodShutdown:
		result = struct {
			PID int `json:"pid"`
		}{h.Status().PID}
		if s.Shutdown != nil {
			defer time.AfterFunc(50*time.Millisecond, s.Shutdown)
		}
	case MethodSessionCreate:
		var p CreateParams
		if decode(&p) {
			session = p.Name
			result, err = h.CreateSession(ctx, p)
		}
	case MethodSessionList:
		var p struct{}
		if decode(&p) {
			result, err = h.Sessions(ctx)
		}
	case MethodSessionClose:
		var p CreateParams
		if decode(&p) {
			session = p.Name
			err = h.CloseSession(ctx, p.Name)
			result = struct {
				Closed string `json:"closed"`
			}{p.Name}
		}
	case MethodVisit:
		var p VisitParams
		if decode(&p) {
			session = p.Session
			result, err = h.Visit(ctx, p)
		}
	case MethodSnapshot:
		var p SessionParams
		if decode(&p) {
			session = p.Session
			result, err = h.Snapshot(ctx, p.Session)
		}
	case MethodClick:
		var p RefParams
		if decode(&p) {
			session = p.Session
			result, err = h.Click(ctx, p)
		}
	case MethodFill:
		var p FillParams
		if decode(&p) {
			session = p.Session
			result, err = h.Fill(ctx, p)
		}
	case MethodPress:
		var p PressParams
		if decode(&p) {
			session = p.Session
			result, err = h.Press(ctx, p)
		}
	case MethodWait:
		var p WaitParams
		if decode(&p) {
			session = p.Session
			result, err = h.Wait(ctx, p)
		}
	case MethodAuthLogin:
		var p AuthParams
		if decode(&p) {
			session = p.Session
			result, err = h.AuthLogin(ctx, p)
		}
	case MethodAuthEnroll:
		// The params hold the person's password (from the CLI's hand-built frame): decoded
		// here, owned and zeroed by Enroll, never logged (only the session is).
		var p EnrollParams
		if decode(&p) {
			session = p.Session
			if err = peerHasTTY(peer.PID); err == nil {
				result, err = h.Enroll(ctx, p)
			} else {
				credential.Zero(p.Secret)
			}
		} else {
			credential.Zero(p.Secret)
		}
	case MethodAuthEnrollSave:
		var p EnrollSaveParams
		if decode(&p) {
			result, err = h.EnrollSave(ctx, p)
		}
	case MethodAuthEnrollDiscard:
		var p EnrollTokenParams
		if decode(&p) {
			result, err = h.EnrollDiscard(p)
		}
	case MethodCredentialsList:
		var p CredentialsListParams
		if decode(&p) {
			session = p.Session
			result, err = h.CredentialsList(ctx, p)
		}
	case MethodCredentialsAdd:
		// The params hold the person's password (from the CLI's hand-built frame): decoded
		// here, owned and zeroed by CredentialsAdd, never logged.
		var p CredentialsAddParams
		if decode(&p) {
			session = p.Session
			if err = peerHasTTY(peer.PID); err == nil {
				result, err = h.CredentialsAdd(ctx, p)
			} else {
				credential.Zero(p.Secret)
			}
		} else {
			credential.Zero(p.Secret)
		}
	case MethodCredentialsRemove:
		var p CredentialsRemoveParams
		if decode(&p) {
			session = p.Session
			result, err = h.CredentialsRemove(ctx, p)
		}
	case MethodCredentialsVerify:
		var p VerifyParams
		if decode(&p) {
			result, err = h.CredentialsVerify(ctx, p)
		}
	case MethodProfileClear:
		var p struct{}
		if decode(&p) {
			result, err = h.ClearProfile(ctx)
		}
	case MethodScreenshot:
		var p SessionParams
		if decode(&p) {
			session = p.Session
			result, err = h.Screenshot(ctx, p.Session)
		}
	default:
		err = wire.Errorf(wire.CodeUnknownMethod, "unknown method %q", bound(req.Method, 64))
	}
	var out []byte
	if err == nil {
		out, err = wire.ResultFrame(req.ID, result)
	}
	args := []any{"method", bound(req.Method, 64), "session", bound(session, 64), "peer_pid", peer.PID, "ms", time.Since(start).Milliseconds()}
	if err != nil {
		we := ToWire(err)
		if we.Code == wire.CodeInternal {
			s.Log.Error("internal error", append(args, "err", err)...)
		}
		s.Log.Info("request failed", append(args, "code", we.Code)...)
		return wire.ErrorFrame(req.ID, we)
	}
	s.Log.Info("request", args...)
	return out
}

// peerHasTTY refuses an enrollment from a process without a controlling terminal: the CLI
// that read the password from /dev/tty has one; an agent's plain pipe does not. It is a check
// on the pid SO_PEERCRED named, not proof that a person typed (see SECURITY.md).
func peerHasTTY(pid int) error {
	if st, ok := procstat.Read(pid); ok && st.TTY != 0 {
		return nil
	}
	return wire.Errorf(wire.CodeNoTTY, "auth.enroll is accepted only from a process with a controlling terminal")
}

// ToWire maps host errors to their stable codes.
func ToWire(err error) *wire.Error {
	var we *wire.Error
	var le *profile.LockedError
	switch {
	case errors.As(err, &we):
		return we
	case errors.As(err, &le):
		return wire.Errorf(wire.CodeProfileLocked, "%v", err)
	case errors.Is(err, profile.ErrClear):
		return wire.Errorf(wire.CodeProfileClear, "%v", err)
	case errors.Is(err, keyprobe.ErrLocked):
		return wire.Errorf(wire.CodeVaultLocked, "%v", err)
	case errors.Is(err, keyprobe.ErrUnavailable):
		return wire.Errorf(wire.CodeVaultUnavail, "%v", err)
	case errors.Is(err, cdp.ErrCrashed), errors.Is(err, cdp.ErrClosed):
		return wire.Errorf(wire.CodeBrowserCrashed, "%v", err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return wire.Errorf(wire.CodeTimeout, "%v", err)
	case errors.Is(err, credential.ErrInvalid):
		return wire.Errorf(wire.CodeInvalidArgument, "%v", err)
	case errors.Is(err, rpc.ErrUnreachable):
		return wire.Errorf(wire.CodeBrokerUnavail, "%v", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "cdp error") {
		msg = "browser error: " + msg
	}
	return &wire.Error{Code: wire.CodeInternal, Message: bound(msg, 300), Hint: "this is a bug; host.log in the runtime dir has details"}
}
