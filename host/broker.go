package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// What the host tells brokerd about a release, for the person's prompt and the audit: the
// page path (never the query or fragment, which may hold anything), the password field's
// label, and the agent behind the request (the control-socket peer and up to three of its
// ancestors, from /proc: the CLI is undumpable, so only its comm can be read).

// pagePath is the path of u, bounded; "" when u has none.
func pagePath(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return procstat.Clean(p.EscapedPath(), brokerapi.MaxPath)
}

// pathQuery is the path and query of u, bounded: the one request an HTTP Basic answer goes to,
// as the person's prompt shows it (the query is what a header-echo page would be asked by).
func pathQuery(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	pq := p.EscapedPath()
	if p.RawQuery != "" || p.ForceQuery {
		pq += "?" + p.RawQuery
	}
	return procstat.Clean(pq, brokerapi.MaxPath)
}

// fieldLabel is the outline text (accessible name) of the element ref, bounded.
func fieldLabel(o snapshot.Outline, ref string) string {
	e, ok := elementOf(o, ref)
	if !ok {
		return ""
	}
	return procstat.Clean(cmp.Or(e.Text, e.Placeholder), brokerapi.MaxField)
}

// clientLabel is what a client.hello said, cleaned and bounded: "name version", in the
// characters client names and versions use (letters, digits, space and . _ - + / @); anything
// else becomes "?", so a self-reported name cannot write a sentence into the person's prompt
// ("origin: … (verified)", red-team round 4).
func clientLabel(p control.ClientHelloParams) string {
	l := labelChars(procstat.Clean(p.Name, control.MaxClientName))
	if v := labelChars(procstat.Clean(p.Version, control.MaxClientVersion)); v != "" {
		l += " " + v
	}
	return l
}

func labelChars(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(" ._-+/@", r):
			return r
		}
		return '?'
	}, s)
}

// agentClient is what the control connection of ctx's request said its client is ("" when
// it said nothing): self-reported.
func agentClient(ctx context.Context) string {
	if c := rpc.ConnOf(ctx); c != nil {
		return c.Client()
	}
	return ""
}

// agentChain is the control-socket peer of ctx's request and its ancestors.
func agentChain(ctx context.Context) []brokerapi.Proc {
	c := rpc.ConnOf(ctx)
	if c == nil {
		return nil
	}
	var chain []brokerapi.Proc
	hardening.AsUser(func() { chain = procstat.Chain(c.Peer.PID, brokerapi.MaxAgent) }) // as the user sees them
	return chain
}

// callerGone reports whether the control connection of ctx's request was hung up by its peer
// (a cancelled MCP call, say), as opposed to the host itself stopping.
func callerGone(ctx context.Context) bool {
	c := rpc.ConnOf(ctx)
	if c == nil {
		return false
	}
	select {
	case <-c.Hangup():
		return true
	default:
		return false
	}
}

// release has brokerd release what p names (the person is asked), on a broker connection of
// its own so that the host's other broker calls are not queued behind the prompt. First the
// browser's processes must be intact: the look intact started ahead (checkAhead) when it is
// fresh, else one taken now (intact may be nil). The agent
// chain and the client label are filled in from ctx. A context that ended while the person was
// asked is withdrawn(ctx), whatever brokerd answered: nothing may be typed. The caller zeroes
// the secret (also on error).
func (h *Host) release(ctx context.Context, intact *intactCheck, p brokerapi.ReleaseParams) (brokerapi.Released, []byte, error) {
	if h.o.Broker == nil {
		return brokerapi.Released{}, nil, wire.Errorf(wire.CodeBrokerUnavail, "no broker configured")
	}
	if h.o.Window == "x11" && (p.Purpose == brokerapi.PurposeLogin || p.Purpose == brokerapi.PurposeCode) {
		// Any X client of the person's can type into the browser's windows, its address bar
		// included: a javascript: URL typed there runs in the sign-in page and reads the field
		// (a hostile review of issue 45 did). Nothing is asked or typed.
		return brokerapi.Released{}, nil, wire.Errorf(wire.CodeX11Window,
			"the browser shows its windows on X11, where any program of yours can script the sign-in page through them: a password or code is never typed there")
	}
	if err := intact.result(h); err != nil {
		return brokerapi.Released{}, nil, err
	}
	rc, err := h.o.Broker(ctx)
	if err != nil {
		return brokerapi.Released{}, nil, wire.Errorf(wire.CodeBrokerUnavail, "%w", err)
	}
	p.Agent, p.Client = agentChain(ctx), agentClient(ctx)
	rel, secret, err := rc.Release(ctx, p)
	rc.Close()
	if ctx.Err() != nil {
		return rel, secret, withdrawn(ctx)
	}
	if err == nil && p.Purpose != brokerapi.PurposeVerify && p.Purpose != brokerapi.PurposePasskey {
		// (A passkey's key never reaches the page: only its signatures do.)
		h.remember(rel, secret) // before it reaches the page: every later output is scanned
	}
	return rel, secret, err
}

// withdrawn is the answer to a sign-in whose context ended while the person was asked:
// errStopping when the host itself is stopping (cancelled, the caller still there), else
// errWithdrawn (the caller hung up, or its own deadline — a journey's budget — passed).
func withdrawn(ctx context.Context) error {
	if !callerGone(ctx) && errors.Is(ctx.Err(), context.Canceled) {
		return errStopping
	}
	return errWithdrawn
}

// errStopping answers a sign-in the host abandoned because it is stopping (its brokerd went
// away: the lifeline).
var errStopping = wire.SentinelHint(wire.CodeHostUnavail, "the browser host is stopping; nothing was typed",
	"start it again with 'headless start'")

// errWithdrawn answers a sign-in whose caller hung up or cancelled while the person was
// asked (the caller never reads it; the log does).
var errWithdrawn = wire.SentinelHint(wire.CodeCancelled, "the sign-in was withdrawn by its caller while the person was asked; nothing was typed",
	"ask again when you still need to sign in")

// brokerClient returns the host's broker connection, dialling it when needed.
func (h *Host) brokerClient(ctx context.Context) (*brokerapi.Client, error) {
	h.bmu.Lock()
	defer h.bmu.Unlock()
	if h.broker != nil {
		return h.broker, nil
	}
	if h.o.Broker == nil {
		return nil, wire.Errorf(wire.CodeBrokerUnavail, "no broker configured")
	}
	c, err := h.o.Broker(ctx)
	if err != nil {
		return nil, wire.Errorf(wire.CodeBrokerUnavail, "%w", err)
	}
	// A new connection (first use, or brokerd restarted): register every isolated session
	// before anything else, so brokerd never answers for one of them from the vault. Their
	// stores start empty: what an earlier brokerd held died with it.
	for name := range h.isolated {
		if err := c.OpenSession(ctx, name); err != nil {
			c.Close()
			return nil, fmt.Errorf("register isolated session %q with brokerd: %w", name, err)
		}
	}
	h.broker = c
	return c, nil
}

// registerIsolated tells brokerd about a new isolated session (its store lives as long as the
// host's broker connection). Without a broker the session still works for browsing; it is
// registered when the connection is (re)made.
func (h *Host) registerIsolated(ctx context.Context, name string) error {
	h.bmu.Lock()
	h.isolated[name] = true
	h.bmu.Unlock()
	if h.o.Broker == nil {
		return nil
	}
	err := h.withBroker(ctx, func(c *brokerapi.Client) error { return c.OpenSession(ctx, name) })
	if err == nil || wire.CodeOf(err) == wire.CodeBrokerUnavail || errors.Is(err, rpc.ErrUnreachable) {
		if err != nil {
			h.o.Log.Warn("isolated session not yet registered with brokerd", "session", name, "code", wire.CodeOf(err))
		}
		return nil
	}
	h.bmu.Lock()
	delete(h.isolated, name)
	h.bmu.Unlock()
	return err
}

// forgetIsolated has brokerd zero the store of the isolated session name ("" = all of them).
// With no broker connection there is no store to zero.
func (h *Host) forgetIsolated(name string) {
	h.bmu.Lock()
	defer h.bmu.Unlock()
	var names []string
	for n := range h.isolated {
		if name == "" || n == name {
			names = append(names, n)
			delete(h.isolated, n)
		}
	}
	if h.broker == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, n := range names {
		if err := h.broker.CloseSession(ctx, n); err != nil {
			h.o.Log.Warn("brokerd did not close an isolated session", "session", n, "code", wire.CodeOf(err))
			if errors.Is(err, rpc.ErrUnreachable) {
				// Whatever it held goes with this connection. (A mere timeout does not close
				// it: that would wipe every other isolated session's store too.)
				h.broker.Close()
				h.broker = nil
				return
			}
		}
	}
}

// withBroker runs fn with the broker connection, redialling once if the connection was lost.
func (h *Host) withBroker(ctx context.Context, fn func(*brokerapi.Client) error) error {
	for attempt := 0; ; attempt++ {
		c, err := h.brokerClient(ctx)
		if err != nil {
			return err
		}
		err = fn(c)
		if attempt == 0 && errors.Is(err, rpc.ErrUnreachable) && ctx.Err() == nil {
			h.bmu.Lock()
			if h.broker == c {
				h.broker.Close()
				h.broker = nil
			}
			h.bmu.Unlock()
			continue
		}
		return err
	}
}

// credentialOf is what brokerd lists of alias at origin o in session s's store (metadata: the
// account, the origins the person named for it), never its secret.
func (h *Host) credentialOf(ctx context.Context, s *session, o, alias string) (brokerapi.Credential, error) {
	var creds []brokerapi.Credential
	err := h.withBroker(ctx, func(c *brokerapi.Client) error {
		var err error
		if s.isolated {
			creds, err = c.ListIn(ctx, s.name, o)
		} else {
			creds, err = c.List(ctx, o)
		}
		return err
	})
	if err != nil {
		return brokerapi.Credential{}, err
	}
	for _, c := range creds {
		if strings.EqualFold(c.Alias, alias) {
			return c, nil
		}
	}
	return brokerapi.Credential{}, wire.Errorf(wire.CodeAliasUnknown, "no alias %q at %s", alias, o)
}

// learnPath tells brokerd that the form sign-in of challenge ended authenticated: a credential
// with no known sign-in path learns this one (a path the person allowed as new is never
// learned).
// Bounded; a failure is logged, the sign-in's answer stays what it was.
func (h *Host) learnPath(ctx context.Context, challenge string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	err := h.withBroker(ctx, func(c *brokerapi.Client) error {
		_, err := c.LearnPath(ctx, challenge)
		return err
	})
	if err != nil {
		h.o.Log.Warn("the sign-in path could not be learned", "code", wire.CodeOf(err))
	}
}
