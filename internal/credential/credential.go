// Package credential is the record vocabulary every process of headless shares: what a saved
// credential is ([Record]), what makes its parts acceptable ([ValidAlias], [ValidAccount],
// [ValidSecret]), what a session name is ([ValidSession]), the limits that bound them, and
// [Zero] for the buffers a password passes through.
//
// # Security contract
//
// The package is a leaf: it imports nothing of headless and nothing that talks to the outside
// world, so the agent-facing binary can check input exactly as brokerd and the vault do without
// linking either. Every validator answers nil or an error wrapping [ErrInvalid]; no error quotes
// a password. A password is 1 to [MaxSecretLen] bytes of UTF-8 text without NUL: it is typed into
// a page as text (CDP Input.insertText) and stored as "text/plain; charset=utf8" in the Secret
// Service, so bytes that are not UTF-8 could only ever be typed as something else, and are
// refused when a credential is enrolled.
//
// # Not guaranteed
//
// The validators check shape, not meaning: an origin is checked by package internal/origin,
// and nothing here knows whether a record exists.
package credential

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/headless-dev/headless/internal/wire"
)

// ErrInvalid is wrapped by every error of the validators: INVALID_ARGUMENT, with the record's
// rules as its hint.
var ErrInvalid = wire.SentinelHint(wire.CodeInvalidArgument, "invalid credential record",
	"aliases are letters, digits, '.', '_', '-' (max 64); accounts max 256 bytes; passwords 1-1024 bytes; "+SessionRule)

// Limits that bound every record and session name.
const (
	MaxSecretLen  = 1024 // bytes of one password
	MaxAccountLen = 256  // bytes of one account name
	MaxAliasLen   = 64   // bytes of one alias
	MaxSessionLen = 64   // bytes of one session name
)

// Record is the non-secret metadata of one saved credential: (origin, account, alias) and when
// it was saved. It never holds a password.
type Record struct {
	Origin  string    `json:"origin"`
	Account string    `json:"account"`
	Alias   string    `json:"alias"`
	Created time.Time `json:"created"`
	// TOTP says that the record's stored secret carries a TOTP seed next to the password
	// (a second factor exists; the seed itself is never part of a Record).
	TOTP bool `json:"totp,omitempty"`
	// Passkey says that the record is a passkey (a WebAuthn credential whose private key is
	// the stored secret), not a password.
	Passkey bool `json:"passkey,omitempty"`
}

// SessionRule says what a session name is, for messages.
const SessionRule = "session names are 1-64 letters, digits, '.', '_' or '-'"

// ValidSession reports whether name is a session name: 1–MaxSessionLen bytes of
// [A-Za-z0-9._-], starting with a letter or digit. The host and brokerd apply this one rule.
func ValidSession(name string) error {
	if !word(name, MaxSessionLen) {
		return fmt.Errorf("%w: %s", ErrInvalid, SessionRule)
	}
	return nil
}

// ValidAlias reports whether alias is acceptable: 1–MaxAliasLen bytes of [A-Za-z0-9._-],
// starting with a letter or digit.
func ValidAlias(alias string) error {
	if len(alias) == 0 || len(alias) > MaxAliasLen {
		return fmt.Errorf("%w: alias must be 1 to %d characters", ErrInvalid, MaxAliasLen)
	}
	if !word(alias, MaxAliasLen) {
		return fmt.Errorf("%w: alias may hold only letters, digits, '.', '_' and '-', and starts with a letter or digit", ErrInvalid)
	}
	return nil
}

// word reports whether s is 1–max bytes of [A-Za-z0-9._-] starting with a letter or digit.
func word(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			i > 0 && (c == '.' || c == '_' || c == '-')
		if !ok {
			return false
		}
	}
	return true
}

// ValidAccount reports whether account is acceptable: at most MaxAccountLen bytes of UTF-8
// with no control characters; empty for a credential of a sign-in that asks for a password
// alone (an application's own password or token).
func ValidAccount(account string) error {
	if len(account) > MaxAccountLen {
		return fmt.Errorf("%w: account must be at most %d bytes", ErrInvalid, MaxAccountLen)
	}
	if !utf8.ValidString(account) {
		return fmt.Errorf("%w: account is not UTF-8", ErrInvalid)
	}
	for _, r := range account {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%w: account holds a control character", ErrInvalid)
		}
	}
	return nil
}

// ValidSecret reports whether secret is acceptable: 1–MaxSecretLen bytes of UTF-8, no NUL.
// The error never quotes the secret.
func ValidSecret(secret []byte) error {
	if len(secret) == 0 || len(secret) > MaxSecretLen {
		return fmt.Errorf("%w: password must be 1 to %d bytes", ErrInvalid, MaxSecretLen)
	}
	for _, c := range secret {
		if c == 0 {
			return fmt.Errorf("%w: password holds a NUL byte", ErrInvalid)
		}
	}
	if !utf8.Valid(secret) {
		return fmt.Errorf("%w: password is not UTF-8 text (it is typed into the page as text)", ErrInvalid)
	}
	return nil
}

// A stored secret is the password, or the password, one NUL byte (which no password holds, see
// [ValidSecret]) and the stored form of a second factor (package internal/totp: "totp1:…").
// Every store keeps it as one secret, so the seed lives in the same item, under the same lock,
// as the password, and is never part of a record's metadata.
const (
	factorSep = 0
	// MaxFactorLen bounds the stored form of a second factor.
	MaxFactorLen = 256
	// MaxStoredLen bounds a stored secret.
	MaxStoredLen = MaxSecretLen + 1 + MaxFactorLen
	totpPrefix   = "totp1:"
)

// JoinFactor returns a fresh stored secret holding password and the stored form of a second
// factor (factor nil: the password alone). The caller zeroes it.
func JoinFactor(password, factor []byte) []byte {
	out := make([]byte, 0, len(password)+1+len(factor))
	out = append(out, password...)
	if factor != nil {
		out = append(out, factorSep)
		out = append(out, factor...)
	}
	return out
}

// SplitFactor cuts a stored secret into the password and the second factor's stored form (nil
// when there is none). Both alias stored; nothing is copied.
func SplitFactor(stored []byte) (password, factor []byte) {
	for i, c := range stored {
		if c == factorSep {
			return stored[:i], stored[i+1:]
		}
	}
	return stored, nil
}

// ValidStored reports whether stored is acceptable as a stored secret: a valid password,
// optionally followed by a second factor's stored form of a known kind (1–MaxFactorLen bytes),
// or a passkey ([Passkey]). It answers whether a second factor is present. The error never
// quotes the secret.
func ValidStored(stored []byte) (totp bool, err error) {
	k, err := StoredKind(stored)
	return k == KindTOTP, err
}

// Kind is what a stored secret holds; a sealed secret says it in clear, and the seal binds it.
type Kind byte

// The kinds of stored secret.
const (
	KindPassword Kind = 'p' // a password
	KindTOTP     Kind = 't' // a password and a TOTP seed
	KindPasskey  Kind = 'k' // a passkey's private key and what names it ([Passkey])
)

// StoredKind reports what the stored secret holds, or why it is not acceptable ([ValidStored]).
func StoredKind(stored []byte) (Kind, error) {
	if IsPasskey(stored) {
		p, err := ParsePasskey(stored)
		p.Zero()
		if err != nil {
			return 0, err
		}
		return KindPasskey, nil
	}
	pw, factor := SplitFactor(stored)
	if err := ValidSecret(pw); err != nil {
		return 0, err
	}
	if factor == nil {
		return KindPassword, nil
	}
	if len(factor) > MaxFactorLen || len(factor) <= len(totpPrefix) || string(factor[:len(totpPrefix)]) != totpPrefix {
		return 0, fmt.Errorf("%w: the second factor is not a stored TOTP key", ErrInvalid)
	}
	for _, c := range factor {
		if c < 0x21 || c > 0x7e {
			return 0, fmt.Errorf("%w: the second factor is not a stored TOTP key", ErrInvalid)
		}
	}
	return KindTOTP, nil
}

// A sealed secret (package internal/broker/seal) is a stored secret encrypted with the machine's seal
// key (and the person's passphrase where they chose one), kept as text: SealedPrefix (or, for
// a credential sealed before the seal key existed, with the passphrase alone, SealedPrefixV1),
// "p" (a password), "t" (a password and a TOTP seed) or "k" (a passkey), ":", then standard base64 without
// padding. The flag is readable without any key, as a record's TOTP attribute always was.
const (
	SealedPrefix   = "hlseal2:"
	SealedPrefixV1 = "hlseal1:"
	// MaxSealedLen bounds a sealed secret: a MaxStoredLen secret sealed, with room to spare.
	MaxSealedLen = 2048
)

// IsSealed reports whether saved starts as a sealed secret (of either version) does.
func IsSealed(saved []byte) bool {
	return hasPrefix(saved, SealedPrefix) || hasPrefix(saved, SealedPrefixV1)
}

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

// ValidSaved reports whether saved is acceptable to a store: a stored secret ([ValidStored])
// or a sealed one of the right shape. It answers whether a second factor is present (for a
// sealed secret, what its flag says). The error never quotes the secret.
func ValidSaved(saved []byte) (totp bool, err error) {
	k, err := SavedKind(saved)
	return k == KindTOTP, err
}

// SavedKind is [StoredKind] for what a store keeps: for a sealed secret, what its flag says.
func SavedKind(saved []byte) (Kind, error) {
	if !IsSealed(saved) {
		return StoredKind(saved)
	}
	bad := fmt.Errorf("%w: not a well-formed sealed secret", ErrInvalid)
	rest := saved[len(SealedPrefix):]
	if len(saved) > MaxSealedLen || len(rest) < 3 || rest[1] != ':' {
		return 0, bad
	}
	k := Kind(rest[0])
	if k != KindPassword && k != KindTOTP && k != KindPasskey {
		return 0, bad
	}
	for _, c := range rest[2:] {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return 0, bad
		}
	}
	return k, nil
}

// Zero overwrites b with zeros.
func Zero(b []byte) {
	clear(b)
}
