// Package manroff writes a manual page (man(7) roff) from plain text: the same text a
// command's --help prints, so that the page never says anything --help does not.
//
// Every section's body is set as it is, in no-fill mode, with roff's special characters
// escaped (a backslash, and a line that begins with '.' or '\” that would be a request).
package manroff

import (
	"fmt"
	"io"
	"strings"
)

// Page is one manual page.
type Page struct {
	Name     string // headless
	Section  int    // 1
	Date     string // 2026-12-03
	Source   string // headless devel+…
	Manual   string // "User Commands"
	Summary  string // the NAME line's text after the dash
	Sections []Section
}

// Section is a .SH heading and its text; Subsections follow the text, each a .SS heading.
type Section struct {
	Heading     string
	Text        string
	Subsections []Section
}

// Write writes p as roff.
func Write(w io.Writer, p Page) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH %s %d %s %s %s\n", quote(strings.ToUpper(p.Name)), p.Section, quote(p.Date), quote(p.Source), quote(p.Manual))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", escape(p.Name), escape(p.Summary))
	for _, s := range p.Sections {
		fmt.Fprintf(&b, ".SH %s\n", quote(strings.ToUpper(s.Heading)))
		body(&b, s.Text)
		for _, ss := range s.Subsections {
			fmt.Fprintf(&b, ".SS %s\n", quote(ss.Heading))
			body(&b, ss.Text)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func body(b *strings.Builder, text string) {
	text = strings.Trim(text, "\n")
	if text == "" {
		return
	}
	b.WriteString(".nf\n")
	for _, l := range strings.Split(text, "\n") {
		b.WriteString(line(l))
		b.WriteByte('\n')
	}
	b.WriteString(".fi\n")
}

// line is one line of text, escaped for no-fill mode.
func line(l string) string {
	l = escape(l)
	if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
		l = `\&` + l
	}
	return l
}

// escape makes s literal roff text: backslashes and hyphens (a plain '-' may be set as a
// hyphen; '\-' is the minus sign options are written with).
func escape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	return strings.ReplaceAll(s, "-", `\-`)
}

// quote is a request argument in double quotes (a '"' inside is written '""').
func quote(s string) string {
	return `"` + strings.ReplaceAll(escape(s), `"`, `""`) + `"`
}
