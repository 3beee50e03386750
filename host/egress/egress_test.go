package egress

import (
	"encoding/base64"
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
