//go:build linux

package tests

// The local servers of the corpus test (TestCorpusSignIn): each page on an origin of its own
// with a "sibling" origin of its own for the rest of its site (every other host under its
// registrable domain: corpusRewriter), and one "elsewhere" origin per world for every other
// site a page names. Every server records every request it gets (method, URL, headers, body),
// so the judgement (corpus_judge_test.go) can tell where each string went. The sibling and
// elsewhere origins answer every request with an empty page.
//
// A page's origin (http://127.0.0.1:PORT: loopback http may hold credentials) answers:
//
//	GET  the page's path          the page, rewritten (corpusRewriter), in the site's mode
//	POST /__corpus/typed          the input reporter's beacon (a field's index, name, label
//	                              and value length, never the value)
//	POST /__corpus/submit         the live script's JSON: {"next": URL} or {"error": TEXT}
//	any  other request carrying   a form's submission (the page's own action, or a GET form
//	     one of the page's strings                      landing in a URL): 303 to the next page
//	GET  /__corpus/signed-in      "You are signed in" (no form)
//	GET  /__corpus/password       the password step of a two-step sign-in (a textbook form,
//	                              posting to /__corpus/password)
//	anything else                 404 (a same-site subresource)
//
// What comes next, for every submission, is what a site would answer: the page's password
// arrived → signed in; only its account arrived → the password step (the first step of a
// two-step sign-in did its part); neither → "Incorrect username or password" (role=alert).

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
)

// The modes a page is served in.
const (
	modeCaptured = "captured" // as captured: no script of the site's
	modeLive     = "live"     // with corpusLiveScript, a single-page site's sign-in
)

// corpusRequest is one request a corpus server received.
type corpusRequest struct {
	At      time.Time
	Own     bool   // the page's own origin
	Sibling bool   // the page's sibling origin (neither: the world's elsewhere origin)
	Mode    string // the mode of the page it is counted for when it arrived
	Site    *corpusSite
	Method  string
	URL     string // as sent: path and query
	Header  http.Header
	Body    []byte
}

// corpusSite is one page served on its own origin, with its own credential's strings.
type corpusSite struct {
	page      *corpusPage
	srv       *httptest.Server
	rw        corpusRewriter
	account   string
	password  string
	elsewhere *corpusElsewhere
	sibling   *httptest.Server // the rest of the page's site
	// namesSibling: the page's sign-in posts to a sibling host (corpusPage.SiblingSignIn),
	// so the person names the sibling origin at enrolment (credentials add --also-origin).
	namesSibling bool

	mu     sync.Mutex
	mode   string
	served map[string][]byte // mode → the page as served
	reqs   []corpusRequest
}

// corpusElsewhere is a world's other origin: every other site's URL a page names leads here
// (corpusRewriter), answered with an empty page. A request is counted for the page the world
// showed when it arrived.
type corpusElsewhere struct {
	srv  *httptest.Server
	mu   sync.Mutex
	cur  *corpusSite
	reqs []corpusRequest
}

func newCorpusElsewhere(t testing.TB) *corpusElsewhere {
	el := &corpusElsewhere{}
	el.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		el.mu.Lock()
		req := corpusRequest{At: time.Now(), Method: r.Method, URL: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body, Site: el.cur}
		if el.cur != nil {
			req.Mode = el.cur.currentMode()
		}
		el.reqs = append(el.reqs, req)
		el.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}))
	t.Cleanup(el.srv.Close)
	return el
}

// showing sets the page the world shows now.
func (el *corpusElsewhere) showing(s *corpusSite) {
	el.mu.Lock()
	el.cur = s
	el.mu.Unlock()
}

func (el *corpusElsewhere) requests() []corpusRequest {
	el.mu.Lock()
	defer el.mu.Unlock()
	return slices.Clone(el.reqs)
}

// newCorpusSite serves p on an origin of its own, with the strings of its credential.
func newCorpusSite(t testing.TB, p *corpusPage, el *corpusElsewhere) *corpusSite {
	s := &corpusSite{page: p, elsewhere: el, served: map[string][]byte{}, mode: modeCaptured}
	s.account, s.password = corpusStrings(p)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	s.sibling = httptest.NewServer(http.HandlerFunc(s.serveSibling))
	t.Cleanup(s.sibling.Close)
	s.rw = corpusRewriter{page: p.Orig, own: s.srv.URL, sibling: s.sibling.URL, elsewhere: el.srv.URL}
	s.namesSibling = p.SiblingSignIn
	body := s.rw.rewrite(p.Src, "")
	for _, m := range []string{modeCaptured, modeLive} {
		tail := fmt.Sprintf(corpusReporter, m)
		if m == modeLive {
			tail += corpusLiveScript
		}
		s.served[m] = append(slices.Clip(body), tail...)
	}
	return s
}

// URL is where the page is served: its captured path and query, on its local origin.
func (s *corpusSite) URL() string {
	u := s.srv.URL + s.page.Orig.EscapedPath()
	if s.page.Orig.EscapedPath() == "" {
		u += "/"
	}
	if s.page.Orig.RawQuery != "" {
		u += "?" + s.page.Orig.RawQuery
	}
	return u
}

func (s *corpusSite) Origin() string { return s.srv.URL }

// SiblingOrigin is the local origin of the rest of the page's site.
func (s *corpusSite) SiblingOrigin() string { return s.sibling.URL }

// serveSibling records a request to the page's sibling origin, counted for the page's mode
// when it arrived, and answers an empty page, as the elsewhere origin does: a sign-in posted
// there is judged by what arrived, not by what the site would answer.
func (s *corpusSite) serveSibling(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	s.mu.Lock()
	s.reqs = append(s.reqs, corpusRequest{At: time.Now(), Sibling: true, Mode: s.mode, Site: s, Method: r.Method,
		URL: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body})
	s.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
}

func (s *corpusSite) setMode(m string) {
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
}

func (s *corpusSite) currentMode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

func (s *corpusSite) requests() []corpusRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// corpusReporter reports each input event of the page to its own origin: the field's index
// among the document's inputs, name, id, type, label, its form's index and the length of its
// value — never the value. So a string typed and not submitted is seen too. %s is the mode.
const corpusReporter = `<script>
(function () {
  function ix(list, el) { return Array.prototype.indexOf.call(list, el); }
  document.addEventListener("input", function (e) {
    var t = e.composedPath ? e.composedPath()[0] : e.target;
    if (!t || typeof t.value !== "string") return;
    var q = "m=%s&i=" + ix(document.querySelectorAll("input,select,textarea"), t) + "&n=" + t.value.length +
      "&name=" + encodeURIComponent(t.name || "") + "&id=" + encodeURIComponent(t.id || "") +
      "&type=" + encodeURIComponent(t.type || "") + "&label=" + encodeURIComponent(t.getAttribute("data-manual-scoring") || "") +
      "&f=" + (t.form ? ix(document.forms, t.form) : -1);
    navigator.sendBeacon("/__corpus/typed?" + q);
  }, true);
})();
</script>`

// Paths of the site's own pages.
const (
	corpusSignedIn = "/__corpus/signed-in"
	corpusPassword = "/__corpus/password"
	corpusSubmit   = "/__corpus/submit"
	corpusTyped    = "/__corpus/typed"
)

func (s *corpusSite) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	s.mu.Lock()
	mode := s.mode
	s.reqs = append(s.reqs, corpusRequest{At: time.Now(), Own: true, Mode: mode, Site: s, Method: r.Method,
		URL: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body})
	page := s.served[mode]
	s.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	vals := corpusValues(r.Method, r.URL.RequestURI(), r.Header.Get("Content-Type"), body)
	next := s.next(vals)
	switch {
	case r.URL.Path == corpusTyped:
		w.WriteHeader(http.StatusNoContent)
	case r.URL.Path == corpusSubmit && r.Method == http.MethodPost:
		w.Header().Set("Content-Type", "application/json")
		if next == "" {
			fmt.Fprint(w, `{"error":"Incorrect username or password."}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"next": next})
	case r.URL.Path == corpusSignedIn:
		htmlPage(w, "Welcome", "", `<h1>Welcome</h1><p>You are signed in.</p>`)
	case r.URL.Path == corpusPassword && r.Method == http.MethodGet:
		htmlPage(w, "Sign in", "", `<h1>Enter your password</h1>
<form method="post" action="`+corpusPassword+`">
 <label>Password <input type="password" name="password" autocomplete="current-password"></label>
 <button type="submit">Sign in</button>
</form>`+fmt.Sprintf(corpusReporter, mode))
	case r.Method == http.MethodPost || next != "":
		if next == "" {
			htmlPage(w, "Sign in", "", `<p role="alert">Incorrect username or password.</p>`)
			return
		}
		http.Redirect(w, r, next, http.StatusSeeOther)
	case r.Method == http.MethodGet && r.URL.EscapedPath() == cmpPath(s.page.Orig.EscapedPath()):
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	default:
		http.NotFound(w, r)
	}
}

func cmpPath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// next is where a submission carrying vals leads: signed in when the password is among them,
// the password step when only the account is, "" (the sign-in failed) when neither is.
func (s *corpusSite) next(vals []corpusValue) string {
	pw, acct := false, false
	for _, v := range vals {
		pw = pw || strings.Contains(v.Value, s.password[:min(len(s.password), 12)])
		acct = acct || strings.Contains(v.Value, s.account[:min(len(s.account), 8)])
	}
	switch {
	case pw:
		return corpusSignedIn
	case acct:
		return corpusPassword
	}
	return ""
}

// corpusValue is one named value a request carried: in its URL's query ("query") or its body
// ("body": a form, multipart, text/plain or JSON body; a body of another kind is one value
// with no key).
type corpusValue struct {
	Where string
	Key   string
	Value string
}

// corpusValues lists the values a request carries.
func corpusValues(method, requestURI, contentType string, body []byte) []corpusValue {
	var out []corpusValue
	if u, err := url.ParseRequestURI(requestURI); err == nil {
		q, _ := url.ParseQuery(u.RawQuery)
		for k, vs := range q {
			for _, v := range vs {
				out = append(out, corpusValue{"query", k, v})
			}
		}
	}
	if len(body) == 0 {
		return out
	}
	mt, params, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/x-www-form-urlencoded":
		q, _ := url.ParseQuery(string(body))
		for k, vs := range q {
			for _, v := range vs {
				out = append(out, corpusValue{"body", k, v})
			}
		}
		return out
	case mt == "multipart/form-data":
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for {
			part, err := mr.NextPart()
			if err != nil {
				break
			}
			v, _ := io.ReadAll(io.LimitReader(part, 1<<20))
			out = append(out, corpusValue{"body", part.FormName(), string(v)})
		}
		return out
	case mt == "text/plain" && method == http.MethodPost && bytes.Contains(body, []byte("=")):
		for _, line := range strings.Split(strings.TrimRight(string(body), "\r\n"), "\r\n") {
			k, v, _ := strings.Cut(line, "=")
			out = append(out, corpusValue{"body", k, v})
		}
		return out
	}
	var j any
	if json.Unmarshal(body, &j) == nil {
		var flat func(key string, v any)
		flat = func(key string, v any) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					flat(k, e)
				}
			case []any:
				for _, e := range x {
					flat(key, e)
				}
			case string:
				out = append(out, corpusValue{"body", key, x})
			default:
				b, _ := json.Marshal(x)
				out = append(out, corpusValue{"body", key, string(b)})
			}
		}
		flat("", j)
		return out
	}
	return append(out, corpusValue{"body", "", string(body)})
}

// corpusStrings makes the page's credential: an account and a password of their own (so
// whatever arrives anywhere names its page), shaped as the page's fields take them, as a
// person's would be (a site's account field that takes 8 characters has shorter accounts): an
// e-mail address where the account field is an e-mail field, digits where it takes digits
// only; both within the fields' maxlength; of different lengths, so the input reporter's
// length tells them apart.
func corpusStrings(p *corpusPage) (account, password string) {
	maxAcct, maxPw := 0, 0
	email, digits, seen := false, false, false
	for _, in := range p.Inputs {
		shorter := func(m int) int {
			if in.MaxLength > 0 && (m == 0 || in.MaxLength < m) {
				return in.MaxLength
			}
			return m
		}
		switch {
		case isAccountLabel(in.Label):
			maxAcct = shorter(maxAcct)
			if !seen {
				seen = true
				email = in.Type == "email" || in.Label == "emailAddress" || strings.Contains(in.Pattern, "@")
				digits = in.Type == "tel" || in.Type == "number" || in.InputMode == "numeric" || digitsOnly(in.Pattern)
			}
		case isPasswordLabel(in.Label) || in.Type == "password":
			maxPw = shorter(maxPw)
		}
	}
	r := strings.ToLower(rand.Text()) // 26 characters of [a-z2-7]
	switch n := 11; {
	case digits:
		if maxAcct > 0 {
			n = max(6, min(n, maxAcct))
		}
		var b strings.Builder
		for _, c := range []byte(rand.Text()[:n-1]) {
			b.WriteByte('0' + c%10)
		}
		account = "9" + b.String()
	case email:
		if maxAcct > 0 {
			n = max(5, min(n, maxAcct-7))
		}
		account = "u" + r[:n] + "@ex.io"
	default:
		if maxAcct > 0 {
			n = max(6, min(n, maxAcct-1))
		}
		account = "u" + r[:n]
	}
	password = newCanary() // "cnry-" + 26 + "-Ü": 33 UTF-16 units
	switch {
	case maxPw > 0 && maxPw < 13:
		// A PIN of a few characters: random letters of its length (at least 4, the shortest
		// the network guard and the echo scan can find).
		password = strings.ToLower(rand.Text())[:max(4, maxPw)]
	case maxPw > 0 && maxPw < 33:
		password = password[:5+max(6, maxPw-7)] + "-Ü"
	}
	if units(password) == units(account) {
		password = password[:5] + password[6:]
	}
	if units(password) == units(account) {
		panic("corpus strings of one length") // unreachable: one character shorter is another length
	}
	return account, password
}

// units is the length of s as a page's script counts it (UTF-16 code units).
func units(s string) int { return len(utf16.Encode([]rune(s))) }

// digitsOnly reports whether a pattern attribute takes digits only.
func digitsOnly(pattern string) bool {
	p := strings.Trim(pattern, "^$")
	for _, d := range []string{`[0-9]`, `\d`} {
		if strings.HasPrefix(p, d) {
			rest := strings.TrimLeft(strings.TrimPrefix(p, d), "*+?{},0123456789")
			return rest == ""
		}
	}
	return false
}

// corpusTypedEvent is one input report of a page.
type corpusTypedEvent struct {
	Mode  string
	Index int // among the document's inputs (-1: not found)
	Len   int
	Name  string
	ID    string
	Type  string
	Label string
	Form  int
}

func typedEvent(req corpusRequest) (corpusTypedEvent, bool) {
	u, err := url.ParseRequestURI(req.URL)
	if err != nil || u.Path != corpusTyped || !req.Own {
		return corpusTypedEvent{}, false
	}
	q := u.Query()
	atoi := func(k string) int { n, _ := strconv.Atoi(q.Get(k)); return n }
	return corpusTypedEvent{Mode: q.Get("m"), Index: atoi("i"), Len: atoi("n"), Name: q.Get("name"), ID: q.Get("id"),
		Type: q.Get("type"), Label: q.Get("label"), Form: atoi("f")}, true
}
