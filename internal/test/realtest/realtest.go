// Package realtest starts the real components that tests run against: a private D-Bus session
// bus with an unlocked gnome-keyring, through the project's own scripts/with-secret-service.sh.
//
// Real-component tests are opt-in for a developer's quick `go test ./...` and mandatory in the
// official run: with HEADLESS_REAL=1 (set by .ci/run) a missing component fails the test; it
// never skips. This package is imported only by tests.
package realtest

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// geteuid is os.Geteuid; a test of NeedRoot plays another user with it.
var geteuid = os.Geteuid

// Enabled reports whether the run opted in to real-component tests.
func Enabled() bool { return os.Getenv("HEADLESS_REAL") == "1" }

// Need skips t unless the run opted in to real-component tests.
func Need(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skip("real-component test: set HEADLESS_REAL=1 (.ci/run does) to run it against real gnome-keyring and Chromium")
	}
}

// NeedRoot is for a test that needs root (to mount, to give a file away, to run a process
// as uid 65534): a developer's run as another user skips it, and an opted-in run (HEADLESS_REAL=1,
// which scripts/test.sh runs as root) fails it, so a test that matters never skips there.
// why finishes "needs root to ...".
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if geteuid() == 0 {
		return
	}
	if Enabled() {
		t.Fatalf("needs root to %s, and HEADLESS_REAL=1 runs every test: run the suite as root (scripts/test.sh)", why)
	}
	t.Skipf("needs root to %s (scripts/test.sh runs as root)", why)
}

// Binary returns the path of a program the test needs; in an opted-in run a missing one fails.
func Binary(t testing.TB, name string) string {
	t.Helper()
	Need(t)
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("real component %s is missing (%v): install it (see README) — real-component tests never skip in the official run", name, err)
	}
	return p
}

// Root is the repository root (the directory holding go.mod). t may be nil (TestMain).
func Root(t testing.TB) string {
	if t != nil {
		t.Helper()
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Keyring is a running private session bus with an unlocked gnome-keyring.
type Keyring struct {
	Addr       string // DBUS_SESSION_BUS_ADDRESS of the private bus
	BusPID     int
	KeyringPID int
	Password   string // the login keyring's password
}

// KeyringOptions adjust StartKeyring.
type KeyringOptions struct {
	Password   string   // login keyring password; default "test"
	Activation bool     // enable D-Bus service activation (-a)
	Env        []string // extra environment for the harness (e.g. GNOME_KEYRING_TEST_PROMPTER=...)
	// Credential runs the bus and the keyring as another user (tests run as root; a test of
	// what an unprivileged same-uid process can do needs both sides unprivileged).
	Credential *syscall.Credential
}

// StartKeyring starts a private bus and an unlocked gnome-keyring for t and tears both down in
// t.Cleanup. It fails t (never skips, once opted in) when a component is missing.
func StartKeyring(t testing.TB, o KeyringOptions) *Keyring {
	t.Helper()
	Need(t)
	for _, b := range []string{"dbus-daemon", "gnome-keyring-daemon", "dbus-send"} {
		Binary(t, b)
	}
	if o.Password == "" {
		o.Password = "test"
	}
	args := []string{filepath.Join(Root(t), "scripts", "with-secret-service.sh"), "-p", o.Password}
	if o.Activation {
		args = append(args, "-a")
	}
	// The command prints the bus address and pids, then holds until its stdin closes.
	args = append(args, "--", "sh", "-c", `printf '%s %s %s\n' "$DBUS_SESSION_BUS_ADDRESS" "$WSS_BUS_PID" "$WSS_KEYRING_PID"; exec cat >/dev/null`)
	cmd := exec.Command("bash", args...)
	cmd.Env = append(os.Environ(), o.Env...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: o.Credential}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start keyring harness: %v", err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		for sc.Scan() {
		}
	}()
	go func() { cmd.Wait(); close(done) }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	select {
	case line, ok := <-lines:
		f := strings.Fields(line)
		if !ok || len(f) != 3 {
			t.Fatalf("keyring harness failed to come up (got %q)", line)
		}
		k := &Keyring{Addr: f[0], Password: o.Password}
		k.BusPID, _ = strconv.Atoi(f[1])
		k.KeyringPID, _ = strconv.Atoi(f[2])
		return k
	case <-ctx.Done():
		t.Fatal("keyring harness did not come up within 20s")
	}
	return nil
}

// Alive reports whether the keyring daemon process still runs (a crashed daemon that the
// harness has not reaped yet is a zombie, and counts as dead).
func (k *Keyring) Alive() bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(k.KeyringPID) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z' && s[i+2] != 'X'
}
