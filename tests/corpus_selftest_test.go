//go:build linux

package tests

// The corpus test's own checks (TestCorpusSignIn is only as good as its judge and its live
// script): the judgement, case by case, on requests made up here (no browser), and the live
// script in real Chromium, driven by the agent's plain verbs (fill, click, press), on layouts
// the corpus has: a form with a button that submits nothing, fields outside any form, a
// disabled button, Enter in a field.

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/test/realtest"
)

// judgePage is a sign-in page with a forgot-password form and a search box that shares the
// account field's name.
const judgePage = `<!-- https://www.example.com/login -->
<form action="/session" method="post">
 <input name="user" data-manual-scoring="username">
 <input type="password" name="pw" data-manual-scoring="password">
 <button data-manual-submit>Sign in</button>
</form>
<form action="/forgot" method="post"><input name="email" data-manual-scoring="emailAddress"><button>Reset</button></form>
<form action="/search" method="get"><input name="user" data-manual-scoring="unknown"><input name="q"></form>`

func TestCorpusJudge(t *testing.T) {
	parallel(t)
	const acct, pw = "ujudge12345", "cnry-JUDGEJUDGEJUDGE-Ü"
	page := func(t *testing.T, file, src string) *corpusSite {
		p, err := parseCorpusPage(file, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return &corpusSite{page: p, account: acct, password: pw}
	}
	form := func(path string, kv ...string) corpusRequest {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return corpusRequest{Own: true, Method: http.MethodPost, URL: path, Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, Body: []byte(v.Encode())}
	}
	ok := result{code: 0, stdout: `{"status":"authenticated"}`}
	refused := result{code: 1, stdout: `{"error":{"code":"NO_LOGIN_FORM","message":"no login form in this page","hint":"h"}}`}
	typed := func(i, n int, label string, form int) corpusRequest {
		return corpusRequest{Own: true, Method: http.MethodPost, URL: corpusTyped + "?m=captured&i=" + itoa(i) + "&n=" + itoa(n) + "&label=" + url.QueryEscape(label) + "&f=" + itoa(form), Header: http.Header{}}
	}
	signIn := form("/session", "user", acct, "pw", pw)
	for _, c := range []struct {
		name    string
		file    string
		src     string
		login   result
		offered bool
		reqs    []corpusRequest
		outcome string
		defects []string
	}{
		{"signed in", "x_login.html", judgePage, ok, true, []corpusRequest{typed(0, units(acct), "username", 0), typed(1, units(pw), "password", 0), signIn}, outSignedIn, nil},
		{"refused before typing", "x_login.html", judgePage, refused, false, nil, outRefusedBefore, nil},
		{"refused after typing", "x_login.html", judgePage, refused, false, []corpusRequest{typed(0, units(acct), "username", 0)}, outRefusedAfter, nil},
		{"no code", "x_login.html", judgePage, result{code: 1, stdout: "panic"}, false, nil, outNoCode, nil},
		{"account only", "x_login.html", judgePage, ok, true, []corpusRequest{form("/session", "user", acct, "pw", "")}, outNotSignedIn, nil},
		{"password only, account field left", "x_login.html", judgePage, ok, true, []corpusRequest{form("/session", "user", "", "pw", pw)}, outNotSignedIn, nil},
		{"account to the forgot-password form", "x_login.html", judgePage, ok, true, []corpusRequest{form("/forgot", "email", acct)}, outNotSignedIn, []string{defAccountNotSignIn}},
		{"the search box's name is the account field's", "x_login.html", judgePage, ok, true,
			[]corpusRequest{{Own: true, Method: http.MethodGet, URL: "/search?user=" + acct + "&q=", Header: http.Header{}}}, outNotSignedIn, []string{defAccountNotSignIn}},
		{"password in a URL", "x_login.html", judgePage, ok, true,
			[]corpusRequest{{Own: true, Method: http.MethodGet, URL: "/session?user=" + acct + "&pw=" + url.QueryEscape(pw), Header: http.Header{}}}, outNotSignedIn, []string{defPasswordURL}},
		{"password in a Referer", "x_login.html", judgePage, ok, true,
			[]corpusRequest{signIn, {Own: true, Method: http.MethodGet, URL: "/app.css", Header: http.Header{"Referer": {"http://127.0.0.1/x?p=" + url.QueryEscape(pw)}}}}, outNotSignedIn, []string{defPasswordURL}},
		{"password in the account field", "x_login.html", judgePage, ok, true, []corpusRequest{form("/session", "user", pw, "pw", acct)}, outNotSignedIn, []string{defPasswordField}},
		{"password typed into the search box", "x_login.html", judgePage, refused, false, []corpusRequest{typed(3, units(pw), "unknown", 2)}, outRefusedAfter, []string{defPasswordField}},
		{"password base64 in a JSON body", "x_login.html", judgePage, ok, true,
			[]corpusRequest{signIn, {Own: true, Method: http.MethodPost, URL: "/track", Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"d":"` + b64(pw) + `"}`)}}, outNotSignedIn, []string{defPasswordField}},
		{"password to another origin", "x_login.html", judgePage, ok, true,
			[]corpusRequest{{Method: http.MethodPost, URL: "/www.other.example/collect", Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("pw=" + pw)}}, outNotSignedIn, []string{defPasswordOrigin, defPasswordField}},
		{"password in an Authorization header", "x_login.html", judgePage, ok, true,
			[]corpusRequest{signIn, {Own: true, Method: http.MethodGet, URL: "/api", Header: http.Header{"Authorization": {"Basic " + b64(acct+":"+pw)}}}}, outNotSignedIn, []string{defPasswordHeader}},
		{"password in headless's output", "x_login.html", judgePage, result{code: 0, stdout: `{"status":"authenticated","x":"` + pw + `"}`}, true, []corpusRequest{signIn}, outNotSignedIn, []string{defPasswordOutput}},
		{"live submission", "x_login.html", judgePage, ok, true,
			[]corpusRequest{{Own: true, Method: http.MethodPost, URL: corpusSubmit + "?i=0,1", Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"user":"` + acct + `","pw":"` + pw + `"}`)}}, outSignedIn, nil},
		{"live submission naming the search box", "x_login.html", judgePage, ok, true,
			[]corpusRequest{{Own: true, Method: http.MethodPost, URL: corpusSubmit + "?i=3,1", Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"user":"` + acct + `","pw":"` + pw + `"}`)}}, outNotSignedIn, []string{defAccountNotSignIn}},
		{"first step, then the password step", "y_login.html", `<form action="/id" method="post"><input type="email" name="login" data-manual-scoring="emailAddress"><button data-manual-submit>Next</button></form>`, ok, true,
			[]corpusRequest{form("/id", "login", acct), form(corpusPassword, "password", pw)}, outSignedIn, nil},
		{"first step skipped", "y_login.html", `<form action="/id" method="post"><input type="email" name="login" data-manual-scoring="emailAddress"><button data-manual-submit>Next</button></form>`, ok, true,
			[]corpusRequest{form(corpusPassword, "password", pw)}, outNotSignedIn, nil},
		{"a password step showing the account disabled", "z_login.html", `<form action="/s" method="post"><input name="user" disabled value="them@example.com" data-manual-scoring="username"><input type="password" name="pw" data-manual-scoring="password.current"><button data-manual-submit>Sign in</button></form>`, ok, true,
			[]corpusRequest{typed(1, units(pw), "password.current", 0), form("/s", "pw", pw)}, outSignedIn, nil},
		{"a password step's account field that takes typing, left empty", "z_login.html", `<form action="/s" method="post"><input name="user" data-manual-scoring="username"><input type="password" name="pw" data-manual-scoring="password.current"><button data-manual-submit>Sign in</button></form>`, ok, true,
			[]corpusRequest{typed(1, units(pw), "password.current", 0), form("/s", "user", "", "pw", pw)}, outNotSignedIn, nil},
		{"a form the parser moved out of its table", "t_login.html", `<table><form name="f" method="post" action="/s"><tr><td><input name="user" data-manual-scoring="username"></td></tr><tr><td><input type="password" name="pw" data-manual-scoring="password"></td></tr><tr><td><input type="submit" value="Login" data-manual-submit></td></tr></form></table>`, ok, true,
			// The browser's form owner (f=0), not the markup's tree (outside any form).
			[]corpusRequest{typed(0, units(acct), "username", 0), typed(1, units(pw), "password", 0), form("/s", "user", acct, "pw", pw)}, outSignedIn, nil},
		{"a sign-up page offered", "x_signup.html", `<form method="post"><input name="e" data-manual-scoring="emailAddress"><input type="password" name="p" data-manual-scoring="password.new"></form>`, refused, true,
			nil, outRefusedBefore, []string{defOffered}},
		{"a sign-up page typed into", "x_signup.html", `<form method="post"><input name="e" data-manual-scoring="emailAddress"><input type="password" name="p" data-manual-scoring="password.new"></form>`, ok, false,
			[]corpusRequest{form("/x_signup", "e", acct, "p", pw)}, outNotSignedIn, []string{defAccountNotSignIn, defTyped, defPasswordField}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := page(t, c.file, c.src)
			for i := range c.reqs {
				c.reqs[i].Site, c.reqs[i].Mode = s, modeCaptured
			}
			got := corpusJudge(&corpusRun{Site: s, Mode: modeCaptured, Visit: result{stdout: "{}"}, Login: c.login, Offered: c.offered, Reqs: c.reqs})
			want := slices.Sorted(slices.Values(c.defects))
			if got.Outcome != c.outcome || !slices.Equal(got.Defects, append([]string{}, want...)) {
				b, _ := json.MarshalIndent(got, "", " ")
				t.Errorf("outcome %s defects %v, want %s %v\n%s", got.Outcome, got.Defects, c.outcome, want, b)
			}
		})
	}
	// A sign-in posted to the rest of the site (the page's sibling origin): at the credential's
	// origins when the person named it at enrolment, at another origin when not.
	sib := func(path string, kv ...string) corpusRequest {
		r := form(path, kv...)
		r.Own, r.Sibling = false, true
		return r
	}
	for _, c := range []struct {
		name    string
		named   bool
		reqs    []corpusRequest
		outcome string
		defects []string
	}{
		{"signed in at the sibling the person named", true,
			[]corpusRequest{typed(0, units(acct), "username", 0), typed(1, units(pw), "password", 0), sib("/session", "user", acct, "pw", pw)}, outSignedIn, nil},
		{"at a sibling nobody named", false, []corpusRequest{sib("/session", "user", acct, "pw", pw)}, outNotSignedIn, []string{defPasswordOrigin, defPasswordField}},
		{"at the named sibling, in the wrong fields", true, []corpusRequest{sib("/session", "user", pw, "pw", acct)}, outNotSignedIn, []string{defPasswordField}},
		{"the named sibling, and another site", true,
			[]corpusRequest{sib("/session", "user", acct, "pw", pw), {Method: http.MethodPost, URL: "/www.other.example/collect", Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("pw=" + pw)}},
			outNotSignedIn, []string{defPasswordOrigin, defPasswordField}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := page(t, "x_login.html", judgePage)
			s.namesSibling = c.named
			for i := range c.reqs {
				c.reqs[i].Site, c.reqs[i].Mode = s, modeCaptured
			}
			got := corpusJudge(&corpusRun{Site: s, Mode: modeCaptured, Visit: result{stdout: "{}"}, Login: ok, Offered: true, Reqs: c.reqs})
			want := slices.Sorted(slices.Values(c.defects))
			if got.Outcome != c.outcome || !slices.Equal(got.Defects, append([]string{}, want...)) || got.RequestsSibling != 1 {
				b, _ := json.MarshalIndent(got, "", " ")
				t.Errorf("outcome %s defects %v, want %s %v\n%s", got.Outcome, got.Defects, c.outcome, want, b)
			}
		})
	}
}

// TestCorpusSibling checks the rewriter's sibling rule, without a browser: another host under
// the page's registrable domain goes to the page's sibling origin, path and query kept; the
// page's own host on another scheme, another site, a host under a public suffix of its own
// (github.io) and an IP address go elsewhere. A page's sign-in form posting to a sibling (its
// action, or a control's formaction) is what the person names; a link, or another form, is not.
func TestCorpusSibling(t *testing.T) {
	parallel(t)
	const own, sibling, elsewhere = "http://127.0.0.1:1", "http://127.0.0.1:3", "http://127.0.0.1:2"
	rw := func(page string) corpusRewriter {
		u, err := url.Parse(page)
		if err != nil {
			t.Fatal(err)
		}
		return corpusRewriter{page: u, own: own, sibling: sibling, elsewhere: elsewhere}
	}
	for _, c := range []struct{ page, raw, want string }{
		{"https://signin.ebay.com/ws/x?y", "https://www.ebay.com/signin/s?a=1", sibling + "/signin/s?a=1"},
		{"https://signin.ebay.com/ws/x?y", "//static.ebay.com/a.js", sibling + "/a.js"},
		{"https://signin.ebay.com/ws/x?y", "https://EBAY.com", sibling + "/"},
		{"https://signin.ebay.com/ws/x?y", "https://signin.ebay.com/p", own + "/p"},
		{"https://signin.ebay.com/ws/x?y", "http://signin.ebay.com/p", elsewhere + "/signin.ebay.com/p"},
		{"https://signin.ebay.com/ws/x?y", "https://www.ebay.co.uk/", elsewhere + "/www.ebay.co.uk/"},
		{"https://www.bbc.co.uk/login", "https://www.other.co.uk/", elsewhere + "/www.other.co.uk/"},
		{"https://www.bbc.co.uk/login", "https://account.bbc.co.uk:443/in", sibling + "/in"},
		{"https://a.github.io/login", "https://b.github.io/x", elsewhere + "/b.github.io/x"},
		{"https://10.0.0.1/login", "https://10.0.0.2/x", elsewhere + "/10.0.0.2/x"},
	} {
		if got := rw(c.page).local(c.raw); got != c.want {
			t.Errorf("on %s, %s → %s, want %s", c.page, c.raw, got, c.want)
		}
	}
	for _, c := range []struct {
		src  string
		want bool
	}{
		{`<form action="https://www.ebay.com/signin/s" method="post"><input type="password" name="p" data-manual-scoring="password"></form>`, true},
		{`<form action="/in"><input type="password" name="p" data-manual-scoring="password"><button formaction="//auth.ebay.com/x">Go</button></form>`, true},
		{`<form id="f" action="/in"><input type="password" name="p" data-manual-scoring="password"></form><button form="f" formaction="https://auth.ebay.com/x">Go</button>`, true},
		{`<a href="https://www.ebay.com/">Home</a><form action="/in"><input type="password" name="p" data-manual-scoring="password"></form>`, false},
		{`<form action="https://www.ebay.com/search"><input name="q"></form><form action="/in"><input type="password" name="p" data-manual-scoring="password"></form>`, false},
		{`<form action="https://login.other.example/in"><input type="password" name="p" data-manual-scoring="password"></form>`, false},
	} {
		p, err := parseCorpusPage("x_login.html", []byte("<!-- https://signin.ebay.com/ws/x -->\n"+c.src))
		if err != nil {
			t.Fatal(err)
		}
		if p.SiblingSignIn != c.want {
			t.Errorf("%s: the sign-in posts to a sibling: %v, want %v", c.src, p.SiblingSignIn, c.want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestCorpusLiveScript runs the live script in real Chromium on layouts of the corpus, driven
// by the agent's verbs (fill, click, press): what it sends, where it goes.
func TestCorpusLiveScript(t *testing.T) {
	parallel(t)
	realtest.Need(t)
	e := newEnv(t, envOptions{})
	e.start(t)
	el := newCorpusElsewhere(t)
	const acct, secret = "ulive0001", "s3cret-value"
	for _, c := range []struct {
		name string
		src  string
		fill []string // the text fields (name, id or placeholder), filled with acct then secret
		act  string   // click NAME (a control's visible text) or enter NAME (a field)
		want map[string]string
	}{
		{"a form whose marked button submits nothing", `<form action="https://www.example.com/x" method="get"><input name="u"><input name="k"><button type="button" data-manual-submit>Sign in</button></form><form><input name="news"><button>Subscribe</button></form>`,
			[]string{"u", "k"}, "click Sign in", map[string]string{"u": acct, "k": secret}},
		{"fields outside any form, a marked link", `<div><div><input name="u"></div><div><input id="k"></div><p><a href="https://www.example.com/y" data-manual-submit>Continue</a></p></div>`,
			[]string{"u", "k"}, "click Continue", map[string]string{"u": acct, "k": secret}},
		{"two regions, no mark", `<div><input name="u"><input name="k"><button>Log in</button></div><div><input name="news"><button>Subscribe</button></div>`,
			[]string{"u", "k"}, "click Log in", map[string]string{"u": acct, "k": secret}},
		{"a disabled button the fields enable", `<form method="post" action="/s"><input name="u"><input name="k"><button type="submit" disabled>Sign in</button></form>`,
			[]string{"u", "k"}, "click Sign in", map[string]string{"u": acct, "k": secret}},
		{"a field with neither name nor id", `<div><input name="u"><input placeholder="Secret"><button>Sign in</button></div>`,
			[]string{"u", "Secret"}, "click Sign in", map[string]string{"u": acct, "#1": secret}},
		{"Enter in a field outside any form", `<section><input name="u"><input name="k"><span role="button">Go</span></section>`,
			[]string{"u", "k"}, "enter k", map[string]string{"u": acct, "k": secret}},
		{"a control right beside another, no form (caliente's)", `<div><div><input name="u"><input name="k"><input type="submit" value="Log in"><button>Register</button></div></div><div><input name="news"><button>Subscribe</button></div>`,
			[]string{"u", "k"}, "click Log in", map[string]string{"u": acct, "k": secret}},
		{"a form the parser closed before its table's fields (combats')", `<table><form action="/enter" method="post"></form><tr><td><input name="u"></td></tr><tr><td><input name="k"></td></tr><tr><td><input type="submit" value="Sign In"></td><td><input type="button" value="Register"></td></tr></table>`,
			[]string{"u", "k"}, "click Sign In", map[string]string{"u": acct, "k": secret}},
		{"a text input styled as a button beside the submit (ettoday's)", `<table><form action="/do" method="post"></form><tr><td><input name="u"></td></tr><tr><td><input name="k"></td></tr><tr><td><input type="submit" value="Send" role="button"><input name="clear" value="Clear cookie" role="button"></td></tr></table>`,
			[]string{"u", "k"}, "click Send", map[string]string{"u": acct, "k": secret}},
		{"a form's sign-in made of a div with an onclick (avangard's)", `<form method="post" action="/after" onsubmit="return false"><input name="u"><input name="k"><div class="btn" onclick="LoginSubmit()">Enter</div><input type="image" width="1" height="1" alt=""></form>`,
			[]string{"u", "k"}, "click Enter", map[string]string{"u": acct, "k": secret}},
		{"a first step's disabled <input type=button> (hindustantimes')", `<div id="signInSignUp"><div class="inpSec"><div class="label">Email or mobile number<span class="errorBox">Please fill out this field*</span></div><div class="inpHolder"><input type="text" id="lmSsoinput" value="" required="" onclick="" oninput="" onkeyup="showFlag(this);"><div id="phone" type="tel"></div></div></div><div class="alignC"><input type="button" id="btSubmit" disabled="" value="Continue"></div><div><a href="javascript:void(0);" onclick="clickGoogle();">Google </a></div><div><a href="javascript:void(0);" onclick="x()">Facebook</a></div></div>`,
			[]string{"lmSsoinput"}, "click Continue", map[string]string{"lmSsoinput": acct}},
		{"fields a form takes by form= (another form's fields left out)", `<form id="f" method="post" action="/s"></form><div><input name="u" form="f"><input name="k" form="f"><button form="f">Sign in</button></div><form><input name="news"><button>Subscribe</button></form>`,
			[]string{"u", "k"}, "click Sign in", map[string]string{"u": acct, "k": secret}},
		{"a disabled button outside the fields' region (masterhost's)", `<div><div><input name="u"></div><div><input name="k"><button type="button">Remind me</button></div><div><button type="button" disabled>Sign in</button><button type="button">Certificate</button></div></div>`,
			[]string{"u", "k"}, "click Sign in", map[string]string{"u": acct, "k": secret}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := parseCorpusPage("live_login.html", []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			s := newCorpusSite(t, p, el)
			s.account, s.password = acct, secret
			s.setMode(modeLive)
			lsVisit(t, e, s.URL())
			var o struct {
				Elements []struct{ Ref, Name, ID, Text, Placeholder string }
			}
			e.ok(t, &o, "snapshot")
			ref := func(name string) string {
				for _, el := range o.Elements {
					if el.Name == name || el.ID == name || el.Text == name || el.Placeholder == name {
						return el.Ref
					}
				}
				t.Fatalf("no element %q in %+v", name, o.Elements)
				return ""
			}
			for i, f := range c.fill {
				e.ok(t, nil, "fill", ref(f), "--", []string{acct, secret}[i])
			}
			verb, what, _ := strings.Cut(c.act, " ")
			if verb == "click" {
				e.ok(t, nil, "click", ref(what))
			} else {
				e.ok(t, nil, "press", "Enter", "--ref", ref(what))
			}
			next := corpusPassword // a first step's submission (the account alone) leads there
			for _, v := range c.want {
				if v == secret {
					next = corpusSignedIn
				}
			}
			e.ok(t, nil, "wait", "--url", next, "--timeout", "10s")
			var sent []corpusRequest
			for _, r := range s.requests() {
				if strings.HasPrefix(r.URL, corpusSubmit) {
					sent = append(sent, r)
				}
			}
			if len(sent) != 1 {
				t.Fatalf("%d submissions: %+v", len(sent), sent)
			}
			var got map[string]string
			if err := json.Unmarshal(sent[0].Body, &got); err != nil {
				t.Fatalf("the submission %q: %v", sent[0].Body, err)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("the submission %v: %s is %q, want %q", got, k, got[k], v)
				}
				vals := corpusValues(http.MethodPost, sent[0].URL, "application/json", sent[0].Body)
				if in, _ := resolveField(p, sent[0], vals, k); in == nil || cmpName(in) != k {
					t.Errorf("the submission's indexes (%s) do not name field %s: %+v", sent[0].URL, k, in)
				}
			}
			if _, ok := got["news"]; ok {
				t.Errorf("the submission took another region's field: %v", got)
			}
		})
	}
}

// cmpName is the key the live script sends an input's value under.
func cmpName(in *corpusInput) string {
	return cmp.Or(in.Name, in.ID, "#"+strconv.Itoa(in.Index))
}

// TestCorpusPageURL: the page's own URL is read from its leading comment, on one line or
// opening a comment of several (212 of the corpus's files: the URL, then rank and test ids);
// a page without one gets the host most of its links name.
func TestCorpusPageURL(t *testing.T) {
	for _, c := range []struct {
		src, want string
		known     bool
	}{
		{"<!-- https://www.example.com/login -->\n<form></form>", "https://www.example.com/login", true},
		{"<!--\n  https://identity.directv.com/login/\n  rank: 5551\n  testRunId: 67\n-->\n<form></form>", "https://identity.directv.com/login/", true},
		{"<!--\n  https://accounts.example.com/?type=plain&cta=Home Login\n  rank: 1467\n-->", "https://accounts.example.com/?type=plain&cta=Home", true},
		{"<!-- https://www.example.com/s/e/ (must be connecting from an ip in the US) -->\n<form></form>", "https://www.example.com/s/e/", true},
		{"<!-- The markup is broken -->\n<a href=\"https://www.example.org/a\">a</a>", "https://www.example.org/x_login", false},
	} {
		p, err := parseCorpusPage("x_login.html", []byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		if p.Orig.String() != c.want || p.URLKnown != c.known {
			t.Errorf("%q: the page's URL %q (known %v), want %q (%v)", c.src, p.Orig, p.URLKnown, c.want, c.known)
		}
	}
}
