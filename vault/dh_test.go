//go:build linux

package vault

import (
	"bytes"
	"crypto/rand"
	"testing"
)

func TestDHPrime(t *testing.T) {
	if dhPrime.BitLen() != 1024 || !dhPrime.ProbablyPrime(20) {
		t.Fatal("dhPrime is not the 1024-bit MODP prime")
	}
}

func TestDHAgreement(t *testing.T) {
	a, err := newDHKeyPair(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newDHKeyPair(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ka, err := a.sessionKey(b.publicBytes())
	if err != nil {
		t.Fatal(err)
	}
	kb, err := b.sessionKey(a.publicBytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(ka) != 16 || !bytes.Equal(ka, kb) {
		t.Fatal("keys differ")
	}
	for _, bad := range [][]byte{{0}, {1}, nil, dhPrime.Bytes(), bytes.Repeat([]byte{0xff}, 129)} {
		if _, err := a.sessionKey(bad); err == nil {
			t.Errorf("sessionKey accepted degenerate peer value %x", bad)
		}
	}
}

func TestSealOpen(t *testing.T) {
	key := make([]byte, 16)
	rand.Read(key)
	for n := 0; n <= 48; n++ {
		pt := bytes.Repeat([]byte{'p'}, n)
		iv, ct, err := sealSecret(key, pt, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if len(ct)%16 != 0 || len(ct) <= n || len(ct) > n+16 {
			t.Fatalf("%d bytes sealed into %d", n, len(ct))
		}
		got, err := openSecret(key, iv, ct)
		if err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("round trip of %d bytes: %v", n, err)
		}
		if cap(got) != len(got) {
			t.Fatal("openSecret returned a slice with spare capacity")
		}
	}
	iv, ct, _ := sealSecret(key, []byte("x"), rand.Reader)
	iv2, _, _ := sealSecret(key, []byte("x"), rand.Reader)
	if bytes.Equal(iv, iv2) {
		t.Fatal("IV reused")
	}
	if _, err := openSecret(key, iv[:8], ct); err == nil {
		t.Fatal("short IV accepted")
	}
	if _, err := openSecret(key, iv, ct[:5]); err == nil {
		t.Fatal("partial block accepted")
	}
}

// TestTamperedSecretIsNeverTheOriginal: the session's CBC has no MAC (the Secret Service
// protocol defines none), so tampering is caught only as far as the padding goes. What must
// hold: a tampered ciphertext or IV never decrypts to the original secret, and one whose
// padding breaks is an error, never a plaintext.
func TestTamperedSecretIsNeverTheOriginal(t *testing.T) {
	key := make([]byte, 16)
	rand.Read(key)
	pt := []byte("x") // one block: 'x' and 15 bytes of padding 0x0f
	iv, ct, err := sealSecret(key, pt, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(b []byte, i int, m byte) []byte {
		c := append([]byte(nil), b...)
		c[i] ^= m
		return c
	}
	// The IV's last byte sets the last padding byte: 0x0f^0x55 = 0x5a > 16, so this is a
	// padding error, deterministically.
	if got, err := openSecret(key, flip(iv, 15, 0x55), ct); err == nil {
		t.Fatalf("tampered padding decrypted to %q", got)
	}
	// The IV's first byte flips the plaintext's first byte (CBC is malleable): a wrong
	// plaintext, never the original.
	if got, err := openSecret(key, flip(iv, 0, 0x01), ct); err != nil || bytes.Equal(got, pt) {
		t.Fatalf("IV[0] flipped: %q, %v; want another plaintext", got, err)
	}
	// Any byte of the ciphertext block: an error, or (rarely, a garbled block with valid
	// padding) another plaintext; never the original.
	for i := range ct {
		for _, m := range []byte{0x01, 0x80, 0xff} {
			got, err := openSecret(key, iv, flip(ct, i, m))
			if err == nil && bytes.Equal(got, pt) {
				t.Fatalf("ciphertext byte %d ^ %#x still decrypted to the original", i, m)
			}
		}
	}
	if got, err := openSecret(key, iv, ct); err != nil || !bytes.Equal(got, pt) {
		t.Fatalf("untampered: %q, %v", got, err)
	}
}

func TestPKCS7Unpad(t *testing.T) {
	for _, c := range []struct {
		in []byte
		n  int
		ok bool
	}{
		{bytes.Repeat([]byte{16}, 16), 0, true},
		{append(bytes.Repeat([]byte{'a'}, 15), 1), 15, true},
		{append(bytes.Repeat([]byte{'a'}, 15), 0), 0, false},
		{append(bytes.Repeat([]byte{'a'}, 15), 17), 0, false},
		{append(bytes.Repeat([]byte{'a'}, 14), 1, 2), 0, false},
		{nil, 0, false},
	} {
		n, ok := pkcs7Unpad(c.in, 16)
		if n != c.n || ok != c.ok {
			t.Errorf("pkcs7Unpad(%x) = %d, %v; want %d, %v", c.in, n, ok, c.n, c.ok)
		}
	}
}
