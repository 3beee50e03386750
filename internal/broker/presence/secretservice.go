package presence

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

// ErrAutoUnlock: the keyring would unlock the credentials' collection without asking anyone,
// because it stores that collection's password for automatic unlock. Nothing is released.
var ErrAutoUnlock = wire.Sentinel(wire.CodePresenceAutoUnlock, "the keyring unlocks the headless collection without asking")

// Keyring is the dedicated collection the secret-service provider keeps locked at rest
// (vault.SecretService opened with a Label implements it).
type Keyring interface {
	// Create makes the collection when it does not exist; the keyring asks the person for
	// its new password with its own prompt. It is left unlocked.
	Create(ctx context.Context) (created bool, err error)
	// Locked reports whether the collection is locked (vault.ErrNoKeyring when it does not
	// exist).
	Locked(ctx context.Context) (bool, error)
	Lock(ctx context.Context) error
	// Unlock shows the keyring's own unlock prompt and waits for the answer until ctx ends
	// (vault.ErrLocked when dismissed or abandoned). An abandoned prompt is never dismissed.
	// prompted is false when the service unlocked without a prompt.
	Unlock(ctx context.Context) (prompted bool, err error)
	// Idle is closed while no abandoned unlock prompt is still open.
	Idle() <-chan struct{}
	AutoUnlockStored(ctx context.Context) (bool, error)
	// ChangePassword has the keyring change the collection's password through its own
	// prompt (the person types the old and the new one there).
	ChangePassword(ctx context.Context) error
	SystemPrompter(ctx context.Context) (owned, activatable bool, err error)
}

// SecretServiceOptions configure NewSecretService.
type SecretServiceOptions struct {
	Keyring Keyring
	// Timeout bounds the wait for the unlock window and the person's answer.
	Timeout time.Duration
	// Display reports that a graphical session is there to show an activated prompter
	// (DISPLAY or WAYLAND_DISPLAY is set in brokerd's environment).
	Display bool
	// LockTimeout bounds the Lock that ends every window (default 5 s).
	LockTimeout time.Duration
}

// SecretService is the "secret-service" provider. Credentials live in a dedicated collection
// that is locked at rest. Presence is the person typing that collection's password into the
// keyring's own system prompt, which no process of theirs can do without knowing it:
//
//  1. one window at a time (later releases wait, bounded by Timeout); while an earlier,
//     abandoned prompt is still open in the keyring the window is not given out, since the
//     keyring queues every unlock behind it;
//  2. refuse (ErrAutoUnlock) when the keyring stores the collection's password for automatic
//     unlock: an unlock would then succeed with nobody asked;
//  3. lock the collection (someone may have unlocked it), then unlock it through the prompt;
//     no answer within Timeout is ErrTimeout, a dismissed prompt ErrDenied;
//  4. refuse again if the answer left "automatically unlock" ticked;
//  5. run use (the vault read), then lock at once: on every path, and a failed lock fails
//     the request.
type SecretService struct {
	o      SecretServiceOptions
	window chan struct{}
}

var _ Provider = (*SecretService)(nil)

// NewSecretService returns the provider.
func NewSecretService(o SecretServiceOptions) *SecretService {
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = 5 * time.Second
	}
	return &SecretService{o: o, window: make(chan struct{}, 1)}
}

func (p *SecretService) Name() string { return "secret-service" }

// Do implements Provider: use runs only while the collection is unlocked by the person.
func (p *SecretService) Do(ctx context.Context, r Request, use func(context.Context) error) error {
	if r.Wait > 0 {
		// A hand-over's prompt: the person types the keyring's password to say Done.
		q := *p
		q.o.Timeout = r.Wait
		return q.unlocked(ctx, false, use)
	}
	return p.unlocked(ctx, false, use)
}

// Unlocked runs use while the collection is unlocked by the person, as Do does; writes to the
// vault (add, remove) need it. With create, a missing collection is created first (the
// keyring asks for the new password), which is the person's answer for this request.
func (p *SecretService) Unlocked(ctx context.Context, create bool, use func(context.Context) error) error {
	return p.unlocked(ctx, create, use)
}

// Init creates the collection when it does not exist and leaves it locked.
func (p *SecretService) Init(ctx context.Context) (created bool, err error) {
	tctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	if err := p.enter(tctx, ctx); err != nil {
		return false, err
	}
	defer func() { <-p.window }()
	if err := p.prompterAvailable(tctx); err != nil {
		return false, err
	}
	created, err = p.o.Keyring.Create(tctx)
	if err != nil {
		return false, p.promptErr(ctx, tctx, "create the headless keyring", err)
	}
	return created, p.lock()
}

func (p *SecretService) unlocked(ctx context.Context, create bool, use func(context.Context) error) (err error) {
	tctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	if err := p.enter(tctx, ctx); err != nil {
		return err
	}
	defer func() { <-p.window }()
	if err := p.prompterAvailable(tctx); err != nil {
		return err
	}
	if stored, err := p.o.Keyring.AutoUnlockStored(tctx); err != nil {
		return vaultErr("check for a stored auto-unlock password", err)
	} else if stored {
		return ErrAutoUnlock
	}
	// From here on the collection may be unlocked: lock it on every path.
	defer func() {
		if lerr := p.lock(); lerr != nil && err == nil {
			err = lerr
		}
	}()
	err = p.o.Keyring.Lock(tctx)
	switch {
	case create && errors.Is(err, vault.ErrNoKeyring):
		if _, err := p.o.Keyring.Create(tctx); err != nil {
			return p.promptErr(ctx, tctx, "create the headless keyring", err)
		}
	case err != nil:
		// vault.ErrNoKeyring, vault.ErrUnavailable: the vault's own codes say it best.
		return vaultErr("lock the headless keyring", err)
	default:
		prompted, err := p.o.Keyring.Unlock(tctx)
		if err != nil {
			return p.promptErr(ctx, tctx, "unlock the headless keyring", err)
		}
		if !prompted {
			return fmt.Errorf("%w: the collection was unlocked without a prompt", ErrAutoUnlock)
		}
	}
	if stored, err := p.o.Keyring.AutoUnlockStored(tctx); err != nil {
		return vaultErr("check for a stored auto-unlock password", err)
	} else if stored {
		return ErrAutoUnlock
	}
	return use(ctx)
}

// Repair is the way out of ErrAutoUnlock ('headless credentials repair'). When the keyring
// stores the collection's password for automatic unlock, the stored copy must go, and the
// password it held may have been read by any program of the person's while it was stored, so:
//
//  1. the keyring changes the collection's password through its own prompt (the person types
//     the old and a new one; they never pass through brokerd);
//  2. the collection is unlocked once through the keyring's unlock prompt: gnome-keyring
//     first tries the stored copy, finds it wrong now and discards it, then asks the person,
//     who types the new password with "Automatically unlock" unticked;
//  3. the collection is locked again, on every path;
//  4. the repair succeeds only if no auto-unlock password is stored afterwards (else
//     ErrAutoUnlock: the new password was the old one, or the box was ticked again).
//
// Nothing is read from the collection. repaired is false when nothing was stored (nobody is
// asked). Only the person at the keyring's prompts can complete it, whoever asks for it.
func (p *SecretService) Repair(ctx context.Context) (repaired bool, err error) {
	tctx, cancel := context.WithTimeout(ctx, 3*p.o.Timeout)
	defer cancel()
	if err := p.enter(tctx, ctx); err != nil {
		return false, err
	}
	defer func() { <-p.window }()
	if stored, err := p.o.Keyring.AutoUnlockStored(tctx); err != nil {
		return false, vaultErr("check for a stored auto-unlock password", err)
	} else if !stored {
		return false, nil
	}
	if err := p.prompterAvailable(tctx); err != nil {
		return false, err
	}
	defer func() {
		if lerr := p.lock(); lerr != nil && err == nil {
			err = lerr
		}
	}()
	if err := p.o.Keyring.Lock(tctx); err != nil {
		return false, vaultErr("lock the headless keyring", err)
	}
	step := func(what string, f func(ctx context.Context) error) error {
		sctx, cancel := context.WithTimeout(tctx, p.o.Timeout)
		defer cancel()
		if err := f(sctx); err != nil {
			if errors.Is(err, vault.ErrUnavailable) && !errors.Is(err, vault.ErrLocked) && sctx.Err() == nil {
				return vaultErr(what, err)
			}
			return p.promptErr(ctx, sctx, what, err)
		}
		return nil
	}
	if err := step("change the headless keyring's password", p.o.Keyring.ChangePassword); err != nil {
		return false, err
	}
	if err := p.o.Keyring.Lock(tctx); err != nil {
		return false, vaultErr("lock the headless keyring", err)
	}
	if err := step("unlock the headless keyring with its new password", func(ctx context.Context) error {
		_, err := p.o.Keyring.Unlock(ctx)
		return err
	}); err != nil {
		return false, err
	}
	if stored, err := p.o.Keyring.AutoUnlockStored(tctx); err != nil {
		return false, vaultErr("check for a stored auto-unlock password", err)
	} else if stored {
		return false, fmt.Errorf("%w: an auto-unlock password is still stored (the new password was the old one, or 'Automatically unlock' was ticked again)", ErrAutoUnlock)
	}
	return true, nil
}

// LockIfUnlocked locks the collection when it is found unlocked outside a window of this
// provider (brokerd calls it at start): a brokerd killed or stopped inside a release's window
// leaves it unlocked, and the keyring's unlock is not per caller, so until it is locked again
// any same-user process reads every credential in it. wasUnlocked reports that it was; a
// missing collection is not an error.
func (p *SecretService) LockIfUnlocked(ctx context.Context) (wasUnlocked bool, err error) {
	tctx, cancel := context.WithTimeout(ctx, p.o.LockTimeout)
	defer cancel()
	select {
	case p.window <- struct{}{}:
	case <-tctx.Done():
		return false, p.waitErr(ctx, "another request holds the unlock window")
	}
	defer func() { <-p.window }()
	locked, err := p.o.Keyring.Locked(tctx)
	if errors.Is(err, vault.ErrNoKeyring) {
		return false, nil
	}
	if err != nil {
		return false, vaultErr("see whether the headless keyring is locked", err)
	}
	if locked {
		return false, nil
	}
	return true, p.lock()
}

// enter takes the unlock window, waiting for it and for abandoned prompts to settle.
func (p *SecretService) enter(tctx, ctx context.Context) error {
	select {
	case p.window <- struct{}{}:
	case <-tctx.Done():
		return p.waitErr(ctx, "another release is waiting for the keyring prompt")
	}
	select {
	case <-p.o.Keyring.Idle():
		return nil
	case <-tctx.Done():
		<-p.window
		return p.waitErr(ctx, "an earlier keyring prompt is still open (answer or cancel it)")
	}
}

func (p *SecretService) waitErr(ctx context.Context, what string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: request cancelled: %s", ErrDenied, what)
	}
	return fmt.Errorf("%w after %v: %s", ErrTimeout, p.o.Timeout, what)
}

// prompterAvailable checks that the keyring has someone to prompt: a running prompter, or
// one the bus can start on a display. Without one the keyring would dismiss at once, which
// is not the person saying no.
func (p *SecretService) prompterAvailable(ctx context.Context) error {
	owned, activatable, err := p.o.Keyring.SystemPrompter(ctx)
	if err != nil {
		return vaultErr("look for the keyring's prompter", err)
	}
	if owned || activatable && p.o.Display {
		return nil
	}
	return fmt.Errorf("%w: the keyring has no prompter to ask the person (%s is not running, and no display to start it on)",
		ErrUnavailable, "org.gnome.keyring.SystemPrompter")
}

// promptErr classifies a failed create or unlock.
func (p *SecretService) promptErr(ctx, tctx context.Context, step string, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%w: request cancelled: %s: %w", ErrDenied, step, err)
	case tctx.Err() != nil:
		return fmt.Errorf("%w after %v: %s: %w", ErrTimeout, p.o.Timeout, step, err)
	case errors.Is(err, vault.ErrLocked):
		return fmt.Errorf("%w: %s: %w", ErrDenied, step, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, step, err)
}

// lock locks the collection with a context of its own (the request's may be over).
func (p *SecretService) lock() error {
	ctx, cancel := context.WithTimeout(context.Background(), p.o.LockTimeout)
	defer cancel()
	err := p.o.Keyring.Lock(ctx)
	if err != nil && !errors.Is(err, vault.ErrNoKeyring) {
		err = p.o.Keyring.Lock(ctx) // one retry: the vault re-makes a dropped connection
	}
	if err != nil && !errors.Is(err, vault.ErrNoKeyring) {
		return fmt.Errorf("%w: lock the headless keyring again: %w", ErrUnavailable, err)
	}
	return nil
}

// vaultErr passes the vault's own classification through (VAULT_NOT_INITIALIZED,
// VAULT_UNAVAILABLE, …); anything else is ErrUnavailable.
func vaultErr(step string, err error) error {
	if errors.Is(err, vault.ErrNoKeyring) || errors.Is(err, vault.ErrUnavailable) || errors.Is(err, vault.ErrLocked) {
		return fmt.Errorf("%s: %w", step, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, step, err)
}
