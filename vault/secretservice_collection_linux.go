package vault

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/godbus/dbus/v5"
)

// The dedicated collection and the presence mechanism: finding and creating the collection the
// secret-service provider keeps locked, and what tells whether its unlock prompt is evidence of
// a person (an auto-unlock password stored in the login keyring, the system prompter).

// findLabel returns the one collection labelled label, "" when there is none, or an error
// when several are (one could be a decoy made by another program).
func (c *ssConn) findLabel(ctx context.Context, label string) (dbus.ObjectPath, error) {
	var colls []dbus.ObjectPath
	if err := c.prop(ctx, ssPath, ifService, "Collections", &colls); err != nil {
		return "", err
	}
	var found []dbus.ObjectPath
	for _, p := range colls {
		var l string
		if err := c.prop(ctx, p, ifCollection, "Label", &l); err != nil {
			if objectGone(err) {
				continue // deleted meanwhile
			}
			return "", err
		}
		if l == label {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("find collection: %w: %d collections are labelled %q; remove the ones headless did not create", ErrUnavailable, len(found), label)
}

// Create makes the dedicated collection (see SecretServiceOptions.Label) when it does not
// exist. The service asks the person for the new collection's password with its own prompt;
// that password never passes through this process. The new collection is unlocked; callers
// lock it. created is false when it already existed. A dismissed prompt is ErrLocked; when
// ctx ends first the prompt is abandoned (never dismissed).
func (s *SecretService) Create(ctx context.Context) (created bool, err error) {
	if s.label == "" {
		return false, errors.New("create collection: the store was not opened on a dedicated collection")
	}
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return false, fmt.Errorf("create collection: %w", err)
	}
	defer unlock()
	err = s.do(ctx, func(c *ssConn) error {
		coll, err := c.findLabel(ctx, s.label)
		if err != nil {
			return err
		}
		if coll != "" {
			if coll != c.coll {
				s.invalidate(c) // made elsewhere, or by a late answer: resolve it again
			}
			return nil
		}
		var prompt dbus.ObjectPath
		props := map[string]dbus.Variant{ifCollection + ".Label": dbus.MakeVariant(s.label)}
		if err := c.service().CallWithContext(ctx, ifService+".CreateCollection", 0, props, "").Store(&coll, &prompt); err != nil {
			return busErr("create collection", err)
		}
		if prompt != noPrompt {
			dismissed, _, err := c.prompt(ctx, prompt, func(ch chan *dbus.Signal) {
				s.watchAbandoned(c, ch, prompt, true)
			})
			if err != nil {
				return err
			}
			if dismissed {
				return fmt.Errorf("create collection: %w: prompt dismissed", ErrLocked)
			}
		}
		created = true
		s.invalidate(c) // the next call resolves the label again
		return s.idx.update(func([]Record) []Record { return nil })
	})
	return created, wrapStep("create", err)
}

// AutoUnlockStored reports whether gnome-keyring keeps the collection's password in the login
// keyring for automatic unlock (the unlock dialog's "Automatically unlock this keyring whenever
// I'm logged in" box was left ticked). Then every Unlock succeeds without asking anyone. A
// missing dedicated collection answers false.
func (s *SecretService) AutoUnlockStored(ctx context.Context) (bool, error) {
	var stored bool
	err := s.do(ctx, func(c *ssConn) error {
		if c.coll == "" {
			stored = false
			return nil
		}
		// gnome-keyring 42 files the stored password under the keyring's location; the
		// item itself is hidden from the Secret Service API, but a search finds it.
		id := string(c.coll)[strings.LastIndexByte(string(c.coll), '/')+1:]
		var unlocked, locked []dbus.ObjectPath
		err := c.service().CallWithContext(ctx, ifService+".SearchItems", 0,
			map[string]string{"keyring": "LOCAL:/keyrings/" + id + ".keyring"}).Store(&unlocked, &locked)
		if err != nil {
			return busErr("search auto-unlock password", err)
		}
		stored = len(unlocked)+len(locked) > 0
		return nil
	})
	return stored, wrapStep("auto-unlock check", err)
}

// SystemPrompterName is the bus name gnome-keyring shows its prompts through (gcr-prompter).
const SystemPrompterName = "org.gnome.keyring.SystemPrompter"

// SystemPrompter reports whether the keyring's prompter is running on the bus (owned) or, when
// it is not, can be started by the bus (activatable).
func (s *SecretService) SystemPrompter(ctx context.Context) (owned, activatable bool, err error) {
	err = s.do(ctx, func(c *ssConn) error {
		bus := c.conn.BusObject()
		if err := bus.CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, SystemPrompterName).Store(&owned); err != nil {
			return busErr("look for the system prompter", err)
		}
		if owned {
			return nil // activatable is not looked up (one round trip less per release)
		}
		var names []string
		if err := bus.CallWithContext(ctx, "org.freedesktop.DBus.ListActivatableNames", 0).Store(&names); err != nil {
			return busErr("look for the system prompter", err)
		}
		activatable = slices.Contains(names, SystemPrompterName)
		return nil
	})
	return owned, activatable, wrapStep("system prompter", err)
}

// ifGnomeInternal is gnome-keyring's own interface beside the Secret Service (not part of
// the spec; KWallet has none).
const ifGnomeInternal = "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface"

// ErrNoChange: the Secret Service cannot change a collection's password through a prompt of
// its own (it is not gnome-keyring).
var ErrNoChange = fmt.Errorf("%w: this Secret Service cannot change a keyring's password through its own prompt (gnome-keyring can)", ErrUnavailable)

// ChangePassword has gnome-keyring change the dedicated collection's password through its own
// prompt (ChangeWithPrompt): the person types the old password and the new one there; neither
// passes through this process. A dismissed prompt is ErrLocked; when ctx ends first the prompt
// is abandoned (never dismissed) and watched like an abandoned unlock. A stored auto-unlock
// password is NOT updated by gnome-keyring: it keeps the old one, which the next Unlock tries,
// finds wrong and discards before it prompts.
func (s *SecretService) ChangePassword(ctx context.Context) error {
	err := s.do(ctx, func(c *ssConn) error {
		if c.coll == "" {
			return ErrNoKeyring
		}
		var prompt dbus.ObjectPath
		err := c.service().CallWithContext(ctx, ifGnomeInternal+".ChangeWithPrompt", 0, c.coll).Store(&prompt)
		var de dbus.Error
		if errors.As(err, &de) && (de.Name == errUnknownMethod || de.Name == "org.freedesktop.DBus.Error.UnknownInterface") && !strings.Contains(de.Error(), "does not exist") {
			return ErrNoChange
		}
		if err != nil {
			return busErr("change password", err)
		}
		if prompt == noPrompt {
			return nil
		}
		dismissed, _, err := c.prompt(ctx, prompt, func(ch chan *dbus.Signal) {
			s.watchAbandoned(c, ch, prompt, false)
		})
		if err != nil {
			return err
		}
		if dismissed {
			return fmt.Errorf("change password: %w: prompt dismissed", ErrLocked)
		}
		return nil
	})
	return wrapStep("change password", err)
}
