// Package presence asks the person at the machine whether a saved password may be released.
//
// # Security contract
//
// A [Provider] answers allow or deny for one [Request]. Only an explicit allow runs the
// caller's use function; an error, a timeout, a dismissed or crashed prompt, garbage from the
// prompt program or a missing display is a denial ([ErrDenied], [ErrTimeout], [ErrUnavailable]).
// The use function is where the vault is read, so nothing is read before presence is granted;
// a provider such as the secret-service one (credentials in a locked collection, unlocked by the
// keyring's own prompt for exactly the duration of use) fits the same shape.
//
// Providers are chosen only in the user-only config file; no environment variable or flag can
// approve or skip presence. Providers never see a password value. The passphrase provider
// ([Passphrase]) does see the person's passphrase, which seals the passwords: it is read from
// the pinentry over a socket pair into a buffer of fixed capacity, handed to the caller's
// check and zeroed; and it is asked only of a pinentry whose memory no process of the user's
// can read ([PinentryOptions].Exposed, which brokerd sets), so that it cannot be read back
// out of the program it was typed into.
//
// # Not guaranteed
//
// The pinentry provider shows a dialog that any same-user process could answer (an X11 client,
// a process writing to the same terminal). The prompt names the requesting process (the host),
// the page, the field and the agent behind the request (as the host reports them), and a
// loopback origin's listener, so that the person can notice a request they did not expect; its
// first line warns of a sign-in form at a path where the credential was not used before
// ([Request.KnownPaths]) and of a loopback site the agent started ([Request.AgentSite]). The
// secret-service provider's dialog is gnome-keyring's own and shows none of it: gnome-keyring
// 42.1 shows only the collection's label (which cannot be changed while it is locked) and
// drops the caller's window id.
package presence

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/wire"
)

// Denials. Every failure of a provider is one of these (possibly wrapped).
var (
	ErrDenied      = wire.Sentinel(wire.CodePresenceDenied, "presence denied")
	ErrTimeout     = wire.Sentinel(wire.CodePresenceTimeout, "presence prompt timed out")
	ErrUnavailable = wire.Sentinel(wire.CodePresenceUnavail, "presence unavailable")
)

// Request describes one release for the person to judge. Every set field is shown in the
// prompt.
type Request struct {
	Origin  string
	Account string
	Alias   string
	Session string
	PID     int    // requesting process, from SO_PEERCRED (the browser host)
	Exe     string // its executable ("" when unknown)
	// Host is true when the requester is the browser host brokerd started (always, for a
	// release that reaches presence).
	Host bool
	// Verify marks a 'credentials verify': the host receives the password and zeroes it,
	// nothing is typed anywhere.
	Verify bool
	// As reported by the host: the page path (no query; for Basic, the path and query of
	// the one request the Authorization header goes to), the password field's label (for
	// Basic, the server's challenge), and the agent behind the request (the control-socket
	// peer, then its ancestors).
	Path  string
	Field string
	Agent []procstat.Proc
	// Client is what the agent's client says it is (an MCP client's name and version): shown
	// as self-reported, never as an identity.
	Client string
	// Listener names the process listening on a loopback origin's port.
	Listener string
	// Code: the release includes the current one-time code of the credential's TOTP seed
	// (the seed itself never leaves brokerd).
	Code bool
	// CodeOnly: step-up; only the one-time code is released, never the password.
	CodeOnly bool
	// Basic: the password answers one HTTP Basic authentication challenge of the origin.
	Basic bool
	// Passkey: the credential is a passkey, used for one WebAuthn ceremony of the page (its
	// private key is added to the session's virtual authenticator and removed after it).
	Passkey bool
	// Save: not a release but a credential being saved (typed by the person at the CLI's
	// terminal), to be sealed with the passphrase asked for.
	Save bool
	// KnownPaths, for a form sign-in at a Path that is not one of the credential's known
	// sign-in paths (brokerd asks only when the host said the person may allow a new one),
	// are the known ones: the prompt's first line says this is not where they signed in.
	KnownPaths []string
	// AlsoOrigins are the other origins the person named at enrolment that this sign-in may
	// send the password to: one line names them.
	AlsoOrigins []string
	// FirstLogin: the credential has no known sign-in path yet; the page path of this
	// sign-in is remembered when it ends authenticated (one line says so).
	FirstLogin bool
	// AgentSite, when its PID is set, is the process serving the loopback origin, which the
	// agent asking started (it or one of its ancestors is in Agent): the prompt's first line
	// says so.
	AgentSite procstat.Proc
	// Handover: not a release but the agent asking the person to act in browser session
	// Session (Reason: the agent's words; Path and Title: the page's URL and title, as the
	// host reports them) and to say when they are done. NoWindow: the browser shows no
	// window, so the person can act only elsewhere (another device). Allow is Done.
	Handover bool
	Reason   string
	Title    string
	NoWindow bool
	// Wait, when set, bounds the prompt instead of the provider's own timeout (a
	// hand-over's is longer than a release's).
	Wait time.Duration
	// File, when set, makes this no release: a file a person's command staged for uploads, to
	// be approved (the prompt names it, its size and SHA-256, and the path it was read from as
	// the requester reports it; Agent is then the requester's ancestors).
	File *File
}

// File is a file to approve for uploads ([Request.File]).
type File struct {
	Name   string
	Size   int64
	SHA256 string
	Source string
}

// fileDescription is the prompt's text for a file approval.
func (r Request) fileDescription() string {
	f := r.File
	var b strings.Builder
	fmt.Fprintf(&b, "Add the file %q (%d bytes, SHA-256 %s) to headless's upload store?\n"+
		"Any agent using headless can then attach it to a file input of any page it opens, and that page's site receives it.", f.Name, f.Size, f.SHA256)
	if f.Source != "" {
		fmt.Fprintf(&b, "\nRead from %q (as reported by the requester).", f.Source)
	}
	if len(r.Agent) > 0 {
		fmt.Fprintf(&b, "\nRun from %s.", procstat.Describe(r.Agent))
	}
	exe := cmp.Or(r.Exe, "unknown executable")
	fmt.Fprintf(&b, "\nRequested by pid %d (%q).", r.PID, exe)
	return b.String()
}

// who names r's account for a prompt: quoted, or, for a credential saved without one (a
// sign-in with a password alone), says so.
func (r Request) who() string {
	if r.Account == "" {
		return "no account (a sign-in with a password only)"
	}
	return strconv.Quote(r.Account)
}

// Description is the text a prompt shows for r.
func (r Request) Description() string {
	if r.File != nil {
		return r.fileDescription()
	}
	exe := r.Exe
	if exe == "" {
		exe = "unknown executable"
	}
	var b strings.Builder
	if r.Handover {
		r.handover(&b)
		fmt.Fprintf(&b, "\nRequested by pid %d (%q), the browser host.", r.PID, exe)
		return b.String()
	}
	// The warnings come first: what the person must not miss.
	if len(r.KnownPaths) > 0 {
		fmt.Fprintf(&b, "NOT WHERE YOU SIGNED IN BEFORE: this sign-in form is at %q; alias %q signed in at %s before.\n", r.Path, r.Alias, QuoteList(r.KnownPaths))
	}
	if r.AgentSite.PID > 0 {
		name := cmp.Or(r.AgentSite.Comm, r.AgentSite.Exe, "unknown")
		fmt.Fprintf(&b, "THE AGENT STARTED THIS SITE: %s is served by pid %d (%q), a process started by the agent asking.\n", r.Origin, r.AgentSite.PID, name)
	}
	if r.FirstLogin {
		fmt.Fprintf(&b, "NO SIGN-IN PAGE WAS SET FOR THIS CREDENTIAL: page %q, which the agent chose, will be remembered as its sign-in page. Approve only if it is the site's own sign-in page.\n", r.Path)
	}
	what := "password"
	if r.Passkey {
		what = "passkey"
	}
	if r.Save {
		fmt.Fprintf(&b, "Save the "+what+" sent by the requester below for %s at %s as alias %q", r.who(), r.Origin, r.Alias)
		if r.Session != "" {
			fmt.Fprintf(&b, " (in isolated session %q only)", r.Session)
		}
		b.WriteString(", sealed with your headless passphrase?")
	} else if r.Verify {
		fmt.Fprintf(&b, "Verify that the saved password for %s at %s (alias %q) can be released?\n"+
			"This is a check only: nothing will be typed anywhere; the browser host receives the password and zeroes it at once.", r.who(), r.Origin, r.Alias)
	} else if r.Passkey {
		fmt.Fprintf(&b, "Use the saved passkey for %s at %s (alias %q) in browser session %q, for one sign-in of that page (the site's passkey request is answered once; the key never leaves headless)?", r.who(), r.Origin, r.Alias, r.Session)
	} else if r.CodeOnly {
		fmt.Fprintf(&b, "Release only the one-time code (not the password) for %s at %s (alias %q) to browser session %q, for a verification step of a signed-in page?", r.who(), r.Origin, r.Alias, r.Session)
	} else {
		if r.Code {
			what = "password and one-time code"
		}
		how := ""
		if r.Basic {
			how = " for HTTP Basic authentication (this session's requests to that origin's protection space)"
		}
		fmt.Fprintf(&b, "Release the saved %s for %s at %s (alias %q) to browser session %q%s?", what, r.who(), r.Origin, r.Alias, r.Session, how)
	}
	switch {
	case r.Path == "" && r.Field == "":
	case r.Basic && r.Field != "":
		fmt.Fprintf(&b, "\nThe Authorization header goes with this session's requests to the protection space of %q; the challenge: %q (as reported by the host).", r.Path, r.Field)
	case r.Basic:
		fmt.Fprintf(&b, "\nThe Authorization header goes with this session's requests to the protection space of %q (as reported by the host).", r.Path)
	default:
		fmt.Fprintf(&b, "\nPage %q, field %q (as reported by the host).", r.Path, r.Field)
	}
	if len(r.AlsoOrigins) > 0 && !r.Save {
		fmt.Fprintf(&b, "\nThe sign-in may also send it to %s (you named them when you saved it).", QuoteList(r.AlsoOrigins))
	}
	if r.Listener != "" {
		fmt.Fprintf(&b, "\nOn this machine: %s.", r.Listener)
	}
	if len(r.Agent) > 0 {
		fmt.Fprintf(&b, "\nAsked by %s (as reported by the host).", procstat.Describe(r.Agent))
	}
	if r.Client != "" {
		fmt.Fprintf(&b, "\nThe agent's client calls itself %q (self-reported, not verified).", r.Client)
	}
	role := ""
	if r.Host {
		role = ", the browser host"
	}
	fmt.Fprintf(&b, "\nRequested by pid %d (%q)%s.", r.PID, exe, role)
	return b.String()
}

// handover is the text of a hand-over's prompt: what the agent asks, in its own words (quoted:
// they are the agent's, not headless's), where, and who asks.
func (r Request) handover(b *strings.Builder) {
	if r.NoWindow {
		fmt.Fprintf(b, "The agent asks you to act for browser session %q, which has no window here (the browser runs without a display): %q.\n"+
			"Do it elsewhere (on another device, say), then press Done; Decline if you will not.", r.Session, r.Reason)
	} else {
		fmt.Fprintf(b, "The agent asks you to act in browser session %q (its window is in front, titled %q or, isolated, with the page's title below): %q.\n"+
			"Press Done when you are done; Decline if you will not. Until then the agent cannot use that session.", r.Session, r.Session, r.Reason)
	}
	fmt.Fprintf(b, "\nPage %q, titled %q (as reported by the host).", r.Path, r.Title)
	if len(r.Agent) > 0 {
		fmt.Fprintf(b, "\nAsked by %s (as reported by the host).", procstat.Describe(r.Agent))
	}
	if r.Client != "" {
		fmt.Fprintf(b, "\nThe agent's client calls itself %q (self-reported, not verified).", r.Client)
	}
}

// QuoteList lists items quoted (Go syntax), for a prompt or a message: "a"; "a" or "b";
// "a", "b" or "c".
func QuoteList(items []string) string {
	q := make([]string, len(items))
	for i, it := range items {
		q[i] = strconv.Quote(it)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// Provider asks for presence.
type Provider interface {
	// Name is the provider's config name ("pinentry", "none", ...).
	Name() string
	// Do asks the person about r and, only if they allow it, calls use and returns its error.
	// Otherwise it returns an error wrapping ErrDenied, ErrTimeout or ErrUnavailable and does
	// not call use. Do honours ctx.
	Do(ctx context.Context, r Request, use func(ctx context.Context) error) error
}

// Unavailable is a provider that cannot ask anyone, for a stated reason (for example a provider
// this build does not have). Every request is ErrUnavailable, with Hint when set (what to do about
// Reason, instead of the code's general hint).
type Unavailable struct{ Provider, Reason, Hint string }

var _ Provider = Unavailable{}

func (u Unavailable) Name() string { return u.Provider }

func (u Unavailable) Do(context.Context, Request, func(context.Context) error) error {
	return unavailable(u.Reason, u.Hint)
}

// unavailable is ErrUnavailable for reason, with hint when there is one.
func unavailable(reason, hint string) error {
	if hint == "" {
		return fmt.Errorf("%w: %s", ErrUnavailable, reason)
	}
	return wire.Errorf(wire.CodePresenceUnavail, "%w: %s", ErrUnavailable, reason).WithHint(hint)
}

// UnavailablePassphrase stands for a passphrase provider that cannot ask (its program was
// refused): every request and every passphrase prompt is ErrUnavailable with Reason. Unlike
// [Unavailable] it has [Passphrase]'s Ask, so that a credential is never saved unsealed for
// want of a prompt.
type UnavailablePassphrase struct{ Reason, Hint string }

var _ Provider = UnavailablePassphrase{}

func (u UnavailablePassphrase) Name() string { return "passphrase" }

func (u UnavailablePassphrase) Do(context.Context, Request, func(context.Context) error) error {
	return unavailable(u.Reason, u.Hint)
}

// Ask refuses, calling nothing.
func (u UnavailablePassphrase) Ask(context.Context, Request, bool, func([]byte) error) error {
	return unavailable(u.Reason, u.Hint)
}

// None is the provider used when none is configured: every request is ErrUnavailable.
type None struct{}

var _ Provider = None{}

func (None) Name() string { return "none" }

func (None) Do(ctx context.Context, r Request, use func(context.Context) error) error {
	return fmt.Errorf("%w: no presence provider is configured", ErrUnavailable)
}
