package origin

import (
	"errors"
	"strings"
	"testing"
)

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		"https://example.com",
		"HTTPS://EXAMPLE.COM:443/",
		"https://bücher.example.",
		"https://xn--bcher-kva.example:08443",
		"http://localhost:3000",
		"http://127.0.0.2",
		"http://[::1]:80",
		"https://[2001:DB8::1]:443",
		"https://[::ffff:7f00:1]",
		"http://１２７.０.０.１",
		"https://example。com",
		"https://user@example.com/path?q#f",
		"javascript:alert(1)",
		"https://127.1",
		"https://0x7f.0.0.1",
		"https://ﬀ.example",
		"https://אב.example",       // right-to-left label (bidi rule)
		"https://ا١.ب",             // Arabic with Arabic-Indic digit
		"https://faß.de",           // deviation character, non-transitional
		"https://a‍b.example",      // ZWJ outside a joiner context
		"https://क्‍.example",      // ZWJ after virama (allowed)
		"https://xn--ls8h.example", // punycode input
		"https://[fe80::1%25eth0]",
		"https://a.b.c.d.e.f.g.h:00000000000000443",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := Canonical(in)
		if err != nil {
			if c != "" {
				t.Fatalf("Canonical(%q) = %q with error %v", in, c, err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Canonical(%q): error %v does not wrap ErrInvalid", in, err)
			}
			if IsLoopback(in) {
				t.Fatalf("IsLoopback(%q) = true for an invalid origin", in)
			}
			return
		}
		again, err := Canonical(c)
		if err != nil {
			t.Fatalf("Canonical(%q) = %q, but Canonical(%q) failed: %v", in, c, c, err)
		}
		if again != c {
			t.Fatalf("Canonical(%q) = %q, Canonical(%q) = %q: not a fixed point", in, c, c, again)
		}
		if IsLoopback(in) != IsLoopback(c) {
			t.Fatalf("IsLoopback differs for %q and its canonical form %q", in, c)
		}
		if !strings.HasPrefix(c, "https://") && !(strings.HasPrefix(c, "http://") && IsLoopback(c)) {
			t.Fatalf("Canonical(%q) = %q: bad scheme", in, c)
		}
		rest := c[strings.Index(c, "://")+3:]
		if rest == "" || strings.ContainsAny(rest, "/?#@\\%") {
			t.Fatalf("Canonical(%q) = %q: empty host, or path, query, fragment, userinfo", in, c)
		}
		for i := 0; i < len(c); i++ {
			b := c[i]
			if !('a' <= b && b <= 'z' || '0' <= b && b <= '9' || strings.IndexByte(":/.-[]", b) >= 0) {
				t.Fatalf("Canonical(%q) = %q: byte %q outside [a-z0-9:/.-[]]", in, c, b)
			}
		}
		if strings.HasSuffix(c, ".") || strings.HasSuffix(c, ":443") && c[:5] == "https" || strings.HasSuffix(c, ":80") && c[:5] == "http:" {
			t.Fatalf("Canonical(%q) = %q: trailing dot or default port", in, c)
		}
	})
}
