//go:build linux

package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// TestRealAppNodeRED: Node-RED 4.1 (npm), whose editor draws its login dialog with a script: a
// <form> with no method and unnamed inputs, whose submit handler posts the fields to auth/token
// (OAuth2's password grant) and keeps the token it gets for every later admin API call. The
// administrator is in adminAuth of the settings file, with the bcrypt hash node-red admin
// hash-pw makes from the password typed on its terminal. Proof by Node-RED: its audit log
// records auth.login of the user by the editor's client, then the editor loading the flows
// through the admin API as that user (the token it issued), and its sessions file holds the
// user's token.
func TestRealAppNodeRED(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	node, mod := appModule(t, "node-red")
	dir := t.TempDir()
	const account = "flowadmin"
	pw := newCanary()
	appSweepAtEnd(t, e, pw)
	shown := adminTTY(t, exec.Command(node, filepath.Join(mod, "red.js"), "admin", "hash-pw"), []step{{"Password:", pw + "\n"}})
	hash := regexp.MustCompile(`\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}`).FindString(shown)
	if hash == "" {
		t.Fatalf("node-red admin hash-pw printed no bcrypt hash: %q", shown)
	}
	port := freePort(t)
	settings := filepath.Join(dir, "settings.js")
	userDir := filepath.Join(dir, "data")
	os.Mkdir(userDir, 0o700)
	// The settings an administrator writes for an editor on loopback: adminAuth with one user,
	// the audit log on the console, and nothing that reaches outside (no palette installs, no
	// telemetry, no tours).
	if err := os.WriteFile(settings, fmt.Appendf(nil, `module.exports = {
  uiHost: "127.0.0.1",
  uiPort: %d,
  userDir: %q,
  flowFile: "flows.json",
  credentialSecret: false,
  adminAuth: { type: "credentials", users: [{ username: %q, password: %q, permissions: "*" }] },
  logging: { console: { level: "info", metrics: false, audit: true } },
  editorTheme: { tours: false, projects: { enabled: false } },
  telemetry: { enabled: false },
  externalModules: { autoInstall: false, palette: { allowInstall: false } },
  diagnostics: { enabled: false },
};
`, port, userDir, account, hash), 0o600); err != nil {
		t.Fatal(err)
	}
	app := startApp(t, "Node-RED", port, "/", exec.Command(node, filepath.Join(mod, "red.js"), "--settings", settings))

	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, app.origin, "node-red", account, pw)
	e.start(t)
	appSignIn(t, e, app.URL("/"), "Username", "node-red")

	// Node-RED's answer: the editor is in (its Deploy button), and the audit log says who.
	appShows(t, e, "Deploy")
	appLogShows(t, app,
		`"event":"auth.login","user":{"username":"`+account+`"`, `"client":"node-red-editor"`,
		`"event":"flows.get","level":98,"user":{"username":"`+account+`"`)
	if log := app.Log(); strings.Contains(log, `"event":"auth.login.fail"`) {
		t.Errorf("Node-RED logged a failed login:\n%s", tail(log, 20))
	}
	sessions, err := os.ReadFile(filepath.Join(userDir, ".sessions.json"))
	if err != nil || !strings.Contains(string(sessions), `"user":"`+account+`","client":"node-red-editor"`) {
		t.Fatalf("Node-RED's sessions file holds no token of %s: %v %.300s", account, err, sessions)
	}
}
