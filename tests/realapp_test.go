//go:build linux

package tests

// Real applications, signed in by alias for real (issue 43, point 7). Each realapp_*_test.go
// starts one application installed from Debian's archive (scripts/install-deps.sh --test) or
// the npm registry (tests/apps, pinned by its lockfile; scripts/test.sh runs npm ci there) on
// loopback with a data dir of its own, creates an account the way its administrator would, and
// signs in as an agent does: credentials add on a pty, start, visit, auth login --alias. The
// application's own answer proves the sign-in (its admin page, its API, its log), never
// headless's outcome alone. A missing application fails the test in an opted-in run
// (HEADLESS_REAL=1), never skips.
//
// This file is the one harness: start an application and wait until it answers, run an
// administrator's command on a terminal, sign in as the agent, sweep the agent's surfaces for
// the password.

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/headless-dev/headless/internal/test/realtest"
)

// appsDir is where scripts/test.sh installs the npm applications (npm ci, tests/apps's lockfile).
const appsDir = "tests/apps"

// realApp is one application a test started: one process group, on one loopback port.
type realApp struct {
	name   string
	origin string // http://127.0.0.1:PORT
	port   int
	cmd    *exec.Cmd
	out    *appLog
	done   chan struct{}
}

// appLog keeps what the application printed (stdout and stderr), bounded: a test reads its
// log as the application's own word on who signed in.
type appLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

const appLogMax = 8 << 20

func (l *appLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := appLogMax - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *appLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Log is everything the application printed so far.
func (a *realApp) Log() string { return a.out.String() }

// URL is path on the application's origin.
func (a *realApp) URL(path string) string { return a.origin + path }

// freePort picks a loopback port no one listens on now (the application binds it a moment later).
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startApp starts cmd (which serves on 127.0.0.1:port) in a process group of its own and waits
// until GET readyPath gets any HTTP answer; the application is stopped (SIGTERM, then SIGKILL
// to its group) when t ends. A process that exits, or that does not answer within 2 minutes on
// this shared machine, fails t with its log.
func startApp(t testing.TB, name string, port int, readyPath string, cmd *exec.Cmd) *realApp {
	t.Helper()
	a := &realApp{name: name, port: port, origin: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, out: &appLog{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = a.out, a.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	go func() { cmd.Wait(); close(a.done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-a.done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-a.done
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything of its group left behind
		if t.Failed() {
			t.Logf("the last lines of %s's log:\n%s", name, tail(a.Log(), 25))
		}
	})
	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := client.Get(a.URL(readyPath))
		if err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			t.Logf("%s answers at %s (%s)", name, a.origin, resp.Status)
			return a
		}
		select {
		case <-a.done:
			t.Fatalf("%s exited before it answered: %v\n%s", name, cmd.ProcessState, tail(a.Log(), 60))
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer at %s within 2 minutes: %v\n%s", name, a.URL(readyPath), err, tail(a.Log(), 60))
		}
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// appModule returns node and the directory of an npm application installed in tests/apps, and
// fails t (never skips, once opted in) when it is not installed. It logs the version installed.
func appModule(t testing.TB, module string) (node, dir string) {
	t.Helper()
	node = realtest.Binary(t, "node")
	dir = filepath.Join(realtest.Root(t), appsDir, "node_modules", module)
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatalf("the npm application %s is not installed in %s: run npm ci --prefix %s --ignore-scripts (scripts/test.sh does)", module, appsDir, appsDir)
	}
	var p struct{ Version string }
	json.Unmarshal(b, &p)
	t.Logf("%s %s (npm, %s's lockfile)", module, p.Version, appsDir)
	return node, dir
}

// debianPython is Debian's python3 with module importable (a package of Debian's archive,
// installed by scripts/install-deps.sh --test as pkg); a python3 earlier on PATH (pyenv, a
// virtualenv) does not see Debian's dist-packages, so the test names /usr/bin/python3. A
// missing package fails t in an opted-in run.
func debianPython(t testing.TB, module, pkg string) string {
	t.Helper()
	realtest.Need(t)
	const py = "/usr/bin/python3"
	out, err := exec.Command(py, "-c", "import "+module+"; print(getattr("+module+", '__version__', '') or getattr("+module+", 'get_version', lambda: '')())").CombinedOutput()
	if err != nil {
		t.Fatalf("Debian's %s is not installed (%s -c 'import %s': %v: %s): scripts/install-deps.sh --test installs it", pkg, py, module, err, tail(string(out), 3))
	}
	t.Logf("%s %s (Debian's %s)", module, strings.TrimSpace(string(out)), pkg)
	return py
}

// adminTTY runs a command that reads a password on its terminal (an administrator's
// createsuperuser, htpasswd, hash-pw; a person's credentials add) on a pty of its own, answering
// its prompts in order as a person types with echo off; it fails t, with what the terminal
// showed, unless the command exits 0, and returns what the terminal showed.
func adminTTY(t testing.TB, cmd *exec.Cmd, steps []step) string {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 0
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var (
		mu         sync.Mutex
		transcript bytes.Buffer
	)
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			transcript.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	shown := func() string { mu.Lock(); defer mu.Unlock(); return transcript.String() }
	seen := 0
	for _, s := range steps {
		deadline := time.After(60 * time.Second)
	wait:
		for {
			if i := strings.Index(shown()[seen:], s.prompt); i >= 0 {
				seen += i + len(s.prompt)
				break
			}
			select {
			case werr := <-exited:
				select {
				case <-read:
				case <-time.After(2 * time.Second):
				}
				t.Fatalf("%v exited (%v) before it asked %q; the terminal showed %q", cmd.Args, werr, s.prompt, shown())
			case <-deadline:
				cmd.Process.Kill()
				<-exited
				t.Fatalf("%v: prompt %q never appeared; the terminal showed %q", cmd.Args, s.prompt, shown())
			case <-time.After(10 * time.Millisecond):
				continue wait
			}
		}
		io.WriteString(ptmx, s.input)
	}
	werr := <-exited
	select {
	case <-read:
	case <-time.After(2 * time.Second):
	}
	if werr != nil {
		t.Fatalf("%v: %v; the terminal showed %q", cmd.Args, werr, shown())
	}
	return shown()
}

// appSignIn signs the default session in on page by alias as an agent does: visit, wait until
// the page shows the text an application's script draws its sign-in form with (shows; none for
// a page the browser asks HTTP Basic for), then auth login --alias.
func appSignIn(t *testing.T, e *env, page, shows, alias string, extra ...string) lsAuth {
	t.Helper()
	p := appVisit(t, e, page, shows)
	return appLogin(t, e, p, alias, extra...)
}

// appVisit visits page and waits until it shows text (when not empty).
func appVisit(t *testing.T, e *env, page, shows string) basicPage {
	t.Helper()
	var p basicPage
	// An application's first page loads many scripts: on a loaded machine that takes long, and
	// the visit answers as soon as it is loaded (no assertion rests on the machine's speed).
	e.ok(t, &p, "visit", page, "--timeout", "5m")
	t.Logf("visit %s: url %s, auth_required %+v", page, p.URL, p.AuthRequired)
	if shows != "" {
		appShows(t, e, shows)
	}
	return p
}

// appClick clicks the first element of kind whose text holds text, from a fresh snapshot, as
// the agent opens a sign-in dialog.
func appClick(t *testing.T, e *env, kind, text string) {
	t.Helper()
	var o outline
	e.ok(t, &o, "snapshot")
	e.ok(t, nil, "click", o.ref(t, kind, text))
}

// appLogin runs auth login --alias on the page visited (with its challenge when it was HTTP
// Basic's, as the agent has it). Anything but status authenticated fails t with the exact code
// and message, and what the page showed.
func appLogin(t *testing.T, e *env, visited basicPage, alias string, extra ...string) lsAuth {
	t.Helper()
	args := append([]string{"--alias", alias}, extra...)
	if visited.AuthRequired != nil && visited.AuthRequired.Kind == "basic" {
		args = append(args, "--challenge", visited.AuthRequired.Challenge)
	}
	r := lsLogin(e, args...)
	var a lsAuth
	if r.code != 0 {
		var je jsonErr
		json.Unmarshal([]byte(r.stdout), &je)
		t.Fatalf("auth login %v on %s: exit %d, %s: %s (hint: %s)\nthe page shows:\n%s", args, visited.URL, r.code, je.Error.Code, je.Error.Message, je.Error.Hint, appSnapshot(e))
	}
	if err := json.Unmarshal([]byte(r.stdout), &a); err != nil || a.Status != "authenticated" {
		t.Fatalf("auth login %v on %s: status %q (evidence %v), want authenticated: %s\nthe page shows:\n%s", args, visited.URL, a.Status, a.Evidence, r.stdout, appSnapshot(e))
	}
	t.Logf("auth login %v: %s, evidence %v", args, a.Status, a.Evidence)
	if a.Evidence["page_lost"] == true || a.Evidence["page_discarded"] == true {
		// The sign-in answered with the session's page gone (a renderer a busy machine ran out
		// of memory for, a page too slow to have its field cleared): the agent visits again,
		// and the application, which keeps what the sign-in set, shows itself signed in.
		t.Logf("the page was gone after the sign-in: visiting %s again", visited.URL)
		e.ok(t, nil, "visit", visited.URL, "--timeout", "5m")
	}
	return a
}

// appSnapshot is the default session's snapshot as text (for a failure's message).
func appSnapshot(e *env) string {
	r := e.run("", "headless", "snapshot")
	return tail(r.stdout+r.stderr, 40)
}

// appShows waits (as an agent does, with wait --text) until the default session's page shows
// text, and fails t with the snapshot otherwise.
func appShows(t *testing.T, e *env, text string) {
	t.Helper()
	if r := e.run("", "headless", "wait", "--text", text, "--timeout", "60s", "--json"); r.code != 0 {
		t.Fatalf("the page never showed %q: %s%s\nit shows:\n%s", text, r.stdout, r.stderr, appSnapshot(e))
	}
}

// appSweepAtEnd searches every surface of the agent's for pw when t ends, however it ends (a
// sign-in refused today must leak no more than one that works): a snapshot of the page then
// (text and JSON), every CLI output of e, and the host's and brokerd's logs, for every encoding
// lsNeedles knows. The application's own files and log are its business, not the agent's.
func appSweepAtEnd(t *testing.T, e *env, pw string) {
	t.Helper()
	t.Cleanup(func() { appSweep(t, e, pw) })
}

func appSweep(t *testing.T, e *env, pw string) {
	e.run("", "headless", "snapshot")
	e.run("", "headless", "snapshot", "--json")
	sweep := &lsSweep{t: t, needles: lsNeedles("password", pw), files: map[string]int{}, seen: map[string]bool{}}
	out := e.allOutput()
	if !strings.Contains(out, `"status":"authenticated"`) && !strings.Contains(out, `"error"`) {
		t.Errorf("the CLI output holds no auth login answer: the sweep proves little")
	}
	sweep.search("every CLI stdout, stderr and tty transcript", []byte(out))
	for _, name := range []string{"host.log", "host.log.1", "brokerd.log", "brokerd.log.1"} {
		if b, err := os.ReadFile(filepath.Join(e.runDir(), name)); err == nil {
			sweep.search(name, b)
		}
	}
}

// appLogShows waits until the application's log holds every want, in any order (its own word
// on who signed in; an application logs an API call its page makes after the sign-in, which
// may come after auth login answered), and fails t with the log's tail after a minute.
func appLogShows(t *testing.T, a *realApp, want ...string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		log, missing := a.Log(), ""
		for _, w := range want {
			if !strings.Contains(log, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's log does not show %q:\n%s", a.name, missing, tail(log, 40))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
