package origin

import (
	"errors"
	"strings"
	"testing"
)

func TestCanonicalAccepts(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://example.com", "https://example.com"},
		{"https://example.com/", "https://example.com"},
		{"HTTPS://EXAMPLE.COM", "https://example.com"},
		{"HtTpS://Example.Com/", "https://example.com"},
		{"https://example.com.", "https://example.com"},
		{"https://example.com./", "https://example.com"},
		{"https://bücher.example", "https://xn--bcher-kva.example"},
		{"https://BÜCHER.example", "https://xn--bcher-kva.example"},
		{"https://xn--bcher-kva.example", "https://xn--bcher-kva.example"},
		{"https://XN--BCHER-KVA.EXAMPLE", "https://xn--bcher-kva.example"},
		{"https://münchen.de:8443", "https://xn--mnchen-3ya.de:8443"},
		{"https://ｅｘａｍｐｌｅ.com", "https://example.com"},  // full-width letters map (UTS #46)
		{"https://example。com", "https://example.com"},  // ideographic full stop maps to a dot
		{"https://example.com。", "https://example.com"}, // and is a trailing dot at the end
		{"https://example.com．", "https://example.com"},
		{"https://ex\u200bample.com", "https://example.com"}, // UTS #46 ignores ZWSP, as browsers do
		{"https://ex\u00adample.com", "https://example.com"}, // and soft hyphen
		{"https://faß.de", "https://xn--fa-hia.de"},          // non-transitional: ß kept
		{"https://example.com:443", "https://example.com"},   // default port elided
		{"https://example.com:0443", "https://example.com"},  // leading zeros normalized
		{"https://example.com:8443", "https://example.com:8443"},
		{"https://example.com:08443", "https://example.com:8443"},
		{"https://example.com:80", "https://example.com:80"}, // 80 is not the https default
		{"https://example.com:1", "https://example.com:1"},
		{"https://example.com:65535", "https://example.com:65535"},
		{"https://example.com:8443/", "https://example.com:8443"},
		{"https://a-b.example", "https://a-b.example"},
		{"https://1.example", "https://1.example"},
		{"https://localhost", "https://localhost"},
		{"https://192.0.2.1", "https://192.0.2.1"},
		{"https://192.0.2.1:8443", "https://192.0.2.1:8443"},
		{"https://[2001:DB8::1]:443", "https://[2001:db8::1]"},
		{"https://[2001:db8:0:0:0:0:0:1]", "https://[2001:db8::1]"},
		{"https://[2001:db8::1]:8443/", "https://[2001:db8::1]:8443"},
		{"https://[::1]", "https://[::1]"},
		// The development exception.
		{"http://localhost", "http://localhost"},
		{"HTTP://LOCALHOST:80/", "http://localhost"},
		{"http://localhost.", "http://localhost"},
		{"http://localhost:3000", "http://localhost:3000"},
		{"http://localhost:443", "http://localhost:443"},
		{"http://127.0.0.1", "http://127.0.0.1"},
		{"http://127.0.0.2:8080", "http://127.0.0.2:8080"},
		{"http://127.255.255.254", "http://127.255.255.254"},
		{"http://[::1]", "http://[::1]"},
		{"http://[0:0:0:0:0:0:0:1]:8080", "http://[::1]:8080"},
		{"http://１２７.０.０.１", "http://127.0.0.1"}, // full-width digits map to an IPv4 address
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Canonical(tt.in)
			if err != nil {
				t.Fatalf("Canonical(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("Canonical(%q) = %q, want %q", tt.in, got, tt.want)
			}
			again, err := Canonical(got)
			if err != nil || again != got {
				t.Fatalf("Canonical(%q) = %q, %v; not a fixed point", got, again, err)
			}
		})
	}
}

func TestCanonicalRejects(t *testing.T) {
	tests := []struct{ in, msg string }{
		{"", "empty"},
		{"example.com", "missing scheme"},
		{"//example.com", "missing scheme"},
		{"null", "missing scheme"},
		{"1https://example.com", "missing scheme"},
		{"https:example.com", "opaque form"},
		{"https:/example.com", "opaque form"},
		{"https://", "empty host"},
		{"https:///", "empty host"},
		{"https:///example.com", "path is not allowed"},
		{"https://:443", "empty host"},
		{"https://.", "empty host"},
		// http is only for loopback.
		{"http://example.com", "http is only allowed for localhost and loopback addresses"},
		{"http://localhost.evil.com", "http is only allowed"},
		{"http://localhost.com", "http is only allowed"},
		{"http://evil-localhost", "http is only allowed"},
		{"http://foo.localhost", "http is only allowed"},
		{"http://128.0.0.1", "http is only allowed"},
		{"http://0.0.0.0", "0.0.0.0/8"},
		{"https://0.0.0.0", "0.0.0.0/8"},
		{"https://0.1.2.3:8443", "0.0.0.0/8"},
		{"https://[::]", "unspecified or IPv4-mapped"},
		{"https://[::ffff:7f00:1]", "unspecified or IPv4-mapped"},
		{"http://[::2]", "http is only allowed"},
		{"http://[::ffff:127.0.0.1]", "unspecified or IPv4-mapped"},
		{"http://127.0.0.1.evil.com", "http is only allowed"},
		// Other schemes.
		{"file:///etc/passwd", `scheme "file" is not allowed`},
		{"javascript:alert(1)", `scheme "javascript" is not allowed`},
		{"data:text/html,hi", `scheme "data" is not allowed`},
		{"chrome://settings", `scheme "chrome" is not allowed`},
		{"chrome-extension://abc", `scheme "chrome-extension" is not allowed`},
		{"ftp://example.com", `scheme "ftp" is not allowed`},
		{"ws://localhost", `scheme "ws" is not allowed`},
		{"wss://example.com", `scheme "wss" is not allowed`},
		{"blob:https://example.com/uuid", `scheme "blob" is not allowed`},
		{"about:blank", `scheme "about" is not allowed`},
		{"httpss://example.com", `scheme "httpss" is not allowed`},
		{strings.Repeat("a", 40) + "://x", "scheme is not allowed"},
		// Userinfo, path, query, fragment.
		{"https://user@example.com", "userinfo"},
		{"https://user:pass@example.com", "userinfo"},
		{"https://@example.com", "userinfo"},
		{"https://example.com@evil.com", "userinfo"},
		{"https://example.com/login", "path is not allowed"},
		{"https://example.com//", "path is not allowed"},
		{"https://example.com/?", "path is not allowed"},
		{"https://example.com?", "query is not allowed"},
		{"https://example.com?a=b", "query is not allowed"},
		{"https://example.com#", "fragment is not allowed"},
		{"https://example.com#frag", "fragment is not allowed"},
		{"https://example.com:443?x", "query is not allowed"},
		// Spaces, control characters, odd bytes.
		{"https://exa mple.com", "space or control"},
		{" https://example.com", "space or control"},
		{"https://example.com ", "space or control"},
		{"https://example.com\n", "space or control"},
		{"https://example.com\x00", "space or control"},
		{"https://exa\tmple.com", "space or control"},
		{"https://example.com\x7f", "space or control"},
		{"https://example.com\u0085", "space or control"},
		{"https://example.com\xff", "UTF-8"},
		{"https:\\\\example.com", "backslash"},
		{"https://example.com\\", "backslash"},
		{"https://%65xample.com", "percent-encoding"},
		{"https://[fe80::1%25eth0]", "percent-encoding"},
		// Ports.
		{"https://example.com:", "empty port"},
		{"https://example.com:0", "port out of range"},
		{"https://example.com:000", "port out of range"},
		{"https://example.com:65536", "port out of range"},
		{"https://example.com:99999999999999999999", "port out of range"},
		{"https://example.com:-1", "digits"},
		{"https://example.com:+443", "digits"},
		{"https://example.com:44 3", "space"},
		{"https://example.com:0x1bb", "digits"},
		{"https://example.com:443:443", "IPv6 literal must be in brackets"},
		{"https://example.com:８４４３", "digits"},
		// Hosts.
		{"https://2001:db8::1", "IPv6 literal must be in brackets"},
		{"https://[2001:db8::1", "unclosed IPv6"},
		{"https://[2001:db8::1]x", "after IPv6 literal"},
		{"https://[192.0.2.1]", "invalid IPv6"},
		{"https://[example.com]", "invalid IPv6"},
		{"https://[]", "invalid IPv6"},
		{"https://[[::1]]", "after IPv6 literal"},
		{"https://ex[ample.com", "invalid host"},
		{"https://example.com]", "invalid host"},
		{"https://example..com", "empty label"},
		{"https://a.xn--", "empty label"}, // found by FuzzCanonical: the label vanished, leaving "a."
		{"https://a.XN--", "empty label"},
		{"https://a.ｘｎ－－", "empty label"},
		{"https://a.xn--.", "empty label"},
		{"https://xn--.a", "empty label"},
		{"https://a.\u00ad", "empty label"},
		{"https://xn--", "empty host"},
		{"https://.example.com", "empty label"},
		{"https://example.com..", "empty label"},
		{"https://exa_mple.com", "invalid host name"},
		{"https://-example.com", "invalid host name"},
		{"https://example-.com", "invalid host name"},
		{"https://ex--ample.com", "invalid host name"},
		{"https://xn--a.example", "invalid host name"},
		{"https://xn--example-.com", "invalid host name"},
		{"https://exa!mple.com", "invalid host name"},
		{"https://exa<mple.com", "invalid host name"},
		{"https://ex\u2028ample.com", "invalid host name"},
		{"https://\u202eexample.com", "invalid host name"}, // bidi override
		{"https://" + strings.Repeat("a", 64) + ".example", "label longer than 63"},
		{"https://" + strings.Repeat("a.", 127) + "ab", "longer than 253"},
		{"https://127.1", "dotted-quad"},
		{"https://2130706433", "dotted-quad"},
		{"https://0x7f.0.0.1", "dotted-quad"},
		{"https://0x7f000001", "dotted-quad"},
		{"https://127.0.0.01", "dotted-quad"},
		{"https://256.0.0.1", "dotted-quad"},
		{"https://1.2.3.4.5", "dotted-quad"},
		{"https://example.0x", "dotted-quad"},
		{"https://example.123", "dotted-quad"},
		{"https://" + strings.Repeat("a", MaxLen), "longer than 2048 bytes"},
	}
	for _, tt := range tests {
		name := tt.in
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			got, err := Canonical(tt.in)
			if err == nil {
				t.Fatalf("Canonical(%q) = %q, want error containing %q", tt.in, got, tt.msg)
			}
			if got != "" {
				t.Errorf("Canonical(%q) returned %q with error", tt.in, got)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "origin: ") {
				t.Errorf("error %q does not start with \"origin: \"", err)
			}
		})
	}
}

func TestCanonicalLongestAccepted(t *testing.T) {
	// 253-byte name: 63+1+63+1+63+1+61.
	name := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61)
	if len(name) != 253 {
		t.Fatalf("len = %d", len(name))
	}
	for _, in := range []string{"https://" + name, "https://" + name + "."} {
		got, err := Canonical(in)
		if err != nil || got != "https://"+name {
			t.Errorf("Canonical(%d bytes) = %q, %v", len(in), got, err)
		}
	}
	if _, err := Canonical("https://" + name + "d"); err == nil {
		t.Error("254-byte name accepted")
	}
}

func TestIsLoopback(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"http://localhost", true},
		{"https://localhost:8443", true},
		{"http://127.0.0.1", true},
		{"http://127.1.2.3:9000", true},
		{"https://[::1]", true},
		{"http://[::1]:8080/", true},
		{"https://example.com", false},
		{"https://[::ffff:127.0.0.1]", false}, // invalid
		{"https://app.localhost:8443", true},
		{"http://app.localhost", false}, // invalid: http only for localhost itself
		{"http://example.com", false},   // invalid
		{"https://localhost.evil.com", false},
		{"https://127.0.0.1.evil.com", false},
		{"ftp://localhost", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsLoopback(tt.in); got != tt.want {
			t.Errorf("IsLoopback(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func BenchmarkCanonical(b *testing.B) {
	for _, in := range []string{"https://example.com", "HTTPS://BÜCHER.example:443/", "https://[2001:DB8::1]:8443"} {
		b.Run(in, func(b *testing.B) {
			for b.Loop() {
				if _, err := Canonical(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
