package host

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// What the site sends back (issue 27). The containment of taint.go keeps the typed field out
// of every output; a site can still put the secret into the documents that follow: a failed
// sign-in's page that re-renders what it received (in its text, a text field's value, a
// hidden input), an error page after a successful one, a debug page that prints the request
// headers (HTTP Basic's Authorization header), a code step's "the code 426089 is not valid".
//
//   - Every secret released into the browser (a password, a one-time code, the answer to a
//     Basic challenge, a password the person typed at enrollment) is remembered as keyed
//     fingerprints of the forms a server echoes it in (package host/echo: never the secret),
//     for the host's life, at most echo.MaxSecrets of them.
//   - Every look at a page for an output (capture: snapshot, wait, auth login's evidence,
//     the verbs' outlines; a journey's looks) scans every string of the document but the
//     values of the fields the host typed into (those are taint.go's); a screenshot scans the
//     page before and after its capture (pixels cannot be scanned).
//   - Every answer of control.sock is scanned too, as its JSON (URLs, titles, error texts,
//     a journey's evidence: anything a look did not cover).
//   - On a match the output is refused with SECRET_ON_PAGE (one fixed message: nothing says
//     which part matched), the session's page is discarded (its renderer crashed, a blank
//     page in its place), and brokerd audits it (echo.seen).
//
// A match answers "this output holds a whole secret" and nothing less: it is a guessing oracle
// for a whole password, no better than the site's own sign-in form (SECURITY.md).

// errEchoed answers an output refused because the page shows a released secret.
var errEchoed = wire.SentinelHint(wire.CodeSecretOnPage,
	"the page shows a secret that was released into the browser (the site sent it back); the output was refused and the page discarded: the session now shows a blank page",
	"the site echoes what it was sent: tell the person (the audit log records it); visit another page to go on")

// remember records a released secret's forms for the scan (rel.Code: the secret is the
// password, NUL, the one-time code).
func (h *Host) remember(rel brokerapi.Released, secret []byte) {
	if h.echo == nil {
		return
	}
	pw, code := secret, []byte(nil)
	if rel.Code {
		pw, code = credential.SplitFactor(secret)
	}
	if len(pw) > 0 {
		h.echo.Add(pw, rel.Account)
	}
	if len(code) > 0 {
		h.echo.AddCode(code)
	}
}

// echoOption is the scan for snapshot.Options.Echo (nil while nothing was released).
func (h *Host) echoOption() func(string) bool {
	if h.echo == nil || h.echo.Empty() {
		return nil
	}
	return h.echo.MatchString
}

// pictureRefused is the check of a screenshot, before and after its capture, from one look
// at the page: SECRET_ON_PAGE while a field the host typed into holds a value again
// (taint.go), or while the page shows a released secret (the page is then discarded).
func (h *Host) pictureRefused(ctx context.Context, b *cdp.Browser, s *session) error {
	match := h.echoOption()
	if match == nil && len(s.taint) == 0 {
		return nil
	}
	doc, err := h.documentID(ctx, b, s)
	if err != nil {
		return err
	}
	taint := s.taintOf(doc)
	if match == nil && len(taint) == 0 {
		return nil
	}
	raw, err := captureSnapshot(ctx, b, s)
	if err != nil {
		return h.browserErr(err)
	}
	defer clear(raw)
	if left, err := snapshot.HoldsValue(raw, taint); err != nil || left {
		if err == nil {
			err = errSecretOnPage()
		}
		return err
	}
	if match == nil {
		return nil
	}
	if echoes, err := snapshot.Echoes(raw, taint, match); err != nil || echoes {
		if err == nil {
			err = h.echoed(ctx, b, s, "screenshot")
		}
		return err
	}
	return nil
}

// echoed refuses an output of session s (whose verb lock the caller holds): the page is
// discarded and brokerd audits it.
func (h *Host) echoed(ctx context.Context, b *cdp.Browser, s *session, output string) error {
	h.o.Log.Warn("a released secret is on the page: output refused, page discarded", "session", s.name, "output", output)
	o := ""
	if u, _, err := h.pageInfo(ctx, b, s); err == nil {
		o = originOf(u)
	}
	h.discardPage(ctx, b, s)
	h.reportEcho(ctx, s.name, o, output)
	return errEchoed
}

// reportEcho has brokerd audit an echo, bounded (a brokerd that does not answer holds no
// answer up for long: the host log has it too).
func (h *Host) reportEcho(ctx context.Context, session, origin, output string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	err := h.withBroker(ctx, func(c *brokerapi.Client) error {
		return c.EchoSeen(ctx, brokerapi.EchoSeenParams{Session: session, Origin: clip.Text(origin, 256), Output: output})
	})
	if err != nil {
		h.o.Log.Warn("the echo could not be audited", "session", session, "code", wire.CodeOf(err))
	}
}

// answerEchoes reports whether the answer to a control.sock request (its result, or its
// error as the peer would read it) holds a released secret.
func (h *Host) answerEchoes(result any, err error) bool {
	if h.echo == nil || h.echo.Empty() {
		return false
	}
	if err != nil {
		b, _ := json.Marshal(wireForm(err))
		if h.echo.MatchJSON(b) {
			return true
		}
	}
	b, jerr := json.Marshal(result)
	if jerr != nil {
		return true // an answer that cannot be checked is not given
	}
	defer clear(b)
	return h.echo.MatchJSON(b)
}

// echoedAnswer refuses an answer that holds a released secret: the page of the session it
// was about (about: the request names one, "" being the default session) is discarded, and
// brokerd audits it.
func (h *Host) echoedAnswer(ctx context.Context, session string, about bool, method string) error {
	h.o.Log.Warn("a released secret in an answer: refused", "method", method, "session", session)
	if !about {
		h.reportEcho(ctx, "", "", method)
		return errEchoed
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	b, s, unlock, err := h.lockSession(ctx, session)
	if err != nil {
		h.reportEcho(ctx, session, "", method)
		return errEchoed
	}
	defer unlock()
	return h.echoed(ctx, b, s, method)
}

// handle is rpc.Handle with fn's answer scanned: one that holds a released secret is
// refused (answerEchoes, echoedAnswer).
func handle[P, R any](t *rpc.Methods, h *Host, method string, fn func(context.Context, P) (R, error)) {
	rpc.Handle(t, method, func(ctx context.Context, p P) (R, error) {
		d := verbLimit(method, p)
		if d > 0 {
			var cancel context.CancelFunc
			ctx, cancel = withVerbDeadline(ctx, d)
			defer cancel()
		}
		mark := h.downloadMark(method, p)
		r, err := fn(ctx, p)
		err = verbAnswer(ctx, d, err) // pageguard.go
		// A download the page began meanwhile was denied: the verb says so (downloads.go).
		err = h.downloadAnswer(method, p, mark, err)
		if errors.Is(err, errEchoed) || !h.answerEchoes(r, err) {
			return r, err
		}
		var zero R
		name, about := sessionOf(p)
		return zero, h.echoedAnswer(ctx, name, about, method)
	})
}

// sessionOf is the session a request's params name (their Session field), if they have one.
func sessionOf(p any) (string, bool) {
	v := reflect.ValueOf(p)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return "", false
	}
	f := v.FieldByName("Session")
	if !f.IsValid() || f.Kind() != reflect.String {
		return "", false
	}
	return f.String(), true
}
