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
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/realtest"
)

// TestSystemdUnitsVerify: systemd itself accepts the user units as shipped (ExecStart pointed at
// the built brokerd, since systemd-analyze checks that the program exists), with nothing to
// say, and they carry the settings the security contract relies on.
func TestSystemdUnitsVerify(t *testing.T) {
	realtest.Need(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	analyze := realtest.Binary(t, "systemd-analyze")
	src := filepath.Join(realtest.Root(t), "contrib", "systemd", "user")
	dir := t.TempDir()
	want := map[string][]string{
		"brokerd.socket":  {"ListenStream=%t/headless/broker.sock", "SocketMode=0600", "DirectoryMode=0700"},
		"brokerd.service": {"ExecStart=/usr/bin/brokerd", "NoNewPrivileges=yes", "UMask=0077", "LockPersonality=yes", "RestrictAddressFamilies=AF_UNIX", "KillMode=mixed"},
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

// TestBrokerdSocketActivationE2E: brokerd serves on a socket it inherits the way systemd passes
// it (systemd's own systemd-socket-activate: LISTEN_FDS/LISTEN_PID, the socket made before
// brokerd runs). The doctor sees the listener without triggering it; the first client starts
// brokerd, which works as usual (the host, a visit), says it was started by systemd, and is
// left running by 'headless stop'; another uid is still refused by its peer check even when
// the socket's mode would let it in.
func TestBrokerdSocketActivationE2E(t *testing.T) {
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
	var saOut bytes.Buffer
	sa.Stdout, sa.Stderr = &saOut, &saOut
	sa.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
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
			sa.Process.Kill()
		}
		if t.Failed() {
			t.Logf("systemd-socket-activate: %s", saOut.String())
		}
	})
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
	must(t, os.WriteFile(filepath.Join(pdir, "probe"), b, 0o755))
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
