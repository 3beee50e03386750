package cdp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/test/realtest"
)

func chromium(t testing.TB) string {
	realtest.Need(t)
	p := "/usr/lib/chromium/chromium"
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("Debian chromium is missing (%v): install it (scripts/install-deps.sh)", err)
	}
	return p
}

func launch(t testing.TB) *Browser {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := Launch(ctx, Options{
		Path:    chromium(t),
		Args:    []string{"--user-data-dir=" + filepath.Join(dir, "profile")},
		Env:     []string{"PATH=/usr/bin:/bin", "HOME=" + dir},
		TempDir: filepath.Join(dir, "tmp"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Kill() })
	return b
}

// ListeningTCPInodes returns the socket inodes of listening TCP sockets (IPv4 and IPv6).
func listeningTCPInodes(t testing.TB) map[string]bool {
	out := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Scan()
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 9 && fields[3] == "0A" { // TCP_LISTEN
				out[fields[9]] = true
			}
		}
		fh.Close()
	}
	return out
}

func TestPipeOnlyNoTCP(t *testing.T) {
	b := launch(t)
	ctx := context.Background()
	var v struct {
		Product string `json:"product"`
	}
	if err := b.Call(ctx, "", "Browser.getVersion", nil, &v); err != nil || !strings.HasPrefix(v.Product, "HeadlessChrome/") && !strings.HasPrefix(v.Product, "Chrome/") {
		t.Fatalf("version %q %v", v.Product, err)
	}
	// Open a page so renderers exist too.
	var tgt struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &tgt); err != nil {
		t.Fatal(err)
	}
	pids := b.Pids()
	if len(pids) < 2 {
		t.Fatalf("expected browser plus helpers, got %v", pids)
	}
	listening := listeningTCPInodes(t)
	sockets := 0
	for _, pid := range pids {
		fds, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
		for _, fd := range fds {
			l, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name())
			if ino, ok := strings.CutPrefix(l, "socket:["); ok {
				sockets++
				if listening[strings.TrimSuffix(ino, "]")] {
					t.Errorf("chromium pid %d owns a listening TCP socket", pid)
				}
			}
		}
	}
	if sockets == 0 {
		t.Fatal("found no sockets at all in chromium's fds: the check would prove nothing")
	}
}

func TestCloseLeavesNothing(t *testing.T) {
	b := launch(t)
	pids := b.Pids()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(b.Err(), ErrClosed) {
		t.Fatalf("Err after Close = %v", b.Err())
	}
	// Close returns once its process group is gone (the stragglers it killed too), so that
	// `headless stop` leaves nothing running when it answers.
	if groupAlive(b.PID()) {
		t.Errorf("a process of the browser's group is alive when Close returned (it waits up to %v for them)", groupWait)
	}
	// Chromium's helpers exit on their own once the browser is gone; on a loaded machine that
	// takes a moment. A process still there after 10 s was left behind.
	alive := func() []int {
		var out []int
		for _, p := range pids {
			if syscall.Kill(p, 0) == nil && !zombie(p) {
				out = append(out, p)
			}
		}
		return out
	}
	for deadline := time.Now().Add(10 * time.Second); len(alive()) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range alive() {
		t.Errorf("pid %d survived Close", p)
	}
}

func TestCrashIsReported(t *testing.T) {
	b := launch(t)
	syscall.Kill(b.PID(), syscall.SIGKILL)
	select {
	case <-b.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("crash not noticed")
	}
	if !errors.Is(b.Err(), ErrCrashed) {
		t.Fatalf("Err = %v, want ErrCrashed", b.Err())
	}
	if err := b.Call(context.Background(), "", "Browser.getVersion", nil, nil); !errors.Is(err, ErrCrashed) {
		t.Fatalf("Call after crash = %v", err)
	}
}

func zombie(pid int) bool { return !procstat.Alive(pid) }

func BenchmarkLaunchToVersion(b *testing.B) {
	for b.Loop() {
		br := launch(b)
		br.Kill()
	}
}

// FuzzAppendJSONString: every input is either valid UTF-8, and then encodes to exactly the JSON
// string of its bytes, or it is refused and nothing is appended. Nothing is ever passed through
// raw: a secret that is not text cannot reach Chromium as another text.
func FuzzAppendJSONString(f *testing.F) {
	f.Add([]byte(`pa"ss\word` + "\n\t\x01\x7f ü€"))
	f.Add([]byte("pw\xff\xfe"))
	f.Add([]byte("\xed\xa0\x80")) // a surrogate half
	f.Add([]byte("cut \xe2\x82"))
	f.Add([]byte("\u2028\u2029\U0001F511"))
	f.Fuzz(func(t *testing.T, s []byte) {
		dst := []byte("prefix")
		out, ok := AppendJSONString(dst, s)
		if ok != utf8.Valid(s) {
			t.Fatalf("%q: ok = %v, but utf8.Valid = %v", s, ok, utf8.Valid(s))
		}
		if !bytes.HasPrefix(out, []byte("prefix")) {
			t.Fatalf("%q: the prefix was changed: %q", s, out)
		}
		if !ok {
			if len(out) != len("prefix") {
				t.Fatalf("%q refused, but %q was appended", s, out[len("prefix"):])
			}
			return
		}
		enc := append([]byte{'"'}, out[len("prefix"):]...)
		enc = append(enc, '"')
		for _, c := range enc {
			if c < 0x20 || c == 0x7f {
				t.Fatalf("%q → %q holds a raw control byte", s, enc)
			}
		}
		var got string
		if err := json.Unmarshal(enc, &got); err != nil || got != string(s) {
			t.Fatalf("%q → %s → %q, %v", s, enc, got, err)
		}
	})
}

// TestRendererCrashFailsCalls: Chromium never answers a call to a page whose renderer died;
// the call fails with ErrTargetCrashed as soon as Inspector.targetCrashed arrives, and later
// calls to that session fail without being sent.
func TestRendererCrashFailsCalls(t *testing.T) {
	b := launch(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, sid := attachPage(t, ctx, b)
	if err := b.Call(ctx, sid, "Page.navigate", map[string]any{"url": "data:text/html,<p>hi</p>"}, nil); err != nil {
		t.Fatal(err)
	}
	killRenderers := func() int {
		killed := 0
		for _, pid := range b.Pids() {
			if cl, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && strings.Contains(string(cl), "--type=renderer") {
				syscall.Kill(pid, syscall.SIGKILL)
				killed++
			}
		}
		return killed
	}
	// A renderer is forked from the zygote and names itself --type=renderer once it runs: on a
	// busy machine the page's may still carry the zygote's command line (the suite's run on
	// 9e14f91 failed so). Looked for again, 10 s at most.
	for seen := time.Now(); killRenderers() == 0; time.Sleep(100 * time.Millisecond) {
		if time.Since(seen) > 10*time.Second {
			t.Fatal("no renderer to kill within 10 s")
		}
	}
	began := time.Now()
	lastKill := began
	// Chromium may still answer calls that were in flight; keep calling until the crash is seen.
	// On a loaded machine the page's own renderer may not have been listed yet (a spare one
	// was killed): kill what renderers there are again after a second.
	var err error
	for time.Since(began) < 20*time.Second {
		if time.Since(lastKill) > time.Second {
			killRenderers()
			lastKill = time.Now()
		}
		cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
		err = b.Call(cctx, sid, "DOMSnapshot.captureSnapshot", map[string]any{"computedStyles": []string{}}, nil)
		ccancel()
		if errors.Is(err, ErrTargetCrashed) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !errors.Is(err, ErrTargetCrashed) || time.Since(began) > 10*time.Second {
		t.Fatalf("call after the renderer was killed: %v after %v, want ErrTargetCrashed within seconds", err, time.Since(began))
	}
	if !errors.Is(b.SessionErr(sid), ErrTargetCrashed) {
		t.Errorf("SessionErr = %v", b.SessionErr(sid))
	}
	if err := b.Call(ctx, "", "Browser.getVersion", nil, nil); err != nil {
		t.Errorf("the browser itself no longer answers: %v", err)
	}
}

// attachPage opens a blank page, attaches to it (flat session) and enables the Inspector
// domain (crash events); it returns the target and session ids.
func attachPage(t *testing.T, ctx context.Context, b *Browser) (targetID, sid string) {
	t.Helper()
	var tg struct {
		ID string `json:"targetId"`
	}
	if err := b.Call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &tg); err != nil {
		t.Fatal(err)
	}
	var at struct {
		SID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": tg.ID, "flatten": true}, &at); err != nil {
		t.Fatal(err)
	}
	if err := b.Call(ctx, at.SID, "Inspector.enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	return tg.ID, at.SID
}

// TestDevToolsChannelCannotBeReopened: the browser's fd 3 and 4 carry every CDP message; a
// process of the same user could open /proc/PID/fd/N of the (dumpable) browser and inject
// commands or read replies if they were pipes. They are sockets: opening them fails.
func TestDevToolsChannelCannotBeReopened(t *testing.T) {
	b := launch(t)
	for _, c := range []struct {
		fd   string
		flag int
	}{{"3", os.O_WRONLY}, {"3", os.O_RDONLY}, {"4", os.O_RDONLY}, {"4", os.O_WRONLY}} {
		p := "/proc/" + strconv.Itoa(b.PID()) + "/fd/" + c.fd
		target, _ := os.Readlink(p)
		f, err := os.OpenFile(p, c.flag, 0)
		if err == nil {
			f.Close()
			t.Errorf("opened %s (%s) with flags %d: another process could speak CDP to the browser", p, target, c.flag)
			continue
		}
		if !errors.Is(err, syscall.ENXIO) {
			t.Errorf("open %s (%s): %v, want ENXIO (a socket)", p, target, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Call(ctx, "", "Browser.getVersion", nil, nil); err != nil {
		t.Fatalf("the browser does not answer over its sockets: %v", err)
	}
}

// TestCrashedRendererLeavesNoDump: a renderer the host crashes on purpose (Page.crash, to
// discard a page that may hold a typed password) writes no minidump — a file of its memory —
// anywhere under the browser's private dirs.
func TestCrashedRendererLeavesNoDump(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Launch(ctx, Options{
		Path:    chromium(t),
		Args:    []string{"--user-data-dir=" + filepath.Join(dir, "profile")},
		Env:     []string{"PATH=/usr/bin:/bin", "HOME=" + dir},
		TempDir: filepath.Join(dir, "tmp"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Kill()
	_, sid := attachPage(t, ctx, b)
	if err := b.Call(ctx, sid, "Page.navigate", map[string]any{"url": "data:text/html,<input value=cnry-dump-test>"}, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	cctx, ccancel := context.WithTimeout(ctx, 3*time.Second)
	b.Call(cctx, sid, "Page.crash", nil, nil)
	ccancel()
	for deadline := time.Now().Add(10 * time.Second); b.SessionErr(sid) == nil && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if b.SessionErr(sid) == nil {
		t.Fatal("the renderer did not crash: the test proves nothing")
	}
	time.Sleep(2 * time.Second) // a crash handler writes within moments
	var dumps []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".dmp") || strings.Contains(p, "Crash Reports/")) {
			dumps = append(dumps, p)
		}
		return nil
	})
	if len(dumps) != 0 {
		t.Errorf("a crashed renderer left dumps: %v", dumps)
	}
}

// TestNoCrashHandler: whatever config dir the environment names — here one with a crash
// database ready, as red-team round 8 made one appear in the moment before Chromium looked —
// Chromium gets XDG_CONFIG_HOME under /proc and starts no crash handler. A live handler makes
// a crashing Chromium process dumpable, and so readable by every process of the user.
func TestNoCrashHandler(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cfg")
	if err := os.MkdirAll(filepath.Join(cfg, "chromium", "Crash Reports"), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Launch(ctx, Options{
		Path: chromium(t),
		Args: []string{"--user-data-dir=" + filepath.Join(dir, "profile")},
		Env:  []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "XDG_CONFIG_HOME=" + cfg},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Kill()
	if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", b.PID())); err == nil && !bytes.Contains(env, []byte("\x00XDG_CONFIG_HOME="+NoConfigHome+"\x00")) {
		t.Errorf("the browser's environment has no XDG_CONFIG_HOME=%s", NoConfigHome)
	}
	time.Sleep(2 * time.Second) // a handler starts within moments of the browser
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(cmdline, []byte("crashpad_handler")) && bytes.Contains(cmdline, []byte(dir+"/")) {
			if pid, err := strconv.Atoi(e.Name()); err == nil {
				defer syscall.Kill(pid, syscall.SIGKILL) // it daemonised out of the browser's group
			}
			t.Errorf("a crash handler runs for the browser: pid %s %q", e.Name(), bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		}
	}
}

// TestRequestEvent: of a page's request events only the start and end reach the host, with
// the request's id alone — never its URL, headers or body.
func TestRequestEvent(t *testing.T) {
	params := json.RawMessage(`{"requestId":"1000.7","request":{"url":"http://x/?pw=canary","headers":{"Authorization":"Basic canary"},"postData":"canary"}}`)
	for _, method := range []string{RequestStarted, RequestEnded, RequestFailed} {
		ev, ok := requestEvent(message{SessionID: "s1", Method: method, Params: params})
		if !ok || ev.SessionID != "s1" || ev.Method != method || string(ev.Params) != `"1000.7"` || RequestID(ev) != "1000.7" {
			t.Fatalf("%s: %+v %v", method, ev, ok)
		}
	}
	for _, m := range []message{
		{SessionID: "s1", Method: "Network.responseReceived", Params: params},
		{SessionID: "s1", Method: "Network.requestWillBeSentExtraInfo", Params: params},
		{Method: RequestStarted, Params: params}, // the browser's own, of no page
		{SessionID: "s1", Method: RequestStarted, Params: json.RawMessage(`{"requestId":""}`)},
		{SessionID: "s1", Method: RequestStarted, Params: json.RawMessage(`{"requestId":"` + strings.Repeat("9", 65) + `"}`)},
	} {
		if ev, ok := requestEvent(m); ok {
			t.Fatalf("%+v reached the host: %+v", m, ev)
		}
	}
}
