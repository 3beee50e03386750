package manroff

import (
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	var b strings.Builder
	err := Write(&b, Page{Name: "headless", Section: 1, Date: "2026-12-03", Source: "headless v1", Manual: "User Commands", Summary: "sign in by alias",
		Sections: []Section{{Heading: "Commands", Subsections: []Section{{Heading: "headless visit", Text: "Usage: headless visit URL [--session NAME]\n.dot and 'quote\n  a\\b"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `.TH "HEADLESS" 1 "2026\-12\-03" "headless v1" "User Commands"
.SH NAME
headless \- sign in by alias
.SH "COMMANDS"
.SS "headless visit"
.nf
Usage: headless visit URL [\-\-session NAME]
\&.dot and 'quote
  a\eb
.fi
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
