package gate

import (
	"context"
	"errors"
	"time"

	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/broker/seal"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// Hand-over (issue 45): the agent asks the person to do what only a person can in a session's
// window (a CAPTCHA, a consent screen, a hardware key) and to say when they are done. The
// answer is a presence prompt of brokerd's, the same provider and display as a release, so
// the agent cannot give it: with the passphrase provider the person types the passphrase
// (checked against a saved credential), with secret-service the keyring's password, with
// pinentry they press Done. Only the genuine host asks (PEER_NOT_HOST otherwise), and every
// outcome is audited (op "handover": done, declined, or the error's code).

// WindowSetup is how brokerd gives the browser host windows: Display is the environment of
// where the person is (the display brokerd's prompts appear on: the config's, or the
// environment of a brokerd the person started; empty: no display), Default the config's
// "window".
type WindowSetup struct {
	Default bool
	Display []string
}

// DefaultHandoverTimeout bounds a hand-over's prompt when Server.HandoverTimeout is zero.
const DefaultHandoverTimeout = 5 * time.Minute

// errNoWindow refuses a hand-over of a browser without windows where one could be shown.
var errNoWindow = wire.SentinelHint(wire.CodeNoWindow,
	"the browser shows no window though the person has a display: a hand-over needs the session's window in front of them; nobody was asked",
	"stop the host ('headless stop') and start it with a window ('headless start --window'), then hand over again")

func (s *Server) handover(ctx context.Context, peer Peer, p brokerapi.HandoverParams) (res brokerapi.HandoverResult, err error) {
	ar := auditwriter.Record{Session: p.Session, Path: p.URL, Agent: p.Agent, Client: p.Client}
	defer func() {
		if err == nil {
			ar.Decision = res.Status
		}
		if rerr := s.record("handover", err, peer, ar); rerr != nil && err == nil {
			res, err = brokerapi.HandoverResult{}, rerr
		}
	}()
	if err := s.requireHost(rpc.ConnOf(ctx)); err != nil {
		return res, err
	}
	if err := validHandover(p); err != nil {
		return res, err
	}
	ar.Detail = "reason: " + clip.Text(p.Reason, 200)
	if !p.Window && len(s.Window.Display) > 0 {
		return res, errNoWindow
	}
	if err := s.reserve("nobody was asked"); err != nil {
		return res, err
	}
	_, hostExe := s.Hosts.Running()
	wait := s.HandoverTimeout
	if wait <= 0 {
		wait = DefaultHandoverTimeout
	}
	req := presence.Request{Handover: true, Session: p.Session, Reason: p.Reason, Path: p.URL, Title: p.Title, NoWindow: !p.Window,
		Agent: p.Agent, Client: p.Client, PID: peer.PID, Exe: hostExe, Host: true, Wait: wait}
	ctx, cancel := context.WithTimeout(ctx, wait+VaultTimeout)
	defer cancel()
	if sp, ok := s.Presence.(sealer); ok {
		err = s.handoverSealed(ctx, sp, req)
	} else {
		err = s.Presence.Do(ctx, req, func(context.Context) error { return nil })
	}
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return res, wire.Errorf(wire.CodeCancelled, "the hand-over was withdrawn (its caller went away) while the person was asked")
	case errors.Is(err, presence.ErrDenied):
		s.log().Info("hand-over declined at the prompt", "session", p.Session, "detail", err.Error())
		return brokerapi.HandoverResult{Status: brokerapi.HandoverDeclined}, nil
	case err != nil:
		return res, err
	}
	return brokerapi.HandoverResult{Status: brokerapi.HandoverDone}, nil
}

// handoverSealed is a hand-over's prompt under the passphrase provider: Done is the person's
// passphrase, which must open the oldest sealed credential (so that nobody else can type
// something into the prompt and have it count). Without one nothing can check it:
// PRESENCE_UNAVAILABLE.
func (s *Server) handoverSealed(ctx context.Context, sp sealer, req presence.Request) error {
	if err := s.trusted("nobody was asked"); err != nil {
		return err
	}
	ref, err := s.sealRef(ctx, "", "")
	if err != nil {
		return err
	}
	if ref.text == nil {
		return wire.Errorf(wire.CodePresenceUnavail, "the passphrase provider confirms a hand-over with your passphrase, checked against a saved credential, and none is saved yet; nobody was asked").
			WithHint("save a credential first ('headless credentials add'), or choose another presence provider in the config")
	}
	defer credential.Zero(ref.text)
	return sp.Ask(ctx, req, false, func(pass []byte) error {
		pt, err := seal.Open(ref.text, s.Key, pass, ref.b)
		if errors.Is(err, seal.ErrWrongPassphrase) {
			return errors.Join(presence.ErrTryAgain, err)
		}
		credential.Zero(pt)
		return err
	})
}

// validHandover checks what the host reports about a hand-over: bounded, printable.
func validHandover(p brokerapi.HandoverParams) error {
	bad := func(format string, a ...any) error { return wire.Errorf(wire.CodeInvalidArgument, format, a...) }
	switch {
	case credential.ValidSession(p.Session) != nil:
		return bad("%s", credential.SessionRule)
	case p.Reason == "" || len(p.Reason) > brokerapi.MaxReason || !procstat.Printable(p.Reason):
		return bad("the reason is empty, longer than %d bytes or not printable UTF-8", brokerapi.MaxReason)
	case len(p.URL) > brokerapi.MaxURL || !procstat.Printable(p.URL):
		return bad("the page URL is longer than %d bytes or not printable UTF-8", brokerapi.MaxURL)
	case len(p.Title) > brokerapi.MaxTitle || !procstat.Printable(p.Title):
		return bad("the page title is longer than %d bytes or not printable UTF-8", brokerapi.MaxTitle)
	case len(p.Client) > brokerapi.MaxClient || !procstat.Printable(p.Client):
		return bad("the client label is longer than %d bytes or not printable UTF-8", brokerapi.MaxClient)
	}
	return validRelease(brokerapi.ReleaseParams{Agent: p.Agent})
}
