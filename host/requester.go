package host

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/headless-dev/headless/host/cdp"
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
	for _, e := range o.Elements {
		if e.Ref == ref && ref != "" {
			l := e.Text
			if l == "" {
				l = e.Placeholder
			}
			return procstat.Clean(l, brokerapi.MaxField)
		}
	}
	return ""
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
	if err == nil && p.Purpose != brokerapi.PurposeVerify {
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

// intactCheck is a look at the browser's processes (browserIntact, with their mappings) for a
// release, started ahead of it (checkAhead) so that it runs while the sign-in reads the page.
type intactCheck struct {
	nothing string
	done    chan struct{}
	err     error
	at      time.Time // when it ended
}

// intactFresh is how old a look ahead may be at the release; an older one is taken again.
const intactFresh = time.Second

// checkAhead starts a look at the browser's processes for a release to come; nothing is the
// end of its error's message (what was not done).
func (h *Host) checkAhead(nothing string) *intactCheck {
	c := &intactCheck{nothing: nothing, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.err = h.browserIntact(nothing, true)
		c.at = time.Now()
	}()
	return c
}

// result is the look's answer for a release now: the one started ahead if it is fresh, else
// (nil c, or an old look) one taken now.
func (c *intactCheck) result(h *Host) error {
	if c == nil {
		return h.browserIntact("nothing was asked for or released", true)
	}
	<-c.done // a walk of /proc: it ends by itself
	if c.err != nil || time.Since(c.at) <= intactFresh {
		return c.err
	}
	return h.browserIntact(c.nothing, true)
}

// failed is the look's error once it ended (nil for a nil c).
func (c *intactCheck) failed() error {
	if c == nil {
		return nil
	}
	<-c.done
	return c.err
}

// browserIntact is asked right before every release, and again right before anything is
// typed (checkBrowser): no process of the browser may have memory the user's processes can
// read, nor run code from a file that is not a root-owned system file (the mappings are read
// before the release only: for a user they are unreadable anyway, the processes undumpable,
// and as root reading every process's twice per sign-in made 32 concurrent sign-ins 29%
// slower), and the profile's blockers must not have changed. A browser that runs
// foreign code is killed (the next command relaunches it, its profile cleaned); an exposed
// one is a setting of the machine, left as it is. Either way nothing is asked for or typed;
// nothing ends the error's message (what was not done).
func (h *Host) browserIntact(nothing string, mappings bool) error {
	h.mu.Lock()
	b, g := h.browser, h.guard
	h.mu.Unlock()
	if b == nil {
		return nil
	}
	if t := g.Tampered(); t != "" {
		h.o.Log.Error("the profile's blocked entries changed under the browser; killing it", "found", t)
		killBrowser(b)
		return wire.Errorf(wire.CodeBrowserTampered, "the profile changed under the running browser (%s): it could have made Chromium load code or keep session data; the browser was killed, and %s", t, nothing)
	}
	c, err := checkBrowser(b.PID(), h.o.Chromium, os.Geteuid() == 0, mappings)
	if err != nil {
		return wire.Errorf(wire.CodeBrowserFailed, "the browser's processes could not be checked (%w); %s", err, nothing)
	}
	if len(c.Strays) > 0 {
		h.o.Log.Error("processes of the headless group outside the browser; killing them and the browser", "found", strings.Join(c.StrayWhat, ", "))
		killAll(c.Strays)
		killBrowser(b)
		return wire.Errorf(wire.CodeBrowserTampered, "%s of yours ran with the browser's group outside the browser (%s): it could read the browser's memory, so it and the browser were killed, and %s", plural(len(c.Strays), "a process", "processes"), strings.Join(c.StrayWhat, ", "), nothing)
	}
	if c.Exposed != 0 {
		h.o.Log.Error("browser memory open to the user's processes; nothing released", "pid", c.Exposed)
		return wire.Errorf(wire.CodeBrowserExposed, "the memory of browser process %d can be read by any process of yours, so a password typed into a page could be read back out of it; %s", c.Exposed, nothing)
	}
	if c.Foreign != "" {
		h.o.Log.Error("foreign code in the browser; killing it", "found", c.Foreign)
		killBrowser(b)
		return wire.Errorf(wire.CodeBrowserTampered, "the browser runs code that is not a root-owned system file: %s; it was killed, and %s", c.Foreign, nothing)
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// killBrowser kills the browser and every process of its tree: Chromium's sandboxed children
// are not all in its process group, and left over they would keep the headless group.
func killBrowser(b *cdp.Browser) {
	pids, _ := tree(b.PID())
	b.Kill()
	killAll(pids[min(1, len(pids)):])
}

func killAll(pids []int) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// sweepStrays kills, before a launch, every process of the user that runs with the host's
// group outside any browser of this host (strays): what a browser that crashed left, or what
// a program of the agent's made run with the group. An error leaves Chromium unlaunched.
func (h *Host) sweepStrays() error {
	pids, what, err := strays()
	if err != nil {
		return err
	}
	if len(pids) > 0 {
		h.o.Log.Warn("processes of the headless group outside any browser; killed before the launch", "found", strings.Join(what, ", "))
		killAll(pids)
	}
	return nil
}
