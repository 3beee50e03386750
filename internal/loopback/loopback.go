// Package loopback names the process that serves a loopback origin, so that a password is
// typed into a development server only when it is clear which program would receive it.
//
// Any local program can listen on a loopback port, and one origin reaches several sockets
// (Chromium tries "localhost" on ::1 and on 127.0.0.1), so a program on [::1]:PORT beside a
// server on 127.0.0.1:PORT would receive the password meant for it.
//
// # Guarantees
//
//   - [Finder.Find] lists every listening socket the origin can reach and the processes holding
//     them, and refuses ([ErrAmbiguous]) when they belong to different processes; which sockets
//     count, and how the kernel's tables are read, is in Find's documentation.
//   - A table that cannot be read whole is [ErrUnavailable] ("could not look"), never "nothing
//     found"; everything read is bounded; malformed procfs content never panics; nothing is
//     written or cached.
//   - Only canonical origins are taken (package internal/origin): any other spelling of a
//     loopback host is [ErrInvalid], never [ErrNotLoopback].
//
// # Not guaranteed
//
// The answer is a snapshot (callers compare [Listener.Key] again just before typing), of the
// caller's network namespace only, and names executables for a human's judgement, not an
// authorisation. Hosts that resolve to loopback by other names ("*.localhost", /etc/hosts,
// "[::ffff:127.0.0.1]", the machine's own addresses) are not looked at.
package loopback

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/headless-dev/headless/internal/wire"
)

// Errors callers branch on. Each wraps nothing and is wrapped with details by Find.
var (
	// ErrAmbiguous: the origin reaches listening sockets of different processes
	// (ORIGIN_AMBIGUOUS).
	ErrAmbiguous = wire.Sentinel(wire.CodeOriginAmbiguous, "loopback: origin is served by more than one process")
	// ErrNotLoopback: a canonical origin whose host is not localhost, 127.0.0.0/8 or [::1].
	ErrNotLoopback = errors.New("loopback: not a loopback origin")
	// ErrInvalid: not a canonical origin (any other spelling, including of a loopback host).
	ErrInvalid = errors.New("loopback: invalid origin")
	// ErrUnavailable: the kernel's socket tables could not be read completely; nothing is
	// known about the listeners ("could not look", not "nothing found": ORIGIN_UNVERIFIED).
	ErrUnavailable = wire.Sentinel(wire.CodeOriginUnverified, "loopback: cannot read the socket tables")
)

// MaxOriginLen is the longest origin Find parses, in bytes (as internal/origin's MaxLen).
const MaxOriginLen = 2048

// Socket is one TCP socket in state LISTEN, as PROC/net/tcp or PROC/net/tcp6 lists it.
type Socket struct {
	Addr  netip.AddrPort // local address; an IPv6 socket's v4-mapped address stays v4-mapped
	Inode uint64         // socket inode, as in the link "socket:[INODE]"
	UID   int            // owner of the socket (the uid that created it)
}

// Process is a process holding at least one of a Listener's sockets.
type Process struct {
	PID    int
	Exe    string   // PROC/PID/exe; "" when it cannot be read (another user, undumpable)
	Inodes []uint64 // the Listener's sockets this process holds, ascending
}

// Listener is what serves an origin: the candidate local addresses, the listening sockets among
// them and the processes holding those sockets.
type Listener struct {
	Origin     string
	Candidates []netip.AddrPort // local addresses that accept the origin's connections, sorted
	Sockets    []Socket         // listening sockets on a candidate, sorted by address then inode
	Procs      []Process        // holders of Sockets, by pid
	Incomplete bool             // the holder scan stopped at MaxProcs or MaxFDs
}

// Finder finds listeners through a procfs tree.
type Finder struct {
	// Proc is the root of procfs; "" means "/proc". Tests may point it at a fake tree.
	Proc string

	lim limits // zero: the exported maxima
}

// limits bounds one Find; a zero field means the exported constant.
type limits struct {
	lines, bytes, procs, fds int
}

func (f Finder) limits() limits {
	l := f.lim
	if l.lines == 0 {
		l.lines = MaxTableLines
	}
	if l.bytes == 0 {
		l.bytes = MaxTableBytes
	}
	if l.procs == 0 {
		l.procs = MaxProcs
	}
	if l.fds == 0 {
		l.fds = MaxFDs
	}
	return l
}

func (f Finder) root() string {
	if f.Proc == "" {
		return "/proc"
	}
	return f.Proc
}

// Find returns the listener of origin. With an error wrapping ErrAmbiguous the Listener is
// filled in too (for the audit log); with any other error it is empty.
//
// Origin is "http://" or "https://", then "localhost", a dotted quad in 127.0.0.0/8 or "[::1]",
// then ":PORT" unless the port is the scheme's default; any other spelling ("LOCALHOST",
// "127.1", "[0::1]", ":80", a trailing "/") is ErrInvalid. For port P the candidates are:
//
//   - for 127.a.b.c: 127.a.b.c:P, 0.0.0.0:P, [::]:P (an IPv6 socket without IPV6_V6ONLY
//     accepts IPv4, and /proc does not show the option), [::ffff:127.a.b.c]:P and
//     [::ffff:0.0.0.0]:P;
//   - for [::1]: [::1]:P and [::]:P;
//   - for localhost: the union of the two.
//
// The listening sockets come from the kernel's socket diagnostics (NETLINK_SOCK_DIAG) for the
// real /proc, and from PROC/net/tcp and tcp6 otherwise (diag_linux.go); a table the kernel
// printed in several reads is read twice and united, because the kernel can skip a listener
// between chunks. Holders come from the links "socket:[INODE]" in PROC/PID/fd, their
// executables from PROC/PID/exe (proc.go).
//
//   - Several sockets and no one visible process holding them all: ErrAmbiguous, naming every
//     socket and holder. One socket held by several processes (pre-forked workers) is not.
//   - No candidate listens: no error and a Listener without sockets.
//   - A table unreadable, malformed or over [MaxTableLines] lines or [MaxTableBytes] bytes:
//     ErrUnavailable. A missing tcp6 (no IPv6) means no IPv6 sockets.
//   - A holder that cannot be seen (another user's, another pid namespace) leaves its socket
//     named by uid only; a vanishing process is skipped. Past [MaxProcs] processes or [MaxFDs]
//     descriptors, [Listener.Incomplete] is set and [Listener.String] says so.
//   - [Listener.String] is one line of printable ASCII of at most [MaxLine] bytes;
//     [Listener.Key] changes when a listening socket is replaced, added or removed.
//
// Not covered: [::]:P counts for IPv4 origins even with IPV6_V6ONLY, and a specific address
// does not win over a wildcard as in the kernel, so different processes on 0.0.0.0:P and
// [::]:P (docker-proxy), or an SO_REUSEPORT group over several processes, are ambiguous; a
// thread that unshared its file table holds sockets that show as not visible; a holder's pid
// may be reused after it exits.
func (f Finder) Find(origin string) (Listener, error) {
	return f.find(origin, true)
}

// Sockets is Find without the holder scan where it cannot change the answer: the listening
// sockets of origin and its [Listener.Key], and [ErrAmbiguous] exactly when Find would return
// it. With one listening socket (or none) the holders are not looked for and Procs is empty;
// with more they are, as Find does. It is for a caller that compares keys (the look right
// before typing); a caller that shows the listener to a person uses Find.
func (f Finder) Sockets(origin string) (Listener, error) {
	return f.find(origin, false)
}

func (f Finder) find(origin string, name bool) (Listener, error) {
	t, err := parseOrigin(origin)
	if err != nil {
		return Listener{}, err
	}
	l := Listener{Origin: origin, Candidates: t.candidates()}
	socks, err := f.listening()
	if err != nil {
		return Listener{}, err
	}
	inodes := map[uint64]bool{}
	for _, s := range socks {
		if slices.Contains(l.Candidates, s.Addr) {
			l.Sockets = append(l.Sockets, s)
			inodes[s.Inode] = true
		}
	}
	if len(inodes) == 0 || !name && len(inodes) == 1 {
		return l, nil // one socket is one listener, whoever holds it
	}
	l.Procs, l.Incomplete = f.holders(inodes)
	if len(inodes) > 1 && !slices.ContainsFunc(l.Procs, func(p Process) bool { return len(p.Inodes) == len(inodes) }) {
		return l, fmt.Errorf("%w: %s: %s", ErrAmbiguous, origin, l.String())
	}
	return l, nil
}

// IsLoopback reports whether origin is a canonical origin whose host is localhost, an IPv4
// address in 127.0.0.0/8 or [::1]: an origin Find accepts.
func IsLoopback(origin string) bool {
	_, err := parseOrigin(origin)
	return err == nil
}

// target is a parsed loopback origin: the addresses a browser connects to, and the port.
type target struct {
	hosts []netip.Addr // 127.a.b.c, ::1, or both for localhost
	port  uint16
}

var (
	v4Any     = netip.IPv4Unspecified()
	v6Any     = netip.IPv6Unspecified()
	v4Mapped0 = netip.AddrFrom16(v4Any.As16())
)

// candidates lists the local addresses whose listening sockets accept t's connections.
func (t target) candidates() []netip.AddrPort {
	var c []netip.AddrPort
	add := func(a netip.Addr) {
		ap := netip.AddrPortFrom(a, t.port)
		if !slices.Contains(c, ap) {
			c = append(c, ap)
		}
	}
	for _, h := range t.hosts {
		if h.Is4() {
			add(h)
			add(v4Any)
			add(v6Any)
			add(netip.AddrFrom16(h.As16()))
			add(v4Mapped0)
		} else {
			add(h)
			add(v6Any)
		}
	}
	slices.SortFunc(c, netip.AddrPort.Compare)
	return c
}

func invalid(origin, format string, args ...any) error {
	return fmt.Errorf("%w %q: %s", ErrInvalid, origin, fmt.Sprintf(format, args...))
}

// parseOrigin parses a canonical loopback origin strictly: it rebuilds the canonical spelling
// from the parts and rejects anything that differs from it.
func parseOrigin(s string) (target, error) {
	var t target
	if len(s) > MaxOriginLen {
		return t, fmt.Errorf("%w: longer than %d bytes", ErrInvalid, MaxOriginLen)
	}
	u, err := url.Parse(s)
	if err != nil {
		return t, invalid(s, "not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return t, invalid(s, "scheme is not http or https")
	}
	if u.Opaque != "" || u.User != nil || u.Path != "" || u.RawPath != "" || u.RawQuery != "" ||
		u.ForceQuery || u.Fragment != "" || u.RawFragment != "" || u.OmitHost {
		return t, invalid(s, "not of the form scheme://host[:port]")
	}

	// Host and port, split by hand: brackets decide between an IPv6 literal and the rest.
	host, port := u.Host, ""
	bracketed := strings.HasPrefix(host, "[")
	if bracketed {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return t, invalid(s, "unclosed IPv6 literal")
		}
		host, port = host[1:end], host[end+1:]
	} else if i := strings.IndexByte(host, ':'); i >= 0 {
		host, port = host[:i], host[i:]
	}
	if port != "" {
		p, ok := canonicalPort(port, u.Scheme)
		if !ok {
			return t, invalid(s, "port is not canonical")
		}
		t.port = p
	} else if u.Scheme == "https" {
		t.port = 443
	} else {
		t.port = 80
	}

	var loop bool
	switch a, err := netip.ParseAddr(host); {
	case bracketed:
		if err != nil || !a.Is6() || a.Zone() != "" || a.String() != host {
			return t, invalid(s, "IPv6 literal is not canonical")
		}
		loop = a == netip.IPv6Loopback()
		t.hosts = []netip.Addr{a}
	case err == nil:
		if !a.Is4() || a.String() != host {
			return t, invalid(s, "IP address is not a canonical IPv4 address")
		}
		loop = a.IsLoopback()
		t.hosts = []netip.Addr{a}
	case host == "localhost" || strings.HasSuffix(host, ".localhost") && canonicalName(host):
		// Browsers resolve every *.localhost name to loopback themselves (RFC 6761). As in
		// package origin, http is for localhost itself only (found by FuzzParseOrigin).
		if u.Scheme == "http" && host != "localhost" {
			return t, invalid(s, "http is only allowed for localhost and loopback addresses")
		}
		loop = true
		t.hosts = []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}
	case !canonicalName(host):
		return t, invalid(s, "host is not canonical")
	}
	// Anything url.Parse unescaped, normalised or dropped shows up here.
	rebuilt := u.Scheme + "://" + u.Host
	if rebuilt != s {
		return t, invalid(s, "not canonical")
	}
	if !loop {
		return target{}, fmt.Errorf("%w: %q", ErrNotLoopback, s)
	}
	return t, nil
}

// canonicalPort parses ":PORT" as a canonical origin writes it: digits without a leading
// zero, 1-65535, and not the scheme's default (a canonical origin omits it).
func canonicalPort(p, scheme string) (uint16, bool) {
	if len(p) < 2 || len(p) > 6 || p[0] != ':' || p[1] == '0' {
		return 0, false
	}
	for _, c := range []byte(p[1:]) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(p[1:])
	if err != nil || n < 1 || n > 65535 || scheme == "http" && n == 80 || scheme == "https" && n == 443 {
		return 0, false
	}
	return uint16(n), true
}

// canonicalName reports whether h is spelt as internal/origin writes a domain name: lower-case
// ASCII labels of letters, digits and '-', 1-63 bytes each, at most 253 bytes, no trailing dot,
// and a last label that browsers would not read as a number.
func canonicalName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return false
		}
		for _, c := range []byte(l) {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	if hex, ok := strings.CutPrefix(last, "0x"); ok {
		last = hex
		if strings.Trim(last, "0123456789abcdef") == "" {
			return false
		}
	}
	return strings.Trim(last, "0123456789") != ""
}
