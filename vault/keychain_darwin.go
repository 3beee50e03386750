//go:build darwin

package vault

import (
	"context"
	"errors"
	"time"

	keyring "github.com/zalando/go-keyring"
)

var _ Store = (*Keychain)(nil)

// KeychainOptions configure NewKeychain.
type KeychainOptions struct {
	// Now stamps Record.Created; default time.Now.
	Now func() time.Time
}

// Keychain is a Store in the macOS login keychain through zalando/go-keyring, which runs
// /usr/bin/security and passes secrets on its stdin, never in argv. Each credential is a
// generic password with service "headless " + origin and account = alias; one more item set
// (service "headless", accounts "index.N") holds the non-secret JSON list of records so List
// works.
//
// Items created this way are readable by any same-user process that runs /usr/bin/security,
// so user presence must be enforced by the caller (brokerd). go-keyring returns secrets as Go
// strings, which cannot be zeroed; only the []byte handed to the caller can. The security
// tool takes no context: a call that blocks on a keychain dialog is not cut short by ctx.
type Keychain struct {
	s *kvStore
}

// NewKeychain returns a Store on the login keychain.
func NewKeychain(o KeychainOptions) *Keychain {
	return &Keychain{s: newKVStore(goKeyring{}, o.Now)}
}

// List implements Store.
func (k *Keychain) List(ctx context.Context, origin string) ([]Record, error) {
	return k.s.List(ctx, origin)
}

// Add implements Store.
func (k *Keychain) Add(ctx context.Context, rec Record, secret []byte) error {
	return k.s.Add(ctx, rec, secret)
}

// Remove implements Store.
func (k *Keychain) Remove(ctx context.Context, origin, alias string) error {
	return k.s.Remove(ctx, origin, alias)
}

// Replace implements Store.
func (k *Keychain) Replace(ctx context.Context, origin, alias string, secret []byte) error {
	return k.s.Replace(ctx, origin, alias, secret)
}

// Secret implements Store.
func (k *Keychain) Secret(ctx context.Context, origin, alias string) (Record, []byte, error) {
	return k.s.Secret(ctx, origin, alias)
}

// goKeyring adapts go-keyring to kvBackend.
type goKeyring struct{}

func (goKeyring) Set(service, user, value string) error {
	return kcErr(keyring.Set(service, user, value))
}

func (goKeyring) Get(service, user string) (string, error) {
	v, err := keyring.Get(service, user)
	return v, kcErr(err)
}

func (goKeyring) Delete(service, user string) error {
	return kcErr(keyring.Delete(service, user))
}

func kcErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, keyring.ErrNotFound):
		return errKVNotFound
	case errors.Is(err, keyring.ErrSetDataTooBig):
		return errKVTooBig
	}
	return err
}
