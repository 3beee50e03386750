package host

import (
	"time"

	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/profile"
)

// Methods on control.sock. Params and results are the types below.
const (
	MethodPing          = "ping"
	MethodStatus        = "status"
	MethodShutdown      = "shutdown"
	MethodSessionCreate = "session.create"
	MethodSessionList   = "session.list"
	MethodSessionClose  = "session.close"
	MethodVisit         = "visit"
	MethodSnapshot      = "snapshot"
	MethodClick         = "click"
	MethodFill          = "fill"
	MethodPress         = "press"
	MethodWait          = "wait"
	MethodScreenshot    = "screenshot"
	MethodProfileClear  = "profile.clear"
)

// LegacyProfile is a profile of an older layout that was left in place (Ready and Status
// report them): the profile package's own report, which the host owns.
type LegacyProfile = profile.LegacyProfile

// DefaultSession always exists.
const DefaultSession = "default"

// SessionParams names a session ("" means default).
type SessionParams struct {
	Session string `json:"session,omitempty"`
}

// CreateParams is session.create.
type CreateParams struct {
	Name     string `json:"name"`
	Isolated bool   `json:"isolated,omitempty"`
}

// SessionInfo describes one session.
type SessionInfo struct {
	Name     string `json:"name"`
	Isolated bool   `json:"isolated"`
	URL      string `json:"url"`
	Title    string `json:"title"`
	Status   string `json:"status"`
}

// SessionList answers session.list.
type SessionList struct {
	Sessions []SessionInfo `json:"sessions"`
}

// VisitParams is visit.
type VisitParams struct {
	Session string `json:"session,omitempty"`
	URL     string `json:"url"`
}

// PageResult answers visit, click and press: where the session is now, and, when the page
// holds a login form, a challenge to answer with 'auth login --challenge'.
type PageResult struct {
	Session      string        `json:"session"`
	URL          string        `json:"url"`
	Title        string        `json:"title"`
	AuthRequired *AuthRequired `json:"auth_required,omitempty"`
}

// SnapshotResult answers snapshot.
type SnapshotResult struct {
	Session string `json:"session"`
	snapshot.Outline
}

// RefParams is click.
type RefParams struct {
	Session string `json:"session,omitempty"`
	Ref     string `json:"ref"`
}

// FillParams is fill. Text is typed into the element; it is never echoed or logged.
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

// PressParams is press.
type PressParams struct {
	Session string `json:"session,omitempty"`
	Key     string `json:"key"`
}

// WaitParams is wait: until the page text contains Text and/or the URL contains URL.
type WaitParams struct {
	Session   string `json:"session,omitempty"`
	Text      string `json:"text,omitempty"`
	URL       string `json:"url,omitempty"`
	TimeoutMS int    `json:"timeout_ms,omitempty"`
}

// ScreenshotResult answers screenshot.
type ScreenshotResult struct {
	Session string `json:"session"`
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Bytes   int    `json:"bytes"`
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
}

// ClearResult answers profile.clear. SessionsClosed counts every session that was open, the
// default one included (it is recreated).
type ClearResult struct {
	Cleared        bool   `json:"cleared"`
	Profile        string `json:"profile"`
	SessionsClosed int    `json:"sessions_closed"`
}

// Ready is what 'headless start' reports about a running host.
func (st Status) Ready() Ready {
	return Ready{PID: st.PID, Profile: st.Profile, Chromium: st.Chromium, MovedAside: st.MovedAside, Reason: st.Reason,
		MigratedFrom: st.MigratedFrom, NotMigrated: st.NotMigrated}
}
