package echo

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The password of the hostile review's A40 and A42.
const canary = "Zq8CANARYk4t7wPv2x"

// b64s are the encodings a page's script has (btoa, and base64url with and without padding).
var b64s = map[string]*base64.Encoding{
	"std": base64.StdEncoding, "std raw": base64.RawStdEncoding,
	"url": base64.URLEncoding, "url raw": base64.RawURLEncoding,
}

// TestBase64EveryAlignment: the password inside a longer text, base64-encoded, is found
// wherever it starts in its group of three (A40: btoa('x'+v), btoa('xy'+v), btoa('u=1&'+v)).
func TestBase64EveryAlignment(t *testing.T) {
	s := New()
	s.Add([]byte(canary), "")
	for _, before := range []string{"", "x", "xy", "xyz", "u=1&", "{\"user\":\"alice\",\"pass\":\""} {
		for _, after := range []string{"", "!", "ab", "\"}"} {
			for name, enc := range b64s {
				e := enc.EncodeToString([]byte(before + canary + after))
				for _, text := range []string{"T " + e, "https://evil.example/c/" + e, e} {
					if !s.MatchString(text) {
						t.Errorf("%s of %q+pw+%q: %q not found", name, before, after, text)
					}
				}
				j, _ := json.Marshal(map[string]string{"title": "T " + e})
				if !s.MatchJSON(j) {
					t.Errorf("%s of %q+pw+%q: not found in the JSON answer %s", name, before, after, j)
				}
			}
		}
	}
	// Every byte before it (the characters left off depend on them alone).
	for c := 0; c < 256; c++ {
		for k := 1; k <= 2; k++ {
			v := append([]byte(strings.Repeat(string(rune('a'+k)), k-1)), byte(c))
			e := base64.StdEncoding.EncodeToString(append(v, canary...))
			if !s.MatchString(e) {
				t.Fatalf("byte %#x, alignment %d: %q not found", c, k, e)
			}
		}
	}
}

// TestBase64Bound: a secret of MinBase64-1 base64 characters' worth is not looked for inside
// a longer base64 text (a tiny run would match random data); one of five bytes is.
func TestBase64Bound(t *testing.T) {
	short, five := New(), New()
	short.Add([]byte("k4t7"), "")
	five.Add([]byte("k4t7w"), "")
	for _, before := range []string{"x", "xy", "xyz"} {
		e := base64.StdEncoding.EncodeToString([]byte(before + "k4t7w" + "tail"))
		if !five.MatchString(e) {
			t.Errorf("a five-byte secret after %q: %q not found", before, e)
		}
	}
	if short.MatchString(base64.StdEncoding.EncodeToString([]byte("x" + "k4t7" + "tail"))) {
		t.Error("a four-byte secret was looked for at alignment 1")
	}
}

// fullyEncoded are the A42 forms: every character escaped, in each way a page writes it.
func fullyEncoded(v string) map[string]string {
	each := func(f func(c rune) string) string {
		var b strings.Builder
		for _, c := range v {
			b.WriteString(f(c))
		}
		return b.String()
	}
	alt := []byte(v)
	for i := range alt {
		if i%2 == 1 {
			alt[i] = []byte(strings.ToLower(string(alt[i])))[0]
		} else {
			alt[i] = []byte(strings.ToUpper(string(alt[i])))[0]
		}
	}
	return map[string]string{
		"percent lower":     each(func(c rune) string { return fmt.Sprintf("%%%02x", c) }),
		"percent upper":     each(func(c rune) string { return fmt.Sprintf("%%%02X", c) }),
		"decimal entities":  each(func(c rune) string { return fmt.Sprintf("&#%d;", c) }),
		"decimal, no ';'":   each(func(c rune) string { return fmt.Sprintf("&#%d", c) }),
		"zero-padded":       each(func(c rune) string { return fmt.Sprintf("&#%07d;", c) }),
		"hex entities":      each(func(c rune) string { return fmt.Sprintf("&#x%x;", c) }),
		"hex entities, X":   each(func(c rune) string { return fmt.Sprintf("&#X%X;", c) }),
		"hex, no ';'":       each(func(c rune) string { return fmt.Sprintf("&#x%x", c) }),
		"JSON \\u lower":    each(func(c rune) string { return fmt.Sprintf("\\u%04x", c) }),
		"JSON \\u upper":    each(func(c rune) string { return fmt.Sprintf("\\u%04X", c) }),
		"alternating case":  string(alt),
		"upper and escaped": strings.ToUpper(each(func(c rune) string { return fmt.Sprintf("%%%02x", c) })),
	}
}

// TestFullyEncoded: A42's forms are found in a URL, a body, a page's text and the host's JSON
// answer (the guard's and the output scan's ways of reading).
func TestFullyEncoded(t *testing.T) {
	s := New()
	s.Add([]byte(canary), "")
	forms := fullyEncoded(canary)
	forms["mixed escapes"] = "%5a" + "&#113;" + "\\u0038" + "cAnArY" + "&#x6B" + ";4%74" + canary[12:]
	for name, e := range forms {
		for _, text := range []string{e, "https://evil.example/c/" + e + "?x=1", "u=alice&p=" + e + "&go=1", "<title>T " + e + "</title>"} {
			if !s.MatchString(text) {
				t.Errorf("%s: %q not found", name, text)
			}
		}
		j, _ := json.Marshal(map[string]string{"text": "You typed " + e})
		if !s.MatchJSON(j) {
			t.Errorf("%s: not found in the JSON answer %s", name, j)
		}
	}
	// A password that holds escapes itself, in any case and fully encoded.
	odd := New()
	odd.Add([]byte(`Pa%41ss&#66;w\u0043rd`), "")
	for name, e := range fullyEncoded(`Pa%41ss&#66;w\u0043rd`) {
		if !odd.MatchString("x " + e + " y") {
			t.Errorf("a password with escapes, %s: %q not found", name, e)
		}
	}
	if !odd.MatchString(`pA%41SS&#66;W\u0043RD`) {
		t.Error("a password with escapes, case changed: not found")
	}
}

// TestNoFalseMatchEncoded: the decoded views and the base64 runs do not find what is not the
// whole secret.
func TestNoFalseMatchEncoded(t *testing.T) {
	s := New()
	s.Add([]byte(canary), "alice")
	pct := func(v string) string {
		var b strings.Builder
		for _, c := range []byte(v) {
			fmt.Fprintf(&b, "%%%02x", c)
		}
		return b.String()
	}
	other := "Xq8CANARYk4t7wPv2x" // the password with its first byte changed
	for _, text := range []string{
		"Zq8CANARYk4t7wPv2", "q8CANARYk4t7wPv2x", "zq8canary k4t7wpv2x", "Zq8-CANARY-k4t7wPv2x",
		pct(canary[:len(canary)-1]), pct(canary)[3:], "&#90;&#113;&#56;CANARYk4t7wPv2", "&#90&#113&#5;8CANARYk4t7wPv2x",
		`\u005a\u0071\u0038CANARYk4t7wPv2\u0079`, "%5aq8CANARYk4t7wPv2%7", "%%35aq8CANARYk4t7wPv2x",
		strings.Repeat("Zq8CANARY", 500),
		// base64 of other texts: the password with a byte changed, a prefix of it, and base64
		// read at a wrong alignment of an unrelated string.
		base64.StdEncoding.EncodeToString([]byte(other)),
		base64.StdEncoding.EncodeToString([]byte("x" + other)),
		base64.StdEncoding.EncodeToString([]byte("xy" + other + "tail")),
		base64.StdEncoding.EncodeToString([]byte("u=1&" + canary[:12])),
		base64.StdEncoding.EncodeToString([]byte(strings.Repeat("unrelated text, ", 100))),
		base64.StdEncoding.EncodeToString([]byte(strings.ToLower(canary))),
		strings.ToLower(base64.StdEncoding.EncodeToString([]byte("x" + canary))), // base64 is not folded
		strings.ToUpper(base64.StdEncoding.EncodeToString([]byte("xy" + canary))),
	} {
		if s.MatchString(text) {
			t.Errorf("%q matched", text)
		}
		j, _ := json.Marshal(text)
		if s.MatchJSON(j) {
			t.Errorf("%s matched as JSON", j)
		}
	}
}
