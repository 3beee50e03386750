package vault

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/godbus/dbus/v5"
)

// Unlock and prompts: locking and unlocking the collection, the prompts the service shows for
// it (never dismissed: that aborts gnome-keyring 42.1), and the prompts nobody waits for any
// more, which are watched until they end so that a late answer locks the collection again.

// Locked reports whether the collection is locked.
func (s *SecretService) Locked(ctx context.Context) (bool, error) {
	var locked bool
	err := s.do(ctx, func(c *ssConn) error {
		if c.coll == "" {
			return ErrNoKeyring
		}
		return c.prop(ctx, c.coll, ifCollection, "Locked", &locked)
	})
	return locked, wrapStep("locked", err)
}

// Lock locks the collection. gnome-keyring locks without a prompt.
func (s *SecretService) Lock(ctx context.Context) error {
	err := s.do(ctx, func(c *ssConn) error {
		if c.coll == "" {
			return ErrNoKeyring
		}
		var (
			locked []dbus.ObjectPath
			prompt dbus.ObjectPath
		)
		err := c.service().CallWithContext(ctx, ifService+".Lock", 0, []dbus.ObjectPath{c.coll}).Store(&locked, &prompt)
		if err != nil {
			return busErr("lock collection", err)
		}
		if prompt != noPrompt {
			dismissed, _, err := c.prompt(ctx, prompt, nil)
			if err != nil {
				return err
			}
			if dismissed {
				return errors.New("lock collection: prompt dismissed")
			}
		}
		return nil
	})
	return wrapStep("lock", err)
}

// Unlock asks the Secret Service to unlock the collection, which usually shows the desktop's
// unlock prompt, and waits for the answer until ctx is done. A dismissed prompt answers
// ErrLocked. When ctx ends first, Unlock stops waiting (it never dismisses the prompt: that
// aborts gnome-keyring 42.1) and returns an error wrapping ErrLocked and ctx.Err(); if the
// abandoned prompt is answered later, the collection is locked again at once, so an unlock
// nobody waits for does not leave the collection open.
//
// prompted reports whether the service returned a prompt. One that answers at once (because the
// keyring stores an auto-unlock password, see [SecretService.AutoUnlockStored]) or no prompt at
// all (the collection was unlocked already) is not evidence of user presence.
// While an abandoned prompt is still open the service queues every later unlock behind it;
// [SecretService.Idle] tells when none is.
func (s *SecretService) Unlock(ctx context.Context) (prompted bool, err error) {
	err = s.do(ctx, func(c *ssConn) error {
		prompted = false
		if c.coll == "" {
			return ErrNoKeyring
		}
		var (
			unlocked []dbus.ObjectPath
			prompt   dbus.ObjectPath
		)
		err := c.service().CallWithContext(ctx, ifService+".Unlock", 0, []dbus.ObjectPath{c.coll}).Store(&unlocked, &prompt)
		if err != nil {
			return busErr("unlock collection", err)
		}
		if prompt == noPrompt {
			if !slices.Contains(unlocked, c.coll) {
				return fmt.Errorf("unlock collection: %w: the service did not unlock it", ErrLocked)
			}
			return nil
		}
		prompted = true
		dismissed, _, err := c.prompt(ctx, prompt, func(ch chan *dbus.Signal) {
			s.watchAbandoned(c, ch, prompt, false)
		})
		if err != nil {
			return err
		}
		if dismissed {
			return fmt.Errorf("unlock collection: %w: prompt dismissed", ErrLocked)
		}
		return nil
	})
	if err == nil && s.idx != nil {
		s.reindex(ctx) // best effort: the old index stays when this fails
	}
	return prompted, wrapStep("unlock", err)
}

// prompt shows the prompt at path and waits for its Completed signal until ctx is done.
// It never calls Prompt.Dismiss: that aborts gnome-keyring 42.1. When ctx ends first it
// returns an error wrapping ErrLocked and ctx.Err(); abandon (if set) is called first and takes
// over the signal channel, so a Completed already on its way is not lost.
func (c *ssConn) prompt(ctx context.Context, path dbus.ObjectPath, abandon func(ch chan *dbus.Signal)) (dismissed bool, result dbus.Variant, err error) {
	ch := make(chan *dbus.Signal, 16)
	c.conn.Signal(ch)
	owned := true
	defer func() {
		if owned {
			c.conn.RemoveSignal(ch)
		}
	}()
	if err := c.obj(path).CallWithContext(ctx, ifPrompt+".Prompt", 0, "").Store(); err != nil {
		return false, result, busErr("show prompt", err)
	}
	for {
		select {
		case sig, ok := <-ch:
			if !ok {
				return false, result, &ssError{step: "wait for prompt", kind: ErrUnavailable, err: dbus.ErrClosed, drop: true}
			}
			if d, r, ok := promptCompleted(sig, c.owner, path); ok {
				return d, r, nil
			}
		case <-c.conn.Context().Done():
			return false, result, &ssError{step: "wait for prompt", kind: ErrUnavailable, err: dbus.ErrClosed, drop: true}
		case <-ctx.Done():
			if abandon != nil {
				owned = false
				abandon(ch)
			}
			return false, result, fmt.Errorf("wait for prompt: %w: prompt not answered: %w", ErrLocked, ctx.Err())
		}
	}
}

// promptCompleted decodes a Completed(dismissed, result) signal of the prompt at path.
func promptCompleted(sig *dbus.Signal, owner string, path dbus.ObjectPath) (dismissed bool, result dbus.Variant, ok bool) {
	if sig == nil || sig.Path != path || sig.Name != ifPrompt+".Completed" || sig.Sender != owner || len(sig.Body) != 2 {
		return false, result, false
	}
	dismissed, ok1 := sig.Body[0].(bool)
	result, ok2 := sig.Body[1].(dbus.Variant)
	return dismissed, result, ok1 && ok2
}

// watchAbandoned keeps watching a prompt nobody waits for any more (the service keeps it open:
// it is never dismissed) on the signal channel ch, which it now owns. It holds a reference on
// c, so the connection (the only one the Completed signal is sent to) stays open although
// calls no longer use it, and counts the prompt as pending (see Idle). When the prompt
// completes, answered or not, it locks the collection (with lockResult, the collection the
// prompt created); it also ends when the service's owner leaves the bus (its prompts went with
// it) or the connection ends.
func (s *SecretService) watchAbandoned(c *ssConn, ch chan *dbus.Signal, path dbus.ObjectPath, lockResult bool) {
	s.mu.Lock()
	c.refs++
	s.mu.Unlock()
	s.promptPending(+1)
	go func() {
		defer s.release(c)
		defer s.promptPending(-1)
		defer c.conn.RemoveSignal(ch)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case sig, ok := <-ch:
				if !ok {
					return
				}
				_, result, ok := promptCompleted(sig, c.owner, path)
				if !ok {
					continue
				}
				target := c.coll
				if p, ok := result.Value().(dbus.ObjectPath); lockResult && ok && p != noPrompt {
					target = p
				}
				if target != "" {
					ctx, cancel := context.WithTimeout(c.conn.Context(), 5*time.Second)
					c.service().CallWithContext(ctx, ifService+".Lock", 0, []dbus.ObjectPath{target})
					cancel()
				}
				return
			case <-c.conn.Context().Done():
				return
			case <-tick.C:
				var has bool
				ctx, cancel := context.WithTimeout(c.conn.Context(), 5*time.Second)
				err := c.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, c.owner).Store(&has)
				cancel()
				if err == nil && !has {
					return
				}
			}
		}
	}()
}

// promptPending counts abandoned unlock prompts that are still open.
func (s *SecretService) promptPending(delta int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending += delta
	switch {
	case delta > 0 && s.pending == 1:
		s.idle = make(chan struct{})
	case delta < 0 && s.pending == 0:
		close(s.idle)
	}
}

// Idle returns a channel that is closed while no abandoned unlock prompt is open. A prompt
// abandoned by Unlock stays open in the service (it is never dismissed) until the person
// answers it, the prompter goes away or the connection ends; then the collection is locked
// again if it was unlocked, and the channel closes.
func (s *SecretService) Idle() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idle
}
