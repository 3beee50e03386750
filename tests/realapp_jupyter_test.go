//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// TestRealAppJupyter: Jupyter Server (Debian's python3-jupyter-server), a self-hosted tool that
// signs in with its own password and no account at all: its /login page is a POST form with one
// password field (and an XSRF token). The password is set the way Jupyter's documentation has
// it, jupyter server password on a terminal (its argon2 hash in the server's config), and the
// credential is enrolled with no account, as issue 43 has it for such sign-ins. Proof by
// Jupyter: its contents API, which answers 403 to anyone not signed in, lists the server's
// files to the session.
func TestRealAppJupyter(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	py := debianPython(t, "jupyter_server", "python3-jupyter-server")
	dir := t.TempDir()
	for _, d := range []string{"config", "data", "runtime", "notebooks"} {
		os.Mkdir(filepath.Join(dir, d), 0o700)
	}
	// A file only a signed-in session is shown.
	const proof = "only-for-the-signed-in.txt"
	os.WriteFile(filepath.Join(dir, "notebooks", proof), []byte("hello\n"), 0o600)
	jupyter := func(args ...string) *exec.Cmd {
		cmd := exec.Command(py, append([]string{"-m", "jupyter_server"}, args...)...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + dir,
			"JUPYTER_CONFIG_DIR=" + filepath.Join(dir, "config"), "JUPYTER_DATA_DIR=" + filepath.Join(dir, "data"),
			"JUPYTER_RUNTIME_DIR=" + filepath.Join(dir, "runtime"), "JUPYTER_NO_CONFIG=", "JUPYTER_PLATFORM_DIRS=0"}
		return cmd
	}
	pw := newCanary()
	appSweepAtEnd(t, e, pw)
	adminTTY(t, jupyter("password"), []step{{"Enter password:", pw + "\n"}, {"Verify password:", pw + "\n"}})
	if b, err := os.ReadFile(filepath.Join(dir, "config", "jupyter_server_config.json")); err != nil || !strings.Contains(string(b), `"password": "argon2:`) {
		t.Fatalf("jupyter server password wrote no hash: %v %s", err, b)
	}
	port := freePort(t)
	app := startApp(t, "Jupyter Server", port, "/login", jupyter("--ServerApp.ip=127.0.0.1", "--ServerApp.port="+strconv.Itoa(port),
		"--ServerApp.port_retries=0", "--ServerApp.open_browser=False", "--ServerApp.token=", "--ServerApp.allow_root=True",
		"--ServerApp.root_dir="+filepath.Join(dir, "notebooks")))

	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	// Enrolled as the person would for a tool with no accounts: no --account.
	shown := adminTTY(t, e.command("headless", "credentials", "add", "--origin", app.origin, "--alias", "jupyter", "--json"),
		[]step{{"Password for", pw + "\n"}, {"Repeat the password", pw + "\n"}})
	e.record(shown)
	if !strings.Contains(shown, `"alias":"jupyter"`) {
		t.Fatalf("credentials add --alias jupyter (no --account): %q", shown)
	}
	e.start(t)
	appSignIn(t, e, app.URL("/login"), "", "jupyter")

	// Jupyter's answer: its contents API lists the server's files to this session.
	e.ok(t, nil, "visit", app.URL("/api/contents"))
	appShows(t, e, proof)
}
