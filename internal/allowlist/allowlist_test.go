package allowlist

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string // nil: refused
	}{
		{[]string{"Example.COM"}, []string{"example.com"}},
		{[]string{"b.test,a.test", "a.test"}, []string{"a.test", "b.test"}},
		{[]string{"*.example.com:8443"}, []string{"*.example.com:8443"}},
		{[]string{"127.0.0.1:8080", "[::1]", "[0:0::1]:9"}, []string{"127.0.0.1:8080", "[::1]", "[::1]:9"}},
		{[]string{"localhost"}, []string{"localhost"}},
		{[]string{"xn--bcher-kva.example"}, []string{"xn--bcher-kva.example"}},
		{[]string{"*"}, nil},
		{[]string{"*."}, nil},
		{[]string{"a.*.com"}, nil},
		{[]string{"https://example.com"}, nil},
		{[]string{"example.com/login"}, nil},
		{[]string{"user@example.com"}, nil},
		{[]string{"bücher.example"}, nil},
		{[]string{""}, nil},
		{[]string{"a.test,"}, nil},
		{[]string{"example.com:0"}, nil},
		{[]string{"example.com:65536"}, nil},
		{[]string{"example.com:08"}, nil},
		{[]string{"example.com:"}, nil},
		{[]string{"::1"}, nil},
		{[]string{"*.127.0.0.1"}, nil},
		{[]string{"-a.test"}, nil},
		{[]string{"a..test"}, nil},
		{[]string{"a.test."}, nil},
		{[]string{"1.2.3.999"}, nil},
		{[]string{"a b.test"}, nil},
		{[]string{"[::1"}, nil},
		{[]string{"[127.0.0.1]"}, nil},
		{[]string{strings.Repeat("a", 64) + ".test"}, nil},
	} {
		l, err := Parse(tc.in)
		if tc.want == nil {
			if err == nil || !errors.Is(err, ErrInvalid) {
				t.Errorf("Parse(%q) = %v, %v; want refused", tc.in, l.Strings(), err)
			}
			continue
		}
		if err != nil || !slices.Equal(l.Strings(), tc.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, l.Strings(), err, tc.want)
		}
	}
	var many []string
	for i := 0; i < Max+1; i++ {
		many = append(many, "h"+strings.Repeat("x", i)+".test")
	}
	if _, err := Parse(many[:Max]); err != nil {
		t.Errorf("%d entries refused: %v", Max, err)
	}
	if _, err := Parse(many); err == nil {
		t.Errorf("%d entries accepted", Max+1)
	}
}

func TestAllows(t *testing.T) {
	l, err := Parse([]string{"example.com", "*.corp.test", "127.0.0.1:8080", "[::1]", "secure.test:443"})
	if err != nil {
		t.Fatal(err)
	}
	for u, want := range map[string]bool{
		"https://example.com/x?y":       true,
		"http://EXAMPLE.com:9999/":      true, // no port in the entry: any port
		"https://www.example.com/":      false,
		"https://a.corp.test/":          true,
		"https://a.b.corp.test:1/":      true,
		"https://corp.test/":            false, // *. is subdomains only
		"https://evilcorp.test/":        false,
		"http://127.0.0.1:8080/":        true,
		"http://127.0.0.1:8081/":        false,
		"http://127.0.0.1/":             false,
		"http://[::1]:3000/":            true,
		"https://secure.test/":          true,
		"http://secure.test/":           false, // port 80
		"ftp://example.com/":            false,
		"data:text/html,hi":             false,
		"https://example.com.evil.test": false,
	} {
		pu, _ := url.Parse(u)
		if got := l.Allows(pu); got != want {
			t.Errorf("Allows(%s) = %v, want %v", u, got, want)
		}
	}
	if !(List{}).Allows(&url.URL{Scheme: "https", Host: "any.test"}) {
		t.Error("the empty list refuses")
	}
}

func TestCovers(t *testing.T) {
	ceiling, _ := Parse([]string{"*.corp.test", "example.com", "127.0.0.1:8080"})
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"a.corp.test", true},
		{"*.a.corp.test", true},
		{"*.corp.test", true},
		{"corp.test", false},
		{"example.com:443", true},
		{"example.com", true},
		{"127.0.0.1:8080", true},
		{"127.0.0.1", false},
		{"evil.test", false},
	} {
		o, err := Parse([]string{tc.in})
		if err != nil {
			t.Fatal(err)
		}
		if got := ceiling.Covers(o); got != tc.want {
			t.Errorf("Covers(%s) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if ceiling.Covers(List{}) || !(List{}).Covers(ceiling) {
		t.Error("empty lists")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"example.com", "*.a.test:8080", "[::1]:1", "a,b", "*", "https://x", "bü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse([]string{s})
		if err != nil {
			return
		}
		// Canonical and stable: what it prints parses to the same list.
		again, err := Parse(l.Strings())
		if err != nil || !again.Equal(l) {
			t.Fatalf("%q → %v → %v, %v", s, l.Strings(), again.Strings(), err)
		}
		for _, e := range l.Strings() {
			if e == "*" || strings.ContainsAny(e, "/@ ") {
				t.Fatalf("%q accepted as %q", s, e)
			}
		}
		if !l.Covers(l) {
			t.Fatalf("%v does not cover itself", l.Strings())
		}
	})
}
