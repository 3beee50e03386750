// Package allowlist is the navigation allowlist: the hosts an agent's browser may show as a
// document (`headless start --allow HOST[,HOST…]`, or "allow" in the user-only config).
//
// # Security contract
//
//   - [Parse] accepts only host entries: a lower-case ASCII DNS name (letters, digits, '-',
//     '.'), an IPv4 address or a bracketed IPv6 address, optionally with a leading "*." (any
//     subdomain, not the name itself) and an optional ":port" (1-65535; without one, any
//     port). It refuses "*" alone, a wildcard anywhere else, schemes, paths, queries,
//     credentials, non-ASCII (write the punycode form), empty entries and more than [Max]
//     entries. Entries are canonical (lower case, sorted, without duplicates), so two lists
//     that allow the same entries compare equal.
//   - [List.Allows] answers for a URL's host and effective port (80/443 for http/https when
//     none is written); an empty list allows everything (no allowlist). Only http and https
//     URLs can be allowed.
//   - [List.Covers] says whether a list allows everything another allows: the config's list is
//     the person's ceiling, which `--allow` may narrow but never widen.
//
// # Not guaranteed
//
// This is a navigation policy, not a network firewall: the host enforces it on document
// requests (pages and frames), and a page on the list can still load subresources (scripts,
// images, fetch/XHR, WebSockets) from anywhere. A name on the list is only as trustworthy as
// the DNS that resolves it.
package allowlist

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/headless-dev/headless/internal/wire"
)

// Max bounds the entries of a list.
const Max = 32

// ErrInvalid is a refused entry or list.
var ErrInvalid = wire.SentinelHint(wire.CodeInvalidArgument, "invalid navigation allowlist",
	"'headless start --allow' and the config's \"allow\" take HOST[:PORT] entries, comma-separated or repeated (at most 32): example.com, *.example.com (subdomains), 127.0.0.1:8080, [::1]; no scheme, path, '*' alone or non-ASCII (use punycode)")

// entry is one canonical entry.
type entry struct {
	host     string // lower case, IPv6 without brackets
	wildcard bool   // "*.host": subdomains of host only
	port     int    // 0: any port
}

func (e entry) String() string {
	h := e.host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if e.wildcard {
		h = "*." + h
	}
	if e.port != 0 {
		h += ":" + strconv.Itoa(e.port)
	}
	return h
}

// List is a parsed allowlist; the zero List allows everything.
type List struct {
	entries []entry
}

// Parse parses entries, each of which may hold several separated by commas.
func Parse(specs []string) (List, error) {
	var l List
	seen := map[string]bool{}
	for _, spec := range specs {
		for _, raw := range strings.Split(spec, ",") {
			e, err := parseEntry(strings.TrimSpace(raw))
			if err != nil {
				return List{}, err
			}
			if s := e.String(); !seen[s] {
				seen[s] = true
				l.entries = append(l.entries, e)
			}
			if len(l.entries) > Max {
				return List{}, fmt.Errorf("%w: more than %d entries", ErrInvalid, Max)
			}
		}
	}
	slices.SortFunc(l.entries, func(a, b entry) int { return strings.Compare(a.String(), b.String()) })
	return l, nil
}

func parseEntry(s string) (entry, error) {
	bad := func(why string) (entry, error) {
		return entry{}, fmt.Errorf("%w: %q: %s", ErrInvalid, bounded(s), why)
	}
	switch {
	case s == "":
		return bad("empty entry")
	case len(s) > 270:
		return bad("too long")
	case s == "*" || s == "*.":
		return bad("'*' alone would allow every host")
	case strings.Contains(s, "://"):
		return bad("a host, not a URL: no scheme")
	case strings.ContainsAny(s, "/?#"):
		return bad("a host only: no path, query or fragment")
	case strings.Contains(s, "@"):
		return bad("no credentials")
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return bad("non-ASCII: write the name in its punycode form (xn--…)")
		}
		if s[i] <= ' ' || s[i] == 0x7f {
			return bad("a space or control character")
		}
	}
	var e entry
	if rest, ok := strings.CutPrefix(s, "*."); ok {
		e.wildcard, s = true, rest
	}
	if strings.Contains(s, "*") {
		return bad("a wildcard only as a leading '*.'")
	}
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return bad("an unclosed '['")
		}
		host, port = s[1:end], s[end+1:]
		if port != "" && !strings.HasPrefix(port, ":") {
			return bad("text after ']' that is not a port")
		}
		port = strings.TrimPrefix(port, ":")
		if ip := net.ParseIP(host); ip == nil || ip.To4() != nil || strings.Contains(host, "%") {
			return bad("not an IPv6 address in brackets")
		}
		host = net.ParseIP(host).String()
		if e.wildcard {
			return bad("a wildcard on an address")
		}
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i+1:]
		if strings.Contains(host, ":") {
			return bad("an IPv6 address must be written in brackets")
		}
	}
	if port != "" || strings.HasSuffix(s, ":") {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return bad("the port must be 1-65535")
		}
		e.port = n
	}
	host = strings.ToLower(host)
	if !strings.Contains(host, ":") {
		if ip := net.ParseIP(host); ip != nil {
			if e.wildcard {
				return bad("a wildcard on an address")
			}
			host = ip.String()
		} else if err := validName(host); err != nil {
			return bad(err.Error())
		}
	}
	e.host = host
	return e, nil
}

// validName checks a DNS name: labels of letters, digits and '-' (not at either end), at most
// 63 bytes each, 253 in all, no empty label (a trailing dot is refused).
func validName(h string) error {
	if h == "" || len(h) > 253 {
		return errors.New("not a host name")
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return errors.New("an empty or over-long label")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return errors.New("a label that begins or ends with '-'")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return errors.New("only letters, digits, '-' and '.' in a host name")
			}
		}
	}
	if _, err := strconv.Atoi(h[strings.LastIndexByte(h, '.')+1:]); err == nil {
		return errors.New("a name whose last label is a number (not a valid IPv4 address)")
	}
	return nil
}

func bounded(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Empty reports whether the list has no entries (everything is allowed).
func (l List) Empty() bool { return len(l.entries) == 0 }

// Strings is the canonical list.
func (l List) Strings() []string {
	out := make([]string, 0, len(l.entries))
	for _, e := range l.entries {
		out = append(out, e.String())
	}
	return out
}

// Equal reports whether both lists have the same entries.
func (l List) Equal(o List) bool { return slices.Equal(l.Strings(), o.Strings()) }

// Allows reports whether a document at u may be shown. The empty list allows everything;
// otherwise only http and https URLs whose host and port an entry names.
func (l List) Allows(u *url.URL) bool {
	if l.Empty() {
		return true
	}
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return l.AllowsHost(u.Scheme, u.Hostname(), u.Port())
}

// AllowsHost is Allows for a scheme, host (without brackets) and port ("" for the scheme's
// default).
func (l List) AllowsHost(scheme, host, port string) bool {
	if l.Empty() {
		return true
	}
	p := 0
	switch {
	case port != "":
		n, err := strconv.Atoi(port)
		if err != nil {
			return false
		}
		p = n
	case scheme == "http":
		p = 80
	case scheme == "https":
		p = 443
	default:
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	}
	for _, e := range l.entries {
		if e.port != 0 && e.port != p {
			continue
		}
		if e.wildcard && strings.HasSuffix(host, "."+e.host) || !e.wildcard && host == e.host {
			return true
		}
	}
	return false
}

// Covers reports whether l allows everything o allows (an empty l allows everything; an empty
// o, everything, is covered only by an empty l).
func (l List) Covers(o List) bool {
	if l.Empty() {
		return true
	}
	if o.Empty() {
		return false
	}
	for _, oe := range o.entries {
		if !slices.ContainsFunc(l.entries, func(le entry) bool { return covers(le, oe) }) {
			return false
		}
	}
	return true
}

func covers(l, o entry) bool {
	if l.port != 0 && l.port != o.port {
		return false
	}
	switch {
	case !l.wildcard:
		return !o.wildcard && o.host == l.host
	case o.wildcard:
		return o.host == l.host || strings.HasSuffix(o.host, "."+l.host)
	default:
		return strings.HasSuffix(o.host, "."+l.host)
	}
}
