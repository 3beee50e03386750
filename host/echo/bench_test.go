package echo

import (
	"strings"
	"testing"
)

// benchSet is a Set as a host holds it after a few sign-ins: passwords with an account each,
// and their one-time codes.
func benchSet() *Set {
	s := New()
	for i := 0; i < 8; i++ {
		s.Add([]byte("Zq8CANARYk4t7wPv2x-"+strings.Repeat("y", i)), "alice@example.test")
		s.AddCode([]byte("42608" + string(rune('0'+i))))
	}
	return s
}

// A request body of 1 MiB as the way-out guard reads it: form fields with percent-escapes,
// an entity-escaped fragment, JSON escapes and a base64 blob (every decoder of the scan runs).
func BenchmarkBody1MiB(b *testing.B) {
	s := benchSet()
	unit := `q=Search+Terms%20and%2Fmore&html=%26lt%3Bb%26gt%3B&t=caf&#233; &amp; co&j={"a":"\u00e9\n\"x\""}&img=iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==&`
	body := []byte(strings.Repeat(unit, (1<<20)/len(unit)+1)[:1<<20])
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.Match(body) {
			b.Fatal("matched")
		}
	}
}

// A snapshot's text of 64 KiB, scanned as the host's JSON answer and as the page's strings.
func BenchmarkSnapshot64K(b *testing.B) {
	s := benchSet()
	unit := `{"ref":"e12","kind":"link","text":"Read the docs \u0026 more \u003chere\u003e — Café Menu"},`
	page := []byte(strings.Repeat(unit, (64<<10)/len(unit)+1)[:64<<10])
	b.SetBytes(int64(len(page)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.MatchJSON(page) || s.Match(page) {
			b.Fatal("matched")
		}
	}
}
