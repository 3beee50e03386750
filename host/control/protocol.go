package control

import (
	"time"

	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
)

// Methods on control.sock. Each one's params and result are the types named beside it; a
// method without params takes none (an absent or empty object).
const (
	MethodPing          = "ping"           // → struct{}
	MethodStatus        = "status"         // → Status
	MethodShutdown      = "shutdown"       // → ShutdownResult
	MethodSessionCreate = "session.create" // CreateParams → SessionInfo
	MethodSessionList   = "session.list"   // → SessionList
	MethodSessionClose  = "session.close"  // CloseParams → SessionClosed
	MethodVisit         = "visit"          // VisitParams → PageResult
	MethodSnapshot      = "snapshot"       // SessionParams → SnapshotResult
	MethodClick         = "click"          // ClickParams → PageResult
	MethodFill          = "fill"           // FillParams → FillResult
	MethodPress         = "press"          // PressParams → PageResult
	MethodWait          = "wait"           // WaitParams → PageResult
	MethodScreenshot    = "screenshot"     // ScreenshotParams → ScreenshotResult
	MethodBack          = "back"           // SessionParams → PageResult
	MethodSelect        = "select"         // SelectParams → SelectResult
	MethodHover         = "hover"          // RefParams → HoverResult
	MethodScroll        = "scroll"         // ScrollParams → ScrollResult
	MethodProfileClear  = "profile.clear"  // → ClearResult
	MethodClientHello   = "client.hello"   // ClientHelloParams → struct{}: what this connection's client says it is
	MethodJourneyRun    = "journey.run"    // JourneyRunParams → journey.Report
	MethodForward       = "forward"        // SessionParams → PageResult
	MethodReload        = "reload"         // SessionParams → PageResult
	MethodDialog        = "dialog"         // DialogParams → PageResult
	MethodSessionPages  = "session.pages"  // SessionParams → PageList
	MethodPageSelect    = "page.select"    // PageSelectParams → PageResult
	MethodHandover      = "handover"       // HandoverParams → HandoverResult: the person acts in the session's window

	MethodAuthLogin         = "auth.login"          // AuthParams → AuthResult
	MethodAuthEnroll        = "auth.enroll"         // EnrollParams (a hand-built frame) → EnrollResult
	MethodAuthEnrollSave    = "auth.enroll.save"    // EnrollSaveParams → EnrollSaved
	MethodAuthEnrollDiscard = "auth.enroll.discard" // EnrollTokenParams → EnrollDiscarded

	MethodCredentialsList   = "credentials.list"   // CredentialsListParams → CredentialList
	MethodCredentialsAdd    = "credentials.add"    // CredentialsAddParams (a hand-built frame) → Credential
	MethodCredentialsRemove = "credentials.remove" // CredentialsRemoveParams → struct{}
	MethodCredentialsVerify = "credentials.verify" // VerifyParams → VerifyResult
	// MethodCredentialsAddPasskey: PasskeyAddParams → Credential. The person's command: a
	// passkey the site registers in the session is saved (its key never leaves the host).
	MethodCredentialsAddPasskey = "credentials.add_passkey"
)

// ClientHelloParams is client.hello: the agent's client as it names itself (an MCP client's
// clientInfo). The host keeps it, cleaned and bounded, for the rest of the connection and
// hands it to brokerd with every release, which shows and audits it as self-reported.
type ClientHelloParams struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Bounds of ClientHelloParams (longer values are cut, not refused).
const (
	MaxClientName    = 64
	MaxClientVersion = 32
)

// DefaultSession always exists; a session name "" means it.
const DefaultSession = "default"

// SessionParams names a session ("" means default).
type SessionParams struct {
	Session string `json:"session,omitempty"`
}

// CreateParams is session.create.
type CreateParams struct {
	Name     string `json:"name"`
	Isolated bool   `json:"isolated,omitempty"`
	// Owned ties the session to the connection that creates it: the host closes it when
	// that connection ends for any reason (the MCP server's sessions, unless kept).
	Owned bool `json:"owned,omitempty"`
}

// CloseParams is session.close.
type CloseParams struct {
	Name string `json:"name"`
}

// SessionClosed answers session.close.
type SessionClosed struct {
	Closed string `json:"closed"`
}

// SessionInfo describes one session. Responsive is false when its page did not say where it
// is (URL and Title are then empty).
type SessionInfo struct {
	Name       string `json:"name"`
	Isolated   bool   `json:"isolated"`
	Fresh      bool   `json:"fresh,omitempty"` // a running journey's fresh browser context (no verb drives it)
	Owned      bool   `json:"owned,omitempty"` // closed when the connection that created it ends
	URL        string `json:"url"`
	Title      string `json:"title"`
	Responsive bool   `json:"responsive"`
	// HandedOver: the person acts in the session's window (handover); its URL and title are
	// not shown meanwhile.
	HandedOver bool `json:"handed_over,omitempty"`
}

// HandoverParams is handover: the agent asks the person to act in the session's window, for
// Reason (its own words, shown to the person quoted; one line of at most 512 bytes).
type HandoverParams struct {
	Session string `json:"session,omitempty"`
	Reason  string `json:"reason"`
}

// HandoverResult answers handover: the person pressed Done ("done") or declined ("declined");
// the session's page is the agent's again, and where it is now. A prompt nobody answered is
// PRESENCE_TIMEOUT.
type HandoverResult struct {
	Session string `json:"session"`
	Status  string `json:"status"`
	URL     string `json:"url"`
	Title   string `json:"title"`
}

// SessionList answers session.list, sorted by name.
type SessionList struct {
	Sessions []SessionInfo `json:"sessions"`
}

// VisitParams is visit: the page loads within TimeoutMS (0: DefaultVisitWait; at most
// MaxWait), else TIMEOUT.
type VisitParams struct {
	Session   string `json:"session,omitempty"`
	URL       string `json:"url"`
	TimeoutMS int    `json:"timeout_ms,omitempty"`
}

// DefaultVisitWait is how long a visit waits for its page by default.
const DefaultVisitWait = 30 * time.Second

// PageResult answers visit, back, forward, reload, click, press, wait, dialog and
// page.select: where the session is now, and, when the page holds a login form, a challenge
// to answer with auth.login. Dialog: a dialog the page holds open (or one the host dismissed
// unanswered since the last verb); Pages: how many windows the session has, when its pages
// opened some (session.pages lists them).
type PageResult struct {
	Session      string        `json:"session"`
	URL          string        `json:"url"`
	Title        string        `json:"title"`
	AuthRequired *AuthRequired `json:"auth_required,omitempty"`
	Dialog       *Dialog       `json:"dialog,omitempty"`
	Pages        int           `json:"pages,omitempty"`
}

// Dialog is a JavaScript dialog of the page: Type is alert, confirm, prompt or beforeunload;
// Message (and a prompt's Default) are the page's words, untrusted, at most MaxDialogText
// bytes. Open: it waits for dialog (accept or dismiss), DialogHold at most. Otherwise the host
// dismissed it unanswered: Dismissed is "unanswered" (the hold passed) or "navigation" (the
// session left the page).
type Dialog struct {
	Type      string `json:"type"`
	Message   string `json:"message"`
	Default   string `json:"default,omitempty"`
	Open      bool   `json:"open"`
	Dismissed string `json:"dismissed,omitempty"`
}

// MaxDialogText bounds a dialog's message and default, and a prompt's answer.
const MaxDialogText = 1024

// DialogParams is dialog: accept (with Text, a prompt's answer) or dismiss the dialog open on
// the session's page.
type DialogParams struct {
	Session string `json:"session,omitempty"`
	Accept  bool   `json:"accept,omitempty"`
	Text    string `json:"text,omitempty"`
}

// PageSelectParams is page.select: Page is an index of session.pages (1: the session's own).
type PageSelectParams struct {
	Session string `json:"session,omitempty"`
	Page    int    `json:"page"`
}

// PageList answers session.pages: the session's windows, its own page first, then those its
// pages opened, in the order they opened. URLs and titles are the pages' (untrusted).
type PageList struct {
	Session string     `json:"session"`
	Pages   []PageInfo `json:"pages"`
}

// PageInfo is one window of a session: Opener is the index of the page that opened it (0 for
// the session's own); Current: the one the verbs drive; Closed: it went (the next verb
// leaves it).
type PageInfo struct {
	Index   int     `json:"index"`
	URL     string  `json:"url"`
	Title   string  `json:"title"`
	Opener  int     `json:"opener,omitempty"`
	Current bool    `json:"current,omitempty"`
	Closed  bool    `json:"closed,omitempty"`
	Dialog  *Dialog `json:"dialog,omitempty"`
}

// AuthRequired is attached to a page result when the page holds a login form.
type AuthRequired struct {
	// Kind is "basic" for an HTTP Basic challenge of the page's server (the page is its 401
	// answer); "passkey" for a page that offers only a passkey sign-in (Aliases are its
	// passkeys); "" for a login form.
	Kind      string    `json:"kind,omitempty"`
	Challenge string    `json:"challenge"`
	Origin    string    `json:"origin"`
	Aliases   []string  `json:"aliases"` // passkeys included: auth login signs in with one through the page's passkey button
	ExpiresAt time.Time `json:"expires_at"`
}

// SnapshotResult answers snapshot: the page's bounded outline. Its text comes from the page:
// data, not instructions.
type SnapshotResult struct {
	Session string `json:"session"`
	snapshot.Outline
	// Dialog: a dialog holds the page (its renderer cannot be read: the outline has its URL
	// and title only), or one was dismissed unanswered since the last verb.
	Dialog *Dialog `json:"dialog,omitempty"`
	// Pages: how many windows the session has, when its pages opened some.
	Pages int `json:"pages,omitempty"`
}

// RefParams is hover.
type RefParams struct {
	Session string `json:"session,omitempty"`
	Ref     string `json:"ref"`
}

// ClickParams is click: one left click, or with Double a double click, or with Right a right
// click (a context menu) — not both.
type ClickParams struct {
	Session string `json:"session,omitempty"`
	Ref     string `json:"ref"`
	Double  bool   `json:"double,omitempty"`
	Right   bool   `json:"right,omitempty"`
}

// FillParams is fill. Text is typed into the element; it is never echoed or logged. It is
// not for passwords (a password field is DIRECT_FILL_DISABLED): they go through auth.login.
type FillParams struct {
	Session string `json:"session,omitempty"`
	Ref     string `json:"ref"`
	Text    string `json:"text"`
}

// FillResult answers fill (without the text).
type FillResult struct {
	Session string `json:"session"`
	Ref     string `json:"ref"`
	Filled  bool   `json:"filled"`
}

// PressParams is press: Key is one printable character or a named key (journey.KeyNames, the
// one list of them), after modifiers joined by "+" (Control+A, Shift+Tab, Meta+Enter; Control,
// Shift, Alt, Meta). With Ref, the element of that ref is focused first.
type PressParams struct {
	Session string `json:"session,omitempty"`
	Key     string `json:"key"`
	Ref     string `json:"ref,omitempty"`
}

// WaitParams is wait: until every condition given holds — the page text contains Text, it no
// longer contains Gone, the URL contains URL, the element of Ref (from the session's last
// snapshot) is visible, the page's network is idle (NetworkIdle: no request of the page in
// flight for NetworkIdleQuiet; streams and WebSockets do not count) — for TimeoutMS at most
// (0: DefaultWait; at most MaxWait). At least one condition; each string at most MaxWaitText
// bytes. The page text is the text a snapshot shows: never the value of a password field or
// of a field the host typed a password into.
type WaitParams struct {
	Session     string `json:"session,omitempty"`
	Text        string `json:"text,omitempty"`
	Gone        string `json:"gone,omitempty"`
	URL         string `json:"url,omitempty"`
	Ref         string `json:"ref,omitempty"`
	NetworkIdle bool   `json:"network_idle,omitempty"`
	TimeoutMS   int    `json:"timeout_ms,omitempty"`
}

// Bounds of wait.
const (
	DefaultWait = 10 * time.Second
	MaxWait     = 5 * time.Minute
	MaxWaitText = 1024 // bytes of Text, Gone and URL each
	// NetworkIdleQuiet is how long a page must have no request in flight to be idle.
	NetworkIdleQuiet = 500 * time.Millisecond
)

// SelectParams is select: the options of a native <select> (the element of Ref) to select,
// replacing its selection, each named by its label (the visible text; the snapshot lists a
// select's labels under "options") or its value, matched exactly, label first; hidden options
// are not chosen. More than one only for a select that takes several (multiple). At most MaxSelectValues values of at
// most MaxSelectValue bytes each.
type SelectParams struct {
	Session string   `json:"session,omitempty"`
	Ref     string   `json:"ref"`
	Values  []string `json:"values"`
}

// Bounds of select.
const (
	MaxSelectValues = 32
	MaxSelectValue  = 1024
)

// SelectResult answers select: where the session is now (a select's change handler may
// navigate) and the values it was given (Selected), every one of which selected an option.
type SelectResult struct {
	PageResult
	Ref      string   `json:"ref"`
	Selected []string `json:"selected"`
}

// HoverResult answers hover: the mouse is over the centre of the element of Ref.
type HoverResult struct {
	Session string `json:"session"`
	Ref     string `json:"ref"`
	Hovered bool   `json:"hovered"`
}

// ScrollParams is scroll. With Ref alone, the element of that ref is scrolled into view;
// without Ref, the page is scrolled by By CSS pixels (0: one viewport height; negative: up)
// with the mouse wheel at the viewport's centre; with both, the element is scrolled into view
// and the wheel turned by By over its centre (what scrolls a scrollable box). |By| is at most
// MaxScrollBy.
type ScrollParams struct {
	Session string `json:"session,omitempty"`
	Ref     string `json:"ref,omitempty"`
	By      int    `json:"by,omitempty"`
}

// MaxScrollBy bounds scroll's By, in CSS pixels.
const MaxScrollBy = 100_000

// ScrollResult answers scroll: where the page's viewport is now, in CSS pixels: its scroll
// offset, its size and the size of the whole page (content).
type ScrollResult struct {
	Session        string `json:"session"`
	Ref            string `json:"ref,omitempty"`
	ScrollX        int    `json:"scroll_x"`
	ScrollY        int    `json:"scroll_y"`
	ViewportWidth  int    `json:"viewport_width"`
	ViewportHeight int    `json:"viewport_height"`
	ContentWidth   int    `json:"content_width"`
	ContentHeight  int    `json:"content_height"`
}

// ScreenshotParams is screenshot: of the viewport; with Ref, of the box of the element of
// that ref; with FullPage, of the whole page (not both). A capture is at most
// MaxShotWidth × MaxShotHeight CSS pixels: beyond that it is cut (ScreenshotResult.Truncated).
type ScreenshotParams struct {
	Session  string `json:"session,omitempty"`
	Ref      string `json:"ref,omitempty"`
	FullPage bool   `json:"full_page,omitempty"`
}

// Bounds of a screenshot, in CSS pixels.
const (
	MaxShotWidth  = 4096
	MaxShotHeight = 16384
)

// MaxScreenshotLen bounds the bytes of one screenshot's PNG (in the artifact store, and what a
// client reads of it).
const MaxScreenshotLen = 32 << 20

// ScreenshotResult answers screenshot: a PNG in the private artifact store. Width and Height
// are the PNG's own (from its header). Truncated: the page or element was larger than the
// bounds, and the picture shows its top-left part only.
type ScreenshotResult struct {
	Session   string `json:"session"`
	Path      string `json:"path"`
	SHA256    string `json:"sha256"`
	Bytes     int    `json:"bytes"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	Truncated bool   `json:"truncated,omitempty"`
}

// ShutdownResult answers shutdown: the host that is stopping.
type ShutdownResult struct {
	PID int `json:"pid"`
}

// LegacyProfile is a profile of an older layout that was left in place, and why.
type LegacyProfile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

// Status answers status.
type Status struct {
	PID        int       `json:"pid"`
	Version    string    `json:"version"`
	Chromium   string    `json:"chromium"`
	BrowserPID int       `json:"browser_pid"`
	Profile    string    `json:"profile"`
	LockOwner  int       `json:"lock_owner"`
	MovedAside string    `json:"profile_moved_aside,omitempty"`
	Reason     string    `json:"profile_moved_aside_reason,omitempty"`
	Started    time.Time `json:"started"`
	Sessions   int       `json:"sessions"`

	MigratedFrom string          `json:"profile_migrated_from,omitempty"`
	NotMigrated  []LegacyProfile `json:"profile_not_migrated,omitempty"`

	// Undumpable reports PR_GET_DUMPABLE of the host itself (a doctor's fact).
	Undumpable bool `json:"undumpable"`

	// Allow is the navigation allowlist the host enforces (canonical; absent: every host).
	Allow []string `json:"allow,omitempty"`
	// BrowserContexts counts the browser's contexts besides the durable profile's own: one
	// per isolated session and per running journey's fresh context (-1: the browser did
	// not say). A context that outlived its session would show here.
	BrowserContexts int `json:"browser_contexts"`

	// QueuedVerbs counts the commands waiting for their session's running one (at most 32;
	// beyond, BUSY).
	QueuedVerbs int `json:"queued_verbs"`

	// Window is the platform of the person's display the browser shows its windows on
	// ("wayland" or "x11"; absent: headless).
	Window string `json:"window,omitempty"`
}

// Ready is the one JSON line the host writes to its notify file when it is serving (or
// {"error":…} when it could not start), and what 'headless start' reports about it.
type Ready struct {
	PID        int    `json:"pid"`
	Profile    string `json:"profile"`
	Chromium   string `json:"chromium"`
	MovedAside string `json:"profile_moved_aside,omitempty"`
	Reason     string `json:"profile_moved_aside_reason,omitempty"`

	MigratedFrom string          `json:"profile_migrated_from,omitempty"`
	NotMigrated  []LegacyProfile `json:"profile_not_migrated,omitempty"`

	Allow  []string `json:"allow,omitempty"`  // the navigation allowlist (absent: every host)
	Window string   `json:"window,omitempty"` // "wayland" or "x11": the browser's windows are on the person's display
}

// Ready is what 'headless start' reports about a running host.
func (st Status) Ready() Ready {
	return Ready{PID: st.PID, Profile: st.Profile, Chromium: st.Chromium, MovedAside: st.MovedAside, Reason: st.Reason,
		MigratedFrom: st.MigratedFrom, NotMigrated: st.NotMigrated, Allow: st.Allow, Window: st.Window}
}

// ClearResult answers profile.clear. SessionsClosed counts every session that was open, the
// default one included (it is recreated).
type ClearResult struct {
	Cleared        bool   `json:"cleared"`
	Profile        string `json:"profile"`
	SessionsClosed int    `json:"sessions_closed"`
}

// AuthParams is auth.login.
type AuthParams struct {
	Session   string `json:"session,omitempty"`
	Alias     string `json:"alias"`
	Challenge string `json:"challenge,omitempty"`
	// CodeOnly: step-up in a signed-in session. Only the alias's one-time code is released
	// (its own prompt says so) and typed into the page's one-time-code field.
	CodeOnly bool `json:"code_only,omitempty"`
	// NewLoginPath asks the person to allow a sign-in form at a path where the credential
	// was not used before (brokerapi.ReleaseParams.NewPath); without it such a form is
	// LOGIN_PATH_CHANGED, refused before anyone is asked.
	NewLoginPath bool `json:"new_login_path,omitempty"`
	// PasswordField, AccountField and Submit are refs of the session's last snapshot: the
	// agent says which fields the sign-in uses when the host's guess is wrong. The password
	// ref must be an input of type password in the top document (on the credential's origin,
	// at a known sign-in path), the account ref a text-like input, the submit ref a button,
	// link or input; the network guard still decides where the values may go.
	PasswordField string `json:"password_field,omitempty"`
	AccountField  string `json:"account_field,omitempty"`
	Submit        string `json:"submit,omitempty"`
}

// AuthResult answers auth.login. Status is "authenticated", "failed" or "unknown": never a
// guess.
type AuthResult struct {
	Status   string   `json:"status"`
	Origin   string   `json:"origin"`
	Alias    string   `json:"alias"`
	Session  string   `json:"session"`
	Evidence Evidence `json:"evidence"`
}

// Evidence is what the outcome was decided on (bounded; page-derived strings are untrusted).
// URLs carry no query string or fragment.
type Evidence struct {
	URLBefore        string `json:"url_before"`
	URLAfter         string `json:"url_after"`
	Navigated        bool   `json:"navigated"`
	LoginFormPresent bool   `json:"login_form_present"`
	ErrorText        string `json:"error_text,omitempty"`
	Steps            int    `json:"steps"`
	// Cleared: the attempt ended on the page it typed into (a script login that failed, a
	// submit the page blocked, an error after typing), and the host emptied the fields it had
	// typed the password into before answering.
	Cleared bool `json:"cleared"`
	// PageDiscarded: as Cleared, but the page would not let the host empty the fields in time
	// (or kept a value), so the host destroyed it: the session now shows a blank page.
	PageDiscarded bool `json:"page_discarded,omitempty"`
	// PageLost: the page's renderer crashed (or its tab went) before the sign-in answered,
	// after what its status says was seen: the session's next command finds a fresh blank
	// page. What the site set (cookies, storage) stays in the session's profile: visit it
	// again.
	PageLost bool `json:"page_lost,omitempty"`
	// CodeTyped: the credential's one-time code (released with the password under the same
	// approval) was typed into the same origin's code step and submitted. Never the code.
	CodeTyped bool `json:"code_typed,omitempty"`
}

// EnrollParams is auth.enroll. Clients build the frame by hand ([Client.Enroll]) so that no
// encoder buffer keeps the secret; it is never logged.
type EnrollParams struct {
	Session string `json:"session,omitempty"`
	Account string `json:"account"`
	Secret  []byte `json:"secret"`
}

// ZeroSecret zeroes the password (rpc.Zeroer).
func (p *EnrollParams) ZeroSecret() { credential.Zero(p.Secret) }

// EnrollResult answers auth.enroll. Token is set only for "authenticated": it names the held
// password for one save or discard.
type EnrollResult struct {
	Status   string   `json:"status"`
	Origin   string   `json:"origin"`
	Session  string   `json:"session"`
	Evidence Evidence `json:"evidence"`
	Token    string   `json:"token,omitempty"`
}

// EnrollSaveParams is auth.enroll.save.
type EnrollSaveParams struct {
	Token string `json:"token"`
	Alias string `json:"alias"`
}

// EnrollTokenParams is auth.enroll.discard.
type EnrollTokenParams struct {
	Token string `json:"token"`
}

// EnrollSaved answers auth.enroll.save.
type EnrollSaved struct {
	Saved   string `json:"saved"`
	Origin  string `json:"origin"`
	Account string `json:"account"`
	Session string `json:"session"`
	Store   string `json:"store"` // "vault" or "isolated"
}

// EnrollDiscarded answers auth.enroll.discard.
type EnrollDiscarded struct {
	Discarded bool `json:"discarded"`
}

// Credential is a saved credential's metadata (never its password); CredentialList answers
// credentials.list. They are broker.sock's own.
type (
	Credential     = brokerapi.Credential
	CredentialList = brokerapi.ListResult
)

// CredentialsListParams is credentials.list: an isolated session's store.
type CredentialsListParams struct {
	Session string `json:"session"`
	Origin  string `json:"origin,omitempty"`
}

// CredentialsAddParams is credentials.add. Clients build the frame by hand
// ([Client.CredentialsAdd]); the secret is never logged.
type CredentialsAddParams struct {
	Session string `json:"session"`
	Origin  string `json:"origin"`
	Account string `json:"account"`
	Alias   string `json:"alias"`
	// LoginPaths are the sign-in paths the person set (brokerapi.AddParams.LoginPaths).
	LoginPaths []string `json:"login_paths,omitempty"`
	// AlsoOrigins are the other origins the person named (brokerapi.AddParams.AlsoOrigins).
	AlsoOrigins []string `json:"also_origins,omitempty"`
	Secret      []byte   `json:"secret"`
}

// ZeroSecret zeroes the password (rpc.Zeroer).
func (p *CredentialsAddParams) ZeroSecret() { credential.Zero(p.Secret) }

// PasskeyAddParams is credentials.add_passkey: the session whose page (of Origin) registers a
// passkey while the host waits (WaitMS, 0: PasskeyAddWait), and the record it is saved as (in
// the vault, or the session's own store when it is isolated).
type PasskeyAddParams struct {
	Session    string   `json:"session,omitempty"`
	Origin     string   `json:"origin"`
	Account    string   `json:"account"`
	Alias      string   `json:"alias"`
	LoginPaths []string `json:"login_paths,omitempty"`
	WaitMS     int      `json:"wait_ms,omitempty"`
}

// Bounds of a passkey enrolment's wait for the site's registration.
const (
	PasskeyAddWait    = 2 * time.Minute
	MaxPasskeyAddWait = 10 * time.Minute
)

// CredentialsRemoveParams is credentials.remove.
type CredentialsRemoveParams struct {
	Session string `json:"session"`
	Origin  string `json:"origin"`
	Alias   string `json:"alias"`
}

// VerifyParams is credentials.verify (the vault's credential of origin and alias).
type VerifyParams struct {
	Origin string `json:"origin"`
	Alias  string `json:"alias"`
}

// VerifyResult answers credentials.verify: the credential was released to the host, which
// zeroed it unseen.
type VerifyResult struct {
	Released bool   `json:"released"`
	Origin   string `json:"origin"`
	Account  string `json:"account"`
	Alias    string `json:"alias"`
}

// ProfileFacts is what a doctor reports of the durable profile (read-only: host.InspectProfile).
type ProfileFacts struct {
	Path    string `json:"path"`
	Exists  bool   `json:"exists"`
	Problem string `json:"problem,omitempty"`  // why the next start would move it aside
	LockPID int    `json:"lock_pid,omitempty"` // the live process recorded in its lock
}
