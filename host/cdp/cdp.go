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
	"encoding/json"
	"errors"
	"fmt"

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
