// Package vault stores saved credentials: (origin, account, alias) → password.
//
// # Security contract
//
// A [Store] is the only place a password value lives at rest. Implementations:
//
//   - [SecretService] (Linux): the freedesktop Secret Service (gnome-keyring, KWallet) over a
//     private D-Bus connection, never an autolaunched bus, with the
//     dh-ietf1024-sha256-aes128-cbc-pkcs7 session so a same-user dbus-monitor sees no plaintext.
//   - [Memory]: bounded, exact-origin, zeroed on delete and on [Memory.Wipe]; for isolated browser
//     sessions only, never a fallback.
//   - Keychain (darwin): the login keychain through zalando/go-keyring.
//
// There is no plaintext file backend and no fallback between backends: a locked store answers
// [ErrLocked], a missing one [ErrUnavailable].
//
// Record metadata (origin, account, alias, creation time) is not secret: attributes of items in a
// locked Secret Service collection are readable by any same-user process. Only [Store.Secret]
// returns a password, as a fresh []byte the caller must zero with [Zero].
//
// # Not guaranteed
//
// The vault does not ask for user presence; callers (brokerd) gate [Store.Secret] on it.
package vault

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors callers branch on. Implementations wrap them with context.
var (
	ErrLocked       = errors.New("vault is locked")
	ErrUnavailable  = errors.New("vault is unavailable")
	ErrAliasExists  = errors.New("alias already exists for this origin")
	ErrAliasUnknown = errors.New("no such alias for this origin")
	ErrFull         = errors.New("vault store is full")
	ErrInvalid      = errors.New("invalid credential record")
)

// Limits that bound every record.
const (
	MaxSecretLen  = 1024 // bytes of one password
	MaxAccountLen = 256  // bytes of one account name
	MaxAliasLen   = 64   // bytes of one alias
	MaxList       = 1000 // records returned by one List
)

// Record is the non-secret metadata of one saved credential.
type Record struct {
	Origin  string    `json:"origin"`
	Account string    `json:"account"`
	Alias   string    `json:"alias"`
	Created time.Time `json:"created"`
}

// Store is a credential store. Every method takes a context and returns when it is done.
type Store interface {
	// List returns the records for origin (all records when origin is ""), sorted by origin
	// then alias, at most MaxList.
	List(ctx context.Context, origin string) ([]Record, error)
	// Add saves a new record. The alias must be unique for the origin, case-insensitively
	// (ErrAliasExists). Add does not retain secret; the caller still owns and zeroes it.
	Add(ctx context.Context, rec Record, secret []byte) error
	// Remove deletes the record with this alias (case-insensitive) at origin (ErrAliasUnknown).
	Remove(ctx context.Context, origin, alias string) error
	// Secret returns the record and a fresh copy of its password. The caller zeroes it.
	Secret(ctx context.Context, origin, alias string) (Record, []byte, error)
}

// Zero overwrites b with zeros.
func Zero(b []byte) {
	clear(b)
}
