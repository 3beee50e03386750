package echo

import (
	"bytes"
	"testing"
)

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		"%5a%5A%7e%":            "ZZ~%",
		"%g1%4":                 "%g1%4",
		"&#90;&#x5a;&#X5A&#90x": "ZZZZx",
		"&#0000090;&#;&#x;&#":   "Z&#;&#x;&#",
		"&#0;&#55296;&#x110000": "\ufffd\ufffd\ufffd",
		"&amp;&lt&gt;&quot;&apos;&aposx&AMP;&ampx": "&<>\"'&aposx&&x",
		`\u005a\u005A\"\\\/\n\t\x`:                 "ZZ\"\\/\n\t\\x",
		`\ud83d\ude00\ud83d\u0041\u12`:             "😀\ufffdA\\u12",
		"plain text, no escape":                    "plain text, no escape",
	} {
		if got := unescape(make([]byte, len(in)), []byte(in), false); string(got) != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
	if got := unescape(make([]byte, 32), []byte(`%5a&#90;\u005a\"`), true); string(got) != `%5a&#90;Z"` {
		t.Errorf("JSON escapes alone: %q", got)
	}
}

// FuzzUnescape: a view is never longer than what it decodes (the buffers are sized by it),
// and decoding in place gives the same bytes.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{"%5a&#90;\\u005a", "&#1114111;&#x10FFFF", "\\ud83d\\ude00", "&#0&#x0&lt"} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, b []byte, jsonOnly bool) {
		v := unescape(make([]byte, 0, len(b)), b, jsonOnly)
		if len(v) > len(b) {
			t.Fatalf("%q decoded to %d bytes", b, len(v))
		}
		in := append([]byte(nil), b...)
		if w := unescape(in, in, jsonOnly); !bytes.Equal(v, w) {
			t.Fatalf("%q: in place %q, else %q", b, w, v)
		}
	})
}

func TestFold4(t *testing.T) {
	for c := 0; c < 256; c++ {
		w := uint32(c) | uint32(c)<<8 | 'Q'<<16 | 0xC3<<24
		want := uint32(c)
		if 'A' <= c && c <= 'Z' {
			want |= 0x20
		}
		want |= want<<8 | 'q'<<16 | 0xC3<<24
		if got := fold4(w); got != want {
			t.Fatalf("fold4(%#x) = %#x, want %#x", w, got, want)
		}
	}
}
