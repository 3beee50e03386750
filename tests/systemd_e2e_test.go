//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/test/realtest"
)

// TestSystemdUnitsVerify: systemd itself accepts the user units as shipped (ExecStart pointed at
// the built brokerd, since systemd-analyze checks that the program exists), with nothing to
// say; they carry the settings the security contract relies on, and none that would keep the
// kernel from giving brokerd (and the host, and Chromium's sandbox) their set-id privileges.
func TestSystemdUnitsVerify(t *testing.T) {
	parallel(t)
	realtest.Need(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	analyze := realtest.Binary(t, "systemd-analyze")
	src := filepath.Join(realtest.Root(t), "contrib", "systemd", "user")
	dir := t.TempDir()
	want := map[string][]string{
		"brokerd.socket":  {"ListenStream=%t/headless/broker.sock", "SocketMode=0600", "DirectoryMode=0700"},
		"brokerd.service": {"ExecStart=/usr/bin/brokerd", "UMask=0077", "KillMode=mixed"},
	}
	for name, lines := range want {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if !bytes.Contains(b, []byte("\n"+l)) {
				t.Errorf("%s lacks %q", name, l)
			}
		}
		if name == "brokerd.service" {
			if u := parseService(b); len(u.nnp) > 0 || len(u.userns) > 0 {
				t.Errorf("brokerd.service turns on %v (no_new_privs in a user unit) and %v (a user namespace in a user unit): brokerd would get no group", u.nnp, u.userns)
			}
		}
		b = bytes.ReplaceAll(b, []byte("ExecStart=/usr/bin/brokerd"), []byte("ExecStart="+filepath.Join(binDir, "brokerd")))
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(analyze, "--user", "verify", "./brokerd.socket", "./brokerd.service")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_RUNTIME_DIR=" + dir}
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// The [Service] options that keep a set-id exec from its privileges when the user's systemd
// runs the unit (systemd.exec(5)). A user manager has no CAP_SYS_ADMIN, so each option of
// nnpOptions sets no_new_privs (NoNewPrivileges= itself, and every seccomp- or
// capability-based option, which then implies it); each of usernsOptions needs a user
// namespace in a user unit (PrivateUsers=, which systemd 254 and later implies), one that maps
// root and the headless groups to nobody. Under either the kernel grants brokerd, the host and
// Chromium's setuid sandbox nothing.
var (
	nnpOptions = []string{"NoNewPrivileges", "DynamicUser", "LockPersonality", "MemoryDenyWriteExecute",
		"PrivateDevices", "ProtectClock", "ProtectHostname", "ProtectKernelLogs", "ProtectKernelModules",
		"ProtectKernelTunables", "RestrictAddressFamilies", "RestrictNamespaces", "RestrictRealtime",
		"RestrictSUIDSGID", "SystemCallArchitectures", "SystemCallFilter", "SystemCallLog"}
	usernsOptions = []string{"PrivateUsers", "ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateNetwork",
		"PrivateIPC", "PrivateMounts", "ProtectControlGroups", "ProtectProc", "ProcSubset", "ReadOnlyPaths",
		"ReadWritePaths", "InaccessiblePaths", "ExecPaths", "NoExecPaths", "TemporaryFileSystem", "BindPaths",
		"BindReadOnlyPaths", "RootDirectory", "RootImage", "MountAPIVFS", "ExtensionDirectories",
		"ExtensionImages", "NetworkNamespacePath", "IPCNamespacePath"}
)

// serviceSettings is what a unit's [Service] asks of the process it runs, as far as brokerd's
// trust goes: the options left on of nnpOptions and usernsOptions, and UMask=.
type serviceSettings struct {
	nnp, userns []string
	umask       string
}

// parseService applies a unit's [Service] assignments in order, as systemd does: an option is
// on after a non-empty assignment other than a false boolean, and off after an empty one
// (which resets a list) or a false boolean. Comments (# and ;) and other sections are skipped;
// a line ending in a backslash goes on on the next.
func parseService(b []byte) serviceSettings {
	on := map[string]bool{}
	var u serviceSettings
	section := ""
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
		}
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case line[0] == '[':
			section = line
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || section != "[Service]" {
			continue
		}
		if key == "UMask" {
			u.umask = value
			continue
		}
		switch strings.ToLower(value) {
		case "", "no", "false", "off", "0":
			delete(on, key)
		default:
			on[key] = true
		}
	}
	for _, k := range nnpOptions {
		if on[k] {
			u.nnp = append(u.nnp, k)
		}
	}
	for _, k := range usernsOptions {
		if on[k] {
			u.userns = append(u.userns, k)
		}
	}
	return u
}

// testSystemdUnitAsUser: brokerd.service's settings applied as the user's systemd applies them
// (no user manager runs here: no systemd is PID 1), to brokerd run as uid 65534 on a socket
// systemd-socket-activate passes it: its UMask=, and no_new_privs when the unit turns on any
// option that sets it in a user unit. Under the shipped unit brokerd is given its group (it is
// trusted), the host and Chromium start, the host is trusted, and a sign-in by alias works.
// The same unit with NoNewPrivileges=yes added (what it shipped before set-gid brokerd) is
// applied the same way: brokerd has no_new_privs, says it is untrusted for want of its group,
// and the browser does not start. So the test fails if the unit sets no_new_privs again.
func testSystemdUnitAsUser(t *testing.T) {
	realtest.Need(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	b, err := os.ReadFile(filepath.Join(realtest.Root(t), "contrib", "systemd", "user", "brokerd.service"))
	if err != nil {
		t.Fatal(err)
	}
	shipped := parseService(b)
	if len(shipped.nnp) > 0 || len(shipped.userns) > 0 {
		t.Errorf("brokerd.service turns on %v %v", shipped.nnp, shipped.userns)
	}
	if shipped.umask != "0077" {
		t.Errorf("brokerd.service has UMask=%q, want 0077", shipped.umask)
	}
	old := parseService(append(b, "\n[Service]\nNoNewPrivileges=yes\n"...))
	if len(old.nnp) == 0 || old.nnp[0] != "NoNewPrivileges" {
		t.Fatalf("parseService of the unit with NoNewPrivileges=yes: %+v", old)
	}
	// Both run: a shipped unit that turns on an option of nnpOptions fails here too, as
	// brokerd is then run with no_new_privs.
	t.Run("shipped", func(t *testing.T) { unitAsUser(t, shipped, true) })
	t.Run("NoNewPrivileges", func(t *testing.T) { unitAsUser(t, old, false) })
}

// unitAsUser runs brokerd as uid 65534 under u, on a socket passed as systemd passes it, and
// checks that the whole job works (works) or that brokerd is untrusted and no browser starts.
func unitAsUser(t *testing.T, u serviceSettings, works bool) {
	e := newEnv(t, envOptions{user: true})
	activate := realtest.Binary(t, "systemd-socket-activate")
	program, log := presencetest.FakePinentryAs(t, "approve", 65534, 65534)
	e.pinentryConfig(program)
	// What brokerd.socket's DirectoryMode=0700 makes, as the user.
	must(t, os.MkdirAll(e.runDir(), 0o700))
	e.own(e.runDir())
	// systemd forks, sets the unit's umask and (for any option of nnpOptions) no_new_privs,
	// then execs ExecStart: sh and setpriv do the same, after systemd-socket-activate made the
	// listening socket.
	args := []string{"-c", `umask "$0" && exec "$@"`, u.umask, activate, "-l", e.sockPath()}
	for _, v := range e.vars {
		args = append(args, "-E", v)
	}
	if len(u.nnp) > 0 {
		args = append(args, realtest.Binary(t, "setpriv"), "--no-new-privs")
	}
	args = append(args, filepath.Join(binDir, "brokerd"))
	sa := exec.Command("/bin/sh", args...)
	sa.Env = e.vars
	sa.Dir = "/"
	sa.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: e.cred}
	saOut := startActivator(t, sa, "brokerd under the unit's settings")
	if !pollUntil(10*time.Second, func() bool {
		fi, err := os.Lstat(e.sockPath())
		return err == nil && fi.Mode().Type() == os.ModeSocket
	}) {
		t.Fatalf("the socket never appeared: %s", saOut.String())
	}
	must(t, os.Chmod(e.sockPath(), 0o600)) // SocketMode=0600

	var st struct {
		Host struct {
			PID int `json:"pid"`
		} `json:"host"`
		Broker struct {
			PID       int    `json:"pid"`
			Started   string `json:"started"`
			Untrusted string `json:"untrusted"`
		} `json:"broker"`
	}
	status := func() {
		t.Helper()
		r := e.run("", "headless", "status", "--json")
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Broker.PID == 0 {
			t.Fatalf("status: %+v", r)
		}
	}
	status() // the first client: brokerd starts on the inherited socket
	if st.Broker.Started != "systemd" {
		t.Fatalf("brokerd was not started on the inherited socket: %+v", st.Broker)
	}
	nnp := noNewPrivs(t, st.Broker.PID)
	if nnp != (len(u.nnp) > 0) {
		t.Fatalf("brokerd has NoNewPrivs %v under %+v", nnp, u)
	}

	if !works {
		if !strings.Contains(st.Broker.Untrusted, "did not give this brokerd its group") {
			t.Fatalf("brokerd with no_new_privs says untrusted %q; want it untrusted for want of its group", st.Broker.Untrusted)
		}
		r := e.run("", "headless", "start", "--json")
		if r.code == 0 {
			t.Fatalf("headless start under no_new_privs succeeded: %s", r.stdout)
		}
		t.Logf("headless start under no_new_privs: exit %d %s", r.code, strings.TrimSpace(r.stdout))
		return
	}

	if st.Broker.Untrusted != "" {
		t.Fatalf("brokerd under the shipped unit is untrusted: %s", st.Broker.Untrusted)
	}
	ls := newLoginSite(t)
	ls.SetAccount("admin@example.test", canarySystemd)
	lsEnroll(t, e, ls.Origin(), "main", "admin@example.test", canarySystemd)
	e.start(t)
	status()
	if st.Host.PID == 0 || noNewPrivs(t, st.Host.PID) {
		t.Fatalf("the host under the shipped unit: %+v", st)
	}
	lsVisit(t, e, ls.URL("/login"))
	// A release goes only to a host brokerd trusts (its pid and the headless group).
	lsLoginOK(t, e, "authenticated", "--alias", "main")
	if len(presencetest.Received(t, log)) == 0 {
		t.Fatal("the person was never asked")
	}
	e.sweep(t, canarySystemd)
}

const canarySystemd = "systemd-unit-canary-Pw-0815"

// noNewPrivs reads the NoNewPrivs flag of pid.
func noNewPrivs(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "NoNewPrivs:"); ok {
			return strings.TrimSpace(v) == "1"
		}
	}
	t.Fatalf("no NoNewPrivs in /proc/%d/status", pid)
	return false
}

// TestBrokerdSocketActivationE2E: brokerd serves on a socket it inherits the way systemd passes
// it (systemd's own systemd-socket-activate: LISTEN_FDS/LISTEN_PID, the socket made before
// brokerd runs). The doctor sees the listener without triggering it; the first client starts
// brokerd, which works as usual (the host, a visit), says it was started by systemd, and is
// left running by 'headless stop'; another uid is still refused by its peer check even when
// the socket's mode would let it in.
func TestBrokerdSocketActivationE2E(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	activate := realtest.Binary(t, "systemd-socket-activate")
	if err := os.MkdirAll(e.runDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	args := []string{"-l", e.sockPath()}
	for _, v := range e.vars {
		args = append(args, "-E", v)
	}
	args = append(args, filepath.Join(binDir, "brokerd"))
	sa := exec.Command(activate, args...)
	sa.Env = e.vars
	sa.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	saOut := startActivator(t, sa, "systemd-socket-activate")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if fi, err := os.Lstat(e.sockPath()); err == nil && fi.Mode().Type() == os.ModeSocket {
			must(t, os.Chmod(e.sockPath(), 0o600)) // what systemd's SocketMode=0600 does
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the socket never appeared: %s", saOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The doctor sees the listener and does not trigger it.
	code, st, dr := doctorReport(t, e)
	if st["brokerd"] != "healthy" || !strings.Contains(dr.stdout, "socket activation") || e.brokerPID() != 0 {
		t.Fatalf("doctor with a socket-activated brokerd not started yet: exit %d %v, brokerd pid %d\n%s", code, st, e.brokerPID(), dr.stdout)
	}

	// The first client starts brokerd on the inherited socket; everything works.
	e.start(t)
	ls := newLoginSite(t)
	lsVisit(t, e, ls.URL("/login"))
	var status struct {
		Broker struct {
			PID     int    `json:"pid"`
			Started string `json:"started"`
		} `json:"broker"`
	}
	e.ok(t, &status, "status")
	if status.Broker.Started != "systemd" || status.Broker.PID == 0 {
		t.Fatalf("status of a socket-activated brokerd: %+v", status.Broker)
	}
	if _, st, _ := doctorReport(t, e); st["brokerd"] != "healthy" || st["undumpable"] != "healthy" || st["sockets"] != "healthy" {
		t.Fatalf("doctor with brokerd running on the inherited socket: %v", st)
	}

	// Another uid is refused by the peer check, even with the socket's mode opened to it.
	pdir, err := os.MkdirTemp("", "headless-probe-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(pdir) })
	must(t, os.Chmod(pdir, 0o755))
	self, _ := os.Executable()
	b, err := os.ReadFile(self)
	must(t, err)
	must(t, writeExecutable(filepath.Join(pdir, "probe"), b, 0o755))
	opened := []string{e.root, filepath.Dir(e.runDir()), e.runDir()}
	for _, d := range opened {
		must(t, os.Chmod(d, 0o711))
	}
	must(t, os.Chmod(e.sockPath(), 0o666))
	other := exec.Command(filepath.Join(pdir, "probe"))
	other.Dir = "/"
	other.Env = []string{helperEnv + "=peerprobe", "PROBE_SOCK=" + e.sockPath()}
	other.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, _ := other.CombinedOutput()
	must(t, os.Chmod(e.sockPath(), 0o600))
	for _, d := range opened {
		must(t, os.Chmod(d, 0o700))
	}
	if !strings.Contains(string(out), "connected") || !strings.Contains(string(out), "PEER_REFUSED") {
		t.Fatalf("another uid on the inherited socket: %s", out)
	}

	// 'headless stop' stops the host and leaves a systemd brokerd running, saying so.
	var stop struct {
		Stopped struct {
			BrokerLeftRunning int    `json:"broker_left_running"`
			Note              string `json:"note"`
		} `json:"stopped"`
	}
	e.ok(t, &stop, "stop")
	if stop.Stopped.BrokerLeftRunning != status.Broker.PID || !strings.Contains(stop.Stopped.Note, "systemd") {
		t.Fatalf("stop with a systemd brokerd: %+v", stop.Stopped)
	}
	if syscall.Kill(status.Broker.PID, 0) != nil {
		t.Fatal("stop stopped the systemd brokerd")
	}
	// When brokerd stops, the socket stays systemd's: it is not removed.
	e.stopBroker()
	if fi, err := os.Lstat(e.sockPath()); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("brokerd removed the socket systemd owns: %v", err)
	}
}

// peerProbe (a helper run as another uid) connects to PROBE_SOCK, sends a version request and
// prints what came back.
func peerProbe() int {
	c, err := net.Dial("unix", os.Getenv("PROBE_SOCK"))
	if err != nil {
		os.Stdout.WriteString("dial: " + err.Error() + "\n")
		return 1
	}
	defer c.Close()
	os.Stdout.WriteString("connected\n")
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, _ := json.Marshal(map[string]any{"id": 1, "method": "version", "params": map[string]any{}})
	c.Write(append(b, '\n'))
	line, _ := bufio.NewReader(c).ReadString('\n')
	os.Stdout.WriteString(line + "\n")
	return 0
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// startActivator starts sa (a socket activator, in a session of its own) with its output
// kept, and at the test's end stops it (SIGTERM, then its whole group after 40 s), showing
// the output, named what, when the test failed.
func startActivator(t *testing.T, sa *exec.Cmd, what string) *syncBuffer {
	t.Helper()
	out := &syncBuffer{}
	sa.Stdout, sa.Stderr = out, out
	if err := sa.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sa.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { sa.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(40 * time.Second):
			syscall.Kill(-sa.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("%s: %s", what, out.String())
		}
	})
	return out
}
