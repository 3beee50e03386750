package host

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/echo"
	"github.com/headless-dev/headless/host/egress"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/allowlist"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/loopback"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/xdg"
	"github.com/headless-dev/headless/profile"
)

// Limits.
const (
	MaxSessions    = 64
	MaxScreenshots = 100 // kept in the artifact store; older ones are removed
	NavigationWait = control.DefaultVisitWait
	ScreenshotWait = 30 * time.Second
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
	// Allow is the navigation allowlist (navpolicy.go): empty, every host.
	Allow allowlist.List
	// Window is the platform of the person's display the browser shows its windows on
	// ("wayland" or "x11"; Env names it), "" for a headless browser (window.go).
	Window string
	// Loopback names the process serving a loopback origin (nil: loopback.Finder{}).
	Loopback interface {
		Find(origin string) (loopback.Listener, error)
		Sockets(origin string) (loopback.Listener, error)
	}
}

// Host owns one Chromium on the durable profile and the sessions in it.
type Host struct {
	o       Options
	prof    *profile.Profile
	guard   *profile.Guard // watches the profile's blocked entries for the running browser (h.mu)
	started time.Time

	mu       sync.Mutex // guards browser, product, sessions
	browser  *cdp.Browser
	product  string
	sessions map[string]*session
	unsub    func()

	// echo is the keyed fingerprints of every secret released into the browser (echoed.go).
	echo *echo.Set
	// egress is the secrets typed into pages, checked against every request the browser
	// sends; way is the browser-wide interception that feeds it (wayout.go).
	egress egress.Guard
	way    wayOut

	routes sync.Map // CDP session id → *session; read by the event reader without h.mu
	// spare is a journey's fresh context opened ahead of it (spare.go).
	spare spareSlot
	// openers follows the windows opened from pages; looseWindows counts those whose opener
	// is no session's (openers.go).
	openers openerTrack
	// queued counts the verbs waiting for their session's verb lock (verblock.go).
	queued atomic.Int32
	// cursors are the live cursors of the lists (pagination.go).
	cursors cursorTable

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

	nav navPolicy // the navigation allowlist's enforcement (navpolicy.go)
}

type session struct {
	name      string
	isolated  bool
	contextID string
	targetID  string
	sid       string
	browser   *cdp.Browser // the browser the session's page is in
	// pages are the session's windows (pages.go): its own page first, then the windows its
	// pages opened, in the order they opened; cur is the one the verbs drive (its target and
	// DevTools session are targetID and sid). Written with both s.mu and pagesMu held, read
	// with either; the event reader holds pagesMu while it handles an event of the session.
	pagesMu sync.Mutex
	pages   []*tab
	cur     *tab
	// root is the session's own page target (pageSession: the windows it opens are the
	// session's), set with targetID by setTarget.
	root atomic.Pointer[string]
	// dialogsNow: a sign-in or a journey holds the session; its pages' dialogs are dismissed
	// as they open (dialogs.go).
	dialogsNow atomic.Bool
	// frozen are the DevTools sessions of the windows a sign-in in an opened window froze
	// (its openers, pages.go), thawed when the verb ends. Guarded by mu.
	frozen []string
	// liveSID is sid, for 'session close' to stop a page it cannot wait for (s.mu is held by
	// the verb waiting on it).
	liveSID atomic.Value
	events  chan cdp.Event
	gone    <-chan struct{} // closed when the session's browser is gone
	// owner, when set, is the control connection that created the session with
	// CreateParams.Owned: the session is closed when that connection ends (an MCP client
	// disconnected, crashed or was killed).
	owner *rpc.Conn
	// fresh: a journey's throwaway browser context (journey.go), not reachable by name from
	// any verb, disposed when its run ends; not isolated: it signs in with vault aliases.
	fresh bool
	// stopRun, when set (guarded by Host.mu), cancels the journey running in the session, so
	// that closing it (session close, profile clear, the host's stop) does not wait for the
	// run's budget.
	stopRun context.CancelFunc
	// navPending: a navigation of the main frame has started and not committed or stopped;
	// heldNavs and paused: document requests held by the navigation gate (navguard.go).
	// Written by the event reader.
	navPending  atomic.Bool
	watchFrames atomic.Bool // a passkey ceremony runs: Page.frameAttached reaches events
	heldNavs    atomic.Int32
	// loaded is the main frame's document as it committed (Page.frameNavigated): its loader
	// and URL. The page's history.pushState/replaceState change the URL it shows, never this
	// (loginpath.go). Written by the event reader.
	loaded atomic.Pointer[loadedDoc]
	// opened counts the open windows opened from the session's page, directly or through
	// others; loose is the host's count of open windows whose opener it could not follow
	// (openers.go). Written by the event reader.
	openers *openerTrack
	// pageTgt is targetID for the event reader (which must not race the verbs that replace
	// the page): set with it.
	pageTgt atomic.Pointer[string]
	paused  chan cdp.Event
	// basic is the session's HTTP Basic state (basicauth.go), written by the event handler.
	basic basicState
	// way is what was typed into the session's pages that may still be there (wayout.go).
	way sessionWayOut
	// lists are its current page's console messages and requests, and its denied downloads
	// (pagelog.go, downloads.go).
	lists pageLists
	// handedOver: the person acts in the session's window (handover.go): every verb answers
	// HANDED_OVER.
	handedOver atomic.Bool

	mu verbLock // one verb at a time; guards everything below
	// actMark is reqs' mark at the last drain: the requests after it are the action's.
	actMark uint64
	refs    map[string]snapshot.Target
	// issued is the most refs any snapshot of the session gave (refs are e1…eN in each):
	// a ref within it that the latest snapshot has not is REF_STALE, beyond it REF_UNKNOWN.
	issued int
	// taint holds the nodes the host typed a secret into (backend node id → frame id), in the
	// main-frame document taintDoc; see taint.go.
	taint    map[int64]string
	taintDoc string
	// typedEntry is the id of the history entry the session showed when the host began an
	// attempt that types a secret (0: none), for forgetSubmission.
	typedEntry int
	// world is where the host's fixed functions run (taint.go).
	world fixedWorld
}

// setTarget sets the session's page target (s.mu held, or the session not yet routed).
func (s *session) setTarget(id string) {
	s.targetID = id
	s.pageTgt.Store(&id)
	s.root.Store(&id)
}

// rootTarget is the session's own page target, for the event reader.
func (s *session) rootTarget() string {
	if p := s.root.Load(); p != nil {
		return *p
	}
	return ""
}

// pageTarget is the session's page target, for the event reader.
func (s *session) pageTarget() string {
	if p := s.pageTgt.Load(); p != nil {
		return *p
	}
	return ""
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
	// The Secret Service check that must pass before Chromium starts runs while the profile
	// opens (its D-Bus round trips are most of a start's own time before Chromium).
	probe := startKeyProbe(ctx, o.BusAddress)
	prof, err := openProfileAfterDying(ctx, o.Layout, o.Now, o.Log)
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
	h := &Host{o: o, prof: prof, started: o.Now(), echo: echo.New(), sessions: map[string]*session{}, isolated: map[string]bool{}, enroll: map[string]*pendingEnroll{}}
	if err := h.launch(ctx, probe); err != nil {
		prof.Close()
		return nil, err
	}
	return h, nil
}

// Status reports the host.
func (h *Host) Status() control.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := control.Status{
		PID: os.Getpid(), Version: h.o.Version, Chromium: h.product,
		Profile: h.prof.Dir(), LockOwner: h.prof.LockOwner(), Started: h.started, Sessions: len(h.sessions),
		MovedAside: h.prof.Report().MovedAside, Reason: h.prof.Report().Reason,
		Allow: h.allowStrings(), QueuedVerbs: int(h.queued.Load()), Window: h.o.Window,
	}
	m := h.prof.Migration()
	st.MigratedFrom, st.NotMigrated = m.From, legacyProfiles(m.NotMigrated)
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
	h.dropSpare()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	var err error
	if h.browser != nil {
		for _, s := range h.sessions {
			if s.stopRun != nil {
				s.stopRun()
			}
			if s.browser == h.browser {
				// Browser.close with a dialog open ends Chromium in SIGSEGV, before it
				// commits what Close is for (cdp.Quiet): every window of the session.
				s.quietPages(h.browser)
			}
			if s.isolated || s.fresh {
				h.closeTarget(s)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err = h.browser.Close(cctx)
		cancel()
		h.browser = nil
	}
	os.RemoveAll(h.tempDir())
	h.guard.Close()
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

// legacyProfiles is the profile package's report of older-layout profiles left in place, in
// control.sock's terms.
func legacyProfiles(in []profile.LegacyProfile) []control.LegacyProfile {
	var out []control.LegacyProfile
	for _, l := range in {
		out = append(out, control.LegacyProfile{Path: l.Path, Reason: string(l.Reason), Detail: l.Detail})
	}
	return out
}
