package mcpserver

import (
	"net/url"
	"strconv"
	"strings"

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
			b.WriteString(strconv.Quote(e.Text))
		}
		attr := func(k, v string) {
			if v != "" {
				b.WriteString(" " + k + "=")
				if strings.ContainsAny(v, " \"'=\\") || !strconv.CanBackquote(v) {
					b.WriteString(strconv.Quote(v))
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
			b.WriteString(" value=" + strconv.Quote(e.Value))
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
