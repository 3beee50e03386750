package journey

import (
	"strings"

	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/wire"
)

// scriptLike are the pieces of text refused in a selector: none is valid CSS in a selector,
// and each is how script looks (or how a selector would pretend to be a URL). The host never
// evaluates a selector (DOM.querySelectorAll parses it as CSS), so this refusal is about
// saying "no" loudly to a plan that tries, rather than matching nothing.
var scriptLike = []string{
	"javascript:", "vbscript:", "data:", "=>", ";", "{", "}", "`", "eval(", "function(", "function ", "()",
	"document.", "window.", "globalthis", "this.", "alert(", "fetch(", "import(", "constructor",
	"prototype", "<script", "</", "url(", "expression(", "@",
}

// valueStates are the pseudo-classes that match on a field's current value (or on what a
// browser filled into it): a selector with one is an oracle for that value.
var valueStates = []string{
	":placeholder-shown", ":valid", ":invalid", ":user-valid", ":user-invalid", ":in-range",
	":out-of-range", ":autofill", ":-webkit-autofill", ":blank", ":-internal-",
}

// CheckSelector refuses (UNSAFE_SELECTOR) a selector that looks like script, holds a CSS
// escape or comment (an escape can spell any character, a comment can sit inside an attribute
// selector, so either could hide what is refused here), a control character or a character
// outside printable ASCII, tests an element's value attribute ([value…], any namespace, any
// case: a prefilled password keeps its value there) or uses a pseudo-class that matches on a
// field's current value. PLAN_INVALID for an empty or over-long one.
func CheckSelector(sel string) error {
	if strings.TrimSpace(sel) == "" {
		return invalid("selector is empty")
	}
	if len(sel) > MaxSelectorLen {
		return invalid("selector is longer than %d bytes", MaxSelectorLen)
	}
	for i := 0; i < len(sel); i++ {
		if c := sel[i]; c < 0x20 || c > 0x7e {
			return unsafe(sel, "it holds a control or non-ASCII character")
		}
	}
	low := strings.ToLower(sel)
	if strings.Contains(low, `\`) {
		return unsafe(sel, "CSS escapes are not accepted")
	}
	if strings.Contains(low, "/*") || strings.Contains(low, "*/") {
		return unsafe(sel, "CSS comments are not accepted")
	}
	for _, bad := range scriptLike {
		if strings.Contains(low, bad) {
			return unsafe(sel, "it looks like script ("+bad+")")
		}
	}
	for _, bad := range valueStates {
		if strings.Contains(low, bad) {
			return unsafe(sel, bad+" matches on a field's current value")
		}
	}
	if name, ok := testsValue(low); ok {
		return unsafe(sel, "it tests the "+name+" attribute, where a prefilled field keeps its value")
	}
	return nil
}

func unsafe(sel, why string) error {
	return wire.Errorf(wire.CodeUnsafeSelector, "journey plan: selector %q refused: %s", clip.Text(sel, 80), why)
}

// testsValue reports whether the (lower-cased) selector has an attribute selector on the
// value attribute: "[" then optional white space, an optional namespace prefix ("*|", "|",
// "ns|" — but not the "|=" operator), then the name. Quoted strings inside attribute
// selectors are skipped, so "[title='[value']" is not mistaken for one, and a "[" inside a
// string does not open one.
func testsValue(s string) (string, bool) {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			continue
		case c == '"' || c == '\'':
			quote = c
			continue
		case c != '[':
			continue
		}
		j := i + 1
		for j < len(s) && s[j] == ' ' {
			j++
		}
		// An optional namespace prefix: an ident or "*", then "|" not followed by "=".
		k := j
		for k < len(s) && (isIdent(s[k]) || s[k] == '*') {
			k++
		}
		if k < len(s) && s[k] == '|' && (k+1 >= len(s) || s[k+1] != '=') {
			j = k + 1
		} else if j < len(s) && s[j] == '|' && (j+1 >= len(s) || s[j+1] != '=') {
			j++
		}
		k = j
		for k < len(s) && isIdent(s[k]) {
			k++
		}
		if name := s[j:k]; name == "value" {
			return name, true
		}
	}
	return "", false
}

func isIdent(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}
