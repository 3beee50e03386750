//go:build linux

package tests

// Issue 11, as an attacker with a shell would try it: a script of its own speaking
// broker.sock, the genuine headless binary started by hand (with another config naming a
// Chromium wrapper), a copy of the binary at another path, and a host whose config changed
// under brokerd. Every one of them gets PEER_NOT_HOST, nobody is prompted, nothing reaches the
// site, and the refusal is audited with the requester's process chain.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/test/realtest"
)

// helperEnv makes the test binary run one of the helpers below instead of the tests.
const helperEnv = "HEADLESS_TEST_HELPER"

func runHelper(name string) int {
	switch name {
	case "peerprobe":
		return peerProbe()
	case "rawclient":
		return rawClient()
	case "attack":
		return attack()
	case "listen6":
		return listen6()
	case "seccompexec":
		return seccompExec()
	case "openall":
		return openAll()
	case "traceexec":
		return traceExec()
	case "loginserve":
		return loginServe()
	case "audittamper":
		return auditTamper()
	}
	fmt.Fprintf(os.Stderr, "unknown helper %q\n", name)
	return 2
}

// rawClient is the attacker's ten-line script: raw NDJSON frames on broker.sock. It says the
// hello a genuine host would say, asks for a challenge and a release, and (with ISO set)
// names another connection's isolated session for list, add, remove and challenge. Each
// reply is printed as "STEP REPLY".
func rawClient() int {
	c, err := net.Dial("unix", os.Getenv("RAW_SOCK"))
	if err != nil {
		fmt.Println("dial", err)
		return 1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(c)
	id := 0
	call := func(step, method, params string) map[string]any {
		id++
		fmt.Fprintf(c, `{"id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		line, err := r.ReadBytes('\n')
		fmt.Printf("%s %s", step, line)
		if err != nil {
			fmt.Printf("%s read error %v\n", step, err)
			return nil
		}
		var m map[string]any
		json.Unmarshal(line, &m)
		return m
	}
	o, alias := os.Getenv("RAW_ORIGIN"), os.Getenv("RAW_ALIAS")
	call("hello", "host.hello", os.Getenv("RAW_HELLO"))
	ch := call("challenge", "challenge.issue", fmt.Sprintf(`{"session":"default","document":"doc-attacker","origin":%q}`, o))
	id1, _ := ch["result"].(map[string]any)["challenge"].(string)
	call("release", "release", fmt.Sprintf(`{"challenge":%q,"alias":%q,"session":"default","document":"doc-attacker"}`, id1, alias))
	if iso := os.Getenv("RAW_ISO"); iso != "" {
		call("iso-list", "credentials.list", fmt.Sprintf(`{"session":%q}`, iso))
		call("iso-add", "credentials.add", fmt.Sprintf(`{"session":%q,"origin":%q,"account":"x","alias":"planted","secret":"cGxhbnRlZA=="}`, iso, o))
		call("iso-remove", "credentials.remove", fmt.Sprintf(`{"session":%q,"origin":%q,"alias":%q}`, iso, o, alias))
		call("iso-challenge", "challenge.issue", fmt.Sprintf(`{"session":%q,"document":"d","origin":%q,"isolated":true}`, iso, o))
		call("iso-challenge-vault", "challenge.issue", fmt.Sprintf(`{"session":%q,"document":"d","origin":%q}`, iso, o))
	}
	return 0
}

// listen6 is a local program of the attacker's: a lookalike login page on [::1]:LISTEN_PORT
// (Chromium tries ::1 first for localhost), recording every POST body to LISTEN_LOG.
func listen6() int {
	l, err := net.Listen("tcp6", "[::1]:"+os.Getenv("LISTEN_PORT"))
	if err != nil {
		fmt.Println("listen", err)
		return 1
	}
	fmt.Println("listening")
	mux := http.NewServeMux()
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
			f, _ := os.OpenFile(os.Getenv("LISTEN_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			f.Write(append(b, '\n'))
			f.Close()
		}
		lsPage(w, "Sign in", lsLoginForm("/login", ""))
	})
	http.Serve(l, mux)
	return 0
}

// replies parses rawClient's output into step → reply.
func replies(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	m := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		step, reply, _ := strings.Cut(line, " ")
		var v map[string]any
		if err := json.Unmarshal([]byte(reply), &v); err != nil {
			t.Fatalf("raw client: %q", line)
		}
		m[step] = v
	}
	return m
}

func replyCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// genuineHello is what the genuine host would say on its connection.
func genuineHello(t *testing.T, e *env) string {
	t.Helper()
	var v struct{ Version string }
	e.ok(t, &v, "version")
	b, _ := json.Marshal(map[string]any{
		"chromium": "/usr/lib/chromium/chromium", "chromium_env": []string{"TMPDIR", "PATH", "HOME", "LANG", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"},
		"config": filepath.Join(e.root, "config", "headless", "config.json"), "version": v.Version,
	})
	return string(b)
}

// loginRefused runs auth login, which must fail PEER_NOT_HOST, and returns the message.
func loginRefused(t *testing.T, e *env, args ...string) string {
	t.Helper()
	r := lsLogin(e, args...)
	var je jsonErr
	if r.code == 0 || json.Unmarshal([]byte(r.stdout), &je) != nil || je.Error.Code != "PEER_NOT_HOST" || je.Error.Hint == "" {
		t.Fatalf("auth login %v: %+v, want PEER_NOT_HOST with a hint", args, r)
	}
	return je.Error.Message
}

// auditRecords reads brokerd's audit log.
type auditRec struct {
	Op, Decision, Code, Alias, Origin, Exe string
	PID                                    int
	Chain                                  []struct {
		PID       int
		Exe, Comm string
	}
}

func (e *env) audit(t *testing.T) []auditRec {
	t.Helper()
	var l struct{ Records []auditRec }
	e.ok(t, &l, "audit", "list")
	return l.Records
}

// TestRawBrokerClientGetsPeerNotHost: a script of the test's own (a child process that is not
// the host) speaks broker.sock while the genuine host runs; with a perfect copy of the host's
// hello it still gets PEER_NOT_HOST for the release. Nothing is prompted or released, and the
// refusal is audited with the script's process chain. The same script naming the host's
// isolated session gets SESSION_UNKNOWN for list, add, remove and challenge.
func TestRawBrokerClientGetsPeerNotHost(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	program, plog := presencetest.FakePinentry(t, "approve")
	e.pinentryConfig(program)
	canary := newCanary()
	if r := e.addCredential("ops", "ops@example.test", canary); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	e.start(t)
	e.ok(t, nil, "session", "create", "iso", "--isolated")
	if r := e.runTTY([]step{{"Password for", canary + "\n"}, {"Repeat the password", canary + "\n"}},
		"headless", "credentials", "add", "--session", "iso", "--origin", origin, "--account", "i@x", "--alias", "isoops", "--json"); r.code != 0 {
		t.Fatalf("add --session iso: %+v", r)
	}

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append([]string{}, e.vars...), helperEnv+"=rawclient", "RAW_SOCK="+e.sockPath(), "RAW_ORIGIN="+origin,
		"RAW_ALIAS=ops", "RAW_ISO=iso", "RAW_HELLO="+genuineHello(t, e))
	var so bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &so
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if err := cmd.Wait(); err != nil {
		t.Fatalf("raw client: %v\n%s", err, so.String())
	}
	got := replies(t, so.String())
	assertNoCanary(t, "the raw client's replies", so.String(), canary)
	if _, ok := got["challenge"]["result"]; !ok {
		t.Fatalf("the script got no challenge (the test would prove nothing): %v", got["challenge"])
	}
	rel := got["release"]
	if replyCode(rel) != "PEER_NOT_HOST" || rel["result"] != nil {
		t.Fatalf("release to a script: %v", rel)
	}
	e1 := rel["error"].(map[string]any)
	if !strings.Contains(e1["message"].(string), "pid "+strconv.Itoa(pid)) || !strings.Contains(e1["message"].(string), "is not the browser host this brokerd started") || e1["hint"] == "" {
		t.Fatalf("refusal does not say why: %v", e1)
	}
	if n := len(presencetest.Prompts(t, plog)); n != 0 {
		t.Fatalf("the person was prompted %d times for a script's request", n)
	}
	for _, step := range []string{"iso-list", "iso-add", "iso-remove", "iso-challenge", "iso-challenge-vault"} {
		if c := replyCode(got[step]); c != "SESSION_UNKNOWN" {
			t.Errorf("%s of the host's isolated session from a script: %v, want SESSION_UNKNOWN", step, got[step])
		}
	}
	if a := aliasesIn(t, e, "--session", "iso"); strings.Join(a, ",") != "isoops" {
		t.Errorf("the isolated store changed: %v", a)
	}
	// Audited with the script's chain: the script, then this test process.
	var found bool
	for _, r := range e.audit(t) {
		if r.Op == "release" && r.Code == "PEER_NOT_HOST" && r.PID == pid {
			found = len(r.Chain) >= 2 && r.Chain[0].PID == pid && r.Chain[1].PID == os.Getpid()
			if !found {
				t.Errorf("refusal audited without the chain: %+v", r)
			}
		}
	}
	if !found {
		t.Fatalf("refusal not audited: %+v", e.audit(t))
	}
}

// handHost runs a host started by hand ("headless host" without brokerd), with extra
// environment, and waits until it serves control.sock. It returns its pid; cleanup stops it.
func (e *env) handHost(t *testing.T, exe string, extra ...string) int {
	t.Helper()
	cmd := exec.Command(exe, "host")
	cmd.Env = append(append([]string{}, e.vars...), extra...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	t.Cleanup(stop)
	var st lsStatus
	if !pollUntil(60*time.Second, func() bool {
		r := e.run("", "headless", "status", "--json")
		return json.Unmarshal([]byte(r.stdout), &st) == nil && st.Host.PID == cmd.Process.Pid
	}) {
		t.Fatalf("the hand-started host did not come up: %s", se.String())
	}
	return cmd.Process.Pid
}

// TestHandStartedHostsAreRefused: the genuine headless binary started by hand as
// 'headless host' with another XDG_CONFIG_HOME whose config names a Chromium wrapper script,
// and a copy of the binary at another path, reach brokerd like the real host — same runtime
// dir, same uid, same binary — and get challenges, but every release is PEER_NOT_HOST; nobody
// is prompted and the site receives nothing. The wrapper never sees a password either.
func TestHandStartedHostsAreRefused(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	const account = "alice@example.test"
	pw := newCanary()
	ls.SetAccount(account, pw)
	approve, plog := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, ls.Origin(), "main", account, pw)
	e.stopBroker()   // the one the CLI auto-started
	e.startBrokerd() // the person's brokerd; it starts no host until asked

	// The wrapper an attacker would put in front of Chromium: it logs what it is given.
	other := filepath.Join(e.root, "other-config")
	os.MkdirAll(filepath.Join(other, "headless"), 0o700)
	wrapper := filepath.Join(e.root, "chromium-wrapper.sh")
	wlog := filepath.Join(e.root, "wrapper.log")
	writeExecutable(wrapper, []byte("#!/bin/sh\necho \"$@\" >> "+wlog+"\nexec /usr/lib/chromium/chromium \"$@\"\n"), 0o700)
	os.WriteFile(filepath.Join(other, "headless", "config.json"), []byte(fmt.Sprintf(`{"chromium":%q}`, wrapper)), 0o600)

	copyDir := filepath.Join(e.root, "copy")
	os.MkdirAll(copyDir, 0o755)
	b, _ := os.ReadFile(filepath.Join(binDir, "headless"))
	writeExecutable(filepath.Join(copyDir, "headless"), b, 0o755)

	for _, tc := range []struct {
		name, exe string
		extra     []string
	}{
		{"genuine binary, other config naming a Chromium wrapper", filepath.Join(binDir, "headless"), []string{"XDG_CONFIG_HOME=" + other}},
		{"a copy of the binary at another path", filepath.Join(copyDir, "headless"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pid := e.handHost(t, tc.exe, tc.extra...)
			n, typed := len(ls.Posts()), len(ls.Typed())
			p := lsVisit(t, e, ls.URL("/login"))
			if p.AuthRequired == nil {
				t.Fatal("the hand-started host got no challenge: the test proves nothing")
			}
			msg := loginRefused(t, e, "--alias", "main")
			if !strings.Contains(msg, "pid "+strconv.Itoa(pid)) || !strings.Contains(msg, "is not the browser host this brokerd started") {
				t.Errorf("refusal does not say why: %q", msg)
			}
			if got := presencetest.Prompts(t, plog); len(got) != 0 {
				t.Fatalf("prompted for a hand-started host: %q", got)
			}
			lsNothingTyped(t, ls, n, typed)
			var found bool
			for _, r := range e.audit(t) {
				found = found || r.Op == "release" && r.Code == "PEER_NOT_HOST" && r.PID == pid && len(r.Chain) > 0 && r.Chain[0].Exe == tc.exe
			}
			if !found {
				t.Errorf("refusal not audited with the host's chain: %+v", e.audit(t))
			}
			syscall.Kill(pid, syscall.SIGTERM)
			pollUntil(30*time.Second, func() bool { return !procAlive(pid) })
		})
	}
	if b, _ := os.ReadFile(wlog); len(b) == 0 {
		t.Error("the wrapper never ran: the first case proves less than it says")
	}
	assertNoCanary(t, "the wrapper's log", func() string { b, _ := os.ReadFile(wlog); return string(b) }(), pw)
}

// TestHostThatDoesNotRunAsConfiguredIsRefused: the host brokerd started itself, but running
// another Chromium than brokerd's config names (the config was changed under brokerd), or a
// configured Chromium that is a wrapper script: releases are PEER_NOT_HOST with the reason.
func TestHostThatDoesNotRunAsConfiguredIsRefused(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	const account = "alice@example.test"
	pw := newCanary()
	ls.SetAccount(account, pw)
	approve, plog := presencetest.FakePinentry(t, "approve")
	lsEnroll(t, e, ls.Origin(), "main", account, pw)
	wrapper := filepath.Join(e.root, "chromium-wrapper.sh")
	writeExecutable(wrapper, []byte("#!/bin/sh\nexec /usr/lib/chromium/chromium \"$@\"\n"), 0o700)
	config := func(chromium string) {
		e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"pinentry","program":%q,"timeout_seconds":5},"chromium":%q}`, approve, chromium))
	}
	for _, tc := range []struct {
		name, brokerd, host, want string
	}{
		{"config changed under brokerd", "/usr/lib/chromium/chromium", wrapper, `the host launches Chromium "` + wrapper + `", brokerd's config names "/usr/lib/chromium/chromium"`},
		{"configured Chromium is a wrapper script", wrapper, wrapper, "is not an ELF executable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.stopBroker()
			config(tc.brokerd)
			e.startBrokerd()
			config(tc.host)
			e.start(t)
			n, typed := len(ls.Posts()), len(ls.Typed())
			if p := lsVisit(t, e, ls.URL("/login")); p.AuthRequired == nil {
				t.Fatal("no challenge: the test proves nothing")
			}
			msg := loginRefused(t, e, "--alias", "main")
			if !strings.Contains(msg, tc.want) {
				t.Errorf("refusal %q does not say %q", msg, tc.want)
			}
			if got := presencetest.Prompts(t, plog); len(got) != 0 {
				t.Fatalf("prompted: %q", got)
			}
			lsNothingTyped(t, ls, n, typed)
			e.ok(t, nil, "stop")
		})
	}
}

// TestLoopbackListeners: for a loopback origin brokerd names the process listening there in
// the prompt and the audit; a localhost origin that reaches listeners of different processes
// (the site on 127.0.0.1, an attacker's lookalike page on [::1], which Chromium tries first) is
// ORIGIN_AMBIGUOUS before anyone is asked, and the lookalike receives nothing.
func TestLoopbackListeners(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	const account = "alice@example.test"
	pw := newCanary()
	ls.SetAccount(account, pw)
	approve, plog := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	u, _ := url.Parse(ls.Origin())
	port := u.Port()
	localhost := "http://localhost:" + port
	lsEnroll(t, e, ls.Origin(), "dev", account, pw)
	lsEnroll(t, e, localhost, "devlocal", account, pw)
	e.start(t)

	t.Run("named", func(t *testing.T) {
		lsVisit(t, e, ls.URL("/login"))
		lsLoginOK(t, e, "authenticated", "--alias", "dev")
		prompts := presencetest.Prompts(t, plog)
		// This test process serves the site; a fork of it (another parallel test starting a
		// command) holds the socket too until it execs, and is then named beside it.
		named := regexp.MustCompile(fmt.Sprintf(`On this machine: pids? (\d+(, | and ))*%d( \(|, | and )`, os.Getpid()))
		if len(prompts) != 1 || !named.MatchString(prompts[0]) || !regexp.MustCompile(`listens? on 127\.0\.0\.1:`+port).MatchString(prompts[0]) {
			t.Fatalf("prompt %q does not name the listener (%s)", prompts, named)
		}
		var l struct {
			Records []struct{ Op, Decision, Alias, Listener string }
		}
		e.ok(t, &l, "audit", "list")
		// The newest two: the release, then the host's report that it ended authenticated.
		if n := len(l.Records); n < 2 || l.Records[n-1].Op != "learn_path" {
			t.Fatalf("audit %+v, want the release and its learn_path last", l.Records)
		}
		last := l.Records[len(l.Records)-2]
		if last.Op != "release" || last.Decision != "allow" || !regexp.MustCompile(`listens? on 127\.0\.0\.1:`+port).MatchString(last.Listener) {
			t.Fatalf("audit %+v", last)
		}
	})
	t.Run("ambiguous", func(t *testing.T) {
		logf := filepath.Join(e.root, "lookalike.log")
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(append([]string{}, e.vars...), helperEnv+"=listen6", "LISTEN_PORT="+port, "LISTEN_LOG="+logf)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		line, _ := bufio.NewReader(out).ReadString('\n')
		if line != "listening\n" {
			t.Fatalf("lookalike: %q", line)
		}
		before := len(presencetest.Prompts(t, plog))
		n := len(ls.Posts())
		if p := lsVisit(t, e, localhost+"/login"); p.AuthRequired == nil {
			t.Fatal("no login form at localhost: the test proves nothing")
		}
		r := lsLogin(e, "--alias", "devlocal")
		var je jsonErr
		if json.Unmarshal([]byte(r.stdout), &je) != nil || je.Error.Code != "ORIGIN_AMBIGUOUS" || !strings.Contains(je.Error.Message, strconv.Itoa(cmd.Process.Pid)) {
			t.Fatalf("auth login on an ambiguous localhost: %+v", r)
		}
		if got := presencetest.Prompts(t, plog); len(got) != before {
			t.Fatalf("prompted for an ambiguous origin: %q", got[before:])
		}
		if b, _ := os.ReadFile(logf); len(b) != 0 || len(ls.Posts()) != n {
			t.Fatalf("something was submitted: lookalike %q, site %v", b, ls.Posts()[n:])
		}
		var l struct {
			Records []struct{ Op, Code, Listener string }
		}
		e.ok(t, &l, "audit", "list")
		last := l.Records[len(l.Records)-1]
		if last.Code != "ORIGIN_AMBIGUOUS" || !strings.Contains(last.Listener, strconv.Itoa(cmd.Process.Pid)) || !strings.Contains(last.Listener, strconv.Itoa(os.Getpid())) {
			t.Fatalf("audit %+v", last)
		}
	})
}

// TestBrokerdStartsOnlyItsOwnHost: the config's host_program is no longer read: a config that
// names one (another build, a root-owned program that is not headless, a script) makes brokerd
// refuse to start and say why, and nothing is started; without it, brokerd starts the headless
// beside it. (A copy or another build of headless set there is TestAsUser65534/BoundaryForgedHost's.)
func TestBrokerdStartsOnlyItsOwnHost(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	script := filepath.Join(e.root, "host.sh")
	writeExecutable(script, []byte("#!/bin/sh\nexec "+filepath.Join(binDir, "headless")+" \"$@\"\n"), 0o700)
	for _, program := range []string{filepath.Join(binDir, "headless"), "/usr/bin/env", script} {
		e.stopBroker()
		e.writeConfig(fmt.Sprintf(`{"host_program":%q}`, program))
		e.fails(t, "BROKER_UNAVAILABLE", "start")
		if b, _ := os.ReadFile(filepath.Join(e.runDir(), "brokerd.log")); !strings.Contains(string(b), "host_program: is no longer read") {
			t.Errorf("host_program %s: brokerd.log does not say it is no longer read:\n%s", program, b)
		}
		var v struct{ Host struct{ Running bool } }
		if r := e.run("", "headless", "status", "--json"); json.Unmarshal([]byte(r.stdout), &v) == nil && v.Host.Running {
			t.Fatalf("a host runs with host_program %s in the config", program)
		}
	}
	e.stopBroker()
	e.writeConfig(`{}`)
	if s := e.start(t); s["started"] != true {
		t.Fatalf("start without host_program: %v", s)
	}
}

func realtestRoot() string { return realtest.Root(nil) }
