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
//   - The forms (see forms): the secret as typed and reversed; URL-encoded as browsers submit
//     forms and as encodeURIComponent, Go and PHP encode it; HTML-escaped as Go, PHP and Python
//     escape it; JSON-escaped as Go, PHP and Python write it — each found in any case of its
//     ASCII letters (a folded form); base64 (standard and URL alphabet, padding ignored) of the
//     password, of "account:password" (a Basic header), and of the password inside a longer
//     text at each of the three alignments (the characters that depend on the password alone,
//     at least [MinBase64] of them: a secret of five bytes or more), found as exact bytes; and
//     a one-time code as typed (folded).
//   - A scan reads the text ([Prepare]) and, when it holds escapes, a decoded view of it: one
//     layer of %XX, HTML numeric references (decimal or hex, ';' optional, as browsers read
//     them) and &amp; &lt; &gt; &quot; &apos;, JSON's \uXXXX and short escapes undone, hex in
//     either case — so a secret with every character escaped, or some, is found. JSON as
//     encoding/json writes it ([PrepareJSON]) is read with its JSON escapes undone first.
//   - A match is a whole form anywhere in a view. Forms shorter than [MinLen] bytes are not
//     kept (a three-character password would match everywhere), and a transformation not
//     listed (hex, gzip, UTF-16, two layers of escapes, non-ASCII case, an image of the text)
//     is not found: package host says what it does on a match and SECURITY.md what is not
//     covered.
//   - Cost is bounded: a scan reads each byte of each view once (a keyed hash of the four
//     bytes at each position, and of them lower-cased when they hold a capital, then a
//     2^16-bit filter; an HMAC only where a form's fingerprint matches); a view is at most as
//     long as the text (no escape decodes longer than it is written) and is zeroed after
//     the scan; a Set keeps at most [MaxSecrets] secrets (the oldest is dropped).
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
}

// entry is one form: folded, found in any case of its ASCII letters (its MAC is of the form
// lower-cased, and so is a window's before it is hashed); else found as exact bytes.
type entry struct {
	fp     uint64
	n      int
	mac    [32]byte
	folded bool
}

// New returns an empty Set with fresh keys.
func New() *Set {
	s := &Set{index: map[uint64][]entry{}}
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
	folded, exact := forms(secret, account)
	s.add(folded, exact)
}

// AddCode records a released one-time code (found as typed, and in the decoded views).
func (s *Set) AddCode(code []byte) {
	s.add([][]byte{foldASCII(code)}, nil)
}

// add records a secret's forms (zeroing them): folded ones (lower-cased already) first, so
// that an exact form that one of them finds in any case is not kept twice.
func (s *Set) add(folded, exact [][]byte) {
	var es []entry
	seen := map[[32]byte]bool{}
	for _, f := range folded {
		es = s.entry(es, seen, f, true)
	}
	for _, f := range exact {
		lf := foldASCII(f)
		m := s.mac(lf)
		clear(lf)
		if seen[m] {
			clear(f)
			continue
		}
		es = s.entry(es, seen, f, false)
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
func (s *Set) entry(es []entry, seen map[[32]byte]bool, b []byte, folded bool) []entry {
	defer clear(b)
	if len(b) < MinLen || len(b) > maxForm {
		return es
	}
	e := entry{fp: s.fingerprint(binary.LittleEndian.Uint32(b)), n: len(b), mac: s.mac(b), folded: folded}
	if seen[e.mac] {
		return es
	}
	seen[e.mac] = true
	return append(es, e)
}

func (s *Set) rebuild() {
	s.index = map[uint64][]entry{}
	clear(s.filter[:])
	for _, es := range s.secrets {
		s.insert(es)
	}
}

func (s *Set) insert(es []entry) {
	for _, e := range es {
		s.index[e.fp] = append(s.index[e.fp], e)
		s.filter[uint16(e.fp)>>6] |= 1 << (e.fp & 63)
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

// macFolded is the MAC of b lower-cased, without a copy of b.
func (s *Set) macFolded(b []byte) [32]byte {
	m := hmac.New(sha256.New, s.key[:])
	var chunk [64]byte
	for len(b) > 0 {
		n := copy(chunk[:], b)
		for i, c := range chunk[:n] {
			if 'A' <= c && c <= 'Z' {
				chunk[i] = c | 0x20
			}
		}
		m.Write(chunk[:n])
		b = b[n:]
	}
	clear(chunk[:])
	var out [32]byte
	m.Sum(out[:0])
	return out
}

// Match reports whether b holds any form of a secret of the Set.
func (s *Set) Match(b []byte) bool {
	t := Prepare(b)
	defer t.Release()
	return s.MatchText(t)
}

// MatchString is Match for a string (not copied).
func (s *Set) MatchString(t string) bool {
	return s.Match(unsafe.Slice(unsafe.StringData(t), len(t)))
}

// MatchJSON reports whether b, JSON as encoding/json writes it, holds a form of a secret of
// the Set inside a string.
func (s *Set) MatchJSON(b []byte) bool {
	t := PrepareJSON(b)
	defer t.Release()
	return s.MatchText(t)
}

// MatchText reports whether t holds any form of a secret of the Set, in its bytes or in one
// of its decoded views.
func (s *Set) MatchText(t *Text) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.secrets) == 0 {
		return false
	}
	for _, v := range t.views {
		if s.scan(v) {
			return true
		}
	}
	return false
}

// scan looks for every form at every position of b: the fingerprint of the four bytes there
// for the exact forms (and the folded ones when they hold no capital), and of the four bytes
// lower-cased for the folded forms when they do.
func (s *Set) scan(b []byte) bool {
	for i := 0; i+MinLen <= len(b); i++ {
		w := binary.LittleEndian.Uint32(b[i:])
		f := fold4(w)
		if fp := s.fingerprint(w); s.filter[uint16(fp)>>6]&(1<<(fp&63)) != 0 && s.at(b, i, fp, true, f == w) {
			return true
		}
		if f == w {
			continue
		}
		if fp := s.fingerprint(f); s.filter[uint16(fp)>>6]&(1<<(fp&63)) != 0 && s.at(b, i, fp, false, true) {
			return true
		}
	}
	return false
}

// at checks the forms of fingerprint fp at position i of b: the exact ones when exact, the
// folded ones when folded (fp is then of the four bytes there lower-cased).
func (s *Set) at(b []byte, i int, fp uint64, exact, folded bool) bool {
	for _, e := range s.index[fp] {
		if i+e.n > len(b) || e.folded && !folded || !e.folded && !exact {
			continue
		}
		var m [32]byte
		if e.folded {
			m = s.macFolded(b[i : i+e.n])
		} else {
			m = s.mac(b[i : i+e.n])
		}
		if hmac.Equal(m[:], e.mac[:]) {
			return true
		}
	}
	return false
}

// forms returns the forms in which a server echoes password (and the Basic header's
// "account:password"), each in a buffer of its own that the caller zeroes: folded, those of
// text (lower-cased: they are found in any case), and exact, the base64 ones.
func forms(pw []byte, account string) (folded, exact [][]byte) {
	var text [][]byte
	add := func(b []byte) { text = append(text, b) }
	add(append([]byte(nil), pw...))
	// Reversed (red-team round 12); any case of it and of the password is found, as a page's
	// CSS or script shows it (hostile review A42: alternating case).
	rev := []rune(string(pw))
	slices.Reverse(rev)
	add([]byte(string(rev)))
	clear(rev)
	// What the decoded views show of the password when it holds an escape itself (a
	// password "a%41" echoed as typed reads "aA" there).
	for _, f := range text[:2] {
		if d := unescape(make([]byte, len(f)), f, false); !bytes.Equal(d, f) {
			add(d)
		} else {
			clear(d)
		}
	}
	// URL encodings: what is kept unescaped, and how a space is written (the hex case is
	// folded; a password escaped otherwise is in the decoded view).
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
		add(urlEncode(pw, u.keep, u.space, "0123456789abcdef"))
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
	for _, f := range text {
		folded = append(folded, foldASCII(f))
		clear(f)
	}
	// base64 of the password and of the Basic header's credentials, padding left off (an
	// encoding with padding holds the one without), and the password inside any base64 text
	// (hostile review A40).
	b64 := func(v []byte) {
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			d := make([]byte, enc.EncodedLen(len(v)))
			enc.Encode(d, v)
			exact = append(exact, d)
		}
	}
	b64(pw)
	exact = append(exact, base64Inner(pw)...)
	if account != "" {
		up := make([]byte, 0, len(account)+1+len(pw))
		up = append(append(append(up, account...), ':'), pw...)
		b64(up)
		clear(up)
	}
	return folded, exact
}

// MinBase64 is the length of the shortest base64 run kept for a secret inside a longer text
// (36 bits: a secret of five bytes or more has one at each of the three alignments).
const MinBase64 = 6

// base64Inner returns, for each of the three alignments of v in a base64-encoded text (0, 1
// or 2 bytes before it in its group of three) and both alphabets, the characters of the
// encoding that depend on v's bytes alone: those touched by the bytes before it or after it
// are left off. Runs shorter than MinBase64 are not kept.
func base64Inner(v []byte) [][]byte {
	var out [][]byte
	for k := 0; k < 3; k++ {
		m := k + len(v)
		buf := make([]byte, m)
		copy(buf[k:], v)
		// Character c holds bits [6c, 6c+6) of the text; v's are bits [8k, 8m).
		lo, hi := (8*k+5)/6, 8*m/6
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			if hi-lo < MinBase64 {
				continue
			}
			d := make([]byte, enc.EncodedLen(m))
			enc.Encode(d, buf)
			out = append(out, append([]byte(nil), d[lo:hi]...))
			clear(d)
		}
		clear(buf)
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
