//go:build linux

package tests

// Issue 26: the kernel is the boundary. Everything here runs as the unprivileged uid 65534 —
// the person and the agent alike, on this kernel (no Yama) — with the binaries installed as the
// install does (root-owned, set-gid): an alias sign-in works end to end, and each way a program
// of that user tried to get a secret out ends in a typed error with nothing released.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/broker/seal"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/vault"
)

const boundaryPass = "the person's headless passphrase"

// attackerIn copies this test binary (the attacker's scripts: see runHelper) into a root-owned
// directory uid 65534 may enter, and returns a command running helper as that uid in e.
func (e *env) attackerIn(t *testing.T, helper string, extra ...string) *exec.Cmd {
	t.Helper()
	dir := filepath.Join(e.root, "attacker")
	bin := filepath.Join(dir, "attacker")
	if _, err := os.Stat(bin); err != nil {
		self, _ := os.Executable()
		b, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		os.Mkdir(dir, 0o755)
		if err := writeExecutable(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin)
	cmd.Env = append(append(append([]string{}, e.vars...), helperEnv+"="+helper), extra...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: e.cred}
	return cmd
}

// userWorld is an env of uid 65534 with the passphrase provider (the scripted person types
// boundaryPass), brokerd running, and a sign-in site with the alias "main" saved.
func userWorld(t *testing.T, mode string) (*env, *loginSite, string) {
	t.Helper()
	e := newEnv(t, envOptions{user: true})
	program, log := presencetest.FakePinentryAs(t, mode, 65534, 65534)
	presencetest.Type(t, log, boundaryPass)
	if mode == "gate" {
		os.WriteFile(log+".gate", nil, 0o644) // open while the credential is saved
	}
	e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"passphrase","program":%q,"timeout_seconds":20}}`, program))
	e.startBrokerd()
	ls := newLoginSite(t)
	ls.SetAccount("admin@example.test", canaryBoundary)
	lsEnroll(t, e, ls.Origin(), "main", "admin@example.test", canaryBoundary)
	return e, ls, log
}

const canaryBoundary = "kernel-boundary-canary-Pw-4711"

// testBoundaryAliasLoginAsUser: as uid 65534 on a kernel without Yama (brokerd refused to work
// here before), the whole job works: enrol, visit, sign in by alias with the person's approval,
// authenticated. The saved record is sealed with the seal key and the passphrase.
func testBoundaryAliasLoginAsUser(t *testing.T) {
	e, ls, log := userWorld(t, "approve")
	e.start(t)
	lsVisit(t, e, ls.URL("/login"))
	lsLoginOK(t, e, "authenticated", "--alias", "main")
	if got := presencetest.Received(t, log); len(got) == 0 {
		t.Fatal("the person was never asked")
	}
	// What the keyring holds for the record is a v2 seal (key and passphrase).
	ss, err := vault.OpenSecretService(context.Background(), vault.SecretServiceOptions{Address: e.k.Addr})
	if err == nil {
		defer ss.Close()
	}
	var st struct {
		Broker struct {
			Untrusted string `json:"untrusted"`
		} `json:"broker"`
	}
	r := e.run("", "headless", "status", "--json")
	json.Unmarshal([]byte(r.stdout), &st)
	if st.Broker.Untrusted != "" {
		t.Fatalf("brokerd as uid 65534 says it is untrusted: %s", st.Broker.Untrusted)
	}
	e.sweep(t, canaryBoundary)
}

// sweep fails t when canary is in anything the env's commands printed.
func (e *env) sweep(t *testing.T, canary string) {
	t.Helper()
	if strings.Contains(e.allOutput(), canary) {
		t.Fatal("the canary password is in a command's output")
	}
}

// testBoundaryPassphraseAloneOpensNothing (a): the agent has the passphrase (a look-alike
// prompt harvested it), every keyring item the user's session hands out, and every file the
// user can read. With the project's own seal code it opens no saved password: the key file is
// refused to it, and no file it can read is the key. The same sealed text opens for root with
// the key: the test can fail.
func testBoundaryPassphraseAloneOpensNothing(t *testing.T) {
	e, _, _ := userWorld(t, "approve")
	out, err := e.attackerIn(t, "openall", "OPEN_PASS="+boundaryPass, "OPEN_FILES="+e.root).CombinedOutput()
	if err != nil {
		t.Fatalf("attacker: %v %s", err, out)
	}
	var got openAllResult
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("attacker output %q", out)
	}
	t.Logf("as uid 65534: %+v", got)
	if got.Items < 1 || got.Sealed != got.Items {
		t.Fatalf("the attacker read %d items, %d sealed; want the saved credential, sealed", got.Items, got.Sealed)
	}
	if got.Opened != 0 || strings.Contains(string(out), canaryBoundary) {
		t.Fatalf("the attacker opened %d saved passwords", got.Opened)
	}
	if !strings.Contains(got.KeyErr, "may not read the seal key") {
		t.Fatalf("the key file as uid 65534: %q; want it refused", got.KeyErr)
	}
	if got.Files == 0 {
		t.Fatal("the attacker tried no file as the key: the test proves nothing")
	}
	// The control: with the key (root reads it) and the passphrase the record opens.
	key, _, err := seal.LoadKey(hardening.KeyPath)
	if err != nil {
		t.Fatal(err)
	}
	defer key.Zero()
	pt, err := seal.Open([]byte(got.First.Text), key, []byte(boundaryPass), got.First.Binding)
	if err != nil || string(pt) != canaryBoundary {
		t.Fatalf("with the key the record does not open (%v): the test proves nothing", err)
	}
}

type openAllResult struct {
	Items, Sealed, Opened, Files int
	KeyErr                       string
	First                        struct {
		Text    string
		Binding seal.Binding
	}
}

// openAll is the attacker's offline attack: every item of the user's keyring (through the
// project's own Secret Service client), opened with the passphrase OPEN_PASS and with no key,
// with what the key file gives, and with every 32-byte file under OPEN_FILES as the key.
func openAll() int {
	var res openAllResult
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ss, err := vault.OpenSecretService(ctx, vault.SecretServiceOptions{Address: os.Getenv("DBUS_SESSION_BUS_ADDRESS")})
	if err != nil {
		fmt.Println("open", err)
		return 1
	}
	defer ss.Close()
	recs, err := ss.List(ctx, "")
	if err != nil {
		fmt.Println("list", err)
		return 1
	}
	pass := []byte(os.Getenv("OPEN_PASS"))
	var keys []*seal.Key
	if k, _, err := seal.LoadKey(hardening.KeyPath); err != nil {
		res.KeyErr = err.Error()
	} else {
		keys = append(keys, k)
	}
	// Every file it can read (its home, config, data, runtime dir, the keyring's files): its
	// first 32 bytes, and their SHA-256, each as a candidate key.
	filepath.WalkDir(os.Getenv("OPEN_FILES"), func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || res.Files >= 8 {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			return nil
		}
		res.Files++
		sum := sha256.Sum256(b)
		k1, _ := seal.NewKey(sum[:])
		keys = append(keys, k1)
		if len(b) >= seal.KeyLen {
			k2, _ := seal.NewKey(b[:seal.KeyLen])
			keys = append(keys, k2)
		}
		return nil
	})
	for _, r := range recs {
		_, text, err := ss.Secret(ctx, r.Origin, r.Alias)
		if err != nil {
			continue
		}
		res.Items++
		if !credential.IsSealed(text) {
			continue
		}
		res.Sealed++
		totp, _ := credential.ValidSaved(text)
		b := seal.Binding{Origin: r.Origin, Account: r.Account, Alias: r.Alias, TOTP: totp}
		if res.First.Text == "" {
			res.First.Text, res.First.Binding = string(text), b
		}
		for _, k := range append([]*seal.Key{nil}, keys...) {
			if _, err := seal.Open(text, k, pass, b); err == nil {
				res.Opened++
				break
			}
		}
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	return 0
}

// brokerdUntrusted starts cmd (a brokerd started the agent's way), waits for its socket in e,
// and returns what its version reply says; the caller's cleanup kills it.
func brokerdUntrusted(t *testing.T, e *env, cmd *exec.Cmd) string {
	t.Helper()
	var out syncBuffer
	if cmd.Stdout == nil && cmd.Stderr == nil {
		cmd.Stdout, cmd.Stderr = &out, &out
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	if !pollUntil(15*time.Second, func() bool { _, err := os.Stat(e.sockPath()); return err == nil }) {
		logb, _ := os.ReadFile(filepath.Join(e.runDir(), "brokerd.log"))
		t.Fatalf("brokerd did not come up; its output: %q; brokerd.log: %s", out.String(), logb)
	}
	var st struct {
		Broker struct {
			Untrusted string `json:"untrusted"`
		} `json:"broker"`
	}
	var r result
	pollUntil(10*time.Second, func() bool {
		r = e.run("", "headless", "status", "--json")
		return json.Unmarshal([]byte(r.stdout), &st) == nil && st.Broker.Untrusted != ""
	})
	return st.Broker.Untrusted
}

// wantNothingSaved: an add through this brokerd is BROKER_UNTRUSTED, and nothing was saved.
func wantNothingSaved(t *testing.T, e *env) {
	t.Helper()
	r := e.runTTY([]step{{"Password for", canaryBoundary + "\n"}, {"Repeat the password", canaryBoundary + "\n"}},
		"headless", "credentials", "add", "--origin", "https://app.example", "--account", "a", "--alias", "planted", "--json")
	if r.code == 0 || !strings.Contains(r.stdout, "BROKER_UNTRUSTED") {
		t.Fatalf("credentials add through it: exit %d %s %s; want BROKER_UNTRUSTED", r.code, r.stdout, r.stderr)
	}
}

// testBoundaryTracedBrokerd (b): the agent starts the genuine brokerd under its own tracer
// (PTRACE_TRACEME, then exec: red-team round 10 read the passphrase so). The kernel does not
// give a traced exec brokerd's group, so it has no seal key: it says so, and saves and
// releases nothing, asking nobody. The same brokerd untraced is trusted: the test can fail.
func testBoundaryTracedBrokerd(t *testing.T) {
	e := newEnv(t, envOptions{user: true})
	program, _ := presencetest.FakePinentryAs(t, "approve", 65534, 65534)
	e.pinentryConfig(program)
	why := brokerdUntrusted(t, e, e.attackerIn(t, "traceexec", "TRACE_EXEC="+filepath.Join(binDir, "brokerd")))
	if !strings.Contains(why, "did not give this brokerd its group") {
		t.Fatalf("a traced brokerd says %q; want it untrusted for want of its group", why)
	}
	wantNothingSaved(t, e)
}

// traceExec starts TRACE_EXEC traced from its exec (the way a debugger starts a program),
// lets it run on under the trace, and waits for it.
func traceExec() int {
	runtime.LockOSThread()
	cmd := exec.Command(os.Getenv("TRACE_EXEC"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true, Setsid: true}
	if err := cmd.Start(); err != nil { // returns with the child stopped at its exec
		fmt.Println("start", err)
		return 1
	}
	pid := cmd.Process.Pid
	// Wait for each stop before continuing from it: Start returns when the exec closed its
	// pipe, which may be before the child stopped at its exec's SIGTRAP, and a tracer that
	// gave up then would leave that SIGTRAP to kill the untraced child.
	for {
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err != nil || ws.Exited() || ws.Signaled() {
			break
		}
		// A signal stop: deliver the signal, as a debugger does (a SIGTRAP is the tracer's).
		sig := 0
		if ws.Stopped() && ws.StopSignal() != syscall.SIGTRAP {
			sig = int(ws.StopSignal())
		}
		if err := syscall.PtraceCont(pid, sig); err != nil {
			break
		}
	}
	return 0
}

// testBoundaryNamespacedBrokerd (c): the agent makes a user and mount namespace, covers its
// /proc/PID/uid_map with a file that says "the initial namespace", and execs the genuine
// brokerd inside: the kernel gives no group to an exec in a namespace that leaves root
// unmapped, so brokerd has no key and saves nothing.
func testBoundaryNamespacedBrokerd(t *testing.T) {
	e := newEnv(t, envOptions{user: true})
	program, _ := presencetest.FakePinentryAs(t, "approve", 65534, 65534)
	e.pinentryConfig(program)
	fake := filepath.Join(e.root, "home", "uid_map")
	os.WriteFile(fake, []byte("         0          0 4294967295\n"), 0o644)
	e.own(fake)
	cmd := exec.Command("unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
		`mount --bind "$0" /proc/$$/uid_map && exec "$1"`, fake, filepath.Join(binDir, "brokerd"))
	cmd.Env = e.vars
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: e.cred}
	why := brokerdUntrusted(t, e, cmd)
	if !strings.Contains(why, "may not read the seal key") {
		t.Fatalf("a namespaced brokerd says %q; want it refused the seal key", why)
	}
	wantNothingSaved(t, e)
}

// testBoundaryForgedHost (d): a config naming a host of the agent's is refused outright, and a
// copy of brokerd beside a modified headless (the agent's own directory, first on PATH) has no
// group, so no key: nothing is saved or released through either.
func testBoundaryForgedHost(t *testing.T) {
	e := newEnv(t, envOptions{user: true})
	own := filepath.Join(e.root, "home", "bin")
	os.Mkdir(own, 0o755)
	e.own(own)
	for _, name := range []string{"brokerd", "headless"} {
		b, _ := os.ReadFile(filepath.Join(binDir, name))
		p := filepath.Join(own, name)
		writeExecutable(p, b, 0o755) // the agent's copies: its own files, no set-gid
		e.own(p)
	}
	e.writeConfig(fmt.Sprintf(`{"host_program":%q}`, filepath.Join(own, "headless")))
	r := e.run("", "brokerd")
	if r.code == 0 || !strings.Contains(r.stderr, "host_program: is no longer read") {
		t.Fatalf("brokerd with a host_program: exit %d, %s; want a refused config", r.code, r.stderr)
	}
	program, _ := presencetest.FakePinentryAs(t, "approve", 65534, 65534)
	e.pinentryConfig(program)
	cmd := exec.Command(filepath.Join(own, "brokerd"))
	cmd.Env = append(append([]string{}, e.vars...), "PATH="+own+":/usr/bin:/bin")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: e.cred}
	if why := brokerdUntrusted(t, e, cmd); !strings.Contains(why, "did not give this brokerd its group") {
		t.Fatalf("the agent's copy of brokerd says %q; want it untrusted", why)
	}
	wantNothingSaved(t, e)
}

// testBoundaryScriptOnBrokerSock (e): a script of the agent's on broker.sock, saying the hello
// the genuine host says, asking for a challenge and a release of the saved alias, gets
// PEER_NOT_HOST: it is not the process brokerd started, and the kernel reports no headless
// group for it.
func testBoundaryScriptOnBrokerSock(t *testing.T) {
	e, ls, log := userWorld(t, "approve")
	e.start(t)
	before := len(presencetest.Received(t, log))
	out, _ := e.attackerIn(t, "rawclient", "RAW_SOCK="+e.sockPath(), "RAW_ORIGIN="+ls.Origin(), "RAW_ALIAS=main",
		"RAW_HELLO="+genuineHello(t, e)).CombinedOutput()
	m := replies(t, string(out))
	if replyCode(m["release"]) != "PEER_NOT_HOST" || strings.Contains(string(out), canaryBoundary) {
		t.Fatalf("the agent's script got %s", out)
	}
	if got := presencetest.Received(t, log); len(got) != before {
		t.Fatalf("the person was asked for the agent's script: %v", got[before:])
	}
}

// testBoundaryMemoryClosed (f): as uid 65534, ptrace, /proc/PID/mem and process_vm_readv of
// brokerd, the host, every Chromium process and the pinentry (open while it asks the person)
// are refused; the same calls on a plain process of that uid succeed.
func testBoundaryMemoryClosed(t *testing.T) {
	e, ls, log := userWorld(t, "gate")
	e.start(t)
	lsVisit(t, e, ls.URL("/login"))
	os.Remove(log + ".gate") // the prompt of the sign-in stays open until the person answers
	done := make(chan result, 1)
	go func() { done <- lsLogin(e, "--alias", "main") }()
	var pinentry int
	if !pollUntil(20*time.Second, func() bool { pinentry = pidOf("pinentry-fake"); return pinentry != 0 }) {
		t.Fatal("no pinentry came up for the sign-in")
	}
	control := exec.Command("sleep", "60")
	control.SysProcAttr = &syscall.SysProcAttr{Credential: e.cred}
	if err := control.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { control.Process.Kill(); control.Wait() }()
	st := e.hostStatus(t)
	targets := fmt.Sprintf("brokerd:%d,host:%d,pinentry:%d,control:%d", e.brokerPID(), st.PID, pinentry, control.Process.Pid)
	for i, pid := range procTree(st.BrowserPID) {
		targets += fmt.Sprintf(",chromium-%d:%d", i, pid)
	}
	out, err := e.attackerIn(t, "attack", "ATTACK_PIDS="+targets, "ATTACK_VM=1").Output()
	os.WriteFile(log+".gate", nil, 0o644) // the person approves: the sign-in goes on
	if r := <-done; r.code != 0 {
		t.Errorf("the sign-in after the attack: %+v", r)
	}
	if err != nil {
		t.Fatalf("attacker: %v %s", err, out)
	}
	var got map[string]attackResult
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("attacker output %q", out)
	}
	t.Logf("as uid 65534: %+v", got)
	if c := got["control"]; c.Attach != "ok" || c.Mem != "ok" || c.VMRead != "ok" {
		t.Fatalf("the attacker could not reach a plain process of its uid (%+v): the test proves nothing", c)
	}
	for name, r := range got {
		if name == "control" || r.Attach == "ESRCH" && r.Mem == "ENOENT" {
			continue // gone meanwhile: no memory left
		}
		if r.Attach != "EPERM" || r.Mem != "EACCES" || r.VMRead != "EPERM" {
			t.Errorf("%s: attach %s, /proc/PID/mem %s, process_vm_readv %s; want EPERM, EACCES, EPERM", name, r.Attach, r.Mem, r.VMRead)
		}
	}
	if len(got) < 6 {
		t.Fatalf("only %d processes attacked", len(got))
	}
}

// pidOf is the pid of the first process whose command line starts with a path ending in name.
func pidOf(name string) int {
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if arg0, _, _ := strings.Cut(string(b), "\x00"); strings.HasSuffix(arg0, "/"+name) {
			return pid
		}
	}
	return 0
}

// chromiumWrap is the name under which the test binary plays a Chromium of the agent's.
const chromiumWrap = "chromium-wrap"

// testBoundaryUserChromium: the agent names a program of its own as Chromium in the config.
// The host runs Chromium with the headless group, so that program would run with it and could
// read every later browser's memory (red-team round 11 left a daemon so): the host refuses to
// launch it, and it never runs. The config without it starts: the test can fail.
func testBoundaryUserChromium(t *testing.T) {
	e, _, _ := userWorld(t, "approve")
	dir := filepath.Join(e.root, "home", "bin")
	os.MkdirAll(dir, 0o755)
	e.own(dir)
	wrap := filepath.Join(dir, chromiumWrap)
	self, _ := os.Executable()
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeExecutable(wrap, b, 0o755); err != nil {
		t.Fatal(err)
	}
	e.own(wrap)
	cfg, _ := os.ReadFile(filepath.Join(e.root, "config", "headless", "config.json"))
	e.writeConfig(strings.Replace(string(cfg), "{", fmt.Sprintf(`{"chromium":%q,`, wrap), 1))
	r := e.fails(t, "BROWSER_FAILED", "start")
	if !strings.Contains(r.stdout, "Chromium was not launched") {
		t.Fatalf("start with the agent's Chromium: %s; want it not launched", r.stdout)
	}
	if _, err := os.Stat(wrap + ".ran"); err == nil {
		t.Fatal("the agent's Chromium ran")
	}
	e.writeConfig(string(cfg))
	e.stopBroker()
	e.startBrokerd()
	e.start(t)
}

// testBoundaryGroupStray: a process of the user with the headless group outside the browser
// (what a wrapper or a planted library of the agent's left behind in red-team round 11, to read
// the next browser's memory) makes the sign-in BROWSER_TAMPERED before anyone is asked: it and
// the browser are killed, nothing is typed. The next sign-in, with the process gone, works.
func testBoundaryGroupStray(t *testing.T) {
	e, ls, log := userWorld(t, "approve")
	e.start(t)
	gid, err := hardening.LookupGroup(hardening.HostGroup)
	if err != nil {
		t.Fatal(err)
	}
	stray := exec.Command("sleep", "600")
	stray.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: 65534, Gid: uint32(gid)}}
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- stray.Wait() }()
	t.Cleanup(func() { stray.Process.Kill() })
	lsVisit(t, e, ls.URL("/login"))
	asked := len(presencetest.Received(t, log))
	posts, typed := len(ls.Posts()), len(ls.Typed())
	lsLoginFails(t, e, []string{"BROWSER_TAMPERED"}, "--alias", "main")
	lsNothingTyped(t, ls, posts, typed)
	if got := len(presencetest.Received(t, log)); got != asked {
		t.Fatalf("the person was asked (%d lines at the pinentry, %d before)", got, asked)
	}
	select {
	case err := <-done:
		if ws, ok := stray.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("the stray ended %v; want killed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stray still runs")
	}
	e.run("", "headless", "visit", ls.URL("/login")) // BROWSER_CRASHED: the killed browser is relaunched
	lsVisit(t, e, ls.URL("/login"))
	lsLoginOK(t, e, "authenticated", "--alias", "main")
	e.sweep(t, canaryBoundary)
}

// testBoundaryUserPATH: the agent puts programs of its own first on PATH (xdg-settings,
// xdg-open: what Chromium runs by name when a page asks for a URL scheme nobody handles) and
// starts everything from that environment. Chromium runs with the headless group, so such a
// program would too (red-team round 11 read a typed password so): none of them runs.
func testBoundaryUserPATH(t *testing.T) {
	e, _, _ := userWorld(t, "approve")
	bin := filepath.Join(e.root, "home", "pbin")
	os.MkdirAll(bin, 0o755)
	e.own(bin)
	marker := filepath.Join(e.root, "home", "ran")
	for _, name := range []string{"xdg-settings", "xdg-open", "xdg-mime", "gio", "uname", "sh"} {
		p := filepath.Join(bin, name)
		writeExecutable(p, []byte("#!/bin/sh\necho \"$0 $*\" >> "+marker+"\nexec /usr/bin/"+name+" \"$@\"\n"), 0o755)
		e.own(p)
	}
	e.stopBroker()
	for i, v := range e.vars {
		if strings.HasPrefix(v, "PATH=") {
			e.vars[i] = "PATH=" + bin + ":" + strings.TrimPrefix(v, "PATH=")
		}
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>scheme</title><script>location.href='rtx2://auto'</script>`)
	}))
	defer page.Close()
	e.start(t) // brokerd started by the CLI, in the agent's environment
	e.run("", "headless", "visit", page.URL+"/")
	time.Sleep(3 * time.Second) // Chromium asks the system about the scheme meanwhile
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("a program of the agent's PATH ran: %s", b)
	}
}

// testBoundaryBusAddressUnixexec: the agent's environment names a bus address list whose first
// entry is "unixexec:" of a program of its own (red-team round 11, F4: Chromium's D-Bus library
// started it, with the headless group, as the browser's child, and it read a typed password).
// Only a single unix address is used: the start fails for want of a bus, and the program never
// runs. The same environment with the real address alone starts: the test can fail.
func testBoundaryBusAddressUnixexec(t *testing.T) {
	e, _, _ := userWorld(t, "approve")
	marker := filepath.Join(e.root, "home", "dx-ran")
	dx := filepath.Join(e.root, "home", "dx")
	writeExecutable(dx, []byte("#!/bin/sh\necho ran >> "+marker+"\n"), 0o755)
	e.own(dx)
	e.stopBroker()
	real := ""
	for i, v := range e.vars {
		if a, ok := strings.CutPrefix(v, "DBUS_SESSION_BUS_ADDRESS="); ok {
			real = a
			e.vars[i] = "DBUS_SESSION_BUS_ADDRESS=unixexec:path=" + dx + ",argv0=dx;" + a
		}
	}
	if real == "" {
		t.Fatal("no bus address in the env")
	}
	r := e.run("", "headless", "start", "--json")
	if r.code == 0 || errCode(t, r) != "VAULT_UNAVAILABLE" {
		t.Fatalf("start with a unixexec: bus address: exit %d %s; want VAULT_UNAVAILABLE", r.code, r.stdout)
	}
	time.Sleep(time.Second)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the agent's unixexec: program ran")
	}
	e.run("", "headless", "stop")
	e.stopBroker()
	for i, v := range e.vars {
		if strings.HasPrefix(v, "DBUS_SESSION_BUS_ADDRESS=") {
			e.vars[i] = "DBUS_SESSION_BUS_ADDRESS=" + real
		}
	}
	e.start(t)
}

// TestAsUser65534 runs, one after another, the tests whose daemons run as the unprivileged uid
// 65534 (a person and an agent on a stock machine), beside the other parallel tests: two
// worlds of one uid at once would see each other's browser processes as strays of the
// headless group (the host kills those). Run one alone with -run 'TestAsUser65534/NAME'.
func TestAsUser65534(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		name string
		test func(*testing.T)
	}{
		{"BoundaryAliasLoginAsUser", testBoundaryAliasLoginAsUser},
		{"BoundaryPassphraseAloneOpensNothing", testBoundaryPassphraseAloneOpensNothing},
		{"BoundaryTracedBrokerd", testBoundaryTracedBrokerd},
		{"BoundaryNamespacedBrokerd", testBoundaryNamespacedBrokerd},
		{"BoundaryForgedHost", testBoundaryForgedHost},
		{"BoundaryScriptOnBrokerSock", testBoundaryScriptOnBrokerSock},
		{"BoundaryMemoryClosed", testBoundaryMemoryClosed},
		{"BoundaryUserChromium", testBoundaryUserChromium},
		{"BoundaryGroupStray", testBoundaryGroupStray},
		{"BoundaryUserPATH", testBoundaryUserPATH},
		{"BoundaryBusAddressUnixexec", testBoundaryBusAddressUnixexec},
		{"UndumpableAgainstSameUID", testUndumpableAgainstSameUID},
		{"UndumpableRefusedUnderAFakingSeccompFilter", testUndumpableRefusedUnderAFakingSeccompFilter},
		{"SystemdUnitAsUser", testSystemdUnitAsUser},
		{"AuditRewrittenByTheUser", testAuditRewrittenByTheUser},
		{"AuditElsewhere", testAuditElsewhere},
	} {
		t.Run(c.name, c.test)
	}
}
