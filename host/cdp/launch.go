package cdp

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/safesock"
)

// Options configure Launch.
type Options struct {
	Path    string   // the Chromium binary (not Debian's /usr/bin/chromium wrapper)
	Args    []string // extra flags (profile flags, ...)
	Env     []string // the browser's whole environment
	TempDir string   // TMPDIR for the browser; created 0700
	Stderr  io.Writer
	// Window, when set, is the platform of the person's display ("wayland" or "x11", from
	// Env's WAYLAND_DISPLAY or DISPLAY): the browser shows windows there instead of running
	// headless, and its first window is titled WindowName. Everything else is the same.
	Window     string
	WindowName string
}

// baseFlags are always passed. They keep Chromium headless (or, with o.Window, on the person's
// display), off the network except for what pages load, and on the pipe.
func baseFlags(o Options) []string {
	f := []string{"--headless"}
	if o.Window != "" {
		// No Wayland-or-X11 guess of Chromium's: the platform whose display Env names (X11 only
		// where that is all there is). The first window carries the default session's name
		// (a user title: Chromium shows it as the window's whole title).
		f = []string{"--ozone-platform=" + o.Window, "--window-name=" + o.WindowName}
	}
	f = append(f,
		"--remote-debugging-pipe",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-gpu",
		"--disable-quic",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-default-apps",
		"--disable-breakpad",
		"--mute-audio",
		"--hide-scrollbars",
		// Pages are laid out as on a common laptop screen (Playwright's default), not in
		// headless Chromium's 800x600 window (a 780x493 viewport).
		"--window-size=1280,720",
		// No back/forward cache: a history step must never bring back a document the host
		// typed a password into (it would come back with the field filled).
		"--disable-back-forward-cache",
		// One list (Chromium reads only the last --disable-features): no back/forward cache
		// (above); and none of the features that reach Google's servers unasked (issue 30: an
		// idle host looked up accounts.google.com, update.googleapis.com, clients2.google.com
		// and content-autofill.googleapis.com; tests/netns_e2e_test.go counts every packet):
		// autofill's server, translation, media routing, optimization hints, the certificate
		// transparency and other component updaters.
		"--disable-features=BackForwardCache,AutofillServerCommunication,Translate,MediaRouter,DialMediaRouteProvider,"+
			"OptimizationHints,OptimizationHintsFetching,OptimizationGuideModelDownloading,CertificateTransparencyComponentUpdater,"+
			"InterestFeedContentSuggestions,SafeBrowsingEnhancedProtection,NetworkTimeServiceQuerying,PrivacySandboxSettings4",
		// No sign-in to a Google account, no pings, no domain reliability uploads, no
		// phishing-model fetches, no field trials, no metrics upload.
		"--allow-browser-signin=false",
		// What still went out after all of that: the profile's Google account check
		// (POST accounts.google.com/ListAccounts, with the profile's google.com cookies, on
		// every cookie change) and the component updater (update.googleapis.com, despite
		// --disable-component-update). Both are pointed at a privileged port of loopback,
		// where nothing answers and no program of the user can listen: they fail at once and
		// nothing leaves the machine. Pages' own navigations to those hosts are not affected.
		"--gaia-url=http://127.0.0.1:9",
		"--component-updater=url-source=http://127.0.0.1:9/",
		"--no-pings",
		"--disable-domain-reliability",
		"--disable-client-side-phishing-detection",
		"--disable-component-extensions-with-background-pages",
		"--disable-field-trial-config",
		"--metrics-recording-only",
		// The durable profile is the agent's to write (the same user): nothing in it may
		// route the browser's traffic or run code as a site. A proxy in its Preferences (or
		// in the desktop's proxy settings) would receive a sign-in's POST — red-team round 6b
		// read the password so — and so would an extension. Command-line proxy settings win
		// over the profile's.
		"--no-proxy-server",
		"--disable-extensions",
		// chrome://flags entries in the profile's Local State are applied as command-line
		// switches at start: none is.
		"--no-experiments",
		// No disk cache: a response planted in the profile's cache (a sign-in page with a
		// script of the agent's, say) would be served as the site's own.
		"--disk-cache-size=1",
	)
	if os.Geteuid() == 0 {
		f = append(f, "--no-sandbox") // Chromium refuses to run as root with its sandbox
	} else {
		// The setuid sandbox (Debian's chromium-sandbox), never the user-namespace one: a
		// renderer in a user namespace the user owns is open to every process of the user
		// (the namespace's owner may ptrace it and read its memory, whatever its gid), and
		// the renderer holds what is typed into a page.
		f = append(f, "--disable-namespace-sandbox")
	}
	return f
}

// Launch starts the browser and waits until it answers Browser.getVersion.
func Launch(ctx context.Context, o Options) (*Browser, error) {
	if o.TempDir != "" {
		if err := os.MkdirAll(o.TempDir, 0o700); err != nil {
			return nil, fmt.Errorf("browser temp dir: %w", err)
		}
	}
	// Pipes: we write to toBrowser (browser's fd 3), read from fromBrowser (its fd 4).
	// The two channels are Unix socket pairs, not pipes: the browser process is dumpable (exec
	// resets the flag), so any process of the user can open its /proc/PID/fd/N — and a pipe
	// opened that way is a second writer of the host's commands and a second reader of the
	// browser's replies. A socket cannot be opened through /proc (ENXIO).
	toR, toW, err := socketPair()
	if err != nil {
		return nil, err
	}
	fromR, fromW, err := socketPair()
	if err != nil {
		toR.Close()
		toW.Close()
		return nil, err
	}
	args := append(baseFlags(o), o.Args...)
	args = append(args, "about:blank")
	cmd := exec.Command(o.Path, args...)
	// XDG_CONFIG_HOME is a path under /proc, where nobody can create anything: Chromium has no
	// crash database there, so it starts no crash handler. A live handler is what makes a
	// crashing Chromium process dumpable (so that the handler may read it), and with it every
	// process of the user could read that process's memory, a typed password included:
	// red-team round 8 replaced the empty file that used to block the database (under the
	// user's own runtime dir) with a directory in the moment before Chromium looked, then
	// crashed the browser and read it. Nothing else of the user's config dir (fontconfig, GTK,
	// dconf) is read either.
	cmd.Env = append(append([]string(nil), o.Env...), "XDG_CONFIG_HOME="+NoConfigHome)
	if o.TempDir != "" {
		cmd.Env = append(cmd.Env, "TMPDIR="+o.TempDir)
	}
	cmd.Dir = "/"
	cmd.Stdout = nil
	cmd.Stderr = o.Stderr
	cmd.ExtraFiles = []*os.File{toR, fromW} // fd 3, fd 4
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		toR.Close()
		toW.Close()
		fromR.Close()
		fromW.Close()
		return nil, fmt.Errorf("start browser: %w", err)
	}
	toR.Close()
	fromW.Close()
	b := &Browser{
		cmd: cmd, w: toW, r: fromR,
		pending:  map[int64]chan reply{},
		psess:    map[int64]string{},
		gone:     map[string]error{},
		goneCh:   map[string]chan struct{}{},
		stopping: map[string]chan struct{}{},
		crashed:  map[string]chan struct{}{},
		subs:     map[int]func(Event){},
		done:     make(chan struct{}),
		exited:   make(chan struct{}),
	}
	go b.read()
	go func() {
		cmd.Wait()
		close(b.exited)
		b.w.Close()
	}()
	var v struct {
		Product string `json:"product"`
	}
	if err := b.Call(ctx, "", "Browser.getVersion", nil, &v); err != nil {
		b.Kill()
		return nil, fmt.Errorf("browser did not answer: %w", err)
	}
	b.product = v.Product
	return b, nil
}

// Product is the browser's product string from its first Browser.getVersion answer
// ("Chrome/…"), kept so that callers need no second round trip.
func (b *Browser) Product() string { return b.product }

// socketPair returns the two ends of a connected Unix stream socket pair (close-on-exec; the
// end given to the browser is duplicated onto its fd 3 or 4 by exec), used one way like a pipe:
// r for reading, w for writing.
func socketPair() (r, w *os.File, err error) {
	fds, err := safesock.Pair()
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "devtools-r"), os.NewFile(uintptr(fds[1]), "devtools-w"), nil
}

// PID is the browser's process id.
func (b *Browser) PID() int { return b.cmd.Process.Pid }

// Close asks the browser to close (Browser.close: Chromium then commits cookies and other
// state) and waits for it to exit; if ctx ends first the browser is killed.
func (b *Browser) Close(ctx context.Context) error {
	b.mu.Lock()
	b.closing = true
	b.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	b.Call(cctx, "", "Browser.close", nil, nil) // the reply may race with exit; both are fine
	cancel()
	select {
	case <-b.exited:
	case <-ctx.Done():
		b.kill()
		<-b.exited
		b.waitGroupGone()
		return fmt.Errorf("browser did not exit after Browser.close: %w", ctx.Err())
	}
	b.kill() // stragglers of the group (renderers, zygotes)
	b.waitGroupGone()
	b.markClosed()
	return nil
}

// groupWait bounds how long a close or kill waits for the killed stragglers of the browser's
// process group to be gone.
const groupWait = 5 * time.Second

// waitGroupGone waits, at most groupWait, until no live process is left in the browser's
// process group. A SIGKILL is delivered when the process next runs, and on a busy machine a
// renderer killed lingers a moment: a caller that stopped the browser must find nothing of it
// running when Close or Kill returns. (A zombie has exited: its reaping is its parent's.)
func (b *Browser) waitGroupGone() {
	pgid := b.PID()
	for deadline := time.Now().Add(groupWait); groupAlive(pgid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

// groupAlive reports whether a live process is in process group pgid.
func groupAlive(pgid int) bool {
	alive := false
	liveProcs(func(_ int, st procstat.Stat) bool {
		alive = st.PGRP == pgid
		return !alive
	})
	return alive
}

// liveProcs calls f with every process in /proc that has not exited (neither zombie nor dead),
// until f returns false.
func liveProcs(f func(pid int, st procstat.Stat) bool) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procstat.Read(p); ok && st.State != "Z" && st.State != "X" && !f(p, st) {
			return
		}
	}
}

// markClosed records ErrClosed once the process is gone, even if the pipe reader has not yet
// seen EOF (it may lag the exit by a moment).
func (b *Browser) markClosed() {
	b.mu.Lock()
	if b.err == nil {
		b.err = ErrClosed
	}
	b.mu.Unlock()
}

// Kill kills the browser's whole process group and waits for the browser to be reaped.
func (b *Browser) Kill() {
	b.mu.Lock()
	b.closing = true
	b.mu.Unlock()
	b.kill()
	<-b.exited
	b.waitGroupGone()
	b.markClosed()
}

// NoConfigHome is Chromium's XDG_CONFIG_HOME: a path under /proc, where nobody, root
// included, can create a file (see Launch).
const NoConfigHome = "/proc/headless-chromium-has-no-config"

func (b *Browser) kill() {
	pid := b.cmd.Process.Pid
	syscall.Kill(-pid, syscall.SIGKILL)
	b.cmd.Process.Kill()
}

// Exited is closed once the browser process has been reaped.
func (b *Browser) Exited() <-chan struct{} { return b.exited }

// Pids returns the browser's pid and every live descendant (from /proc), for tests and status.
func (b *Browser) Pids() []int {
	return Descendants(b.PID())
}

// Descendants returns pid and all its live descendants.
func Descendants(pid int) []int {
	children := map[int][]int{}
	liveProcs(func(p int, st procstat.Stat) bool {
		children[st.PPID] = append(children[st.PPID], p)
		return true
	})
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}
