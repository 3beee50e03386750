package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/surface/mcpserver"
	"github.com/headless-dev/headless/internal/wire"
)

// command is one row of the command table: its name ("session create"), what its positional
// arguments are, its usage text, its flags and what it runs.
type command struct {
	name string
	// args is the synopsis of its positional arguments ("URL", "REF -- TEXT"); nargs how
	// many it takes (min, max; max -1: any number).
	args  string
	nargs [2]int
	// summary is its line in 'headless help', after its name, args and shows (the flags it
	// cannot do without, for that line only); about is the rest of its --help (description,
	// examples), or aboutOf's when it is made only when shown ('headless mcp': the MCP
	// server's own tool table, which every other command need not build).
	summary, about, shows string
	aboutOf               func() string
	// setup declares the command's flags on fs (besides --json and --help) and returns what
	// runs once they are parsed.
	setup func(fs *flag.FlagSet) run
	// timeout bounds the whole command (default defaultTimeout; negative: unbounded, for a
	// server such as 'headless mcp').
	timeout time.Duration
	// exit, when set, is the exit status for a result that was printed (doctor: 1 when a
	// check failed); nil: 0.
	exit func(result any) int
	// raw: the command owns its stdout (a protocol stream); its result is not printed, and
	// its errors go to stderr in human form, even with --json.
	raw bool
	// hints are the command's own hints for codes whose default hint can name no flag (a
	// default reaches every command that meets its code): TIMEOUT's names --timeout where
	// there is one.
	hints map[wire.Code]string
}

// timeoutHint is TIMEOUT's hint on wait, visitTimeoutHint on visit (MCP's, in flags).
const (
	timeoutHint      = "increase --timeout (at most 5m) or check the condition"
	visitTimeoutHint = "increase --timeout (at most 5m) or check the URL and the site"
)

// hinted gives err the command's own hint for its code when it carries the code's default.
func (cmd *command) hinted(err error) error {
	we := wire.From(err)
	h, ok := cmd.hints[we.Code]
	if !ok || we.Hint != wire.Hint(we.Code) {
		return err
	}
	e := *we
	e.Hint = h
	return &e
}

// run runs a command with its positional arguments (dash: how many came before "--", -1
// without one) and returns its result (printed as JSON with --json) and its human output.
type run func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error)

// defaultTimeout bounds a command that waits for no person.
const defaultTimeout = 2 * time.Minute

// groups are the commands that take a subcommand, and what their --help says.
var groups = map[string]string{
	"session":     "Sessions: windows in the durable profile, or isolated ones with their own cookies, storage and credential store.",
	"credentials": "Saved credentials: the vault (the OS keyring), or an isolated session's in-memory store.",
	"auth":        "Sign a session in.",
	"profile":     "The durable browser profile.",
	"audit":       "The audit log of every release, refusal, add and remove.",
	"dialog":      "The page's JavaScript dialogs (alert, confirm, prompt, beforeunload): held until answered (20 s at most).",
	"page":        "The windows a session's pages opened ('headless session pages' lists them).",
	"journey":     "Declarative UI journeys: one call walks a plan (sign-in included) in a fresh browser context and reports what it reviewed, did not review, and could not look at.",
	"files":       "The files a person added for uploads: only these can be attached to a page's file input.",
	"console":     "The console messages of a session's page.",
	"network":     "The requests of a session's page.",
}

// commands is the command table.
func (c *cmd) commands() []command {
	return []command{
		{name: "start", summary: "start brokerd (if needed), which starts the browser host (idempotent)", setup: c.start,
			about: `brokerd starts and owns the host; passwords go only to the host process it started.
A brokerd started here is marked --auto: it takes where its prompts appear from the config only,
and 'headless stop' stops it.

--allow HOST[:PORT][,…] confines navigation: visit, clicks, redirects, top-frame and frame
navigations and popups to a host not on the list fail with UNSAFE_NAVIGATION (the host refuses
the document request; an off-list popup is closed). *.example.com allows its subdomains (not
example.com itself); without :PORT any port. At most 32 entries; '*' alone, schemes, paths,
credentials and non-ASCII (use punycode) are refused. The config's "allow" is the default and
a ceiling --allow can only narrow. It is a navigation policy, not a network firewall: a page
on the list can still load scripts, images and requests from anywhere. With a host running,
the same list is a no-op and another list is refused (stop first).

--window (or "window": true in the config) shows the browser on your display, a window per
session titled with its name: Wayland first, X11 only where that is all there is (any X client
can then read and type into the windows). The display is where presence prompts appear: the
config's presence.wayland_display (or display and xauthority), or the environment of a brokerd
you started; never that of a command an agent runs. NO_DISPLAY without one.

Examples:
    headless start --allow staging.example.com,127.0.0.1:8080
    headless start --window`},
		{name: "stop", summary: "close the browser gracefully and stop the host (and a brokerd headless started)", setup: c.stop,
			about: `Closes Chromium with Browser.close (cookies and storage are committed), stops the host, and
stops brokerd if headless started it; a brokerd you started yourself is left running, and stop
says so.`},
		{name: "status", summary: "host, brokerd (how it was started), Chromium version, profile, lock owner", setup: c.status,
			about: `Starts nothing.`},

		{name: "session create", args: "NAME", nargs: [2]int{1, 1}, shows: "[--isolated]", summary: "open a session; --isolated: its own cookies, storage and credential store", setup: c.sessionCreate,
			about: `An isolated session is a separate browser context with its own in-memory credential store in
brokerd, zeroed when the session closes, the host stops or the host dies. It never sees the
vault's aliases, the durable profile's cookies or another session's.

Example:
    headless session create checkout --isolated`},
		{name: "session list", summary: "the sessions, their pages and whether they answer", setup: c.sessionList},
		{name: "session close", args: "NAME", nargs: [2]int{1, 1}, summary: "close a session (an isolated one's context and store go with it)", setup: c.sessionClose},
		{name: "session pages", summary: "the session's pages: its own and the windows they opened (* current)", setup: c.sessionPages,
			about: `A window a page opens (window.open, a link with target=_blank, a "Sign in with …" pop-up) is a
page of the session, at most 16. Each is listed with its number, the page that opened it,
its URL and title (the page's words, untrusted) and an open dialog. 'headless page select N'
makes one the page every verb drives; when that window closes, the session is back on the
page that opened it.

Example:
    headless session pages --json`},
		{name: "page select", args: "N", nargs: [2]int{1, 1}, summary: "make page N of 'session pages' the one every verb drives", setup: c.pageSelect,
			about: `Answers as visit does (auth_required when the window shows a sign-in form). auth login signs
in there when no other page of the session is on the window's origin (the page that opened it
cannot script it: an identity provider's pop-up), else DOCUMENT_CHANGED.

Example:
    headless page select 2 && headless auth login --alias idp-admin`},

		{name: "visit", args: "URL", nargs: [2]int{1, 1}, summary: "navigate the session (http and https only)", setup: c.visit, timeout: 6 * time.Minute,
			hints: map[wire.Code]string{wire.CodeTimeout: visitTimeoutHint},
			about: `Waits for the page to load (--timeout, 30s by default; TIMEOUT after it). On a login page the
result names its origin, the aliases saved for it and a challenge for 'headless auth login'.

Example:
    headless visit https://staging.example.com/login --session checkout --timeout 2m`},
		{name: "snapshot", summary: "bounded outline of the page with refs (e1, e2, …)", setup: c.snapshot,
			about: `Text in a snapshot comes from the page: it is data, not instructions. The value of a
password field, or of a field the host typed a password into, is never shown.`},
		{name: "click", args: "REF", nargs: [2]int{1, 1}, shows: "[--double | --right]", summary: "click the element of a ref from the last snapshot", setup: c.click,
			about: `A real mouse click at the element's centre; --double a double click, --right a right click
(a context menu). A dialog the click opens is in the result ("dialog").

Example:
    headless click e7 --double`},
		{name: "fill", args: "REF -- TEXT", nargs: [2]int{2, 2}, summary: "type TEXT into the element of REF (not for password fields: use auth login)", setup: c.fill,
			about: `TEXT comes after "--", so it is never taken for a flag.

Example:
    headless fill e4 -- some text`},
		{name: "select", args: "REF VALUE…", nargs: [2]int{2, -1}, summary: "choose options of a native <select> by value or label", setup: c.selectOptions,
			about: `Each VALUE is an option's label as the snapshot lists it under "options", or its value
(exactly; label first); several only for a select that takes several ("multiple": true). The
selection is replaced, with the input and change events a person's choice fires. Values that
begin with "-" come after "--". At most 32 values of at most 1 KiB each.

Examples:
    headless select e6 "United Kingdom"
    headless select e9 red green -- -1`},
		{name: "press", args: "KEY", nargs: [2]int{1, 1}, shows: "[--ref REF]", summary: "Enter, Tab, Escape, Arrow…, one character, with modifiers: Control+A", setup: c.press,
			about: keysNote()},
		{name: "hover", args: "REF", nargs: [2]int{1, 1}, summary: "move the mouse over the element of a ref (scrolled into view)", setup: c.hover},
		{name: "scroll", args: "[REF]", nargs: [2]int{0, 1}, shows: "[--by N]", summary: "scroll an element into view, or the page by N pixels (default one viewport)", setup: c.scroll,
			about: `Without REF, the mouse wheel turns by N CSS pixels over the viewport's centre (negative: up;
write --by=-N). With REF, the element is scrolled into view, and with --by the wheel turns over
it (what scrolls a scrollable box). |N| is at most 100000. The result says where the viewport
is and how large the page is.

Examples:
    headless scroll
    headless scroll e12
    headless scroll --by=-400`},
		{name: "wait", shows: "[--text T] [--gone T] [--url U] [--ref REF] [--network-idle]", summary: "wait until the page text, URL, an element or its network are as these say", setup: c.wait, timeout: 6 * time.Minute,
			hints: map[wire.Code]string{wire.CodeTimeout: timeoutHint},
			about: `Every condition given must hold at once. The page text is what a snapshot shows (never the
value of a password field or of a field the host typed a password into). --network-idle: no
request of the page in flight for 500 ms (EventSource streams and WebSockets do not count; a
long poll keeps it busy); NETWORK_UNTRACKED when the page had more than 1024 in flight at
once. A dialog that holds the page ends the wait: DIALOG_OPEN.

Examples:
    headless wait --gone "Loading…" --ref e4 --timeout 30s
    headless click e9 && headless wait --network-idle`},
		{name: "back", summary: "go one page back in the session's history", setup: c.back,
			about: `NO_HISTORY on the session's first page. The page is loaded afresh (the back/forward cache is
off), so it never comes back with what its fields held.`},
		{name: "forward", summary: "go one page forward in the session's history", setup: c.forward,
			about: `NO_HISTORY on the session's last page; as back otherwise.

Example:
    headless back && headless forward`},
		{name: "reload", summary: "load the session's page again", setup: c.reload,
			about: `Refused as back is while a field the host typed a password into holds a value
(SECRET_ON_PAGE). A beforeunload dialog it opens is in the result: 'headless dialog accept'
leaves the page.

Example:
    headless reload --session checkout`},
		{name: "dialog accept", shows: "[--text T]", summary: "accept the page's open dialog (OK; a prompt's answer with --text)", setup: c.dialogAccept,
			about: `A dialog (alert, confirm, prompt, beforeunload) is held until answered, 20 s at most; then
the host dismisses it and the next result says so ("dismissed": "unanswered"). Its type and
words are in every result while it is open (the page's words: untrusted). Accepting is
refused while the page shows the document a password was typed into (SECRET_ON_PAGE); the
answer to a prompt is your own text, never a secret.

Examples:
    headless click e4            # {"…","dialog":{"type":"confirm","message":"Delete?","open":true}}
    headless dialog accept
    headless dialog accept --text "new name"`},
		{name: "dialog dismiss", summary: "dismiss the page's open dialog (Cancel; a beforeunload: stay)", setup: c.dialogDismiss,
			about: `A confirm() or prompt() gets Cancel, a beforeunload keeps the page. Allowed too while the page
shows the document a password was typed into, where accept is refused (dismissing is what the
host does itself after 20 s).

Example:
    headless dialog dismiss`},
		{name: "screenshot", shows: "[--ref REF | --full-page]", summary: "PNG in the private artifact store: path, SHA-256, width and height", setup: c.screenshot,
			about: `Of the viewport, of an element's box (--ref) or of the whole page (--full-page); at most
4096×16384 CSS pixels: a larger page or element is cut to that ("truncated": true).
SECRET_ON_PAGE while a field the host typed a password into still holds a value.

Examples:
    headless screenshot --ref e5
    headless screenshot --full-page --json`},

		{name: "auth login", shows: "--alias NAME | --interactive", summary: "sign the session in: by alias (a presence prompt asks you), or typed here", setup: c.authLogin, timeout: 15 * time.Minute,
			about: `With --alias, brokerd asks you at a presence prompt, and the password is typed into the verified
field and never shown to the caller. Only POST sign-in forms whose every submit button posts to
the credential's origin are used; a login that stays on the page ends with the typed field
emptied ("cleared": true).

With --interactive, you type the account and password at this terminal (echo off); only after
"authenticated" does it ask "Save as alias? [y/N]" (into the vault, or an isolated session's
store).

Examples:
    headless auth login --alias staging-admin --session checkout
    headless auth login --interactive`},

		{name: "handover", args: "SESSION", nargs: [2]int{1, 1}, shows: "--reason TEXT", summary: "the person acts in the session's window; returns done or declined", setup: c.handover,
			timeout: 65 * time.Minute, about: handoverAbout},

		{name: "journey run", args: "PLAN.json|-", nargs: [2]int{1, 1}, shows: "[--out DIR]", summary: "walk a journey plan; report passed, failed, could_not_look or nothing_to_report", setup: c.journeyRun,
			timeout: control.JourneyWait + time.Minute, about: journeyAbout},

		{name: "credentials init", summary: "create the locked 'headless' keyring (secret-service presence)", setup: c.credInit, timeout: 15 * time.Minute,
			about: `The keyring itself asks you for the new keyring's password; headless never sees it.`},
		{name: "credentials repair", summary: "the way out of PRESENCE_AUTO_UNLOCK: new keyring password, stored copy discarded", setup: c.credRepair, timeout: 15 * time.Minute,
			about: `When the keyring stores the 'headless' keyring's password for automatic unlock (the
"Automatically unlock" box was left ticked), nobody would be asked, so brokerd refuses every
release (PRESENCE_AUTO_UNLOCK). The stored password may have been read by any program of
yours meanwhile, so repair has the keyring change it through its own prompt (you type the
old password, then a new one: never through headless), then unlock it once through its
unlock prompt, where you type the new password with "Automatically unlock" unticked: the
keyring finds its stored copy wrong and discards it. The keyring is locked again at the end.
Nothing is read or released. 'headless doctor' reports the state (keyring_auto_unlock).`},
		{name: "credentials add", shows: "--origin O --account A --alias NAME", summary: "save a credential; the password is read from this terminal (echo off)", setup: c.credAdd, timeout: 15 * time.Minute,
			about: sessionStoreNote + `

Example:
    headless credentials add --origin https://staging.example.com --account admin@example.com --alias staging-admin
    headless credentials add --origin https://staging.example.com --account admin@example.com --alias staging-admin --totp

With --totp, the terminal then asks (echo off) for the site's TOTP seed: the otpauth://totp/
URI of its authenticator set-up (SHA1/SHA256/SHA512, 6-8 digits, any period) or the bare
base32 seed. It is stored in the vault with the password, never listed; 'credentials list'
shows only that the alias has one.

With --passkey nothing is read from the terminal: open the site's passkey registration page in
a session first (headless visit --session S URL), run this with --session S, and start the
site's registration on that page (its "create a passkey" button) while it waits (--wait, 2m).
The new passkey's private key goes from the browser host to brokerd, sealed in the vault like a
password; it is bound to the exact origin and its host as RP ID. Agents sign in with it by
alias (auth login) on a page that offers a passkey, after you approve each use.

    headless credentials add --passkey --session default --origin https://staging.example.com --account admin --alias staging-passkey`},
		{name: "credentials list", summary: "saved credentials' origins, accounts and aliases (never a password)", setup: c.credList,
			about: sessionStoreNote},
		{name: "credentials remove", shows: "--origin O --alias NAME", summary: "remove a credential (asks on this terminal)", setup: c.credRemove, timeout: 15 * time.Minute,
			about: sessionStoreNote},
		{name: "credentials verify", shows: "--origin O --alias NAME", summary: "take a vault credential through the whole release gate; nothing is typed", setup: c.credVerify, timeout: 15 * time.Minute,
			about: `The browser host is the receiver: it zeroes the password; nothing is typed and no release
reaches this process. Needs a running host ('headless start').`},

		{name: "profile clear", shows: "[--yes]", summary: "close every session, clear cookies, storage, cache and history; keep credentials", setup: c.profileClear, timeout: 10 * time.Minute,
			about: `Recreates the default session. Asks on the terminal unless --yes; works with the host stopped
(then it takes the profile lock itself: PROFILE_LOCKED if a host elsewhere has it).`},

		{name: "audit verify", summary: "check the audit log with brokerd's key: every record, and its ends", setup: c.auditVerify, timeout: 90 * time.Second,
			about: `Runs the installed brokerd (beside headless) once, read-only, to check every record's MAC
(a key only brokerd can derive), the hash chain, and the log's ends against brokerd's anchor
(kept where no program of yours can reach). The answer is believed only when the kernel says
it came from brokerd with its group (headless-broker): otherwise AUDIT_UNVERIFIED. A change is
AUDIT_TAMPERED naming the record and how (dropped, edited, reordered, inserted, replayed,
rechained, truncated, replaced, deleted, unanchored, malformed); brokerd keeps such a log aside and
records the finding, which stays in the log. Records written before records were keyed are
counted as "legacy" and checked as the plain chain they are. It says which records rotated out
of the log, and names the person's decisions among them (releases and file approvals answered
at the prompt, hand-overs' answers), which brokerd keeps apart, the newest 64 of each kind, and
those that went to another audit log of yours (a brokerd started with another XDG_DATA_HOME).`},
		{name: "audit list", shows: "[--since 24h]", summary: "recent releases, denials, adds and removes", setup: c.auditList},

		{name: "files add", args: "PATH", nargs: [2]int{1, 1}, shows: "[--name NAME]", summary: "add a file for uploads (a person's command: approved at the presence prompt)", setup: c.filesAdd, timeout: 15 * time.Minute,
			about: filesAbout + `

Examples:
    headless files add ~/Documents/report.pdf
    headless files add ./avatar-2.png --name avatar.png`},
		{name: "files list", summary: "the files added for uploads: name, size, SHA-256 (never their contents)", setup: c.filesList, about: filesAbout + `

"IN STORE" (JSON "present") says whether the store still holds a regular file of that name and
size; an upload also checks its SHA-256.

Example:
    headless files list --json`},
		{name: "files remove", args: "NAME", nargs: [2]int{1, 1}, summary: "remove a file from the upload store", setup: c.filesRemove,
			about: `brokerd forgets your approval of NAME (audited) and the store's copy is removed; nobody is
asked. A file of that name that brokerd never approved goes too.

Example:
    headless files remove report.pdf`},
		{name: "upload", args: "REF NAME", nargs: [2]int{2, 2}, summary: "attach a file a person added (files add) to the file input of REF", setup: c.upload,
			about: `NAME is a file of the upload store ('headless files list'), never a path: only a file a person
added with 'headless files add' and approved at the presence prompt, and only while its bytes
are the ones they approved (FILE_UNKNOWN, FILE_CHANGED otherwise). REF is an <input type=file>
of the last snapshot (NOT_A_FILE_INPUT otherwise).

Example:
    headless upload e7 report.pdf`},
		{name: "console list", shows: "[--level L] [--cursor C]", summary: "the page's console messages since its document loaded: level and text", setup: c.consoleList,
			about: listNote + `

Examples:
    headless console list --level error
    headless console list --limit 20 --cursor c4X…`},
		{name: "network list", shows: "[--type T] [--failed] [--cursor C]", summary: "the page's requests since its document loaded: method, URL, type, status, size, time", setup: c.networkList,
			about: listNote + `

Examples:
    headless network list --failed
    headless network list --type fetch --limit 100`},

		{name: "doctor", summary: "read-only report: can headless work here, and which doors are open", setup: c.doctorCmd, exit: doctorExit, timeout: maxDoctorWait + 30*time.Second,
			about: `Checks, each healthy, warning, unsupported or failed, with a short detail and a hint:
chromium, chromium_sandbox, secret_service, keyring, keyring_auto_unlock, presence, x11,
config, runtime_dir, sockets, profile, audit, brokerd, brokerd_trust, host, groups, setgid,
seal_key, state_dir, systemd_unit, binaries, ptrace_scope (informational), undumpable.

Read-only and offline: it never launches a browser or brokerd, repairs, removes or writes
anything, contacts no network address, and prints no secret, environment value or URL.
brokerd and the host get as long to answer as other commands give them (--timeout, 2m by
default); one that holds its lock but has not answered by then is busy, a warning.
Exit status 1 only when a check failed. Also the MCP tool "doctor".`},
		{name: "version", summary: "the version of headless: the release, commit and date it was built from", setup: c.version},
		{name: "completion", args: "bash|zsh|fish", nargs: [2]int{1, 1}, summary: "the shell completion script for bash, zsh or fish", setup: c.completion, raw: true,
			about: `Completes commands and flags, and the values of 'headless auth login --session S --alias NAME'
(as of every command that takes them): the running host's sessions and the aliases brokerd
lists (names only: nothing is started to find them). The Debian package
installs the scripts; from a source checkout:

    source <(headless completion bash)
    headless completion zsh > "${fpath[1]}/_headless"
    headless completion fish > ~/.config/fish/completions/headless.fish`},
		{name: "mcp", summary: "serve the Model Context Protocol on stdio (for agents' MCP clients)", setup: c.mcp, timeout: -1, raw: true,
			aboutOf: mcpAbout},
	}
}

// aboutText is the rest of cmd's --help.
func (cmd *command) aboutText() string {
	if cmd.aboutOf != nil {
		return cmd.aboutOf()
	}
	return cmd.about
}

// mcpAbout is 'headless mcp --help': its tools are those the server registers, the very list
// tools/list returns.
func mcpAbout() string {
	return wrap("Serves the browser verbs and the doctor as MCP tools over stdio: "+strings.Join(mcpserver.ToolList(), ", ")+".", 96) + `
Starts brokerd and the host when they are not running (never handing them this process's stdio
or display). Nothing but the protocol is written to stdout; sessions this client creates are
closed when it disconnects, unless created with keep. There is no tool that evaluates
JavaScript or returns a secret, and the server never asks the client anything (no
elicitation, no sampling): sign-ins are approved in brokerd's prompt only.

Register it with your agent (README, "MCP"), for example:
    claude mcp add headless -- headless mcp`
}

// wrap breaks s into lines of at most width bytes, at spaces.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		if i > 0 && n+1+len(w) > width {
			b.WriteByte('\n')
			n = 0
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// sessionStoreNote says what --session means on the credentials commands.
const sessionStoreNote = `--session S: the store session S signs in with: the vault for a normal session (default
included), the in-memory store of an isolated one (zeroed when it closes, the host stops or
dies; reached through the host). Without a running host, only the vault (no --session, or
--session default).`

// find returns the command args name, and how many of args its name took; nil when none.
func find(table []command, args []string) (*command, int) {
	for n := min(2, len(args)); n > 0; n-- {
		name := strings.Join(args[:n], " ")
		for i := range table {
			if table[i].name == name {
				return &table[i], n
			}
		}
	}
	return nil, 0
}

// parsed is a command line after its flags were set.
type parsed struct {
	args []string // positional arguments, in order
	dash int      // how many of them came before "--" (-1: no "--")
	help bool     // -h, -help or --help before "--"
}

// parseArgs sets fs's flags from args and returns the rest. Flags (-name or --name; "-name=v"
// for any flag, "-name v" for one that takes a value) may come before or after the positional
// arguments; nothing after "--" is ever a flag. A flag's value never begins with "-" unless it
// is given as --name=VALUE, so "--session --json" is an error, not a session named "--json".
// Which flags take a value is fs's own knowledge (boolean flags take none).
func parseArgs(fs *flag.FlagSet, args []string) (parsed, error) {
	p := parsed{dash: -1}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			p.dash = len(p.args)
			p.args = append(p.args, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			p.args = append(p.args, a)
			continue
		}
		name := strings.TrimPrefix(a[1:], "-")
		value, hasValue := "", false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, value, hasValue = k, v, true
		}
		if name == "h" || name == "help" {
			// --help=false asks for no help, as any bool flag set false does.
			if hasValue {
				want, err := strconv.ParseBool(value)
				if err != nil {
					return p, usagef("invalid value %q for --%s: a bool (true or false)", clip.Text(value, 64), name)
				}
				p.help = p.help || want
				continue
			}
			p.help = true
			continue
		}
		f := fs.Lookup(name)
		if f == nil || name == "" || strings.HasPrefix(name, "-") {
			typed, _, _ := strings.Cut(a, "=")
			return p, usagef("unknown flag %s%s", clip.Text(a, 64), didYouMean(clip.Text("--"+strings.TrimLeft(typed, "-"), 64), flagNames(fs)))
		}
		if isBool(f) {
			if !hasValue {
				value = "true"
			}
		} else if !hasValue {
			if i+1 == len(args) || len(args[i+1]) > 1 && args[i+1][0] == '-' {
				return p, usagef("--%s needs a value (write --%s=VALUE for a value that begins with '-')", name, name)
			}
			i++
			value = args[i]
		}
		if err := fs.Set(name, value); err != nil {
			return p, usagef("invalid value %q for --%s: %v", clip.Text(value, 64), name, err)
		}
	}
	return p, nil
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// scan looks at args before "--" the way parseArgs will, without knowing the command's
// flags: for --json and --help on a command line that does not parse.
func scan(args []string) (asJSON, help bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		switch a {
		case "--json", "-json", "--json=true", "-json=true":
			asJSON = true
		case "-h", "--help", "-help":
			help = true
		}
	}
	return asJSON, help
}

// commonFlags are on every command.
func commonFlags(fs *flag.FlagSet, asJSON *bool) {
	fs.BoolVar(asJSON, "json", false, "machine-readable output: one JSON object on stdout")
}

// help writes cmd's usage: its synopsis, what it does, its flags.
func (cmd *command) help(c *cmd, w io.Writer) {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	var j bool
	cmd.setup(fs)
	commonFlags(fs, &j)
	synopsis := "headless " + cmd.name
	if cmd.args != "" {
		synopsis += " " + cmd.args
	}
	fmt.Fprintf(w, "Usage: %s", synopsis)
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "json" {
			return
		}
		if v, _ := flag.UnquoteUsage(f); isBool(f) || v == "" {
			fmt.Fprintf(w, " [--%s]", f.Name)
		} else {
			fmt.Fprintf(w, " [--%s %s]", f.Name, v)
		}
	})
	fmt.Fprintf(w, " [--json]\n\n%s.\n", strings.ToUpper(cmd.summary[:1])+cmd.summary[1:])
	if about := cmd.aboutText(); about != "" {
		fmt.Fprintf(w, "\n%s\n", about)
	}
	fmt.Fprintln(w, "\nFlags:")
	var rows [][2]string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "json" {
			return // last, below
		}
		v, usage := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if !isBool(f) && v != "" {
			left += " " + v
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
			usage += fmt.Sprintf(" (default %q)", f.DefValue)
		}
		rows = append(rows, [2]string{left, usage})
	})
	rows = append(rows, [2]string{"--json", fs.Lookup("json").Usage}, [2]string{"-h, --help", "this help"})
	width := 0
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "    %-*s  %s\n", width, r[0], r[1])
	}
}

// groupHelp writes the usage of a command that takes a subcommand.
func groupHelp(table []command, group string, w io.Writer) {
	fmt.Fprintf(w, "Usage: headless %s SUBCOMMAND [flags]\n\n%s\n\nSubcommands:\n", group, groups[group])
	listCommands(w, table, func(name string) bool { return strings.HasPrefix(name, group+" ") })
	fmt.Fprintf(w, "\n'headless %s SUBCOMMAND --help' says more.\n", group)
}

// listCommands writes a synopsis line for each listed command that keep accepts.
func listCommands(w io.Writer, table []command, keep func(string) bool) {
	var rows [][2]string
	for _, cmd := range table {
		if !keep(cmd.name) {
			continue
		}
		rows = append(rows, [2]string{strings.Join(strings.Fields(cmd.name+" "+cmd.args+" "+cmd.shows), " "), cmd.summary})
	}
	const width = 26 // a longer synopsis gets a line of its own
	for _, r := range rows {
		if len(r[0]) > width {
			fmt.Fprintf(w, "    headless %s\n    %-*s  %s\n", r[0], width+9, "", r[1])
		} else {
			fmt.Fprintf(w, "    headless %-*s  %s\n", width, r[0], r[1])
		}
	}
}

// subcommands lists group's subcommand names, for messages.
func subcommands(table []command, group string) string {
	var subs []string
	for _, cmd := range table {
		if sub, ok := strings.CutPrefix(cmd.name, group+" "); ok {
			subs = append(subs, sub)
		}
	}
	if len(subs) > 1 {
		return strings.Join(subs[:len(subs)-1], ", ") + " or " + subs[len(subs)-1]
	}
	return strings.Join(subs, "")
}

// isGroup reports whether name takes a subcommand.
func isGroup(name string) bool {
	_, ok := groups[name]
	return ok
}
