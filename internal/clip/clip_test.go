package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdefgh", 7, "abcd…"},
		{"ééééé", 8, "éé…"},        // é is 2 bytes: the cut never halves one
		{"日本語のテキスト", 10, "日本…"},    // 3-byte characters
		{"a\xffb", 10, "a\uFFFDb"}, // invalid bytes made U+FFFD
		{"abcdef", 2, "ab"},        // no room for the mark
		{"éé", 1, ""},
		{"abc", 0, ""},
	} {
		got := Text(c.s, c.n)
		if got != c.want {
			t.Errorf("Text(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
		if len(got) > c.n || !utf8.ValidString(got) {
			t.Errorf("Text(%q, %d) = %q: %d bytes, valid %v", c.s, c.n, got, len(got), utf8.ValidString(got))
		}
	}
}

func FuzzText(f *testing.F) {
	f.Add("ééé", 4)
	f.Add("a\xffb", 2)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		got := Text(s, n)
		if len(got) > n || !utf8.ValidString(got) {
			t.Fatalf("Text(%q, %d) = %q", s, n, got)
		}
		if v := strings.ToValidUTF8(s, "\uFFFD"); len(v) <= n && got != v {
			t.Fatalf("Text(%q, %d) = %q, want it whole", s, n, got)
		}
	})
}
