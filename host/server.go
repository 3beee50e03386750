package host

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/journey"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// The params that carry a person's password are zeroed by the method table when they fail to
// decode (rpc.Zeroer); once decoded, Enroll and CredentialsAdd own and zero them.
var (
	_ rpc.Zeroer = (*control.EnrollParams)(nil)
	_ rpc.Zeroer = (*control.CredentialsAddParams)(nil)
)

// Server answers control.sock requests with a Host.
type Server struct {
	Host     *Host
	Log      *slog.Logger
	Shutdown func() // called after the shutdown reply is written
}

// Serve serves control.sock on l for peers of uid until ctx is done.
func (s *Server) Serve(ctx context.Context, l net.Listener, uid int) error {
	return (&rpc.Server{Handler: s.Methods().Serve, Log: s.Log, UID: uid, OnClose: s.Host.ConnClosed}).Serve(ctx, l)
}

// Methods is control.sock's method table: every method of package control, decoded into its
// params type and answered by the Host, every answer scanned for a released secret
// (echoed.go).
func (s *Server) Methods() *rpc.Methods {
	h := s.Host
	t := &rpc.Methods{Log: s.Log, Internal: internalMessage,
		// A sign-in, a verify or a wait whose caller hung up (or cancelled, which closes
		// the connection) is withdrawn at once: its prompt goes away, nothing is typed.
		// A journey too: it may be waiting for a person's approval of its login, and its
		// browser context is disposed of as soon as it stops.
		CancelOnHangup: map[string]bool{control.MethodAuthLogin: true, control.MethodCredentialsAddPasskey: true, control.MethodCredentialsVerify: true, control.MethodWait: true,
			control.MethodJourneyRun: true, control.MethodHandover: true},
		// A request cut short because the host is stopping (its brokerd went away, a
		// shutdown) is HOST_UNAVAILABLE, not "its caller went away".
		Stopping: errHostStopping,
		// Chromium died under a verb and the call that noticed answered with its own error
		// (DOM.focus under a sign-in, kill -9: tests/faults_points_test.go): relaunch it before
		// answering, so the hint's "restarted" is true and the next command works.
		Error: h.relaunchDead}
	// session notes the session a request names on its log line.
	session := func(ctx context.Context, name string) { rpc.Note(ctx, "session", name) }

	handle(t, h, control.MethodPing, func(ctx context.Context, _ struct{}) (struct{}, error) { return struct{}{}, nil })
	handle(t, h, control.MethodStatus, func(ctx context.Context, _ struct{}) (control.Status, error) {
		st := h.Status()
		if d, err := hardening.Dumpable(); err == nil {
			st.Undumpable = !d
		}
		st.BrowserContexts = h.browserContexts(ctx)
		return st, nil
	})
	handle(t, h, control.MethodClientHello, func(ctx context.Context, p control.ClientHelloParams) (struct{}, error) {
		if c := rpc.ConnOf(ctx); c != nil {
			c.SetClient(clientLabel(p))
		}
		return struct{}{}, nil
	})
	handle(t, h, control.MethodShutdown, func(ctx context.Context, _ struct{}) (control.ShutdownResult, error) {
		if s.Shutdown != nil {
			time.AfterFunc(50*time.Millisecond, s.Shutdown)
		}
		return control.ShutdownResult{PID: h.Status().PID}, nil
	})
	handle(t, h, control.MethodSessionCreate, func(ctx context.Context, p control.CreateParams) (control.SessionInfo, error) {
		session(ctx, p.Name)
		return h.CreateSession(ctx, p)
	})
	handle(t, h, control.MethodSessionList, func(ctx context.Context, _ struct{}) (control.SessionList, error) {
		return h.Sessions(ctx)
	})
	handle(t, h, control.MethodSessionClose, func(ctx context.Context, p control.CloseParams) (control.SessionClosed, error) {
		session(ctx, p.Name)
		return control.SessionClosed{Closed: p.Name}, h.CloseSession(ctx, p.Name)
	})
	handle(t, h, control.MethodVisit, func(ctx context.Context, p control.VisitParams) (control.PageResult, error) {
		session(ctx, p.Session)
		return h.Visit(ctx, p)
	})
	handle(t, h, control.MethodSnapshot, func(ctx context.Context, p control.SessionParams) (control.SnapshotResult, error) {
		session(ctx, p.Session)
		return h.Snapshot(ctx, p.Session)
	})
	handle(t, h, control.MethodClick, func(ctx context.Context, p control.ClickParams) (control.PageResult, error) {
		session(ctx, p.Session)
		return h.Click(ctx, p)
	})
	handle(t, h, control.MethodFill, func(ctx context.Context, p control.FillParams) (control.FillResult, error) {
		session(ctx, p.Session)
		return h.Fill(ctx, p)
	})
	handle(t, h, control.MethodPress, func(ctx context.Context, p control.PressParams) (control.PageResult, error) {
		session(ctx, p.Session)
		return h.Press(ctx, p)
	})
	handle(t, h, control.MethodWait, func(ctx context.Context, p control.WaitParams) (control.PageResult, error) {
		session(ctx, p.Session)
		return h.Wait(ctx, p)
	})
	handle(t, h, control.MethodUpload, func(ctx context.Context, p control.UploadParams) (control.UploadResult, error) {
		session(ctx, p.Session)
		return h.Upload(ctx, p)
	})
	handle(t, h, control.MethodConsoleList, func(ctx context.Context, p control.ConsoleParams) (control.ConsoleList, error) {
		session(ctx, p.Session)
		return h.ConsoleList(ctx, p)
	})
	handle(t, h, control.MethodNetworkList, func(ctx context.Context, p control.NetworkParams) (control.NetworkList, error) {
		session(ctx, p.Session)
		return h.NetworkList(ctx, p)
	})
	handle(t, h, control.MethodScreenshot, func(ctx context.Context, p control.ScreenshotParams) (control.ScreenshotResult, error) {
		session(ctx, p.Session)
		return h.Screenshot(ctx, p)
	})
	handle(t, h, control.MethodBack, func(ctx context.Context, p control.SessionParams) (control.PageResult, error) {
		session(ctx, p.Session)
		return h.Back(ctx, p.Session)
	})
	handle(t, h, control.MethodForward, func(ctx context.Context, p control.SessionParams) (control.PageResult, error) {
		session(ctx, p.Session)
		return h.Forward(ctx, p.Session)
	})
	handle(t, h, control.MethodReload, func(ctx context.Context, p control.SessionParams) (control.PageResult, error) {
		session(ctx, p.Session)
		return h.Reload(ctx, p.Session)
	})
	handle(t, h, control.MethodDialog, func(ctx context.Context, p control.DialogParams) (control.PageResult, error) {
		session(ctx, p.Session)
		return h.Dialog(ctx, p)
	})
	handle(t, h, control.MethodSessionPages, func(ctx context.Context, p control.SessionParams) (control.PageList, error) {
		session(ctx, p.Session)
		return h.Pages(ctx, p.Session)
	})
	handle(t, h, control.MethodPageSelect, func(ctx context.Context, p control.PageSelectParams) (control.PageResult, error) {
		session(ctx, p.Session)
		return h.SelectPage(ctx, p)
	})
	handle(t, h, control.MethodSelect, func(ctx context.Context, p control.SelectParams) (control.SelectResult, error) {
		session(ctx, p.Session)
		return h.Select(ctx, p)
	})
	handle(t, h, control.MethodHover, func(ctx context.Context, p control.RefParams) (control.HoverResult, error) {
		session(ctx, p.Session)
		return h.Hover(ctx, p)
	})
	handle(t, h, control.MethodScroll, func(ctx context.Context, p control.ScrollParams) (control.ScrollResult, error) {
		session(ctx, p.Session)
		return h.Scroll(ctx, p)
	})
	handle(t, h, control.MethodProfileClear, func(ctx context.Context, _ struct{}) (control.ClearResult, error) {
		return h.ClearProfile(ctx)
	})
	handle(t, h, control.MethodHandover, func(ctx context.Context, p control.HandoverParams) (control.HandoverResult, error) {
		session(ctx, p.Session)
		return h.Handover(ctx, p)
	})
	// A sign-in (and a journey, an interactive sign-in, a passkey enrolment) holds the session
	// for its whole course: its pages' dialogs are dismissed as they open (dialogs.go).
	handle(t, h, control.MethodAuthLogin, func(ctx context.Context, p control.AuthParams) (control.AuthResult, error) {
		session(ctx, p.Session)
		return h.AuthLogin(withDialogsNow(ctx), p)
	})
	// The params hold the person's password (from the CLI's hand-built frame): owned and
	// zeroed by Enroll, never logged (only the session is). The table zeroes params that
	// failed to decode.
	handle(t, h, control.MethodAuthEnroll, func(ctx context.Context, p control.EnrollParams) (control.EnrollResult, error) {
		session(ctx, p.Session)
		if err := peerHasTTY(rpc.PeerOf(ctx).PID); err != nil {
			credential.Zero(p.Secret)
			return control.EnrollResult{}, err
		}
		return h.Enroll(withDialogsNow(ctx), p)
	})
	handle(t, h, control.MethodAuthEnrollSave, func(ctx context.Context, p control.EnrollSaveParams) (control.EnrollSaved, error) {
		return h.EnrollSave(ctx, p)
	})
	handle(t, h, control.MethodAuthEnrollDiscard, func(ctx context.Context, p control.EnrollTokenParams) (control.EnrollDiscarded, error) {
		return h.EnrollDiscard(p)
	})
	handle(t, h, control.MethodCredentialsList, func(ctx context.Context, p control.CredentialsListParams) (brokerapi.ListResult, error) {
		session(ctx, p.Session)
		return h.CredentialsList(ctx, p)
	})
	// As auth.enroll: the password is CredentialsAdd's to zero.
	handle(t, h, control.MethodCredentialsAdd, func(ctx context.Context, p control.CredentialsAddParams) (brokerapi.Credential, error) {
		session(ctx, p.Session)
		if err := peerHasTTY(rpc.PeerOf(ctx).PID); err != nil {
			credential.Zero(p.Secret)
			return brokerapi.Credential{}, err
		}
		return h.CredentialsAdd(ctx, p)
	})
	// The person's command, as credentials.add: only from a terminal.
	handle(t, h, control.MethodCredentialsAddPasskey, func(ctx context.Context, p control.PasskeyAddParams) (brokerapi.Credential, error) {
		session(ctx, p.Session)
		if err := peerHasTTY(rpc.PeerOf(ctx).PID); err != nil {
			return brokerapi.Credential{}, err
		}
		return h.PasskeyAdd(withDialogsNow(ctx), p)
	})
	handle(t, h, control.MethodCredentialsRemove, func(ctx context.Context, p control.CredentialsRemoveParams) (struct{}, error) {
		session(ctx, p.Session)
		return h.CredentialsRemove(ctx, p)
	})
	handle(t, h, control.MethodCredentialsVerify, func(ctx context.Context, p control.VerifyParams) (control.VerifyResult, error) {
		return h.CredentialsVerify(ctx, p)
	})
	handle(t, h, control.MethodJourneyRun, func(ctx context.Context, p control.JourneyRunParams) (journey.Report, error) {
		r, err := h.JourneyRun(withDialogsNow(ctx), p)
		if err == nil {
			rpc.Note(ctx, "journey", r.JourneyID, "session", r.Session, "status", r.Status)
		}
		return r, err
	})
	return t
}

// errHostStopping answers a request the host cut short because it is stopping.
var errHostStopping = wire.SentinelHint(wire.CodeHostUnavail, "the browser host is stopping; the request was not completed",
	"start it again with 'headless start'")

// wireForm is err's wire form as the host answers it (wire.From's), with the message of an
// error no code claims (a bug) bounded as internalMessage says.
func wireForm(err error) *wire.Error {
	we := wire.From(err)
	if wire.Uncoded(err) {
		we.Message = internalMessage(err)
	}
	return we
}

// internalMessage is what the peer is told of an error no code claims (a bug; host.log has
// it in full).
func internalMessage(err error) string {
	msg := err.Error()
	if strings.Contains(msg, "cdp error") {
		msg = "browser error: " + msg
	}
	return clip.Text(msg, 300)
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
