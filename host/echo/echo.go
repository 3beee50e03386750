// Package echo finds a secret the host released into the browser in what a page shows back:
// a site that re-renders what it received (a failed sign-in's page with the password in its
// text or a field's value, a debug page that prints request headers, a code step's "the code
// 426089 is not valid") hands it to whoever reads the page.
//
// # Security contract
//
//   - A [Set] keeps no secret. For each released secret it keeps, per form in which a server
//     echoes it, the form's length and its HMAC-SHA256 under a key of the Set's own (random,
//     never leaving the process), and a keyed 64-bit fingerprint of the form's first four
//     bytes. The plaintext forms exist only inside [Set.Add] and [Set.AddCode], in buffers
//     they zero before they return.
//   - The forms (see forms): the secret as typed, upper-cased, lower-cased and reversed; URL-encoded as browsers submit forms and as
//     encodeURIComponent, Go and PHP encode it (upper- and lower-case hex); HTML-escaped as
//     Go, PHP and Python escape it; JSON-escaped as Go (with and without HTML escaping), PHP
//     (escaped slashes) and Python (ASCII-only) write it; base64 (standard and URL alphabet,
//     padding ignored) of the password and of "account:password" (an Authorization: Basic
//     header); and a one-time code as typed. Each form also in its JSON-string encoding as
//     encoding/json writes it ([Set.MatchJSON]), for scanning the host's own answers.
//   - A match is exact bytes of a whole form anywhere in the text scanned. Forms shorter than
//     [MinLen] bytes are not kept (a three-character password would match everywhere), and a
//     transformation not listed (upper-casing, another encoding, an image of the text) is not
//     found: package host says what it does on a match and SECURITY.md what is not covered.
//   - Cost is bounded: a scan reads each byte once (a keyed hash of the four bytes at each
//     position, then a 2^16-bit filter; an HMAC only where a form's fingerprint matches), and
//     a Set keeps at most [MaxSecrets] secrets (the oldest is dropped).
package echo

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"slices"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// Bounds.
const (
	// MinLen is the length of the shortest form kept (and the scan's window).
	MinLen = 4
	// MaxSecrets bounds the secrets a Set knows; adding one more drops the oldest.
	MaxSecrets = 64
	// maxForm bounds one form (a secret is at most a few KiB; its escapes grow it).
	maxForm = 64 << 10
)

// Set is the keyed fingerprints of the forms of the secrets released into one browser. Its
// methods are safe for concurrent use.
type Set struct {
	mu      sync.RWMutex
	key     [32]byte // HMAC key
	k0, k1  uint64   // fingerprint key
	secrets [][]entry
	// index: fingerprint of a form's first MinLen bytes → the forms with it; filter: one bit
	// per low 16 bits of a fingerprint in index.
	index  map[uint64][]entry
	filter [1 << 10]uint64
	// wire is the same for the forms in their JSON-string encoding.
	wire       map[uint64][]entry
	wireFilter [1 << 10]uint64
}

type entry struct {
	fp   uint64
	n    int
	mac  [32]byte
	json bool // a form's JSON-string encoding (index wire)
}

// New returns an empty Set with fresh keys.
func New() *Set {
	s := &Set{index: map[uint64][]entry{}, wire: map[uint64][]entry{}}
	var k [48]byte
	if _, err := rand.Read(k[:]); err != nil {
		panic("echo: no randomness: " + err.Error()) // crypto/rand does not fail on Linux
	}
	copy(s.key[:], k[:32])
	s.k0 = binary.LittleEndian.Uint64(k[32:]) | 1
	s.k1 = binary.LittleEndian.Uint64(k[40:])
	clear(k[:])
	return s
}

// Empty reports whether no secret was added.
func (s *Set) Empty() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.secrets) == 0
}

// Add records a released password (account, when not "", makes the Basic header's form
// "account:password" too). The caller keeps and zeroes secret.
func (s *Set) Add(secret []byte, account string) {
	s.add(forms(secret, account))
}

// AddCode records a released one-time code (found as typed only).
func (s *Set) AddCode(code []byte) {
	s.add([][]byte{append([]byte(nil), code...)})
}

func (s *Set) add(fs [][]byte) {
	defer func() {
		for _, f := range fs {
			clear(f)
		}
	}()
	var es []entry
	seen := map[seenKey]bool{}
	for _, f := range fs {
		for _, asJSON := range []bool{false, true} {
			var b []byte
			if asJSON {
				b = jsonString(f, true)
				if hb := jsonString(f, false); string(hb) != string(b) {
					es = s.entry(es, seen, hb, true)
				}
			} else {
				b = append([]byte(nil), f...)
			}
			es = s.entry(es, seen, b, asJSON)
		}
	}
	if len(es) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets = append(s.secrets, es)
	if len(s.secrets) > MaxSecrets {
		s.secrets = s.secrets[1:]
		s.rebuild()
		return
	}
	s.insert(es)
}

// entry appends b's entry (b is zeroed) unless it is too short, too long or known.
type seenKey struct {
	mac  [32]byte
	json bool
}

func (s *Set) entry(es []entry, seen map[seenKey]bool, b []byte, asJSON bool) []entry {
	defer clear(b)
	if len(b) < MinLen || len(b) > maxForm {
		return es
	}
	e := entry{fp: s.fingerprint(binary.LittleEndian.Uint32(b)), n: len(b), mac: s.mac(b), json: asJSON}
	k := seenKey{e.mac, asJSON}
	if seen[k] {
		return es
	}
	seen[k] = true
	return append(es, e)
}

func (s *Set) rebuild() {
	s.index, s.wire = map[uint64][]entry{}, map[uint64][]entry{}
	clear(s.filter[:])
	clear(s.wireFilter[:])
	for _, es := range s.secrets {
		s.insert(es)
	}
}

func (s *Set) insert(es []entry) {
	for _, e := range es {
		idx, filter := s.index, &s.filter
		if e.json {
			idx, filter = s.wire, &s.wireFilter
		}
		idx[e.fp] = append(idx[e.fp], e)
		filter[uint16(e.fp)>>6] |= 1 << (e.fp & 63)
	}
}

// fingerprint is a keyed hash of four bytes (a multiply-xorshift mix under the Set's key).
func (s *Set) fingerprint(w uint32) uint64 {
	x := (uint64(w) ^ s.k1) * s.k0
	x ^= x >> 29
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 32
	return x
}

func (s *Set) mac(b []byte) [32]byte {
	m := hmac.New(sha256.New, s.key[:])
	m.Write(b)
	var out [32]byte
	m.Sum(out[:0])
	return out
}

// Match reports whether b holds any form of a secret of the Set.
func (s *Set) Match(b []byte) bool { return s.scan(b, false) }

// MatchString is Match for a string (not copied).
func (s *Set) MatchString(t string) bool {
	return s.scan(unsafe.Slice(unsafe.StringData(t), len(t)), false)
}

// MatchJSON reports whether b, JSON as encoding/json writes it, holds a form of a secret of
// the Set inside a string (the form's JSON-string encoding, with or without HTML escaping).
func (s *Set) MatchJSON(b []byte) bool { return s.scan(b, true) }

func (s *Set) scan(b []byte, asJSON bool) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.secrets) == 0 || len(b) < MinLen {
		return false
	}
	idx, filter := s.index, &s.filter
	if asJSON {
		idx, filter = s.wire, &s.wireFilter
	}
	for i := 0; i+MinLen <= len(b); i++ {
		fp := s.fingerprint(binary.LittleEndian.Uint32(b[i:]))
		if filter[uint16(fp)>>6]&(1<<(fp&63)) == 0 {
			continue
		}
		for _, e := range idx[fp] {
			if i+e.n <= len(b) {
				if m := s.mac(b[i : i+e.n]); hmac.Equal(m[:], e.mac[:]) {
					return true
				}
			}
		}
	}
	return false
}

// forms returns the forms in which a server echoes password (and the Basic header's
// "account:password"), each in a buffer of its own that the caller zeroes.
func forms(pw []byte, account string) [][]byte {
	var out [][]byte
	add := func(b []byte) { out = append(out, b) }
	add(append([]byte(nil), pw...))
	// Upper- and lower-cased (a page's CSS shows either), and reversed (red-team round 12).
	add(bytes.ToLower(pw))
	add(bytes.ToUpper(pw))
	rev := []rune(string(pw))
	slices.Reverse(rev)
	add([]byte(string(rev)))
	clear(rev)
	// URL encodings: what is kept unescaped, and how a space is written.
	for _, u := range []struct {
		keep  string
		space string
	}{
		{"*-._", "+"},                   // application/x-www-form-urlencoded (a browser's form submission)
		{"-._~", "+"},                   // Go's url.QueryEscape, PHP's urlencode (kept: - . _)
		{"-._~", "%20"},                 // Go's url.PathEscape-like, PHP's rawurlencode
		{"-_.!~*'()", "%20"},            // encodeURIComponent
		{"-_.!~*'();/?:@&=+$,#", "%20"}, // encodeURI
	} {
		for _, hex := range []string{"0123456789ABCDEF", "0123456789abcdef"} {
			add(urlEncode(pw, u.keep, u.space, hex))
		}
	}
	// HTML escapes: & < > always; the quotes as Go, PHP and Python write them.
	for _, q := range [][2]string{{"&#34;", "&#39;"}, {"&quot;", "&#039;"}, {"&quot;", "&#x27;"}, {"&quot;", "'"}, {"\"", "'"}} {
		add(htmlEscape(pw, q[0], q[1]))
	}
	// JSON escapes as servers write them into a page.
	add(jsonString(pw, true))
	add(jsonString(pw, false))
	add(jsonSlashes(pw))
	add(jsonASCII(pw))
	// base64 of the password and of the Basic header's credentials, padding left off (an
	// encoding with padding holds the one without).
	b64 := func(v []byte) {
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			d := make([]byte, enc.EncodedLen(len(v)))
			enc.Encode(d, v)
			add(d)
		}
	}
	b64(pw)
	if account != "" {
		up := make([]byte, 0, len(account)+1+len(pw))
		up = append(append(append(up, account...), ':'), pw...)
		b64(up)
		clear(up)
	}
	return out
}

func urlEncode(b []byte, keep, space, hex string) []byte {
	out := make([]byte, 0, 3*len(b))
	for _, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c < 0x80 && indexByte(keep, c):
			out = append(out, c)
		case c == ' ':
			out = append(out, space...)
		default:
			out = append(out, '%', hex[c>>4], hex[c&15])
		}
	}
	return out
}

func indexByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

func htmlEscape(b []byte, dq, sq string) []byte {
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		switch c {
		case '&':
			out = append(out, "&amp;"...)
		case '<':
			out = append(out, "&lt;"...)
		case '>':
			out = append(out, "&gt;"...)
		case '"':
			out = append(out, dq...)
		case '\'':
			out = append(out, sq...)
		default:
			out = append(out, c)
		}
	}
	return out
}

const lowerHex = "0123456789abcdef"

// jsonByte appends ASCII byte c as a JSON string writes it (html: with encoding/json's
// escaping of < > &).
func jsonByte(out []byte, c byte, html bool) []byte {
	switch {
	case c == '"' || c == '\\':
		return append(out, '\\', c)
	case c == '\n':
		return append(out, '\\', 'n')
	case c == '\r':
		return append(out, '\\', 'r')
	case c == '\t':
		return append(out, '\\', 't')
	case c == '\b':
		return append(out, '\\', 'b')
	case c == '\f':
		return append(out, '\\', 'f')
	case c < 0x20 || (html && (c == '<' || c == '>' || c == '&')):
		return append(out, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&15])
	}
	return append(out, c)
}

// jsonString is b's JSON-string encoding without the quotes, as encoding/json writes it
// (html: with its default HTML escaping of < > &). b is UTF-8.
func jsonString(b []byte, html bool) []byte {
	out := make([]byte, 0, 2*len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			out = jsonByte(out, c, html)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == '\u2028' || r == '\u2029' {
			out = append(out, '\\', 'u', '2', '0', '2', lowerHex[r&15])
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// jsonSlashes is PHP's json_encode: "/" escaped too, and non-ASCII as \uXXXX.
func jsonSlashes(b []byte) []byte {
	a := jsonASCII(b)
	out := make([]byte, 0, len(a)+8)
	for _, c := range a {
		if c == '/' {
			out = append(out, '\\')
		}
		out = append(out, c)
	}
	clear(a)
	return out
}

// jsonASCII is Python's json.dumps: non-ASCII as \uXXXX (surrogate pairs beyond the BMP).
func jsonASCII(b []byte) []byte {
	out := make([]byte, 0, 2*len(b))
	u := func(v rune) {
		out = append(out, '\\', 'u', lowerHex[v>>12&15], lowerHex[v>>8&15], lowerHex[v>>4&15], lowerHex[v&15])
	}
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			out = jsonByte(out, c, false)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r > 0xffff {
			r -= 0x10000
			u(0xd800 + r>>10)
			u(0xdc00 + r&0x3ff)
		} else {
			u(r)
		}
		i += n
	}
	return out
}
