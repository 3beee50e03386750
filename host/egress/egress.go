// Package egress is the password's way out of the browser, guarded at the network: every
// request the browser is about to send is checked for the secrets the host typed into pages,
// and one that would carry a secret anywhere but its credential's origin, or in a URL, is
// refused before it leaves.
//
// # Security contract
//
//   - A [Guard] keeps no secret: for each secret the host types into a page ([Guard.Add]) it
//     keeps a [echo.Set] of that secret alone (keyed fingerprints of the forms in which a page
//     or server writes it: as typed and reversed in any case, URL-, HTML-, JSON-escaped with
//     some or all characters escaped, base64-encoded alone or inside a longer text at any
//     alignment, and the "account:password" of a Basic header), the origins it may be sent to (the
//     credential's, and those the person named for it at enrolment), and the session it was
//     typed in.
//   - [Guard.Check] decides one request from what the browser handed over (its URL, headers
//     and body, Fetch.requestPaused at the request stage): it is refused when a secret is in
//     its URL (host, path or query, to any origin), in a header other than Authorization, in
//     its body or its Authorization header to an origin the secret may not go to, or — while
//     the secret is in the page ([Secret.SetInPage]) — when it has a body the browser did not
//     hand over (a file, a stream) to such an origin: what cannot be read is taken to carry it.
//     Anything else goes. A one-time code is checked only while it is in the page: six digits
//     are too common to refuse on afterwards.
//   - What a refusal says ([Refusal.Where]) is the destination's origin and path, never a part
//     of the URL that holds a secret.
//   - Each part of a request is read once for all secrets ([echo.Prepare]: its decoded view
//     built once, zeroed after), so a body costs one decoding and a scan per secret.
//   - What it does not see: a secret transformed in a way not listed (hex, gzip, UTF-16, two
//     layers of escapes, XOR, split across requests, an image of it), a secret shorter than [echo.MinLen] bytes, and channels that
//     do not go through the Fetch domain (WebSocket, WebRTC): the caller keeps those shut while
//     a secret is in the page ([ChannelRules]), as far as the browser lets it (SECURITY.md).
package egress

import (
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/headless-dev/headless/host/echo"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/origin"
)

// MaxSecrets bounds the secrets a Guard checks for; adding one more drops the oldest.
const MaxSecrets = echo.MaxSecrets

// Secret is one secret the host typed into a page, as the guard knows it (never its value).
type Secret struct {
	set     *echo.Set
	origins []string
	code    bool
	// Session is the session the secret was typed in; Origin the credential's origin.
	Session string
	Origin  string
	inPage  atomic.Bool
	// left: a request that may carry the secret went to an allowed origin (MayHaveLeft).
	left atomic.Bool
}

// MayHaveLeft reports whether a request that may have carried the secret in a form Check does
// not know (encrypted, say) was let go, to any origin, while it was in the page (mayCarry).
func (s *Secret) MayHaveLeft() bool { return s.left.Load() }

// SetInPage says whether the secret may still be in a page (from typing until the document it
// was typed into is gone): a body the browser did not hand over counts as carrying it then,
// and a one-time code is checked only then.
func (s *Secret) SetInPage(v bool) { s.inPage.Store(v) }

// InPage reports what SetInPage last said.
func (s *Secret) InPage() bool { return s.inPage.Load() }

// Allowed reports whether o (canonical) is an origin the secret may be sent to.
func (s *Secret) Allowed(o string) bool {
	for _, a := range s.origins {
		if a == o {
			return true
		}
	}
	return false
}

// Origins are the origins the secret may be sent to, the credential's first.
func (s *Secret) Origins() []string { return append([]string(nil), s.origins...) }

// Guard is the secrets typed into one browser's pages. Its methods are safe for concurrent
// use.
type Guard struct {
	mu      sync.RWMutex
	secrets []*Secret
}

// Add starts guarding a password typed (or about to be typed) into a page of session, whose
// credential's origin is origins[0] and which may also go to the rest; account, when not "",
// makes a Basic header's "account:password" one of its forms. The caller keeps and zeroes
// password. The secret starts in the page.
func (g *Guard) Add(password []byte, account, session string, origins []string) *Secret {
	set := echo.New()
	set.Add(password, account)
	return g.add(&Secret{set: set, origins: canonical(origins), Session: session}, origins)
}

// AddCode starts guarding a one-time code typed into a page of session (as Add).
func (g *Guard) AddCode(code []byte, session string, origins []string) *Secret {
	set := echo.New()
	set.AddCode(code)
	return g.add(&Secret{set: set, origins: canonical(origins), Session: session, code: true}, origins)
}

func (g *Guard) add(s *Secret, origins []string) *Secret {
	if len(s.origins) > 0 {
		s.Origin = s.origins[0]
	}
	s.inPage.Store(true)
	if s.set.Empty() {
		return s // shorter than echo.MinLen: nothing can be found (SECURITY.md)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.secrets = append(g.secrets, s)
	if len(g.secrets) > MaxSecrets {
		g.secrets = append([]*Secret(nil), g.secrets[len(g.secrets)-MaxSecrets:]...)
	}
	return s
}

func canonical(os []string) []string {
	var out []string
	for _, o := range os {
		if c, err := origin.Canonical(o); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// Active reports whether any secret is guarded: only then must the browser's requests be held
// for Check.
func (g *Guard) Active() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.secrets) > 0
}

// InPage lists the secrets of session ("": of every session) that may still be in its page.
func (g *Guard) InPage(session string) []*Secret {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []*Secret
	for _, s := range g.secrets {
		if (session == "" || s.Session == session) && s.InPage() {
			out = append(out, s)
		}
	}
	return out
}

// InPageOrigins are the origins the secrets that may still be in a page may go to.
func (g *Guard) InPageOrigins() []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []string
	for _, s := range g.secrets {
		if !s.InPage() {
			continue
		}
		for _, o := range s.origins {
			if !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	return out
}

// Request is what the browser handed over of one request about to be sent.
type Request struct {
	Method  string
	URL     string
	Headers map[string]string
	Body    []byte
	// Withheld: the request has a body the browser did not hand over (all or part of it).
	Withheld bool
}

// Refusal says why a request was refused, naming where it was going, never the secret.
type Refusal struct {
	Secret *Secret
	Where  string // the destination's origin and path, without a part that holds a secret
	Why    string // what carried it: "its URL", "its Cookie header", "its body", …
}

// Check decides r: nil lets it go, else why it must not leave.
func (g *Guard) Check(r Request) *Refusal {
	g.mu.RLock()
	secrets := append([]*Secret(nil), g.secrets...)
	g.mu.RUnlock()
	if len(secrets) == 0 {
		return nil
	}
	dest, _ := origin.Canonical(originOfURL(r.URL))
	t := prepare(r)
	defer t.release()
	for _, s := range secrets {
		inPage := s.InPage()
		if s.code && !inPage {
			continue
		}
		if why := s.carried(t, r, dest, inPage); why != "" {
			return &Refusal{Secret: s, Where: where(r.URL, secrets), Why: why}
		}
	}
	for _, s := range secrets {
		if s.InPage() && mayCarry(r) {
			s.left.Store(true)
		}
	}
	return nil
}

// mayCarry reports whether r, let go to any origin, may carry a secret in a form the scan
// does not know (Secret.MayHaveLeft): a body, shown or withheld, a method other than GET,
// HEAD or POST, or a header a page's script sets (Authorization, X-…). A GET's query or path
// is not counted (pages send them all the time); a secret disguised there is not seen.
func mayCarry(r Request) bool {
	if len(r.Body) > 0 || r.Withheld {
		return true
	}
	switch strings.ToUpper(r.Method) {
	case "", "GET", "HEAD", "POST":
	default:
		return true
	}
	for name := range r.Headers {
		if n := strings.ToLower(name); n == "authorization" || strings.HasPrefix(n, "x-") {
			return true
		}
	}
	return false
}

// prepared is a request's parts ready for the scans of every secret (their decoded views
// built once).
type prepared struct {
	url     *echo.Text
	headers []preparedHeader
	body    *echo.Text
}

type preparedHeader struct {
	name        string
	nameT, valT *echo.Text
}

func prepare(r Request) prepared {
	p := prepared{url: echo.PrepareString(r.URL), body: echo.Prepare(r.Body)}
	for name, v := range r.Headers {
		p.headers = append(p.headers, preparedHeader{name, echo.PrepareString(name), echo.PrepareString(v)})
	}
	return p
}

func (p prepared) release() {
	p.url.Release()
	p.body.Release()
	for _, h := range p.headers {
		h.nameT.Release()
		h.valT.Release()
	}
}

// carried says how r (prepared as t) carries s where it may not ("" when it does not).
func (s *Secret) carried(t prepared, r Request, dest string, inPage bool) string {
	if s.set.MatchText(t.url) {
		return "its URL"
	}
	allowed := dest != "" && s.Allowed(dest)
	for _, h := range t.headers {
		if !s.set.MatchText(h.valT) && !s.set.MatchText(h.nameT) {
			continue
		}
		if allowed && strings.EqualFold(h.name, "Authorization") {
			continue
		}
		return "its " + clip.Text(headerName(h.name), 64) + " header"
	}
	if allowed {
		return ""
	}
	if s.set.MatchText(t.body) {
		return "its body"
	}
	if r.Withheld && inPage {
		return "a body the browser does not show (taken to carry it)"
	}
	return ""
}

// headerName is a header's name as HTTP writes it, or "a" when the name itself is odd.
func headerName(n string) string {
	for _, c := range n {
		if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return "a"
		}
	}
	return n
}

// where is u's origin and path, leaving out any part that holds one of secrets.
func where(u string, secrets []*Secret) string {
	holds := func(t string) bool {
		for _, s := range secrets {
			if s.set.MatchString(t) {
				return true
			}
		}
		return false
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "a URL that cannot be shown"
	}
	host := p.Scheme + "://" + p.Host
	if holds(host) {
		return "a host whose name holds the secret"
	}
	path := p.EscapedPath()
	if holds(path) {
		return host + " (a path that holds the secret)"
	}
	return clip.Text(host+path, 300)
}

// originOfURL is scheme://host[:port] of u, or "".
func originOfURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return ""
	}
	host := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host = rest[:i]
	}
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	return scheme + "://" + host
}
