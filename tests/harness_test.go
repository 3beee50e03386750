//go:build linux

// Package tests runs the real brokerd and headless binaries end to end against a real
// gnome-keyring Secret Service on a private D-Bus bus, with real Unix sockets, pseudo-terminals
// and signals. The only stand-in is the human at the presence prompt (a scripted pinentry
// speaking Assuan). Opt in with HEADLESS_REAL=1 (.ci/run does); then a missing component fails.
package tests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/test/realtest"
)

var (
	binDir   string
	buildErr error
)

func TestMain(m *testing.M) {
	// This test binary doubles as the attacker's scripts (a raw broker.sock client, a ptrace
	// attempt): see runHelper.
	if helper := os.Getenv(helperEnv); helper != "" {
		os.Exit(runHelper(helper))
	}
	if os.Getenv(netnsSiteEnv) == "1" {
		// TestNoUnrequestedTraffic's site, inside its network namespace: no binaries, no
		// worlds of its own.
		os.Exit(m.Run())
	}
	if filepath.Base(os.Args[0]) == chromiumWrap {
		// A copy of this binary named as the config's Chromium (TestAsUser65534/BoundaryUserChromium): it
		// says that it ran, and does nothing else.
		os.WriteFile(os.Args[0]+".ran", nil, 0o644)
		os.Exit(1)
	}
	ownBin := false
	if dir := os.Getenv("HEADLESS_E2E_BIN"); realtest.Enabled() && dir != "" {
		// Binaries built elsewhere by scripts/build.sh (scripts/test.sh's one build, another
		// branch's): the tests run against those instead, made set-gid as the install makes
		// them. brokerd trusts only a headless of its own build, so DIR must hold both, from
		// one build.
		binDir = dir
		for _, name := range []string{"brokerd", "headless"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				buildErr = fmt.Errorf("HEADLESS_E2E_BIN=%s: %v", dir, err)
			}
		}
		if buildErr == nil {
			buildErr = installSetGID(dir)
		}
	} else if realtest.Enabled() {
		ownBin = true
		dir, err := os.MkdirTemp("", "headless-e2e-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		binDir = dir
		// The project's one build command (static binaries, CGO_ENABLED=0): what runs here is
		// what a user runs.
		out, err := exec.Command("bash", filepath.Join(realtest.Root(nil), "scripts", "build.sh"), dir).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build binaries: %v\n%s", err, out)
		} else {
			buildErr = installSetGID(dir)
		}
	}
	code := m.Run()
	// What this process's worlds left running (never another test process's: the worlds of a
	// test binary run inside TestNoUnrequestedTraffic's network namespace, or of a parallel run,
	// share binDir), and anything of its own build.
	leaked := worldProcesses()
	if ownBin {
		leaked = append(leaked, processesFrom(binDir)...)
	}
	if len(leaked) > 0 {
		fmt.Fprintf(os.Stderr, "tests leaked processes: %v\n", leaked)
		for _, p := range leaked {
			syscall.Kill(p, syscall.SIGKILL)
		}
		code = 1
	}
	if ownBin {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// installSetGID makes the binaries in dir as the install does (scripts/install.sh): root-owned,
// brokerd set-gid to headless-broker, headless to headless, in a directory every user may
// enter (the tests that run as another user exec them). The groups and the seal key are the
// install's (test.sh runs it first): without them brokerd trusts no host and reads no key.
func installSetGID(dir string) error {
	if os.Getuid() != 0 {
		return fmt.Errorf("the end-to-end tests run as root (they install set-gid binaries, and run the threat as another user): run them through scripts/test.sh")
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	for name, group := range map[string]string{"brokerd": hardening.BrokerGroup, "headless": hardening.HostGroup} {
		gid, err := hardening.LookupGroup(group)
		if err != nil {
			return fmt.Errorf("%w: run 'sudo scripts/install.sh' first (scripts/test.sh does)", err)
		}
		if err := setGID(filepath.Join(dir, name), gid); err != nil {
			return err
		}
	}
	return nil
}

// setGID makes path root-owned and set-gid to gid, mode 2755.
func setGID(path string, gid int) error {
	if err := os.Chown(path, 0, gid); err != nil {
		return err
	}
	return os.Chmod(path, 0o755|os.ModeSetgid)
}

// processesFrom lists pids whose executable lives in dir.
func processesFrom(dir string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink("/proc/" + e.Name() + "/exe")
		if err == nil && strings.HasPrefix(exe, dir+"/") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// env is one user's world: a private keyring, XDG dirs in a temp dir, the built binaries.
type env struct {
	t       testing.TB
	root    string
	k       *realtest.Keyring
	vars    []string
	outputs *bytes.Buffer // every stdout/stderr/tty byte any command produced, for canary sweeps
	mu      sync.Mutex
	cred    *syscall.Credential // nil: root
	// netns, when set, is the network namespace every command of the env runs in (root's
	// envs only: 'ip netns exec' enters it).
	netns string
	// display is the X server of a run with windows (display_test.go's windowConfig).
	display string
}

// own gives path to the env's user (nothing for root's envs).
func (e *env) own(path string) {
	if e.cred != nil {
		if err := os.Chown(path, int(e.cred.Uid), int(e.cred.Gid)); err != nil {
			e.t.Fatal(err)
		}
	}
}

type envOptions struct {
	noBus bool // no DBUS_SESSION_BUS_ADDRESS at all
	// user runs everything of the env — the keyring, brokerd, the host, every command — as
	// the unprivileged uid 65534, as a person (and an agent) on a stock machine are: root is
	// kept out of nothing, so the threat is shown as that user.
	user bool
}

// nobody is the unprivileged identity of user envs and of the threat tests.
var nobody = &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	realtest.Need(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	root, err := os.MkdirTemp("", "headless-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, root: root, outputs: &bytes.Buffer{}}
	if os.Getenv(windowEnv) == "x11" {
		e.display = xvfb(t) // before the env's clean-up: the browser goes before its display
	}
	worlds.mu.Lock()
	worlds.roots = append(worlds.roots, root)
	worlds.mu.Unlock()
	if o.user {
		e.cred = nobody
		os.Chmod(root, 0o755)
	}
	for _, d := range []string{"run", "config", "data", "home"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
		e.own(filepath.Join(root, d))
	}
	e.vars = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(root, "home"),
		"XDG_RUNTIME_DIR=" + filepath.Join(root, "run"),
		"XDG_CONFIG_HOME=" + filepath.Join(root, "config"),
		"XDG_DATA_HOME=" + filepath.Join(root, "data"),
		"LANG=C.UTF-8",
		"TERM=xterm",
	}
	if !o.noBus {
		e.k = realtest.StartKeyring(t, realtest.KeyringOptions{Credential: e.cred})
		e.vars = append(e.vars, "DBUS_SESSION_BUS_ADDRESS="+e.k.Addr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			e.logTails()
		}
		if _, err := os.Stat(filepath.Join(e.runDir(), "control.sock")); err == nil {
			e.run("", "headless", "stop", "--json")
		}
		e.stopBroker()
		if left := e.leftovers(); len(left) > 0 {
			var what []string
			for _, p := range left {
				cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
				what = append(what, fmt.Sprintf("%d %.120s", p, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
			}
			t.Errorf("processes of this test still running after stop: %v", what)
			for _, p := range left {
				syscall.Kill(p, syscall.SIGKILL)
			}
		}
		e.forgetAnchors()
		os.RemoveAll(root)
	})
	return e
}

// forgetAnchors removes what brokerd keeps of the world's audit logs in its state directory
// (their anchors and decisions, auditwriter.FilesOf): the world is the suite's and goes now,
// and a machine that runs the suite again and again filled the 1024 anchors of its user with
// them, which then had brokerd evict the anchors of the logs in use (AUDIT_TAMPERED,
// "unanchored", in every audit test). The logs are those brokerd anchored under the world's
// real path (brokerd anchors a log by its directory's real path), a log a test deleted
// included, and the world's audit.jsonl files wherever a test put its data dir (when the list
// cannot be read: a boundary test leaves a file there that is not brokerd's).
func (e *env) forgetAnchors() {
	uid := os.Getuid()
	if e.cred != nil {
		uid = int(e.cred.Uid)
	}
	real, err := filepath.EvalSymlinks(e.root)
	if err != nil {
		return
	}
	logs := map[string]bool{}
	a, err := auditwriter.ReadAnchors(hardening.StateDir, uid)
	var list []audit.Anchor
	if err == nil {
		list, err = a.List()
	}
	for _, an := range list {
		if strings.HasPrefix(an.Path, real+"/") {
			logs[an.Path] = true
		}
	}
	if err != nil {
		logs[filepath.Join(real, "data", "headless", "audit.jsonl")] = true
		filepath.WalkDir(real, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() == "audit.jsonl" {
				logs[p] = true
			}
			return nil
		})
	}
	for p := range logs {
		for _, f := range auditwriter.FilesOf(hardening.StateDir, uid, p) {
			os.Remove(f)
		}
	}
}

// logTails logs the last lines of the env's brokerd.log and host.log (a failed test's world
// is removed at its end; the logs hold no secret: TestLeakSweep sweeps them).
func (e *env) logTails() {
	for _, name := range []string{"brokerd.log", "host.log"} {
		b, err := os.ReadFile(filepath.Join(e.runDir(), name))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		e.t.Logf("the last lines of %s:\n%s", name, strings.Join(lines[max(0, len(lines)-30):], "\n"))
	}
}

// leftovers lists live processes started for this env (they carry its root in their
// environment: brokerd, the host, Chromium and its helpers).
func (e *env) leftovers() []int { return processesOf([]string{e.root}) }

// worlds are the roots of every env this process made.
var worlds struct {
	mu    sync.Mutex
	roots []string
}

// worldProcesses lists the live processes of every env this process made.
func worldProcesses() []int {
	worlds.mu.Lock()
	roots := slices.Clone(worlds.roots)
	worlds.mu.Unlock()
	return processesOf(roots)
}

// processesOf lists live processes of the envs at roots: their environment names an env's
// runtime dir, or (Chromium overwrites its environment with its process title) their command
// line names a path under an env's root (its profile and temp dirs).
func processesOf(roots []string) []int {
	if len(roots) == 0 {
		return nil
	}
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() || isZombie(pid) {
			continue
		}
		env, _ := os.ReadFile("/proc/" + d.Name() + "/environ")
		cmdline, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		for _, root := range roots {
			if bytes.Contains(env, []byte("XDG_RUNTIME_DIR="+filepath.Join(root, "run")+"\x00")) || bytes.Contains(cmdline, []byte(root+"/")) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

func (e *env) runDir() string   { return filepath.Join(e.root, "run", "headless") }
func (e *env) sockPath() string { return filepath.Join(e.runDir(), "broker.sock") }

// brokerPID reads the pid of the brokerd holding the lock, or 0.
func (e *env) brokerPID() int {
	b, err := os.ReadFile(filepath.Join(e.runDir(), "broker.lock"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// stopBroker terminates a running brokerd (started by us or auto-started by the CLI). brokerd
// first stops the host it started (a graceful Browser.close, bounded by 30 s).
func (e *env) stopBroker() {
	pid := e.brokerPID()
	if pid <= 0 || syscall.Kill(pid, 0) != nil || !e.runs(pid) {
		return
	}
	syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 1750 && syscall.Kill(pid, 0) == nil && !isZombie(pid); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if syscall.Kill(pid, 0) == nil && !isZombie(pid) {
		e.t.Errorf("brokerd pid %d ignored SIGTERM for 35s", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// runs reports whether pid is a process of this env (its environment names the env's runtime
// dir): the lock file keeps the pid of a brokerd that exited, and with the other worlds
// running beside this one (parallel), the pid may be another world's process by now.
func (e *env) runs(pid int) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && bytes.Contains(env, []byte("XDG_RUNTIME_DIR="+filepath.Join(e.root, "run")+"\x00"))
}

// isZombie reports whether pid has exited (a zombie, or gone).
func isZombie(pid int) bool { return !procstat.Alive(pid) }

func (e *env) writeConfig(body string) string {
	body = e.windowConfig(body) // display_test.go: HEADLESS_E2E_WINDOW
	dir := filepath.Join(e.root, "config", "headless")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		e.t.Fatal(err)
	}
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		e.t.Fatal(err)
	}
	e.own(dir)
	e.own(p)
	return p
}

func (e *env) pinentryConfig(program string) {
	e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"pinentry","program":%q,"timeout_seconds":5}}`, program))
}

func (e *env) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	if e.netns != "" {
		cmd = exec.Command("ip", append([]string{"netns", "exec", e.netns, filepath.Join(binDir, name)}, args...)...)
	}
	cmd.Env = append([]string(nil), e.vars...)
	cmd.Dir = e.root
	// No controlling terminal: a new session without one.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: e.cred}
	return cmd
}

type result struct {
	stdout, stderr, tty string
	code                int
}

func (e *env) record(parts ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range parts {
		e.outputs.WriteString(p)
		e.outputs.WriteByte('\n')
	}
}

// run runs a binary without a terminal, with stdin as given (may be nil).
func (e *env) run(stdin string, name string, args ...string) result {
	e.t.Helper()
	cmd := e.command(name, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	r := result{stdout: so.String(), stderr: se.String(), code: exitCode(e.t, err)}
	e.record(r.stdout, r.stderr)
	return r
}

func exitCode(t testing.TB, err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	t.Fatalf("run: %v", err)
	return -1
}

// step is one exchange at the terminal: wait for prompt, then type input.
type step struct {
	prompt string
	input  string
}

// runTTY runs a binary whose controlling terminal is a fresh pty, answering steps in order.
// stdout and stderr are separate pipes; the tty transcript is returned.
func (e *env) runTTY(steps []step, name string, args ...string) result {
	e.t.Helper()
	return e.runTTYHook(steps, nil, name, args...)
}

// runTTYHook is runTTY calling hook(i, false, pid) right before step i's input is typed and
// hook(i, true, pid) right after, pid being the command's (hook may be nil): a fault test acts
// at an exact point of the exchange while the command waits.
func (e *env) runTTYHook(steps []step, hook func(i int, typed bool, pid int), name string, args ...string) result {
	e.t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		e.t.Fatal(err)
	}
	defer ptmx.Close()
	cmd := e.command(name, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	cmd.Stdin = tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Credential: e.cred}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	tty.Close()
	var transcript bytes.Buffer
	var tmu sync.Mutex
	readDone := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			tmu.Lock()
			transcript.Write(buf[:n])
			tmu.Unlock()
			if err != nil {
				close(readDone)
				return
			}
		}
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()
	seen := 0
	for si, s := range steps {
		deadline := time.Now().Add(20 * time.Second)
		for {
			tmu.Lock()
			i := strings.Index(transcript.String()[seen:], s.prompt)
			if i >= 0 {
				seen += i + len(s.prompt)
			}
			tmu.Unlock()
			if i >= 0 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				e.t.Fatalf("prompt %q never appeared; transcript %q; stderr %q", s.prompt, transcript.String(), se.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
		if hook != nil {
			hook(si, false, cmd.Process.Pid)
		}
		io.WriteString(ptmx, s.input)
		if hook != nil {
			hook(si, true, cmd.Process.Pid)
		}
	}
	var werr error
	select {
	case werr = <-waitDone:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		e.t.Fatalf("%s %v did not finish; transcript %q", name, args, transcript.String())
	}
	ptmx.Close()
	select {
	case <-readDone:
	case <-time.After(10 * time.Second): // the transcript's last bytes, read by now even on a loaded machine
	}
	tmu.Lock()
	r := result{stdout: so.String(), stderr: se.String(), tty: transcript.String(), code: exitCode(e.t, werr)}
	tmu.Unlock()
	e.record(r.stdout, r.stderr, r.tty)
	return r
}

// proc is a brokerd started by a test.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func (p *proc) Pid() int { return p.cmd.Process.Pid }

// Stop sends SIGTERM and returns brokerd's exit error (nil for status 0).
func (p *proc) Stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(35 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("brokerd ignored SIGTERM for 35s (it stops its host first, bounded by 30 s)")
	}
	return p.err
}

// startBrokerd runs brokerd in the foreground (no terminal) and waits for its socket.
func (e *env) startBrokerd() *proc {
	e.t.Helper()
	cmd := e.command("brokerd")
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	done := p.done
	go func() { p.err = cmd.Wait(); close(done) }()
	e.t.Cleanup(func() { p.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		// The socket file appears at bind, a moment before listen: until then a connect is
		// refused (seen on a loaded machine), so brokerd is up when a connect succeeds.
		if fi, err := os.Stat(e.sockPath()); err == nil && fi.Mode().Type() == os.ModeSocket && e.brokerPID() == cmd.Process.Pid {
			if c, err := net.Dial("unix", e.sockPath()); err == nil {
				c.Close()
				return p
			}
		}
		select {
		case <-done:
			e.t.Fatalf("brokerd exited: %s", se.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	e.t.Fatalf("brokerd did not come up: %s", se.String())
	return nil
}

// allOutput is every byte any command printed so far in this env.
func (e *env) allOutput() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.outputs.String()
}

// dialRaw connects to a Unix socket for raw-frame tests.
func dialRaw(t testing.TB, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// parallel runs t beside the other parallel tests (go test -parallel; scripts/test.sh sets
// it): its world is its own (a private bus and keyring, runtime, config and data dirs, sites
// on ports of their own), and brokerd keeps the one thing it shares with the other worlds of
// root, the state dir's sign-in paths, under a lock. The worlds of uid 65534 run one after
// another (TestAsUser65534), beside the others. The tests that are not parallel run first,
// one at a time: those that measure a bound in time (the stalls) and those that look at
// machine-wide places (the leak sweep of /tmp and /dev/shm, the load test).
func parallel(t *testing.T) { t.Parallel() }

// writeExecutable writes b to path with mode, through another process (sh and cat): no fork
// of this process may hold the file open for writing when it is executed. With tests starting
// commands in parallel, a fork made while this process wrote the file holds that descriptor
// until it execs, and an exec of the file meanwhile fails "text file busy" (ETXTBSY).
func writeExecutable(path string, b []byte, mode os.FileMode) error {
	cmd := exec.Command("sh", "-c", `cat > "$1" && chmod "$2" "$1"`, "sh", path, strconv.FormatUint(uint64(mode.Perm()), 8))
	cmd.Stdin = bytes.NewReader(b)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("write %s: %v: %s", path, err, out)
	}
	return nil
}
