package host

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/keyprobe"
	"github.com/headless-dev/headless/internal/loopback"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/internal/xdg"
	"github.com/headless-dev/headless/profile"
)

// Limits.
const (
	MaxSessions      = 64
	MaxScreenshots   = 100      // kept in the artifact store; older ones are removed
	MaxScreenshotLen = 32 << 20 // bytes of one PNG
	NavigationWait   = 30 * time.Second
	ScreenshotWait   = 30 * time.Second
	DefaultWait      = 10 * time.Second
	MaxWait          = 5 * time.Minute
)

// Options configure a Host. Everything that touches the outside world comes in here.
type Options struct {
	Layout                  xdg.Layout // the files: the durable profile and its lock, artifacts, browser temp
	Chromium                string     // the Chromium binary
	BusAddress              string     // D-Bus session bus of the Secret Service ("" = none)
	Env                     []string
	AllowDirectPasswordFill bool
	Log                     *slog.Logger
	Version                 string
	// Now is the host's clock (screenshot names, enrollment deadlines); default time.Now.
	Now func() time.Time
	// AfterFunc runs f once d has passed on the host's clock (a held enrollment's expiry) and
	// returns a stop function that reports whether it kept f from running; default
	// time.AfterFunc.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// Broker dials brokerd (alias login); nil disables auth.
	Broker func(ctx context.Context) (*brokerapi.Client, error)
	// Loopback names the process serving a loopback origin (nil: loopback.Finder{}).
	Loopback interface {
		Find(origin string) (loopback.Listener, error)
	}
}

// Host owns one Chromium on the durable profile and the sessions in it.
type Host struct {
	o       Options
	prof    *profile.Profile
	started time.Time

	mu       sync.Mutex // guards browser, product, sessions
	browser  *cdp.Browser
	product  string
	sessions map[string]*session
	unsub    func()

	routes sync.Map // CDP session id → *session; read by the event reader without h.mu

	bmu    sync.Mutex
	broker *brokerapi.Client
	// isolated names the isolated sessions brokerd must know (guarded by bmu): each one is
	// registered on every new broker connection before that connection is used, so that
	// brokerd never answers for an isolated session from the vault.
	isolated map[string]bool

	emu    sync.Mutex
	enroll map[string]*pendingEnroll // interactive logins waiting for the save decision

	// ready is closed when the current browser's default session is set up (in the
	// background, so that start returns as soon as Chromium answers); readyErr says whether
	// that failed. Both are replaced by every launch.
	ready    chan struct{}
	readyErr error
	closed   bool // Close ran: never launch again
	clearing bool // ClearProfile runs: no new sessions
}

type session struct {
	name      string
	isolated  bool
	contextID string
	targetID  string
	sid       string
	events    chan cdp.Event
	gone      <-chan struct{} // closed when the session's browser is gone

	mu   sync.Mutex // one verb at a time; guards everything below
	refs map[string]snapshot.Target
	// taint holds the nodes the host typed a secret into (backend node id → frame id), in the
	// main-frame document taintDoc; see taint.go.
	taint    map[int64]string
	taintDoc string
}

// Start opens and locks the durable profile, checks that the Secret Service holding
// Chromium's cookie key is there (one launch without it deletes every encrypted cookie), and
// launches Chromium with the default session.
func Start(ctx context.Context, o Options) (*Host, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.AfterFunc == nil {
		o.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Loopback == nil {
		o.Loopback = loopback.Finder{}
	}
	t0 := time.Now()
	prof, err := openProfile(o.Layout, o.Now)
	if err != nil {
		return nil, err
	}
	o.Log.Info("profile opened", "ms", time.Since(t0).Milliseconds())
	if r := prof.Report(); r.MovedAside != "" {
		o.Log.Warn("profile moved aside", "to", r.MovedAside, "reason", r.Reason)
	}
	m := prof.Migration()
	if m.From != "" {
		o.Log.Info("profile migrated from an older layout", "from", m.From, "to", prof.Dir())
	}
	for _, l := range m.NotMigrated {
		o.Log.Warn("profile of an older layout left in place", "path", l.Path, "reason", string(l.Reason), "detail", l.Detail)
	}
	h := &Host{o: o, prof: prof, started: o.Now(), sessions: map[string]*session{}, isolated: map[string]bool{}, enroll: map[string]*pendingEnroll{}}
	if err := h.launch(ctx); err != nil {
		prof.Close()
		return nil, err
	}
	return h, nil
}

func (h *Host) tempDir() string { return h.o.Layout.ChromiumTemp() }

// launch starts Chromium and the default session; h.mu must be held or h unshared. Every launch,
// the first and every relaunch after a crash, first checks the Secret Service that holds the
// profile's cookie key: one launch without it deletes every encrypted cookie for good.
func (h *Host) launch(ctx context.Context) error {
	t0 := time.Now()
	if err := keyprobe.Check(ctx, h.o.BusAddress); err != nil {
		return fmt.Errorf("the durable profile's cookie key lives in the Secret Service, so Chromium is not launched without it: %w", err)
	}
	h.o.Log.Info("keyring checked", "ms", time.Since(t0).Milliseconds())
	cdp.ReapDaemons(h.tempDir()) // helpers of a browser whose host was killed
	os.RemoveAll(h.tempDir())    // leftovers of a crashed browser
	lctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	b, err := cdp.Launch(lctx, cdp.Options{
		Path:    h.o.Chromium,
		Args:    h.prof.ChromiumArgs(),
		Env:     h.o.Env,
		TempDir: h.tempDir(),
	})
	if err != nil {
		return wire.Errorf(wire.CodeBrowserFailed, "launch chromium: %v", err)
	}
	var v struct {
		Product string `json:"product"`
	}
	b.Call(lctx, "", "Browser.getVersion", nil, &v)
	h.browser, h.product = b, v.Product
	h.o.Log.Info("browser started", "pid", b.PID(), "product", v.Product, "launch_ms", time.Since(t0).Milliseconds())
	h.forgetIsolated("") // a relaunch loses every session: their stores go too
	h.dropEnrollments("")
	h.sessions = map[string]*session{}
	h.routes.Clear()
	h.unsub = b.Subscribe(h.dispatch)
	ready := make(chan struct{})
	h.ready, h.readyErr = ready, nil
	go h.openDefault(b, ready, t0)
	return nil
}

// openDefault sets up the default session of browser b and closes ready. Verbs wait for it.
// The default session adopts the page Chromium opened at launch: a new target would start a
// second renderer (about half a second).
func (h *Host) openDefault(b *cdp.Browser, ready chan struct{}, t0 time.Time) {
	defer close(ready)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var targets struct {
		Infos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfos"`
	}
	adopt := ""
	if err := b.Call(ctx, "", "Target.getTargets", nil, &targets); err == nil {
		for _, t := range targets.Infos {
			if t.Type == "page" {
				adopt = t.TargetID
				break
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.browser != b {
		return // relaunched meanwhile
	}
	if _, err := h.newSession(ctx, DefaultSession, false, adopt); err != nil {
		h.readyErr = wire.Errorf(wire.CodeBrowserFailed, "open the default session: %v", err)
		b.Kill() // the next verb relaunches
		return
	}
	h.o.Log.Info("default session ready", "pid", b.PID(), "ms", time.Since(t0).Milliseconds())
}

// dispatch routes session events to their session (never blocking the reader).
func (h *Host) dispatch(ev cdp.Event) {
	if ev.SessionID == "" {
		return
	}
	v, ok := h.routes.Load(ev.SessionID)
	if !ok {
		return
	}
	s := v.(*session)
	switch ev.Method {
	case "Page.lifecycleEvent", "Page.frameStartedLoading", "Page.frameStoppedLoading", "Page.loadEventFired", "Page.frameNavigated":
		select {
		case s.events <- ev:
		default: // a waiter that is not there; drop
		}
	}
}

// alive returns the browser once its default session is ready, or BROWSER_CRASHED after
// relaunching it.
func (h *Host) alive(ctx context.Context) (*cdp.Browser, error) {
	h.mu.Lock()
	b, ready := h.browser, h.ready
	if b != nil && b.Err() == nil {
		h.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, wire.Errorf(wire.CodeTimeout, "the browser is still starting")
		}
		h.mu.Lock()
		err := h.readyErr
		h.mu.Unlock()
		if err != nil && b.Err() == nil {
			return nil, err
		}
		if b.Err() == nil {
			return b, nil
		}
		h.mu.Lock() // it died meanwhile: relaunch below
	}
	defer h.mu.Unlock()
	if h.closed {
		return nil, wire.Errorf(wire.CodeHostUnavail, "the host is shutting down")
	}
	b = h.browser
	if b != nil && b.Err() == nil { // another caller already relaunched it
		return nil, wire.Errorf(wire.CodeBrowserCrashed, "the browser crashed and has been restarted with a fresh default session")
	}
	why := "browser is not running"
	if b != nil {
		why = b.Err().Error()
		b.Kill()
		if h.unsub != nil {
			h.unsub()
		}
	}
	h.o.Log.Warn("browser crashed; relaunching", "err", why)
	if err := h.launch(ctx); err != nil {
		h.browser = nil
		return nil, err
	}
	return nil, wire.Errorf(wire.CodeBrowserCrashed, "%s; it has been restarted with a fresh default session", why)
}

func (h *Host) session(ctx context.Context, name string) (*cdp.Browser, *session, error) {
	if name == "" {
		name = DefaultSession
	}
	b, err := h.alive(ctx)
	if err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	s := h.sessions[name]
	h.mu.Unlock()
	if s == nil {
		return nil, nil, wire.Errorf(wire.CodeSessionUnknown, "no session %q", name)
	}
	return b, s, nil
}

// lockSession finds the session and takes its verb lock; the caller calls unlock. When the
// session's page crashed (or its tab went away) since the last verb, it gives the session a
// fresh blank page and answers BROWSER_CRASHED instead.
func (h *Host) lockSession(ctx context.Context, name string) (*cdp.Browser, *session, func(), error) {
	b, s, err := h.session(ctx, name)
	if err != nil {
		return nil, nil, nil, err
	}
	s.mu.Lock()
	if why := b.SessionErr(s.sid); why != nil {
		// The page died since the last verb: this verb answers that (what it would have looked
		// at is gone), and the session gets a fresh blank page for the next one.
		err := h.revive(ctx, b, s)
		s.mu.Unlock()
		if err != nil {
			return nil, nil, nil, err
		}
		return nil, nil, nil, wire.Errorf(wire.CodeBrowserCrashed, "session %q: %v; it now shows a fresh blank page", s.name, why)
	}
	unlock := func() {
		// A crash during this verb made its calls fail (BROWSER_CRASHED): the session gets its
		// fresh page now, so that the next verb works.
		if b.SessionErr(s.sid) != nil && b.Err() == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			h.revive(ctx, b, s)
			cancel()
		}
		s.mu.Unlock()
	}
	return b, s, unlock, nil
}

// revive replaces the page of session s, whose renderer crashed or whose target went away, by
// a fresh blank one in the same browser context; s.mu is held. What was typed into the old
// page died with its renderer.
func (h *Host) revive(ctx context.Context, b *cdp.Browser, s *session) error {
	h.o.Log.Warn("session page lost; opening a fresh one", "session", s.name, "why", b.SessionErr(s.sid))
	h.routes.Delete(s.sid)
	if s.targetID != "" {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		b.Call(cctx, "", "Target.closeTarget", map[string]any{"targetId": s.targetID}, nil)
		cancel()
	}
	s.targetID, s.sid = "", ""
	s.taint, s.taintDoc = nil, ""
	clear(s.refs)
	s.drain()
	if err := h.openPage(ctx, b, s, ""); err != nil {
		return wire.Errorf(wire.CodeBrowserCrashed, "the session's page crashed and a fresh one could not be opened: %v", err)
	}
	return nil
}

func (h *Host) newSession(ctx context.Context, name string, isolated bool, adopt string) (*session, error) {
	b := h.browser
	s := &session{name: name, isolated: isolated, events: make(chan cdp.Event, 64), gone: b.Done(), refs: map[string]snapshot.Target{}}
	if isolated && adopt == "" {
		var r struct {
			ID string `json:"browserContextId"`
		}
		if err := b.Call(ctx, "", "Target.createBrowserContext", map[string]any{"disposeOnDetach": false}, &r); err != nil {
			return nil, err
		}
		s.contextID = r.ID
	}
	if err := h.openPage(ctx, b, s, adopt); err != nil {
		h.disposeContext(s)
		return nil, err
	}
	h.sessions[name] = s
	return s, nil
}

// openPage gives s a page (adopt, or a new one in s's browser context), attaches to it and
// enables the domains the host listens to: Page (lifecycle events) and Inspector (crashes).
func (h *Host) openPage(ctx context.Context, b *cdp.Browser, s *session, adopt string) error {
	s.targetID = adopt
	if s.targetID == "" {
		// A window of its own: a background tab of a shared window is hidden, and input
		// events to hidden pages stall (mouseMoved waits about 5 s for a frame that never
		// comes).
		create := map[string]any{"url": "about:blank", "newWindow": true}
		if s.contextID != "" {
			create["browserContextId"] = s.contextID
		}
		var t struct {
			TargetID string `json:"targetId"`
		}
		if err := b.Call(ctx, "", "Target.createTarget", create, &t); err != nil {
			return err
		}
		s.targetID = t.TargetID
	}
	closePage := func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Call(cctx, "", "Target.closeTarget", map[string]any{"targetId": s.targetID}, nil)
	}
	var a struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": s.targetID, "flatten": true}, &a); err != nil {
		closePage()
		return err
	}
	s.sid = a.SessionID
	h.routes.Store(s.sid, s) // before enabling, so events route
	for _, m := range []struct {
		method string
		params any
	}{{"Page.enable", nil}, {"Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}}, {"Inspector.enable", nil}} {
		if err := b.Call(ctx, s.sid, m.method, m.params, nil); err != nil {
			h.routes.Delete(s.sid)
			closePage()
			return err
		}
	}
	return nil
}

func (h *Host) closeTarget(s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.targetID != "" {
		h.browser.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": s.targetID}, nil)
	}
	h.disposeContext(s)
}

func (h *Host) disposeContext(s *session) {
	if s.contextID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.browser.Call(ctx, "", "Target.disposeBrowserContext", map[string]any{"browserContextId": s.contextID}, nil)
}

// CreateSession opens a session; isolated sessions get their own browser context (cookies and
// storage separate from every other session).
func (h *Host) CreateSession(ctx context.Context, p CreateParams) (SessionInfo, error) {
	if credential.ValidSession(p.Name) != nil {
		return SessionInfo{}, wire.Errorf(wire.CodeInvalidArgument, "%s", credential.SessionRule)
	}
	if _, err := h.alive(ctx); err != nil {
		return SessionInfo{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.clearing {
		return SessionInfo{}, wire.Errorf(wire.CodeBusy, "the profile is being cleared; retry when 'headless profile clear' has finished")
	}
	if _, ok := h.sessions[p.Name]; ok {
		return SessionInfo{}, wire.Errorf(wire.CodeSessionExists, "session %q exists", p.Name)
	}
	if len(h.sessions) >= MaxSessions {
		return SessionInfo{}, wire.Errorf(wire.CodeSessionLimit, "at most %d sessions", MaxSessions)
	}
	s, err := h.newSession(ctx, p.Name, p.Isolated, "")
	if err != nil {
		return SessionInfo{}, fmt.Errorf("create session: %w", err)
	}
	if p.Isolated {
		if err := h.registerIsolated(ctx, p.Name); err != nil {
			delete(h.sessions, p.Name)
			h.routes.Delete(s.sid)
			h.closeTarget(s)
			return SessionInfo{}, err
		}
	}
	h.o.Log.Info("session created", "session", p.Name, "isolated", p.Isolated)
	return SessionInfo{Name: p.Name, Isolated: p.Isolated, URL: "about:blank", Status: "ready"}, nil
}

// CloseSession closes a session and, for an isolated one, disposes its browser context.
func (h *Host) CloseSession(ctx context.Context, name string) error {
	if name == DefaultSession {
		return wire.Errorf(wire.CodeInvalidArgument, "the default session always exists; use 'headless profile clear' to reset it")
	}
	if _, err := h.alive(ctx); err != nil {
		return err
	}
	h.mu.Lock()
	s, ok := h.sessions[name]
	if ok {
		delete(h.sessions, name)
	}
	h.mu.Unlock()
	if !ok {
		return wire.Errorf(wire.CodeSessionUnknown, "no session %q", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h.routes.Delete(s.sid)
	h.closeTarget(s)
	if s.isolated {
		h.forgetIsolated(name)
	}
	h.dropEnrollments(name)
	h.o.Log.Info("session closed", "session", name, "isolated", s.isolated)
	return nil
}

// Sessions lists the sessions.
func (h *Host) Sessions(ctx context.Context) (SessionList, error) {
	b, err := h.alive(ctx)
	if err != nil {
		return SessionList{}, err
	}
	h.mu.Lock()
	ss := make([]*session, 0, len(h.sessions))
	for _, s := range h.sessions {
		ss = append(ss, s)
	}
	h.mu.Unlock()
	sort.Slice(ss, func(i, j int) bool { return ss[i].name < ss[j].name })
	out := SessionList{Sessions: make([]SessionInfo, 0, len(ss))}
	for _, s := range ss {
		info := SessionInfo{Name: s.name, Isolated: s.isolated, Status: "ready"}
		if u, t, err := h.pageInfo(ctx, b, s); err == nil {
			info.URL, info.Title = u, t
		} else {
			info.Status = "unresponsive"
		}
		out.Sessions = append(out.Sessions, info)
	}
	return out, nil
}

func (h *Host) pageInfo(ctx context.Context, b *cdp.Browser, s *session) (string, string, error) {
	var r struct {
		Info struct {
			URL   string `json:"url"`
			Title string `json:"title"`
		} `json:"targetInfo"`
	}
	if err := b.Call(ctx, "", "Target.getTargetInfo", map[string]any{"targetId": s.targetID}, &r); err != nil {
		return "", "", err
	}
	return bound(r.Info.URL, 2048), bound(r.Info.Title, 256), nil
}

func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// drain empties the session's event queue before an action whose events we will wait for.
func (s *session) drain() {
	for {
		select {
		case <-s.events:
		default:
			return
		}
	}
}

// waitLoad waits for the load event of loaderID (any main-frame load when loaderID is "").
func (s *session) waitLoad(ctx context.Context, loaderID string) error {
	ctx, cancel := context.WithTimeout(ctx, NavigationWait)
	defer cancel()
	for {
		select {
		case ev := <-s.events:
			switch ev.Method {
			case "Page.lifecycleEvent":
				var p struct {
					Name     string `json:"name"`
					LoaderID string `json:"loaderId"`
				}
				json.Unmarshal(ev.Params, &p)
				if p.Name == "load" && (loaderID == "" || p.LoaderID == loaderID) {
					return nil
				}
			case "Page.loadEventFired":
				if loaderID == "" {
					return nil
				}
			}
		case <-s.gone:
			return wire.Errorf(wire.CodeBrowserCrashed, "the browser went away while the page was loading")
		case <-ctx.Done():
			return wire.Errorf(wire.CodeTimeout, "the page did not finish loading within %s", NavigationWait)
		}
	}
}

// abortedRetryWait bounds the wait for the frame to stop loading before a navigation that was
// aborted is retried.
const abortedRetryWait = 2 * time.Second

// waitStopped waits until the page's frame stops loading (Page.frameStoppedLoading, or its load
// event; either may already be queued), at most d. A frame that never says so is retried
// anyway when d has passed.
func (s *session) waitStopped(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case ev := <-s.events:
			if ev.Method == "Page.frameStoppedLoading" || ev.Method == "Page.loadEventFired" {
				return
			}
		case <-t.C:
			return
		case <-s.gone:
			return
		case <-ctx.Done():
			return
		}
	}
}

// settle gives an action (click, key) a moment to start a navigation and, if it did, waits for
// the load.
func (s *session) settle(ctx context.Context) {
	t := time.NewTimer(400 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case ev := <-s.events:
			if ev.Method == "Page.frameStartedLoading" || ev.Method == "Page.frameNavigated" {
				s.waitLoad(ctx, "")
				return
			}
		case <-t.C:
			return
		case <-s.gone:
			return
		case <-ctx.Done():
			return
		}
	}
}

// CheckNavigable accepts only http and https URLs with a host.
func CheckNavigable(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", wire.Errorf(wire.CodeUnsafeNav, "refusing to navigate to %q: only http and https URLs", bound(raw, 200))
	}
	if u.User != nil {
		return "", wire.Errorf(wire.CodeUnsafeNav, "refusing a URL with credentials in it")
	}
	return u.String(), nil
}

// Visit navigates a session and waits for the page to load.
func (h *Host) Visit(ctx context.Context, p VisitParams) (PageResult, error) {
	target, err := CheckNavigable(p.URL)
	if err != nil {
		return PageResult{}, err
	}
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return PageResult{}, err
	}
	defer unlock()
	s.drain()
	clear(s.refs)
	var r struct {
		LoaderID  string `json:"loaderId"`
		ErrorText string `json:"errorText"`
	}
	nctx, ncancel := context.WithTimeout(ctx, NavigationWait)
	defer ncancel()
	if err := b.Call(nctx, s.sid, "Page.navigate", map[string]any{"url": target}, &r); err != nil {
		return PageResult{}, h.browserErr(err)
	}
	if r.ErrorText == "net::ERR_ABORTED" {
		// The tab's own initial about:blank load can still be committing right after launch
		// and cancel the first navigation: once the frame has stopped loading, one retry.
		s.waitStopped(ctx, abortedRetryWait)
		s.drain()
		r.LoaderID, r.ErrorText = "", ""
		if err := b.Call(nctx, s.sid, "Page.navigate", map[string]any{"url": target}, &r); err != nil {
			return PageResult{}, h.browserErr(err)
		}
	}
	if r.ErrorText != "" {
		return PageResult{}, wire.Errorf(wire.CodeNavFailed, "%s: %s", bound(target, 200), bound(r.ErrorText, 200))
	}
	if r.LoaderID != "" {
		if err := s.waitLoad(ctx, r.LoaderID); err != nil {
			return PageResult{}, err
		}
	}
	return h.pageResult(ctx, b, s)
}

func (h *Host) result(ctx context.Context, b *cdp.Browser, s *session) (PageResult, error) {
	u, t, err := h.pageInfo(ctx, b, s)
	if err != nil {
		return PageResult{}, h.browserErr(err)
	}
	return PageResult{Session: s.name, URL: u, Title: t}, nil
}

// browserErr maps a CDP failure to a typed error. A verb that finds the browser gone relaunches
// it before answering BROWSER_CRASHED, so the next command works.
func (h *Host) browserErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, cdp.ErrTargetCrashed) || errors.Is(err, cdp.ErrDetached) {
		// Only this page is gone: the session gets a fresh one at its next verb.
		return wire.Errorf(wire.CodeBrowserCrashed, "the page's renderer crashed (or its tab was closed); the session's next command opens a fresh blank page")
	}
	if errors.Is(err, cdp.ErrCrashed) || errors.Is(err, cdp.ErrClosed) || wire.CodeOf(err) == wire.CodeBrowserCrashed {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		if _, aerr := h.alive(ctx); aerr != nil {
			return aerr // BROWSER_CRASHED after the relaunch, or why it could not relaunch
		}
		return wire.Errorf(wire.CodeBrowserCrashed, "%v; it has been restarted with a fresh default session", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return wire.Errorf(wire.CodeTimeout, "the page did not answer in time: %v", err)
	}
	if errors.Is(err, context.Canceled) {
		return wire.Errorf(wire.CodeTimeout, "the request was abandoned (its caller went away): %v", err)
	}
	return err
}

// Snapshot returns a bounded outline of the session's page and remembers its refs.
func (h *Host) Snapshot(ctx context.Context, name string) (SnapshotResult, error) {
	b, s, unlock, err := h.lockSession(ctx, name)
	if err != nil {
		return SnapshotResult{}, err
	}
	defer unlock()
	_, out, refs, err := h.capture(ctx, b, s)
	if err != nil {
		return SnapshotResult{}, err
	}
	s.refs = refs
	return SnapshotResult{Session: s.name, Outline: out}, nil
}

func captureSnapshot(ctx context.Context, b *cdp.Browser, s *session) (json.RawMessage, error) {
	var raw json.RawMessage
	err := b.Call(ctx, s.sid, "DOMSnapshot.captureSnapshot", snapshot.CaptureParams(), &raw)
	return raw, err
}

func (s *session) target(ref string) (snapshot.Target, error) {
	t, ok := s.refs[ref]
	if !ok {
		return snapshot.Target{}, wire.Errorf(wire.CodeRefUnknown, "no ref %q in session %q's last snapshot", bound(ref, 32), s.name)
	}
	return t, nil
}

// nodeErr maps "the node is gone" to REF_STALE.
func nodeErr(err error) error {
	var ce *cdp.Error
	if errors.As(err, &ce) {
		return wire.Errorf(wire.CodeRefStale, "the element is no longer in the page")
	}
	return err
}

// Click clicks the element of ref with a real mouse event at its centre.
func (h *Host) Click(ctx context.Context, p RefParams) (PageResult, error) {
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return PageResult{}, err
	}
	defer unlock()
	t, err := s.target(p.Ref)
	if err != nil {
		return PageResult{}, err
	}
	if err := h.refuseWhileSecret(ctx, b, s); err != nil {
		return PageResult{}, err
	}
	s.drain()
	if err := h.clickNode(ctx, b, s, t); err != nil {
		return PageResult{}, err
	}
	s.settle(ctx)
	clear(s.refs)
	return h.pageResult(ctx, b, s)
}

// clickNode clicks the element with real mouse events at the centre of its box.
func (h *Host) clickNode(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target) error {
	node := map[string]any{"backendNodeId": t.BackendNodeID}
	if err := b.Call(ctx, s.sid, "DOM.scrollIntoViewIfNeeded", node, nil); err != nil {
		return nodeErr(err)
	}
	var q struct {
		Quads [][]float64 `json:"quads"`
	}
	if err := b.Call(ctx, s.sid, "DOM.getContentQuads", node, &q); err != nil {
		return nodeErr(err)
	}
	if len(q.Quads) == 0 || len(q.Quads[0]) != 8 {
		return wire.Errorf(wire.CodeNotInteractable, "the element has no visible box")
	}
	var x, y float64
	for i := 0; i < 8; i += 2 {
		x += q.Quads[0][i] / 4
		y += q.Quads[0][i+1] / 4
	}
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		ev := map[string]any{"type": typ, "x": x, "y": y}
		if typ != "mouseMoved" {
			ev["button"], ev["clickCount"] = "left", 1
		}
		if err := b.Call(ctx, s.sid, "Input.dispatchMouseEvent", ev, nil); err != nil {
			return h.browserErr(err)
		}
	}
	return nil
}

// pageResult is result plus auth_required when the page holds a login form.
func (h *Host) pageResult(ctx context.Context, b *cdp.Browser, s *session) (PageResult, error) {
	r, err := h.result(ctx, b, s)
	if err != nil {
		return r, err
	}
	r.AuthRequired = h.authRequired(ctx, b, s)
	return r, nil
}

// Fill types text into the element of ref, replacing its content. The text is never logged or
// echoed. Password fields are refused unless the user-only config allows direct fill.
func (h *Host) Fill(ctx context.Context, p FillParams) (FillResult, error) {
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return FillResult{}, err
	}
	defer unlock()
	t, err := s.target(p.Ref)
	if err != nil {
		return FillResult{}, err
	}
	if err := h.refuseWhileSecret(ctx, b, s); err != nil {
		return FillResult{}, err
	}
	if strings.EqualFold(t.Type, "password") && !h.o.AllowDirectPasswordFill {
		return FillResult{}, wire.Errorf(wire.CodeDirectFillOff, "ref %s is a password field", p.Ref)
	}
	if t.Kind != "input" && t.Kind != "textarea" {
		return FillResult{}, wire.Errorf(wire.CodeNotInteractable, "ref %s is a %s, not a text field", p.Ref, t.Kind)
	}
	if err := b.Call(ctx, s.sid, "DOM.focus", map[string]any{"backendNodeId": t.BackendNodeID}, nil); err != nil {
		return FillResult{}, nodeErr(err)
	}
	// Select what is there, so the text replaces it.
	if err := selectAll(ctx, b, s); err != nil {
		return FillResult{}, h.browserErr(err)
	}
	if p.Text == "" {
		if err := pressKey(ctx, b, s, "Delete"); err != nil {
			return FillResult{}, err
		}
	} else if err := b.Call(ctx, s.sid, "Input.insertText", map[string]any{"text": p.Text}, nil); err != nil {
		return FillResult{}, h.browserErr(err)
	}
	return FillResult{Session: s.name, Ref: p.Ref, Filled: true}, nil
}

type keyDef struct {
	key, code, text string
	vk              int
}

var keys = map[string]keyDef{
	"Enter":      {"Enter", "Enter", "\r", 13},
	"Tab":        {"Tab", "Tab", "", 9},
	"Escape":     {"Escape", "Escape", "", 27},
	"Backspace":  {"Backspace", "Backspace", "", 8},
	"Delete":     {"Delete", "Delete", "", 46},
	"Space":      {" ", "Space", " ", 32},
	"ArrowUp":    {"ArrowUp", "ArrowUp", "", 38},
	"ArrowDown":  {"ArrowDown", "ArrowDown", "", 40},
	"ArrowLeft":  {"ArrowLeft", "ArrowLeft", "", 37},
	"ArrowRight": {"ArrowRight", "ArrowRight", "", 39},
	"Home":       {"Home", "Home", "", 36},
	"End":        {"End", "End", "", 35},
	"PageUp":     {"PageUp", "PageUp", "", 33},
	"PageDown":   {"PageDown", "PageDown", "", 34},
}

// KeyNames lists the named keys press accepts (besides single printable characters).
func KeyNames() []string {
	var out []string
	for k := range keys {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func pressKey(ctx context.Context, b *cdp.Browser, s *session, name string) error {
	k, ok := keys[name]
	if !ok {
		r := []rune(name)
		if len(r) != 1 || r[0] < 0x20 || r[0] == 0x7f {
			return &wire.Error{Code: wire.CodeInvalidArgument,
				Message: fmt.Sprintf("unknown key %q", bound(name, 32)),
				Hint:    "press takes one printable character or one of " + strings.Join(KeyNames(), ", ") + " (no modifiers)"}
		}
		k = keyDef{key: name, text: name}
	}
	down := map[string]any{"type": "keyDown", "key": k.key}
	if k.code != "" {
		down["code"] = k.code
	}
	if k.vk != 0 {
		down["windowsVirtualKeyCode"] = k.vk
	}
	if k.text != "" {
		down["text"] = k.text
	}
	up := map[string]any{"type": "keyUp", "key": k.key}
	if k.code != "" {
		up["code"] = k.code
	}
	for _, ev := range []map[string]any{down, up} {
		if err := b.Call(ctx, s.sid, "Input.dispatchKeyEvent", ev, nil); err != nil {
			return err
		}
	}
	return nil
}

// Press sends one key to the focused element.
func (h *Host) Press(ctx context.Context, p PressParams) (PageResult, error) {
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return PageResult{}, err
	}
	defer unlock()
	if err := h.refuseWhileSecret(ctx, b, s); err != nil {
		return PageResult{}, err
	}
	s.drain()
	if err := pressKey(ctx, b, s, p.Key); err != nil {
		return PageResult{}, h.browserErr(err)
	}
	s.settle(ctx)
	clear(s.refs)
	return h.pageResult(ctx, b, s)
}

// Wait waits until the page's URL contains p.URL and its text contains p.Text.
func (h *Host) Wait(ctx context.Context, p WaitParams) (PageResult, error) {
	if p.Text == "" && p.URL == "" {
		return PageResult{}, wire.Errorf(wire.CodeInvalidArgument, "wait needs --text or --url")
	}
	d := time.Duration(p.TimeoutMS) * time.Millisecond
	if d <= 0 {
		d = DefaultWait
	}
	d = min(d, MaxWait)
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return PageResult{}, err
	}
	defer unlock()
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		res, err := h.result(wctx, b, s)
		if wire.CodeOf(err) == wire.CodeBrowserCrashed {
			return PageResult{}, err
		}
		if err == nil && strings.Contains(res.URL, p.URL) {
			if p.Text == "" {
				return res, nil
			}
			// Search the outline (with the session's taint), never the raw snapshot: the raw
			// data holds the values of password fields, and a wait that matched them would be
			// an oracle for them.
			_, out, _, err := h.capture(wctx, b, s)
			if wire.CodeOf(err) == wire.CodeBrowserCrashed {
				return PageResult{}, err
			}
			if err == nil && outlineContains(out, p.Text) {
				return res, nil
			}
		}
		select {
		case <-wctx.Done():
			return PageResult{}, wire.Errorf(wire.CodeTimeout, "condition not met within %s", d)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func outlineContains(o snapshot.Outline, text string) bool {
	if strings.Contains(o.Title, text) {
		return true
	}
	for _, e := range o.Elements {
		if strings.Contains(e.Text, text) || strings.Contains(e.Value, text) {
			return true
		}
	}
	return false
}

// Screenshot writes a PNG of the session's viewport to the private artifact store.
func (h *Host) Screenshot(ctx context.Context, name string) (ScreenshotResult, error) {
	b, s, unlock, err := h.lockSession(ctx, name)
	if err != nil {
		return ScreenshotResult{}, err
	}
	defer unlock()
	// Pixels show what a field holds (a revealed password, or its length in bullets): none
	// while a field the host typed into still holds a value.
	if left, err := h.secretOnPage(ctx, b, s); err != nil {
		return ScreenshotResult{}, err
	} else if left {
		return ScreenshotResult{}, errSecretOnPage()
	}
	var r struct {
		Data string `json:"data"`
	}
	// A page kept busy (by another page in its renderer process, say) never produces a frame:
	// bounded, so the answer is TIMEOUT rather than the CLI's deadline.
	sctx, scancel := context.WithTimeout(ctx, ScreenshotWait)
	err = b.Call(sctx, s.sid, "Page.captureScreenshot", map[string]any{"format": "png"}, &r)
	scancel()
	if err != nil {
		return ScreenshotResult{}, h.browserErr(err)
	}
	// And once more after the capture: a page that refilled the field meanwhile gets no picture.
	if left, err := h.secretOnPage(ctx, b, s); err != nil || left {
		if err == nil {
			err = errSecretOnPage()
		}
		return ScreenshotResult{}, err
	}
	if base64.StdEncoding.DecodedLen(len(r.Data)) > MaxScreenshotLen {
		return ScreenshotResult{}, wire.Errorf(wire.CodeInternal, "screenshot larger than %d bytes", MaxScreenshotLen)
	}
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		return ScreenshotResult{}, fmt.Errorf("decode screenshot: %w", err)
	}
	dir := h.o.Layout.Artifacts()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ScreenshotResult{}, err
	}
	os.Chmod(dir, 0o700)
	sum := sha256.Sum256(png)
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.png", s.name, h.o.Now().UTC().Format("20060102T150405.000000000Z")))
	if err := atomicfile.Write(path, png); err != nil {
		return ScreenshotResult{}, err
	}
	pruneArtifacts(dir, MaxScreenshots)
	return ScreenshotResult{Session: s.name, Path: path, SHA256: hex.EncodeToString(sum[:]), Bytes: len(png)}, nil
}

func pruneArtifacts(dir string, keep int) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) <= keep {
		return
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".png") {
			names = append(names, e.Name())
		}
	}
	sort.Slice(names, func(i, j int) bool {
		a, _ := os.Stat(filepath.Join(dir, names[i]))
		b, _ := os.Stat(filepath.Join(dir, names[j]))
		return a != nil && b != nil && a.ModTime().Before(b.ModTime())
	})
	for len(names) > keep {
		os.Remove(filepath.Join(dir, names[0]))
		names = names[1:]
	}
}

// Status reports the host.
func (h *Host) Status() Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := Status{
		PID: os.Getpid(), Version: h.o.Version, Chromium: h.product,
		Profile: h.prof.Dir(), LockOwner: h.prof.LockOwner(), Started: h.started, Sessions: len(h.sessions),
		MovedAside: h.prof.Report().MovedAside, Reason: h.prof.Report().Reason,
	}
	m := h.prof.Migration()
	st.MigratedFrom, st.NotMigrated = m.From, m.NotMigrated
	if h.browser != nil && h.browser.Err() == nil {
		st.BrowserPID = h.browser.PID()
	}
	return st
}

// BrowserPIDs lists the browser's live processes (for status and tests).
func (h *Host) BrowserPIDs() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.browser == nil {
		return nil
	}
	return h.browser.Pids()
}

// Close closes every session, closes Chromium gracefully (Browser.close: it commits cookies
// and storage), removes its temp dir and releases the profile lock.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	var err error
	if h.browser != nil {
		for _, s := range h.sessions {
			if s.isolated {
				h.closeTarget(s)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err = h.browser.Close(cctx)
		cancel()
		h.browser = nil
	}
	os.RemoveAll(h.tempDir())
	h.prof.Close()
	h.dropEnrollments("")
	h.bmu.Lock()
	if h.broker != nil {
		h.broker.Close() // brokerd wipes what belongs to this host's connection
		h.broker = nil
	}
	h.bmu.Unlock()
	return err
}
