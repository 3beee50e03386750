package snapshot

import (
	"net/url"
	"strings"

	"github.com/headless-dev/headless/internal/origin"
)

// resolve parses ref against base the way a browser would for the parts that decide an origin,
// or returns nil when it cannot.
func resolve(base *url.URL, ref string) *url.URL {
	// WHATWG URL parsing: strip leading and trailing C0 controls and spaces, drop every tab and
	// newline, and read a backslash as a slash in special schemes.
	ref = strings.TrimFunc(ref, func(r rune) bool { return r <= ' ' })
	ref = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, ref)
	scheme := ""
	if i := strings.IndexByte(ref, ':'); i > 0 && origin.IsScheme(ref[:i]) {
		scheme = asciiLower(ref[:i])
	} else if base != nil {
		scheme = asciiLower(base.Scheme)
	}
	if special(scheme) {
		ref = strings.ReplaceAll(ref, `\`, "/")
	}
	u, err := url.Parse(ref)
	if err != nil {
		return nil
	}
	if u.IsAbs() {
		return u
	}
	if base == nil || base.Opaque != "" || !base.IsAbs() {
		return nil
	}
	return base.ResolveReference(u)
}

func special(scheme string) bool {
	switch scheme {
	case "http", "https", "ws", "wss", "ftp", "file":
		return true
	}
	return false
}

// originOf serializes u's origin: "scheme://host[:port]" for http(s), ws(s) and ftp URLs (the
// canonical form of package origin when it accepts it), the inner URL's origin for blob:, and
// "null" for everything opaque or unparsable.
func originOf(u *url.URL) string {
	if u == nil {
		return "null"
	}
	scheme := asciiLower(u.Scheme)
	switch scheme {
	case "blob":
		if u.Opaque == "" {
			return "null"
		}
		inner, err := url.Parse(u.Opaque)
		if err != nil {
			return "null"
		}
		switch asciiLower(inner.Scheme) {
		case "http", "https":
			return originOf(inner)
		}
		return "null"
	case "http", "https", "ws", "wss", "ftp":
	default:
		return "null"
	}
	if u.Opaque != "" || u.Host == "" {
		return "null"
	}
	if c, err := origin.Canonical(scheme + "://" + u.Host); err == nil {
		return c
	}
	// Not a form package origin accepts (plain http beyond loopback, other schemes, hosts it
	// refuses): a readable tuple, which can never equal a canonical saved origin.
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "null"
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	switch {
	case port == "",
		port == "80" && (scheme == "http" || scheme == "ws"),
		port == "443" && (scheme == "https" || scheme == "wss"),
		port == "21" && scheme == "ftp":
		return scheme + "://" + host
	}
	return scheme + "://" + host + ":" + port
}

// frameOrigin is the marker of the elements of a frame's document.
func frameOrigin(d *document, sandboxed bool) string {
	if sandboxed || d.docURL == nil || asciiLower(d.docURL.Scheme) == "about" {
		return "null" // sandboxed, or about:blank and about:srcdoc, whose origin is inherited
	}
	return boundedOrigin(d.docURL)
}

// boundedOrigin is originOf, with "null" for an origin too long to show whole (a cut origin
// must not look like another one).
func boundedOrigin(u *url.URL) string {
	if o := originOf(u); len(o) <= maxURL {
		return o
	}
	return "null"
}

// urlText is a URL as the outline shows it: absolute when it resolved, else the raw
// attribute; script and data URLs reduced to their scheme; bounded.
func (b *builder) urlText(u *url.URL, raw string) string {
	s := raw
	if u == nil {
		low := asciiLower(strings.TrimSpace(raw))
		switch {
		case strings.HasPrefix(low, "javascript:"):
			return "javascript:"
		case strings.HasPrefix(low, "data:"):
			return "data:"
		}
	} else {
		switch asciiLower(u.Scheme) {
		case "javascript":
			return "javascript:"
		case "data":
			return "data:"
		}
		if u.User != nil {
			c := *u
			c.User = nil // credentials in a URL are not page text to show
			u = &c
		}
		s = u.String()
	}
	return b.clip(b.clipBytes(s, maxURL), maxURL)
}
