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
// approve or skip presence. Providers never see a password value.
//
// # Not guaranteed
//
// The pinentry provider shows a dialog that any same-user process could answer (an X11 client,
// a process writing to the same terminal). The prompt names the requesting process so that the
// person can notice a request they did not expect.
package presence

import (
	"context"
	"errors"
	"fmt"
)

// Denials. Every failure of a provider is one of these (possibly wrapped).
var (
	ErrDenied      = errors.New("presence denied")
	ErrTimeout     = errors.New("presence prompt timed out")
	ErrUnavailable = errors.New("presence unavailable")
)

// Request describes one release for the person to judge. Every field is shown in the prompt.
type Request struct {
	Origin  string
	Account string
	Alias   string
	Session string
	PID     int    // requesting process, from SO_PEERCRED
	Exe     string // its executable, from /proc/PID/exe ("" when unknown)
}

// Description is the text a prompt shows for r.
func (r Request) Description() string {
	exe := r.Exe
	if exe == "" {
		exe = "unknown executable"
	}
	return fmt.Sprintf("Release the saved password for %q at %s (alias %q) to browser session %q?\n"+
		"Requested by pid %d (%q).", r.Account, r.Origin, r.Alias, r.Session, r.PID, exe)
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
// this build does not have). Every request is ErrUnavailable.
type Unavailable struct{ Provider, Reason string }

var _ Provider = Unavailable{}

func (u Unavailable) Name() string { return u.Provider }

func (u Unavailable) Do(context.Context, Request, func(context.Context) error) error {
	return fmt.Errorf("%w: %s", ErrUnavailable, u.Reason)
}

// None is the provider used when none is configured: every request is ErrUnavailable.
type None struct{}

var _ Provider = None{}

func (None) Name() string { return "none" }

func (None) Do(ctx context.Context, r Request, use func(context.Context) error) error {
	return fmt.Errorf("%w: no presence provider is configured", ErrUnavailable)
}
