package mcpserver

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
)

// compact renders a snapshot as one line per element, for an agent's tokens to go to the
// page rather than to repeated JSON keys: the ref, the kind ([type], [hN]), the quoted text,
// and only the attributes an agent acts on — a control's name, id or placeholder when it has
// no label, its value, checked, disabled, a link's href, a form's method when not POST and its
// action when it leaves the page's origin, a frame's origin. hrefs on the page's origin are
// relative. A text element that only repeats the links and buttons right after it is left
// out (the CLI's --json keeps every element).
//
//	e3 input[email] "Email"
//	e7 link "Projects" href=/app/projects
//	e9 form method=get action=https://other.test/search
func compact(r control.SnapshotResult) snapshotOut {
	base, _ := url.Parse(r.URL)
	origin := r.Origin
	var b strings.Builder
	for i, e := range r.Elements {
		if e.Kind == "text" && repeatsNext(e.Text, r.Elements[i+1:]) {
			continue
		}
		b.WriteString(e.Ref)
		b.WriteByte(' ')
		b.WriteString(e.Kind)
		switch {
		case e.Level > 0:
			b.WriteString("[h" + strconv.Itoa(e.Level) + "]")
		case e.Type != "" && !(e.Kind == "input" && e.Type == "text"):
			b.WriteString("[" + e.Type + "]")
		}
		if e.Text != "" {
			b.WriteByte(' ')
			b.WriteString(quote(e.Text))
		}
		attr := func(k, v string) {
			if v != "" {
				b.WriteString(" " + k + "=")
				if strings.ContainsAny(v, " \"'=\\") || !printable(v) {
					b.WriteString(quote(v))
				} else {
					b.WriteString(v)
				}
			}
		}
		if e.Text == "" && e.Kind != "form" {
			attr("name", e.Name)
			if e.Name == "" {
				attr("id", e.ID)
			}
			attr("placeholder", e.Placeholder)
		}
		if e.Value != "" {
			b.WriteString(" value=" + quote(e.Value))
		}
		if len(e.Options) > 0 {
			b.WriteString(" options=" + strings.Join(quoteAll(e.Options), ","))
		}
		if e.Multiple {
			b.WriteString(" multiple")
		}
		if e.Checked {
			b.WriteString(" checked")
		}
		if e.Disabled {
			b.WriteString(" disabled")
		}
		attr("href", relative(base, origin, e.Href))
		if m := strings.ToLower(e.Method); m != "" && m != "post" {
			attr("method", m)
		}
		if e.ActionOrigin != "" && e.ActionOrigin != origin {
			attr("action", e.Action)
		}
		attr("frame", e.Frame)
		b.WriteByte('\n')
	}
	return snapshotOut{Session: r.Session, URL: r.URL, Title: r.Title, Count: len(r.Elements), Truncated: r.Truncated, Outline: b.String()}
}

// repeatsNext reports whether text is only the texts of the few elements right after it
// (a paragraph of links), separators aside.
func repeatsNext(text string, next []snapshot.Element) bool {
	t := letters(text)
	if t == "" {
		return false
	}
	var after strings.Builder
	for i, e := range next {
		if i == 8 || e.Kind == "text" || e.Kind == "heading" || e.Kind == "form" {
			break
		}
		after.WriteString(letters(e.Text))
		if after.Len() >= len(t) {
			break
		}
	}
	return after.String() == t
}

func letters(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// relative is u relative to the page when it is on the page's origin (path, query and
// fragment), else u.
func relative(base *url.URL, origin, u string) string {
	if u == "" || base == nil || origin == "" || origin == "null" {
		return u
	}
	p, err := url.Parse(u)
	if err != nil || p.Scheme+"://"+p.Host != origin {
		return u
	}
	p.Scheme, p.Host, p.User = "", "", nil
	if s := p.String(); s != "" {
		return s
	}
	return "/"
}

// quote is s as a JSON string (what a client's JSON.parse reads), HTML characters as they are.
func quote(s string) string {
	var b strings.Builder
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
