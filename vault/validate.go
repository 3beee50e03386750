package vault

import (
	"fmt"
	"unicode/utf8"
)

// ValidAlias reports whether alias is acceptable: 1–MaxAliasLen bytes of [A-Za-z0-9._-],
// starting with a letter or digit.
func ValidAlias(alias string) error {
	if len(alias) == 0 || len(alias) > MaxAliasLen {
		return fmt.Errorf("%w: alias must be 1 to %d characters", ErrInvalid, MaxAliasLen)
	}
	for i := 0; i < len(alias); i++ {
		c := alias[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			i > 0 && (c == '.' || c == '_' || c == '-')
		if !ok {
			return fmt.Errorf("%w: alias may hold only letters, digits, '.', '_' and '-', and starts with a letter or digit", ErrInvalid)
		}
	}
	return nil
}

// ValidAccount reports whether account is acceptable: 1–MaxAccountLen bytes of UTF-8 with no
// control characters.
func ValidAccount(account string) error {
	if len(account) == 0 || len(account) > MaxAccountLen {
		return fmt.Errorf("%w: account must be 1 to %d bytes", ErrInvalid, MaxAccountLen)
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

// ValidSecret reports whether secret is acceptable: 1–MaxSecretLen bytes, no NUL.
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
	return nil
}

// maxOriginLen bounds an origin; canonical origins (internal/origin) are far shorter.
const maxOriginLen = 2048

// validOrigin checks the little the vault needs of an origin: canonicalisation is the
// caller's job (package internal/origin). It must be non-empty UTF-8 without control
// characters, since it travels as a D-Bus string and a keychain service name.
func validOrigin(origin string) error {
	if len(origin) == 0 || len(origin) > maxOriginLen {
		return fmt.Errorf("%w: origin must be 1 to %d bytes", ErrInvalid, maxOriginLen)
	}
	if !utf8.ValidString(origin) {
		return fmt.Errorf("%w: origin is not UTF-8", ErrInvalid)
	}
	for _, r := range origin {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%w: origin holds a control character", ErrInvalid)
		}
	}
	return nil
}

// validKey checks the (origin, alias) pair that names a record.
func validKey(origin, alias string) error {
	if err := validOrigin(origin); err != nil {
		return err
	}
	return ValidAlias(alias)
}

// validRecord checks a record and its secret before Add.
func validRecord(rec Record, secret []byte) error {
	if err := validKey(rec.Origin, rec.Alias); err != nil {
		return err
	}
	if err := ValidAccount(rec.Account); err != nil {
		return err
	}
	return ValidSecret(secret)
}
