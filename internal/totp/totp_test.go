package totp

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// The test vectors of RFC 6238, appendix B.
func TestRFC6238(t *testing.T) {
	seeds := map[Algorithm]string{
		SHA1:   "12345678901234567890",
		SHA256: "12345678901234567890123456789012",
		SHA512: "1234567890123456789012345678901234567890123456789012345678901234",
	}
	cases := []struct {
		t    int64
		code map[Algorithm]string
	}{
		{59, map[Algorithm]string{SHA1: "94287082", SHA256: "46119246", SHA512: "90693936"}},
		{1111111109, map[Algorithm]string{SHA1: "07081804", SHA256: "68084774", SHA512: "25091201"}},
		{1111111111, map[Algorithm]string{SHA1: "14050471", SHA256: "67062674", SHA512: "99943326"}},
		{1234567890, map[Algorithm]string{SHA1: "89005924", SHA256: "91819424", SHA512: "93441116"}},
		{2000000000, map[Algorithm]string{SHA1: "69279037", SHA256: "90698825", SHA512: "38618901"}},
		{20000000000, map[Algorithm]string{SHA1: "65353130", SHA256: "77737706", SHA512: "47863826"}},
	}
	for _, c := range cases {
		for a, want := range c.code {
			k := Key{Seed: []byte(seeds[a]), Algorithm: a, Digits: 8, Period: 30}
			if err := k.Valid(); err != nil {
				t.Fatal(err)
			}
			if got := string(k.AppendCode(nil, time.Unix(c.t, 0))); got != want {
				t.Errorf("%s at %d: %s, want %s", a.name(), c.t, got, want)
			}
			// Fewer digits are the low digits of the same value.
			for d := 6; d < 8; d++ {
				k.Digits = d
				if got := string(k.AppendCode(nil, time.Unix(c.t, 0))); got != want[8-d:] {
					t.Errorf("%s at %d, %d digits: %s, want %s", a.name(), c.t, d, got, want[8-d:])
				}
			}
		}
	}
}

// RFC 4226 appendix D (HOTP, the counter under every TOTP code).
func TestRFC4226(t *testing.T) {
	want := []string{"755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"}
	k := Key{Seed: []byte("12345678901234567890"), Algorithm: SHA1, Digits: 6, Period: 30}
	for i, w := range want {
		if got := string(k.appendCounter(nil, uint64(i))); got != w {
			t.Errorf("counter %d: %s, want %s", i, got, w)
		}
	}
}

func TestParse(t *testing.T) {
	// "12345678901234567890" in base32.
	const seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
	ok := []struct {
		in     string
		alg    Algorithm
		digits int
		period int
	}{
		{seed, SHA1, 6, 30},
		{strings.ToLower(seed), SHA1, 6, 30},
		{"GEZD GNBV GY3T QOJQ GEZD GNBV GY3T QOJQ", SHA1, 6, 30},
		{"  " + seed + "\n", SHA1, 6, 30},
		{"otpauth://totp/Example:alice@example.com?secret=" + seed + "&issuer=Example", SHA1, 6, 30},
		{"otpauth://totp/x?secret=" + seed + "&algorithm=SHA256&digits=8&period=60", SHA256, 8, 60},
		{"OTPAUTH://TOTP/x?secret=" + strings.ToLower(seed) + "&algorithm=sha512&digits=7", SHA512, 7, 30},
	}
	for _, c := range ok {
		k, err := Parse([]byte(c.in))
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if string(k.Seed) != "12345678901234567890" || k.Algorithm != c.alg || k.Digits != c.digits || k.Period != c.period {
			t.Errorf("Parse(%q) = %v %d %d", c.in, k.Algorithm, k.Digits, k.Period)
		}
	}
	bad := []string{
		"",
		"GEZDGNBV", // 5 bytes: too short
		seed + "1",
		seed + "=A",
		strings.Repeat("A", MaxURILen+1),
		strings.Repeat("A", 300), // 187 bytes: too long
		"otpauth://hotp/x?secret=" + seed + "&counter=1",
		"otpauth://totp/x",
		"otpauth://totp/x?secret=",
		"otpauth://totp/x?secret=" + seed + "&secret=" + seed,
		"otpauth://totp/x?secret=" + seed + "&Secret=" + seed,
		"otpauth://totp/x?secret=" + seed + "&algorithm=MD5",
		"otpauth://totp/x?secret=" + seed + "&digits=5",
		"otpauth://totp/x?secret=" + seed + "&digits=9",
		"otpauth://totp/x?secret=" + seed + "&digits=+6",
		"otpauth://totp/x?secret=" + seed + "&period=0",
		"otpauth://totp/x?secret=" + seed + "&period=301",
		"otpauth://totp/x?secret=" + seed + "&period=-30",
		"otpauth://totp/x?secret=" + seed + "&unknown=1",
		"otpauth://totp/x?secret=" + seed + "&%zz",
	}
	for _, in := range bad {
		_, err := Parse([]byte(in))
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%.40q): %v, want ErrInvalid", in, err)
			continue
		}
		if strings.Contains(err.Error(), seed) || strings.Contains(err.Error(), "GEZD") {
			t.Errorf("Parse(%.40q): the error quotes the seed: %v", in, err)
		}
	}
}

func TestStoredRoundTrip(t *testing.T) {
	k := Key{Seed: []byte("1234567890123456789012345678901234567890"), Algorithm: SHA256, Digits: 7, Period: 45}
	b := k.Marshal(nil)
	if len(b) > MaxStoredLen {
		t.Fatalf("stored form %d bytes, max %d", len(b), MaxStoredLen)
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Seed, k.Seed) || got.Algorithm != k.Algorithm || got.Digits != k.Digits || got.Period != k.Period {
		t.Fatalf("round trip: %+v", got)
	}
	max := Key{Seed: bytes.Repeat([]byte{0xff}, MaxSeedLen), Algorithm: SHA512, Digits: 8, Period: MaxPeriod}
	if b := max.Marshal(nil); len(b) > MaxStoredLen {
		t.Fatalf("largest stored form %d bytes, max %d", len(b), MaxStoredLen)
	}
	for _, bad := range []string{"", "totp1:", "totp1:SHA1:6:30", "totp1:MD5:6:30:GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", "totp1:SHA1:9:30:GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", "totp2:SHA1:6:30:GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"} {
		if _, err := Unmarshal([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Unmarshal(%q): %v", bad, err)
		}
	}
	k.Zero()
	if !bytes.Equal(k.Seed, make([]byte, len(k.Seed))) {
		t.Fatal("Zero left the seed")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"))
	f.Add([]byte("otpauth://totp/x?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&algorithm=SHA256&digits=8&period=60"))
	f.Add([]byte("otpauth://totp/x?secret=GEZD%20GNBV&digits=6"))
	f.Fuzz(func(t *testing.T, in []byte) {
		k, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		if err := k.Valid(); err != nil {
			t.Fatalf("Parse accepted an invalid key: %v", err)
		}
		code := k.AppendCode(nil, time.Unix(1234567890, 0))
		if len(code) != k.Digits {
			t.Fatalf("code of %d digits, want %d", len(code), k.Digits)
		}
		back, err := Unmarshal(k.Marshal(nil))
		if err != nil || !bytes.Equal(back.Seed, k.Seed) || back.Algorithm != k.Algorithm || back.Digits != k.Digits || back.Period != k.Period {
			t.Fatalf("stored form does not round-trip: %v", err)
		}
	})
}

func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte("totp1:SHA1:6:30:GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"))
	f.Fuzz(func(t *testing.T, in []byte) {
		k, err := Unmarshal(in)
		if err == nil && k.Valid() != nil {
			t.Fatal("Unmarshal accepted an invalid key")
		}
	})
}
