// Package totp computes RFC 6238 time-based one-time passwords and parses the seeds they come
// from: an otpauth://totp/ URI or a bare base32 seed, as a person copies them out of a site's
// "set up an authenticator" page.
//
// # Security contract
//
// A seed is as secret as a password: [Key] holds it as a []byte that [Key.Zero] overwrites,
// has no String method and no JSON tags, and no error of this package quotes a seed, a URI or
// a code. Parsing is strict and bounded (at most [MaxURILen] bytes of input, seeds of
// [MinSeedLen]–[MaxSeedLen] bytes, SHA1/SHA256/SHA512, 6–8 digits, periods of 1–300 s):
// anything else is refused rather than guessed. [Key.AppendCode] writes the code into a
// caller's buffer so that it too can be zeroed.
//
// [Key.Marshal] and [Unmarshal] are the one stored form (a short ASCII line) that brokerd
// keeps in the vault next to the password; nothing else reads or writes it.
//
// # Not guaranteed
//
// The package knows no clock of its own (callers pass the time) and keeps no record of codes
// already used: a site that accepts a code twice within its period is the site's concern.
package totp

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrInvalid is wrapped by every parse error. No message quotes the input.
var ErrInvalid = errors.New("invalid TOTP seed")

// Bounds of what is accepted.
const (
	MaxURILen  = 2048 // bytes of an otpauth URI or base32 seed as typed
	MinSeedLen = 10   // bytes of a decoded seed (80 bits; RFC 4226 asks for at least 128, many sites use 80)
	MaxSeedLen = 128  // bytes of a decoded seed
	MaxPeriod  = 300  // seconds
)

// Algorithm is the HMAC hash of a key.
type Algorithm uint8

// The algorithms of RFC 6238.
const (
	SHA1 Algorithm = iota + 1
	SHA256
	SHA512
)

func (a Algorithm) name() string {
	switch a {
	case SHA1:
		return "SHA1"
	case SHA256:
		return "SHA256"
	case SHA512:
		return "SHA512"
	}
	return ""
}

func (a Algorithm) hash() func() hash.Hash {
	switch a {
	case SHA256:
		return sha256.New
	case SHA512:
		return sha512.New
	}
	return sha1.New
}

func algorithmOf(s string) (Algorithm, bool) {
	switch strings.ToUpper(s) {
	case "SHA1":
		return SHA1, true
	case "SHA256":
		return SHA256, true
	case "SHA512":
		return SHA512, true
	}
	return 0, false
}

// Key is one TOTP seed with its parameters.
type Key struct {
	Seed      []byte // secret: zero with Zero
	Algorithm Algorithm
	Digits    int
	Period    int // seconds
}

// Zero overwrites the seed.
func (k *Key) Zero() { clear(k.Seed) }

// Valid checks the parameters and the seed's length.
func (k *Key) Valid() error {
	switch {
	case len(k.Seed) < MinSeedLen || len(k.Seed) > MaxSeedLen:
		return fmt.Errorf("%w: the seed must be %d to %d bytes (%d to %d base32 characters)", ErrInvalid, MinSeedLen, MaxSeedLen, MinSeedLen*8/5, MaxSeedLen*8/5+1)
	case k.Algorithm.name() == "":
		return fmt.Errorf("%w: the algorithm must be SHA1, SHA256 or SHA512", ErrInvalid)
	case k.Digits < 6 || k.Digits > 8:
		return fmt.Errorf("%w: digits must be 6, 7 or 8", ErrInvalid)
	case k.Period < 1 || k.Period > MaxPeriod:
		return fmt.Errorf("%w: the period must be 1 to %d seconds", ErrInvalid, MaxPeriod)
	}
	return nil
}

var pow10 = [...]uint32{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000}

// AppendCode appends the code for time t (Digits ASCII digits) to dst and returns it. The key
// must be Valid.
func (k *Key) AppendCode(dst []byte, t time.Time) []byte {
	return k.appendCounter(dst, uint64(t.Unix())/uint64(k.Period))
}

// appendCounter is RFC 4226 HOTP for counter c.
func (k *Key) appendCounter(dst []byte, c uint64) []byte {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], c)
	m := hmac.New(k.Algorithm.hash(), k.Seed)
	m.Write(msg[:])
	var sum [sha512.Size]byte
	s := m.Sum(sum[:0])
	off := s[len(s)-1] & 0x0f
	v := binary.BigEndian.Uint32(s[off:off+4]) & 0x7fffffff
	clear(sum[:])
	v %= pow10[k.Digits]
	var digits [8]byte
	for i := k.Digits - 1; i >= 0; i-- {
		digits[i] = byte('0' + v%10)
		v /= 10
	}
	dst = append(dst, digits[:k.Digits]...)
	clear(digits[:])
	return dst
}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// decodeSeed decodes a base32 seed as people copy it: case-insensitive, spaces and dashes
// between groups allowed, padding optional.
func decodeSeed(s []byte) ([]byte, error) {
	clean := make([]byte, 0, len(s))
	defer func() { clear(clean) }()
	for _, c := range s {
		switch {
		case c == ' ' || c == '-':
		case c >= 'a' && c <= 'z':
			clean = append(clean, c-'a'+'A')
		case c >= 'A' && c <= 'Z' || c >= '2' && c <= '7':
			clean = append(clean, c)
		case c == '=':
			// padding: only at the end (checked below)
			clean = append(clean, c)
		default:
			return nil, fmt.Errorf("%w: a base32 seed holds only A-Z, 2-7 (spaces, dashes and '=' padding allowed)", ErrInvalid)
		}
	}
	if i := bytes.IndexByte(clean, '='); i >= 0 {
		for _, c := range clean[i:] {
			if c != '=' {
				return nil, fmt.Errorf("%w: '=' padding only at the end of the seed", ErrInvalid)
			}
		}
		clean = clean[:i]
	}
	if len(clean) == 0 {
		return nil, fmt.Errorf("%w: empty seed", ErrInvalid)
	}
	out := make([]byte, b32.DecodedLen(len(clean)))
	n, err := b32.Decode(out, clean)
	if err != nil {
		clear(out)
		return nil, fmt.Errorf("%w: the seed is not valid base32", ErrInvalid)
	}
	return out[:n], nil
}

// Parse reads what a person pasted: an otpauth://totp/ URI (its secret, algorithm, digits and
// period parameters; issuer and label are ignored) or a bare base32 seed (SHA1, 6 digits, 30 s).
// in is not retained; the caller zeroes it. The key's seed is fresh: zero it with Zero.
func Parse(in []byte) (Key, error) {
	in = bytes.TrimSpace(in)
	if len(in) == 0 || len(in) > MaxURILen {
		return Key{}, fmt.Errorf("%w: 1 to %d bytes expected", ErrInvalid, MaxURILen)
	}
	if len(in) >= 10 && strings.EqualFold(string(in[:10]), "otpauth://") {
		return parseURI(in)
	}
	seed, err := decodeSeed(in)
	if err != nil {
		return Key{}, err
	}
	k := Key{Seed: seed, Algorithm: SHA1, Digits: 6, Period: 30}
	if err := k.Valid(); err != nil {
		k.Zero()
		return Key{}, err
	}
	return k, nil
}

// parseURI parses otpauth://totp/LABEL?secret=…&algorithm=…&digits=…&period=… (Google
// Authenticator's Key Uri Format). An hotp URI, a missing or repeated secret, an unknown
// algorithm or out-of-range numbers are refused.
func parseURI(in []byte) (Key, error) {
	u, err := url.Parse(string(in)) // the string copy cannot be zeroed: url needs one
	if err != nil {
		return Key{}, fmt.Errorf("%w: not a valid otpauth URI", ErrInvalid)
	}
	if !strings.EqualFold(u.Host, "totp") {
		return Key{}, fmt.Errorf("%w: only otpauth://totp/ URIs are supported (not %q)", ErrInvalid, boundName(u.Host))
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Key{}, fmt.Errorf("%w: the otpauth URI's query is malformed", ErrInvalid)
	}
	k := Key{Algorithm: SHA1, Digits: 6, Period: 30}
	for name, vs := range q {
		if len(vs) != 1 {
			return Key{}, fmt.Errorf("%w: parameter %q given more than once", ErrInvalid, boundName(name))
		}
		v := vs[0]
		switch strings.ToLower(name) {
		case "secret":
		case "algorithm":
			a, ok := algorithmOf(v)
			if !ok {
				return Key{}, fmt.Errorf("%w: the algorithm must be SHA1, SHA256 or SHA512", ErrInvalid)
			}
			k.Algorithm = a
		case "digits":
			if k.Digits, err = smallInt(v); err != nil {
				return Key{}, fmt.Errorf("%w: digits must be 6, 7 or 8", ErrInvalid)
			}
		case "period":
			if k.Period, err = smallInt(v); err != nil {
				return Key{}, fmt.Errorf("%w: the period must be 1 to %d seconds", ErrInvalid, MaxPeriod)
			}
		case "issuer", "image", "color":
		default:
			return Key{}, fmt.Errorf("%w: unknown otpauth parameter %q", ErrInvalid, boundName(name))
		}
	}
	secret := ""
	for name, vs := range q {
		if strings.EqualFold(name, "secret") {
			if secret != "" {
				return Key{}, fmt.Errorf("%w: the secret is given more than once", ErrInvalid)
			}
			secret = vs[0]
		}
	}
	if secret == "" {
		return Key{}, fmt.Errorf("%w: the otpauth URI has no secret", ErrInvalid)
	}
	if k.Seed, err = decodeSeed([]byte(secret)); err != nil {
		return Key{}, err
	}
	if err := k.Valid(); err != nil {
		k.Zero()
		return Key{}, err
	}
	return k, nil
}

// smallInt parses 1–3 ASCII digits.
func smallInt(s string) (int, error) {
	if len(s) == 0 || len(s) > 3 {
		return 0, ErrInvalid
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, ErrInvalid
		}
	}
	return strconv.Atoi(s)
}

// boundName bounds a parameter name for a message (names are not secret, values are).
func boundName(s string) string {
	if len(s) > 32 {
		s = s[:32]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

// storedPrefix starts the stored form.
const storedPrefix = "totp1:"

// Marshal appends the stored form of k to dst: "totp1:ALG:DIGITS:PERIOD:BASE32SEED".
func (k *Key) Marshal(dst []byte) []byte {
	dst = append(dst, storedPrefix...)
	dst = append(dst, k.Algorithm.name()...)
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, int64(k.Digits), 10)
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, int64(k.Period), 10)
	dst = append(dst, ':')
	n := len(dst)
	dst = append(dst, make([]byte, b32.EncodedLen(len(k.Seed)))...)
	b32.Encode(dst[n:], k.Seed)
	return dst
}

// MaxStoredLen bounds the stored form.
const MaxStoredLen = len(storedPrefix) + len("SHA512:8:300:") + (MaxSeedLen*8+4)/5

// Unmarshal parses the stored form. The key's seed is fresh: zero it with Zero.
func Unmarshal(b []byte) (Key, error) {
	if len(b) > MaxStoredLen || !bytes.HasPrefix(b, []byte(storedPrefix)) {
		return Key{}, fmt.Errorf("%w: not a stored TOTP key", ErrInvalid)
	}
	parts := bytes.SplitN(b[len(storedPrefix):], []byte{':'}, 4)
	if len(parts) != 4 {
		return Key{}, fmt.Errorf("%w: not a stored TOTP key", ErrInvalid)
	}
	a, ok := algorithmOf(string(parts[0]))
	d, derr := smallInt(string(parts[1]))
	p, perr := smallInt(string(parts[2]))
	if !ok || derr != nil || perr != nil {
		return Key{}, fmt.Errorf("%w: not a stored TOTP key", ErrInvalid)
	}
	k := Key{Algorithm: a, Digits: d, Period: p}
	out := make([]byte, b32.DecodedLen(len(parts[3])))
	n, err := b32.Decode(out, parts[3])
	if err != nil {
		clear(out)
		return Key{}, fmt.Errorf("%w: not a stored TOTP key", ErrInvalid)
	}
	k.Seed = out[:n]
	if err := k.Valid(); err != nil {
		k.Zero()
		return Key{}, err
	}
	return k, nil
}
