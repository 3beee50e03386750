// Package brokerapi is brokerd's protocol on broker.sock, as its clients (the browser host and
// the CLI) speak it: the method names, their params and results, the hand-built frames that
// carry a secret, and a typed [Client]. The release gate that answers these requests is package
// internal/broker/gate, which only brokerd links.
//
// # Security contract
//
//   - Frames are newline-delimited JSON, bounded (1 MiB), decoded strictly, and answered with
//     the request id (package internal/wire, internal/rpc).
//   - A secret travels only base64-encoded in two frames that are built by hand
//     ([SecretRequestFrame] for credentials.add, [ReleaseFrame] for a release reply), so that
//     no JSON encoder buffer holds it; the caller zeroes the frame after writing it, and
//     [Client.Release] hands the decoded secret to its caller to use once and zero.
//   - Nothing here decides anything: every check of a release is brokerd's. A client learns
//     only what brokerd answers it.
package brokerapi

import (
	"encoding/json"
	"time"

	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/procstat"
)

// Protocol is the broker.sock protocol version, reported by "version".
const Protocol = 1

// Method names on broker.sock.
const (
	MethodVersion         = "version"
	MethodPing            = "ping"
	MethodCredentialsList = "credentials.list"
	MethodCredentialsAdd  = "credentials.add"
	MethodCredentialsRm   = "credentials.remove"
	MethodCredentialsInit = "credentials.init"
	// MethodCredentialsRepair is the way out of PRESENCE_AUTO_UNLOCK: the keyring changes the
	// 'headless' keyring's password through its own prompt and discards the stored copy.
	MethodCredentialsRepair = "credentials.repair"
	MethodChallengeIssue    = "challenge.issue"
	MethodRelease           = "release"
	MethodSessionOpen       = "session.open"
	MethodSessionClose      = "session.close"
	// MethodProfileCleared is sent by the host after 'headless profile clear': brokerd zeroes
	// every isolated store the connection still owns and audits the clear.
	MethodProfileCleared = "profile.cleared"
	// MethodHostStart asks brokerd to start the browser host (idempotent): brokerd starts the
	// one host executable it trusts and owns the process.
	MethodHostStart = "host.start"
	// MethodHostHello is the host telling brokerd how it runs, on each of its connections,
	// before the first release there.
	MethodHostHello = "host.hello"
	// MethodLearnPath is the host telling brokerd that a form sign-in it released a password
	// for (named by its challenge) ended authenticated: a credential with no known sign-in
	// path learns that release's path, and one released for a new path the person allowed
	// (ReleaseParams.NewPath) adds it.
	MethodLearnPath = "credentials.learn_path"
	// MethodEchoSeen is the host telling brokerd, for the audit, that a page showed a secret
	// released into the browser and the output was refused (the page discarded).
	MethodEchoSeen = "echo.seen"
	// MethodEgressRefused is the host telling brokerd, for the audit, that a page tried to send
	// a secret typed into it where it may not go, and the request was refused (host/egress).
	MethodEgressRefused = "egress.refused"
	// MethodPasskeySigned is the host telling brokerd the sign count a passkey's authenticator
	// reached in the ceremony of a release (named by its challenge), for the next release.
	MethodPasskeySigned = "passkey.signed"
	// MethodHandover is the host asking brokerd to have the person act in a session's
	// window (or, with no window, elsewhere) and say when they are done, at a presence prompt
	// the agent cannot answer; audited.
	MethodHandover = "handover"
)

// Proc is a process of a chain (pid, executable when readable, comm).
type Proc = procstat.Proc

// ChromiumEnv is the environment allowlist for Chromium: the only variable names the host
// passes to the browser (TMPDIR points into the host's private temp dir, XDG_CONFIG_HOME under /proc).
// The host reports the names it used in host.hello; any other name is refused. The display
// names are given only to a host started with a window, by brokerd, from where its prompts
// appear ([HostStartParams]).
var ChromiumEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
	"XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "TMPDIR", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY"}

// Release purposes.
const (
	PurposeLogin  = ""       // typed into the verified login field
	PurposeCode   = "code"   // step-up: the one-time code alone, typed into the page's code field
	PurposeBasic  = "basic"  // the answer to one HTTP Basic challenge of the page's origin (one request's Authorization header: cdp.ContinueWithBasic)
	PurposeVerify = "verify" // 'credentials verify': received by the host and zeroed
	// PurposePasskey: a passkey (credential.Passkey), added for one WebAuthn ceremony of the
	// page to a virtual authenticator of the session and removed after it.
	PurposePasskey = "passkey"
)

// Bounds of what the host reports about a release.
const (
	MaxPath  = 512 // bytes of ReleaseParams.Path
	MaxField = 256 // bytes of ReleaseParams.Field
	// MaxClient bounds ReleaseParams.Client: what the agent's client says it is.
	MaxClient = 128
	MaxAgent  = 4 // processes in ReleaseParams.Agent
)

// HelloParams is "host.hello": how the host runs. brokerd compares it with its own config and
// build; a mismatch makes every release on that connection PEER_NOT_HOST.
type HelloParams struct {
	Chromium    string   `json:"chromium"`     // the Chromium executable the host launches
	ChromiumEnv []string `json:"chromium_env"` // the names of the variables in Chromium's environment
	Config      string   `json:"config"`       // the config file the host read
	Version     string   `json:"version"`
}

// HostStartParams is "host.start". Allow, when not null, is the navigation allowlist asked
// for ('headless start --allow', package allowlist): a new host gets it; a running host with
// another list refuses (INVALID_ARGUMENT), with the same list it is a no-op.
//
// Window asks for a browser with windows on the person's display: the display brokerd's
// prompts appear on (the config's, or the environment of a brokerd the person started; never
// that of one headless started), NO_DISPLAY without one. The config's "window" asks the same.
// A running host with the other mode refuses (INVALID_ARGUMENT).
type HostStartParams struct {
	Allow  []string `json:"allow,omitempty"`
	Window bool     `json:"window,omitempty"`
}

// HostStartResult answers "host.start". Ready is the host's own one-line report (package
// host's Ready) as it wrote it when it started.
type HostStartResult struct {
	Status string          `json:"status"` // "started" or "running"
	PID    int             `json:"pid"`
	Ready  json.RawMessage `json:"ready"`
}

// MaxIsolated bounds the isolated-session stores brokerd keeps at once (all connections).
const MaxIsolated = 64

// MaxIsolatedRecords bounds the records of one isolated-session store.
const MaxIsolatedRecords = 64

// SessionOpenParams is "session.open": the browser host registers an isolated session, which
// gets an empty in-memory credential store owned by the registering connection. Isolated must
// be true (normal sessions use the vault and are not registered).
type SessionOpenParams struct {
	Session  string `json:"session"`
	Isolated bool   `json:"isolated"`
}

// SessionCloseParams is "session.close": the registering connection closes its isolated
// session, and the session's store is zeroed.
type SessionCloseParams struct {
	Session string `json:"session"`
}

// VersionResult answers "version".
type VersionResult struct {
	Version  string `json:"version"`
	Protocol int    `json:"protocol"`
	PID      int    `json:"pid"`
	Presence string `json:"presence"`
	// Started says how brokerd was started: "auto" (by headless, perhaps for an agent's verb:
	// 'headless stop' stops it), "person" (by the person) or "systemd" (by the user's systemd,
	// on an inherited socket): 'headless stop' leaves those two running.
	Started string `json:"started"`
	// HostPID is the browser host brokerd started and owns (0: none runs).
	HostPID int `json:"host_pid,omitempty"`
	// Facts are the doctor's facts about brokerd (undumpable, ptrace_scope, binaries).
	Facts hardening.Report `json:"facts"`
	// Untrusted says why this brokerd releases and saves nothing (BROKER_UNTRUSTED: no seal
	// key, not given its group); "" when it has the key.
	Untrusted string `json:"untrusted,omitempty"`
}

// How brokerd was started (VersionResult.Started).
const (
	StartedAuto   = "auto"
	StartedPerson = "person"
	// StartedSystemd: run by the systemd user manager on an inherited broker.sock (socket
	// activation). Like one the person started, 'headless stop' leaves it running.
	StartedSystemd = "systemd"
)

// ListParams filters "credentials.list"; an empty Origin lists every origin. A non-empty
// Session names an isolated session, whose store is listed instead of the vault.
type ListParams struct {
	Origin  string `json:"origin,omitempty"`
	Session string `json:"session,omitempty"`
}

// Credential is listed metadata. It never holds a secret.
type Credential struct {
	Origin  string    `json:"origin"`
	Account string    `json:"account"`
	Alias   string    `json:"alias"`
	Created time.Time `json:"created"`
	TOTP    bool      `json:"totp,omitempty"`    // a second factor (TOTP seed) is stored with the password
	Passkey bool      `json:"passkey,omitempty"` // a passkey, not a password
	// LoginPaths are the paths of the origin where this credential's sign-in form may be
	// (learned at the first authenticated sign-in, or set at enrolment); none: not yet known.
	LoginPaths []string `json:"login_paths,omitempty"`
	// AlsoOrigins are the other origins the person named at enrolment that its sign-in may
	// send the password to.
	AlsoOrigins []string `json:"also_origins,omitempty"`
}

// MaxAlsoOrigins bounds the other origins a credential's sign-in may post to.
const MaxAlsoOrigins = 8

// MaxLoginPaths bounds a credential's known sign-in paths (each at most MaxPath bytes).
const MaxLoginPaths = 8

// LearnPathParams is "credentials.learn_path": the challenge of the release whose sign-in
// ended authenticated.
type LearnPathParams struct {
	Challenge string `json:"challenge"`
}

// LearnPathResult answers "credentials.learn_path": the credential's sign-in paths now, and
// whether this call added one.
type LearnPathResult struct {
	LoginPaths []string `json:"login_paths"`
	Learned    bool     `json:"learned"`
}

// EchoSeenParams is "echo.seen": the session whose page showed a released secret, the
// page's origin, and the output that was refused (a method name such as "snapshot").
type EchoSeenParams struct {
	Session string `json:"session"`
	Origin  string `json:"origin,omitempty"`
	Output  string `json:"output"`
}

// EgressRefusedParams is "egress.refused": the session the secret was typed in, its
// credential's origin, where the refused request was going (origin and path, never a part that
// holds the secret) and what carried it ("its URL", "its body", …).
type EgressRefusedParams struct {
	Session     string `json:"session"`
	Origin      string `json:"origin"`
	Destination string `json:"destination"`
	Carrier     string `json:"carrier"`
}

// ListResult answers "credentials.list".
type ListResult struct {
	Credentials []Credential `json:"credentials"`
}

// AddParams is "credentials.add". Secret travels base64-encoded on this socket only; clients
// build the frame with AddFrame so no JSON encoder buffer holds it.
type AddParams struct {
	Session string `json:"session,omitempty"` // an isolated session's store instead of the vault
	Origin  string `json:"origin"`
	Account string `json:"account"`
	Alias   string `json:"alias"`
	// LoginPaths are the sign-in paths the person set at enrolment (at most MaxLoginPaths,
	// each an absolute path of at most MaxPath bytes); none: learned at the first sign-in.
	LoginPaths []string `json:"login_paths,omitempty"`
	// AlsoOrigins are other origins the person says the sign-in posts the password to (a
	// sibling origin of the same site: signin.example.com posting to www.example.com), at
	// most MaxAlsoOrigins; shown in every prompt, checked by the host's network guard.
	AlsoOrigins []string `json:"also_origins,omitempty"`
	Secret      []byte   `json:"secret"`
}

// ZeroSecret zeroes the password (rpc.Zeroer: params that failed to decode are zeroed).
func (p *AddParams) ZeroSecret() { credential.Zero(p.Secret) }

// InitResult answers "credentials.init": whether the keyring was created now (false: it
// existed already).
type InitResult struct {
	Created  bool   `json:"created"`
	Provider string `json:"provider"`
}

// RepairResult answers "credentials.repair": Repaired is false when no auto-unlock password
// was stored (nobody was asked).
type RepairResult struct {
	Repaired bool   `json:"repaired"`
	Provider string `json:"provider"`
}

// RemoveParams is "credentials.remove".
type RemoveParams struct {
	Session string `json:"session,omitempty"` // an isolated session's store instead of the vault
	Origin  string `json:"origin"`
	Alias   string `json:"alias"`
}

// ChallengeParams is "challenge.issue". A registered isolated session's challenge lists and
// releases only that session's store; any other session's, only the vault. Isolated is the
// requester's claim that Session is isolated: brokerd then refuses (SESSION_UNKNOWN) rather than
// fall back to the vault when it has no store for it.
type ChallengeParams struct {
	Session  string `json:"session"`
	Document string `json:"document"`
	Origin   string `json:"origin"`
	Isolated bool   `json:"isolated,omitempty"`
}

// ChallengeResult answers "challenge.issue": the aliases saved for exactly that origin.
type ChallengeResult struct {
	Challenge string   `json:"challenge"`
	Origin    string   `json:"origin"`
	Aliases   []string `json:"aliases"`
	// Passkeys are the aliases of Aliases that are passkeys.
	Passkeys  []string  `json:"passkeys,omitempty"`
	ExpiresAt time.Time `json:"expires_at"`
}

// PasskeySignedParams is "passkey.signed": the challenge of a passkey release and the sign
// count its authenticator reported after the page's ceremony.
type PasskeySignedParams struct {
	Challenge string `json:"challenge"`
	SignCount uint32 `json:"sign_count"`
	// Uses is how many assertions the authenticator answered under that one release (more
	// than 1: the page had it answer before the host could remove it; audited).
	Uses int `json:"uses,omitempty"`
}

// ReleaseParams is "release": the challenge, the alias, and the session and document the
// requester is looking at now (they must match the challenge). The rest is what the host
// reports for the prompt and the audit (bounded and checked by brokerd, not verified): the
// purpose, the page path without query, the password field's label, and the agent behind the
// request (the control-socket peer, then its ancestors).
type ReleaseParams struct {
	Challenge string `json:"challenge"`
	Alias     string `json:"alias"`
	Session   string `json:"session"`
	Document  string `json:"document"`
	Purpose   string `json:"purpose,omitempty"`
	Path      string `json:"path,omitempty"`
	Field     string `json:"field,omitempty"`
	Agent     []Proc `json:"agent,omitempty"`
	// Client is what the agent's client says it is (an MCP client's name and version),
	// self-reported and never an identity: shown and audited as such.
	Client string `json:"client,omitempty"`
	// NewPath asks the person to allow a form sign-in at a path that is not one of the
	// credential's known sign-in paths (without it, brokerd refuses LOGIN_PATH_CHANGED
	// before anyone is asked); the prompt says so in its first line.
	NewPath bool `json:"new_path,omitempty"`
}

// Released is the non-secret part of a release reply; the reply also carries "secret".
// Listener is the stable identity of the process that listened on a loopback origin's port
// when brokerd asked the person (empty for other origins), so that the host can check it again
// right before typing.
type Released struct {
	Origin   string `json:"origin"`
	Account  string `json:"account"`
	Alias    string `json:"alias"`
	Listener string `json:"listener,omitempty"`
	// AlsoOrigins are the origins the person named at enrolment that the sign-in may send the
	// secret to besides Origin (host/egress): never one the agent named.
	AlsoOrigins []string `json:"also_origins,omitempty"`
	// Code says the secret is the password, a NUL byte and the current one-time code
	// (credential.SplitFactor), released under the same approval.
	Code bool `json:"code,omitempty"`
	// CodePaths, with Code, are the paths of Origin where the host may type that code without
	// asking again: the sign-in page's and the credential's known sign-in paths. A code page
	// elsewhere (a page the agent steered the sign-in's redirect to) is asked for by itself
	// (PurposeCode, whose prompt names the page).
	CodePaths []string `json:"code_paths,omitempty"`
	// SignCount is, for a passkey, the highest sign count brokerd knows of it: the host gives
	// the authenticator that count, so the site sees it grow.
	SignCount uint32 `json:"sign_count,omitempty"`
}

// ProfileClearedParams is "profile.cleared".
type ProfileClearedParams struct {
	SessionsClosed int `json:"sessions_closed"`
	// Reserve, sent before the clear, only sets aside the space of its audit record: a clear
	// the audit log has no space for is refused (AUDIT_UNAVAILABLE) before anything is
	// closed or removed. Nothing is wiped or recorded.
	Reserve bool `json:"reserve,omitempty"`
}

// Files a person chose for uploads (package filestore). brokerd keeps, per store (its runtime
// dir's), the name, size and SHA-256 of every file the person approved at the presence prompt;
// the host uploads a file of the store only when it has those bytes.
const (
	// MethodFilesApprove asks the person to approve one file (FileApproveParams → FileEntry):
	// the CLI of 'headless files add' staged its bytes in the store and hashed them.
	MethodFilesApprove = "files.approve"
	// MethodFilesList lists the approved files (→ FileList): metadata only.
	MethodFilesList = "files.list"
	// MethodFilesRemove forgets an approved file (FileRemoveParams → FileEntry).
	MethodFilesRemove = "files.remove"
)

// FileApproveParams is "files.approve": the file's name in the store, its size and hex
// SHA-256 as staged, and the path it was read from (as the requester reports it: shown in the
// prompt, never used).
type FileApproveParams struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Source string `json:"source,omitempty"`
}

// MaxFileSource bounds FileApproveParams.Source (longer is cut).
const MaxFileSource = 512

// FileEntry is a file the person approved for uploads: metadata, never its contents.
type FileEntry struct {
	Name   string    `json:"name"`
	Size   int64     `json:"bytes"`
	SHA256 string    `json:"sha256"`
	Added  time.Time `json:"added"`
}

// FileList answers "files.list", oldest first.
type FileList struct {
	Files []FileEntry `json:"files"`
}

// FileRemoveParams is "files.remove".
type FileRemoveParams struct {
	Name string `json:"name"`
}

// Bounds of a hand-over's report.
const (
	MaxReason = 512  // bytes of HandoverParams.Reason
	MaxURL    = 2048 // bytes of HandoverParams.URL
	MaxTitle  = 256  // bytes of HandoverParams.Title
)

// HandoverParams is "handover": the session the agent hands to the person, the agent's
// reason (its own words, shown quoted), and what the host reports of the page (its URL
// without query or fragment, its title), of the agent behind the request (as in a release),
// and whether the session's window is open on the person's display and was brought to the
// front. Without a window brokerd asks only where no window could be shown (it has no
// display); else NO_WINDOW.
type HandoverParams struct {
	Session string `json:"session"`
	Reason  string `json:"reason"`
	URL     string `json:"url,omitempty"`
	Title   string `json:"title,omitempty"`
	Window  bool   `json:"window,omitempty"`
	Agent   []Proc `json:"agent,omitempty"`
	Client  string `json:"client,omitempty"`
}

// Hand-over outcomes (HandoverResult.Status): the person pressed Done, or declined. A prompt
// nobody answered is PRESENCE_TIMEOUT.
const (
	HandoverDone     = "done"
	HandoverDeclined = "declined"
)

// HandoverResult answers "handover".
type HandoverResult struct {
	Status string `json:"status"`
}
