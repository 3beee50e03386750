// Package presencetest provides a scripted pinentry program for tests of presence and of the
// packages that use it (brokerd, end-to-end tests). It is imported only by tests.
package presencetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// modes are the modes FakePinentry accepts.
var modes = []string{
	"approve", "deny", "notconfirmed", "timeout", "hang", "crash", "garbage", "gate", "switch",
	"nogreeting", "biggreeting", "errsetup",
}

// FakePinentry returns the absolute path of a 0700 program that behaves as a pinentry in the
// given mode, and the log file it appends every received Assuan line to (see [Prompts]). The
// program is what a config's presence.program names. The fake is built once per test process;
// a build failure or an unknown mode fails t.
//
// The modes (see the fakepinentry command for details): approve, deny, notconfirmed, timeout,
// hang, crash, garbage, gate and switch answer CONFIRM (OK; cancelled; not confirmed; dialog
// timeout; never, ignoring SIGTERM; exit 2; random bytes; OK once the file logFile+".gate"
// exists; not before logFile+".hold" is gone, then cancelled while logFile+".deny" exists,
// else OK),
// while nogreeting, biggreeting and errsetup fail before it.
func FakePinentry(t testing.TB, mode string) (program, logFile string) {
	t.Helper()
	known := false
	for _, m := range modes {
		known = known || m == mode
	}
	if !known {
		t.Fatalf("presencetest: unknown fake pinentry mode %q (want one of %v)", mode, modes)
	}
	bin, err := binary()
	if err != nil {
		t.Fatalf("presencetest: %v", err)
	}
	dir := t.TempDir()
	logFile = filepath.Join(dir, "pinentry.log")
	program = filepath.Join(dir, "pinentry")
	script := fmt.Sprintf("#!/bin/sh\nexec %s -mode %s -log %s \"$@\"\n",
		shellQuote(bin), shellQuote(mode), shellQuote(logFile))
	if err := os.WriteFile(program, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(program, 0o700); err != nil { // whatever the umask
		t.Fatal(err)
	}
	return program, logFile
}

// FakePinentryAs is FakePinentry for a brokerd run by the unprivileged user uid:gid: the
// program is the fake itself (no script: a shell drops the group brokerd's shim runs a
// pinentry with), named pinentry-fake, root-owned in a root-owned directory every user may
// enter (so that no process of the user could replace it), with its flags in
// pinentry-fake.args; its log is in a directory of the user's, which Type writes for them.
func FakePinentryAs(t testing.TB, mode string, uid, gid int) (program, logFile string) {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatalf("presencetest: %v", err)
	}
	dir, err := os.MkdirTemp("", "headless-pinentry-as-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	logDir := filepath.Join(dir, "log")
	for _, step := range []error{os.Chmod(dir, 0o755), os.Mkdir(logDir, 0o700), os.Chown(logDir, uid, gid)} {
		if step != nil {
			t.Fatal(step)
		}
	}
	logFile = filepath.Join(logDir, "pinentry.log")
	program = filepath.Join(dir, "pinentry-fake")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(program, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(program+".args", []byte("-mode\n"+mode+"\n-log\n"+logFile+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return program, logFile
}

// Prompts returns the text of every prompt shown through logFile's fake so far (the SETDESC
// arguments, percent-decoded), in order.
func Prompts(t testing.TB, logFile string) []string {
	t.Helper()
	var prompts []string
	for _, cmd := range Received(t, logFile) {
		if arg, ok := strings.CutPrefix(cmd, "SETDESC "); ok {
			prompts = append(prompts, arg)
		}
	}
	return prompts
}

// Type makes the person at logFile's fake type passphrases at its GETPIN prompts: the next
// prompts get them in order, one each, and the later ones the last of them. With none, the
// person types nothing (the prompt is cancelled).
func Type(t testing.TB, logFile string, passphrases ...string) {
	t.Helper()
	os.Remove(logFile + ".pins")
	os.Remove(logFile + ".pin")
	if len(passphrases) == 0 {
		return
	}
	for _, p := range passphrases {
		if strings.ContainsAny(p, "\n") || p == "" {
			t.Fatalf("presencetest: a typed passphrase must be one non-empty line")
		}
	}
	last := passphrases[len(passphrases)-1]
	if err := writeFor(logFile+".pin", []byte(last)); err != nil {
		t.Fatal(err)
	}
	if len(passphrases) > 1 {
		if err := writeFor(logFile+".pins", []byte(strings.Join(passphrases[:len(passphrases)-1], "\n")+"\n")); err != nil {
			t.Fatal(err)
		}
	}
}

// Received returns every command logFile's fake received so far, in order ("GETPIN",
// "SETERROR …"), percent-decoded.
func Received(t testing.TB, logFile string) []string {
	t.Helper()
	b, err := os.ReadFile(logFile)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		_, rest, _ := strings.Cut(line, " ")
		if cmd, ok := strings.CutPrefix(rest, "recv "); ok {
			out = append(out, percentDecode(cmd))
		}
	}
	return out
}

// Env returns the display and bus variables (DISPLAY, WAYLAND_DISPLAY, XAUTHORITY,
// DBUS_SESSION_BUS_ADDRESS) that each run of logFile's fake found in its environment, as
// "NAME=VALUE", one slice per run in order: where the prompt would have appeared.
func Env(t testing.TB, logFile string) [][]string {
	t.Helper()
	b, err := os.ReadFile(logFile)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var runs [][]string
	for _, line := range strings.Split(string(b), "\n") {
		_, rest, _ := strings.Cut(line, " ")
		switch {
		case strings.HasPrefix(rest, "start "):
			runs = append(runs, []string{})
		case strings.HasPrefix(rest, "env ") && len(runs) > 0:
			runs[len(runs)-1] = append(runs[len(runs)-1], strings.TrimPrefix(rest, "env "))
		}
	}
	return runs
}

// percentDecode undoes Assuan's %XX escaping; a malformed escape is kept as is.
func percentDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

var build struct {
	once sync.Once
	bin  string
	err  error
}

// binary builds the fakepinentry command once per process into a temporary directory. Such
// directories left by earlier test processes that have exited are removed first.
func binary() (string, error) {
	build.once.Do(func() { build.bin, build.err = buildFake() })
	return build.bin, build.err
}

const dirPrefix = "headless-fakepinentry-"

func buildFake() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("locate the presencetest source")
	}
	src := filepath.Join(filepath.Dir(file), "..", "fakepinentry")
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("build fake pinentry: the go command is not on PATH: %w", err)
	}
	removeStale()
	dir, err := os.MkdirTemp("", dirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "fakepinentry")
	cmd := exec.Command(gobin, "build", "-o", bin, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("build fake pinentry: %v\n%s", err, out)
	}
	return bin, nil
}

// removeStale removes build directories of test processes that no longer exist.
func removeStale() {
	entries, _ := os.ReadDir(os.TempDir())
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), dirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 0 {
			continue
		}
		if _, err := os.Stat(filepath.Join("/proc", pidStr)); os.IsNotExist(err) {
			os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
		}
	}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeFor writes a 0600 file owned by the owner of its directory (the fake's user).
func writeFor(path string, b []byte) error {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return err
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Dir(path), &st); err != nil {
		return err
	}
	return os.Chown(path, int(st.Uid), int(st.Gid))
}
