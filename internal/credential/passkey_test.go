package credential

import (
	"bytes"
	"errors"
	"testing"
)

func testPasskey() Passkey {
	return Passkey{RPID: "localhost", ID: bytes.Repeat([]byte{7}, 32), UserHandle: []byte{1, 2, 3}, Key: bytes.Repeat([]byte{0x5a}, 138), SignCount: 41}
}

// TestPasskeyStored: a passkey's stored form round-trips, is of KindPasskey (sealed: flag "k"),
// is never a password (it starts with NUL: SplitFactor gives it an empty one, which
// ValidSecret refuses) and holds no key byte in clear.
func TestPasskeyStored(t *testing.T) {
	p := testPasskey()
	stored, err := StorePasskey(p)
	if err != nil {
		t.Fatal(err)
	}
	if !IsPasskey(stored) || bytes.Contains(stored, p.Key[:8]) {
		t.Fatalf("stored form %q: not a passkey, or the key in clear", stored)
	}
	if k, err := StoredKind(stored); err != nil || k != KindPasskey {
		t.Fatalf("StoredKind = %c, %v; want k", k, err)
	}
	if totp, err := ValidStored(stored); err != nil || totp {
		t.Fatalf("ValidStored = %v, %v", totp, err)
	}
	if pw, _ := SplitFactor(stored); ValidSecret(pw) == nil {
		t.Fatal("a passkey's stored form splits into a valid password")
	}
	got, err := ParsePasskey(stored)
	if err != nil {
		t.Fatal(err)
	}
	if got.RPID != p.RPID || !bytes.Equal(got.ID, p.ID) || !bytes.Equal(got.UserHandle, p.UserHandle) || !bytes.Equal(got.Key, p.Key) || got.SignCount != p.SignCount {
		t.Fatalf("round trip: %+v", got)
	}
	got.Zero()
	if !bytes.Equal(got.Key, make([]byte, len(p.Key))) || !bytes.Equal(got.ID, make([]byte, len(p.ID))) {
		t.Fatal("Zero left bytes")
	}
	if k, err := SavedKind([]byte(SealedPrefix + "k:AAAA")); err != nil || k != KindPasskey {
		t.Fatalf("SavedKind(sealed k) = %c, %v", k, err)
	}
	if _, err := SavedKind([]byte(SealedPrefix + "x:AAAA")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("SavedKind(sealed x) = %v; want ErrInvalid", err)
	}
}

// TestPasskeyRefused: out-of-bounds parts and malformed stored forms are ErrInvalid.
func TestPasskeyRefused(t *testing.T) {
	for name, mod := range map[string]func(*Passkey){
		"no rp id":      func(p *Passkey) { p.RPID = "" },
		"rp id space":   func(p *Passkey) { p.RPID = "a b" },
		"no id":         func(p *Passkey) { p.ID = nil },
		"long id":       func(p *Passkey) { p.ID = make([]byte, MaxCredentialIDLen+1) },
		"long handle":   func(p *Passkey) { p.UserHandle = make([]byte, MaxUserHandleLen+1) },
		"no key":        func(p *Passkey) { p.Key = nil },
		"rsa-sized key": func(p *Passkey) { p.Key = make([]byte, 1200) },
	} {
		p := testPasskey()
		mod(&p)
		if _, err := StorePasskey(p); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: StorePasskey = %v; want ErrInvalid", name, err)
		}
	}
	stored, _ := StorePasskey(testPasskey())
	for name, bad := range map[string][]byte{
		"truncated":  stored[:len(stored)-6],
		"not base64": append(bytes.Clone(stored[:12]), "!!!!"...),
		"trailing":   append(bytes.Clone(stored), "AAAA"...),
		"no prefix":  stored[1:],
	} {
		if _, err := ParsePasskey(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: ParsePasskey = %v; want ErrInvalid", name, err)
		}
		if _, err := StoredKind(bad); err == nil && name != "no prefix" { // without the NUL: text, a password
			t.Errorf("%s: StoredKind accepted it", name)
		}
	}
}
