// Package host is the browser host: one long-lived process per user that owns Chromium on the
// durable profile, its sessions, and the agent-facing control socket.
//
// # Security contract
//
//   - Chromium is driven over --remote-debugging-pipe only (package cdp); no TCP debugging
//     port is ever opened.
//   - control.sock follows broker.sock's rules (package rpc): runtime dir 0700, socket 0600, the
//     peer's uid checked on every connection, 1 MiB frames, strict decoding, typed errors, and
//     malformed input never affects the host. Its protocol (method names, params, results) and
//     typed client are package host/control; the host serves it from one rpc.Methods table
//     (server.go) and its errors carry their own codes (wire.From).
//   - No verb evaluates caller JavaScript, and no verb returns a secret. The host itself runs
//     fixed functions of its own only, in an isolated world the page's scripts cannot reach:
//     one confirms that the focus is on the verified field right before and after typing (and
//     on the element press --ref focused), one marks a field autocomplete=off before a secret is
//     typed into it (so Chromium saves nothing of it with the history entry), one empties a
//     field it typed a password into, one
//     selects a native select's options (it answers only which value did not match), one
//     turns the history entry a sign-in's submit made into one without its body, and for
//     journeys one sets CSS zoom and one names the focused element. A caller's values (the
//     options to select, the zoom factor) reach a fixed function only as call arguments, never
//     in its source; a test reads the host's source and fails on anything else
//     (journey_test.go). Snapshots are built from DOMSnapshot data without running script,
//     never include the value of a password field, and mark page-derived text as untrusted.
//     fill refuses password fields unless the user-only config sets
//     allow_direct_password_fill. Text typed by fill is never logged or echoed.
//   - The browser is looked at before every release and again right before anything is typed
//     (integrity_linux.go): a process of its whose memory the host, running as the user
//     without privilege, could open (/proc/PID/mem) could be read by any process of the user's,
//     so the sign-in is BROWSER_EXPOSED and nobody is asked (root excepted, whom nothing keeps
//     out); a process that maps code from anything but a root-owned system file makes it
//     BROWSER_TAMPERED, and the browser is killed; so does any change, since before the
//     browser's exec, to the profile's blockers (profile.Guard: WidevineCdm, Default/Sessions).
//     Chromium's processes are closed when its binary is one the user cannot read
//     (install-deps, the package: mode 0711).
//   - Containment (taint.go): the password is in the page only between typing and submitting.
//     Every node the host typed a secret into is tainted for the life of its document (by
//     backend node id, whatever its type, name or id becomes): snapshot, wait and every other
//     page-derived output never carry its value, and screenshot refuses (SECRET_ON_PAGE) while
//     it holds one. An attempt that ends without leaving the document (any outcome but a
//     navigation, and every error after the first typed character) ends with the host
//     emptying those fields before it answers, and the result says so; when that cannot be done
//     in time (a busy renderer, a field that keeps its value) the page is discarded. While a
//     tainted node holds a value, every verb that can edit the page or run its handlers is
//     refused too (click, fill, press, select, hover, scroll, back: SECRET_ON_PAGE), and every
//     screenshot mode. wait (--text, --gone, --ref) reads the same taint-aware outline as
//     snapshot, so it answers for a typed password as for a string on no page. The
//     back/forward cache is off, so no history step brings a filled document back, and the
//     entry a sign-in's submit made keeps no POST body (which Chromium would otherwise write
//     to the profile's session files once a history step returned to it).
//   - Verbs name elements only by refs of the session's last snapshot (never selectors,
//     coordinates or paths); every string and list in their params is bounded. back goes only
//     to http, https and about:blank entries; a screenshot is at most 4096×16384 CSS pixels
//     (cut beyond, and the result says so).
//   - A sign-in form is a sign-in form: only a form with evidence of one (an account field or
//     autocomplete=current-password, exactly one password field, no other secret-looking
//     field) is advertised or used. Before anyone is asked, and again after typing right
//     before the submit: the form's action and every submitter's (hidden ones included) must
//     be on the credential's origin (FORM_ACTION_CROSS_ORIGIN) and POST (FORM_METHOD_GET); the
//     same document and field nodes, the password field still of type password. The account is
//     typed with the same focus checks as the password. Result URLs after a login carry no
//     query string.
//   - A page whose renderer crashed answers BROWSER_CRASHED at once (calls to it fail as soon
//     as Chromium reports the crash), and its session gets a fresh blank page.
//   - Navigation is limited to http and https URLs (UNSAFE_NAVIGATION otherwise), and, with a
//     navigation allowlist (navpolicy.go), to the listed hosts: every document request of the
//     whole browser is paused and an off-list one aborted (frames, redirects, popups, every
//     session and context); an off-list popup is closed; visit, click and press answer
//     UNSAFE_NAVIGATION. Subresources are not filtered: a navigation policy, not a firewall.
//   - The durable profile is locked by one host at a time (PROFILE_LOCKED names the owner) and
//     is never launched without the Secret Service that holds Chromium's cookie key: one launch
//     without it would delete every encrypted cookie. Chromium's password manager is off, and
//     the plaintext ("basic") password store is never used.
//   - Isolated sessions are separate Chromium browser contexts: no cookies or storage shared
//     with the default session or each other; closing one disposes its context.
//   - Journeys (journey*.go, control.sock journey.run) walk a plan of package internal/journey
//     with the verbs' own means (trusted input events, DOM and accessibility queries,
//     DOMSnapshot): nothing of the plan's is evaluated. By default each run gets a fresh
//     browser context of its own, disposed on every path (the caller hanging up, the session
//     closed, the host stopping included), never registered with brokerd as isolated (its
//     login signs in from the vault, with the person's approval of each use) and reachable by
//     no verb. A login action is auth.login's path; every look of a run is refused while a
//     field the host typed a password into holds a value again (SECRET_ON_PAGE); a journey
//     never types into or reads the value of a password or secret-looking field, or reports
//     its box.
//   - Each isolated session is registered with brokerd over the host's broker connection
//     (session.open) on every new connection before any other request, and closed there
//     (session.close) with the session, so it only ever sees its own in-memory credential
//     store, which brokerd zeroes when the session, the connection or the host ends.
//   - Interactive enrollment (auth.enroll): the password arrives in one hand-built frame from
//     the CLI (which read it from the terminal), is typed with the same checks as alias login,
//     and is kept only after an authenticated outcome, for EnrollHold at most, under a one-time
//     token; auth.enroll.save sends it to brokerd in one hand-built frame, auth.enroll.discard,
//     the timeout, the session's close and the host's stop zero it.
//   - profile.clear closes every session (isolated ones through the same path as session
//     close), refuses new ones meanwhile, closes Chromium and waits for its processes, then
//     swaps in a fresh profile under the profile lock the host holds throughout, and
//     relaunches only with the keyring (checked before anything is closed).
//   - The host log is bounded (1 MiB plus one generation) and records verbs, sessions and error
//     codes, never page content, typed text or secrets.
//   - The host is started by brokerd (package hostproc), which releases passwords only to that
//     process: it makes itself undumpable first thing (no same-user ptrace, /proc/PID/mem or
//     environ), is a static binary (nothing for LD_PRELOAD to load into), runs with the
//     environment brokerd built, and shuts down gracefully (Browser.close) when the lifeline
//     brokerd gave it reaches EOF, so it never outlives the brokerd that vouches for it.
//     Chromium comes only from the user-only config ("chromium"), gets only the allowlisted
//     environment (brokerapi.ChromiumEnv), and every broker connection first tells brokerd how
//     the host runs (host.hello). A host started any other way runs, but receives no password.
//   - Each release request names, for the person's prompt and the audit, the page path (never
//     the query), the password field's label and the agent behind the request: the
//     control-socket peer and up to three ancestors, from /proc (the undumpable CLI shows only
//     its comm).
//   - credentials verify and the isolated-session credential commands reach brokerd through the
//     host (control.sock credentials.*), because a release goes only to the host and an
//     isolated store answers only the host's own broker connection; credentials.add takes the
//     person's password in one hand-built frame, only from a peer with a controlling terminal.
//
// # Not guaranteed
//
// Pages are untrusted: their text can try to instruct the agent. Cookies in the durable profile
// are session secrets; whoever can read the profile and use the keyring can reuse them.
package host
