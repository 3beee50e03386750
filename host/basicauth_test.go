package host

import "testing"

// TestOfferable: only a server's Basic challenge from the origin of the request it answers is
// ever offered (and so answerable); a proxy's challenge (source "Proxy", a 407 of an HTTP
// proxy or a CONNECT tunnel) never is, whatever its scheme or origin.
func TestOfferable(t *testing.T) {
	for _, tc := range []struct {
		source, scheme, url, origin string
		want                        string
	}{
		{"Server", "Basic", "http://127.0.0.1:8080/x?y", "http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"Server", "basic", "https://a.test/", "https://a.test", "https://a.test"},
		{"Proxy", "Basic", "http://127.0.0.1:8080/x", "http://127.0.0.1:8080", ""},
		{"Proxy", "Basic", "https://a.test/x", "https://proxy.test:3128", ""},
		{"proxy", "Basic", "https://a.test/x", "https://a.test", ""},
		{"", "Basic", "https://a.test/x", "https://a.test", ""},
		{"Server", "Digest", "https://a.test/x", "https://a.test", ""},
		{"Server", "NTLM", "https://a.test/x", "https://a.test", ""},
		{"Server", "Basic", "https://a.test/x", "https://b.test", ""},
		{"Server", "Basic", "https://a.test/x", "https://a.test:444", ""},
		{"Server", "Basic", "data:text/html,x", "https://a.test", ""},
	} {
		got, ok := offerable(tc.source, tc.scheme, tc.url, tc.origin)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("offerable(%q, %q, %q, %q) = %q, %v; want %q", tc.source, tc.scheme, tc.url, tc.origin, got, ok, tc.want)
		}
	}
}
