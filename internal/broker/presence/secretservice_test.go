package presence

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headless-dev/headless/vault"
)

// fakeKeyring records calls and answers as scripted.
type fakeKeyring struct {
	mu        sync.Mutex
	calls     []string
	locked    bool
	exists    bool
	unlock    func(ctx context.Context) error // default: unlocks
	autoAfter bool                            // the unlock stores an auto-unlock password
	auto      bool
	owned     bool
	activ     bool
	lockErr   error
	noPrompt  bool // the service unlocks without a prompt
	idle      chan struct{}
	change    func(ctx context.Context) error // default: the password changes
	sameAgain bool                            // the "new" password is the old one
	stale     bool                            // the stored auto-unlock password is wrong now
}

func newFakeKeyring() *fakeKeyring {
	idle := make(chan struct{})
	close(idle)
	return &fakeKeyring{locked: true, exists: true, owned: true, idle: idle}
}

func (k *fakeKeyring) log(s string) {
	k.mu.Lock()
	k.calls = append(k.calls, s)
	k.mu.Unlock()
}

func (k *fakeKeyring) Calls() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return strings.Join(k.calls, ",")
}

func (k *fakeKeyring) Create(ctx context.Context) (bool, error) {
	k.log("create")
	if k.exists {
		return false, nil
	}
	k.exists, k.locked = true, false
	return true, nil
}

func (k *fakeKeyring) Locked(ctx context.Context) (bool, error) {
	k.log("locked?")
	if !k.exists {
		return false, vault.ErrNoKeyring
	}
	return k.locked, nil
}

func (k *fakeKeyring) Lock(ctx context.Context) error {
	k.log("lock")
	if !k.exists {
		return vault.ErrNoKeyring
	}
	if k.lockErr != nil {
		return k.lockErr
	}
	k.locked = true
	return nil
}

func (k *fakeKeyring) Unlock(ctx context.Context) (bool, error) {
	k.log("unlock")
	if k.unlock != nil {
		if err := k.unlock(ctx); err != nil {
			return true, err
		}
	}
	k.locked = false
	if k.stale {
		k.auto, k.stale = false, false // gnome-keyring discards the stored password that failed
	}
	k.auto = k.auto || k.autoAfter
	return !k.noPrompt, nil
}

func (k *fakeKeyring) Idle() <-chan struct{} { return k.idle }

func (k *fakeKeyring) AutoUnlockStored(ctx context.Context) (bool, error) {
	k.log("auto?")
	return k.auto, nil
}

func (k *fakeKeyring) ChangePassword(ctx context.Context) error {
	k.log("change")
	if k.change != nil {
		if err := k.change(ctx); err != nil {
			return err
		}
	}
	k.stale = k.auto && !k.sameAgain
	return nil
}

func (k *fakeKeyring) SystemPrompter(ctx context.Context) (bool, bool, error) {
	return k.owned, k.activ, nil
}

func TestSecretServiceDecisions(t *testing.T) {
	dismissed := func(ctx context.Context) error { return fmt.Errorf("unlock: %w: prompt dismissed", vault.ErrLocked) }
	hang := func(ctx context.Context) error {
		<-ctx.Done()
		return fmt.Errorf("unlock: %w: %w", vault.ErrLocked, ctx.Err())
	}
	broken := func(ctx context.Context) error { return fmt.Errorf("unlock: %w: bus gone", vault.ErrUnavailable) }
	tests := []struct {
		name      string
		set       func(k *fakeKeyring)
		display   bool
		want      error
		wantUse   bool
		wantCalls string
	}{
		{"approve", nil, false, nil, true, "auto?,lock,unlock,auto?,lock"},
		{"dismissed", func(k *fakeKeyring) { k.unlock = dismissed }, false, ErrDenied, false, "auto?,lock,unlock,lock"},
		{"no answer", func(k *fakeKeyring) { k.unlock = hang }, false, ErrTimeout, false, "auto?,lock,unlock,lock"},
		{"keyring gone", func(k *fakeKeyring) { k.unlock = broken }, false, ErrUnavailable, false, "auto?,lock,unlock,lock"},
		{"auto-unlock stored before", func(k *fakeKeyring) { k.auto = true }, false, ErrAutoUnlock, false, "auto?"},
		{"auto-unlock left ticked", func(k *fakeKeyring) { k.autoAfter = true }, false, ErrAutoUnlock, false, "auto?,lock,unlock,auto?,lock"},
		{"no prompter", func(k *fakeKeyring) { k.owned = false }, true, ErrUnavailable, false, ""},
		{"activatable without display", func(k *fakeKeyring) { k.owned, k.activ = false, true }, false, ErrUnavailable, false, ""},
		{"activatable with display", func(k *fakeKeyring) { k.owned, k.activ = false, true }, true, nil, true, "auto?,lock,unlock,auto?,lock"},
		{"lock fails", func(k *fakeKeyring) { k.lockErr = errors.New("boom") }, false, ErrUnavailable, false, "auto?,lock,lock,lock"},
		{"vault unavailable at lock", func(k *fakeKeyring) { k.lockErr = fmt.Errorf("lock: %w", vault.ErrUnavailable) }, false, vault.ErrUnavailable, false, "auto?,lock,lock,lock"},
		{"no keyring", func(k *fakeKeyring) { k.exists = false }, false, vault.ErrNoKeyring, false, "auto?,lock,lock"},
		{"unlocked without a prompt", func(k *fakeKeyring) { k.noPrompt = true }, false, ErrAutoUnlock, false, "auto?,lock,unlock,lock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newFakeKeyring()
			if tt.set != nil {
				tt.set(k)
			}
			p := NewSecretService(SecretServiceOptions{Keyring: k, Timeout: 100 * time.Millisecond, Display: tt.display})
			used := false
			err := p.Do(context.Background(), Request{}, func(context.Context) error {
				used = true
				if k.locked {
					t.Error("use ran while the keyring was locked")
				}
				return nil
			})
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Do = %v, want %v", err, tt.want)
			}
			if used != tt.wantUse {
				t.Fatalf("use ran = %v, want %v", used, tt.wantUse)
			}
			if got := k.Calls(); got != tt.wantCalls {
				t.Fatalf("calls %q, want %q", got, tt.wantCalls)
			}
			if k.exists && !k.locked {
				t.Fatal("the keyring was left unlocked")
			}
		})
	}
}

func TestSecretServiceLockFailureAfterUseFails(t *testing.T) {
	k := newFakeKeyring()
	p := NewSecretService(SecretServiceOptions{Keyring: k, Timeout: time.Second})
	err := p.Do(context.Background(), Request{}, func(context.Context) error {
		k.lockErr = errors.New("lock refused")
		return nil
	})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Do with a failed relock = %v, want ErrUnavailable (the read secret must not be sent)", err)
	}
}

func TestSecretServiceUnlockedCreates(t *testing.T) {
	k := newFakeKeyring()
	k.exists = false
	p := NewSecretService(SecretServiceOptions{Keyring: k, Timeout: time.Second})
	if err := p.Unlocked(context.Background(), true, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got, want := k.Calls(), "auto?,lock,create,auto?,lock"; got != want {
		t.Fatalf("calls %q, want %q", got, want)
	}
	if !k.locked {
		t.Fatal("left unlocked")
	}
}

func TestSecretServiceWindow(t *testing.T) {
	// One window at a time: a second release waits for the first's prompt, and gives up with
	// ErrTimeout when its own timeout passes first.
	k := newFakeKeyring()
	release := make(chan struct{})
	k.unlock = func(ctx context.Context) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", vault.ErrLocked, ctx.Err())
		}
	}
	p := NewSecretService(SecretServiceOptions{Keyring: k, Timeout: 2 * time.Second})
	first := make(chan error, 1)
	go func() { first <- p.Do(context.Background(), Request{}, func(context.Context) error { return nil }) }()
	for !strings.Contains(k.Calls(), "unlock") {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	p2 := *p
	p2.o.Timeout = 50 * time.Millisecond
	err := p2.Do(ctx, Request{}, func(context.Context) error { t.Error("second use ran"); return nil })
	if !errors.Is(err, ErrDenied) && !errors.Is(err, ErrTimeout) {
		t.Fatalf("second Do = %v", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first Do = %v", err)
	}

	// An abandoned prompt still open in the keyring holds the window.
	k2 := newFakeKeyring()
	k2.idle = make(chan struct{})
	p3 := NewSecretService(SecretServiceOptions{Keyring: k2, Timeout: 50 * time.Millisecond})
	err = p3.Do(context.Background(), Request{}, func(context.Context) error { t.Error("use ran"); return nil })
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "earlier keyring prompt") {
		t.Fatalf("Do while a prompt is pending = %v", err)
	}
	if k2.Calls() != "" {
		t.Fatalf("keyring touched while a prompt was pending: %q", k2.Calls())
	}
}

func TestSecretServiceRepair(t *testing.T) {
	dismissed := func(ctx context.Context) error { return fmt.Errorf("change: %w: prompt dismissed", vault.ErrLocked) }
	for _, tc := range []struct {
		name     string
		setup    func(k *fakeKeyring)
		repaired bool
		err      error
		calls    string
	}{
		{"nothing stored: nobody is asked", func(k *fakeKeyring) {}, false, nil, "auto?"},
		{"stored: change, then an unlock discards it", func(k *fakeKeyring) { k.auto = true }, true, nil, "auto?,lock,change,lock,unlock,auto?,lock"},
		{"change cancelled", func(k *fakeKeyring) { k.auto, k.change = true, dismissed }, false, ErrDenied, "auto?,lock,change,lock"},
		{"unlock cancelled", func(k *fakeKeyring) {
			k.auto = true
			k.unlock = func(ctx context.Context) error { return fmt.Errorf("unlock: %w: prompt dismissed", vault.ErrLocked) }
		}, false, ErrDenied, "auto?,lock,change,lock,unlock,lock"},
		{"the new password is the old one", func(k *fakeKeyring) { k.auto, k.sameAgain = true, true }, false, ErrAutoUnlock, "auto?,lock,change,lock,unlock,auto?,lock"},
		{"ticked again", func(k *fakeKeyring) { k.auto, k.autoAfter = true, true }, false, ErrAutoUnlock, "auto?,lock,change,lock,unlock,auto?,lock"},
		{"no prompter", func(k *fakeKeyring) { k.auto, k.owned = true, false }, false, ErrUnavailable, "auto?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newFakeKeyring()
			tc.setup(k)
			p := NewSecretService(SecretServiceOptions{Keyring: k, Timeout: time.Second})
			repaired, err := p.Repair(context.Background())
			if repaired != tc.repaired || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("Repair = %v, %v; want %v, %v", repaired, err, tc.repaired, tc.err)
			}
			if got := k.Calls(); got != tc.calls {
				t.Errorf("calls %s, want %s", got, tc.calls)
			}
			if !k.locked {
				t.Error("the keyring was left unlocked")
			}
		})
	}
}

// TestLockIfUnlocked: brokerd's start locks a collection left unlocked (a brokerd killed inside
// a release's window), leaves a locked or missing one alone, and says which it found.
func TestLockIfUnlocked(t *testing.T) {
	ctx := context.Background()
	k := newFakeKeyring()
	k.locked = false
	p := NewSecretService(SecretServiceOptions{Keyring: k, Timeout: time.Second})
	if was, err := p.LockIfUnlocked(ctx); !was || err != nil || !k.locked {
		t.Fatalf("unlocked collection: was %v, err %v, locked after %v; want true, nil, true", was, err, k.locked)
	}
	if was, err := p.LockIfUnlocked(ctx); was || err != nil || k.Calls() != "locked?,lock,locked?" {
		t.Fatalf("locked collection: was %v, err %v, calls %s; want false, nil and no lock", was, err, k.Calls())
	}
	k.exists = false
	if was, err := p.LockIfUnlocked(ctx); was || err != nil {
		t.Fatalf("no collection: was %v, err %v; want false, nil", was, err)
	}
	k.exists, k.locked, k.lockErr = true, false, errors.New("bus gone")
	if was, err := p.LockIfUnlocked(ctx); !was || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("lock fails: was %v, err %v; want true and ErrUnavailable", was, err)
	}
}
