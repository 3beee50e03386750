//go:build linux

package tests

// Issue 11 and 10: the cheap doors into brokerd and the host stay shut for a same-user process
// (ptrace, /proc/PID/mem, LD_PRELOAD), and whatever starts brokerd never chooses where its
// prompts appear.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/test/realtest"
)

// attackResult is what one same-uid attempt on a process got: "ok" or the errno's name.
type attackResult struct {
	Attach, Mem, Environ, Exe string
	// VMRead is process_vm_readv of one byte at the process's first mapping (read from
	// /proc/self/maps of the attacker's own view: any address will do, the permission check
	// comes first).
	VMRead string `json:",omitempty"`
	// DevTools is opening /proc/PID/fd/3 for writing: for the browser, the host's DevTools
	// channel (a second writer there could send any CDP command).
	DevTools string `json:",omitempty"`
}

// attack tries, as whatever uid runs it, to ptrace-attach each pid of ATTACK_PIDS
// ("name:pid,…"), open its /proc/PID/mem, read its environ and its exe link, and prints the
// outcomes as one JSON object.
func attack() int {
	runtime.LockOSThread() // ptrace requests come from the attaching thread
	out := map[string]attackResult{}
	outcome := func(err error) string {
		var errno syscall.Errno
		switch {
		case err == nil:
			return "ok"
		case errors.As(err, &errno):
			return errnoName(errno)
		}
		return err.Error()
	}
	for _, item := range strings.Split(os.Getenv("ATTACK_PIDS"), ",") {
		name, p, _ := strings.Cut(item, ":")
		pid, _ := strconv.Atoi(p)
		var r attackResult
		err := syscall.PtraceAttach(pid)
		r.Attach = outcome(err)
		if err == nil {
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, syscall.WALL, nil)
			syscall.PtraceDetach(pid)
		}
		f, err := os.OpenFile("/proc/"+p+"/mem", os.O_RDONLY, 0)
		r.Mem = outcome(unwrap(err))
		if err == nil {
			f.Close()
		}
		_, err = os.ReadFile("/proc/" + p + "/environ")
		r.Environ = outcome(unwrap(err))
		_, err = os.Readlink("/proc/" + p + "/exe")
		r.Exe = outcome(unwrap(err))
		if os.Getenv("ATTACK_VM") != "" {
			buf := make([]byte, 1)
			local := []unix.Iovec{{Base: &buf[0], Len: 1}}
			remote := []unix.RemoteIovec{{Base: 0x400000, Len: 1}}
			_, err = unix.ProcessVMReadv(pid, local, remote, 0)
			if errors.Is(err, syscall.EFAULT) {
				err = nil // permitted: the address just is not mapped there
			}
			r.VMRead = outcome(err)
		}
		if name == "chromium" {
			f, err := os.OpenFile("/proc/"+p+"/fd/3", os.O_WRONLY, 0)
			r.DevTools = outcome(unwrap(err))
			if err == nil {
				f.Close()
			}
		}
		out[name] = r
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return 0
}

func unwrap(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.EPERM:
		return "EPERM"
	case syscall.EACCES:
		return "EACCES"
	case syscall.ESRCH:
		return "ESRCH"
	case syscall.ENXIO:
		return "ENXIO"
	}
	return e.Error()
}

// nobody is uid 65534: the unprivileged user that runs both the daemons and the attacker.

// testUndumpableAgainstSameUID runs brokerd and the host (Chromium included) as an
// unprivileged uid, then, as that same uid, tries what a same-user attacker with a shell would:
// PTRACE_ATTACH, open /proc/PID/mem, read environ, read the exe link. All fail (EPERM, EACCES)
// for brokerd and the host; the same attempts on a dumpable process of that uid succeed, so
// the test can fail.
func testUndumpableAgainstSameUID(t *testing.T) {
	realtest.Need(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	root, err := os.MkdirTemp("", "headless-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	os.Chmod(root, 0o755)
	// The binaries as a careful install has them: root-owned, in a root-owned directory.
	bin := filepath.Join(root, "bin")
	os.Mkdir(bin, 0o755)
	self, _ := os.Executable()
	for src, dst := range map[string]string{filepath.Join(binDir, "brokerd"): "brokerd", filepath.Join(binDir, "headless"): "headless", self: "attacker"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeExecutable(filepath.Join(bin, dst), b, 0o755); err != nil {
			t.Fatal(err)
		}
		if group := map[string]string{"brokerd": hardening.BrokerGroup, "headless": hardening.HostGroup}[dst]; group != "" {
			gid, err := hardening.LookupGroup(group)
			if err != nil {
				t.Fatal(err)
			}
			if err := setGID(filepath.Join(bin, dst), gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, d := range []string{"run", "config", "data", "home"} {
		p := filepath.Join(root, d)
		os.Mkdir(p, 0o700)
		os.Chown(p, 65534, 65534)
	}
	k := realtest.StartKeyring(t, realtest.KeyringOptions{Credential: nobody})
	vars := []string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(root, "home"), "XDG_RUNTIME_DIR=" + filepath.Join(root, "run"),
		"XDG_CONFIG_HOME=" + filepath.Join(root, "config"), "XDG_DATA_HOME=" + filepath.Join(root, "data"), "LANG=C.UTF-8",
		"DBUS_SESSION_BUS_ADDRESS=" + k.Addr}
	asNobody := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Env = vars
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: nobody}
		return cmd
	}
	brokerd := asNobody("brokerd")
	var bse bytes.Buffer
	brokerd.Stderr = &bse
	if err := brokerd.Start(); err != nil {
		t.Fatal(err)
	}
	bdone := make(chan struct{})
	go func() { brokerd.Wait(); close(bdone) }()
	t.Cleanup(func() {
		brokerd.Process.Signal(syscall.SIGTERM) // its host goes with it
		select {
		case <-bdone:
		case <-time.After(40 * time.Second):
			brokerd.Process.Kill()
			<-bdone
		}
	})
	sock := filepath.Join(root, "run", "headless", "broker.sock")
	if !pollUntil(10*time.Second, func() bool { _, err := os.Stat(sock); return err == nil }) {
		t.Fatalf("brokerd as nobody did not come up: %s", bse.String())
	}
	out, err := asNobody("headless", "start", "--json").CombinedOutput()
	if err != nil {
		t.Fatalf("headless start as nobody: %v\n%s", err, out)
	}
	var started struct {
		Host struct{ PID int } `json:"host"`
	}
	json.Unmarshal(out, &started)
	hostPID := started.Host.PID
	if st, _ := os.Stat("/proc/" + strconv.Itoa(hostPID)); st == nil || hostPID == 0 {
		t.Fatalf("no host: %s", out)
	}
	for _, pid := range []int{brokerd.Process.Pid, hostPID} {
		// /proc/PID of an undumpable process belongs to root; its status still names the uid.
		status, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if !strings.Contains(string(status), "\nUid:\t65534\t65534\t65534\t65534\n") {
			t.Fatalf("pid %d does not run as uid 65534: the test proves nothing\n%s", pid, status)
		}
	}
	// The host, run through /proc/self/fd/N, names itself "headless" even as an unprivileged,
	// undumpable process: process chains in audit records and prompts name it so (red-team
	// round 6b, as an ordinary user, saw "100").
	if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(hostPID) + "/comm"); string(comm) != "headless\n" {
		t.Errorf("the host's comm is %q; want \"headless\"", comm)
	}
	// A dumpable process of the same uid: the control.
	control := exec.Command("sleep", "60")
	control.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
	if err := control.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { control.Process.Kill(); control.Wait() }()

	var pre struct {
		Host struct {
			BrowserPID int `json:"browser_pid"`
		} `json:"host"`
	}
	preOut, _ := asNobody("headless", "status", "--json").Output()
	if json.Unmarshal(preOut, &pre); pre.Host.BrowserPID == 0 {
		t.Fatalf("no browser pid: %s", preOut)
	}
	// Every process of the browser's tree: a typed password is in the renderer's memory and
	// the browser's (red-team round 7 read it out of both with /proc/PID/mem).
	targets := fmt.Sprintf("brokerd:%d,host:%d,control:%d,chromium:%d", brokerd.Process.Pid, hostPID, control.Process.Pid, pre.Host.BrowserPID)
	kids := slices.DeleteFunc(procTree(pre.Host.BrowserPID), func(p int) bool { return p == pre.Host.BrowserPID })
	if len(kids) < 2 {
		t.Fatalf("the browser has %d child processes; want its zygotes and renderers", len(kids))
	}
	for i, pid := range kids {
		targets += fmt.Sprintf(",chromium-%d:%d", i, pid)
	}
	atk := asNobody("attacker")
	atk.Env = append(append([]string{}, vars...), helperEnv+"=attack", "ATTACK_PIDS="+targets)
	aout, err := atk.Output()
	if err != nil {
		t.Fatalf("attacker: %v %s", err, aout)
	}
	var got map[string]attackResult
	if err := json.Unmarshal(aout, &got); err != nil {
		t.Fatalf("attacker output %q", aout)
	}
	t.Logf("same-uid attempts: %+v", got)
	if c := got["control"]; c != (attackResult{Attach: "ok", Mem: "ok", Environ: "ok", Exe: "ok"}) {
		t.Fatalf("the attacker could not even reach a dumpable process of its uid (%+v): the test proves nothing", c)
	}
	for _, name := range []string{"brokerd", "host"} {
		r := got[name]
		if r.Attach != "EPERM" || r.Mem != "EACCES" || r.Environ != "EACCES" || r.Exe != "EACCES" {
			t.Errorf("%s: same-uid attach %s, /proc/PID/mem %s, environ %s, exe %s; want EPERM, EACCES, EACCES, EACCES", name, r.Attach, r.Mem, r.Environ, r.Exe)
		}
	}
	// Chromium's processes are closed too: its binary is one the user cannot read
	// (scripts/install-deps.sh, the package), so the kernel makes each of them undumpable at
	// exec, in the system's user namespace, and the setuid sandbox keeps them so. (A process
	// that is gone meanwhile, ENOENT, is no exception: it has no memory left.)
	for name, r := range got {
		if !strings.HasPrefix(name, "chromium") || (r.Attach == "ESRCH" && r.Mem == "ENOENT") {
			continue
		}
		if r.Attach != "EPERM" || r.Mem != "EACCES" {
			t.Errorf("%s: same-uid attach %s, /proc/PID/mem %s; want EPERM, EACCES (is /usr/lib/chromium/chromium mode 0711, chromium-sandbox installed?)", name, r.Attach, r.Mem)
		}
	}
	// And its DevTools channel cannot be reopened through /proc: it is a socket (red-team
	// round 2 injected CDP through /proc/PID/fd/3 when it was a pipe).
	if c := got["chromium"]; c.DevTools != "EACCES" && c.DevTools != "ENXIO" {
		t.Errorf("the browser's DevTools channel opened by a same-uid process: %q, want EACCES or ENXIO", c.DevTools)
	}
	// brokerd and the host say so themselves (the doctor's facts).
	var st struct {
		Host struct {
			Undumpable bool `json:"undumpable"`
		} `json:"host"`
		Broker struct {
			Facts struct {
				Undumpable  bool   `json:"undumpable"`
				PtraceScope string `json:"ptrace_scope"`
				Binaries    []struct {
					Path         string `json:"path"`
					UserWritable bool   `json:"user_writable"`
				} `json:"binaries"`
			} `json:"facts"`
		} `json:"broker"`
	}
	sout, _ := asNobody("headless", "status", "--json").Output()
	json.Unmarshal(sout, &st)
	f := st.Broker.Facts
	if !st.Host.Undumpable || !f.Undumpable || f.PtraceScope != hardening.PtraceScope() || len(f.Binaries) != 2 ||
		f.Binaries[0].Path != filepath.Join(bin, "brokerd") || f.Binaries[0].UserWritable || f.Binaries[1].Path != filepath.Join(bin, "headless") || f.Binaries[1].UserWritable {
		t.Errorf("the doctor's facts (undumpable, ptrace_scope, root-owned binaries not replaceable by uid 65534): %s", sout)
	}
	// brokerd's and the doctor's check of the Chromium binary accept one the user cannot read
	// (mode 0711: the point of it), which they cannot look into for an ELF header.
	var doc struct {
		Checks []struct{ ID, State, Detail string } `json:"checks"`
	}
	dout, _ := asNobody("headless", "doctor", "--json").Output()
	json.Unmarshal(dout, &doc)
	chromiumChecked := false
	for _, c := range doc.Checks {
		if c.ID == "chromium" {
			chromiumChecked = true
			if c.State != "healthy" {
				t.Errorf("the doctor as uid 65534 on Chromium: %s %s; want healthy", c.State, c.Detail)
			}
		}
	}
	if !chromiumChecked {
		t.Errorf("no chromium check in the doctor's report: %s", dout)
	}
	// A Chromium and a pinentry of the user's own (ELF, theirs to replace) are refused: a
	// wrapper there reads what is typed (red-team round 8 ran both, with a config and a
	// brokerd of its own). brokerd's checks are the doctor's (hardening.NotReplaceable).
	own := filepath.Join(root, "home")
	for _, name := range []string{"chromium", "pinentry"} {
		b, _ := os.ReadFile("/usr/bin/true")
		p := filepath.Join(own, name)
		writeExecutable(p, b, 0o755)
		os.Chown(p, 65534, 65534)
	}
	cfgDir := filepath.Join(root, "config", "headless")
	os.Mkdir(cfgDir, 0o700)
	os.Chown(cfgDir, 65534, 65534)
	cfgFile := filepath.Join(cfgDir, "config.json")
	os.WriteFile(cfgFile, []byte(fmt.Sprintf(`{"presence":{"provider":"passphrase","program":%q},"chromium":%q}`, filepath.Join(own, "pinentry"), filepath.Join(own, "chromium"))), 0o600)
	os.Chown(cfgFile, 65534, 65534)
	dout, _ = asNobody("headless", "doctor", "--json").Output()
	os.Remove(cfgFile)
	doc.Checks = nil
	json.Unmarshal(dout, &doc)
	refused := map[string]bool{}
	for _, c := range doc.Checks {
		if c.ID == "chromium" && c.State == "failed" && strings.Contains(c.Detail, "owned by you") {
			refused[c.ID] = true
		}
	}
	// (The pinentry's refusal, the same check, is TestNotReplaceable's: this doctor reports
	// the running brokerd's provider, not the file's.)
	if !refused["chromium"] {
		t.Errorf("a Chromium of uid 65534's own: refused %v; want it failed as replaceable\n%s", refused, dout)
	}
	if o, err := asNobody("headless", "stop", "--json").CombinedOutput(); err != nil || !strings.Contains(string(o), `"broker_left_running":`+strconv.Itoa(brokerd.Process.Pid)) {
		t.Errorf("stop: %v %s", err, o)
	}
}

// TestLDPreloadHasNoEffect: a library whose constructor writes a marker file is preloaded into
// several headless subcommands, an auto-started brokerd, a person-started brokerd and the host
// they start; the marker never appears. The same preload into a dynamic program (/bin/true)
// writes it, so the test can fail.
func TestLDPreloadHasNoEffect(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	gcc := realtest.Binary(t, "gcc")
	dir := t.TempDir()
	markers := filepath.Join(dir, "markers")
	os.Mkdir(markers, 0o700)
	src := filepath.Join(dir, "marker.c")
	os.WriteFile(src, []byte(`#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
	const char *d = getenv("MARKER_DIR");
	char p[4096];
	if (!d) d = "`+markers+`";
	snprintf(p, sizeof p, "%s/%d", d, (int)getpid());
	FILE *f = fopen(p, "w");
	if (f) { fputs("preloaded\n", f); fclose(f); }
}
`), 0o600)
	lib := filepath.Join(dir, "libmarker.so")
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	preload := []string{"LD_PRELOAD=" + lib, "LD_LIBRARY_PATH=" + dir, "MARKER_DIR=" + markers}
	count := func() int { ents, _ := os.ReadDir(markers); return len(ents) }

	// The control: a dynamic program gets the library.
	ctl := exec.Command("/bin/true")
	ctl.Env = append(append([]string{}, e.vars...), preload...)
	if err := ctl.Run(); err != nil || count() != 1 {
		t.Fatalf("the preload does not work on /bin/true (%v, %d markers): the test proves nothing", err, count())
	}
	os.RemoveAll(markers)
	os.Mkdir(markers, 0o700)

	e.vars = append(e.vars, preload...)
	program, _ := presencetest.FakePinentry(t, "approve")
	e.pinentryConfig(program)
	for _, args := range [][]string{{"version"}, {"help"}, {"credentials", "list", "--json"}, {"status", "--json"}, {"start", "--json"}, {"status", "--json"}, {"stop", "--json"}} {
		if r := e.run("", "headless", args...); r.code != 0 {
			t.Fatalf("headless %v: %+v", args, r)
		}
	}
	if r := e.run("", "brokerd", "--version"); r.code != 0 {
		t.Fatalf("brokerd --version: %+v", r)
	}
	b := e.startBrokerd()
	e.start(t)
	e.ok(t, nil, "stop")
	b.Stop()
	if n := count(); n != 0 {
		ents, _ := os.ReadDir(markers)
		t.Fatalf("the preloaded library ran in %d processes: %v", n, ents)
	}
}

// TestPresenceDrawnWhereThePersonIs: a brokerd auto-started by an agent's verb, in an agent's
// environment with DISPLAY, WAYLAND_DISPLAY, XAUTHORITY and a bus address, passes none of them
// to the pinentry; the config's presence.display is used instead when set; a brokerd the
// person started uses its own environment. 'headless stop' stops the auto-started brokerd and
// leaves the person's running, saying so.
func TestPresenceDrawnWhereThePersonIs(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	e.vars = append(e.vars, "DISPLAY=:66", "WAYLAND_DISPLAY=wayland-agent", "XAUTHORITY=/tmp/agent-xauthority")
	program, plog := presencetest.FakePinentry(t, "approve")
	if r := e.addCredential("ops", "ops@example.test", newCanary()); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	e.stopBroker() // it read the config before there was one
	verify := func(t *testing.T) []string {
		t.Helper()
		before := len(presencetest.Env(t, plog))
		if r := e.run("", "headless", "credentials", "verify", "--origin", origin, "--alias", "ops", "--json"); r.code != 0 {
			t.Fatalf("verify: %+v", r)
		}
		runs := presencetest.Env(t, plog)
		if len(runs) != before+1 {
			t.Fatalf("pinentry runs %d → %d", before, len(runs))
		}
		return runs[len(runs)-1]
	}
	stopped := func(t *testing.T) (struct{ Stopped stopResultJSON }, result) {
		t.Helper()
		r := e.run("", "headless", "stop", "--json")
		var s struct{ Stopped stopResultJSON }
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &s) != nil {
			t.Fatalf("stop: %+v", r)
		}
		return s, r
	}

	t.Run("auto-started: nothing from the agent's environment", func(t *testing.T) {
		e.pinentryConfig(program)
		e.start(t) // auto-starts brokerd
		var v struct{ Broker struct{ Started string } }
		e.ok(t, &v, "status")
		if v.Broker.Started != "auto" {
			t.Fatalf("status: brokerd started by %q", v.Broker.Started)
		}
		if got := verify(t); len(got) != 0 {
			t.Errorf("the pinentry of an auto-started brokerd got %v", got)
		}
		pid := e.brokerPID()
		s, _ := stopped(t)
		if s.Stopped.Broker != pid || s.Stopped.BrokerLeftRunning != 0 || procAlive(pid) {
			t.Errorf("stop did not stop the auto-started brokerd %d: %+v", pid, s)
		}
	})
	t.Run("auto-started: the config's display", func(t *testing.T) {
		e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"pinentry","program":%q,"timeout_seconds":5,"display":":7","xauthority":"/home/person/.Xauthority"}}`, program))
		e.start(t)
		got := verify(t)
		slices.Sort(got)
		if want := []string{"DISPLAY=:7", "XAUTHORITY=/home/person/.Xauthority"}; !slices.Equal(got, want) {
			t.Errorf("pinentry env %v, want %v", got, want)
		}
		stopped(t)
	})
	t.Run("person-started: its own environment, and stop leaves it", func(t *testing.T) {
		e.pinentryConfig(program)
		b := e.startBrokerd()
		e.start(t)
		got := verify(t)
		slices.Sort(got)
		if want := []string{"DBUS_SESSION_BUS_ADDRESS=" + e.k.Addr, "DISPLAY=:66", "WAYLAND_DISPLAY=wayland-agent", "XAUTHORITY=/tmp/agent-xauthority"}; !slices.Equal(got, want) {
			t.Errorf("pinentry env %v, want %v", got, want)
		}
		s, _ := stopped(t)
		if s.Stopped.Broker != 0 || s.Stopped.BrokerLeftRunning != b.Pid() || !strings.Contains(s.Stopped.Note, "started by you, not by headless: left running") || !procAlive(b.Pid()) {
			t.Errorf("stop and the person's brokerd %d: %+v", b.Pid(), s)
		}
		if h := e.run("", "headless", "stop"); h.code != 0 || !strings.Contains(h.stdout, fmt.Sprintf("brokerd (pid %d) was started by you, not by headless: left running", b.Pid())) {
			t.Errorf("human stop output: %+v", h)
		}
		if err := b.Stop(); err != nil {
			t.Errorf("the person's brokerd: %v", err)
		}
	})
}

type stopResultJSON struct {
	Host              int    `json:"host_pid"`
	Broker            int    `json:"broker_pid"`
	BrokerLeftRunning int    `json:"broker_left_running"`
	Note              string `json:"note"`
}

// TestControlSocketFailureIsHostUnavailable: a host that dies in the middle of a call is
// HOST_UNAVAILABLE with the host's hint, never BROKER_UNAVAILABLE ("start brokerd").
func TestControlSocketFailureIsHostUnavailable(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	e.start(t)
	host := e.hostStatus(t)
	cmd := e.command("headless", "wait", "--text", "never-there", "--timeout", "60s", "--json")
	var so bytes.Buffer
	cmd.Stdout = &so
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The wait is in the host once the command holds a connection (and a moment more).
	if !pollUntil(30*time.Second, func() bool { return hasSocket(cmd.Process.Pid) }) {
		t.Fatal("the wait command never connected to control.sock")
	}
	time.Sleep(500 * time.Millisecond)
	syscall.Kill(host.PID, syscall.SIGKILL)
	cmd.Wait()
	r := result{stdout: so.String()}
	if code := errCode(t, r); code != "HOST_UNAVAILABLE" || !strings.Contains(so.String(), "headless start") {
		t.Fatalf("a host killed mid-call: %s", so.String())
	}
	// A fresh host reaps what the killed one's Chromium left (its crash handlers).
	pollUntil(10*time.Second, func() bool { return !procAlive(host.BrowserPID) })
	e.start(t)
}
