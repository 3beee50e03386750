// Package vault stores saved credentials: (origin, account, alias) → password.
//
// # Security contract
//
// A [Store] is the only place a password value lives at rest. Implementations:
//
//   - [SecretService] (Linux): the freedesktop Secret Service (gnome-keyring, KWallet) over a
//     private D-Bus connection to an explicit address, never an autolaunched bus, with the
//     dh-ietf1024-sha256-aes128-cbc-pkcs7 session (never "plain") so a same-user dbus-monitor
//     sees no plaintext. Items carry the xdg:schema [SecretServiceSchema] and the attributes
//     origin, account and alias. It reconnects by itself after the bus or the keyring went away.
//   - [Memory]: bounded, exact-origin, zeroed on delete and on [Memory.Wipe]; for isolated browser
//     sessions only, never a fallback.
//   - Keychain (darwin): the login keychain through the go-keyring module, which passes secrets to
//     /usr/bin/security on stdin, never in argv; a non-secret index item makes List possible.
//
// There is no plaintext file backend and no fallback between backends: a locked store answers
// [ErrLocked], a missing one [ErrUnavailable]. "Could not look" ([ErrLocked], [ErrUnavailable])
// is never reported as "nothing found" ([ErrAliasUnknown]).
//
// Origins match exactly (the caller canonicalises them); aliases are unique per origin and
// looked up case-insensitively. Every Add validates its input ([credential.ValidAlias],
// [credential.ValidAccount], [credential.ValidStored], a non-empty origin) and answers an error
// wrapping [credential.ErrInvalid] otherwise.
//
// A stored secret is a password, or a password and a TOTP seed ([credential.JoinFactor]): the
// seed lives in the same item as the password, never in an attribute, the index or a listing;
// [Record.TOTP] (an item attribute) says only that it exists. A passkey's private key is a
// stored secret of its own kind ([credential.StorePasskey]), [Record.Passkey] its attribute.
//
// Record metadata (origin, account, alias, creation time) is not secret: attributes of items in a
// locked Secret Service collection are readable by any same-user process, and List works while
// the collection is locked. Only [Store.Secret] returns a password, as a fresh []byte the caller
// must zero with [credential.Zero]; implementations zero the buffers they own. No error message quotes a
// password.
//
// # Not guaranteed
//
// The vault does not ask for user presence; callers (brokerd) gate [Store.Secret] on it.
// [SecretService.Unlock] shows the desktop's unlock prompt, but an unlock that succeeds without a
// prompt (an auto-unlock password stored by gnome-keyring) is not evidence of presence. On macOS
// any same-user process can read items created through /usr/bin/security, and go-keyring hands
// secrets over as Go strings, which cannot be zeroed.
package vault

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/wire"
)

// Sentinel errors callers branch on, each with its wire code. Implementations wrap them with
// context.
var (
	ErrLocked       = wire.Sentinel(wire.CodeVaultLocked, "vault is locked")
	ErrUnavailable  = wire.Sentinel(wire.CodeVaultUnavail, "vault is unavailable")
	ErrAliasExists  = wire.Sentinel(wire.CodeAliasExists, "alias already exists for this origin")
	ErrAliasUnknown = wire.Sentinel(wire.CodeAliasUnknown, "no such alias for this origin")
	ErrFull         = wire.Sentinel(wire.CodeVaultFull, "vault store is full")
	// ErrNoKeyring: the dedicated collection the store was opened on does not exist yet.
	ErrNoKeyring = wire.Sentinel(wire.CodeVaultNoKeyring, "the headless keyring does not exist yet")
)

// MaxList bounds the records returned by one List. Every record is bounded by the limits of
// package credential.
const MaxList = 1000

// Record is the non-secret metadata of one saved credential ([credential.Record]: the vocabulary
// brokerd, the host and the CLI share).
type Record = credential.Record

// Store is a credential store. Every method takes a context and returns when it is done.
type Store interface {
	// List returns the records for origin (all records when origin is ""), sorted by origin
	// then alias (case-insensitively), at most MaxList. The origin match is exact.
	List(ctx context.Context, origin string) ([]Record, error)
	// Add saves a new record. The alias must be unique for the origin, case-insensitively
	// (ErrAliasExists). Add does not retain secret; the caller still owns and zeroes it.
	Add(ctx context.Context, rec Record, secret []byte) error
	// Remove deletes the record with this alias (case-insensitive) at origin (ErrAliasUnknown).
	Remove(ctx context.Context, origin, alias string) error
	// Secret returns the record and a fresh copy of its password. The caller zeroes it.
	Secret(ctx context.Context, origin, alias string) (Record, []byte, error)
	// Replace swaps the saved secret of the record with this alias (case-insensitive) at
	// origin for secret, in one step, keeping the record (ErrAliasUnknown). Its second-factor
	// flag must stay what it was. brokerd seals a credential saved before the seal key again
	// with it. Replace does not retain secret.
	Replace(ctx context.Context, origin, alias string, secret []byte) error
}

// sortRecords orders records by origin, then alias case-insensitively, then alias.
func sortRecords(recs []Record) {
	slices.SortFunc(recs, func(a, b Record) int {
		return cmp.Or(
			strings.Compare(a.Origin, b.Origin),
			strings.Compare(strings.ToLower(a.Alias), strings.ToLower(b.Alias)),
			strings.Compare(a.Alias, b.Alias),
		)
	})
}
