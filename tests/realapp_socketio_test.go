//go:build linux

package tests

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/test/realtest"
)

// TestRealAppSocketIOAdmin: the Socket.IO Admin UI (npm @socket.io/admin-ui), which signs in over
// the server's own socket: its connection dialog (server URL, user name, password) is a form
// whose script never posts it; the user name and password go in the Socket.IO handshake, here
// over the WebSocket (the dialog's "WebSocket only" option, which the agent ticks as a person
// would), and the server's admin-ui middleware checks them against a bcrypt hash. The server is
// the one the Admin UI's README sets up, serving the UI's own files from the same origin
// (tests/apps/socketio-admin.js); its user is made by Debian's htpasswd -B on a terminal. Proof
// by the server: its admin namespace accepted the user's connection over the WebSocket, and the
// UI's status is no longer "disconnected".
func TestRealAppSocketIOAdmin(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	node, _ := appModule(t, "@socket.io/admin-ui")
	appModule(t, "socket.io")
	htpasswd := realtest.Binary(t, "htpasswd")
	dir := t.TempDir()
	const account = "socketwarden"
	pw := newCanary()
	appSweepAtEnd(t, e, pw)
	users := filepath.Join(dir, "htpasswd")
	adminTTY(t, exec.Command(htpasswd, "-B", "-c", users, account), []step{
		{"New password:", pw + "\n"},
		{"Re-type new password:", pw + "\n"},
	})
	port := freePort(t)
	app := startApp(t, "Socket.IO Admin UI", port, "/", exec.Command(node, filepath.Join(realtest.Root(t), appsDir, "socketio-admin.js"), strconv.Itoa(port), users))

	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, app.origin, "sockets", account, pw)
	e.start(t)
	// The agent fills in the server's URL and ticks "WebSocket only" in the dialog, as a person
	// does, then signs in by alias.
	visited := appVisit(t, e, app.URL("/"), "Password")
	var o outline
	e.ok(t, &o, "snapshot")
	e.ok(t, nil, "fill", o.ref(t, "input", "Server URL"), "--", app.origin)
	appClick(t, e, "input", "Advanced options")
	appClick(t, e, "input", "WebSocket only")
	appLogin(t, e, visited, "sockets")

	// The server's answer: the admin namespace took the user's connection over the WebSocket,
	// and the UI's status is no longer "disconnected".
	if r := e.run("", "headless", "wait", "--gone", "disconnected", "--timeout", "60s", "--json"); r.code != 0 {
		t.Errorf("the Admin UI still says disconnected: %s\n%s", r.stdout, appSnapshot(e))
	}
	appLogShows(t, app, "admin namespace: "+account+" signed in over websocket")
}
