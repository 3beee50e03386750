//go:build linux

package tests

// The corpus of real sites' forms (TestCorpusSignIn): its pages read and parsed once, and each
// page's HTML made servable here. What the test knows of a file is only what the corpus's
// conventions say (testdata/corpora/README.md): a name with "login" is a sign-in page, the
// first-line comment is the URL it was captured at, data-manual-scoring labels the inputs and
// data-manual-submit marks the control a person clicks. Nothing else about a file's name or
// content is used, so another corpus of the same format (HEADLESS_CORPUS=DIR) is measured
// the same way.

import (
	"bytes"
	"cmp"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/publicsuffix"
)

// corpusDirDefault is the vendored corpus, relative to this package (go test's working dir).
const corpusDirDefault = "testdata/corpora/ddg-forms"

// corpusPage is one file of the corpus.
type corpusPage struct {
	File  string
	Login bool     // a sign-in page (its name holds "login")
	Orig  *url.URL // where it was captured: the first-line comment, else a made-up URL
	// URLKnown: Orig is the page's own comment; else its host is the one most of its links
	// name (a captured page links mostly to its own site), else the one its sign-in form
	// posts to (signInActionHost), else none, and its path is its file's name.
	URLKnown bool
	Src      []byte
	Forms    []corpusForm
	Inputs   []corpusInput
	// FirstStep: a sign-in page without any password input, the identifier-only first step
	// of a two-step sign-in.
	FirstStep bool
	// signIn holds the forms (by index; -1 is the fields outside any form) a sign-in's
	// account may go to: those holding a field labelled password or password.current; on a
	// first step, those holding the data-manual-submit control, else an account field. A
	// page that is not a sign-in page has none.
	signIn map[int]bool
	// SiblingSignIn: a sign-in form's action, or a formaction of one of its controls, is on
	// another host of the page's site (siblingHost): what the product answers
	// FORM_ACTION_CROSS_ORIGIN for until the person names that origin at enrolment.
	SiblingSignIn bool
}

type corpusForm struct {
	Index          int // among the page's forms, in document order (document.forms)
	ID             string
	Action, Method string
	FormActions    []string // its controls' formaction attributes
}

// corpusInput is an input, select or textarea, in document order (the index the live page's
// document.querySelectorAll("input,select,textarea") gives it).
type corpusInput struct {
	Index     int
	Form      int // its form's index, -1 outside any
	Tag       string
	Name, ID  string
	Type      string // lower-case; "text" when absent on an input
	Label     string // data-manual-scoring ("" when unlabelled)
	MaxLength int    // 0: none
	Pattern   string
	InputMode string
	Disabled  bool // the page shows it disabled: no one can type into it
}

// signInBoxes are the forms (-1: the fields outside any) of a page not named for signing in
// that hold a sign-in box all the same, by DuckDuckGo's labels: a field labelled
// password.current, or exactly one labelled password beside an account field, with no new
// password and no field of a person's (a name, an address, a card) in that form — the
// "Already a member? Sign in" box of a sign-up page, a site's page with its log-in form. A
// form whose labels hold more (a sign-in and a sign-up in one form) is none.
func (p *corpusPage) signInBoxes() map[int]bool {
	type tally struct{ current, password, account, other int }
	forms := map[int]*tally{}
	for _, in := range p.Inputs {
		t := forms[in.Form]
		if t == nil {
			t = &tally{}
			forms[in.Form] = t
		}
		switch l := in.Label; {
		case l == "password.current":
			t.current++
		case l == "password":
			t.password++
		case isAccountLabel(l):
			t.account++
		case l != "":
			t.other++
		}
	}
	boxes := map[int]bool{}
	for f, t := range forms {
		if t.other == 0 && (t.current == 1 && t.password == 0 || t.current == 0 && t.password == 1 && t.account > 0) {
			boxes[f] = true
		}
	}
	return boxes
}

// labelCorrections are fields DuckDuckGo left unlabelled on pages it labelled otherwise, where
// what they are is not in doubt (the page's own words say it), by page and then field name.
// Without them a string typed where it belonged would count as typed into an unknown field.
var labelCorrections = map[string]map[string]string{
	// A "Log In" form (Email, Password, Remember me, Log In) of the sign-up page's header.
	"www_singaporeair_com_signup.html": {"loginID": "username", "password": "password"},
	// The sign-in's password field (aria-label "password", beside the labelled e-mail).
	"customer_globeandmail_ca_login.html": {"password": "password"},
}

// Labels of the corpus the judgement uses.
func isPasswordLabel(l string) bool { return l == "password" || l == "password.current" }
func isAccountLabel(l string) bool {
	return l == "username" || l == "emailAddress" || l == "username OR emailAddress"
}

// corpusPages reads every .html file of the corpus (HEADLESS_CORPUS, else the vendored one),
// keeping those whose name matches HEADLESS_CORPUS_ONLY when it is set. A corpus that is
// missing, unreadable or holds no sign-in page fails the test: it is never skipped.
func corpusPages(t testing.TB) (dir string, pages []*corpusPage) {
	t.Helper()
	dir = cmp.Or(os.Getenv("HEADLESS_CORPUS"), corpusDirDefault)
	var only *regexp.Regexp
	if s := os.Getenv("HEADLESS_CORPUS_ONLY"); s != "" {
		re, err := regexp.Compile(s)
		if err != nil {
			t.Fatalf("HEADLESS_CORPUS_ONLY=%q: %v", s, err)
		}
		only = re
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("the corpus of real sign-in pages: %v (HEADLESS_CORPUS names another one)", err)
	}
	all := 0
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(strings.ToLower(e.Name()), ".html") {
			continue
		}
		all++
		if only != nil && !only.MatchString(e.Name()) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		p, err := parseCorpusPage(e.Name(), src)
		if err != nil {
			t.Fatalf("corpus page %s: %v", e.Name(), err)
		}
		pages = append(pages, p)
	}
	if !slices.ContainsFunc(pages, func(p *corpusPage) bool { return p.Login }) {
		t.Fatalf("the corpus at %s has no sign-in page (a name holding \"login\") among %d .html files (HEADLESS_CORPUS_ONLY=%q)", dir, all, os.Getenv("HEADLESS_CORPUS_ONLY"))
	}
	return dir, pages
}

// firstLineURL is the page's URL in its leading comment: alone on the first line
// (<!-- https://… -->), or opening a comment of several lines (<!--, then the URL, then
// "rank: …", "testRunId: …"), as 212 of the corpus's files have it; the URL ends at a space
// (givesmart's comment goes on with words of its own).
var firstLineURL = regexp.MustCompile(`^\s*<!--\s*(https?://[^\s>]+)[^\n]*?(?:-->|\n)`)

func parseCorpusPage(file string, src []byte) (*corpusPage, error) {
	p := &corpusPage{File: file, Login: strings.Contains(strings.ToLower(file), "login"), Src: src}
	if m := firstLineURL.FindSubmatch(src[:min(len(src), 4096)]); m != nil {
		if u, err := url.Parse(string(m[1])); err == nil && u.Host != "" {
			p.Orig, p.URLKnown = u, true
		}
	}
	doc, err := html.Parse(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	hosts := map[string]int{}
	var firstHost string
	formIDs := map[string]int{}
	var formAttr []string // per input: its form="" attribute
	type formAction struct {
		form           int
		formAttr, link string
	}
	var formActions []formAction // buttons' and inputs' formaction attributes
	submits := map[int]bool{}
	var walk func(n *html.Node, form int)
	walk = func(n *html.Node, form int) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Template:
				return // not in the document (querySelectorAll skips it)
			case atom.Form:
				form = len(p.Forms)
				f := corpusForm{Index: form, ID: attr(n, "id"), Action: attr(n, "action"), Method: strings.ToLower(attr(n, "method"))}
				p.Forms = append(p.Forms, f)
				if f.ID != "" {
					formIDs[f.ID] = form
				}
			case atom.Input, atom.Select, atom.Textarea:
				in := corpusInput{Index: len(p.Inputs), Form: form, Tag: n.Data, Name: attr(n, "name"), ID: attr(n, "id"),
					Type: strings.ToLower(strings.TrimSpace(attr(n, "type"))), Label: strings.TrimSpace(attr(n, "data-manual-scoring")),
					Pattern: attr(n, "pattern"), InputMode: strings.ToLower(attr(n, "inputmode"))}
				if in.Tag == "input" && in.Type == "" {
					in.Type = "text"
				}
				if l, ok := labelCorrections[file][in.Name]; ok && in.Label == "" {
					in.Label = l
				}
				in.MaxLength, _ = strconv.Atoi(strings.TrimSpace(attr(n, "maxlength")))
				in.Disabled = hasAttr(n, "disabled")
				p.Inputs = append(p.Inputs, in)
				formAttr = append(formAttr, attr(n, "form"))
			case atom.A:
				if u, err := url.Parse(strings.TrimSpace(attr(n, "href"))); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "") {
					h := strings.ToLower(u.Hostname())
					if hosts[h]++; firstHost == "" {
						firstHost = h
					}
				}
			}
			if (n.DataAtom == atom.Button || n.DataAtom == atom.Input) && hasAttr(n, "formaction") {
				formActions = append(formActions, formAction{form, attr(n, "form"), attr(n, "formaction")})
			}
			if hasAttr(n, "data-manual-submit") {
				submits[form] = true
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, form)
		}
	}
	walk(doc, -1)
	for i, id := range formAttr {
		if f, ok := formIDs[id]; ok && id != "" {
			p.Inputs[i].Form = f
		}
	}
	for _, fa := range formActions {
		if f, ok := formIDs[fa.formAttr]; ok && fa.formAttr != "" {
			fa.form = f
		}
		if fa.form >= 0 {
			p.Forms[fa.form].FormActions = append(p.Forms[fa.form].FormActions, fa.link)
		}
	}
	if !p.URLKnown {
		host := firstHost
		for h, n := range hosts {
			if n > hosts[host] || n == hosts[host] && h < host {
				host = h
			}
		}
		if host == "" {
			host = signInActionHost(p)
		}
		if host == "" {
			host = "corpus-page.invalid"
		}
		p.Orig = &url.URL{Scheme: "https", Host: host, Path: "/" + strings.TrimSuffix(file, filepath.Ext(file))}
	}
	p.FirstStep = p.Login && !slices.ContainsFunc(p.Inputs, func(in corpusInput) bool { return in.Type == "password" })
	p.signIn = map[int]bool{}
	if !p.Login {
		p.signIn = p.signInBoxes()
	}
	if p.Login {
		for _, in := range p.Inputs {
			if isPasswordLabel(in.Label) {
				p.signIn[in.Form] = true
			}
		}
		if len(p.signIn) == 0 {
			p.signIn = submits
		}
		if len(p.signIn) == 0 {
			for _, in := range p.Inputs {
				if isAccountLabel(in.Label) {
					p.signIn[in.Form] = true
				}
			}
		}
	}
	p.SiblingSignIn = p.postsToSibling()
	return p, nil
}

// postsToSibling reports whether one of the page's sign-in forms posts to a sibling host of
// the page's (its action, or a formaction of one of its controls). Only the sign-in's forms
// count: the product asks about the form it fills, and the person names no more than it asks.
func (p *corpusPage) postsToSibling() bool {
	for f := range p.signIn {
		if f < 0 {
			continue
		}
		for _, a := range append([]string{p.Forms[f].Action}, p.Forms[f].FormActions...) {
			if u, err := p.Orig.Parse(strings.TrimSpace(a)); err == nil && siblingHost(u.Hostname(), p.Orig.Hostname()) {
				return true
			}
		}
	}
	return false
}

// signInActionHost is the host the page's sign-in form posts to (the first form holding a
// field labelled password, else an account field), "" when it names none: where a page that
// says neither its URL nor, by its links, its site was most likely served from.
func signInActionHost(p *corpusPage) string {
	for _, want := range []func(string) bool{isPasswordLabel, isAccountLabel} {
		for _, in := range p.Inputs {
			if in.Form < 0 || !want(in.Label) {
				continue
			}
			a := strings.TrimSpace(p.Forms[in.Form].Action)
			if strings.HasPrefix(a, "//") {
				a = "https:" + a
			}
			if u, err := url.Parse(a); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
				return strings.ToLower(u.Hostname())
			}
		}
	}
	return ""
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	return slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == key })
}

// hasAccountField reports whether the page's sign-in forms have a field labelled as the
// account that takes typing: then a sign-in puts the account there. A disabled one is a
// password step's (the site shows the account its first step took, as twitter's "Enter
// your password" and Okta's second page do): nothing can be typed into it, and the site
// has the account already, as on the harness's own password step.
func (p *corpusPage) hasAccountField() bool {
	return slices.ContainsFunc(p.Inputs, func(in corpusInput) bool {
		return isAccountLabel(in.Label) && p.signIn[in.Form] && !in.Disabled
	})
}

// input is the page's input at index i, nil when there is none.
func (p *corpusPage) input(i int) *corpusInput {
	if i < 0 || i >= len(p.Inputs) {
		return nil
	}
	return &p.Inputs[i]
}

// corpusRewriter makes a page servable here. Every URL the page names (links, form actions,
// formactions, scripts, styles, images, frames, srcset, CSS url() and @import, a meta
// refresh) is made local: one on the page's own origin (same scheme and host) goes to the
// page's local origin, path and query kept; one on a sibling host of the page's site (another
// host under the page's registrable domain, publicsuffix.EffectiveTLDPlusOne: signin.ebay.com's
// www.ebay.com) goes to the page's sibling origin, path and query kept; any other goes to the
// world's "elsewhere" origin at /HOST/PATH, another origin here, which records the request and
// answers an empty page. Every sibling host of a page (www., static., auth., …) maps to its one
// sibling origin: the test tells apart the site's own origin, the rest of the site, and other
// sites, not one sibling from another. An IP address, or a host with no registrable domain, is
// no one's sibling. Another site's form action so stays another origin, a sibling's is the one
// origin the person may name at enrolment (--also-origin), and no subresource reaches for the
// internet (there is none here: Chromium must not wait on it). Everything else of the page is
// kept byte for byte; scripts are appended at the end (the input reporter, and in live mode the
// page's script).
type corpusRewriter struct {
	page      *url.URL // where the page was captured
	own       string   // the page's local origin, http://127.0.0.1:PORT
	sibling   string   // the page's sibling origin, the rest of its site ("": none, they go elsewhere)
	elsewhere string   // the world's other origin
}

// urlAttrs are the attributes whose value is a URL the browser fetches or navigates to.
var urlAttrs = map[string]bool{"href": true, "src": true, "action": true, "formaction": true, "data": true,
	"poster": true, "background": true, "ping": true, "manifest": true, "xlink:href": true, "lowsrc": true, "longdesc": true}

// srcsetAttrs hold lists of URLs.
var srcsetAttrs = map[string]bool{"srcset": true, "imagesrcset": true}

var (
	absURL     = regexp.MustCompile(`(?i)(?:https?:)?//[^\s,'"()<>]+`)
	cssURL     = regexp.MustCompile(`(?i)(url\(\s*['"]?|@import\s+['"])((?:https?:)?//[^'"()\s]+)`)
	refreshURL = regexp.MustCompile(`(?i)(url\s*=\s*['"]?)([^'"\s]+)`)
)

// local maps one URL of the page (absolute or protocol-relative; anything else is returned
// as it is: relative URLs resolve against the page's local address by themselves).
func (rw corpusRewriter) local(raw string) string {
	s := strings.TrimSpace(raw)
	low := strings.ToLower(s)
	if !strings.HasPrefix(low, "http:") && !strings.HasPrefix(low, "https:") && !strings.HasPrefix(s, "//") {
		return raw
	}
	if strings.HasPrefix(s, "//") {
		s = rw.page.Scheme + ":" + s
	}
	u, err := url.Parse(s)
	switch {
	case err == nil && u.Host == "" && strings.EqualFold(u.Scheme, rw.page.Scheme):
		// "https:/path" on an https page is the page's own path (browsers read it so).
		u.Host = rw.page.Host
	case err != nil || u.Host == "":
		// Unparseable: nowhere reachable (the elsewhere origin answers it).
		return rw.elsewhere + "/invalid/"
	}
	rest := u.EscapedPath()
	if rest == "" {
		rest = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		rest += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		rest += "#" + u.EscapedFragment()
	}
	switch {
	case sameOrigin(u, rw.page):
		return rw.own + rest
	case rw.sibling != "" && siblingHost(u.Hostname(), rw.page.Hostname()):
		return rw.sibling + rest
	}
	return rw.elsewhere + "/" + strings.ToLower(u.Host) + rest
}

// siblingHost reports whether host a is another host of b's site: not b, and under the same
// registrable domain (eTLD+1). IP addresses and hosts whose registrable domain cannot be told
// (a public suffix itself, "localhost") are no one's sibling.
func siblingHost(a, b string) bool {
	a, b = strings.ToLower(strings.TrimSuffix(a, ".")), strings.ToLower(strings.TrimSuffix(b, "."))
	if a == b || net.ParseIP(a) != nil || net.ParseIP(b) != nil {
		return false
	}
	da, err := publicsuffix.EffectiveTLDPlusOne(a)
	if err != nil {
		return false
	}
	db, err := publicsuffix.EffectiveTLDPlusOne(b)
	return err == nil && da == db
}

// sameOrigin compares scheme, host and port (the default one when none is written).
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "http") {
			return "80"
		}
		return "443"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func (rw corpusRewriter) css(s string) string {
	return cssURL.ReplaceAllStringFunc(s, func(m string) string {
		sub := cssURL.FindStringSubmatch(m)
		return sub[1] + rw.local(sub[2])
	})
}

// rewrite returns src with its URLs made local and tail appended.
func (rw corpusRewriter) rewrite(src []byte, tail string) []byte {
	var out bytes.Buffer
	out.Grow(len(src) + len(tail) + 1024)
	z := html.NewTokenizer(bytes.NewReader(src))
	inStyle := false
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		raw := bytes.Clone(z.Raw()) // Token lower-cases names in the tokenizer's buffer
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			inStyle = tt == html.StartTagToken && tok.DataAtom == atom.Style
			changed := false
			refresh := tok.DataAtom == atom.Meta && slices.ContainsFunc(tok.Attr, func(a html.Attribute) bool {
				return a.Key == "http-equiv" && strings.EqualFold(strings.TrimSpace(a.Val), "refresh")
			})
			for i, a := range tok.Attr {
				v := a.Val
				switch {
				case urlAttrs[a.Key]:
					v = rw.local(a.Val)
				case srcsetAttrs[a.Key]:
					v = absURL.ReplaceAllStringFunc(a.Val, rw.local)
				case a.Key == "style":
					v = rw.css(a.Val)
				case refresh && a.Key == "content":
					v = refreshURL.ReplaceAllStringFunc(a.Val, func(m string) string {
						sub := refreshURL.FindStringSubmatch(m)
						return sub[1] + rw.local(sub[2])
					})
				}
				if v != a.Val {
					tok.Attr[i].Val, changed = v, true
				}
			}
			if changed {
				out.WriteString(tok.String())
			} else {
				out.Write(raw)
			}
		case html.TextToken:
			if inStyle {
				out.WriteString(rw.css(string(raw)))
			} else {
				out.Write(raw)
			}
		case html.EndTagToken:
			inStyle = false
			out.Write(raw)
		default:
			out.Write(raw)
		}
	}
	out.WriteString(tail)
	return out.Bytes()
}

// String names the page for reports.
func (p *corpusPage) String() string {
	kind := "not a sign-in page"
	if p.FirstStep {
		kind = "sign-in, first step"
	} else if p.Login {
		kind = "sign-in"
	}
	return fmt.Sprintf("%s (%s, %s)", p.File, kind, p.Orig)
}

// TestCorpusServable checks the harness's own rewriting, without a browser: every page of the
// corpus, rewritten, names no URL but the three local origins in any attribute a browser fetches
// or navigates to, and keeps every form and input the page had.
func TestCorpusServable(t *testing.T) {
	parallel(t)
	_, pages := corpusPages(t)
	const own, elsewhere, sibling = "http://127.0.0.1:1", "http://127.0.0.1:2", "http://127.0.0.1:3"
	checked := 0
	var named []string
	for _, p := range pages {
		rw := corpusRewriter{page: p.Orig, own: own, sibling: sibling, elsewhere: elsewhere}
		out := rw.rewrite(p.Src, "")
		if p.SiblingSignIn {
			named = append(named, p.File)
		}
		z := html.NewTokenizer(bytes.NewReader(out))
		inStyle := false
		for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
			check := func(what, u string) {
				checked++
				if !slices.ContainsFunc([]string{own, elsewhere, sibling}, func(o string) bool { return u == o || strings.HasPrefix(u, o+"/") }) {
					t.Errorf("%s: %s still names %q", p.File, what, u)
				}
			}
			switch tok := z.Token(); tt {
			case html.StartTagToken, html.SelfClosingTagToken:
				inStyle = tt == html.StartTagToken && tok.DataAtom == atom.Style
				for _, a := range tok.Attr {
					switch {
					case urlAttrs[a.Key] || srcsetAttrs[a.Key]:
						for _, c := range strings.Split(a.Val, ",") {
							v, _, _ := strings.Cut(strings.TrimSpace(c), " ")
							if strings.HasPrefix(v, "//") || strings.HasPrefix(strings.ToLower(v), "http:") || strings.HasPrefix(strings.ToLower(v), "https:") {
								check("<"+tok.Data+" "+a.Key+">", v)
							}
							if !srcsetAttrs[a.Key] {
								break
							}
						}
					case a.Key == "style":
						for _, m := range cssURL.FindAllStringSubmatch(a.Val, -1) {
							check("a style attribute", m[2])
						}
					}
				}
			case html.TextToken:
				if inStyle {
					for _, m := range cssURL.FindAllStringSubmatch(tok.Data, -1) {
						check("a <style>", m[2])
					}
				}
			default:
				inStyle = false
			}
		}
		if in, out := formTags(p.Src), formTags(out); in != out {
			t.Errorf("%s: %d form, input, select and textarea tags, %d once rewritten", p.File, in, out)
		}
	}
	if checked == 0 {
		t.Fatal("no absolute URL in the whole corpus: this check proves nothing")
	}
	t.Logf("%d pages' sign-in posts to a sibling host of their site (the person names it): %s", len(named), strings.Join(named, " "))
}

// formTags counts the form, input, select and textarea start tags of src.
func formTags(src []byte) int {
	n := 0
	z := html.NewTokenizer(bytes.NewReader(src))
	for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
		if tt == html.StartTagToken || tt == html.SelfClosingTagToken {
			switch name, _ := z.TagName(); atom.Lookup(name) {
			case atom.Form, atom.Input, atom.Select, atom.Textarea:
				n++
			}
		}
	}
	return n
}
