package credential

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
)

// A passkey's stored secret is one NUL byte (a password is never empty, so no password's
// stored form starts so: [SplitFactor] gives a passkey an empty password), [passkeyPrefix],
// then standard base64 without padding of: the RP ID, the credential ID and the user handle,
// each after one length byte; the private key (PKCS#8 DER) after two; the sign count when it
// was saved, four bytes big-endian. The whole is one secret in one item, like a password.
const passkeyPrefix = "passkey1:"

// Limits of a passkey's parts. A P-256 key is 138 bytes of PKCS#8; an RSA key does not fit
// and is refused when the passkey is enrolled.
const (
	MaxRPIDLen         = 253
	MaxCredentialIDLen = 128
	MaxUserHandleLen   = 64
	MaxPasskeyKeyLen   = 256
)

// Passkey is a WebAuthn credential as headless keeps it. Its byte slices are secret (Key) or
// identifying (ID, UserHandle); the holder zeroes them with [Passkey.Zero].
type Passkey struct {
	RPID       string
	ID         []byte
	UserHandle []byte
	Key        []byte // the private key, PKCS#8 DER
	SignCount  uint32
}

// Zero overwrites the passkey's byte slices.
func (p *Passkey) Zero() {
	Zero(p.ID)
	Zero(p.UserHandle)
	Zero(p.Key)
}

// Valid reports whether every part is within its limits. The error never quotes the key.
func (p Passkey) Valid() error {
	switch {
	case len(p.RPID) == 0 || len(p.RPID) > MaxRPIDLen:
		return fmt.Errorf("%w: a passkey's RP ID must be 1 to %d bytes", ErrInvalid, MaxRPIDLen)
	case len(p.ID) == 0 || len(p.ID) > MaxCredentialIDLen:
		return fmt.Errorf("%w: a passkey's credential ID must be 1 to %d bytes", ErrInvalid, MaxCredentialIDLen)
	case len(p.UserHandle) > MaxUserHandleLen:
		return fmt.Errorf("%w: a passkey's user handle is longer than %d bytes", ErrInvalid, MaxUserHandleLen)
	case len(p.Key) == 0 || len(p.Key) > MaxPasskeyKeyLen:
		return fmt.Errorf("%w: a passkey's private key must be 1 to %d bytes (an RSA key is not supported)", ErrInvalid, MaxPasskeyKeyLen)
	}
	for i := 0; i < len(p.RPID); i++ {
		if c := p.RPID[i]; c <= 0x20 || c >= 0x7f {
			return fmt.Errorf("%w: a passkey's RP ID is not a host name", ErrInvalid)
		}
	}
	return nil
}

// IsPasskey reports whether stored is a passkey's stored form (by its start; [ParsePasskey]
// checks the rest).
func IsPasskey(stored []byte) bool {
	return len(stored) > len(passkeyPrefix) && stored[0] == factorSep && string(stored[1:1+len(passkeyPrefix)]) == passkeyPrefix
}

// StorePasskey returns a fresh stored secret holding p. The caller zeroes it.
func StorePasskey(p Passkey) ([]byte, error) {
	if err := p.Valid(); err != nil {
		return nil, err
	}
	raw := make([]byte, 0, 3+len(p.RPID)+len(p.ID)+len(p.UserHandle)+2+len(p.Key)+4)
	defer func() { Zero(raw) }()
	raw = append(raw, byte(len(p.RPID)))
	raw = append(raw, p.RPID...)
	raw = append(raw, byte(len(p.ID)))
	raw = append(raw, p.ID...)
	raw = append(raw, byte(len(p.UserHandle)))
	raw = append(raw, p.UserHandle...)
	raw = binary.BigEndian.AppendUint16(raw, uint16(len(p.Key)))
	raw = append(raw, p.Key...)
	raw = binary.BigEndian.AppendUint32(raw, p.SignCount)
	out := make([]byte, 1+len(passkeyPrefix)+base64.RawStdEncoding.EncodedLen(len(raw)))
	out[0] = factorSep
	copy(out[1:], passkeyPrefix)
	base64.RawStdEncoding.Encode(out[1+len(passkeyPrefix):], raw)
	return out, nil
}

// ParsePasskey reads a passkey's stored form into fresh slices (the caller zeroes them with
// [Passkey.Zero]). The error never quotes the secret.
func ParsePasskey(stored []byte) (Passkey, error) {
	bad := fmt.Errorf("%w: not a stored passkey", ErrInvalid)
	if !IsPasskey(stored) || len(stored) > MaxStoredLen {
		return Passkey{}, bad
	}
	enc := stored[1+len(passkeyPrefix):]
	raw := make([]byte, base64.RawStdEncoding.DecodedLen(len(enc)))
	defer Zero(raw)
	n, err := base64.RawStdEncoding.Decode(raw, enc)
	if err != nil {
		return Passkey{}, bad
	}
	rest := raw[:n]
	take := func(width int) ([]byte, bool) {
		if len(rest) < width {
			return nil, false
		}
		l := int(rest[0])
		if width == 2 {
			l = int(binary.BigEndian.Uint16(rest))
		}
		rest = rest[width:]
		if len(rest) < l {
			return nil, false
		}
		b := append([]byte(nil), rest[:l]...)
		rest = rest[l:]
		return b, true
	}
	var p Passkey
	rp, ok1 := take(1)
	id, ok2 := take(1)
	uh, ok3 := take(1)
	key, ok4 := take(2)
	p = Passkey{RPID: string(rp), ID: id, UserHandle: uh, Key: key}
	if !ok1 || !ok2 || !ok3 || !ok4 || len(rest) != 4 {
		p.Zero()
		return Passkey{}, bad
	}
	p.SignCount = binary.BigEndian.Uint32(rest)
	if err := p.Valid(); err != nil {
		p.Zero()
		return Passkey{}, err
	}
	return p, nil
}
