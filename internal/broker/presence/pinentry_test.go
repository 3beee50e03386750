//go:build linux

package presence

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/test/realtest"
)

// TestMain fails the run when a test left a process running. The test process is a child
// subreaper, so that descendants orphaned by a killed pinentry become its children instead of
// init's: they must all be dead by now, and are reaped here. (Each test checks that the
// pinentries it started were reaped by the provider itself.)
func TestMain(m *testing.M) { os.Exit(realtest.RunReaping(m, "presence")) }

// procStat returns pid's state letter and parent pid, or "" when there is no such process.
func procStat(pid int) (string, int) { return realtest.ProcStat(pid) }

// fakeRunning reports whether pid is a live (not zombie) fakepinentry process.
func fakeRunning(pid int) bool {
	state, _ := procStat(pid)
	if state == "" || state == "Z" {
		return false
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return bytes.Contains(cmdline, []byte("fakepinentry")) // else the pid was reused
}

// assertReaped checks that the fake with pid neither runs nor lingers as our zombie.
func assertReaped(t *testing.T, pid int) {
	t.Helper()
	if state, ppid := procStat(pid); state == "Z" && ppid == os.Getpid() {
		t.Errorf("fake pinentry %d is an unreaped zombie", pid)
	}
	if fakeRunning(pid) {
		t.Errorf("fake pinentry %d is still running", pid)
	}
}

// assertDies waits (bounded) for pid, a descendant of a killed pinentry, to die, and reaps it:
// as an orphan it became a child of this subreaper.
func assertDies(t *testing.T, pid int) {
	t.Helper()
	for bound := time.Now().Add(10 * time.Second); fakeRunning(pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(bound) {
			t.Errorf("fake pinentry descendant %d survived the prompt", pid)
			return
		}
	}
	for bound := time.Now().Add(10 * time.Second); time.Now().Before(bound); time.Sleep(5 * time.Millisecond) {
		if _, ppid := procStat(pid); ppid != os.Getpid() {
			continue // not reparented to us yet
		}
		var ws syscall.WaitStatus
		if got, err := syscall.Wait4(pid, &ws, 0, nil); got != pid || err != nil {
			t.Errorf("reap orphaned descendant %d: %v", pid, err)
		}
		return
	}
	t.Errorf("orphaned descendant %d never became our child", pid)
}

// assertDescendantsDie checks that the children the fakes logged die with them.
func assertDescendantsDie(t *testing.T, evs []logEvent) {
	t.Helper()
	for _, e := range evs {
		if e.event == "child" {
			child, _ := strconv.Atoi(e.data)
			assertDies(t, child)
		}
	}
}

type logEvent struct {
	pid         int
	event, data string
}

func readLog(t *testing.T, path string) []logEvent {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var evs []logEvent
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line == "" {
			continue
		}
		pidStr, rest, _ := strings.Cut(line, " ")
		event, data, _ := strings.Cut(rest, " ")
		pid, err := strconv.Atoi(pidStr)
		if err != nil {
			t.Fatalf("bad log line %q", line)
		}
		evs = append(evs, logEvent{pid, event, data})
	}
	return evs
}

// pidsOf returns the pids that logged event with data (any data when data is "*").
func pidsOf(evs []logEvent, event, data string) []int {
	var pids []int
	for _, e := range evs {
		if e.event == event && (data == "*" || e.data == data) {
			pids = append(pids, e.pid)
		}
	}
	return pids
}

// received returns the lines the fake with pid received.
func received(evs []logEvent, pid int) []string {
	var lines []string
	for _, e := range evs {
		if e.pid == pid && e.event == "recv" {
			lines = append(lines, e.data)
		}
	}
	return lines
}

// waitForLog waits (bounded) until the log has an event for which ok is true.
func waitForLog(t *testing.T, path string, ok func(logEvent) bool) {
	t.Helper()
	for bound := time.Now().Add(20 * time.Second); time.Now().Before(bound); time.Sleep(2 * time.Millisecond) {
		for _, e := range readLog(t, path) {
			if ok(e) {
				return
			}
		}
	}
	t.Fatalf("the fake pinentry never logged the awaited event")
}

func newFake(t *testing.T, mode string, o PinentryOptions) (*Pinentry, string) {
	t.Helper()
	program, logFile := presencetest.FakePinentry(t, mode)
	o.Program = program
	p, err := NewPinentry(o)
	if err != nil {
		t.Fatal(err)
	}
	return p, logFile
}

var testRequest = Request{
	Origin:  "https://example.com",
	Account: "alice@example.com",
	Alias:   "work",
	Session: "s-1",
	PID:     4242,
	Exe:     "/usr/bin/agent",
}

// sentinels returns which of the three denials err wraps.
func sentinels(err error) []error {
	var got []error
	for _, s := range []error{ErrDenied, ErrTimeout, ErrUnavailable} {
		if errors.Is(err, s) {
			got = append(got, s)
		}
	}
	return got
}

func TestPinentryModes(t *testing.T) {
	errUse := errors.New("use failed")
	for _, tc := range []struct {
		mode string
		want error // nil: allowed
	}{
		{"approve", nil},
		{"deny", ErrDenied},
		{"notconfirmed", ErrDenied},
		{"timeout", ErrTimeout},
		{"crash", ErrDenied},
		{"garbage", ErrDenied},
		{"nogreeting", ErrUnavailable},
		{"biggreeting", ErrUnavailable},
		{"errsetup", ErrUnavailable},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			p, logFile := newFake(t, tc.mode, PinentryOptions{Timeout: 30 * time.Second})
			called := false
			var pid int
			err := p.Do(context.Background(), testRequest, func(ctx context.Context) error {
				called = true
				// The dialog is gone before the vault is read.
				pids := pidsOf(readLog(t, logFile), "start", tc.mode)
				if len(pids) != 1 {
					t.Fatalf("fake started %d times", len(pids))
				}
				if state, _ := procStat(pids[0]); state != "" {
					t.Errorf("use runs while the pinentry (pid %d, state %s) is not reaped", pids[0], state)
				}
				return errUse
			})
			evs := readLog(t, logFile)
			if pids := pidsOf(evs, "start", tc.mode); len(pids) != 1 {
				t.Fatalf("fake started %d times, want 1", len(pids))
			} else {
				pid = pids[0]
			}
			assertReaped(t, pid)
			if tc.want == nil {
				if !errors.Is(err, errUse) || !called {
					t.Fatalf("Do = %v (use called: %v), want use's error", err, called)
				}
				if s := sentinels(err); len(s) != 0 {
					t.Errorf("use's error also wraps %v", s)
				}
				if lines := received(evs, pid); lines[len(lines)-1] != "BYE" {
					t.Errorf("pinentry was not told BYE: %q", lines)
				}
				return
			}
			if called {
				t.Fatal("use was called although presence was not granted")
			}
			if s := sentinels(err); len(s) != 1 || s[0] != tc.want {
				t.Fatalf("Do = %v, wraps %v, want exactly %v", err, s, tc.want)
			}
		})
	}
}

func TestPinentryConversation(t *testing.T) {
	p, logFile := newFake(t, "approve", PinentryOptions{
		Timeout: 30 * time.Second,
		TTY:     "/dev/pts/7",
		TTYType: "xterm-256color",
	})
	r := Request{
		Origin:  "https://example.com",
		Account: "al%ice\nbob",
		Alias:   "work",
		Session: "s-1",
		PID:     4242,
		Exe:     "/tmp/evil\n100%/agent",
	}
	if err := p.Do(context.Background(), r, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	evs := readLog(t, logFile)
	pid := pidsOf(evs, "start", "approve")[0]
	got := received(evs, pid)
	want := []string{
		"OPTION ttyname=/dev/pts/7",
		"OPTION ttytype=xterm-256color",
		"SETTITLE headless",
		"SETDESC " + escapeAssuan(r.Description()),
		"SETPROMPT Release the password?",
		"SETOK Allow",
		"SETCANCEL Deny",
		"SETTIMEOUT 28", // 30 s less the slack, rounded down
		"CONFIRM",
		"BYE",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("conversation:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	desc := strings.TrimPrefix(got[3], "SETDESC ")
	for _, c := range desc {
		if c < 0x20 {
			t.Fatalf("SETDESC carries a raw control character: %q", desc)
		}
	}
	// The executable is quoted (%q), so a newline in it cannot forge a second line.
	if !strings.Contains(desc, "100%25/agent") || !strings.Contains(desc, `evil\n100`) || !strings.Contains(desc, "?%0ARequested") {
		t.Errorf("SETDESC not escaped as expected: %q", desc)
	}
	prompts := presencetest.Prompts(t, logFile)
	if len(prompts) != 1 || prompts[0] != r.Description() {
		t.Fatalf("decoded prompts %q, want [%q]", prompts, r.Description())
	}
	for _, part := range []string{"https://example.com", `"al%ice\nbob"`, `"work"`, `"s-1"`, "pid 4242", `"/tmp/evil\n100%/agent"`} {
		if !strings.Contains(prompts[0], part) {
			t.Errorf("prompt %q does not name %q", prompts[0], part)
		}
	}
}

func TestPinentryNoOptionsWithoutTTY(t *testing.T) {
	p, logFile := newFake(t, "deny", PinentryOptions{})
	err := p.Do(context.Background(), testRequest, func(context.Context) error { return nil })
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("Do = %v, want ErrDenied", err)
	}
	evs := readLog(t, logFile)
	lines := received(evs, pidsOf(evs, "start", "deny")[0])
	if lines[0] != "SETTITLE headless" {
		t.Errorf("first command %q, want SETTITLE (no OPTION without TTY)", lines[0])
	}
	if lines[5] != "SETTIMEOUT "+strconv.Itoa(int(DefaultPinentryTimeout/time.Second)-2) {
		t.Errorf("default timeout: sent %q", lines[5])
	}
}

func TestPinentryUnavailableProgram(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\nexit 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badFormat := filepath.Join(dir, "bad-format")
	if err := os.WriteFile(badFormat, []byte("\x7fELF garbage"), 0o700); err != nil {
		t.Fatal(err)
	}
	silent := filepath.Join(dir, "silent")
	if err := os.WriteFile(silent, []byte("#!/bin/sh\nexit 0\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, program := range map[string]string{
		"missing":        filepath.Join(dir, "no-such-pinentry"),
		"not executable": notExec,
		"directory":      dir,
		"bad format":     badFormat,
		"exits silently": silent,
	} {
		t.Run(name, func(t *testing.T) {
			p, err := NewPinentry(PinentryOptions{Program: program, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			called := false
			err = p.Do(context.Background(), testRequest, func(context.Context) error { called = true; return nil })
			if s := sentinels(err); len(s) != 1 || s[0] != ErrUnavailable || called {
				t.Fatalf("Do = %v (use called: %v), want ErrUnavailable only", err, called)
			}
		})
	}
}

func TestPinentryHangTimesOut(t *testing.T) {
	p, logFile := newFake(t, "hang", PinentryOptions{Timeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, not the subject
	defer cancel()
	called := false
	err := p.Do(ctx, testRequest, func(context.Context) error { called = true; return nil })
	if s := sentinels(err); len(s) != 1 || s[0] != ErrTimeout || called {
		t.Fatalf("Do = %v (use called: %v), want ErrTimeout only", err, called)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("own timeout reported as the caller's deadline: %v", err)
	}
	evs := readLog(t, logFile)
	for _, pid := range pidsOf(evs, "start", "hang") { // none if killed before it could log
		assertReaped(t, pid)
	}
	// Before greeting, the fake started a SIGTERM-ignoring child in its process group.
	assertDescendantsDie(t, evs)
}

func TestPinentryContextCancelled(t *testing.T) {
	p, logFile := newFake(t, "hang", PinentryOptions{Timeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	called := false
	go func() {
		done <- p.Do(ctx, testRequest, func(context.Context) error { called = true; return nil })
	}()
	waitForLog(t, logFile, func(e logEvent) bool { return e.event == "recv" && e.data == "CONFIRM" })
	cancel()
	err := <-done
	if s := sentinels(err); len(s) != 1 || s[0] != ErrDenied || !errors.Is(err, context.Canceled) || called {
		t.Fatalf("Do = %v (use called: %v), want ErrDenied wrapping context.Canceled", err, called)
	}
	evs := readLog(t, logFile)
	assertReaped(t, pidsOf(evs, "start", "hang")[0])
	assertDescendantsDie(t, evs)
}

func TestPinentryContextDeadline(t *testing.T) {
	p, logFile := newFake(t, "hang", PinentryOptions{Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := p.Do(ctx, testRequest, func(context.Context) error { t.Error("use called"); return nil })
	if s := sentinels(err); len(s) != 1 || s[0] != ErrTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do = %v, want ErrTimeout wrapping context.DeadlineExceeded", err)
	}
	evs := readLog(t, logFile)
	for _, pid := range pidsOf(evs, "start", "hang") { // none if killed before it could log
		assertReaped(t, pid)
	}
	assertDescendantsDie(t, evs)
	for _, e := range evs {
		if strings.HasPrefix(e.data, "SETTIMEOUT ") && e.data != "SETTIMEOUT 1" {
			t.Errorf("dialog timeout not bounded by the caller's deadline: %q", e.data)
		}
	}
}

func TestPinentryContextDoneBeforeStart(t *testing.T) {
	p, logFile := newFake(t, "approve", PinentryOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := p.Do(ctx, testRequest, func(context.Context) error { t.Error("use called"); return nil })
	if !errors.Is(err, ErrDenied) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Do = %v, want ErrDenied wrapping context.Canceled", err)
	}
	if evs := readLog(t, logFile); len(evs) != 0 {
		t.Errorf("a pinentry was started for a cancelled request: %v", evs)
	}
}

// TestPinentrySerialized holds one prompt open (gate mode) while a second request arrives: the
// second pinentry starts only after the first was told BYE.
func TestPinentrySerialized(t *testing.T) {
	p, logFile := newFake(t, "gate", PinentryOptions{Timeout: time.Minute})
	var (
		mu   sync.Mutex
		uses []string
	)
	do := func(name string) error {
		r := testRequest
		r.Session = name
		return p.Do(context.Background(), r, func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			uses = append(uses, name)
			return nil
		})
	}
	var running sync.WaitGroup
	t.Cleanup(func() { openGate(logFile); running.Wait() })
	first, second := make(chan error, 1), make(chan error, 1)
	running.Go(func() { first <- do("first") })
	waitForLog(t, logFile, func(e logEvent) bool { return e.event == "recv" && e.data == "CONFIRM" })

	running.Go(func() { second <- do("second") })
	// Give a non-serializing implementation the chance to start a second program.
	time.Sleep(100 * time.Millisecond)
	if n := len(pidsOf(readLog(t, logFile), "start", "gate")); n != 1 {
		t.Fatalf("%d pinentries running at once, want 1", n)
	}
	openGate(logFile)
	if err := <-first; err != nil {
		t.Fatalf("first Do: %v", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("second Do: %v", err)
	}
	evs := readLog(t, logFile)
	pids := pidsOf(evs, "start", "gate")
	if len(pids) != 2 {
		t.Fatalf("fake started %d times, want 2", len(pids))
	}
	// Order in the shared append-only log: everything of the first before the second starts.
	var order []string
	for _, e := range evs {
		switch {
		case e.pid == pids[0] && e.event == "recv" && e.data == "BYE":
			order = append(order, "first BYE")
		case e.pid == pids[1] && e.event == "start":
			order = append(order, "second start")
		case e.pid == pids[0] && e.event == "recv" && strings.HasPrefix(e.data, "SETDESC "):
			if !strings.Contains(e.data, `session "first"`) {
				t.Errorf("first pinentry showed %q", e.data)
			}
		}
	}
	if strings.Join(order, ", ") != "first BYE, second start" {
		t.Fatalf("events in order %q: the second prompt started before the first ended", order)
	}
	if len(uses) != 2 {
		t.Errorf("use called for %q, want both", uses)
	}
	assertReaped(t, pids[0])
	assertReaped(t, pids[1])
}

// openGate lets a fake in gate mode answer CONFIRM.
func openGate(logFile string) {
	os.WriteFile(logFile+".gate", nil, 0o600)
}

// TestPinentryQueueHonoursContext: waiting for the slot is bounded by the caller's ctx.
func TestPinentryQueueHonoursContext(t *testing.T) {
	p, logFile := newFake(t, "gate", PinentryOptions{Timeout: time.Minute})
	var running sync.WaitGroup
	t.Cleanup(func() { openGate(logFile); running.Wait() })
	first := make(chan error, 1)
	running.Go(func() { first <- p.Do(context.Background(), testRequest, func(context.Context) error { return nil }) })
	waitForLog(t, logFile, func(e logEvent) bool { return e.event == "recv" && e.data == "CONFIRM" })

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := p.Do(ctx, testRequest, func(context.Context) error { t.Error("queued use called"); return nil })
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("queued Do = %v, want ErrTimeout wrapping context.DeadlineExceeded", err)
	}
	openGate(logFile)
	if err := <-first; err != nil {
		t.Fatalf("first Do: %v", err)
	}
	if n := len(pidsOf(readLog(t, logFile), "start", "gate")); n != 1 {
		t.Errorf("fake started %d times, want 1 (the queued request gave up)", n)
	}
}

func TestPinentryContextDoneAfterAllow(t *testing.T) {
	p, _ := newFake(t, "approve", PinentryOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled while the program is being reaped, i.e. after the allow and before use.
	p.program = wrapAfter(t, p.program, cancel)
	err := p.Do(ctx, testRequest, func(context.Context) error { t.Error("use called after cancellation"); return nil })
	if !errors.Is(err, ErrDenied) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Do = %v, want ErrDenied wrapping context.Canceled", err)
	}
}

// wrapAfter returns a program that runs program and then, once it has exited, blocks until f
// has been called (f is called by a watcher of a marker file the wrapper creates).
func wrapAfter(t *testing.T, program string, f func()) string {
	t.Helper()
	dir := t.TempDir()
	marker := filepath.Join(dir, "exited")
	release := filepath.Join(dir, "release")
	script := filepath.Join(dir, "wrapper")
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	// A busy wait on a shell builtin: a killed sleep(1) would be left as an orphan.
	body := fmt.Sprintf("#!/bin/sh\n%s\n: >%s\nwhile [ ! -e %s ]; do :; done\n", q(program), q(marker), q(release))
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	go func() {
		for bound := time.Now().Add(time.Minute); time.Now().Before(bound); time.Sleep(2 * time.Millisecond) {
			if _, err := os.Stat(marker); err == nil {
				f()
				os.WriteFile(release, nil, 0o600)
				return
			}
		}
	}()
	return script
}

func TestNewPinentryRejects(t *testing.T) {
	for name, o := range map[string]PinentryOptions{
		"no program":       {},
		"relative program": {Program: "pinentry"},
		"negative timeout": {Program: "/usr/bin/pinentry", Timeout: -time.Second},
		"tty with newline": {Program: "/usr/bin/pinentry", TTY: "/dev/pts/1\nCONFIRM"},
		"ttytype space":    {Program: "/usr/bin/pinentry", TTYType: "xterm CONFIRM"},
		"tty too long":     {Program: "/usr/bin/pinentry", TTY: "/" + strings.Repeat("a", 300)},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := NewPinentry(o); err == nil {
				t.Fatalf("NewPinentry(%+v) succeeded", o)
			}
		})
	}
	p, err := NewPinentry(PinentryOptions{Program: "/usr/bin/pinentry"})
	if err != nil || p.Name() != "pinentry" || p.timeout != DefaultPinentryTimeout || p.env == nil {
		t.Fatalf("NewPinentry defaults: %+v, %v", p, err)
	}
}

func TestNone(t *testing.T) {
	var prov Provider = None{}
	called := false
	err := prov.Do(context.Background(), testRequest, func(context.Context) error { called = true; return nil })
	if s := sentinels(err); len(s) != 1 || s[0] != ErrUnavailable || called || prov.Name() != "none" {
		t.Fatalf("None.Do = %v (use called: %v)", err, called)
	}
}

func TestEscapeAssuan(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain text, (quoted) \"x\"", "plain text, (quoted) \"x\""},
		{"100%", "100%25"},
		{"%25", "%2525"},
		{"a\r\nb", "a%0D%0Ab"},
		{"\x00\x01\x1f\x20\x7f", "%00%01%1F \x7f"},
		{"tab\there", "tab%09here"},
		{"é ☃", "é ☃"},
	} {
		if got := escapeAssuan(tc.in); got != tc.want {
			t.Errorf("escapeAssuan(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// unescape is the reference decoder for escapeAssuan's output.
func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("truncated escape")
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", err
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), nil
}

func FuzzEscapeAssuan(f *testing.F) {
	for _, s := range []string{"", "%", "a\nb", "\x00\xff", "Requested by pid 1 (/tmp/x\n%)."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := escapeAssuan(s)
		for i := 0; i < len(e); i++ {
			if e[i] < 0x20 {
				t.Fatalf("escapeAssuan(%q) = %q holds a control byte", s, e)
			}
		}
		if back, err := unescape(e); err != nil || back != s {
			t.Fatalf("unescape(escapeAssuan(%q)) = %q, %v", s, back, err)
		}
	})
}

// longRequest has every field far over what fits one Assuan line.
var longRequest = Request{
	Origin: strings.Repeat("o%", 900), Account: strings.Repeat("\x00", 900), Alias: strings.Repeat("é", 900),
	Session: strings.Repeat("\n", 900), PID: 77, Exe: strings.Repeat("%\n", 900),
	Path: strings.Repeat("/%", 900), Field: strings.Repeat("f", 900), Listener: strings.Repeat("l%", 900),
	Agent: []procstat.Proc{{PID: 1, Exe: strings.Repeat("/x%", 300)}, {PID: 2, Comm: strings.Repeat("%", 300)},
		{PID: 3, Exe: strings.Repeat("e", 900)}, {PID: 4, Exe: strings.Repeat("\x01", 900)}},
}

func TestPromptDescriptionFitsOneLine(t *testing.T) {
	for name, r := range map[string]Request{
		"percent account": {Origin: "https://example.com", Account: strings.Repeat("%", 5000), PID: 77, Exe: "/bin/x"},
		"control exe":     {Origin: "https://example.com", Account: "a", PID: 77, Exe: strings.Repeat("\x01", 5000)},
		"everything long": longRequest,
	} {
		t.Run(name, func(t *testing.T) {
			d := promptDescription(r)
			if n := len("SETDESC " + d + "\n"); n > maxCommandLine {
				t.Fatalf("SETDESC line is %d bytes", n)
			}
			text, err := unescape(d)
			if err != nil {
				t.Fatalf("shortening broke an escape: %v", err)
			}
			if !strings.Contains(text, "Requested by pid 77 (") {
				t.Errorf("shortened prompt lost the requester: %q", text)
			}
		})
	}
	if d := promptDescription(testRequest); d != escapeAssuan(testRequest.Description()) {
		t.Errorf("an ordinary request was shortened: %q", d)
	}
}

func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		kind lineKind
		code uint32
	}{
		{"OK", lineOK, 0},
		{"OK Pleased to meet you", lineOK, 0},
		{"OK ", lineOK, 0},
		{"OKAY", lineGarbage, 0},
		{"ok", lineGarbage, 0},
		{"OK\r", lineGarbage, 0},
		{"OK fine\r", lineGarbage, 0},
		{" OK", lineGarbage, 0},
		{"ERR 83886179 Operation cancelled <Pinentry>", lineErr, 83886179},
		{"ERR 62", lineErr, 62},
		{"ERR 062 leading zero", lineErr, 62},
		{"ERR 4294967295 max", lineErr, 4294967295},
		{"ERR 4294967296", lineGarbage, 0},
		{"ERR 99999999999", lineGarbage, 0},
		{"ERR", lineGarbage, 0},
		{"ERR ", lineGarbage, 0},
		{"ERR  62", lineGarbage, 0},
		{"ERR -1", lineGarbage, 0},
		{"ERR +1", lineGarbage, 0},
		{"ERR 62a", lineGarbage, 0},
		{"ERR x Timeout", lineGarbage, 0},
		{"# a comment", lineComment, 0},
		{"#", lineComment, 0},
		{"S PROGRESS 1", lineStatus, 0},
		{"S ", lineGarbage, 0},
		{"S", lineGarbage, 0},
		{"D 1234", lineGarbage, 0},
		{"INQUIRE PINENTRY_LAUNCHED", lineGarbage, 0},
		{"END", lineGarbage, 0},
		{"", lineGarbage, 0},
		{"\xff\xfe", lineGarbage, 0},
	} {
		kind, code := parseLine([]byte(tc.line))
		if kind != tc.kind || code != tc.code {
			t.Errorf("parseLine(%q) = %v, %d; want %v, %d", tc.line, kind, code, tc.kind, tc.code)
		}
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{"OK", "OK x", "ERR 83886179 x", "ERR 62", "# c", "S X", "D x", "", "ERR 4294967296",
		"OK\n", "# x\nS y\nOK\n", "ERR 1\n", strings.Repeat("A", 3000) + "\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, code := parseLine(b)
		switch kind {
		case lineOK:
			if !bytes.HasPrefix(b, []byte("OK")) {
				t.Fatalf("%q parsed as OK", b)
			}
		case lineErr:
			num, _, _ := strings.Cut(strings.TrimPrefix(string(b), "ERR "), " ")
			if n, err := strconv.ParseUint(num, 10, 32); !bytes.HasPrefix(b, []byte("ERR ")) || err != nil || uint32(n) != code {
				t.Fatalf("%q parsed as ERR %d", b, code)
			}
		case lineComment, lineStatus, lineGarbage:
		default:
			t.Fatalf("%q: kind %v", b, kind)
		}
		if kind != lineErr && code != 0 {
			t.Fatalf("%q: code %d without ERR", b, code)
		}
		// The response reader over the same bytes terminates and never panics.
		c := &assuanConn{r: bufio.NewReaderSize(bytes.NewReader(b), maxResponseLine), w: io.Discard}
		for range 10 {
			if c.response() != nil {
				break
			}
		}
	})
}

// TestConfirmOverPipe runs the Assuan client against scripted peers over net.Pipe.
func TestConfirmOverPipe(t *testing.T) {
	long := strings.Repeat("x", 3000)
	statusFlood := strings.Repeat("S PROGRESS\n", maxSkipped+1) + "OK\n"
	for _, tc := range []struct {
		name     string
		greeting string
		setup    string // reply to every command before CONFIRM
		confirm  string // reply to CONFIRM; "" closes the connection
		want     error  // nil: allowed
		answered bool
		code     uint32 // of the wrapped PinentryError; 0: none
	}{
		{"allow", "OK hi\n", "OK\n", "OK\n", nil, true, 0},
		{"comments and status skipped", "# hello\nOK\n", "S FOO bar\n# x\nOK fine\n", "S X\nOK\n", nil, true, 0},
		{"cancelled", "OK\n", "OK\n", "ERR 83886179 Operation cancelled <Pinentry>\n", ErrDenied, true, 83886179},
		{"not confirmed", "OK\n", "OK\n", "ERR 83886194 Not confirmed\n", ErrDenied, true, 83886194},
		{"no tty", "OK\n", "OK\n", "S ERROR curses.isatty 83918950 \nERR 83918950 Inappropriate ioctl for device <Pinentry>\n", ErrUnavailable, true, 83918950},
		{"dialog timeout", "OK\n", "OK\n", "ERR 83886142 Timeout <Pinentry>\n", ErrTimeout, true, 83886142},
		{"timeout code, other source", "OK\n", "OK\n", "ERR 62\n", ErrTimeout, true, 62},
		{"EOF after CONFIRM", "OK\n", "OK\n", "", ErrDenied, false, 0},
		{"data line after CONFIRM", "OK\n", "OK\n", "D 1\nOK\n", ErrDenied, false, 0},
		{"long line after CONFIRM", "OK\n", "OK\n", long + "\n", ErrDenied, false, 0},
		{"status flood after CONFIRM", "OK\n", "OK\n", statusFlood, ErrDenied, false, 0},
		{"CR after CONFIRM", "OK\n", "OK\n", "OK\r\n", ErrDenied, false, 0},
		{"inquire greeting", "INQUIRE X\n", "OK\n", "OK\n", ErrUnavailable, false, 0},
		{"ERR greeting", "ERR 1 no\n", "OK\n", "OK\n", ErrUnavailable, false, 1},
		{"long greeting", "OK " + long + "\n", "OK\n", "OK\n", ErrUnavailable, false, 0},
		{"ERR to setup", "OK\n", "ERR 83886179 no\n", "OK\n", ErrUnavailable, false, 83886179},
		{"garbage to setup", "OK\n", "\xff\n", "OK\n", ErrUnavailable, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server := net.Pipe()
			t.Cleanup(func() { client.Close(); server.Close() })
			go func() {
				defer server.Close()
				in := bufio.NewReader(server)
				if _, err := io.WriteString(server, tc.greeting); err != nil {
					return
				}
				for {
					line, err := in.ReadString('\n')
					if err != nil {
						return
					}
					reply := tc.setup
					if line == "CONFIRM\n" {
						reply = tc.confirm
					}
					if reply == "" {
						return
					}
					if _, err := io.WriteString(server, reply); err != nil {
						return
					}
				}
			}()
			c := &assuanConn{r: bufio.NewReaderSize(client, maxResponseLine), w: client}
			answered, err := c.confirm([]string{"SETTITLE x", "SETDESC y"})
			if answered != tc.answered {
				t.Errorf("answered = %v, want %v", answered, tc.answered)
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("confirm = %v, want allowed", err)
				}
				return
			}
			if s := sentinels(err); len(s) != 1 || s[0] != tc.want {
				t.Fatalf("confirm = %v, wraps %v, want exactly %v", err, s, tc.want)
			}
			var pe *PinentryError
			if errors.As(err, &pe) != (tc.code != 0) || (pe != nil && pe.Code != tc.code) {
				t.Errorf("confirm = %v, want a wrapped PinentryError with code %d", err, tc.code)
			}
			if strings.Contains(err.Error(), "Pinentry") || strings.Contains(err.Error(), "xxx") {
				t.Errorf("error quotes the program's output: %v", err)
			}
		})
	}
}

func BenchmarkPinentryApprove(b *testing.B) {
	program, _ := presencetest.FakePinentry(b, "approve")
	p, err := NewPinentry(PinentryOptions{Program: program})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	use := func(context.Context) error { return nil }
	for b.Loop() {
		if err := p.Do(ctx, testRequest, use); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDescriptionNamesWhatIsApproved: the prompt names the page, the field, the agent chain
// (labelled as the host's report), the loopback listener and the host as requester; a
// verification says nothing will be typed.
func TestDescriptionNamesWhatIsApproved(t *testing.T) {
	r := Request{Origin: "http://127.0.0.1:8080", Account: "a@x", Alias: "dev", Session: "default", PID: 42, Exe: "/usr/local/bin/headless", Host: true,
		Path: "/login", Field: "Password", Listener: "pid 7 /usr/bin/python3 (uid 1000)",
		Agent: []procstat.Proc{{PID: 10, Comm: "headless"}, {PID: 9, Exe: "/usr/bin/bash"}, {PID: 8, Exe: "/usr/bin/claude"}}}
	want := `Release the saved password for "a@x" at http://127.0.0.1:8080 (alias "dev") to browser session "default"?
Page "/login", field "Password" (as reported by the host).
On this machine: pid 7 /usr/bin/python3 (uid 1000).
Asked by pid 10 comm "headless" (executable unreadable) ← pid 9 /usr/bin/bash ← pid 8 /usr/bin/claude (as reported by the host).
Requested by pid 42 ("/usr/local/bin/headless"), the browser host.`
	if got := r.Description(); got != want {
		t.Fatalf("Description:\n%s\nwant:\n%s", got, want)
	}
	r.Verify, r.Path, r.Field, r.Listener = true, "", "", ""
	if got := r.Description(); !strings.HasPrefix(got, `Verify that the saved password for "a@x" at http://127.0.0.1:8080 (alias "dev") can be released?`) ||
		!strings.Contains(got, "nothing will be typed anywhere") || strings.Contains(got, "browser session") {
		t.Fatalf("verify description: %q", got)
	}
}

// TestDescriptionWarningsComeFirst: a form sign-in at a path the credential was not used at,
// and a loopback site served by a process the agent started, are each the prompt's first
// line, before the usual text (which stays whole); both together are the first two lines.
func TestDescriptionWarningsComeFirst(t *testing.T) {
	base := Request{Origin: "http://127.0.0.1:8931", Account: "a@x", Alias: "x", Session: "default", PID: 42, Exe: "/usr/local/bin/headless", Host: true,
		Path: "/u/agent/signin", Field: "Password"}
	usual := base.Description()
	const newPath = `NOT WHERE YOU SIGNED IN BEFORE: this sign-in form is at "/u/agent/signin"; alias "x" signed in at "/login" before.`
	const agentSite = `THE AGENT STARTED THIS SITE: http://127.0.0.1:8931 is served by pid 4242 ("python3"), a process started by the agent asking.`
	for _, tc := range []struct {
		name  string
		set   func(r *Request)
		first []string
	}{
		{"new path", func(r *Request) { r.KnownPaths = []string{"/login"} }, []string{newPath}},
		{"new path, several known", func(r *Request) { r.KnownPaths = []string{"/login", "/signin", "/auth"} },
			[]string{`NOT WHERE YOU SIGNED IN BEFORE: this sign-in form is at "/u/agent/signin"; alias "x" signed in at "/login", "/signin" or "/auth" before.`}},
		{"agent site", func(r *Request) { r.AgentSite = procstat.Proc{PID: 4242, Comm: "python3"} }, []string{agentSite}},
		{"agent site without a comm", func(r *Request) { r.AgentSite = procstat.Proc{PID: 4242, Exe: "/usr/bin/python3"} },
			[]string{`THE AGENT STARTED THIS SITE: http://127.0.0.1:8931 is served by pid 4242 ("/usr/bin/python3"), a process started by the agent asking.`}},
		{"both", func(r *Request) {
			r.KnownPaths = []string{"/login"}
			r.AgentSite = procstat.Proc{PID: 4242, Comm: "python3"}
		}, []string{newPath, agentSite}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			tc.set(&r)
			want := strings.Join(tc.first, "\n") + "\n" + usual
			if got := r.Description(); got != want {
				t.Fatalf("Description:\n%s\nwant:\n%s", got, want)
			}
		})
	}
	if strings.Contains(usual, "NOT WHERE") || strings.Contains(usual, "THE AGENT") || strings.Contains(usual, "NO SIGN-IN PAGE") {
		t.Fatalf("a request without them warns: %s", usual)
	}
}

// TestDescriptionFirstSignInAndBasic: a credential's first sign-in warns first that no
// sign-in page was set and that the page the agent chose will be remembered; a Basic release names the one request the
// header goes to (its path and query) instead of a page and field.
func TestDescriptionFirstSignInAndBasic(t *testing.T) {
	r := Request{Origin: "https://app.example", Account: "a@x", Alias: "x", Session: "s", PID: 42, Exe: "/usr/local/bin/headless", Host: true,
		Path: "/login", Field: "Password", FirstLogin: true}
	want := `NO SIGN-IN PAGE WAS SET FOR THIS CREDENTIAL: page "/login", which the agent chose, will be remembered as its sign-in page. Approve only if it is the site's own sign-in page.
Release the saved password for "a@x" at https://app.example (alias "x") to browser session "s"?
Page "/login", field "Password" (as reported by the host).
Requested by pid 42 ("/usr/local/bin/headless"), the browser host.`
	if got := r.Description(); got != want {
		t.Fatalf("Description:\n%s\nwant:\n%s", got, want)
	}
	b := Request{Origin: "https://app.example", Account: "a@x", Alias: "x", Session: "s", PID: 42, Exe: "/usr/local/bin/headless", Host: true,
		Basic: true, Path: "/api/report?id=7", Field: "HTTP Basic authentication, realm staff"}
	want = `Release the saved password for "a@x" at https://app.example (alias "x") to browser session "s" for HTTP Basic authentication (this session's requests to that origin's protection space)?
The Authorization header goes with this session's requests to the protection space of "/api/report?id=7"; the challenge: "HTTP Basic authentication, realm staff" (as reported by the host).
Requested by pid 42 ("/usr/local/bin/headless"), the browser host.`
	if got := b.Description(); got != want {
		t.Fatalf("Basic Description:\n%s\nwant:\n%s", got, want)
	}
	b.Field = ""
	if got := b.Description(); !strings.Contains(got, "\nThe Authorization header goes with this session's requests to the protection space of \"/api/report?id=7\" (as reported by the host).\n") || strings.Contains(got, "Page ") {
		t.Fatalf("Basic Description without a challenge: %s", got)
	}
}

// TestPromptDescriptionKeepsTheWarnings: shortened to fit one Assuan line, a prompt with the
// longest known paths and agent site still starts with both warnings and names the requester.
func TestPromptDescriptionKeepsTheWarnings(t *testing.T) {
	long := make([]string, 8)
	for i := range long {
		long[i] = "/" + strings.Repeat("\x01%é", 170)
	}
	r := longRequest
	r.Host, r.KnownPaths = true, long
	r.AgentSite = procstat.Proc{PID: 9, Comm: strings.Repeat("\x01", 16), Exe: strings.Repeat("\x7f", 256)}
	d := promptDescription(r)
	if n := len("SETDESC " + d + "\n"); n > maxCommandLine {
		t.Fatalf("SETDESC line is %d bytes", n)
	}
	text, err := unescape(d)
	if err != nil {
		t.Fatalf("shortening broke an escape: %v", err)
	}
	lines := strings.Split(text, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "NOT WHERE YOU SIGNED IN BEFORE: ") || !strings.HasPrefix(lines[1], "THE AGENT STARTED THIS SITE: ") ||
		!strings.Contains(text, "Requested by pid 77 (") {
		t.Fatalf("shortened prompt lost a warning or the requester: %q", text)
	}
}

// A hand-over's prompt asks "Done?" with its own buttons and bound, says what the agent asked
// for in its own words (quoted) and where, and never speaks of releasing a password.
func TestPinentryHandover(t *testing.T) {
	p, logFile := newFake(t, "approve", PinentryOptions{Timeout: 10 * time.Second})
	r := Request{Handover: true, Session: "s-1", Reason: "solve the CAPTCHA\nthen press Done", Path: "https://example.com/login",
		Title: "Sign in", PID: 4242, Exe: "/usr/bin/headless", Host: true, Wait: 90 * time.Second,
		Agent: []procstat.Proc{{PID: 7, Comm: "claude"}}}
	if err := p.Do(context.Background(), r, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	evs := readLog(t, logFile)
	got := received(evs, pidsOf(evs, "start", "approve")[0])
	for _, want := range []string{"SETPROMPT Done?", "SETOK Done", "SETCANCEL Decline", "SETTIMEOUT 88"} {
		if !slices.Contains(got, want) {
			t.Errorf("conversation %q has no %q", got, want)
		}
	}
	prompt := presencetest.Prompts(t, logFile)[0]
	for _, part := range []string{`browser session "s-1"`, `"solve the CAPTCHA\nthen press Done"`, `titled "s-1"`, `Page "https://example.com/login", titled "Sign in"`,
		"claude", "Press Done when you are done", "pid 4242"} {
		if !strings.Contains(prompt, part) {
			t.Errorf("prompt %q does not say %q", prompt, part)
		}
	}
	if strings.Contains(prompt, "assword") || strings.Contains(prompt, "Release") {
		t.Errorf("a hand-over's prompt speaks of a release: %q", prompt)
	}
	r.NoWindow = true
	if d := r.Description(); !strings.Contains(d, "has no window here") || !strings.Contains(d, "elsewhere") {
		t.Errorf("a hand-over without a window does not say so: %q", d)
	}
}

// Wait bounds a prompt in place of the provider's own timeout.
func TestPinentryWaitBoundsThePrompt(t *testing.T) {
	p, logFile := newFake(t, "hang", PinentryOptions{Timeout: 10 * time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a bound, not the subject
	defer cancel()
	r := testRequest
	r.Handover, r.Wait = true, 300*time.Millisecond
	err := p.Do(ctx, r, func(context.Context) error { return nil })
	if s := sentinels(err); len(s) != 1 || s[0] != ErrTimeout {
		t.Fatalf("Do = %v, want ErrTimeout only", err)
	}
	for _, pid := range pidsOf(readLog(t, logFile), "start", "hang") {
		assertReaped(t, pid)
	}
	assertDescendantsDie(t, readLog(t, logFile))
}
