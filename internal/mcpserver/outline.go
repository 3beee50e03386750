package mcpserver

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/headless-dev/headless/host/control"
)

// compact renders a snapshot as one line per element: an agent's tokens go to the page, not
// to repeated JSON keys.
//
//	e3 input[email] "Email" name=username id=acct autocomplete=username form=e2
//	e7 link "Projects" href=/app/projects
//	e9 form method=post action=/login
func compact(r control.SnapshotResult) snapshotOut {
	base, _ := url.Parse(r.URL)
	origin := r.Origin
	var b strings.Builder
	for _, e := range r.Elements {
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
		attr("name", e.Name)
		attr("id", e.ID)
		attr("placeholder", e.Placeholder)
		attr("autocomplete", e.Autocomplete)
		if e.Value != "" {
			b.WriteString(" value=" + quote(e.Value))
		}
		if e.Checked {
			b.WriteString(" checked")
		}
		if e.Disabled {
			b.WriteString(" disabled")
		}
		attr("href", relative(base, origin, e.Href))
		attr("method", strings.ToLower(e.Method))
		attr("action", relative(base, origin, e.Action))
		if e.ActionOrigin != "" && e.ActionOrigin != origin {
			attr("action_origin", e.ActionOrigin)
		}
		attr("form", e.Form)
		attr("frame", e.Frame)
		b.WriteByte('\n')
	}
	return snapshotOut{Session: r.Session, URL: r.URL, Title: r.Title, Count: len(r.Elements), Truncated: r.Truncated, Outline: b.String()}
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
