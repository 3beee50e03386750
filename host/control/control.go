// Package control is control.sock's protocol — the browser host's method names, their params
// and results — and a typed client for it: the agent-facing surface of headless that the CLI
// and the MCP server are built on. The host's server (package host) decodes into the same
// types.
//
// # Security contract
//
//   - Nothing here carries a password to the caller: no result type has a secret field, and no
//     method evaluates caller JavaScript. Page-derived text in results (titles, outlines,
//     evidence) is untrusted data.
//   - The two requests that carry a person's password to the host (auth.enroll and
//     credentials.add, both typed at the person's terminal) are built by hand into one frame
//     that is zeroed after writing ([Client.Enroll], [Client.CredentialsAdd]): no JSON encoder
//     buffer holds the secret. The host accepts them only from a peer with a controlling
//     terminal.
//   - The socket is control.sock in the private runtime dir (0700, socket 0600, the peer's uid
//     checked by the kernel on every connection; package rpc).
//
// # Errors
//
// Every error a [Client] returns has a wire code (wire.CodeOf is never ""): the host's own
// (SESSION_UNKNOWN, REF_STALE, …) as a *wire.Error, or HOST_UNAVAILABLE (errors.Is
// [ErrUnavailable]) for every failure of the socket itself: nothing listens, the host went
// away mid-call, the reply was malformed, or the caller's context ended before the host
// answered. A control-socket failure is never BROKER_UNAVAILABLE.
package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"

	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/internal/xdg"
)

// ErrUnavailable is in the chain of every failure to reach the host (HOST_UNAVAILABLE).
var ErrUnavailable = wire.Sentinel(wire.CodeHostUnavail, "browser host unreachable")

// errNoAnswer is the caller's deadline (or cancellation) passing before the host answered.
var errNoAnswer = wire.SentinelHint(wire.CodeHostUnavail, "the browser host did not answer in time",
	"'headless status' shows whether the host runs; host.log in the runtime dir says what it was doing")

// Client is one connection to the browser host. Calls are serialised; use one Client per
// goroutine for concurrency.
type Client struct {
	rc *rpc.Client
}

// Dial connects to the host's control.sock in layout's runtime dir.
func Dial(ctx context.Context, layout xdg.Layout) (*Client, error) {
	rc, err := rpc.Dial(ctx, layout.ControlSocket(), ErrUnavailable)
	if err != nil {
		return nil, unavailable(err)
	}
	return &Client{rc}, nil
}

// NewClient wraps an established connection to a control socket (tests use net.Pipe).
func NewClient(c net.Conn) *Client { return &Client{rpc.NewClient(c, ErrUnavailable)} }

// Close closes the connection.
func (c *Client) Close() error { return c.rc.Close() }

// unavailable gives every failure of the socket its code: HOST_UNAVAILABLE.
func unavailable(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return &noAnswer{err}
	case wire.CodeOf(err) == "":
		return fmt.Errorf("%w: %w", ErrUnavailable, err) // a result of the wrong shape, say
	}
	return err
}

// noAnswer is the caller's deadline or cancellation passing before the host answered:
// errNoAnswer (its code and hint), ErrUnavailable and the context's error.
type noAnswer struct{ ctxErr error }

func (e *noAnswer) Error() string   { return errNoAnswer.Error() + " (" + e.ctxErr.Error() + ")" }
func (e *noAnswer) Unwrap() []error { return []error{errNoAnswer, ErrUnavailable, e.ctxErr} }

func call[R any](ctx context.Context, c *Client, method string, params any) (R, error) {
	var r R
	err := c.rc.Call(ctx, method, params, &r)
	return r, unavailable(err)
}

// Ping checks that the host answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := call[struct{}](ctx, c, MethodPing, nil)
	return err
}

// Hello tells the host what this connection's client says it is (an MCP client's name and
// version): cut to MaxClientName and MaxClientVersion, shown in the person's prompt and the
// audit as self-reported.
func (c *Client) Hello(ctx context.Context, name, version string) error {
	_, err := call[struct{}](ctx, c, MethodClientHello, ClientHelloParams{Name: name, Version: version})
	return err
}

// Status reports the host, its browser and its profile.
func (c *Client) Status(ctx context.Context) (Status, error) {
	return call[Status](ctx, c, MethodStatus, nil)
}

// Shutdown asks the host to close its browser gracefully and exit.
func (c *Client) Shutdown(ctx context.Context) (ShutdownResult, error) {
	return call[ShutdownResult](ctx, c, MethodShutdown, nil)
}

// SessionCreate opens a session (an isolated one with its own cookies, storage and
// credential store).
func (c *Client) SessionCreate(ctx context.Context, p CreateParams) (SessionInfo, error) {
	return call[SessionInfo](ctx, c, MethodSessionCreate, p)
}

// Sessions lists the sessions.
func (c *Client) Sessions(ctx context.Context) (SessionList, error) {
	return call[SessionList](ctx, c, MethodSessionList, nil)
}

// Session describes the session name (SESSION_UNKNOWN when there is none).
func (c *Client) Session(ctx context.Context, name string) (SessionInfo, error) {
	if name == "" {
		name = DefaultSession
	}
	l, err := c.Sessions(ctx)
	if err != nil {
		return SessionInfo{}, err
	}
	for _, s := range l.Sessions {
		if s.Name == name {
			return s, nil
		}
	}
	return SessionInfo{}, wire.Errorf(wire.CodeSessionUnknown, "no session %q", name)
}

// SessionClose closes a session; an isolated one's browser context and store go with it.
func (c *Client) SessionClose(ctx context.Context, name string) (SessionClosed, error) {
	return call[SessionClosed](ctx, c, MethodSessionClose, CloseParams{Name: name})
}

// Visit navigates a session (http and https only) and waits for the page to load.
func (c *Client) Visit(ctx context.Context, p VisitParams) (PageResult, error) {
	return call[PageResult](ctx, c, MethodVisit, p)
}

// Snapshot returns a bounded outline of a session's page with refs for click and fill.
func (c *Client) Snapshot(ctx context.Context, session string) (SnapshotResult, error) {
	return call[SnapshotResult](ctx, c, MethodSnapshot, SessionParams{Session: session})
}

// Click clicks the element of a ref from the session's last snapshot (or double or right
// clicks it).
func (c *Client) Click(ctx context.Context, p ClickParams) (PageResult, error) {
	return call[PageResult](ctx, c, MethodClick, p)
}

// Forward goes one step forward in the session's history (NO_HISTORY when there is none).
func (c *Client) Forward(ctx context.Context, session string) (PageResult, error) {
	return call[PageResult](ctx, c, MethodForward, SessionParams{Session: session})
}

// Reload loads the session's page again and waits for it.
func (c *Client) Reload(ctx context.Context, session string) (PageResult, error) {
	return call[PageResult](ctx, c, MethodReload, SessionParams{Session: session})
}

// Dialog answers the dialog open on the session's page: accept (a prompt with p.Text) or
// dismiss.
func (c *Client) Dialog(ctx context.Context, p DialogParams) (PageResult, error) {
	return call[PageResult](ctx, c, MethodDialog, p)
}

// Pages lists the session's windows: its own page and those its pages opened.
func (c *Client) Pages(ctx context.Context, session string) (PageList, error) {
	r, err := call[PageList](ctx, c, MethodSessionPages, SessionParams{Session: session})
	if err == nil && r.Pages == nil {
		r.Pages = []PageInfo{}
	}
	return r, err
}

// PageSelect makes a window of the session the page its verbs drive.
func (c *Client) PageSelect(ctx context.Context, p PageSelectParams) (PageResult, error) {
	return call[PageResult](ctx, c, MethodPageSelect, p)
}

// Fill types text into the element of a ref (never a password field).
func (c *Client) Fill(ctx context.Context, p FillParams) (FillResult, error) {
	return call[FillResult](ctx, c, MethodFill, p)
}

// Press sends one key to the focused element (with p.Ref, to that element, focused first).
func (c *Client) Press(ctx context.Context, p PressParams) (PageResult, error) {
	return call[PageResult](ctx, c, MethodPress, p)
}

// Wait waits until every condition p names holds: the page's text contains (or no longer
// contains) a string, its URL contains one, an element of the last snapshot is visible.
func (c *Client) Wait(ctx context.Context, p WaitParams) (PageResult, error) {
	return call[PageResult](ctx, c, MethodWait, p)
}

// Screenshot writes a PNG of the session's viewport (or of an element's box, or of the whole
// page) to the private artifact store.
func (c *Client) Screenshot(ctx context.Context, p ScreenshotParams) (ScreenshotResult, error) {
	return call[ScreenshotResult](ctx, c, MethodScreenshot, p)
}

// Back goes one step back in the session's history (NO_HISTORY when there is none) and waits
// for the page.
func (c *Client) Back(ctx context.Context, session string) (PageResult, error) {
	return call[PageResult](ctx, c, MethodBack, SessionParams{Session: session})
}

// Select selects options of a native <select> by value or label.
func (c *Client) Select(ctx context.Context, p SelectParams) (SelectResult, error) {
	r, err := call[SelectResult](ctx, c, MethodSelect, p)
	if err == nil && r.Selected == nil {
		r.Selected = []string{}
	}
	return r, err
}

// Hover moves the mouse over the centre of the element of a ref.
func (c *Client) Hover(ctx context.Context, p RefParams) (HoverResult, error) {
	return call[HoverResult](ctx, c, MethodHover, p)
}

// Scroll scrolls an element into view, or the page (or a box) with the mouse wheel.
func (c *Client) Scroll(ctx context.Context, p ScrollParams) (ScrollResult, error) {
	return call[ScrollResult](ctx, c, MethodScroll, p)
}

// ProfileClear closes every session, clears the durable profile and recreates the default
// session; saved credentials are kept.
func (c *Client) ProfileClear(ctx context.Context) (ClearResult, error) {
	return call[ClearResult](ctx, c, MethodProfileClear, nil)
}

// AuthLogin signs a session in with a saved credential's alias: brokerd asks the person, and
// the host types the password into the verified field. The caller never sees it.
func (c *Client) AuthLogin(ctx context.Context, p AuthParams) (AuthResult, error) {
	return call[AuthResult](ctx, c, MethodAuthLogin, p)
}

// Handover asks the person to act in the session's window, and returns when they are done,
// declined, or the prompt's bound passed.
func (c *Client) Handover(ctx context.Context, p HandoverParams) (HandoverResult, error) {
	return call[HandoverResult](ctx, c, MethodHandover, p)
}

// EnrollSave saves the password an authenticated interactive login holds under token.
func (c *Client) EnrollSave(ctx context.Context, p EnrollSaveParams) (EnrollSaved, error) {
	return call[EnrollSaved](ctx, c, MethodAuthEnrollSave, p)
}

// EnrollDiscard zeroes the password an interactive login holds under token.
func (c *Client) EnrollDiscard(ctx context.Context, token string) (EnrollDiscarded, error) {
	return call[EnrollDiscarded](ctx, c, MethodAuthEnrollDiscard, EnrollTokenParams{Token: token})
}

// CredentialsList lists an isolated session's in-memory store (brokerd keeps it; it answers
// only the host's own connection).
func (c *Client) CredentialsList(ctx context.Context, p CredentialsListParams) (CredentialList, error) {
	r, err := call[CredentialList](ctx, c, MethodCredentialsList, p)
	if err == nil && r.Credentials == nil {
		r.Credentials = []Credential{}
	}
	return r, err
}

// CredentialsRemove removes a credential from an isolated session's store.
func (c *Client) CredentialsRemove(ctx context.Context, p CredentialsRemoveParams) error {
	_, err := call[struct{}](ctx, c, MethodCredentialsRemove, p)
	return err
}

// CredentialsVerify takes the vault credential through the whole release gate with the host
// as the receiver (a presence prompt says nothing will be typed); the host zeroes it unseen.
func (c *Client) CredentialsVerify(ctx context.Context, p VerifyParams) (VerifyResult, error) {
	return call[VerifyResult](ctx, c, MethodCredentialsVerify, p)
}

// Enroll sends an interactive login's account and password (read from the person's terminal)
// as one hand-built frame, zeroed after writing; secret stays the caller's to zero.
func (c *Client) Enroll(ctx context.Context, session, account string, secret []byte) (EnrollResult, error) {
	return secretCall[EnrollResult](ctx, c, MethodAuthEnroll, struct {
		Session string `json:"session"`
		Account string `json:"account"`
	}{session, account}, secret)
}

// CredentialsAdd saves a credential into an isolated session's store: the password (read from
// the person's terminal) travels in one hand-built frame, zeroed after writing; secret stays
// the caller's to zero.
func (c *Client) CredentialsAdd(ctx context.Context, session, origin, account, alias string, loginPaths, also []string, secret []byte) (Credential, error) {
	return secretCall[Credential](ctx, c, MethodCredentialsAdd, struct {
		Session     string   `json:"session"`
		Origin      string   `json:"origin"`
		Account     string   `json:"account"`
		Alias       string   `json:"alias"`
		LoginPaths  []string `json:"login_paths,omitempty"`
		AlsoOrigins []string `json:"also_origins,omitempty"`
	}{session, origin, account, alias, loginPaths, also}, secret)
}

// CredentialsAddPasskey waits for the site's passkey registration in a session and saves it.
func (c *Client) CredentialsAddPasskey(ctx context.Context, p PasskeyAddParams) (Credential, error) {
	return call[Credential](ctx, c, MethodCredentialsAddPasskey, p)
}

// secretCall sends one request whose params are meta plus "secret", built by hand
// (brokerapi.SecretRequestFrame) and zeroed after writing, and decodes the reply.
func secretCall[R any](ctx context.Context, c *Client, method string, meta any, secret []byte) (R, error) {
	var zero R
	id, unlock := c.rc.Lock()
	defer unlock()
	frame, err := brokerapi.SecretRequestFrame(id, method, meta, secret)
	if err != nil {
		return zero, err
	}
	resp, err := c.rc.RoundTrip(ctx, id, frame)
	clear(frame)
	if err != nil {
		return zero, unavailable(err)
	}
	defer clear(resp)
	var r struct {
		ID     uint64          `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *wire.Error     `json:"error"`
	}
	if err := wire.DecodeStrict(resp, &r); err != nil {
		return zero, c.rc.Unreachable(fmt.Errorf("malformed reply: %w", err))
	}
	if r.Error != nil {
		return zero, r.Error
	}
	var out R
	if len(r.Result) == 0 || json.Unmarshal(r.Result, &out) != nil {
		return zero, c.rc.Unreachable(errors.New("empty or malformed result"))
	}
	return out, nil
}
