package seal

import (
	"bytes"
	stdpbkdf2 "crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/credential"
)

// RFC 7914 §11 gives PBKDF2-HMAC-SHA256 test vectors.
func TestPBKDF2Vectors(t *testing.T) {
	for _, v := range []struct {
		p, s string
		c    int
		want string
	}{
		{"passwd", "salt", 1, "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"},
		{"Password", "NaCl", 80000, "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"},
	} {
		got := pbkdf2(sha256.New, []byte(v.p), []byte(v.s), v.c, 64)
		if hex.EncodeToString(got) != v.want {
			t.Errorf("pbkdf2(%q, %q, %d) = %x", v.p, v.s, v.c, got)
		}
		std, err := pbkdf2Std(v.p, v.s, v.c)
		if err != nil || !bytes.Equal(std, got) {
			t.Errorf("crypto/pbkdf2 disagrees: %x, %v", std, err)
		}
	}
}

func pbkdf2Std(p, s string, c int) ([]byte, error) {
	return stdpbkdf2.Key(sha256.New, p, []byte(s), c, 64)
}

var rec = Binding{Origin: "https://staging.example.com", Account: "admin@example.com", Alias: "Staging-Admin"}

// tk is the test's seal key; otherKey another machine's.
var tk, otherKey = mustKey(1), mustKey(2)

func mustKey(b byte) *Key {
	k, err := NewKey(bytes.Repeat([]byte{b}, KeyLen))
	if err != nil {
		panic(err)
	}
	return k
}

// TestPassphraseAloneOpensNothing: what a program of the user can get — the sealed text from
// the keyring and the passphrase from a look-alike prompt — opens no v2 seal without the seal
// key, and another machine's key opens nothing either; a seal made without a passphrase
// opens with the key alone, and only with it.
func TestPassphraseAloneOpensNothing(t *testing.T) {
	pass := []byte("correct horse battery staple")
	secret := []byte("canary-pw-4711")
	withPass, err := Seal(secret, tk, pass, rec)
	if err != nil {
		t.Fatal(err)
	}
	keyOnly, err := Seal(secret, tk, nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	if !NeedsPassphrase(withPass) || NeedsPassphrase(keyOnly) || !Current(withPass) || !Current(keyOnly) {
		t.Fatal("NeedsPassphrase/Current disagree with how the texts were sealed")
	}
	for name, c := range map[string]struct {
		text []byte
		k    *Key
		pass []byte
		want error
	}{
		"passphrase, no key":          {withPass, nil, pass, ErrNoKey},
		"passphrase, another key":     {withPass, otherKey, pass, ErrWrongPassphrase},
		"key, no passphrase":          {withPass, tk, nil, ErrWrongPassphrase},
		"key-only seal, no key":       {keyOnly, nil, pass, ErrNoKey},
		"key-only seal, another key":  {keyOnly, otherKey, nil, ErrWrongPassphrase},
		"key-only as passphrase seal": {bytes.Replace(keyOnly, []byte("hlseal2:"), []byte("hlseal1:"), 1), nil, pass, nil},
	} {
		got, err := Open(c.text, c.k, c.pass, rec)
		if c.want == nil {
			if err == nil {
				t.Errorf("%s: opened %q", name, got)
			}
			continue
		}
		if !errors.Is(err, c.want) || got != nil {
			t.Errorf("%s: Open = %q, %v; want %v", name, got, err, c.want)
		}
	}
	for _, text := range [][]byte{withPass, keyOnly} {
		got, err := Open(text, tk, pass, rec)
		if err != nil || string(got) != string(secret) {
			t.Fatalf("Open with the key = %q, %v", got, err)
		}
	}
}

// TestV1StillOpens: a credential sealed before the seal key existed opens with its passphrase
// (and is not Current, so brokerd seals it again), with or without a key at hand.
func TestV1StillOpens(t *testing.T) {
	pass := []byte("correct horse battery staple")
	old, err := SealV1([]byte("old-pw"), pass, rec)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(old), "hlseal1:p:") || Current(old) || !NeedsPassphrase(old) {
		t.Fatalf("v1 text %q: Current %v NeedsPassphrase %v", old, Current(old), NeedsPassphrase(old))
	}
	for _, k := range []*Key{nil, tk} {
		if got, err := Open(old, k, pass, rec); err != nil || string(got) != "old-pw" {
			t.Fatalf("Open(v1) = %q, %v", got, err)
		}
	}
	if _, err := Open(old, tk, []byte("wrong passphrase!"), rec); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("Open(v1, wrong) = %v", err)
	}
}

func TestSealOpen(t *testing.T) {
	pass := []byte("correct horse battery staple")
	secret := []byte("pä55wörd-canary")
	text, err := Seal(secret, tk, pass, rec)
	if err != nil {
		t.Fatal(err)
	}
	if !credential.IsSealed(text) || !strings.HasPrefix(string(text), "hlseal2:p:") {
		t.Fatalf("sealed text %q", text)
	}
	if totp, err := credential.ValidSaved(text); err != nil || totp {
		t.Fatalf("ValidSaved(sealed) = %v, %v", totp, err)
	}
	if bytes.Contains(text, secret) || bytes.Contains(text, pass) {
		t.Fatal("the sealed text holds the secret or the passphrase")
	}
	again, _ := Seal(secret, tk, pass, rec)
	if bytes.Equal(again, text) {
		t.Fatal("two seals of one secret are equal: salt and nonce are not fresh")
	}
	got, err := Open(text, tk, pass, Binding{Origin: rec.Origin, Account: rec.Account, Alias: "staging-admin"})
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open = %q, %v", got, err)
	}

	// Everything else fails, and the failures cannot be told apart.
	wrong := map[string]func() ([]byte, error){
		"passphrase": func() ([]byte, error) { return Open(text, tk, []byte("correct horse battery stapl"), rec) },
		"origin": func() ([]byte, error) {
			return Open(text, tk, pass, Binding{"https://evil.example", rec.Account, rec.Alias, false, false})
		},
		"account": func() ([]byte, error) {
			return Open(text, tk, pass, Binding{rec.Origin, "root@example.com", rec.Alias, false, false})
		},
		"alias": func() ([]byte, error) {
			return Open(text, tk, pass, Binding{rec.Origin, rec.Account, "other", false, false})
		},
		"totp flag": func() ([]byte, error) {
			return Open(text, tk, pass, Binding{rec.Origin, rec.Account, rec.Alias, true, false})
		},
		"flipped flag": func() ([]byte, error) {
			return Open(bytes.Replace(text, []byte(":p:"), []byte(":t:"), 1), tk, pass, Binding{rec.Origin, rec.Account, rec.Alias, true, false})
		},
		"passkey flag": func() ([]byte, error) {
			return Open(text, tk, pass, Binding{rec.Origin, rec.Account, rec.Alias, false, true})
		},
		"passkey flipped": func() ([]byte, error) {
			return Open(bytes.Replace(text, []byte(":p:"), []byte(":k:"), 1), tk, pass, Binding{rec.Origin, rec.Account, rec.Alias, false, true})
		},
		"flipped byte": func() ([]byte, error) { return Open(flip(t, text, 40), tk, pass, rec) },
		"last byte":    func() ([]byte, error) { return Open(flip(t, text, -1), tk, pass, rec) },
	}
	for name, f := range wrong {
		if got, err := f(); !errors.Is(err, ErrWrongPassphrase) || got != nil {
			t.Errorf("%s: Open = %q, %v; want ErrWrongPassphrase", name, got, err)
		}
	}
}

// flip changes one byte of the sealed payload (index i of the raw bytes, -1: the last).
func flip(t *testing.T, text []byte, i int) []byte {
	t.Helper()
	raw, err := base64.RawStdEncoding.DecodeString(string(text[len("hlseal2:p:"):]))
	if err != nil {
		t.Fatal(err)
	}
	if i < 0 {
		i = len(raw) - 1
	}
	raw[i] ^= 1
	return []byte(string(text[:10]) + base64.RawStdEncoding.EncodeToString(raw))
}

func TestSealTOTP(t *testing.T) {
	pass := []byte("a long enough passphrase")
	stored := credential.JoinFactor([]byte("pw"), []byte("totp1:SHA1:6:30:GEZDGNBVGY3TQOJQ"))
	if _, err := Seal(stored, tk, pass, rec); err == nil {
		t.Fatal("sealed a secret with a second factor under a binding that says it has none")
	}
	b := rec
	b.TOTP = true
	text, err := Seal(stored, tk, pass, b)
	if err != nil || !strings.HasPrefix(string(text), "hlseal2:t:") {
		t.Fatalf("Seal = %q, %v", text, err)
	}
	if totp, err := credential.ValidSaved(text); err != nil || !totp {
		t.Fatalf("ValidSaved = %v, %v; want the TOTP flag", totp, err)
	}
	got, err := Open(text, tk, pass, b)
	if err != nil || !bytes.Equal(got, stored) {
		t.Fatalf("Open = %v", err)
	}
}

func TestSealRefuses(t *testing.T) {
	pass := []byte("a long enough passphrase")
	if _, err := SealV1([]byte("pw"), nil, rec); err == nil {
		t.Error("sealed (v1) with an empty passphrase")
	}
	if _, err := Seal([]byte("pw"), nil, pass, rec); !errors.Is(err, ErrNoKey) {
		t.Errorf("sealed without the seal key: %v", err)
	}
	text, _ := Seal([]byte("pw"), tk, pass, rec)
	if _, err := Seal(text, tk, pass, rec); err == nil {
		t.Error("sealed a sealed text again")
	}
	if _, err := Seal([]byte("pw\x00junk"), tk, pass, rec); err == nil {
		t.Error("sealed an invalid stored secret")
	}
	if _, err := Open([]byte("plain-password"), tk, pass, rec); !errors.Is(err, ErrNotSealed) {
		t.Errorf("Open(plain) = %v; want ErrNotSealed", err)
	}
}

func TestParseBounds(t *testing.T) {
	mk := func(iter uint32, payload int) []byte {
		raw := make([]byte, headV1+payload)
		binary.BigEndian.PutUint32(raw, iter)
		return []byte("hlseal1:p:" + base64.RawStdEncoding.EncodeToString(raw))
	}
	for name, c := range map[string]struct {
		text []byte
		want error
	}{
		"plain":           {[]byte("hunter2"), ErrNotSealed},
		"prefix only":     {[]byte("hlseal1:"), ErrMalformed},
		"bad flag":        {[]byte("hlseal1:x:AAAA"), ErrMalformed},
		"padding":         {[]byte("hlseal1:p:AAAA=="), ErrMalformed},
		"short":           {mk(Iterations, 15), ErrMalformed},
		"work factor low": {mk(minIterations-1, 32), ErrMalformed},
		"work factor big": {mk(maxIterations+1, 32), ErrMalformed},
		"too long":        {mk(Iterations, credential.MaxSealedLen), ErrMalformed},
	} {
		if _, err := parse(c.text); !errors.Is(err, c.want) {
			t.Errorf("%s: parse = %v; want %v", name, err, c.want)
		}
	}
	if _, err := parse(mk(Iterations, 32)); err != nil {
		t.Errorf("well-formed: %v", err)
	}
}

// FuzzParse: a sealed text comes from the vault (outside data, writable by any program of the
// user): parsing it never panics, and what it accepts is a well-formed sealed secret within the
// bounds.
func FuzzParse(f *testing.F) {
	good, _ := Seal([]byte("pw"), tk, []byte("seed passphrase"), rec)
	f.Add(good)
	f.Add([]byte("hlseal1:t:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"))
	f.Add([]byte("hlseal1:"))
	f.Add([]byte("password"))
	f.Fuzz(func(t *testing.T, text []byte) {
		st, err := parse(text)
		if err != nil {
			if !errors.Is(err, ErrNotSealed) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("parse error %v is neither ErrNotSealed nor ErrMalformed", err)
			}
			return
		}
		if _, verr := credential.ValidSaved(text); verr != nil || len(text) > credential.MaxSealedLen {
			t.Fatalf("parse accepted what ValidSaved refuses: %v", verr)
		}
		if st.iter < minIterations || st.iter > maxIterations || len(st.salt) != saltLen || len(st.nonce) != nonceLen || len(st.ct) < 16 {
			t.Fatalf("parse accepted out-of-bounds fields: %+v", st)
		}
	})
}

// TestSealedLengthSaysNothing: a one-byte password and the longest stored secret seal to texts
// of one length (red-team round 6b read a password's length off an unpadded sealed text).
func TestSealedLengthSaysNothing(t *testing.T) {
	pass := []byte("a long enough passphrase")
	short, err := Seal([]byte("x"), tk, pass, rec)
	if err != nil {
		t.Fatal(err)
	}
	long, err := Seal(bytes.Repeat([]byte("y"), credential.MaxSecretLen), tk, pass, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(short) != len(long) || len(long) > credential.MaxSealedLen {
		t.Fatalf("sealed lengths %d and %d (max %d); want one length", len(short), len(long), credential.MaxSealedLen)
	}
	if got, err := Open(short, tk, pass, rec); err != nil || string(got) != "x" {
		t.Fatalf("Open(short) = %q, %v", got, err)
	}
}

// BenchmarkOpen is what the passphrase adds to a release (brokerd's side): one key stretch and
// one AES-GCM open.
func BenchmarkOpen(b *testing.B) {
	pass := []byte("a long enough passphrase")
	text, err := Seal([]byte("benchmark-password"), tk, pass, rec)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		pw, err := Open(text, tk, pass, rec)
		if err != nil {
			b.Fatal(err)
		}
		clear(pw)
	}
}

// TestSealPasskey: a passkey seals and opens under a passkey binding only, its flag is "k",
// and the sealed text holds none of its private key.
func TestSealPasskey(t *testing.T) {
	k := mustKey(7)
	key := bytes.Repeat([]byte{0x5a}, 138)
	stored, err := credential.StorePasskey(credential.Passkey{RPID: "localhost", ID: []byte("id-1"), UserHandle: []byte{1, 2, 3}, Key: key, SignCount: 4})
	if err != nil {
		t.Fatal(err)
	}
	b := Binding{Origin: "http://localhost:8080", Account: "alice", Alias: "pk", Passkey: true}
	text, err := Seal(stored, k, nil, b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(text, []byte(credential.SealedPrefix+"k:")) || bytes.Contains(text, key[:16]) {
		t.Fatalf("sealed passkey %.20q…: want the %q flag and no key bytes", text, "k")
	}
	if _, err := Seal(stored, k, nil, Binding{Origin: b.Origin, Account: b.Account, Alias: b.Alias}); err == nil {
		t.Fatal("a passkey sealed under a password binding")
	}
	if _, err := Open(text, k, nil, Binding{Origin: b.Origin, Account: b.Account, Alias: b.Alias}); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("a sealed passkey opened as a password: %v", err)
	}
	got, err := Open(text, k, nil, b)
	if err != nil || !bytes.Equal(got, stored) {
		t.Fatalf("Open = %v; want the stored passkey back", err)
	}
}
