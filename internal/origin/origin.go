// Package origin puts web origins into the one canonical form that records, challenges and
// page checks compare byte for byte.
//
// # Canonical form
//
// [Canonical] returns "https://host" or "https://host:port":
//
//   - the scheme is lower-cased and is "https", or "http" only when the host is "localhost",
//     an IPv4 address in 127.0.0.0/8 or the IPv6 loopback [::1] (the development exception);
//     [IsLoopback] says which origins reach this machine: those, and https names under
//     localhost, which browsers resolve to loopback themselves;
//   - addresses that reach this machine by another spelling are rejected: 0.0.0.0/8, [::] and
//     IPv4-mapped IPv6 addresses;
//   - a domain name is mapped and validated with the IDNA lookup profile (UTS #46,
//     non-transitional, STD3 rules, hyphen and joiner checks, bidi rule), lower-cased and
//     punycode-encoded; a single trailing dot is removed; labels are 1–63 bytes and the name
//     at most 253;
//   - an IPv4 address is a strict dotted quad; a name whose last label looks like a number
//     ("127.1", "0x7f.1", "2130706433") is rejected rather than guessed at, because browsers
//     read such names as IPv4 addresses;
//   - an IPv6 literal is written in brackets, lower-case and compressed (RFC 5952, as
//     net/netip prints it); zones are rejected;
//   - the default port (443 for https, 80 for http) is elided; another port (1–65535, digits
//     only) is kept, with leading zeros removed ("https://a.example:08443" gives
//     "https://a.example:8443"); an empty port ("https://a.example:") is rejected;
//   - the input is at most [MaxLen] bytes of valid UTF-8 with no spaces or control characters.
//
// Everything else is rejected with an error that wraps [ErrInvalid] and names the problem:
// other schemes (file, data, javascript, ftp, ws, chrome, …), opaque forms ("https:host"),
// userinfo, any path other than "" or "/", a query or fragment (even empty), backslashes,
// percent-encoding in the host, an empty host.
//
// # Guarantees
//
// Canonical is a fixed point: when Canonical(x) returns c, Canonical(c) returns c. A canonical
// origin contains only lower-case ASCII letters, digits and ":/.-[]". Spellings that differ only
// in letter case, UTS #46 mapping (full-width forms, ignorable characters), Unicode versus
// punycode, a trailing dot, an explicit default port, leading zeros in the port or the writing
// of an IPv6 address give the same string.
//
// # Not guaranteed
//
// Canonical does not resolve names and says nothing about who controls a host: it compares
// spellings, not owners. Hosts that browsers accept but this package rejects (underscores,
// percent-encoded hosts, non-dotted-quad IPv4 forms, "--" in the third and fourth position of
// a label) cannot hold records.
package origin

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/headless-dev/headless/internal/wire"
	"golang.org/x/net/idna"
)

// MaxLen is the longest input Canonical looks at, in bytes.
const MaxLen = 2048

// ErrInvalid is wrapped by every error Canonical returns (INVALID_ORIGIN).
var ErrInvalid = wire.Sentinel(wire.CodeInvalidOrigin, "origin: invalid")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// Canonical returns the canonical form of the origin raw, or an error wrapping [ErrInvalid].
// See the package documentation for the form and the rules.
func Canonical(raw string) (string, error) {
	o, err := parse(raw)
	if err != nil {
		return "", err
	}
	return o.String(), nil
}

// IsLoopback reports whether raw is a valid origin whose host is "localhost" or a name under
// it, an IPv4 address in 127.0.0.0/8 or [::1], whatever its scheme: an origin served by
// whatever process listens on this machine.
func IsLoopback(raw string) bool {
	o, err := parse(raw)
	return err == nil && o.loopback
}

type parsed struct {
	scheme   string // "https" or "http"
	host     string // canonical host, IPv6 in brackets
	port     string // "" when default
	loopback bool
}

func (o parsed) String() string {
	s := o.scheme + "://" + o.host
	if o.port != "" {
		s += ":" + o.port
	}
	return s
}

func parse(raw string) (parsed, error) {
	var o parsed
	if raw == "" {
		return o, invalid("empty")
	}
	if len(raw) > MaxLen {
		return o, invalid("longer than %d bytes", MaxLen)
	}
	if !utf8.ValidString(raw) {
		return o, invalid("not valid UTF-8")
	}
	for _, r := range raw {
		switch {
		case r <= ' ' || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return o, invalid("contains a space or control character")
		case r == '\\':
			return o, invalid("contains a backslash")
		}
	}

	// Scheme.
	colon := strings.IndexByte(raw, ':')
	if colon <= 0 || !IsScheme(raw[:colon]) {
		return o, invalid("missing scheme; want https://host")
	}
	o.scheme = strings.ToLower(raw[:colon])
	rest := raw[colon+1:]
	switch o.scheme {
	case "https", "http":
	default:
		if len(o.scheme) > 32 {
			return o, invalid("scheme is not allowed; only https (and http for loopback)")
		}
		return o, invalid("scheme %q is not allowed; only https (and http for loopback)", o.scheme)
	}
	if !strings.HasPrefix(rest, "//") {
		return o, invalid("opaque form; want %s://host", o.scheme)
	}
	rest = rest[2:]

	// Authority, then what follows it.
	end := strings.IndexAny(rest, "/?#")
	authority, tail := rest, ""
	if end >= 0 {
		authority, tail = rest[:end], rest[end:]
	}
	if strings.Contains(authority, "@") {
		return o, invalid("userinfo is not allowed")
	}
	switch {
	case tail == "" || tail == "/":
	case tail[0] == '?':
		return o, invalid("query is not allowed")
	case tail[0] == '#':
		return o, invalid("fragment is not allowed")
	default:
		// A path, maybe followed by a query or fragment: name the first offender.
		return o, invalid("path is not allowed")
	}

	hostport := authority
	var port string
	var hasPort bool
	if strings.HasPrefix(hostport, "[") {
		closing := strings.IndexByte(hostport, ']')
		if closing < 0 {
			return o, invalid("unclosed IPv6 literal")
		}
		after := hostport[closing+1:]
		hostport = hostport[:closing+1]
		if after != "" {
			if after[0] != ':' {
				return o, invalid("unexpected characters after IPv6 literal")
			}
			port, hasPort = after[1:], true
		}
	} else if i := strings.IndexByte(hostport, ':'); i >= 0 {
		hostport, port, hasPort = hostport[:i], hostport[i+1:], true
		if strings.IndexByte(port, ':') >= 0 {
			return o, invalid("IPv6 literal must be in brackets")
		}
	}
	if hostport == "" {
		return o, invalid("empty host")
	}

	if err := o.setHost(hostport); err != nil {
		return o, err
	}
	if o.scheme == "http" && (!o.loopback || strings.HasSuffix(o.host, ".localhost")) {
		return o, invalid("http is only allowed for localhost and loopback addresses")
	}
	if hasPort {
		p, err := canonicalPort(port)
		if err != nil {
			return o, err
		}
		if !(o.scheme == "https" && p == "443") && !(o.scheme == "http" && p == "80") {
			o.port = p
		}
	}
	return o, nil
}

// IsScheme reports whether s is a URL scheme (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
func IsScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

func canonicalPort(p string) (string, error) {
	if p == "" {
		return "", invalid("empty port")
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return "", invalid("port must be decimal digits")
		}
	}
	p = strings.TrimLeft(p, "0")
	if p == "" || len(p) > 5 {
		return "", invalid("port out of range 1-65535")
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", invalid("port out of range 1-65535")
	}
	return strconv.Itoa(n), nil
}

// setHost validates h (an IPv6 literal in brackets, or a name or IPv4 address as typed) and
// stores its canonical form.
func (o *parsed) setHost(h string) error {
	if strings.IndexByte(h, '%') >= 0 {
		return invalid("percent-encoding in host is not allowed")
	}
	if strings.HasPrefix(h, "[") {
		a, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return invalid("invalid IPv6 literal")
		}
		if a.IsUnspecified() || a.Is4In6() {
			// [::] and [::ffff:a.b.c.d] reach whatever listens locally (or an IPv4 host by
			// another spelling): no record is bound to them.
			return invalid("unspecified or IPv4-mapped IPv6 address")
		}
		o.host = "[" + a.String() + "]"
		o.loopback = a == netip.IPv6Loopback()
		return nil
	}
	if strings.ContainsAny(h, "[]") {
		return invalid("invalid host")
	}

	// UTS #46 mapping first (it lower-cases and maps full-width dots and digits), then decide
	// whether the result is an IPv4 address, as browsers do.
	a, err := idna.Lookup.ToASCII(h)
	if err != nil {
		return invalid("invalid host name: %v", err)
	}
	if strings.HasSuffix(a, ".") {
		// Only a dot (or a rune mapped to one) typed at the end is a trailing dot. A last label
		// that maps to nothing ("a.xn--", "a.\u00ad") must not make "a." and then "a".
		last, _ := utf8.DecodeLastRuneInString(h)
		if d, err := idna.Lookup.ToASCII(string(last)); err != nil || d != "." {
			return invalid("empty label in host name")
		}
		a = a[:len(a)-1]
	}
	if a == "" {
		return invalid("empty host")
	}
	labels := strings.Split(a, ".")
	if len(a) > 253 {
		return invalid("host name longer than 253 bytes")
	}
	for _, l := range labels {
		if l == "" {
			return invalid("empty label in host name")
		}
		if len(l) > 63 {
			return invalid("host name label longer than 63 bytes")
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return invalid("invalid character in host name")
			}
		}
	}
	if looksNumeric(labels[len(labels)-1]) {
		ip, err := netip.ParseAddr(a)
		if err != nil || !ip.Is4() {
			return invalid("numeric host is not a dotted-quad IPv4 address")
		}
		if ip.IsUnspecified() || ip.As4()[0] == 0 {
			// 0.0.0.0/8 connects to this machine on Linux: a loopback origin by another name.
			return invalid("address in 0.0.0.0/8")
		}
		o.host = ip.String()
		o.loopback = ip.IsLoopback()
		return nil
	}
	o.host = a
	// Browsers resolve localhost and every name under it to loopback themselves (RFC 6761).
	o.loopback = a == "localhost" || strings.HasSuffix(a, ".localhost")
	return nil
}

// looksNumeric reports whether a browser would read a host ending in label l as an IPv4
// address (WHATWG URL "ends in a number").
func looksNumeric(l string) bool {
	if strings.HasPrefix(l, "0x") {
		l = l[2:]
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return l != ""
}
