package egress

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

const pw = "Hunter2-canary!x"

func TestCheck(t *testing.T) {
	cred := "http://127.0.0.1:8080"
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:"+pw))
	cases := []struct {
		name   string
		r      Request
		inPage bool
		why    string // "" lets it go
	}{
		{"body to the credential's origin", Request{URL: cred + "/login", Body: []byte("u=alice&p=" + url.QueryEscape(pw))}, true, ""},
		{"JSON body to an origin the person named", Request{URL: "https://www.example.com/api", Body: []byte(`{"p":"` + pw + `"}`)}, true, ""},
		{"Basic header to the credential's origin", Request{URL: cred + "/app.js", Headers: map[string]string{"Authorization": basic}}, false, ""},
		{"nothing of it anywhere", Request{URL: "https://cdn.example.net/x.js?v=3", Headers: map[string]string{"Accept": "*/*"}, Body: []byte("hello")}, true, ""},
		{"in the URL of the credential's origin", Request{URL: cred + "/login?p=" + url.QueryEscape(pw)}, true, "its URL"},
		{"in a path, upper-cased", Request{URL: "https://evil.example/" + strings.ToUpper(pw)}, false, "its URL"},
		{"in a host name", Request{URL: "https://" + strings.ToLower("hunter2-canary") + ".evil.example/"}, false, ""}, // not the whole secret
		{"body to another origin", Request{URL: "https://evil.example/collect", Body: []byte("d=" + base64.StdEncoding.EncodeToString([]byte(pw)))}, false, "its body"},
		{"Basic header to another origin", Request{URL: "https://evil.example/", Headers: map[string]string{"authorization": basic}}, true, "its authorization header"},
		{"cookie to the credential's origin", Request{URL: cred + "/", Headers: map[string]string{"Cookie": "p=" + url.QueryEscape(pw)}}, true, "its Cookie header"},
		{"withheld body to another origin, in page", Request{URL: "https://evil.example/upload", Withheld: true}, true, "a body the browser does not show (taken to carry it)"},
		{"withheld body to another origin, after", Request{URL: "https://evil.example/upload", Withheld: true}, false, ""},
		{"withheld body to the credential's origin", Request{URL: cred + "/upload", Withheld: true}, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var g Guard
			s := g.Add([]byte(pw), "alice", "default", []string{cred, "https://www.example.com"})
			s.SetInPage(c.inPage)
			got := g.Check(c.r)
			switch {
			case c.why == "" && got != nil:
				t.Fatalf("refused (%s, %s), want let go", got.Why, got.Where)
			case c.why != "" && got == nil:
				t.Fatalf("let go, want refused for %s", c.why)
			case got != nil && got.Why != c.why:
				t.Fatalf("why %q, want %q", got.Why, c.why)
			case got != nil && strings.Contains(strings.ToLower(got.Where), strings.ToLower("canary")):
				t.Fatalf("where %q holds the secret", got.Where)
			}
		})
	}
}

func TestWhere(t *testing.T) {
	var g Guard
	g.Add([]byte(pw), "", "s", []string{"https://a.example"})
	for u, want := range map[string]string{
		"https://evil.example/collect?x=1":           "https://evil.example/collect",
		"https://evil.example/" + url.PathEscape(pw): "https://evil.example (a path that holds the secret)",
		"https://" + "hunter2-canary" + "x.evil/":    "https://hunter2-canaryx.evil/",
		"https://Hunter2-canary!x.evil/":             "a host whose name holds the secret",
	} {
		if r := g.Check(Request{URL: u, Body: []byte(pw)}); r == nil || r.Where != want {
			t.Errorf("%s: %+v, want where %q", u, r, want)
		}
	}
}

func TestCodeOnlyInPage(t *testing.T) {
	var g Guard
	s := g.AddCode([]byte("426089"), "s", []string{"https://a.example"})
	r := Request{URL: "https://b.example/?id=14260891"}
	if g.Check(r) == nil {
		t.Fatal("a code in a URL while in the page went")
	}
	s.SetInPage(false)
	if g.Check(r) != nil {
		t.Fatal("a used code's digits refused after the page is gone")
	}
}

func TestBounded(t *testing.T) {
	var g Guard
	for i := 0; i < MaxSecrets+5; i++ {
		g.Add([]byte(pw+string(rune('a'+i%26))+string(rune('a'+i/26))), "", "s", []string{"https://a.example"})
	}
	if len(g.secrets) != MaxSecrets {
		t.Fatalf("%d secrets kept, want %d", len(g.secrets), MaxSecrets)
	}
}

func TestChannelRules(t *testing.T) {
	rules := ChannelRules([]string{"http://127.0.0.1:8080", "https://Example.com:443"})
	var pats []string
	for _, r := range rules {
		pats = append(pats, r["urlPattern"].(string))
	}
	want := []string{"ws://127.0.0.1:8080/*", "wss://example.com/*", "ws://*:*/*", "wss://*:*/*", "http://*:*/*", "https://*:*/*", ""}
	if strings.Join(pats, " ") != strings.Join(want, " ") {
		t.Fatalf("patterns %q, want %q", pats, want)
	}
	if rules[len(rules)-1]["offline"] != true || rules[2]["offline"] != true || rules[0]["offline"] != nil {
		t.Fatalf("offline marks wrong: %v", rules)
	}
}

// BenchmarkCheck1MiB is one request with a 1 MiB form body to another origin, checked for
// four secrets (each secret's Set reads the whole body).
func BenchmarkCheck1MiB(b *testing.B) {
	var g Guard
	for i := 0; i < 4; i++ {
		g.Add([]byte(pw+strings.Repeat("z", i)), "alice", "s", []string{"https://a.example"})
	}
	unit := `q=Search+Terms%20and%2Fmore&t=caf&#233; &amp; co&j={"a":"\u00e9"}&img=iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==&`
	body := []byte(strings.Repeat(unit, (1<<20)/len(unit)+1)[:1<<20])
	r := Request{URL: "https://evil.example/collect?x=1%202", Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Cookie": "a=b%20c"}, Body: body}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if g.Check(r) != nil {
			b.Fatal("refused")
		}
	}
}

// TestEncodedForms: the hostile review's A40 and A42 requests from the sign-in page to another
// origin are refused, in the URL and in the body; to the credential's origin the body goes.
func TestEncodedForms(t *testing.T) {
	const canary = "Zq8CANARYk4t7wPv2x"
	each := func(f string) string {
		var b strings.Builder
		for _, c := range canary {
			b.WriteString(fmt.Sprintf(f, c))
		}
		return b.String()
	}
	forms := map[string]string{
		"btoa(v)":        base64.StdEncoding.EncodeToString([]byte(canary)),
		"btoa('x'+v)":    base64.StdEncoding.EncodeToString([]byte("x" + canary)),
		"btoa('xy'+v)":   base64.StdEncoding.EncodeToString([]byte("xy" + canary)),
		"btoa('u=1&'+v)": base64.StdEncoding.EncodeToString([]byte("u=1&" + canary)),
		"base64url, 'x'": base64.RawURLEncoding.EncodeToString([]byte("x" + canary + "}")),
		"%xx lower":      each("%%%02x"),
		"%XX upper":      each("%%%02X"),
		"&#N;":           each("&#%d;"),
		"&#xH;":          each("&#x%x;"),
		"&#XH":           each("&#X%X"),
		"\\u lower":      each("\\u%04x"),
		"\\u upper":      each("\\u%04X"),
		"alternating":    "zQ8cAnArYk4T7wPv2X",
		"encoded base64": url.QueryEscape(base64.StdEncoding.EncodeToString([]byte("xy" + canary))),
		"in a JSON body": `{"p":"` + each("\\u%04x") + `"}`,
		"mixed per char": "%5a&#113;\\u0038CANARY" + canary[9:],
	}
	for name, e := range forms {
		var g Guard
		g.Add([]byte(canary), "alice", "s", []string{"https://a.example"})
		if r := g.Check(Request{URL: "https://evil.example/c/" + e}); r == nil || r.Why != "its URL" {
			t.Errorf("%s in a URL: %+v", name, r)
		}
		if r := g.Check(Request{URL: "https://evil.example/c", Body: []byte("d=" + e)}); r == nil || r.Why != "its body" {
			t.Errorf("%s in a body: %+v", name, r)
		}
		if r := g.Check(Request{URL: "https://evil.example/c", Headers: map[string]string{"Cookie": "d=" + e}}); r == nil || r.Why != "its Cookie header" {
			t.Errorf("%s in a cookie: %+v", name, r)
		}
		if r := g.Check(Request{URL: "https://a.example/login", Body: []byte("d=" + e)}); r != nil {
			t.Errorf("%s in a body to the credential's origin: refused (%s)", name, r.Why)
		}
	}
	var g Guard
	g.Add([]byte(canary), "alice", "s", []string{"https://a.example"})
	for _, e := range []string{"Zq8CANARYk4t7wPv2", each("%%%02x")[3:], base64.StdEncoding.EncodeToString([]byte("x" + canary[:10])), "q=Zq8CANARY&r=k4t7wPv2x"} {
		if r := g.Check(Request{URL: "https://evil.example/c?" + e, Body: []byte(e)}); r != nil {
			t.Errorf("%q refused (%s): not the whole secret", e, r.Why)
		}
	}
}

// TestMayHaveLeft: only a request let go to an allowed origin that could carry the secret (a
// body, shown or withheld, an Authorization header, a method other than GET or HEAD), while it
// is in the page, to any origin, says it may have left; a GET, an empty POST, or one after
// the page is gone does not.
func TestMayHaveLeft(t *testing.T) {
	cred := "http://127.0.0.1:8080"
	for _, c := range []struct {
		name   string
		r      Request
		inPage bool
		left   bool
	}{
		{"a GET of the credential's origin", Request{Method: "GET", URL: cred + "/app.js"}, true, false},
		{"a HEAD", Request{Method: "HEAD", URL: cred + "/"}, true, false},
		{"a POST elsewhere with a body", Request{Method: "POST", URL: "https://cdn.example.net/beacon", Body: []byte("x=1")}, true, true},
		{"a GET elsewhere with a query", Request{Method: "GET", URL: "https://cdn.example.net/p.gif?v=1"}, true, false},
		{"a PUT without a body", Request{Method: "PUT", URL: cred + "/session"}, true, true},
		{"a GET with a script's header", Request{Method: "GET", URL: cred + "/api", Headers: map[string]string{"X-Token": "5f3a"}}, true, true},
		{"a POST with the password", Request{Method: "POST", URL: cred + "/login", Body: []byte("p=" + url.QueryEscape(pw))}, true, true},
		{"a POST with it encrypted", Request{Method: "POST", URL: cred + "/login", Body: []byte("blob=5f3a9c")}, true, true},
		{"a body withheld", Request{Method: "POST", URL: cred + "/upload", Withheld: true}, true, true},
		{"an empty beacon", Request{Method: "POST", URL: cred + "/__corpus/typed?n=8"}, true, false},
		{"a GET with an Authorization header", Request{Method: "GET", URL: cred + "/api", Headers: map[string]string{"authorization": "Bearer x"}}, true, true},
		{"a POST after the page is gone", Request{Method: "POST", URL: cred + "/login", Body: []byte("x")}, false, false},
	} {
		var g Guard
		s := g.Add([]byte(pw), "alice", "default", []string{cred})
		s.SetInPage(c.inPage)
		if r := g.Check(c.r); r != nil {
			t.Fatalf("%s: refused: %+v", c.name, r)
		}
		if s.MayHaveLeft() != c.left {
			t.Errorf("%s: MayHaveLeft = %v; want %v", c.name, s.MayHaveLeft(), c.left)
		}
	}
}
