package credential

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	for _, c := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"alias ok", ValidAlias("staging-admin.2_x"), true},
		{"alias max", ValidAlias(long(MaxAliasLen)), true},
		{"alias empty", ValidAlias(""), false},
		{"alias long", ValidAlias(long(MaxAliasLen + 1)), false},
		{"alias leading dot", ValidAlias(".x"), false},
		{"alias space", ValidAlias("a b"), false},
		{"alias non-ASCII", ValidAlias("ä"), false},
		{"session ok", ValidSession("checkout-1.a_b"), true},
		{"session max", ValidSession(long(MaxSessionLen)), true},
		{"session empty", ValidSession(""), false},
		{"session long", ValidSession(long(MaxSessionLen + 1)), false},
		{"session leading dash", ValidSession("-json"), false},
		{"session slash", ValidSession("a/b"), false},
		{"account ok", ValidAccount("José Ñúñez <jose@example.com>"), true},
		{"account max", ValidAccount(long(MaxAccountLen)), true},
		{"account empty (a sign-in with a password only)", ValidAccount(""), true},
		{"account long", ValidAccount(long(MaxAccountLen + 1)), false},
		{"account not UTF-8", ValidAccount("a\xffb"), false},
		{"account newline", ValidAccount("a\nb"), false},
		{"account C1 control", ValidAccount("a\u0085b"), false},
		{"secret ok", ValidSecret([]byte("pä ss€wörd\t\x01\x7f 🔑")), true},
		{"secret max", ValidSecret(bytes.Repeat([]byte("x"), MaxSecretLen)), true},
		{"secret empty", ValidSecret(nil), false},
		{"secret long", ValidSecret(bytes.Repeat([]byte("x"), MaxSecretLen+1)), false},
		{"secret NUL", ValidSecret([]byte("pw\x00x")), false},
		{"secret not UTF-8", ValidSecret([]byte("pw\xff\xfe")), false},
		{"secret surrogate half", ValidSecret([]byte("\xed\xa0\x80")), false},
		{"secret cut rune", ValidSecret([]byte("pw\xe2\x82")), false},
	} {
		if c.ok && c.err != nil {
			t.Errorf("%s: %v", c.name, c.err)
		}
		if !c.ok && !errors.Is(c.err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", c.name, c.err)
		}
	}
}

// TestSecretErrorsNeverQuote: no validator error carries the password.
func TestSecretErrorsNeverQuote(t *testing.T) {
	for _, pw := range []string{"", "c4nary\x00", "c4nary\xff", strings.Repeat("c4nary", 200)} {
		if err := ValidSecret([]byte(pw)); err == nil || pw != "" && strings.Contains(err.Error(), "c4nary") {
			t.Errorf("ValidSecret(%.10q…) = %v", pw, err)
		}
	}
}

func TestZero(t *testing.T) {
	b := []byte("secret")
	Zero(b)
	if !bytes.Equal(b, make([]byte, 6)) {
		t.Fatalf("Zero left %q", b)
	}
	Zero(nil)
}

func TestValidSaved(t *testing.T) {
	for _, c := range []struct {
		name  string
		saved string
		ok    bool
		totp  bool
	}{
		{"plain", "hunter2", true, false},
		{"plain with totp", "hunter2\x00totp1:SHA1:6:30:GEZDGNBVGY3TQOJQ", true, true},
		{"sealed", "hlseal1:p:AAAA", true, false},
		{"sealed totp", "hlseal1:t:AAAA+/09", true, true},
		{"sealed bad flag", "hlseal1:x:AAAA", false, false},
		{"sealed no colon", "hlseal1:pAAAA", false, false},
		{"sealed empty", "hlseal1:p:", false, false},
		{"sealed padding", "hlseal1:p:AA==", false, false},
		{"sealed NUL", "hlseal1:p:AA\x00A", false, false},
		{"sealed too long", "hlseal1:p:" + strings.Repeat("A", MaxSealedLen), false, false},
	} {
		totp, err := ValidSaved([]byte(c.saved))
		if (err == nil) != c.ok || totp != c.totp {
			t.Errorf("%s: ValidSaved = %v, %v; want ok %v totp %v", c.name, totp, err, c.ok, c.totp)
		}
	}
}
