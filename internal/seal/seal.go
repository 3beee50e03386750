// Package seal keeps a saved credential useless to whoever reads it from the vault without the
// passphrase that only the person knows and types.
//
// # Security contract
//
// [Seal] encrypts a stored secret (a password, or a password and a TOTP seed: see
// [credential.JoinFactor]) with AES-256-GCM under a key stretched from the passphrase with
// PBKDF2-HMAC-SHA256 ([Iterations] rounds, a fresh random 16-byte salt and 12-byte nonce per
// seal), padded to one length for every secret (a sealed text does not tell a password's
// length), and binds it to its record (origin, account, alias, whether a second factor is
// inside) as additional data: a sealed secret copied into another record — an item of
// another origin, say — does not open. The result is text ([credential.SealedPrefix]…), so
// every store keeps it as it keeps a password, and its second-factor flag is readable without
// the passphrase (the vault records that a seed exists, as it always did, never the seed).
//
// [Open] is the only way back, and it needs the passphrase: what a keyring hands out — to
// brokerd, or to any program of the user that asks while the keyring is unlocked — is worth
// an offline guessing attack on the passphrase, at [Iterations] HMAC-SHA256 rounds per guess.
// A wrong passphrase and an altered sealed text are the same error, [ErrWrongPassphrase].
//
// # Not guaranteed
//
// A weak passphrase (the offline attack above); a passphrase read where it is typed (a
// keylogger, a program that reads the pinentry's memory or terminal); a record sealed with a
// passphrase chosen by someone else (whoever answers the prompt when a credential is saved
// chooses it). Passphrase and key are zeroed after use, but copies the runtime made (GC
// moves, the HMAC pads inside crypto/hmac, the AES key schedule inside the cipher) are not.
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

// Iterations is the PBKDF2-HMAC-SHA256 work factor of a new seal (OWASP's 2023 figure).
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
	headLen  = 4 + saltLen + nonceLen
	// paddedLen is what every secret is padded to before sealing: its length (2 bytes), the
	// secret, zeros.
	paddedLen = 2 + credential.MaxStoredLen
)

var (
	// ErrWrongPassphrase: the passphrase does not open the sealed text, or the text was
	// altered, or it was sealed for another record. The three cannot be told apart.
	ErrWrongPassphrase = errors.New("the passphrase does not open this credential (wrong passphrase, or the saved record was altered)")
	// ErrNotSealed: the stored secret is not a sealed text (saved before the passphrase
	// provider was chosen, in plain text).
	ErrNotSealed = errors.New("the saved secret is not sealed")
	// ErrMalformed: the text starts like a sealed one but is not.
	ErrMalformed = errors.New("malformed sealed secret")
)

// Binding is what a sealed secret belongs to: the record's origin, account and alias (compared
// case-insensitively, as aliases are), and whether it holds a second factor.
type Binding struct {
	Origin, Account, Alias string
	TOTP                   bool
}

func (b Binding) ad() []byte {
	var s strings.Builder
	s.WriteString("headless sealed credential v1\x00")
	s.WriteString(b.Origin)
	s.WriteByte(0)
	s.WriteString(b.Account)
	s.WriteByte(0)
	s.WriteString(strings.ToLower(b.Alias))
	s.WriteByte(0)
	if b.TOTP {
		s.WriteByte('t')
	} else {
		s.WriteByte('p')
	}
	return []byte(s.String())
}

// Seal returns the sealed text of stored for b under passphrase. b.TOTP must say whether
// stored holds a second factor ([credential.ValidStored]); the text repeats it in clear.
func Seal(stored, passphrase []byte, b Binding) ([]byte, error) {
	if len(passphrase) == 0 {
		return nil, errors.New("seal: empty passphrase")
	}
	if totp, err := credential.ValidStored(stored); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	} else if totp != b.TOTP || credential.IsSealed(stored) {
		return nil, errors.New("seal: the binding's second-factor flag disagrees with the secret, or it is sealed already")
	}
	raw := make([]byte, headLen, headLen+paddedLen+16)
	binary.BigEndian.PutUint32(raw, Iterations)
	if _, err := rand.Read(raw[4:headLen]); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := newAEAD(passphrase, raw[4:4+saltLen], Iterations)
	if err != nil {
		return nil, err
	}
	// Every secret is padded to one length before it is sealed: a sealed text says nothing of
	// the password's length (red-team round 6b read it off an unpadded one).
	padded := make([]byte, paddedLen)
	defer clear(padded)
	binary.BigEndian.PutUint16(padded, uint16(len(stored)))
	copy(padded[2:], stored)
	raw = aead.Seal(raw, raw[4+saltLen:headLen], padded, b.ad())
	flag := "p"
	if b.TOTP {
		flag = "t"
	}
	return []byte(credential.SealedPrefix + flag + ":" + base64.RawStdEncoding.EncodeToString(raw)), nil
}

// Open returns the stored secret sealed in text for b, opened with passphrase; the caller
// zeroes it. ErrNotSealed when text is not a sealed text, ErrMalformed when it is not a
// well-formed one, ErrWrongPassphrase when it does not open.
func Open(text, passphrase []byte, b Binding) ([]byte, error) {
	st, err := parse(text)
	if err != nil {
		return nil, err
	}
	if st.totp != b.TOTP {
		return nil, ErrWrongPassphrase // the flag is part of the binding
	}
	aead, err := newAEAD(passphrase, st.salt, st.iter)
	if err != nil {
		return nil, err
	}
	padded, err := aead.Open(nil, st.nonce, st.ct, b.ad())
	if err != nil {
		return nil, ErrWrongPassphrase
	}
	defer clear(padded)
	n := int(binary.BigEndian.Uint16(padded))
	if len(padded) != paddedLen || n > paddedLen-2 {
		return nil, ErrWrongPassphrase
	}
	out := append([]byte(nil), padded[2:2+n]...)
	if totp, verr := credential.ValidStored(out); verr != nil || totp != b.TOTP {
		clear(out)
		return nil, ErrWrongPassphrase
	}
	return out, nil
}

// sealed is a parsed sealed text.
type sealed struct {
	totp        bool
	iter        int
	salt, nonce []byte
	ct          []byte // ciphertext and tag
}

// parse reads a sealed text (outside data: it comes from the vault) without any key work.
// Valid reports whether text is a well-formed sealed text (nil), or why not (an error
// wrapping [ErrNotSealed] or [ErrMalformed]). It opens nothing.
func Valid(text []byte) error {
	_, err := parse(text)
	return err
}

func parse(text []byte) (sealed, error) {
	if !credential.IsSealed(text) {
		return sealed{}, ErrNotSealed
	}
	if _, err := credential.ValidSaved(text); err != nil {
		return sealed{}, ErrMalformed
	}
	rest := text[len(credential.SealedPrefix):]
	raw, err := base64.RawStdEncoding.DecodeString(string(rest[2:]))
	if err != nil || len(raw) < headLen+16 {
		return sealed{}, ErrMalformed
	}
	iter := binary.BigEndian.Uint32(raw)
	if iter < minIterations || iter > maxIterations {
		return sealed{}, fmt.Errorf("%w: work factor %d out of bounds", ErrMalformed, iter)
	}
	return sealed{totp: rest[0] == 't', iter: int(iter), salt: raw[4 : 4+saltLen], nonce: raw[4+saltLen : headLen], ct: raw[headLen:]}, nil
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
