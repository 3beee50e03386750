package wire

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
)

// Code is a stable, machine-readable error code. Codes never change meaning.
type Code string

// Codes that cross a socket or leave the CLI. "Could not look" and "nothing found" are always
// different codes.
const (
	CodeBadRequest       Code = "BAD_REQUEST"       // malformed, wrong-typed or unknown-field input
	CodeFrameTooLarge    Code = "FRAME_TOO_LARGE"   // a frame over 1 MiB
	CodeFrameTimeout     Code = "FRAME_TIMEOUT"     // a frame begun and not finished in time; the connection is closed
	CodeUnknownMethod    Code = "UNKNOWN_METHOD"    // no such method
	CodePeerRefused      Code = "PEER_REFUSED"      // the connecting process is another user
	CodePeerNotHost      Code = "PEER_NOT_HOST"     // a secret was asked for by a process other than the host brokerd started
	CodeBusy             Code = "BUSY"              // connection or request limit reached
	CodeInternal         Code = "INTERNAL"          // a bug or an unexpected failure
	CodeInvalidOrigin    Code = "INVALID_ORIGIN"    // origin is not an acceptable web origin
	CodeInvalidArgument  Code = "INVALID_ARGUMENT"  // alias, account, password or other field out of bounds
	CodeAliasExists      Code = "ALIAS_EXISTS"      // alias already used at that origin
	CodeAliasUnknown     Code = "ALIAS_UNKNOWN"     // no such alias at that origin
	CodeOriginMismatch   Code = "ORIGIN_MISMATCH"   // alias belongs to another origin than the challenge
	CodeOriginAmbiguous  Code = "ORIGIN_AMBIGUOUS"  // a loopback origin is served by different processes
	CodeOriginUnverified Code = "ORIGIN_UNVERIFIED" // the process serving a loopback origin could not be looked up
	CodeVaultLocked      Code = "VAULT_LOCKED"      // the OS vault is locked
	CodeVaultUnavail     Code = "VAULT_UNAVAILABLE" // no OS vault reachable
	CodeVaultFull        Code = "VAULT_FULL"        // a bounded store is full
	CodePresenceDenied   Code = "PRESENCE_DENIED"
	CodePresenceTimeout  Code = "PRESENCE_TIMEOUT"
	CodePresenceUnavail  Code = "PRESENCE_UNAVAILABLE"
	// CodePresenceAutoUnlock: the keyring would unlock the headless collection with nobody
	// asked (it stores its password for automatic unlock).
	CodePresenceAutoUnlock Code = "PRESENCE_AUTO_UNLOCK"
	CodeVaultNoKeyring     Code = "VAULT_NOT_INITIALIZED" // the headless keyring does not exist yet
	// CodeBrokerUntrusted: this brokerd lacks what only root grants (its group, the seal key):
	// not installed set-gid, or exec'd under a tracer, in a user namespace or with
	// no_new_privs. Nothing is released or saved.
	CodeBrokerUntrusted Code = "BROKER_UNTRUSTED"
	// CodeNotSealed: the passphrase provider found a credential saved in plain text.
	CodeNotSealed Code = "CREDENTIAL_NOT_SEALED"
	// CodeSealed: another provider found a credential sealed with a passphrase.
	CodeSealed        Code = "CREDENTIAL_SEALED"
	CodeChallengeUnk  Code = "CHALLENGE_UNKNOWN"
	CodeChallengeExp  Code = "CHALLENGE_EXPIRED"
	CodeChallengeUsed Code = "CHALLENGE_USED"
	CodeChallengeMism Code = "CHALLENGE_MISMATCH"
	CodeBrokerUnavail Code = "BROKER_UNAVAILABLE" // CLI: brokerd not reachable and could not be started
	CodeBrokerRunning Code = "BROKER_RUNNING"     // brokerd: another brokerd holds the runtime dir
	CodeNoTTY         Code = "NO_TTY"             // CLI: a secret or confirmation needs the controlling terminal
	CodeUsage         Code = "USAGE"              // CLI: bad flags or arguments
	CodeCancelled     Code = "CANCELLED"          // the person answered no at the CLI, or the caller withdrew its request
	CodeConfigInvalid Code = "CONFIG_INVALID"     // config file unsafe or malformed
	CodeRuntimeDir    Code = "RUNTIME_DIR_UNSAFE" // runtime dir has wrong owner or mode

	// Browser host (control.sock).
	CodeHostUnavail     Code = "HOST_UNAVAILABLE"     // the host is not running
	CodeProfileLocked   Code = "PROFILE_LOCKED"       // another host owns the durable profile
	CodeBrowserCrashed  Code = "BROWSER_CRASHED"      // Chromium died; it has been restarted
	CodeBrowserFailed   Code = "BROWSER_FAILED"       // Chromium could not be started
	CodePageStopped     Code = "PAGE_STOPPED"         // the session's page flooded the browser or would not answer; it was stopped
	CodeBrowserTampered Code = "BROWSER_TAMPERED"     // a browser process runs code that is not a root-owned system file
	CodeBrowserExposed  Code = "BROWSER_EXPOSED"      // a browser process's memory is readable by the user's processes
	CodeUnsafeNav       Code = "UNSAFE_NAVIGATION"    // only http and https URLs may be visited
	CodeNavFailed       Code = "NAVIGATION_FAILED"    // the page did not load
	CodeSessionUnknown  Code = "SESSION_UNKNOWN"      // no session of that name
	CodeSessionExists   Code = "SESSION_EXISTS"       // a session of that name exists
	CodeSessionLimit    Code = "SESSION_LIMIT"        // too many sessions
	CodeRefUnknown      Code = "REF_UNKNOWN"          // no such ref in the session's last snapshot
	CodeRefStale        Code = "REF_STALE"            // the element is gone from the page
	CodeDirectFillOff   Code = "DIRECT_FILL_DISABLED" // typing into a password field is off
	CodeTimeout         Code = "TIMEOUT"              // wait ended without its condition
	CodeNotInteractable Code = "NOT_INTERACTABLE"     // the element has no visible box to click
	CodeNotASelect      Code = "NOT_A_SELECT"         // select was given a ref that is not a native <select>
	CodeOptionUnknown   Code = "OPTION_UNKNOWN"       // no option of the select has the value or label given
	CodeNoHistory       Code = "NO_HISTORY"           // back: the session has no earlier page
	CodeProfileClear    Code = "PROFILE_CLEAR_FAILED" // profile clear failed; the profile is whole (old or fresh)
	CodeDialogOpen      Code = "DIALOG_OPEN"          // a dialog holds the page: answer it first
	CodeNoDialog        Code = "NO_DIALOG"            // dialog accept/dismiss with no dialog open
	CodePageUnknown     Code = "PAGE_UNKNOWN"         // page select: the session has no such page (or it closed)
	CodeNetUntracked    Code = "NETWORK_UNTRACKED"    // wait --network-idle: the page has more requests in flight than the host follows
	CodeNoDisplay       Code = "NO_DISPLAY"           // a window was asked for and there is no display of the person's to show it on
	CodeNoWindow        Code = "NO_WINDOW"            // a hand-over needs the session's window, and none is open
	CodeX11Window       Code = "X11_WINDOW"           // a password or code is never typed into a browser whose windows are on X11 (any X client can script them)
	CodeHandedOver      Code = "HANDED_OVER"          // the person acts in the session's window: the agent's verbs wait for the hand-over's end

	// Alias login.
	CodeNoLoginForm      Code = "NO_LOGIN_FORM"            // no usable login form on the page
	CodeDocumentChanged  Code = "DOCUMENT_CHANGED"         // the page changed between challenge and typing
	CodeFormCrossOrigin  Code = "FORM_ACTION_CROSS_ORIGIN" // the form would send the password elsewhere
	CodeFormMethodGet    Code = "FORM_METHOD_GET"          // the form (or a submitter) would not POST it: it would land in a URL
	CodeSecretOnPage     Code = "SECRET_ON_PAGE"           // a field the host typed a password into still holds a value, or the page shows a released secret
	CodeCodePathUnknown  Code = "CODE_PATH_UNKNOWN"        // the site asks for the one-time code on a page that is not a sign-in path of the credential: typed only with --code-only, the person asked
	CodeSigninNotSent    Code = "SIGNIN_NOT_SENT"          // auth login submitted, and the page kept the sign-in: same document, form still shown, nothing that could carry the password left
	CodeLoginPathChanged Code = "LOGIN_PATH_CHANGED"       // the sign-in form is at another path of the origin than the credential's known sign-in pages
	CodeSecretEgress     Code = "SECRET_EGRESS"            // a page tried to send a typed secret elsewhere than its credential's origin, or in a URL: stopped, the page discarded

	// Interactive enrollment.
	CodeEnrollUnknown Code = "ENROLLMENT_UNKNOWN" // no password waits for a save decision under that token

	// The audit log.
	CodeAuditTampered   Code = "AUDIT_TAMPERED"    // the audit log is not as brokerd wrote it, at the record named (and how: dropped, edited, truncated, …)
	CodeAuditTorn       Code = "AUDIT_TORN"        // the audit log ends in a record cut short as it was written (not an edit): the records before it verify
	CodeAuditUnavail    Code = "AUDIT_UNAVAILABLE" // the audit log cannot be written: nothing was released
	CodeAuditUnverified Code = "AUDIT_UNVERIFIED"  // no brokerd with its group (and so its key) checked the audit log: nothing is said about it

	// Files.
	CodeNoSpace Code = "NO_SPACE" // a file could not be written: its filesystem (or the user's quota) is full

	// Uploads and downloads (a person's files; pages' downloads).
	CodeFileUnknown    Code = "FILE_UNKNOWN"              // no file of that name was added by the person (or it left the store)
	CodeFileChanged    Code = "FILE_CHANGED"              // the stored file is not the one the person approved (other bytes, a link, not a regular file)
	CodeFilesFull      Code = "FILES_FULL"                // the store holds as many files, or bytes, as it may
	CodeNotAFileInput  Code = "NOT_A_FILE_INPUT"          // upload was given a ref that is not an <input type=file>
	CodeDownloadDenied Code = "DOWNLOAD_DENIED"           // the page started a download, which headless never lets happen
	CodeCursorStale    Code = "PAGINATION_CURSOR_STALE"   // the list changed since the cursor was given (its page navigated, entries it had not reached were dropped)
	CodeCursorInvalid  Code = "PAGINATION_CURSOR_INVALID" // not a live cursor of this session, list and filters (expired after 5 minutes, or never given)

	// Journeys (journey.run). Plan errors refuse the run; the others end it and are its report's
	// failure (the page did not do what the plan expects) or could_not_look reason.
	CodePlanInvalid     Code = "PLAN_INVALID"     // the journey plan is malformed, has an unknown field or is out of bounds
	CodeUnsafeSelector  Code = "UNSAFE_SELECTOR"  // a plan's CSS selector looks like script, or tests a field's value
	CodeTargetNotFound  Code = "TARGET_NOT_FOUND" // no visible element matches an action's target
	CodeTargetAmbiguous Code = "TARGET_AMBIGUOUS" // several visible elements match an action's target
	CodeAssertionFailed Code = "ASSERTION_FAILED" // the page did not show what an assertion expects in time
	CodeBudgetExceeded  Code = "BUDGET_EXCEEDED"  // the journey's time budget ran out before its last action
	CodeLoginFailed     Code = "LOGIN_FAILED"     // the site refused the saved credential of a journey's login
	CodeSecretField     Code = "SECRET_FIELD"     // a journey step would read a password or secret field's value
	// CodePasskeyOverused: the page had a passkey answer more than the one ceremony the person
	// approved before the host could take it back (the host was held up: stopped, say).
	CodePasskeyOverused Code = "PASSKEY_OVERUSED"
)

var hints = map[Code]string{
	CodeBadRequest:      "send one JSON object per line with only the documented fields",
	CodeFrameTooLarge:   "frames are limited to 1 MiB",
	CodeFrameTimeout:    "send each request as one whole line at once; reconnect and send it again",
	CodeUnknownMethod:   "check the method name against the protocol documentation",
	CodePeerRefused:     "only the user who runs brokerd may connect",
	CodePeerNotHost:     "passwords go only to the browser host brokerd started: sign in with 'headless auth login' after 'headless start'; a host started any other way receives none",
	CodeBusy:            "too many connections or requests at once; retry shortly",
	CodeInternal:        "this is a bug; the logs in the runtime dir (brokerd.log, host.log) have details",
	CodeInvalidOrigin:   "use https://host[:port]; http only for localhost and loopback addresses",
	CodeInvalidArgument: "the message names the value that was refused; 'headless help' lists each command's arguments",
	CodeAliasExists:     "choose another alias, or remove the existing one with 'headless credentials remove'",
	CodeAliasUnknown:    "list saved aliases with 'headless credentials list --origin ORIGIN'",
	CodeBrokerUntrusted: "install headless with its set-up step (the .deb, or 'sudo scripts/install.sh' in a source checkout), " +
		"then start brokerd as it is installed: not under a debugger or tracer, not inside a user namespace, not with NoNewPrivileges; 'headless doctor' says which",
	CodeNotSealed: "it was saved in plain text, before the passphrase provider was chosen: remove it and add it again, " +
		"so that it is sealed (headless credentials remove --origin ORIGIN --alias ALIAS; headless credentials add …)",
	CodeSealed: "it is sealed with your headless passphrase: choose \"provider\": \"passphrase\" (with a pinentry \"program\") " +
		"in the config and restart brokerd to use it",
	CodeOriginMismatch:   "the alias is saved for a different origin than the page; a credential is only used on its exact origin",
	CodeOriginAmbiguous:  "different processes listen on the addresses this loopback origin reaches (for localhost: ::1 and 127.0.0.1): stop the other listener, or save the credential for http://127.0.0.1:PORT",
	CodeOriginUnverified: "the kernel's socket tables could not be read, so the process serving this loopback origin is unknown; nothing was asked or released",
	CodeVaultLocked:      "unlock your keyring (for example by logging in to the desktop session) and retry",
	CodeVaultUnavail:     "start a Secret Service (gnome-keyring or KWallet) on your D-Bus session bus",
	CodeVaultFull:        "remove unused credentials from this session's store",
	CodePresenceDenied:   "the release was not approved at the presence prompt",
	CodePresenceTimeout:  "nobody answered the presence prompt in time; retry and answer it",
	CodePresenceUnavail:  "configure presence.provider in $XDG_CONFIG_HOME/headless/config.json (see README); the secret-service provider needs the keyring's prompter (gcr-prompter) and a display",
	CodePresenceAutoUnlock: "the keyring stores the password of the 'headless' keyring for automatic unlock, so nobody would be asked: " +
		"run 'headless credentials repair' (the keyring asks you to change that keyring's password, then to unlock it once: leave 'Automatically unlock' unticked)",
	CodeVaultNoKeyring: "run 'headless credentials init' (the keyring asks you for the new keyring's password)",
	CodeChallengeUnk:   "request a new challenge: visit the login page again",
	CodeChallengeExp:   "the challenge expired; visit the login page again for a new one",
	CodeChallengeUsed:  "challenges are single use; visit the login page again for a new one",
	CodeChallengeMism:  "the challenge belongs to another session or document; visit the login page again",
	CodeBrokerUnavail:  "start it with 'brokerd' and read its log in the runtime dir",
	CodeBrokerRunning:  "one brokerd per user; stop the running one first (kill -TERM PID)",
	CodeNoTTY:          "run this command from an interactive terminal; secrets are read only from the terminal",
	CodeUsage:          "run 'headless help' for usage",
	CodeCancelled:      "nothing was changed",
	CodeConfigInvalid:  "fix $XDG_CONFIG_HOME/headless/config.json: owned by you, not group/world-writable, documented keys only",
	CodeRuntimeDir:     "the runtime dir must be owned by you with mode 0700; remove it and retry",
	CodeHostUnavail:    "start it with 'headless start'",
	CodeProfileLocked:  "another host uses the durable profile; use 'headless session create NAME --isolated' with that host, or stop it",
	CodeBrowserCrashed: "the browser was restarted; sessions other than default were lost; retry the command",
	CodeBrowserTampered: "a program of yours changed the browser's profile, made Chromium load code of its own, or ran with the browser's group (the message says which); " +
		"the browser was killed and nothing was released: remove what did it (the profile's files, the user's NSS database, the program), then retry",
	CodeBrowserExposed: "any program of yours could read a typed password out of Chromium's memory: install headless with its set-up step (the .deb, or 'sudo scripts/install.sh'), " +
		"so that the host runs Chromium with the headless group, and Debian's chromium-sandbox (apt install chromium-sandbox); then 'headless stop' and 'headless start'; 'headless doctor' says which is missing",
	CodePageStopped:      "the session now shows a fresh blank page (its cookies are kept): visit the page again; a page that floods the browser (navigations, frames, dialogs) or whose script never yields is stopped again",
	CodeBrowserFailed:    "check that Debian chromium is installed (/usr/lib/chromium/chromium) and read host.log in the runtime dir",
	CodeUnsafeNav:        "only http:// and https:// URLs can be visited",
	CodeNavFailed:        "check the URL and that the site is reachable from this machine",
	CodeSessionUnknown:   "list sessions with 'headless session list' (with 'headless credentials list --session NAME', an isolated one)",
	CodeSessionExists:    "choose another name, or close the session first",
	CodeSessionLimit:     "close unused sessions with 'headless session close NAME'",
	CodeRefUnknown:       "take a fresh 'headless snapshot' and use a ref from it",
	CodeRefStale:         "the page changed; take a fresh 'headless snapshot'",
	CodeDirectFillOff:    "sign in with 'headless auth login --alias NAME'; direct password fill is off unless allow_direct_password_fill is set in the config",
	CodeTimeout:          "what it waited for did not happen in time (the message says what): retry, or check the page or the condition",
	CodeNotInteractable:  "the element is not visible or cannot be used (disabled, or it cannot take the focus); 'headless scroll REF' brings it into view, or take a fresh snapshot",
	CodeNotASelect:       "select works on native <select> elements only; for a custom dropdown, click it, take a fresh snapshot and click the option",
	CodeOptionUnknown:    "give an option's label exactly as the snapshot lists it under \"options\", or its value (case and spaces matter)",
	CodeNoHistory:        "the session has no earlier page to go back to; visit one with 'headless visit URL'",
	CodeDialogOpen:       "answer it with 'headless dialog accept' (--text T for a prompt) or 'headless dialog dismiss'; 'headless snapshot' shows it; unanswered, the host dismisses it after 20 s",
	CodeNoDialog:         "the dialog was answered, dismissed by the host after 20 s, or left with its page: take a fresh 'headless snapshot'",
	CodePageUnknown:      "'headless session pages' lists the session's pages and their numbers",
	CodeNetUntracked:     "the page started more requests at once than the host follows (1024), so whether its network is idle cannot be told until it loads another document: wait for a text or an element instead ('headless wait --text T', 'headless wait --ref REF')",
	CodeProfileClear:     "the profile is whole (the message says whether it is the old or a fresh one); read host.log in the runtime dir and retry 'headless profile clear'",
	CodeNoDisplay:        "name the person's display in the config (\"presence\": {\"wayland_display\": \"wayland-0\"}, or \"display\" and \"xauthority\" under X11), or start brokerd yourself in your desktop session; then 'headless stop' and 'headless start --window'",
	CodeX11Window:        "sign in with a browser without windows ('headless stop', then 'headless start'), or show the windows on Wayland (\"presence\": {\"wayland_display\": …}); under X11 any program of yours can type into the browser's windows, its address bar included",
	CodeNoWindow:         "a hand-over needs the session's window on the person's screen: 'headless stop', then 'headless start --window' (a closed window comes back at the session's next command)",
	CodeHandedOver:       "the person is acting in this session's window ('headless handover'); its verbs are refused until the hand-over ends: work in another session meanwhile",
	CodeNoLoginForm:      "visit the site's login page first; only a form in the page itself is used, never one in a frame",
	CodeDocumentChanged:  "the page navigated or reloaded; visit the login page again and retry",
	CodeFormCrossOrigin:  "the form, or one of its submit buttons, posts to another origin than the saved credential's; nothing was typed",
	CodeFormMethodGet:    "the form, or one of its submit buttons, submits with GET (the password would land in a URL, the history and logs); only POST sign-in forms are used; nothing was typed",
	CodeSecretOnPage:     "navigate the session elsewhere ('headless visit URL') first; screenshots, and every verb that could edit the page or run its handlers (click, fill, press, select, hover, scroll, back), are refused while a typed password is on the page, and every output of a page that shows a secret released into the browser is refused (the page is discarded)",
	CodeSecretEgress:     "the page tried to send the password (or code) somewhere it may not go: another origin, a URL, or a channel that cannot be checked; nothing left the browser and the page was discarded. Tell the person (the audit log records it); if the site really signs in through another origin, the person can name it at enrolment (headless credentials add --also-origin ORIGIN)",
	CodeCodePathUnknown:  "the password was sent; if this page is the site's own code page, type the code with 'headless auth login --alias ALIAS --code-only' (the person is asked, the prompt naming this page); to have it typed without asking, the person enrols the credential with its code page as a sign-in path: headless credentials add --login-path PATH",
	CodeSigninNotSent:    "the page may need something first (a captcha, a checkbox, a field the sign-in did not fill: 'headless snapshot' shows it), or its submit is another control: name the fields and the submit with 'headless auth login --alias ALIAS --password-field REF [--account-field REF] --submit REF'; the typed password was cleared from the page (or, where the page would not let it, the page discarded)",
	CodeLoginPathChanged: "sign in on the page where the credential was used before (the message names it); if the site moved its sign-in page, retry 'headless auth login' with --new-login-path (the person's prompt then says it is not where they signed in before; allowed once, never remembered), or, to make it the sign-in page, have the person add it: headless credentials add --login-path PATH",
	CodeAuditTampered: "the audit log is not as brokerd wrote it, at the record named; the word after it says how (dropped, edited, reordered, inserted, replayed, rechained, truncated, replaced, deleted, unanchored, malformed): keep a copy of the files. " +
		"brokerd never continues such a log: it moves the files aside (audit.jsonl*.tampered-*) and starts the chain again with a record of what it found, which `headless audit verify` reports while it is kept (SECURITY.md, the audit log)",
	CodeAuditUnverified: "`headless audit verify` runs the installed brokerd (beside headless) to check the log with its key, and believes it only when the kernel says it has its group (headless-broker): " +
		"install headless with its set-up step (the .deb, or `sudo scripts/install.sh`), and run headless as installed, not under a debugger, a sandbox with no_new_privs, or in a user namespace",
	CodeAuditTorn: "the newest record was cut short as it was written (brokerd killed, or a power loss, during an append; or a write still under way), and the records before it verify: " +
		"when brokerd next starts it keeps the cut bytes beside the log (audit.jsonl.torn-*) and records the cut in the chain, and the verify lists it from then on",
	CodeAuditUnavail:    "free space where the audit log lives ($XDG_DATA_HOME/headless/audit.jsonl) and retry; nothing is released while its record cannot be written (brokerd.log in the runtime dir names the failure)",
	CodeNoSpace:         "free space on the filesystem of the file named (the data dir $XDG_DATA_HOME/headless holds the profile, the credentials index and the audit log) and retry; nothing half-written was kept",
	CodeFileUnknown:     "only files the person added can be uploaded: 'headless files list' names them; ask the person to add one (headless files add PATH, approved at their prompt)",
	CodeFileChanged:     "the file in the store is not the one the person approved (something replaced or changed it): ask the person to add it again (headless files add PATH)",
	CodeFilesFull:       "remove files no longer needed ('headless files remove NAME'), then add again",
	CodeNotAFileInput:   "upload works on a file input (<input type=file>) only: take a fresh 'headless snapshot' and use the ref of one",
	CodeDownloadDenied:  "headless never saves what a page downloads; nothing was written. What the page did besides (a click) was done",
	CodeCursorStale:     "the list changed since that page of it (the page loaded another document, or dropped entries the cursor had not reached): list it again from its first page, without a cursor",
	CodeCursorInvalid:   "use the \"next\" of the last answer, for the same session, list and filters, within 5 minutes; or list again from the first page, without a cursor",
	CodePlanInvalid:     "the message names the field; 'headless journey run --help' describes the plan (unknown fields, more than 20 actions and budgets over 300 s are refused)",
	CodeUnsafeSelector:  "selectors are plain CSS resolved with a DOM query, never run: no script-like text (javascript:, =>, ;, braces, backticks, eval(, document.), no escapes or comments, no test of a field's value; prefer role and name, or text",
	CodeTargetNotFound:  "no visible element matched within the action's timeout; compare the target with the evidence of the previous state (or a snapshot)",
	CodeTargetAmbiguous: "make the target more specific (role and name, exact: true) or pick one match with nth (0 is the first in page order)",
	CodeAssertionFailed: "the evidence of this state shows what the page showed instead; the states after it were not reviewed",
	CodeBudgetExceeded:  "raise budget_seconds (at most 300) or split the journey; the states after this step were not reviewed",
	CodeLoginFailed:     "the site answered the saved password with its login form or an error: check the credential ('headless credentials verify') or the site's sign-in",
	CodeSecretField:     "a journey never reads or types a password or secret field; sign in with a login action, and assert on what the page shows after it",
	CodePasskeyOverused: "the page got more passkey answers than the person approved (each one a sign-in of that site): the audit log records it; tell the person, and have the site's sessions of that account revoked",
	CodeEnrollUnknown:   "the save question was already answered or waited more than 2 minutes (the password was zeroed); sign in again with 'headless auth login --interactive'",
}

// Hint is the default one-line hint for code.
func Hint(code Code) string { return hints[code] }

// Codes lists every code, sorted.
func Codes() []Code {
	out := make([]Code, 0, len(hints))
	for c := range hints {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// Coder is an error that knows its code. Every error that crosses a socket or leaves the CLI is
// asked for its code through this interface ([From], [CodeOf]): the first Coder in an error's
// chain decides, so a wrapper with a code of its own overrides the codes of its causes.
// Sentinels ([Sentinel]) and [*Error] are Coders; so may be any error type with data of its
// own.
type Coder interface {
	error
	WireCode() Code
}

// Hinter is a Coder whose hint is more specific than its code's default.
type Hinter interface {
	WireHint() string
}

// sentinel is an errors.Is-comparable error that carries its code.
type sentinel struct {
	code      Code
	msg, hint string
}

func (s *sentinel) Error() string    { return s.msg }
func (s *sentinel) WireCode() Code   { return s.code }
func (s *sentinel) WireHint() string { return s.hint }

// Sentinel returns a new sentinel error that carries code: callers compare it with errors.Is
// and wrap it with %w, and every boundary answers code for it, with code's default hint.
func Sentinel(code Code, msg string) error { return &sentinel{code: code, msg: msg} }

// SentinelHint is [Sentinel] with a hint of its own, for a sentinel whose code's default hint
// does not fit.
func SentinelHint(code Code, msg, hint string) error {
	return &sentinel{code: code, msg: msg, hint: hint}
}

// Error is an error in its wire form: what crosses a socket or leaves the CLI. Its cause, when
// it was made from another error, stays reachable through Unwrap (errors.Is and errors.As) but
// never crosses the socket.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`

	cause error
}

// Error is the message; the code is [Error.Code] (printed beside it by the CLI).
func (e *Error) Error() string    { return e.Message }
func (e *Error) WireCode() Code   { return e.Code }
func (e *Error) WireHint() string { return e.Hint }
func (e *Error) Unwrap() error    { return e.cause }

// WithHint replaces e's hint and returns e.
func (e *Error) WithHint(hint string) *Error {
	e.Hint = hint
	return e
}

// Errorf makes an Error with code's default hint. Its message is fmt.Errorf's, and the errors
// that format wraps with %w are its causes.
func Errorf(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	e := &Error{Code: code, Message: err.Error(), Hint: Hint(code)}
	if errors.Unwrap(err) != nil || len(unwrapAll(err)) > 0 {
		e.cause = err
	}
	return e
}

func unwrapAll(err error) []error {
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		return u.Unwrap()
	}
	return nil
}

// From is the wire form of err: err itself when it is an [*Error]; else the code (and the hint)
// of the first [Coder] in its chain with err's whole message; a full disk (ENOSPC, EDQUOT) no
// code claimed is NO_SPACE; a deadline or cancellation no code claimed is TIMEOUT; anything else
// is INTERNAL with err's message (a boundary may hide it: see [Uncoded]). From(nil) is nil.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		return e
	}
	var c Coder
	if errors.As(err, &c) {
		code := c.WireCode()
		hint := Hint(code)
		if h, ok := c.(Hinter); ok && h.WireHint() != "" {
			hint = h.WireHint()
		}
		return &Error{Code: code, Message: err.Error(), Hint: hint, cause: err}
	}
	if noSpace(err) {
		return &Error{Code: CodeNoSpace, Message: err.Error(), Hint: Hint(CodeNoSpace), cause: err}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &Error{Code: CodeTimeout, Message: err.Error(), cause: err,
			Hint: "the operation did not finish in time, or its caller went away; retry it (the logs in the runtime dir have details)"}
	}
	return &Error{Code: CodeInternal, Message: err.Error(), Hint: Hint(CodeInternal), cause: err}
}

// Uncoded reports whether no code claims err: From makes it INTERNAL (a bug), and a boundary
// logs it in full and may tell its peer less.
func Uncoded(err error) bool {
	if err == nil {
		return false
	}
	var c Coder
	return !errors.As(err, &c) && !noSpace(err) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
}

// noSpace reports whether err is a write that found its filesystem, or the user's quota, full.
func noSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) }

// CodeOf returns the code of the first Coder in err's chain, or "".
func CodeOf(err error) Code {
	var c Coder
	if errors.As(err, &c) {
		return c.WireCode()
	}
	return ""
}
