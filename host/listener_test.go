package host

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/headless-dev/headless/internal/loopback"
	"github.com/headless-dev/headless/internal/wire"
)

type fakeFinder struct {
	l   loopback.Listener
	err error
}

func (f fakeFinder) Find(string) (loopback.Listener, error)    { return f.l, f.err }
func (f fakeFinder) Sockets(string) (loopback.Listener, error) { return f.l, f.err }

// TestSameListener: right before typing into a loopback origin the host looks at who listens
// there again; another listener than the one brokerd named at the release, or more than one
// process, and nothing is typed.
func TestSameListener(t *testing.T) {
	one := loopback.Listener{Origin: "http://localhost:8080",
		Sockets: []loopback.Socket{{Addr: netip.MustParseAddrPort("127.0.0.1:8080"), Inode: 42, UID: 1000}},
		Procs:   []loopback.Process{{PID: 7, Exe: "/usr/bin/node", Inodes: []uint64{42}}}}
	other := one
	other.Sockets = []loopback.Socket{{Addr: netip.MustParseAddrPort("[::1]:8080"), Inode: 43, UID: 1000}}
	if one.Key() == other.Key() {
		t.Fatal("the fake listeners have the same key: the test proves nothing")
	}
	for _, c := range []struct {
		name, origin, want string
		f                  fakeFinder
		code               wire.Code
	}{
		{"not loopback", "https://a.example", "", fakeFinder{err: fmt.Errorf("must not be asked")}, ""},
		{"same listener", "http://localhost:8080", one.Key(), fakeFinder{l: one}, ""},
		{"listener replaced", "http://localhost:8080", one.Key(), fakeFinder{l: other}, wire.CodeOriginAmbiguous},
		{"two processes", "http://localhost:8080", one.Key(), fakeFinder{l: one, err: fmt.Errorf("x: %w", loopback.ErrAmbiguous)}, wire.CodeOriginAmbiguous},
		{"tables unreadable", "http://localhost:8080", one.Key(), fakeFinder{err: loopback.ErrUnavailable}, wire.CodeOriginUnverified},
		{"typed by the person: one process is enough", "http://localhost:8080", "", fakeFinder{l: other}, ""},
		{"a name under localhost", "https://app.localhost:8443", one.Key(), fakeFinder{l: other}, wire.CodeOriginAmbiguous},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &Host{o: Options{Loopback: c.f}}
			if got := wire.CodeOf(h.sameListener(c.origin, c.want)); got != c.code {
				t.Errorf("code %q, want %q", got, c.code)
			}
		})
	}
}
