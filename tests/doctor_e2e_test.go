//go:build linux

package tests

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/surface/doctor"
)

// tree lists every path under root with its size and modification time.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := d.Info()
		if err == nil {
			m[p] = fmt.Sprint(fi.Mode(), fi.ModTime(), fi.Size())
		}
		return nil
	})
	return m
}

// TestDoctorE2E: 'headless doctor' as a user runs it: read-only (no file created or changed,
// no process started, a stale socket reported and left), every check id present with a
// state, the install (groups, set-gid binaries, seal key, Chromium's setuid sandbox) judged
// healthy as scripts/install.sh made it, the X11 display a warning, a brokerd.service user
// unit with NoNewPrivileges= failing the report, the running daemons' facts (brokerd trusted),
// a broken audit chain failing the report (exit 1), and nothing of the environment in what
// it prints.
func TestDoctorE2E(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	e.vars = append(e.vars, "DISPLAY=:4242")

	// A fresh user: nothing runs, nothing exists yet.
	before := tree(t, e.root)
	code, st, r := doctorReport(t, e)
	if code != 0 || len(st) != len(doctor.IDs) {
		t.Fatalf("doctor on a fresh user: exit %d %v\n%s", code, st, r.stdout)
	}
	for id, want := range map[string]string{"secret_service": "healthy", "config": "healthy", "runtime_dir": "healthy", "sockets": "healthy",
		"profile": "healthy", "audit": "healthy", "brokerd": "warning", "host": "warning", "chromium": "healthy", "presence": "warning",
		// root (this test's user) is in neither group; the binaries of binDir and the seal key
		// are as the install makes them; Chromium's sandbox is Debian's chromium-sandbox.
		"groups": "healthy", "setgid": "healthy", "seal_key": "healthy", "state_dir": "healthy", "chromium_sandbox": "healthy",
		"brokerd_trust": "warning", "x11": "warning", "ptrace_scope": "healthy"} {
		if st[id] != want {
			t.Errorf("fresh user: %s = %s, want %s\n%s", id, st[id], want, r.stdout)
		}
	}
	if st["systemd_unit"] != "unsupported" && st["systemd_unit"] != "healthy" {
		t.Errorf("fresh user: systemd_unit = %s (a user unit installed on this machine keeps brokerd from its group?)\n%s", st["systemd_unit"], r.stdout)
	}
	human := e.run("", "headless", "doctor")
	if human.code != 0 || !strings.Contains(human.stdout, "keyring_auto_unlock") || !strings.Contains(human.stdout, "hint:") {
		t.Errorf("doctor's human output: %+v", human)
	}
	if after := tree(t, e.root); len(after) != len(before) {
		t.Fatalf("the doctor created or removed files: before %d, after %d", len(before), len(after))
	} else {
		for p, v := range before {
			if after[p] != v {
				t.Fatalf("the doctor changed %s", p)
			}
		}
	}
	if left := e.leftovers(); len(left) > 0 {
		t.Fatalf("the doctor started processes: %v", left)
	}

	// A brokerd.service user unit that sets no_new_privs (as the unit once shipped did) fails
	// the report: the brokerd it runs is given no group and releases nothing.
	unitDir := filepath.Join(e.root, "config", "systemd", "user")
	if err := os.MkdirAll(unitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unitDir, "brokerd.service"), []byte("[Service]\nExecStart=/usr/bin/brokerd\nNoNewPrivileges=yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, st, r := doctorReport(t, e); code != 1 || st["systemd_unit"] != "failed" || !strings.Contains(r.stdout, "NoNewPrivileges=") {
		t.Errorf("doctor with a NoNewPrivileges=yes user unit: exit %d %v\n%s", code, st, r.stdout)
	}
	if err := os.RemoveAll(filepath.Join(e.root, "config", "systemd")); err != nil {
		t.Fatal(err)
	}

	// A stale socket is reported and left in place.
	if err := os.MkdirAll(e.runDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(e.runDir(), "control.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	os.Chmod(filepath.Join(e.runDir(), "control.sock"), 0o600)
	l.Close()
	if code, st, r := doctorReport(t, e); code != 0 || st["sockets"] != "warning" || !strings.Contains(r.stdout, "stale") || st["host"] != "warning" {
		t.Fatalf("doctor with a stale control.sock: exit %d %v\n%s", code, st, r.stdout)
	}
	if _, err := os.Lstat(filepath.Join(e.runDir(), "control.sock")); err != nil {
		t.Fatal("the doctor removed the stale socket")
	}

	// Running: the daemons answer and are undumpable; the profile is locked by the host.
	e.start(t)
	e.run("", "headless", "credentials", "init", "--json") // refused (no prompter): an audit record each
	e.run("", "headless", "credentials", "init", "--json")
	code, st, r = doctorReport(t, e)
	for id, want := range map[string]string{"brokerd": "healthy", "host": "healthy", "undumpable": "healthy", "profile": "healthy", "audit": "healthy", "sockets": "healthy",
		"brokerd_trust": "healthy", "setgid": "healthy"} {
		if st[id] != want {
			t.Errorf("running: %s = %s, want %s\n%s", id, st[id], want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "(the running host)") || !strings.Contains(r.stdout, "2 records, checked with brokerd's key and anchor") {
		t.Errorf("doctor's details while running: %s", r.stdout)
	}

	// A busy host is not a broken one (issue 46: under load the doctor called a running host
	// failed). Stopped (SIGSTOP) for longer than the doctor once waited (3 s) while it asks,
	// the host is waited for as long as the CLI waits, and its slow answer is healthy; still
	// stopped when the doctor's --timeout passes, it is busy: a warning, never failed.
	hostPID := e.hostStatus(t).PID
	if err := syscall.Kill(hostPID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			syscall.Kill(hostPID, syscall.SIGCONT)
		}
	}
	defer resume()
	slowDoctor := make(chan result)
	go func() { slowDoctor <- e.run("", "headless", "doctor", "--json") }()
	time.Sleep(5 * time.Second) // the doctor is asking (or about to) a host that cannot answer
	resume()
	slow := <-slowDoctor
	if slow.code != 0 || check(t, slow, "host").State != "healthy" || check(t, slow, "undumpable").State != "healthy" {
		t.Errorf("doctor on a host stopped for 5 s: exit %d, host %+v\n%s", slow.code, check(t, slow, "host"), slow.stdout)
	}
	if err := syscall.Kill(hostPID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed = false
	busy := e.run("", "headless", "doctor", "--json", "--timeout", "2s")
	resume()
	if busy.code != 0 || check(t, busy, "host").State != "warning" || !strings.HasPrefix(check(t, busy, "host").Detail, "busy: pid ") {
		t.Errorf("doctor on a stopped host, --timeout 2s: exit %d, host %+v\n%s", busy.code, check(t, busy, "host"), busy.stdout)
	}

	// A broken audit chain (the first record edited) fails the report: exit status 1, the report still printed.
	audit := filepath.Join(e.root, "data", "headless", "audit.jsonl")
	b, err := os.ReadFile(audit)
	if err != nil || len(b) == 0 {
		t.Fatalf("audit log: %v (%d bytes)", err, len(b))
	}
	if err := os.WriteFile(audit, []byte(strings.Replace(string(b), `"op":"init"`, `"op":"add"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, st, r = doctorReport(t, e)
	if code != 1 || st["audit"] != "failed" {
		t.Fatalf("doctor with an edited audit log: exit %d %v\n%s", code, st, r.stdout)
	}
	if hr := e.run("", "headless", "doctor"); hr.code != 1 || !strings.Contains(hr.stdout, "[FAIL] audit") {
		t.Fatalf("human doctor with an edited audit log: %+v", hr)
	}

	// Nothing of the environment: neither the bus address nor the display.
	all := e.allOutput()
	for _, v := range []string{e.k.Addr, ":4242"} {
		if strings.Contains(all, v) {
			t.Fatalf("the doctor printed an environment value %q", v)
		}
	}
}

// check is the check id of a doctor --json report.
func check(t *testing.T, r result, id string) (c struct{ ID, State, Detail, Hint string }) {
	t.Helper()
	var rep struct {
		Checks []struct{ ID, State, Detail, Hint string } `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor --json: %v: %s", err, r.stdout)
	}
	for _, c := range rep.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check %s in %s", id, r.stdout)
	return c
}
