//go:build linux

package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/big"
)

// This file implements the Secret Service transfer encryption
// "dh-ietf1024-sha256-aes128-cbc-pkcs7" (Secret Service API, "Transfer of Secrets"):
// Diffie-Hellman over the RFC 2409 second Oakley group (1024-bit MODP, g = 2), the shared
// secret left-padded to the 128-byte size of the prime, HKDF-SHA256 with empty salt and info
// giving a 16-byte AES-128 key, AES-128-CBC with PKCS#7 padding and a fresh random IV per
// secret sent.

// dhAlgorithm is the Secret Service session algorithm name.
const dhAlgorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

// dhPrimeLen is the byte length of the group prime; the shared secret is padded to it.
const dhPrimeLen = 128

// dhPrime is the RFC 2409 section 6.2 1024-bit MODP group prime.
var dhPrime, _ = new(big.Int).SetString(
	"FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD1"+
		"29024E088A67CC74020BBEA63B139B22514A08798E3404DD"+
		"EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245"+
		"E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"+
		"EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381"+
		"FFFFFFFFFFFFFFFF", 16)

var dhGenerator = big.NewInt(2)

// dhKeyPair is one side's ephemeral Diffie-Hellman key.
type dhKeyPair struct {
	private *big.Int
	public  *big.Int
}

// newDHKeyPair draws a private exponent in [2, p-2] from random.
func newDHKeyPair(random io.Reader) (*dhKeyPair, error) {
	limit := new(big.Int).Sub(dhPrime, big.NewInt(3)) // x-2 in [0, p-4]
	x, err := rand.Int(random, limit)
	if err != nil {
		return nil, fmt.Errorf("generate dh key: %w", err)
	}
	x.Add(x, big.NewInt(2))
	return &dhKeyPair{private: x, public: new(big.Int).Exp(dhGenerator, x, dhPrime)}, nil
}

// publicBytes returns the public value as unsigned big-endian bytes.
func (k *dhKeyPair) publicBytes() []byte {
	return k.public.Bytes()
}

// sessionKey derives the 16-byte AES key from the peer's public value.
func (k *dhKeyPair) sessionKey(peer []byte) ([]byte, error) {
	y := new(big.Int).SetBytes(peer)
	// Reject degenerate values: 0, 1, p-1 and anything >= p.
	pm1 := new(big.Int).Sub(dhPrime, big.NewInt(1))
	if len(peer) > dhPrimeLen || y.Cmp(big.NewInt(1)) <= 0 || y.Cmp(pm1) >= 0 {
		return nil, errors.New("derive session key: invalid peer public value")
	}
	shared := new(big.Int).Exp(y, k.private, dhPrime)
	ikm := make([]byte, dhPrimeLen)
	shared.FillBytes(ikm)
	shared.SetInt64(0)
	key, err := hkdf.Key(sha256.New, ikm, nil, "", 16)
	clear(ikm)
	if err != nil {
		return nil, fmt.Errorf("derive session key: %w", err)
	}
	return key, nil
}

// destroy drops the private exponent. big.Int gives no guarantee that the old words are
// overwritten, so this is best effort.
func (k *dhKeyPair) destroy() {
	if k.private != nil {
		k.private.SetInt64(0)
		k.private = nil
	}
}

// sealSecret encrypts plaintext under key with a fresh random IV. The caller owns and
// zeroes the returned ciphertext; plaintext is not modified.
func sealSecret(key, plaintext []byte, random io.Reader) (iv, ciphertext []byte, err error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encrypt secret: %w", err)
	}
	iv = make([]byte, aes.BlockSize)
	if _, err := io.ReadFull(random, iv); err != nil {
		return nil, nil, fmt.Errorf("encrypt secret: read iv: %w", err)
	}
	padded := pkcs7Pad(plaintext, aes.BlockSize)
	ciphertext = make([]byte, len(padded))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(ciphertext, padded)
	clear(padded)
	return iv, ciphertext, nil
}

// openSecret decrypts ciphertext under key and returns the plaintext as a fresh slice.
// Every intermediate buffer is zeroed; ciphertext is left untouched.
func openSecret(key, iv, ciphertext []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("decrypt secret: %w", err)
	}
	if len(iv) != aes.BlockSize {
		return nil, errors.New("decrypt secret: bad iv length")
	}
	if len(ciphertext) == 0 || len(ciphertext)%aes.BlockSize != 0 {
		return nil, errors.New("decrypt secret: bad ciphertext length")
	}
	padded := make([]byte, len(ciphertext))
	defer clear(padded)
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(padded, ciphertext)
	n, ok := pkcs7Unpad(padded, aes.BlockSize)
	if !ok {
		return nil, errors.New("decrypt secret: bad padding")
	}
	out := make([]byte, n)
	copy(out, padded[:n])
	return out, nil
}

// pkcs7Pad returns a new slice holding b padded to a multiple of size (always 1..size bytes
// of padding). The caller zeroes it.
func pkcs7Pad(b []byte, size int) []byte {
	n := size - len(b)%size
	out := make([]byte, len(b)+n)
	copy(out, b)
	for i := len(b); i < len(out); i++ {
		out[i] = byte(n)
	}
	return out
}

// pkcs7Unpad returns the unpadded length of b.
func pkcs7Unpad(b []byte, size int) (int, bool) {
	if len(b) == 0 || len(b)%size != 0 {
		return 0, false
	}
	n := int(b[len(b)-1])
	if n == 0 || n > size {
		return 0, false
	}
	bad := 0
	for _, c := range b[len(b)-n:] {
		bad |= int(c) ^ n
	}
	if bad != 0 {
		return 0, false
	}
	return len(b) - n, true
}
