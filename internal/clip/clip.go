// Package clip bounds the strings headless shows: a message, a prompt line, an audit record's
// field, a page's text, a URL in a result. One rule everywhere, so that no bound cuts a
// character in half and every cut says so.
//
// # Guarantees
//
// [Text] returns valid UTF-8 of at most n bytes: s itself when it fits (invalid bytes made
// U+FFFD), else its longest prefix that leaves room for "…", cut on a character boundary,
// with "…" after it (without it when not even one character would fit beside it).
//
// # Not guaranteed
//
// Text changes no character: what a string shows (control characters, look-alike letters) is
// its caller's to clean (procstat.Clean does it for prompt lines).
package clip

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis marks a cut.
const Ellipsis = "…"

// Text bounds s to n bytes of valid UTF-8, marking a cut with Ellipsis within the n bytes
// (below len(Ellipsis) bytes there is no room for it: the cut is unmarked).
func Text(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	cut := n - len(Ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if cut > 0 {
		return s[:cut] + Ellipsis
	}
	// No room for a character and the mark: the mark goes.
	for cut = n; cut > 0 && !utf8.RuneStart(s[cut]); cut-- {
	}
	return s[:cut]
}
