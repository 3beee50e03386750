package config

import (
	"errors"
	"slices"
	"testing"
)

func TestParseAllow(t *testing.T) {
	c, err := Parse([]byte(`{"allow":["B.test","*.a.test:8443","b.test"]}`))
	if err != nil || !slices.Equal(c.Allow, []string{"*.a.test:8443", "b.test"}) {
		t.Fatalf("allow = %v, %v; want the canonical list", c.Allow, err)
	}
	for _, bad := range []string{`{"allow":[]}`, `{"allow":["*"]}`, `{"allow":"a.test"}`, `{"allow":[1]}`, `{"allow":["https://a.test"]}`} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%s) = %v; want ErrInvalid", bad, err)
		}
	}
	// null is the key left out: no allowlist.
	if c, err := Parse([]byte(`{"allow":null}`)); err != nil || c.Allow != nil {
		t.Fatalf("allow null = %v, %v; want no allowlist", c.Allow, err)
	}
}
