//go:build linux

package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/test/realtest"
)

// TestRealAppVerdaccio: Verdaccio 6.8 (npm), a private npm registry whose web UI is a React
// application: its sign-in is a dialog the header's Login button opens (the agent's click), a
// form the script renders and submits itself, posting the fields as JSON with fetch to
// /-/verdaccio/sec/login and keeping the token it gets for the UI's later API calls. (Its
// /-/web/login page is only npm's web login, for a CLI that waits: without its next= it is the
// UI's "not found".) The user is in Verdaccio's htpasswd file, made by Apache's
// htpasswd -B (Debian's apache2-utils) on a terminal, as Verdaccio's documentation has it;
// sign-ups are closed (max_users -1). Proof by Verdaccio: its request log records the sign-in
// POST answered for the user, then the UI's package list fetched as that user (the token it
// issued).
func TestRealAppVerdaccio(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	node, mod := appModule(t, "verdaccio")
	htpasswd := realtest.Binary(t, "htpasswd")
	dir := t.TempDir()
	const account = "registrar"
	pw := newCanary()
	appSweepAtEnd(t, e, pw)
	users := filepath.Join(dir, "htpasswd")
	adminTTY(t, exec.Command(htpasswd, "-B", "-c", users, account), []step{
		{"New password:", pw + "\n"},
		{"Re-type new password:", pw + "\n"},
	})
	port := freePort(t)
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, fmt.Appendf(nil, `storage: %s
auth:
  htpasswd:
    file: %s
    max_users: -1
uplinks: {}
packages:
  '**':
    access: $authenticated
    publish: $authenticated
web:
  enable: true
  login: true
log: { type: stdout, format: json, level: http }
listen: 127.0.0.1:%d
`, filepath.Join(dir, "storage"), users, port), 0o600); err != nil {
		t.Fatal(err)
	}
	app := startApp(t, "Verdaccio", port, "/-/ping", exec.Command(node, filepath.Join(mod, "bin", "verdaccio"), "--config", config))

	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, app.origin, "registry", account, pw)
	e.start(t)
	// The agent opens the sign-in dialog from the UI's header, as a person does.
	visited := appVisit(t, e, app.URL("/"), "Login")
	appClick(t, e, "button", "Login")
	appShows(t, e, "Password")
	appLogin(t, e, visited, "registry")

	// Verdaccio's answer: the sign-in answered for the user, then the UI's API call as the user.
	appLogShows(t, app,
		`200, user: `+account+`(127.0.0.1), req: 'POST /-/verdaccio/sec/login'`,
		`200, user: `+account+`(127.0.0.1), req: 'GET /-/verdaccio/data/packages'`)
	if log := app.Log(); strings.Contains(log, `401, user: null(127.0.0.1), req: 'POST /-/verdaccio/sec/login'`) {
		t.Errorf("Verdaccio refused a sign-in:\n%s", tail(log, 20))
	}
}
