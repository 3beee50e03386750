package echo

import (
	"bytes"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// Text is what a scan reads: the bytes as given and, when they hold escapes, the decoded
// views of them (one layer of percent-escapes, HTML character references and JSON escapes
// undone: what a server or a browser reads in them). Prepare a Text once to scan it for
// several Sets (the way-out guard checks one request for every secret); Release zeroes the
// views, which may hold a secret in clear.
type Text struct {
	views [][]byte
	owned []*[]byte
}

// Prepare readies b (not copied: keep it unchanged until Release) for scans of text.
func Prepare(b []byte) *Text {
	t := &Text{views: [][]byte{b}}
	if hasEscape(b) {
		t.decoded(b, false)
	}
	return t
}

// PrepareString is Prepare for a string (not copied).
func PrepareString(s string) *Text {
	return Prepare(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// PrepareJSON readies b, JSON as encoding/json writes it, for scans of the strings in it: its
// JSON escapes undone, then one layer of the escapes of text (Prepare) in what they held.
func PrepareJSON(b []byte) *Text {
	t := &Text{}
	j := b
	if bytes.IndexByte(b, '\\') >= 0 {
		j = t.decoded(b, true)
	} else {
		t.views = append(t.views, b)
	}
	if hasEscape(j) {
		t.decoded(j, false)
	}
	return t
}

// decoded adds the view of src with one layer of escapes undone (jsonOnly: JSON's alone),
// unless it is src itself.
func (t *Text) decoded(src []byte, jsonOnly bool) []byte {
	bp := getBuf(len(src))
	v := unescape((*bp)[:len(src)], src, jsonOnly)
	t.owned = append(t.owned, bp)
	if !jsonOnly && bytes.Equal(v, src) {
		return src // nothing decoded: no view to scan twice
	}
	t.views = append(t.views, v)
	return v
}

// Release zeroes the views; t is not to be used after.
func (t *Text) Release() {
	for _, bp := range t.owned {
		clear((*bp)[:cap(*bp)])
		putBuf(bp)
	}
	t.owned, t.views = nil, nil
}

// bufs keeps the views' buffers of up to maxPooled bytes (zeroed when put back).
var bufs sync.Pool

const maxPooled = 1 << 20

func getBuf(n int) *[]byte {
	if n <= maxPooled {
		if bp, ok := bufs.Get().(*[]byte); ok && cap(*bp) >= n {
			return bp
		}
		b := make([]byte, n, max(n, 64<<10))
		return &b
	}
	b := make([]byte, n)
	return &b
}

func putBuf(bp *[]byte) {
	if cap(*bp) <= maxPooled {
		bufs.Put(bp)
	}
}

// hasEscape reports whether b may hold an escape the views undo.
func hasEscape(b []byte) bool {
	return bytes.IndexByte(b, '%') >= 0 || bytes.IndexByte(b, '&') >= 0 || bytes.IndexByte(b, '\\') >= 0
}

// unescape writes src into dst with one layer of escapes undone, and returns it: %XX (either
// hex case); HTML's numeric references &#N and &#xH (';' optional, any number of digits, as
// browsers read them) and &amp; &lt; &gt; &quot; &apos;; JSON's \uXXXX (a surrogate pair
// joined; either hex case) and \" \\ \/ \b \f \n \r \t. jsonOnly: JSON's escapes alone. No
// escape decodes to more bytes than it is written in, so dst may be src (in place). One pass.
func unescape(dst, src []byte, jsonOnly bool) []byte {
	out := dst[:0]
	for i := 0; i < len(src); {
		// The run up to the next escape's first byte, copied whole.
		j := i
		for j < len(src) && !introducer[src[j]] {
			j++
		}
		out = append(out, src[i:j]...)
		if i = j; i == len(src) {
			break
		}
		c := src[i]
		n := 0
		var r rune
		switch {
		case c == '\\':
			r, n = jsonEscape(src[i:])
		case jsonOnly:
		case c == '%':
			if i+2 < len(src) && isHex(src[i+1]) && isHex(src[i+2]) {
				out = append(out, unhex(src[i+1])<<4|unhex(src[i+2]))
				i += 3
				continue
			}
		case c == '&':
			r, n = entity(src[i:])
		}
		if n == 0 {
			out = append(out, c)
			i++
			continue
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}

// introducer marks the bytes an escape starts with.
var introducer = [256]bool{'%': true, '&': true, '\\': true}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// hex4 reads four hex digits at b (len(b) >= 4), or -1.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		if !isHex(c) {
			return -1
		}
		r = r<<4 | rune(unhex(c))
	}
	return r
}

// jsonEscape reads the JSON escape at s (s[0] == '\\'): its rune and length, or 0, 0.
func jsonEscape(s []byte) (rune, int) {
	if len(s) < 2 {
		return 0, 0
	}
	switch s[1] {
	case '"', '\\', '/':
		return rune(s[1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
	default:
		return 0, 0
	}
	if len(s) < 6 {
		return 0, 0
	}
	r := hex4(s[2:])
	switch {
	case r < 0:
		return 0, 0
	case r >= 0xd800 && r < 0xdc00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u':
		if lo := hex4(s[8:]); lo >= 0xdc00 && lo < 0xe000 {
			return 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), 12
		}
	}
	return r, 6 // a lone surrogate is written as U+FFFD (utf8.AppendRune)
}

// entity reads the HTML character reference at s (s[0] == '&'): its rune and length, or 0, 0.
func entity(s []byte) (rune, int) {
	if len(s) < 3 {
		return 0, 0
	}
	if s[1] != '#' {
		for _, e := range named {
			if bytes.HasPrefix(s[1:], []byte(e.name)) {
				n := 1 + len(e.name)
				if n < len(s) && s[n] == ';' {
					n++
				} else if e.name == "apos" {
					return 0, 0 // only the legacy four are read without ';'
				}
				return e.r, n
			}
		}
		return 0, 0
	}
	i, base := 2, rune(10)
	if s[2] == 'x' || s[2] == 'X' {
		i, base = 3, 16
	}
	start := i
	var r rune
	for ; i < len(s); i++ {
		c := s[i]
		if base == 10 && (c < '0' || c > '9') || base == 16 && !isHex(c) {
			break
		}
		if r <= utf8.MaxRune {
			r = r*base + rune(unhex(c))
		}
	}
	if i == start {
		return 0, 0
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	if r == 0 || r > utf8.MaxRune {
		r = utf8.RuneError // as browsers read it; surrogates become U+FFFD in AppendRune
	}
	return r, i
}

var named = []struct {
	name string
	r    rune
}{{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}, {"AMP", '&'}, {"LT", '<'}, {"GT", '>'}, {"QUOT", '"'}}

// fold4 is four bytes with their ASCII capitals lower-cased (SWAR: a byte's high bit is set
// in upper exactly when it is in 'A'..'Z').
func fold4(w uint32) uint32 {
	h := w & 0x7f7f7f7f
	upper := ((h + 0x3f3f3f3f) ^ (h + 0x25252525)) & ^w & 0x80808080
	return w | upper>>2
}

// foldASCII lower-cases b's ASCII capitals into a new buffer.
func foldASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c |= 0x20
		}
		out[i] = c
	}
	return out
}
