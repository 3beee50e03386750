package host

import (
	"testing"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/rpc"
)

// TestRelaunchUnpinsOwners: when a relaunched browser loses every session, each owned one's
// pin on its control connection is undone once (a connection owning two is unpinned after
// both); unowned sessions pinned nothing.
func TestRelaunchUnpinsOwners(t *testing.T) {
	lease, other := &rpc.Conn{}, &rpc.Conn{}
	lease.Pin()
	lease.Pin()
	other.Pin() // something else it owns (the pin is not the sessions')
	other.Pin()
	h := &Host{sessions: map[string]*session{
		control.DefaultSession: {name: control.DefaultSession},
		"a":                    {name: "a", owner: lease},
		"b":                    {name: "b", owner: lease},
		"c":                    {name: "c", owner: other},
	}}
	h.dropSessionsLocked()
	if len(h.sessions) != 0 {
		t.Fatalf("%d sessions left", len(h.sessions))
	}
	if lease.Pinned() {
		t.Error("the connection that owned two dropped sessions is still pinned")
	}
	if !other.Pinned() {
		t.Error("dropping one session unpinned a connection pinned twice")
	}
}
