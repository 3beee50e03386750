//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/test/realtest"
)

// Display servers for the tests of a browser with windows (issue 45): Debian's Xvfb, and
// weston's headless backend for Wayland (scripts/install-deps.sh --test installs both). Each
// test gets a server of its own, killed by pid at its end.

// windowEnv, when HEADLESS_E2E_WINDOW=x11, runs every test that writes a config with a browser
// with windows on an X server of its own ("window": true, presence.display): the suite's
// hostile-agent tests keep passing with windows on (a test-only switch: it only writes the
// person's config for them).
const windowEnv = "HEADLESS_E2E_WINDOW"

// windowConfig is body with a window on a fresh Xvfb when windowEnv asks for it (a body that
// is not a JSON object, a test's deliberately broken config, is left as it is).
func (e *env) windowConfig(body string) string {
	if os.Getenv(windowEnv) != "x11" {
		return body
	}
	var c map[string]any
	if json.Unmarshal([]byte(body), &c) != nil || c == nil {
		return body
	}
	p, _ := c["presence"].(map[string]any)
	if p == nil {
		p = map[string]any{}
	}
	p["display"] = e.display
	c["presence"], c["window"] = p, true
	b, _ := json.Marshal(c)
	return string(b)
}

// xvfb starts a private X server and returns its display (":N"). Only local clients, no TCP.
func xvfb(t testing.TB) string {
	t.Helper()
	bin := realtest.Binary(t, "/usr/bin/Xvfb")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(bin, "-displayfd", "3", "-screen", "0", "1600x1000x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("Xvfb said no display number: %v", err)
	}
	return ":" + strings.TrimSpace(line)
}

// x11 runs an X client of the tests (xdotool, xwd) on display and returns its output.
func x11(t testing.TB, display string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(realtest.Binary(t, "/usr/bin/"+name), args...)
	cmd.Env = []string{"DISPLAY=" + display, "PATH=/usr/bin:/bin"}
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	return out.String(), err
}

// x11Window waits (bounded) for a visible window whose title is exactly title, and returns its
// id.
func x11Window(t testing.TB, display, title string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _ := x11(t, display, "xdotool", "search", "--onlyvisible", "--name", "^"+regexp.QuoteMeta(title)+"$")
		if id := strings.Fields(out); len(id) > 0 {
			return id[0]
		}
		if time.Now().After(deadline) {
			names, _ := x11(t, display, "xdotool", "search", "--onlyvisible", "--name", ".")
			t.Fatalf("no window titled %q on %s (windows: %q)", title, display, windowNames(t, display, strings.Fields(names)))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func windowNames(t testing.TB, display string, ids []string) []string {
	var names []string
	for _, id := range ids {
		n, _ := x11(t, display, "xdotool", "getwindowname", id)
		names = append(names, strings.TrimSpace(n))
	}
	return names
}

// westonHeadless starts weston's headless backend with its socket in runtimeDir and a log of
// the Wayland protocol its clients speak (the "proto" scope), and returns the socket's name.
func westonHeadless(t testing.TB, runtimeDir string) (socket, protoLog string) {
	t.Helper()
	bin := realtest.Binary(t, "/usr/bin/weston")
	socket = "wayland-headless-test"
	protoLog = filepath.Join(t.TempDir(), "weston.log")
	cmd := exec.Command(bin, "--backend=headless-backend.so", "--socket="+socket, "--idle-time=0", "--logger-scopes=log,proto", "--log="+protoLog)
	cmd.Env = []string{"XDG_RUNTIME_DIR=" + runtimeDir, "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if fi, err := os.Stat(filepath.Join(runtimeDir, socket)); err == nil && fi.Mode().Type() == os.ModeSocket {
			return socket, protoLog
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(protoLog)
			t.Fatalf("weston did not come up: %.2000s", b)
		}
	}
}

// waylandTitles lists the titles the compositor's clients gave their windows
// (xdg_toplevel.set_title), in order, from weston's protocol log.
func waylandTitles(t testing.TB, protoLog string) []string {
	b, _ := os.ReadFile(protoLog)
	var titles []string
	for _, m := range regexp.MustCompile(`xdg_toplevel@\d+\.set_title\("([^"]*)"\)`).FindAllSubmatch(b, -1) {
		titles = append(titles, string(m[1]))
	}
	return titles
}
