package vault

import (
	"fmt"
	"unicode/utf8"

	"github.com/headless-dev/headless/internal/credential"
)

// maxOriginLen bounds an origin; canonical origins (internal/origin) are far shorter.
const maxOriginLen = 2048

// validOrigin checks the little the vault needs of an origin: canonicalisation is the
// caller's job (package internal/origin). It must be non-empty UTF-8 without control
// characters, since it travels as a D-Bus string and a keychain service name.
func validOrigin(origin string) error {
	if len(origin) == 0 || len(origin) > maxOriginLen {
		return fmt.Errorf("%w: origin must be 1 to %d bytes", credential.ErrInvalid, maxOriginLen)
	}
	if !utf8.ValidString(origin) {
		return fmt.Errorf("%w: origin is not UTF-8", credential.ErrInvalid)
	}
	for _, r := range origin {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%w: origin holds a control character", credential.ErrInvalid)
		}
	}
	return nil
}

// validKey checks the (origin, alias) pair that names a record.
func validKey(origin, alias string) error {
	if err := validOrigin(origin); err != nil {
		return err
	}
	return credential.ValidAlias(alias)
}

// validRecord checks a record and its stored secret before Add (a password, or a password and
// a second factor, or such a secret sealed: [credential.ValidSaved]) and sets rec.TOTP and rec.Passkey from
// the secret: the flag is the store's own record of what it holds, never the caller's claim.
// validReplace checks a secret that replaces rec's: valid, and with the same second-factor flag.
func validReplace(rec Record, secret []byte) error {
	r := rec
	if err := validRecord(&r, secret); err != nil {
		return err
	}
	if r.TOTP != rec.TOTP || r.Passkey != rec.Passkey {
		return fmt.Errorf("%w: the new secret's kind (second factor, passkey) differs from the record's", credential.ErrInvalid)
	}
	return nil
}

func validRecord(rec *Record, secret []byte) error {
	if err := validKey(rec.Origin, rec.Alias); err != nil {
		return err
	}
	if err := credential.ValidAccount(rec.Account); err != nil {
		return err
	}
	k, err := credential.SavedKind(secret)
	rec.TOTP, rec.Passkey = k == credential.KindTOTP, k == credential.KindPasskey
	return err
}
