// Package cdp launches Chromium and speaks the Chrome DevTools Protocol to it over the private
// pipe (--remote-debugging-pipe: fd 3 the browser reads, fd 4 it writes, one JSON message and a
// NUL per message). The "pipe" is a pair of Unix socket pairs.
//
// # Security contract
//
//   - No TCP debugging port is ever opened: the only control channel is fd 3 and 4 of the
//     browser process, inherited from the host. The TCP debugging-port flag is never passed.
//   - Those fds are Unix sockets, not pipes: the browser process is dumpable (exec resets
//     that), so a process of the same user can open /proc/PID/fd/N of it; a pipe reopened so
//     would let it write CDP commands (any JavaScript in any page) and read the replies, while
//     opening a socket through /proc fails (ENXIO). What remains is ptrace-level access to the
//     browser (pidfd_getfd, ptrace), which Yama's ptrace_scope ≥ 1 restricts to its ancestors.
//   - Every message read is bounded ([MaxMessage]); an oversize or malformed message is a
//     protocol failure that kills the browser rather than being skipped.
//   - The browser runs in its own process group, is killed with it by [Browser.Kill], dies with
//     the host (Linux parent-death signal, and pipe EOF), and gets a private TMPDIR so its
//     temporary directories never land in the shared /tmp.
//   - A call to a page whose renderer crashed fails with [ErrTargetCrashed] as soon as Chromium
//     reports the crash (Inspector.targetCrashed; callers enable the Inspector domain), and one
//     to a detached session with [ErrDetached]: Chromium never answers them, and without this
//     they would wait for their deadline.
//   - The back/forward cache is off in every browser launched here, so that no history step
//     brings back a document as it was left (with whatever was typed into it).
//   - This package sends what its callers ask; it has no method that evaluates JavaScript on a
//     caller's behalf, and callers must not add one.
package cdp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/safesock"
	"github.com/headless-dev/headless/internal/wire"
)

// MaxMessage bounds one message from the browser (screenshots and DOM snapshots are large).
const MaxMessage = 64 << 20

var (
	// ErrCrashed reports a browser that went away without being asked to (BROWSER_CRASHED).
	ErrCrashed = wire.Sentinel(wire.CodeBrowserCrashed, "browser crashed")
	// ErrClosed reports a browser closed by Close or Kill (BROWSER_CRASHED to a verb that
	// needed it).
	ErrClosed = wire.Sentinel(wire.CodeBrowserCrashed, "browser closed")
	// ErrTargetCrashed reports a call to a session whose renderer crashed (Chromium then never
	// answers it): pending calls fail with it at once, later ones without being sent.
	ErrTargetCrashed = errors.New("the page's renderer crashed")
	// ErrDetached reports a call to a session that Chromium detached (its target closed).
	ErrDetached = errors.New("the page's session is detached")
)

// maxGone bounds the remembered crashed or detached sessions.
const maxGone = 1024

// Error is an error answer from the browser.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("cdp error %d: %s", e.Code, e.Message) }

// Event is a protocol event; SessionID is "" for browser-level events.
type Event struct {
	SessionID string
	Method    string
	Params    json.RawMessage
}

// Options configure Launch.
type Options struct {
	Path    string   // the Chromium binary (not Debian's /usr/bin/chromium wrapper)
	Args    []string // extra flags (profile flags, ...)
	Env     []string // the browser's whole environment
	TempDir string   // TMPDIR for the browser; created 0700
	Stderr  io.Writer
}

// baseFlags are always passed. They keep Chromium headless, off the network except for what
// pages load, and on the pipe.
func baseFlags() []string {
	f := []string{
		"--headless",
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
		"--disable-features=BackForwardCache,AutofillServerCommunication,Translate,MediaRouter,DialMediaRouteProvider," +
			"OptimizationHints,OptimizationHintsFetching,OptimizationGuideModelDownloading,CertificateTransparencyComponentUpdater," +
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
	}
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

// Browser is one running Chromium.
type Browser struct {
	cmd     *exec.Cmd
	product string // set once by Launch, before b is returned
	w       *os.File
	r       *os.File
	wmu     sync.Mutex
	next    atomic.Int64

	mu       sync.Mutex
	pending  map[int64]chan reply
	psess    map[int64]string         // session of each pending call
	gone     map[string]error         // sessions that crashed or were detached, and why
	goneCh   map[string]chan struct{} // closed when a live session goes (SessionDone)
	stopping map[string]chan struct{} // StopSession's crashes, until done
	crashed  map[string]chan struct{} // closed when a page StopSession stopped has crashed or gone
	subs     map[int]func(Event)
	nextSub  int
	closing  bool
	err      error
	done     chan struct{} // reader finished
	exited   chan struct{} // process reaped
	exitOnce sync.Once
}

type reply struct {
	result json.RawMessage
	err    error
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
	args := append(baseFlags(), o.Args...)
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

// Done is closed when the connection to the browser is gone.
func (b *Browser) Done() <-chan struct{} { return b.done }

// Err is why the browser is gone: ErrClosed, ErrCrashed (possibly wrapped), or nil while alive.
func (b *Browser) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func (b *Browser) fail(err error) {
	b.mu.Lock()
	if b.err == nil {
		if b.closing {
			b.err = ErrClosed
		} else {
			b.err = fmt.Errorf("%w: %w", ErrCrashed, err)
		}
	}
	pend := b.pending
	b.pending = map[int64]chan reply{}
	b.psess = map[int64]string{}
	for sid, ch := range b.goneCh {
		close(ch)
		delete(b.goneCh, sid)
	}
	ferr := b.err
	b.mu.Unlock()
	for _, ch := range pend {
		ch <- reply{err: ferr}
	}
}

type message struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *Error          `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

func (b *Browser) read() {
	defer close(b.done)
	br := bufio.NewReaderSize(b.r, 64<<10)
	var buf bytes.Buffer
	for {
		buf.Reset()
		for {
			chunk, err := br.ReadSlice(0)
			if buf.Len()+len(chunk) > MaxMessage {
				b.fail(errors.New("message from browser exceeds the size limit"))
				b.kill()
				return
			}
			buf.Write(chunk)
			if err == nil {
				break
			}
			if err != bufio.ErrBufferFull {
				b.fail(fmt.Errorf("pipe: %w", err))
				return
			}
		}
		data := bytes.TrimSuffix(buf.Bytes(), []byte{0})
		var m message
		if err := json.Unmarshal(data, &m); err != nil {
			b.fail(fmt.Errorf("malformed message from browser: %w", err))
			b.kill()
			return
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.pending[m.ID]
			delete(b.pending, m.ID)
			delete(b.psess, m.ID)
			b.mu.Unlock()
			if ch != nil {
				if m.Error != nil {
					ch <- reply{err: m.Error}
				} else {
					ch <- reply{result: bytes.Clone(m.Result)}
				}
			}
			continue
		}
		if strings.HasPrefix(m.Method, "Network.") {
			// Enabled for its service-worker bypass (host/sessions.go). A request's event can
			// carry what a page sent: only the start and end of each request, by its opaque
			// id, reach the host (an action settles on the requests it started), and
			// nothing else of the event is kept.
			if ev, ok := requestEvent(m); ok {
				b.publish(ev)
			}
			clear(buf.Bytes())
			clear(m.Params)
			continue
		}
		if m.Method != "" {
			switch m.Method {
			case "Inspector.targetCrashed":
				b.sessionGone(m.SessionID, ErrTargetCrashed)
				b.crashDone(m.SessionID)
			case "Target.detachedFromTarget":
				var p struct {
					SessionID string `json:"sessionId"`
				}
				if json.Unmarshal(m.Params, &p) == nil {
					b.sessionGone(p.SessionID, ErrDetached)
					b.crashDone(p.SessionID)
				}
			}
			b.publish(Event{SessionID: m.SessionID, Method: m.Method, Params: bytes.Clone(m.Params)})
		}
	}
}

// publish hands ev to every subscriber, on the reader (a subscriber must not block).
func (b *Browser) publish(ev Event) {
	b.mu.Lock()
	subs := make([]func(Event), 0, len(b.subs))
	for _, f := range b.subs {
		subs = append(subs, f)
	}
	b.mu.Unlock()
	for _, f := range subs {
		f(ev)
	}
}

// The request events that reach the host: a request of a page started, or ended (finished or
// failed). Their Params hold the request's id alone.
const (
	RequestStarted = "Network.requestWillBeSent"
	RequestEnded   = "Network.loadingFinished"
	RequestFailed  = "Network.loadingFailed"
)

// RequestID is the id of a RequestStarted, RequestEnded or RequestFailed event.
func RequestID(ev Event) string {
	var id string
	json.Unmarshal(ev.Params, &id)
	return id
}

// requestEvent is m as the host sees it when m starts or ends a page's request: its method,
// session and the request's id (at most 64 bytes, as a JSON string), nothing else.
func requestEvent(m message) (Event, bool) {
	switch m.Method {
	case RequestStarted, RequestEnded, RequestFailed:
	default:
		return Event{}, false
	}
	var p struct {
		RequestID string `json:"requestId"`
	}
	if m.SessionID == "" || json.Unmarshal(m.Params, &p) != nil || p.RequestID == "" || len(p.RequestID) > 64 {
		return Event{}, false
	}
	id, _ := json.Marshal(p.RequestID)
	return Event{SessionID: m.SessionID, Method: m.Method, Params: id}, true
}

// sessionGone fails the pending calls of session sid with why, and every later call to it.
func (b *Browser) sessionGone(sid string, why error) {
	if sid == "" {
		return
	}
	b.mu.Lock()
	if len(b.gone) >= maxGone {
		for k := range b.gone {
			delete(b.gone, k)
			break
		}
	}
	if _, ok := b.gone[sid]; !ok {
		b.gone[sid] = why
	}
	if ch := b.goneCh[sid]; ch != nil {
		close(ch)
		delete(b.goneCh, sid)
	}
	var fail []chan reply
	for id, s := range b.psess {
		if s == sid {
			fail = append(fail, b.pending[id])
			delete(b.pending, id)
			delete(b.psess, id)
		}
	}
	b.mu.Unlock()
	for _, ch := range fail {
		ch <- reply{err: why}
	}
}

// StopSession ends session sid's page at once, without waiting for it: every pending and
// later call to it fails with why (unless it was already gone), and its renderer is crashed
// (Page.crash is served off the page's main thread, so a page whose script never yields, or
// that floods the browser, still dies). StopWait waits for the crash to be done.
func (b *Browser) StopSession(sid string, why error) {
	if sid == "" {
		return
	}
	id := b.next.Add(1)
	msg, err := json.Marshal(message{ID: id, Method: "Page.crash", SessionID: sid})
	if err != nil {
		return
	}
	ch := make(chan reply, 1)
	b.mu.Lock()
	if _, ok := b.stopping[sid]; ok || b.err != nil {
		b.mu.Unlock()
		return
	}
	done, crashed := make(chan struct{}), make(chan struct{})
	b.stopping[sid] = done
	b.crashed[sid] = crashed
	b.pending[id] = ch // not counted as the session's: its failing must not answer the crash
	b.mu.Unlock()
	b.sessionGone(sid, why)
	go func() {
		defer close(done)
		b.quiet(sid)
		b.wmu.Lock()
		_, werr := b.w.Write(append(msg, 0))
		b.wmu.Unlock()
		if werr == nil {
			t := time.NewTimer(stopWait)
			select {
			case <-ch: // answered by the crash itself
			case <-crashed: // Chromium seldom answers a Page.crash: the crash is the answer
			case <-t.C:
			case <-b.done:
			}
			t.Stop()
		}
		b.mu.Lock()
		delete(b.stopping, sid)
		delete(b.crashed, sid)
		delete(b.pending, id)
		b.mu.Unlock()
	}()
}

// crashDone tells StopSession's wait that session sid's page has crashed or gone (on the
// reader).
func (b *Browser) crashDone(sid string) {
	b.mu.Lock()
	if ch := b.crashed[sid]; ch != nil {
		close(ch)
		delete(b.crashed, sid)
	}
	b.mu.Unlock()
}

// Quiet stops the scripts of session sid's page and dismisses the dialogs it has open, so
// that the page can be closed (or crashed) safely: Chromium 156 ends the whole browser
// (SIGSEGV) when a page goes while a dialog of it waits for a DevTools answer, and a page
// can keep one open at all times (alert, confirm, prompt in a loop). Its scripts are stopped
// first (Emulation.setScriptExecutionDisabled and Runtime.terminateExecution take effect as
// soon as the script resumes, even one that never yields), then each open dialog is
// dismissed until none is showing. It works on a session already gone (StopSession) and
// takes about a second at most.
func (b *Browser) Quiet(sid string) {
	if sid != "" {
		b.quiet(sid)
	}
}

func (b *Browser) quiet(sid string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	stopped := make(chan struct{}) // both calls answered: no script of the page runs again
	go func() {
		defer close(stopped)
		var wg sync.WaitGroup
		for _, m := range []struct {
			method string
			params any
		}{{"Emulation.setScriptExecutionDisabled", map[string]any{"value": true}}, {"Runtime.terminateExecution", nil}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.callAnyway(ctx, sid, m.method, m.params)
			}()
		}
		wg.Wait()
	}()
	dismiss := func() error {
		return b.callAnyway(ctx, sid, "Page.handleJavaScriptDialog", map[string]any{"accept": false})
	}
	for ctx.Err() == nil {
		select {
		case <-stopped:
			// What opened before the scripts stopped is dismissed; then nothing opens.
			for range 8 {
				if dismiss() != nil {
					break
				}
			}
			return
		default:
		}
		if dismiss() != nil { // none showing (or no such session): wait for the scripts to stop
			t := time.NewTimer(5 * time.Millisecond)
			select {
			case <-stopped:
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
	}
}

// ClosePage closes page target targetID, attached as session sid ("" when it is not), quieting
// it first (Quiet): the one way a page is closed.
func (b *Browser) ClosePage(ctx context.Context, sid, targetID string) error {
	b.Quiet(sid)
	return b.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": targetID}, nil)
}

// callAnyway is Call for a session that may be gone (its calls refused): not counted as the
// session's, so that its going does not answer it.
func (b *Browser) callAnyway(ctx context.Context, sessionID, method string, params any) error {
	id := b.next.Add(1)
	m := message{ID: id, Method: method, SessionID: sessionID}
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return err
		}
		m.Params = p
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return b.send(ctx, id, "", method, append(data, 0), nil)
}

// stopWait bounds the wait for a stopped page's crash.
const stopWait = 3 * time.Second

// StopWait waits until the crash of a page StopSession stopped is done (at most a few
// seconds), or ctx ends. A window opened while Chromium still crashes a page that had a dialog
// open ended the whole browser: nothing new is opened before.
func (b *Browser) StopWait(ctx context.Context, sid string) {
	b.mu.Lock()
	done := b.stopping[sid]
	b.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// SessionDone is closed when session sid can no longer be used (SessionErr says why), or when
// the browser is gone (Done).
func (b *Browser) SessionDone(sid string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, gone := b.gone[sid]; gone || sid == "" || b.err != nil {
		return closedCh
	}
	ch := b.goneCh[sid]
	if ch == nil {
		ch = make(chan struct{})
		b.goneCh[sid] = ch
	}
	return ch
}

var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// SessionErr is why session sid can no longer be used (ErrTargetCrashed, ErrDetached), or nil.
func (b *Browser) SessionErr(sid string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gone[sid]
}

// Subscribe calls fn for every event, on the reader goroutine: fn must not block.
func (b *Browser) Subscribe(fn func(Event)) (cancel func()) {
	b.mu.Lock()
	id := b.nextSub
	b.nextSub++
	b.subs[id] = fn
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.subs, id)
		b.mu.Unlock()
	}
}

// Call sends method with params to the browser (sessionID "") or to an attached session, and
// decodes the result into result (which may be nil).
func (b *Browser) Call(ctx context.Context, sessionID, method string, params, result any) error {
	id := b.next.Add(1)
	m := message{ID: id, Method: method, SessionID: sessionID}
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("encode %s: %w", method, err)
		}
		m.Params = p
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return b.send(ctx, id, sessionID, method, append(data, 0), result)
}

// send writes one complete message (NUL included) for request id and waits for its reply.
func (b *Browser) send(ctx context.Context, id int64, sessionID, method string, msg []byte, result any) error {
	ch := make(chan reply, 1)
	b.mu.Lock()
	if b.err != nil {
		err := b.err
		b.mu.Unlock()
		return err
	}
	if err := b.gone[sessionID]; err != nil && sessionID != "" {
		b.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	b.pending[id] = ch
	b.psess[id] = sessionID
	b.mu.Unlock()

	b.wmu.Lock()
	_, werr := b.w.Write(msg)
	b.wmu.Unlock()
	if werr != nil {
		b.mu.Lock()
		delete(b.pending, id)
		delete(b.psess, id)
		b.mu.Unlock()
		b.fail(werr)
		return b.Err()
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return fmt.Errorf("%s: %w", method, r.err)
		}
		if result != nil {
			if err := json.Unmarshal(r.result, result); err != nil {
				return fmt.Errorf("decode %s: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, id)
		delete(b.psess, id)
		b.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// InsertSecret types secret into the focused element of a session with Input.insertText.
// The message is built by hand into a buffer that is zeroed after writing: json.Marshal would
// leave a copy in its pooled buffers. This is the only way a password reaches the browser.
func (b *Browser) InsertSecret(ctx context.Context, sessionID string, secret []byte) error {
	id := b.next.Add(1)
	head, err := json.Marshal(message{ID: id, Method: "Input.insertText", SessionID: sessionID})
	if err != nil {
		return err
	}
	msg := make([]byte, 0, len(head)+len(secret)*6+32)
	msg = append(msg, head[:len(head)-1]...)
	msg = append(msg, `,"params":{"text":"`...)
	msg, ok := AppendJSONString(msg, secret)
	if !ok {
		clear(msg)
		return ErrNotText
	}
	msg = append(msg, `"}}`...)
	msg = append(msg, 0)
	defer clear(msg)
	return b.send(ctx, id, sessionID, "Input.insertText", msg, nil)
}

// ContinueWithBasic lets the paused request requestID (Fetch.requestPaused at the request
// stage, on sessionID, "" for the browser target) go on with its headers and one more,
// Authorization: Basic base64(username ":" password), in a message built by hand (no encoder
// buffer keeps the password) and zeroed after sending. It is the HTTP Basic equivalent of
// InsertSecret: the password's only way into Chromium for a Basic challenge. The header is an
// override of that one request: Chromium's HTTP auth cache never gets the password (it would
// send it again, unasked, with later requests of the origin from every page of the browser
// context), and the override does not follow a redirect. An Authorization header the request
// already had is dropped.
func (b *Browser) ContinueWithBasic(ctx context.Context, sessionID, requestID string, headers map[string]string, username string, password []byte) error {
	id := b.next.Add(1)
	head, err := json.Marshal(message{ID: id, Method: "Fetch.continueRequest", SessionID: sessionID})
	if err != nil {
		return err
	}
	type header struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	hs := make([]header, 0, len(headers))
	for n, v := range headers {
		if !strings.EqualFold(n, "authorization") {
			hs = append(hs, header{n, v})
		}
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].Name < hs[j].Name })
	meta, err := json.Marshal(struct {
		RequestID string   `json:"requestId"`
		Headers   []header `json:"headers"`
	}{requestID, hs})
	if err != nil {
		return err
	}
	if !utf8.Valid(password) || !utf8.ValidString(username) {
		return ErrNotText
	}
	plain := make([]byte, 0, len(username)+1+len(password))
	plain = append(append(append(plain, username...), ':'), password...)
	defer clear(plain)
	enc := make([]byte, base64.StdEncoding.EncodedLen(len(plain)))
	base64.StdEncoding.Encode(enc, plain)
	defer clear(enc)
	// meta ends with `]}`: the Authorization entry goes before the `]`.
	msg := make([]byte, 0, len(head)+len(meta)+len(enc)+96)
	msg = append(msg, head[:len(head)-1]...)
	msg = append(msg, `,"params":`...)
	msg = append(msg, meta[:len(meta)-2]...)
	if len(hs) > 0 {
		msg = append(msg, ',')
	}
	msg = append(msg, `{"name":"Authorization","value":"Basic `...)
	msg = append(msg, enc...)
	msg = append(msg, `"}]}}`...)
	msg = append(msg, 0)
	defer clear(msg)
	return b.send(ctx, id, sessionID, "Fetch.continueRequest", msg, nil)
}

// ErrNotText is InsertSecret's refusal of a secret that is not UTF-8: JSON (and so CDP) carries
// only text, and any escape of a raw byte would type another character than the one stored.
var ErrNotText = errors.New("the secret is not UTF-8 text; nothing was typed")

// AppendJSONString appends the JSON string escaping of s (without quotes) to dst, byte by byte,
// without intermediate copies. It refuses (false, dst unchanged) an s that is not valid UTF-8:
// the result is always the exact JSON encoding of s, or nothing.
func AppendJSONString(dst, s []byte) ([]byte, bool) {
	if !utf8.Valid(s) {
		return dst, false
	}
	const hex = "0123456789abcdef"
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20 || c == 0x7f:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return dst, true
}

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
		return fmt.Errorf("browser did not exit after Browser.close: %w", ctx.Err())
	}
	b.kill() // stragglers of the group (renderers, zygotes)
	b.markClosed()
	return nil
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
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procstat.Read(p); ok && st.State != "Z" {
			children[st.PPID] = append(children[st.PPID], p)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}
