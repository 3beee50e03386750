package mcpserver

import (
	"regexp"
	"strings"

	"github.com/headless-dev/headless/internal/wire"
)

// Errors in the caller's own terms.
//
// The error table's hints (package wire) speak the CLI: commands, flags, "one JSON object per
// line". An MCP client gets tool names and their parameters instead. [toolHints] holds the
// hint, in tool terms, of every code whose default hint names an agent's command or flag; a
// message or a particular hint (one an error carries of its own) goes through [toolTerms],
// which rewrites the CLI's verbs and flags as tools and parameters, and a hint still speaking
// the CLI after that is replaced by the code's tool hint. What only the person can do (enrol a
// credential, repair the keyring) stays a command, introduced as the person's: "ask the person
// to run `headless credentials add …` in a terminal".

// toolHints: the hint over MCP of each code whose default names a command or flag.
var toolHints = map[wire.Code]string{
	wire.CodeBadRequest:         "call the tool with the parameters of its input schema only",
	wire.CodeInvalidArgument:    "the message names the parameter and what it takes; the tool's input schema lists them all",
	wire.CodePeerNotHost:        "sign in with auth_login: passwords go only to the browser host brokerd started",
	wire.CodeAliasExists:        "choose another alias, or ask the person to run `headless credentials remove` in a terminal",
	wire.CodeAliasUnknown:       "credentials_list (with origin) names the aliases saved for an origin",
	wire.CodeBrokerUntrusted:    "ask the person to install headless with its set-up step (the .deb, or `sudo scripts/install.sh`); the doctor tool says what is missing",
	wire.CodeNotSealed:          "ask the person to remove the credential and add it again in a terminal (`headless credentials remove`, then `headless credentials add`)",
	wire.CodePresenceAutoUnlock: "ask the person to run `headless credentials repair` in a terminal (the keyring then asks for a new password of the 'headless' keyring; 'Automatically unlock' stays unticked)",
	wire.CodeVaultNoKeyring:     "ask the person to run `headless credentials init` in a terminal",
	wire.CodeBrokerUnavail:      "brokerd is started by this server on the next call; if it still fails, the doctor tool says why",
	wire.CodeBrokerRunning:      "one brokerd per user: ask the person to stop the running one",
	wire.CodeNoTTY:              "this needs the person at a terminal: ask them",
	wire.CodeUsage:              "the tool's input schema lists its parameters",
	wire.CodeHostUnavail:        "the host is started by this server on the next call; if it still fails, the doctor tool says why",
	wire.CodeProfileLocked:      "another host uses the durable profile: create an isolated session (session_create with isolated: true), or ask the person to stop that host",
	wire.CodeBrowserExposed:     "ask the person to install headless with its set-up step and Debian's chromium-sandbox; the doctor tool says which is missing",
	wire.CodeSessionUnknown:     "session_list names the sessions; credentials_list's session names an isolated one",
	wire.CodeSessionLimit:       "close unused sessions with session_close",
	wire.CodeRefUnknown:         "call snapshot and use a ref from its outline",
	wire.CodeRefStale:           "the page changed since that snapshot: call snapshot again and use a ref from the new outline",
	wire.CodeDirectFillOff:      "sign in with auth_login and an alias; password fields are never filled with fill",
	wire.CodeTimeout:            "what it waited for did not happen in time (the message says what): retry, or check the page or the condition",
	wire.CodeNotInteractable:    "the element is not visible or cannot be used (disabled, or it cannot take the focus): scroll with its ref brings it into view, or call snapshot again",
	wire.CodeNoHistory:          "the session has no earlier (or later) page: visit one",
	wire.CodeDialogOpen:         "answer it with the dialog tool (accept, with text for a prompt); snapshot shows it; unanswered, the host dismisses it after 20 s",
	wire.CodeNoDialog:           "the dialog was answered, dismissed after 20 s, or left with its page: call snapshot",
	wire.CodePageUnknown:        "the pages tool lists the session's pages and their numbers",
	wire.CodeNetUntracked:       "the page had more requests in flight at once than the host follows: wait for text or ref instead",
	wire.CodeProfileClear:       "ask the person to run `headless profile clear` again in a terminal (host.log in the runtime dir says what failed)",
	wire.CodeSecretOnPage:       "visit another URL first: screenshot and the tools that could edit the page or run its handlers (click, fill, press, select, hover, scroll, back) are refused while a typed password is on the page, and every output of a page that shows a secret released into the browser is refused (the page is discarded)",
	wire.CodeSecretEgress:       "the page tried to send the password (or code) where it may not go: another origin, a URL, or a channel that cannot be checked; nothing left the browser and the page was discarded. Tell the person (the audit log records it); if the site really signs in through another origin, ask the person to run `headless credentials add --also-origin ORIGIN` in a terminal",
	wire.CodeCodePathUnknown:    "the password was sent; if this page is the site's own code page, call auth_login again with code_only: true (the person is asked, the prompt naming this page)",
	wire.CodeSigninNotSent:      "the page may need something first (a captcha, a checkbox, a field the sign-in did not fill: snapshot shows it), or its submit is another control: call auth_login again with password_field, account_field and submit refs; the typed password was cleared from the page (or, where the page would not let it, the page discarded)",
	wire.CodeLoginPathChanged:   "sign in on the page where the credential was used before (the message names it); if the site moved its sign-in page, call auth_login again with new_login_path: true (the person's prompt then says it is not where they signed in before; the page is not remembered), or, to make it the sign-in page, ask the person to run `headless credentials add --login-path PATH` in a terminal",
	wire.CodePlanInvalid:        "the message names the field; journey_run's input schema describes the plan (unknown fields, more than 20 actions and budgets over 300 s are refused)",
	wire.CodeLoginFailed:        "the site answered the saved password with its login form or an error: ask the person to check the credential (`headless credentials verify` in a terminal) or the site's sign-in",
	wire.CodeEnrollUnknown:      "the save question was already answered or waited more than 2 minutes; saving a new password needs the person at a terminal",
	wire.CodeCancelled:          "the call was cancelled: nothing was typed or changed",
	wire.CodeConfigInvalid:      "ask the person to fix $XDG_CONFIG_HOME/headless/config.json (owned by them, not group/world-writable, documented keys only)",
	wire.CodeX11Window:          "ask the person to run `headless stop` and `headless start` (no windows), or to show the windows on Wayland; the sign-in is refused while the browser's windows are on X11",
	wire.CodeNoDisplay:          "ask the person to name their display in the config (presence.wayland_display, or display and xauthority), then run `headless stop` and `headless start --window` in a terminal",
	wire.CodeNoWindow:           "a hand-over needs the session's window: ask the person to run `headless stop` and `headless start --window` in a terminal",
	wire.CodeHandedOver:         "the person is acting in this session's window (handover): use another session until the hand-over ends",
	wire.CodePresenceUnavail:    "ask the person to configure presence.provider in $XDG_CONFIG_HOME/headless/config.json (see the README); the doctor tool says what is missing",
	wire.CodeFileUnknown:        "fill's upload takes only a file the person added (the message names them); ask the person to add one: `headless files add PATH` in a terminal",
	wire.CodeFileChanged:        "the store's file is not the one the person approved: ask the person to add it again (`headless files add PATH` in a terminal)",
	wire.CodeFilesFull:          "ask the person to remove files they no longer need (`headless files remove NAME` in a terminal)",
	wire.CodeNotAFileInput:      "fill's upload goes into a file input only (input[file] in snapshot's outline): call snapshot and use its ref",
}

// ownHints are the hints of tools whose parameters do better than the code's tool hint (its
// default reaches every tool that meets the code): timeout_ms where there is one.
var ownHints = map[string]map[wire.Code]string{
	"wait":  {wire.CodeTimeout: "raise timeout_ms (at most 300000) or check the condition"},
	"visit": {wire.CodeTimeout: "raise timeout_ms (at most 300000) or check the URL and the site"},
}

// cliVerbs are the agent's CLI commands and the tools that do the same, longest first.
var cliVerbs = []struct{ cli, tool string }{
	{"headless auth login --interactive", "the person's `headless auth login --interactive` in a terminal"},
	{"headless auth login --alias NAME", "auth_login with an alias"},
	{"headless auth login", "auth_login"},
	{"headless session create NAME --isolated", "session_create with isolated: true"},
	{"headless session create", "session_create"},
	{"headless session list", "session_list"},
	{"headless session close NAME", "session_close"},
	{"headless session close", "session_close"},
	{"headless credentials list --origin ORIGIN", "credentials_list with origin"},
	{"headless credentials list", "credentials_list"},
	{"headless journey run --help", "journey_run's input schema"},
	{"headless journey run", "journey_run"},
	{"headless handover", "handover"},
	{"headless snapshot", "snapshot"},
	{"headless visit URL", "visit"},
	{"headless visit", "visit"},
	{"headless scroll REF", "scroll with the ref"},
	{"headless status", "the status tool"},
	{"headless doctor", "the doctor tool"},
	{"headless start", "any tool (this server starts the host)"},
	{"headless help", "the tool's input schema"},
	{"headless dialog accept", "dialog with accept: true"},
	{"headless dialog dismiss", "dialog"},
	{"headless session pages", "pages"},
}

// cliFlags are the CLI's flags and the parameters that do the same.
var cliFlags = map[string]string{
	"--timeout": "timeout_ms (milliseconds)", "--new-login-path": "new_login_path", "--challenge": "challenge",
	"--code-only": "code_only", "--session": "session", "--isolated": "isolated", "--alias": "alias",
	"--origin": "origin", "--full-page": "full_page", "--keep": "keep", "--ref": "ref", "--text": "text",
	"--gone": "gone", "--url": "url", "--by": "by", "--password-field": "password_field", "--account-field": "account_field",
	"--submit": "submit", "--cursor": "cursor", "--limit": "limit", "--level": "level", "--type": "type", "--failed": "failed",
}

var flagRE = regexp.MustCompile(`--[a-z][a-z-]*`)

// personCommand is a command introduced as the person's (left as it is).
var personCommand = regexp.MustCompile("`headless [^`]*`")

// verbReplacer rewrites the CLI's verbs as tools in one pass (its output is never scanned
// again): each verb quoted and unquoted, the longest first.
var verbReplacer = func() *strings.Replacer {
	var pairs []string
	for _, v := range cliVerbs {
		pairs = append(pairs, "'"+v.cli+"'", v.tool)
	}
	for _, v := range cliVerbs {
		pairs = append(pairs, v.cli, v.tool)
	}
	return strings.NewReplacer(pairs...)
}()

// toolTerms rewrites a message or hint from the CLI's terms into the tools'.
func toolTerms(s string) string {
	// The person's commands, quoted with backticks, stay as they are.
	var kept []string
	s = personCommand.ReplaceAllStringFunc(s, func(m string) string {
		kept = append(kept, m)
		return "\x00"
	})
	s = verbReplacer.Replace(s)
	s = flagRE.ReplaceAllStringFunc(s, func(f string) string {
		if p, ok := cliFlags[f]; ok {
			return p
		}
		return f
	})
	for _, k := range kept {
		s = strings.Replace(s, "\x00", k, 1)
	}
	return s
}

var cliRE = regexp.MustCompile(`'headless [a-z]|\bheadless (auth|session|credentials|journey|snapshot|visit|scroll|status|doctor|start|stop|help|profile)\b|JSON object per line|Go struct`)

// speaksCLI reports whether s still names a CLI command or flag outside a person's command.
func speaksCLI(s string) bool {
	s = personCommand.ReplaceAllString(s, "")
	return cliRE.MatchString(s) || flagRE.MatchString(s)
}

// toolError is we in tool terms: its message rewritten, its hint the code's tool hint when it
// is the default one (or still speaks the CLI once rewritten).
func toolError(we *wire.Error) *wire.Error {
	out := &wire.Error{Code: we.Code, Message: toolTerms(we.Message), Hint: we.Hint}
	th, ok := toolHints[we.Code]
	switch {
	case out.Hint == "" || out.Hint == wire.Hint(we.Code):
		if ok {
			out.Hint = th
		} else {
			out.Hint = toolTerms(wire.Hint(we.Code))
		}
	default:
		out.Hint = toolTerms(out.Hint)
		if speaksCLI(out.Hint) && ok {
			out.Hint = th
		}
	}
	return out
}
