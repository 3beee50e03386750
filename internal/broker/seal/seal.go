// Package seal keeps a saved credential useless to whoever reads it from the vault: only a
// process that holds the machine's seal key — brokerd, by a group only root grants — and,
// where the person chose one, their passphrase, opens it.
//
// # Security contract
//
// [Seal] encrypts a stored secret (a password, or a password and a TOTP seed: see
// [credential.JoinFactor]) with AES-256-GCM under a key derived (HMAC-SHA256) from the seal
// [Key] and, with a passphrase, from the passphrase stretched with PBKDF2-HMAC-SHA256
// ([Iterations] rounds); a fresh random 16-byte salt and 12-byte nonce per seal; padded to one
// length for every secret (a sealed text does not tell a password's length); bound to its
// record (origin, account, alias, whether a second factor is inside, whether a passphrase is
// part of the key) as additional data, so a sealed secret copied into another record does not
// open. The result is text ([credential.SealedPrefix]…), so every store keeps it as it keeps a
// password, and its second-factor flag is readable without any key.
//
// [Open] is the only way back. The seal key lives in a file only the headless-broker group
// reads ([LoadKey] refuses a key file anyone else could read or replace), so what a keyring
// hands any program of the user — with the passphrase phished by a look-alike prompt, or the
// keyring's password — opens nothing. A wrong key, a wrong passphrase and an altered sealed
// text are the same error. [OpenV1] opens a credential sealed before the seal key existed
// (passphrase only), so that brokerd can seal it again at its next approved use.
//
// # Not guaranteed
//
// Root, and whoever is in the headless-broker group, reads the key. A passphrase read where it
// is typed still lets an attacker who also has the key (root) open everything. Key and
// passphrase are zeroed after use, but copies the runtime made (GC moves, the HMAC pads inside
// crypto/hmac, the AES key schedule inside the cipher) are not.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"strings"

	"github.com/headless-dev/headless/internal/credential"
)

// Iterations is the PBKDF2-HMAC-SHA256 work factor of a new seal with a passphrase (OWASP's
// 2023 figure).
const Iterations = 600_000

// Bounds on the work factor a sealed text may name: a planted text cannot make Open spin.
const (
	minIterations = 100_000
	maxIterations = 10_000_000
)

const (
	saltLen  = 16
	nonceLen = 12
	keyLen   = 32
	headV1   = 4 + saltLen + nonceLen     // iterations, salt, nonce
	headV2   = 1 + 4 + saltLen + nonceLen // mode, iterations (0 without a passphrase), salt, nonce
	// paddedLen is what every secret is padded to before sealing: its length (2 bytes), the
	// secret, zeros.
	paddedLen = 2 + credential.MaxStoredLen
)

// The modes of a v2 seal: the key alone, or the key and the person's passphrase.
const (
	modeKey        = 'k'
	modePassphrase = 'x'
)

var (
	// ErrWrongPassphrase: the sealed text does not open — a wrong passphrase, another
	// machine's seal key, a text altered or sealed for another record. They cannot be told
	// apart.
	ErrWrongPassphrase = errors.New("the saved credential does not open (wrong passphrase, a seal key of another machine, or the saved record was altered)")
	// ErrNotSealed: the stored secret is not a sealed text (saved in plain text before the
	// seal key existed).
	ErrNotSealed = errors.New("the saved secret is not sealed")
	// ErrMalformed: the text starts like a sealed one but is not.
	ErrMalformed = errors.New("malformed sealed secret")
	// ErrNoKey: a v2 seal was asked for, or opened, without the seal key.
	ErrNoKey = errors.New("no seal key")
)

// Binding is what a sealed secret belongs to: the record's origin, account and alias (compared
// case-insensitively, as aliases are), whether it holds a second factor, and whether it is a
// passkey (a secret sealed for one kind never opens as another).
type Binding struct {
	Origin, Account, Alias string
	TOTP                   bool
	Passkey                bool
}

// kind is what b says the sealed secret holds.
func (b Binding) kind() credential.Kind {
	switch {
	case b.Passkey:
		return credential.KindPasskey
	case b.TOTP:
		return credential.KindTOTP
	}
	return credential.KindPassword
}

// ad is the additional data of a seal of version v ("v1" or "v2") in mode (0 for v1).
func (b Binding) ad(v string, mode byte) []byte {
	var s strings.Builder
	s.WriteString("headless sealed credential " + v + "\x00")
	s.WriteString(b.Origin)
	s.WriteByte(0)
	s.WriteString(b.Account)
	s.WriteByte(0)
	s.WriteString(strings.ToLower(b.Alias))
	s.WriteByte(0)
	s.WriteByte(byte(b.kind()))
	if mode != 0 {
		s.WriteByte(0)
		s.WriteByte(mode)
	}
	return []byte(s.String())
}

// Seal returns the sealed text of stored for b under the seal key k and, unless passphrase is
// empty, the passphrase. b.TOTP must say whether stored holds a second factor
// ([credential.ValidStored]); the text repeats it in clear.
func Seal(stored []byte, k *Key, passphrase []byte, b Binding) ([]byte, error) {
	if k == nil {
		return nil, fmt.Errorf("seal: %w", ErrNoKey)
	}
	if err := checkStored(stored, b); err != nil {
		return nil, err
	}
	mode, iter := byte(modeKey), uint32(0)
	if len(passphrase) > 0 {
		mode, iter = modePassphrase, Iterations
	}
	raw := make([]byte, headV2, headV2+paddedLen+16)
	raw[0] = mode
	binary.BigEndian.PutUint32(raw[1:], iter)
	if _, err := rand.Read(raw[5:headV2]); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := aeadV2(k, passphrase, mode, raw[5:5+saltLen], int(iter))
	if err != nil {
		return nil, err
	}
	return finish(credential.SealedPrefix, raw, aead, raw[5+saltLen:headV2], stored, b.ad("v2", mode), b.kind()), nil
}

// SealV1 is the seal of a credential saved before the seal key existed: the passphrase alone.
// Nothing seals this way any more; it exists so that tests can make such a record and show
// that [OpenV1] and the migration to [Seal] keep it working.
func SealV1(stored, passphrase []byte, b Binding) ([]byte, error) {
	if len(passphrase) == 0 {
		return nil, errors.New("seal: empty passphrase")
	}
	if err := checkStored(stored, b); err != nil {
		return nil, err
	}
	raw := make([]byte, headV1, headV1+paddedLen+16)
	binary.BigEndian.PutUint32(raw, Iterations)
	if _, err := rand.Read(raw[4:headV1]); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := newAEAD(passphrase, raw[4:4+saltLen], Iterations)
	if err != nil {
		return nil, err
	}
	return finish(credential.SealedPrefixV1, raw, aead, raw[4+saltLen:headV1], stored, b.ad("v1", 0), b.kind()), nil
}

func checkStored(stored []byte, b Binding) error {
	if k, err := credential.StoredKind(stored); err != nil {
		return fmt.Errorf("seal: %w", err)
	} else if k != b.kind() || credential.IsSealed(stored) {
		return errors.New("seal: the binding's kind (password, second factor, passkey) disagrees with the secret, or it is sealed already")
	}
	return nil
}

// finish pads stored, seals it after head and returns the text.
func finish(prefix string, head []byte, aead cipher.AEAD, nonce, stored, ad []byte, kind credential.Kind) []byte {
	// Every secret is padded to one length before it is sealed: a sealed text says nothing of
	// the password's length (red-team round 6b read it off an unpadded one).
	padded := make([]byte, paddedLen)
	defer clear(padded)
	binary.BigEndian.PutUint16(padded, uint16(len(stored)))
	copy(padded[2:], stored)
	raw := aead.Seal(head, nonce, padded, ad)
	return []byte(prefix + string(rune(kind)) + ":" + base64.RawStdEncoding.EncodeToString(raw))
}

// Open returns the stored secret sealed in text for b, opened with the seal key k and the
// passphrase (ignored by a seal made without one; a v1 seal needs only the passphrase); the
// caller zeroes it. ErrNotSealed when text is not a sealed text, ErrMalformed when it is not a
// well-formed one, ErrWrongPassphrase when it does not open, ErrNoKey for a v2 seal without k.
func Open(text []byte, k *Key, passphrase []byte, b Binding) ([]byte, error) {
	st, err := parse(text)
	if err != nil {
		return nil, err
	}
	if st.kind != b.kind() {
		return nil, ErrWrongPassphrase // the flag is part of the binding
	}
	var aead cipher.AEAD
	var ad []byte
	switch st.mode {
	case 0:
		if len(passphrase) == 0 {
			return nil, ErrWrongPassphrase
		}
		aead, err = newAEAD(passphrase, st.salt, st.iter)
		ad = b.ad("v1", 0)
	default:
		if k == nil {
			return nil, fmt.Errorf("open: %w", ErrNoKey)
		}
		if st.mode == modePassphrase && len(passphrase) == 0 {
			return nil, ErrWrongPassphrase
		}
		aead, err = aeadV2(k, passphrase, st.mode, st.salt, st.iter)
		ad = b.ad("v2", st.mode)
	}
	if err != nil {
		return nil, err
	}
	padded, err := aead.Open(nil, st.nonce, st.ct, ad)
	if err != nil {
		return nil, ErrWrongPassphrase
	}
	defer clear(padded)
	n := int(binary.BigEndian.Uint16(padded))
	if len(padded) != paddedLen || n > paddedLen-2 {
		return nil, ErrWrongPassphrase
	}
	out := append([]byte(nil), padded[2:2+n]...)
	if k, verr := credential.StoredKind(out); verr != nil || k != b.kind() {
		clear(out)
		return nil, ErrWrongPassphrase
	}
	return out, nil
}

// NeedsPassphrase reports whether the well-formed sealed text opens only with a passphrase
// (sealed with one, or a v1 seal); false for anything else.
func NeedsPassphrase(text []byte) bool {
	st, err := parse(text)
	return err == nil && st.mode != modeKey
}

// Current reports whether text is a well-formed seal of the current version, which the seal
// key is part of: false for a plain text or a v1 seal, which brokerd seals again at their next
// approved use.
func Current(text []byte) bool {
	st, err := parse(text)
	return err == nil && st.mode != 0
}

// sealed is a parsed sealed text.
type sealed struct {
	kind        credential.Kind
	mode        byte // 0: v1 (passphrase only); modeKey or modePassphrase: v2
	iter        int
	salt, nonce []byte
	ct          []byte // ciphertext and tag
}

// Valid reports whether text is a well-formed sealed text (nil), or why not (an error
// wrapping [ErrNotSealed] or [ErrMalformed]). It opens nothing.
func Valid(text []byte) error {
	_, err := parse(text)
	return err
}

// parse reads a sealed text (outside data: it comes from the vault) without any key work.
func parse(text []byte) (sealed, error) {
	if !credential.IsSealed(text) {
		return sealed{}, ErrNotSealed
	}
	if _, err := credential.ValidSaved(text); err != nil {
		return sealed{}, ErrMalformed
	}
	v1 := string(text[:len(credential.SealedPrefixV1)]) == credential.SealedPrefixV1
	rest := text[len(credential.SealedPrefix):]
	raw, err := base64.RawStdEncoding.DecodeString(string(rest[2:]))
	st := sealed{kind: credential.Kind(rest[0])}
	if v1 {
		if err != nil || len(raw) < headV1+16 {
			return sealed{}, ErrMalformed
		}
		st.iter = int(binary.BigEndian.Uint32(raw))
		st.salt, st.nonce, st.ct = raw[4:4+saltLen], raw[4+saltLen:headV1], raw[headV1:]
	} else {
		if err != nil || len(raw) < headV2+16 || (raw[0] != modeKey && raw[0] != modePassphrase) {
			return sealed{}, ErrMalformed
		}
		st.mode = raw[0]
		st.iter = int(binary.BigEndian.Uint32(raw[1:]))
		st.salt, st.nonce, st.ct = raw[5:5+saltLen], raw[5+saltLen:headV2], raw[headV2:]
		if st.mode == modeKey {
			if st.iter != 0 {
				return sealed{}, fmt.Errorf("%w: a work factor without a passphrase", ErrMalformed)
			}
			return st, nil
		}
	}
	if st.iter < minIterations || st.iter > maxIterations {
		return sealed{}, fmt.Errorf("%w: work factor %d out of bounds", ErrMalformed, st.iter)
	}
	return st, nil
}

// aeadV2 is the cipher of a v2 seal: its key is HMAC-SHA256 under the seal key of the mode,
// the salt and, in passphrase mode, the passphrase stretched with PBKDF2.
func aeadV2(k *Key, passphrase []byte, mode byte, salt []byte, iter int) (cipher.AEAD, error) {
	mac := hmac.New(sha256.New, k.b[:])
	mac.Write([]byte("headless seal v2\x00"))
	mac.Write([]byte{mode})
	mac.Write(salt)
	if mode == modePassphrase {
		pk := pbkdf2(sha256.New, passphrase, salt, iter, keyLen)
		mac.Write(pk)
		clear(pk)
	}
	key := mac.Sum(nil)
	defer clear(key)
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func newAEAD(passphrase, salt []byte, iter int) (cipher.AEAD, error) {
	key := pbkdf2(sha256.New, passphrase, salt, iter, keyLen)
	defer clear(key)
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// pbkdf2 is PBKDF2 (RFC 8018) over a []byte password, so that no immutable string copy of the
// passphrase is made (crypto/pbkdf2 takes a string).
func pbkdf2(h func() hash.Hash, password, salt []byte, iter, keyLen int) []byte {
	prf := hmac.New(h, password)
	hashLen := prf.Size()
	n := (keyLen + hashLen - 1) / hashLen
	out := make([]byte, 0, n*hashLen)
	var buf [4]byte
	u := make([]byte, hashLen)
	t := make([]byte, hashLen)
	for block := 1; block <= n; block++ {
		prf.Reset()
		prf.Write(salt)
		binary.BigEndian.PutUint32(buf[:], uint32(block))
		prf.Write(buf[:])
		u = prf.Sum(u[:0])
		copy(t, u)
		for i := 1; i < iter; i++ {
			prf.Reset()
			prf.Write(u)
			u = prf.Sum(u[:0])
			for j := range t {
				t[j] ^= u[j]
			}
		}
		out = append(out, t...)
	}
	clear(u)
	clear(t)
	return out[:keyLen]
}
