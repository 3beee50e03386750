// Package doctor is `headless doctor` (and the MCP tool `doctor`): a read-only, offline,
// versioned report of whether headless can work here and which doors stay open.
//
// # Security contract
//
//   - Read-only. The doctor reads files (the config, the runtime directory, the profile's
//     marker and lock, the audit log, /proc, the group database, the installed brokerd.service
//     user unit), looks at the owner and mode of others without opening them (the set-gid
//     binaries, the seal key, Chromium's setuid sandbox), asks D-Bus read-only questions
//     (package keyprobe: no Secret Service session, no secret, no unlock, no prompt), and asks a
//     running brokerd and host for their version and status. It never launches a browser or
//     brokerd, repairs, removes (a stale socket is reported, not removed), creates or writes
//     anything, and never takes a lock (a lock's owner is read from its file).
//   - It never activates brokerd: broker.sock is dialled only when a live brokerd holds
//     broker.lock, so a systemd socket unit listening there is reported, not triggered; a
//     socket's liveness is read from /proc/net/unix, not by connecting.
//   - Offline: no network address is ever contacted; only Unix sockets of this user and the
//     session bus.
//   - Nothing it prints is a secret, an environment value or a URL. Every detail is text of
//     the doctor's own with bounded numbers, states and headless's own file paths in it; no
//     bus address, display, page URL or value from a page (of DISPLAY and WAYLAND_DISPLAY it
//     knows only whether they are set). Errors of the probes, and brokerd's reason for being
//     untrusted, are classified, never echoed. It cannot read the seal key (the CLI runs
//     without brokerd's group) and does not try: it only looks at the key file's inode.
//   - Stable: each check has an id that never changes meaning (the Check* constants), one of
//     four states ([Healthy], [Warning], [Unsupported], [Failed]), a short detail and, unless
//     healthy, a hint. The report carries its format version ([Format]). Only a failed check
//     makes the report fail (the CLI's exit status 1).
//
// # Not guaranteed
//
// A report is a snapshot: the keyring can be unlocked or a daemon can stop right after. What
// brokerd and the host say about themselves (undumpable, version) is their own word over
// their sockets; a same-user process that replaced a user-owned binary could lie, which is
// why writable binaries are a warning of their own. What the install made (the groups, the
// set-gid binaries, the seal key: install.go) is judged from the file system as the doctor
// sees it; whether the kernel granted brokerd its group is brokerd's own word (check
// brokerd_trust). The systemd check reads the user unit directories systemd would, not the
// user manager's loaded state (unit.go).
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/config"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/keyprobe"
	"github.com/headless-dev/headless/internal/lockfile"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/xdg"
)

// Format is the version of the report's shape. It changes only when a field changes meaning.
const Format = 1

// State is a check's verdict.
type State string

const (
	Healthy     State = "healthy"     // works as headless needs it
	Warning     State = "warning"     // works, but a door is open or it could not be looked at
	Unsupported State = "unsupported" // does not apply here (this OS, this presence provider)
	Failed      State = "failed"      // headless cannot work (or would refuse) until fixed
)

// Check ids. They never change meaning.
const (
	CheckChromium      = "chromium"
	CheckSandbox       = "chromium_sandbox"
	CheckSecretService = "secret_service"
	CheckKeyring       = "keyring"
	CheckAutoUnlock    = "keyring_auto_unlock"
	CheckPresence      = "presence"
	CheckX11           = "x11"
	CheckConfig        = "config"
	CheckRuntimeDir    = "runtime_dir"
	CheckSockets       = "sockets"
	CheckProfile       = "profile"
	CheckAudit         = "audit"
	CheckBrokerd       = "brokerd"
	CheckBrokerTrust   = "brokerd_trust"
	CheckHost          = "host"
	CheckGroups        = "groups"
	CheckSetGID        = "setgid"
	CheckSealKey       = "seal_key"
	CheckStateDir      = "state_dir"
	CheckSystemdUnit   = "systemd_unit"
	CheckBinaries      = "binaries"
	CheckPtraceScope   = "ptrace_scope" // informational: nothing depends on it
	CheckUndumpable    = "undumpable"
)

// IDs lists every check id in report order.
var IDs = []string{CheckChromium, CheckSandbox, CheckSecretService, CheckKeyring, CheckAutoUnlock,
	CheckPresence, CheckX11, CheckConfig, CheckRuntimeDir, CheckSockets, CheckProfile, CheckAudit,
	CheckBrokerd, CheckBrokerTrust, CheckHost, CheckGroups, CheckSetGID, CheckSealKey, CheckStateDir, CheckSystemdUnit,
	CheckBinaries, CheckPtraceScope, CheckUndumpable}

// Check is one verdict.
type Check struct {
	ID     string `json:"id"`
	State  State  `json:"state"`
	Detail string `json:"detail"`
	Hint   string `json:"hint,omitempty"`
}

// Summary counts the checks by state.
type Summary struct {
	Healthy     int `json:"healthy"`
	Warning     int `json:"warning"`
	Unsupported int `json:"unsupported"`
	Failed      int `json:"failed"`
}

// Report is the doctor's answer.
type Report struct {
	Format  int     `json:"format"`
	Version string  `json:"version"` // this headless
	OS      string  `json:"os"`
	Checks  []Check `json:"checks"`
	Summary Summary `json:"summary"`
}

// Failed reports whether any check failed.
func (r Report) Failed() bool { return r.Summary.Failed > 0 }

// KeyringLabel is the label of the dedicated collection of the secret-service provider.
const KeyringLabel = "headless"

// Probes is everything the doctor looks at outside itself. A nil func is a world without
// that thing.
type Probes struct {
	Version string
	GOOS    string
	Layout  xdg.Layout
	// Executable is this headless binary (brokerd is looked for beside it).
	Executable string
	// BusAddress is the session bus found from the environment ("" when there is none). It is
	// used, never printed.
	BusAddress string
	// Inspect asks the Secret Service read-only questions (keyprobe.Inspect).
	Inspect func(ctx context.Context, addr, label string) (keyprobe.Inspection, error)
	// Broker asks the running brokerd for its version and facts; called only when a live
	// brokerd holds broker.lock.
	Broker func(ctx context.Context) (brokerapi.VersionResult, error)
	// Host asks the running host for its status; called only when something listens on
	// control.sock.
	Host func(ctx context.Context) (control.Status, error)
	// Profile inspects the durable profile read-only (host.InspectProfile).
	Profile func() (control.ProfileFacts, error)
	// ChromiumVersion names the installed version of the Chromium at path without running it
	// ("" when unknown).
	ChromiumVersion func(path string) string
	// Alive reports whether pid is a live process.
	Alive func(pid int) bool
	// Listening reports whether a process listens on the Unix socket at path, without
	// connecting to it (ProcListening).
	Listening func(path string) (bool, error)
	// PtraceScope reads the kernel's Yama ptrace_scope (hardening.PtraceScope), reported for
	// information only.
	PtraceScope func() string
	// Root: the doctor runs as root (effective uid 0), whom nothing keeps out. Chromium then
	// runs with --no-sandbox, so a missing setuid sandbox is a warning, not a failure.
	Root bool
	// Display and Wayland say whether DISPLAY and WAYLAND_DISPLAY are set (the values are
	// never looked at).
	Display, Wayland bool
	// LookupGroup returns the gid of a system group (hardening.LookupGroup).
	LookupGroup func(name string) (int, error)
	// InGroup reports whether the user's supplementary groups include gid (hardening.InGroup).
	InGroup func(gid int) bool
	// Stat describes the file at path without opening it (StatFile).
	Stat func(path string) (File, error)
	// Units reads the brokerd.service user unit systemd would load and its drop-ins, in the
	// order systemd applies them; none when no unit is installed (UserUnits).
	Units func() ([]UnitFile, error)
	// Timeout bounds each question to a daemon or the bus (default 3 s).
	Timeout time.Duration
}

// Run runs every check and returns the report.
func Run(ctx context.Context, p Probes) Report {
	if p.Timeout <= 0 {
		p.Timeout = 3 * time.Second
	}
	if p.Alive == nil {
		p.Alive = func(int) bool { return false }
	}
	if p.Listening == nil {
		p.Listening = func(string) (bool, error) { return false, errors.New("no socket table") }
	}
	d := &run{p: p, ctx: ctx, checks: map[string]Check{}}
	d.gather()
	d.checkChromium()
	d.checkSandbox()
	d.checkSecretService()
	d.checkKeyring()
	d.checkPresence()
	d.checkX11()
	d.checkConfig()
	d.checkRuntime()
	d.checkSockets()
	d.checkProfile()
	d.checkAudit()
	d.checkBrokerd()
	d.checkBrokerTrust()
	d.checkHost()
	d.checkGroups()
	d.checkSetGID()
	d.checkSealKey()
	d.checkStateDir()
	d.checkSystemdUnit()
	d.checkBinaries()
	d.checkPtrace()
	d.checkUndumpable()
	r := Report{Format: Format, Version: p.Version, OS: p.GOOS, Checks: make([]Check, 0, len(IDs))}
	for _, id := range IDs {
		c, ok := d.checks[id]
		if !ok {
			c = Check{ID: id, State: Warning, Detail: "not checked", Hint: "this is a bug of the doctor"}
		}
		r.Checks = append(r.Checks, c)
		switch c.State {
		case Healthy:
			r.Summary.Healthy++
		case Warning:
			r.Summary.Warning++
		case Unsupported:
			r.Summary.Unsupported++
		case Failed:
			r.Summary.Failed++
		}
	}
	return r
}

// run is one doctor run: what was gathered, and the verdicts so far.
type run struct {
	p      Probes
	ctx    context.Context
	checks map[string]Check

	cfgPath string
	cfg     config.Config
	cfgErr  error

	bus    keyprobe.Inspection
	busErr error // the bus or the service could not be reached
	looked bool  // Inspect ran

	brokerPID int // live holder of broker.lock (0: none)
	broker    *brokerapi.VersionResult
	brokerErr error

	hostListening bool
	host          *control.Status
	hostErr       error
}

func (d *run) set(id string, s State, hint, format string, a ...any) {
	d.checks[id] = Check{ID: id, State: s, Detail: fmt.Sprintf(format, a...), Hint: hint}
}

func (d *run) linux() bool { return d.p.GOOS == "linux" }

// gather asks the outside world once; the checks read what it found.
func (d *run) gather() {
	d.cfgPath, d.cfgErr = d.p.Layout.Config()
	if d.cfgErr == nil {
		d.cfg, d.cfgErr = config.Load(d.cfgPath)
	}
	if d.p.Inspect != nil && d.linux() {
		ctx, cancel := context.WithTimeout(d.ctx, d.p.Timeout)
		d.bus, d.busErr = d.p.Inspect(ctx, d.p.BusAddress, KeyringLabel)
		cancel()
		d.looked = true
	}
	if pid := lockfile.Owner(d.p.Layout.BrokerLock()); pid > 0 && d.p.Alive(pid) {
		d.brokerPID = pid
		if d.p.Broker != nil {
			ctx, cancel := context.WithTimeout(d.ctx, d.p.Timeout)
			v, err := d.p.Broker(ctx)
			cancel()
			if err == nil {
				d.broker = &v
			}
			d.brokerErr = err
		}
	}
	if ok, err := d.p.Listening(d.p.Layout.ControlSocket()); ok || err != nil && exists(d.p.Layout.ControlSocket()) {
		d.hostListening = true
		if d.p.Host != nil {
			ctx, cancel := context.WithTimeout(d.ctx, d.p.Timeout)
			st, err := d.p.Host(ctx)
			cancel()
			if err == nil {
				d.host = &st
			}
			d.hostErr = err
		}
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func (d *run) checkChromium() {
	if !d.linux() {
		d.set(CheckChromium, Unsupported, "", "the browser host runs Debian Chromium on Linux only")
		return
	}
	if d.cfgErr != nil {
		d.set(CheckChromium, Warning, "fix the config first (check config)", "not checked: the config is refused")
		return
	}
	path := d.cfg.ChromiumPath()
	if err := hardening.CheckChromium(path); err != nil {
		hint := "install Debian's chromium package (apt-get install chromium), or name a root-owned ELF Chromium, in a directory only root can write, in the config's \"chromium\""
		switch {
		case errors.Is(err, fs.ErrNotExist):
			d.set(CheckChromium, Failed, hint, "%s is not installed", path)
		default:
			d.set(CheckChromium, Failed, hint, "%s is refused: %s", path, classifyExec(err))
		}
		return
	}
	switch {
	case d.host != nil && d.host.Chromium != "":
		d.set(CheckChromium, Healthy, "", "%s, running %s", path, procstat.Clean(d.host.Chromium, 64))
	case d.p.ChromiumVersion != nil && d.p.ChromiumVersion(path) != "":
		d.set(CheckChromium, Healthy, "", "%s, package version %s", path, procstat.Clean(d.p.ChromiumVersion(path), 64))
	default:
		d.set(CheckChromium, Healthy, "", "%s (version not known without running it; the doctor never launches a browser)", path)
	}
}

// classifyExec turns hardening's refusal into the doctor's own words.
func classifyExec(err error) string {
	msg := err.Error()
	for _, k := range []struct{ has, say string }{
		{"not an ELF", "not an ELF executable (a wrapper script is refused)"},
		{"writable by group or others", "writable by group or others"},
		{"owned by uid", "owned by another user than you or root"},
		{"owned by you", "owned by you: any program running as you could put a wrapper in its place"},
		{"its directory", "in a directory that programs running as you can write: one could put a wrapper in its place"},
		{"not executable", "not executable"},
		{"not a regular file", "not a regular file"},
		{"not an absolute path", "not an absolute path"},
	} {
		if strings.Contains(msg, k.has) {
			return k.say
		}
	}
	return "cannot be read"
}

func (d *run) checkSecretService() {
	if !d.linux() {
		d.set(CheckSecretService, Unsupported, "", "no D-Bus Secret Service on %s (the Keychain is used)", d.p.GOOS)
		return
	}
	switch {
	case d.p.BusAddress == "":
		d.set(CheckSecretService, Failed, "run headless inside your desktop session, or start a session bus with gnome-keyring",
			"no session bus (DBUS_SESSION_BUS_ADDRESS is unset and there is no bus socket in the runtime dir): Chromium's cookie key and the credentials have nowhere to live")
	case !d.looked:
		d.set(CheckSecretService, Warning, "this is a bug of the doctor", "not checked")
	case d.busErr != nil:
		d.set(CheckSecretService, Failed, "start a Secret Service (gnome-keyring or KWallet) on your session bus",
			"the session bus or its Secret Service does not answer (%s)", classifyBus(d.busErr))
	case errors.Is(d.bus.Default, keyprobe.ErrLocked):
		d.set(CheckSecretService, Failed, "unlock your login keyring (log in to the desktop session); the host will not launch Chromium without it",
			"reachable, but the default collection (Chromium's cookie key) is locked")
	case d.bus.Default != nil:
		d.set(CheckSecretService, Failed, "start a Secret Service with a default collection (gnome-keyring creates 'login')",
			"reachable, but it has no usable default collection for Chromium's cookie key")
	default:
		d.set(CheckSecretService, Healthy, "", "reachable; the default collection (Chromium's cookie key) is unlocked")
	}
}

func classifyBus(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "no answer in time"
	case errors.Is(err, keyprobe.ErrLocked):
		return "locked"
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connect to session bus"), strings.Contains(msg, "authenticate"):
		return "the bus cannot be connected to"
	case strings.Contains(msg, "has no owner"):
		return "no Secret Service on the bus"
	}
	return "an error on the bus"
}

// provider is the presence provider brokerd uses (when it runs) or would choose.
func (d *run) provider() (name string, known bool) {
	if d.broker != nil {
		return d.broker.Presence, true
	}
	if d.cfgErr != nil {
		return "", false
	}
	if p := d.cfg.Presence.Provider; p != config.ProviderAuto {
		return p, true
	}
	if !d.linux() {
		return config.ProviderNone, true
	}
	idx, _ := d.p.Layout.CredentialsIndex()
	if d.looked && d.busErr == nil && (d.bus.Keyrings > 0 || d.bus.PrompterRunning || d.bus.PrompterActivatable) || idx != "" && exists(idx) {
		return config.ProviderSecretService, true
	}
	return config.ProviderNone, true
}

func (d *run) checkKeyring() {
	prov, known := d.provider()
	switch {
	case !d.linux():
		d.set(CheckKeyring, Unsupported, "", "no 'headless' keyring on %s", d.p.GOOS)
		d.set(CheckAutoUnlock, Unsupported, "", "no keyring auto-unlock on %s", d.p.GOOS)
		return
	case !d.looked || d.busErr != nil || d.p.BusAddress == "":
		d.set(CheckKeyring, Warning, "see check secret_service", "not checked: the Secret Service cannot be reached")
		d.set(CheckAutoUnlock, Warning, "see check secret_service", "not checked: the Secret Service cannot be reached")
		return
	case d.bus.Keyrings > 1:
		d.set(CheckKeyring, Failed, "remove the keyrings headless did not create (Seahorse), keeping the one with your credentials",
			"%d keyrings are labelled 'headless': one could be a decoy; brokerd refuses to choose", d.bus.Keyrings)
		d.set(CheckAutoUnlock, Warning, "see check keyring", "not checked: more than one 'headless' keyring")
		return
	case d.bus.Keyrings == 0 && known && prov != config.ProviderSecretService:
		d.set(CheckKeyring, Unsupported, "", "not used: presence provider %s keeps credentials in the default collection", provName(prov))
		d.set(CheckAutoUnlock, Unsupported, "", "not used: presence provider %s", provName(prov))
		return
	case d.bus.Keyrings == 0:
		d.set(CheckKeyring, Warning, "run 'headless credentials init' (the keyring asks you for the new keyring's password)",
			"the 'headless' keyring does not exist yet")
		d.set(CheckAutoUnlock, Unsupported, "", "no 'headless' keyring yet")
		return
	}
	if d.bus.Locked {
		d.set(CheckKeyring, Healthy, "", "the 'headless' keyring exists and is locked at rest")
	} else {
		d.set(CheckKeyring, Warning, "lock it (Seahorse, or 'headless credentials list' after any release locks it again); brokerd locks it after every use",
			"the 'headless' keyring is unlocked now: any program running as you can read it until it is locked")
	}
	if d.bus.AutoUnlockStored {
		d.set(CheckAutoUnlock, Failed, "run 'headless credentials repair': it changes the keyring's password through the keyring's own prompt and has the keyring discard the stored one (approve with 'Automatically unlock' unticked)",
			"the keyring stores the 'headless' keyring's password for automatic unlock: nobody would be asked, so brokerd refuses every release (PRESENCE_AUTO_UNLOCK)")
	} else {
		d.set(CheckAutoUnlock, Healthy, "", "no automatic-unlock password is stored for the 'headless' keyring")
	}
}

func provName(p string) string {
	if p == "" {
		return "(automatic)"
	}
	return p
}

func (d *run) checkPresence() {
	prov, known := d.provider()
	if !known {
		d.set(CheckPresence, Warning, "fix the config first (check config)", "not judged: the config is refused, so brokerd would not start")
		return
	}
	started := ""
	if d.broker != nil {
		started = d.broker.Started
	}
	byPerson := started == brokerapi.StartedPerson || started == brokerapi.StartedSystemd
	configured := d.cfg.Presence.Display != "" || d.cfg.Presence.WaylandDisplay != ""
	switch prov {
	case config.ProviderNone, "":
		hint := `set "presence" in the config: {"provider":"passphrase","program":"/usr/bin/pinentry-gnome3"} (or pinentry-tty) keeps the passwords from an agent's shell; {"provider":"secret-service"} on a desktop, or {"provider":"pinentry","program":…}, do not (README, Providers)`
		if d.p.GOOS == "darwin" {
			hint = `use pinentry-mac: {"presence":{"provider":"pinentry","program":"/opt/homebrew/bin/pinentry-mac"}} (README, macOS)`
		}
		d.set(CheckPresence, Warning, hint, "no presence provider: every release is refused (PRESENCE_UNAVAILABLE); nothing can sign in by alias")
	case config.ProviderSecretService:
		switch {
		case !d.linux():
			d.set(CheckPresence, Failed, "use the pinentry provider with pinentry-mac (README, macOS)", "secret-service presence exists only on Linux")
		case !d.looked || d.busErr != nil:
			d.set(CheckPresence, Warning, "see check secret_service", "secret-service: not checked, the Secret Service cannot be reached")
		case d.bus.PrompterRunning:
			d.set(CheckPresence, Healthy, "", "secret-service: the keyring's prompter (gcr-prompter) runs on the session bus and will ask you")
		case d.bus.PrompterActivatable && byPerson:
			d.set(CheckPresence, Healthy, "", "secret-service: the bus starts the keyring's prompter on demand, on the display of the brokerd you started")
		case d.bus.PrompterActivatable:
			d.set(CheckPresence, Warning, "start brokerd from your desktop session (or enable the systemd user units, README) so the prompter has your display",
				"secret-service: the bus can start the keyring's prompter, but only where a display is; a brokerd started by headless has none unless the desktop gave the bus one")
		default:
			d.set(CheckPresence, Failed, "install gcr (gcr-prompter) and run inside your desktop session, or use the pinentry provider",
				"secret-service: the keyring has no prompter to ask you (no org.gnome.keyring.SystemPrompter): every release is PRESENCE_UNAVAILABLE")
		}
	case config.ProviderPinentry, config.ProviderPassphrase:
		prog := d.cfg.Presence.Program
		base := prog[strings.LastIndexByte(prog, '/')+1:]
		terminal := strings.Contains(base, "tty") || strings.Contains(base, "curses")
		switch {
		case d.linux() && hardening.NotReplaceable(prog) != nil:
			d.set(CheckPresence, Failed, "name a root-owned pinentry in a directory only root can write (e.g. /usr/bin/pinentry-curses)",
				"%s: brokerd refuses it, every prompt is PRESENCE_UNAVAILABLE", hardening.NotReplaceable(prog))
		case d.p.GOOS == "darwin" && !strings.Contains(base, "mac"):
			d.set(CheckPresence, Warning, "use pinentry-mac (brew install pinentry-mac; README, macOS)", "pinentry %s: on macOS the prompt that works today is pinentry-mac", base)
		case d.p.GOOS == "darwin":
			d.set(CheckPresence, Healthy, "", "pinentry-mac asks you in a dialog of your macOS session (the supported macOS path)")
		case configured && !terminal:
			d.set(CheckPresence, Healthy, "", "pinentry %s, on the display the config names", base)
		case byPerson && terminal && started == brokerapi.StartedSystemd:
			d.set(CheckPresence, Failed, "use a graphical pinentry with the systemd unit, or start brokerd in a terminal yourself", "pinentry %s needs a terminal, and a brokerd run by systemd has none", base)
		case byPerson:
			d.set(CheckPresence, Healthy, "", "pinentry %s, on the terminal or display of the brokerd you started", base)
		case terminal:
			d.set(CheckPresence, Warning, "start brokerd yourself in a terminal you watch before an agent runs (a brokerd headless starts has no terminal)",
				"pinentry %s needs a terminal, and a brokerd started by headless has none: releases would be PRESENCE_UNAVAILABLE", base)
		default:
			d.set(CheckPresence, Warning, `set "presence.display" (and "presence.xauthority") in the config, or start brokerd from your desktop session`,
				"pinentry %s: a brokerd started by headless never takes a display from the environment, and the config names none", base)
		}
	default:
		d.set(CheckPresence, Failed, "fix presence.provider in the config", "unknown presence provider")
	}
}

// checkX11 warns of an X11 session: every X client of the user (an agent's shell with
// DISPLAY among them) can read the keys typed into a prompt and send it clicks and keys of its
// own, which no group keeps out. The session is taken as X11 when DISPLAY is set and
// WAYLAND_DISPLAY is not (a Wayland session with Xwayland sets both, and its native clients'
// input is not shared); the config's presence.display without presence.wayland_display sends
// the prompts to an X display whatever the session.
func (d *run) checkX11() {
	if !d.linux() {
		d.set(CheckX11, Unsupported, "", "X11 sessions are judged on Linux only")
		return
	}
	hint := "log in to a Wayland session (GNOME or Plasma on Wayland), or use a terminal pinentry (pinentry-tty) in a terminal you watch; on X11 any program of yours can read and type into a prompt"
	switch {
	case d.cfgErr == nil && d.cfg.Presence.Display != "" && d.cfg.Presence.WaylandDisplay == "":
		d.set(CheckX11, Warning, hint, "the config's presence.display sends prompts to an X11 display: any X client of yours can read what you type into them and click their buttons")
	case d.p.Display && !d.p.Wayland:
		d.set(CheckX11, Warning, hint, "this session uses X11 (DISPLAY is set, WAYLAND_DISPLAY is not): any X client of yours can read what you type into a prompt and click its buttons")
	case d.p.Wayland:
		d.set(CheckX11, Healthy, "", "this session uses Wayland (WAYLAND_DISPLAY is set): other clients cannot read or send a prompt's input")
	default:
		d.set(CheckX11, Healthy, "", "no display in this environment (neither DISPLAY nor WAYLAND_DISPLAY is set)")
	}
}

func (d *run) checkConfig() {
	if d.cfgPath == "" {
		d.set(CheckConfig, Failed, "set HOME or XDG_CONFIG_HOME to an absolute directory", "the config file's place cannot be resolved")
		return
	}
	fi, err := os.Lstat(d.cfgPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if d.cfgErr != nil {
			d.set(CheckConfig, Failed, "fix the config directory: owned by you, not group/world-writable", "%s: its directory is refused", d.cfgPath)
			return
		}
		d.set(CheckConfig, Healthy, "", "%s does not exist: defaults apply", d.cfgPath)
		return
	case err != nil:
		d.set(CheckConfig, Failed, "check the config file's permissions", "%s cannot be looked at", d.cfgPath)
		return
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	hint := "make it a regular file owned by you with mode 0600 (chmod 600)"
	switch {
	case !fi.Mode().IsRegular():
		d.set(CheckConfig, Failed, hint, "%s is not a regular file", d.cfgPath)
	case st != nil && int(st.Uid) != os.Getuid():
		d.set(CheckConfig, Failed, hint, "%s is owned by uid %d, not you: refused", d.cfgPath, st.Uid)
	case fi.Mode().Perm()&0o022 != 0:
		d.set(CheckConfig, Failed, hint, "%s is writable by group or others (mode %04o): refused", d.cfgPath, fi.Mode().Perm())
	case d.cfgErr != nil:
		d.set(CheckConfig, Failed, "fix it: documented keys only, valid values ('headless help' names the keys; brokerd's log says which one)",
			"%s is refused: %s", d.cfgPath, classifyConfig(d.cfgErr))
	case fi.Mode().Perm()&0o077 != 0:
		d.set(CheckConfig, Warning, hint, "%s is valid but readable by others (mode %04o); 0600 expected", d.cfgPath, fi.Mode().Perm())
	default:
		d.set(CheckConfig, Healthy, "", "%s: yours, mode %04o, valid", d.cfgPath, fi.Mode().Perm())
	}
}

func classifyConfig(err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, config.ErrInsecure):
		return "insecure (owner or mode)"
	case strings.Contains(msg, "unknown"):
		return "an unknown key"
	case strings.Contains(msg, "program"):
		return "the pinentry program is missing or unsafe"
	}
	return "malformed or out-of-range value"
}

func (d *run) checkRuntime() {
	dir := d.p.Layout.Runtime
	fi, err := os.Lstat(dir)
	hint := "remove it and let headless recreate it (brokerd makes it 0700)"
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.set(CheckRuntimeDir, Healthy, "", "%s does not exist yet (created 0700 at the first start)", dir)
		return
	case err != nil:
		d.set(CheckRuntimeDir, Failed, hint, "%s cannot be looked at", dir)
		return
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
		d.set(CheckRuntimeDir, Failed, hint, "%s is not a directory (or is a symlink): refused", dir)
	case st != nil && int(st.Uid) != d.p.Layout.UID:
		d.set(CheckRuntimeDir, Failed, hint, "%s is owned by uid %d, not you: refused", dir, st.Uid)
	case fi.Mode().Perm() != 0o700:
		d.set(CheckRuntimeDir, Warning, "chmod 700 it (brokerd tightens it at its next start)", "%s has mode %04o, 0700 expected", dir, fi.Mode().Perm())
	default:
		d.set(CheckRuntimeDir, Healthy, "", "%s: yours, mode 0700", dir)
	}
}

func (d *run) checkSockets() {
	var bad, warn, ok []string
	for _, s := range []struct{ name, path string }{
		{"broker.sock", d.p.Layout.BrokerSocket()},
		{"control.sock", d.p.Layout.ControlSocket()},
	} {
		fi, err := os.Lstat(s.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			bad = append(bad, s.name+" cannot be looked at")
			continue
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		switch {
		case fi.Mode().Type() != fs.ModeSocket:
			bad = append(bad, s.name+" is not a socket (brokerd and the host refuse to remove it)")
			continue
		case st != nil && int(st.Uid) != d.p.Layout.UID:
			bad = append(bad, fmt.Sprintf("%s is owned by uid %d", s.name, st.Uid))
			continue
		case fi.Mode().Perm()&0o077 != 0:
			bad = append(bad, fmt.Sprintf("%s has mode %04o, 0600 expected", s.name, fi.Mode().Perm()))
			continue
		}
		listening, err := d.p.Listening(s.path)
		switch {
		case err != nil:
			ok = append(ok, s.name+" (mode 0600; liveness unknown)")
		case listening:
			ok = append(ok, s.name+" (0600, listening)")
		default:
			warn = append(warn, s.name+" is stale: nothing listens on it (left in place; the next start replaces it)")
		}
	}
	switch {
	case len(bad) > 0:
		d.set(CheckSockets, Failed, "stop headless, remove the file named, and start again", "%s", strings.Join(append(bad, warn...), "; "))
	case len(warn) > 0:
		d.set(CheckSockets, Warning, "nothing to do: 'headless start' replaces a stale socket after probing it", "%s", strings.Join(append(warn, ok...), "; "))
	case len(ok) == 0:
		d.set(CheckSockets, Healthy, "", "no sockets (nothing runs)")
	default:
		d.set(CheckSockets, Healthy, "", "%s", strings.Join(ok, "; "))
	}
}

func (d *run) checkProfile() {
	if !d.linux() {
		d.set(CheckProfile, Unsupported, "", "the browser host runs on Linux only")
		return
	}
	if d.p.Profile == nil {
		d.set(CheckProfile, Warning, "this is a bug of the doctor", "not checked")
		return
	}
	f, err := d.p.Profile()
	switch {
	case err != nil:
		d.set(CheckProfile, Failed, "set HOME or XDG_DATA_HOME to an absolute directory", "the profile's place cannot be resolved")
		return
	case !f.Exists:
		d.set(CheckProfile, Healthy, "", "%s does not exist yet (created at the first start)", f.Path)
		return
	}
	owner := "not in use"
	if f.LockPID > 0 {
		owner = fmt.Sprintf("locked by pid %d", f.LockPID)
		if d.host != nil && d.host.PID == f.LockPID {
			owner += " (the running host)"
		}
	}
	switch {
	case strings.Contains(f.Problem, "newer than this headless"):
		d.set(CheckProfile, Failed, "upgrade headless", "%s was made by a newer headless: the host refuses it; %s", f.Path, owner)
	case f.Problem != "":
		kind, _, _ := strings.Cut(f.Problem, ":")
		d.set(CheckProfile, Warning, "nothing is deleted: the next start moves it aside as profile.corrupt-* and makes a fresh one (cookies are lost, credentials kept)",
			"%s fails the check (%s): the next start moves it aside; %s", f.Path, procstat.Clean(kind, 32), owner)
	case f.LockPID > 0 && d.host != nil && d.host.PID != f.LockPID:
		d.set(CheckProfile, Warning, "stop the other owner, or use an isolated session", "%s: marker pinned to the Secret Service; %s, not the host that answers", f.Path, owner)
	default:
		d.set(CheckProfile, Healthy, "", "%s: marker pinned to the Secret Service (gnome-libsecret); %s", f.Path, owner)
	}
}

func (d *run) checkAudit() {
	path, err := d.p.Layout.AuditLog()
	if err != nil {
		d.set(CheckAudit, Failed, "set HOME or XDG_DATA_HOME to an absolute directory", "the audit log's place cannot be resolved")
		return
	}
	if !exists(path) {
		d.set(CheckAudit, Healthy, "", "%s does not exist yet (brokerd writes the first record at the first add, release or refusal)", path)
		return
	}
	n, err := audit.Verify(path)
	var ve *audit.VerifyError
	switch {
	case errors.As(err, &ve):
		d.set(CheckAudit, Failed, "the log was edited, reordered, or had records inserted or deleted; keep a copy and read 'headless audit verify'",
			"%s: the hash chain is broken (%d records check before the first bad one)", path, n)
	case err != nil:
		d.set(CheckAudit, Failed, "check the file's permissions", "%s cannot be read", path)
	default:
		d.set(CheckAudit, Healthy, "", "%s: %d records, hash chain intact", path, n)
	}
}

func (d *run) checkBrokerd() {
	switch {
	case d.brokerPID == 0:
		if l, _ := d.p.Listening(d.p.Layout.BrokerSocket()); l {
			d.set(CheckBrokerd, Healthy, "", "not running; broker.sock is listened on (systemd socket activation starts brokerd at the first request)")
			return
		}
		d.set(CheckBrokerd, Warning, "'headless start' starts it (or enable the systemd user units, README)", "not running")
	case d.brokerErr != nil || d.broker == nil:
		d.set(CheckBrokerd, Failed, "read brokerd.log in the runtime dir; stop it (kill -TERM PID) and start again",
			"pid %d holds broker.lock but does not answer on broker.sock", d.brokerPID)
	case d.broker.Version != d.p.Version:
		d.set(CheckBrokerd, Warning, "install headless and brokerd from the same build, then restart brokerd",
			"running, pid %d, but version %s, this headless is %s (brokerd refuses a host of another build)", d.broker.PID, procstat.Clean(d.broker.Version, 64), procstat.Clean(d.p.Version, 64))
	default:
		d.set(CheckBrokerd, Healthy, "", "running, pid %d, answers; presence %s; started by %s", d.broker.PID, provName(d.broker.Presence), procstat.Clean(d.broker.Started, 16))
	}
}

func (d *run) checkHost() {
	switch {
	case !d.hostListening:
		d.set(CheckHost, Warning, "'headless start' starts it", "not running")
	case d.hostErr != nil || d.host == nil:
		d.set(CheckHost, Failed, "read host.log in the runtime dir; 'headless stop' then 'headless start'", "something listens on control.sock but does not answer as the host")
	default:
		d.set(CheckHost, Healthy, "", "running, pid %d, answers; browser pid %d; %d session(s)", d.host.PID, d.host.BrowserPID, d.host.Sessions)
	}
}

func (d *run) checkBinaries() {
	var facts []hardening.BinaryFact
	if d.broker != nil && len(d.broker.Facts.Binaries) > 0 {
		facts = d.broker.Facts.Binaries // brokerd and the host program it starts
	} else if d.p.Executable != "" {
		facts = append(facts, hardening.Binary(d.p.Executable))
		bd := d.p.Executable[:strings.LastIndexByte(d.p.Executable, '/')+1] + "brokerd"
		if exists(bd) {
			facts = append(facts, hardening.Binary(bd))
		}
	}
	if len(facts) == 0 {
		d.set(CheckBinaries, Warning, "run the installed headless (for example /usr/bin/headless)", "not checked: this binary's path is unknown")
		return
	}
	var writable, fine []string
	for _, f := range facts {
		if f.UserWritable {
			writable = append(writable, f.Path+": "+binaryReason(f.Reason))
		} else {
			fine = append(fine, f.Path)
		}
	}
	if len(writable) > 0 {
		d.set(CheckBinaries, Warning, "as root: scripts/install.sh (or the .deb) installs them root-owned in a directory only root can write; run headless as yourself, not root",
			"replaceable by programs running as you: %s", strings.Join(writable, "; "))
		return
	}
	d.set(CheckBinaries, Healthy, "", "not replaceable by you: %s", strings.Join(fine, ", "))
}

func binaryReason(r string) string {
	switch {
	case strings.HasPrefix(r, "owned by you"):
		return "owned by you"
	case strings.HasPrefix(r, "its directory") && strings.Contains(r, "is yours"):
		return "its directory is yours"
	case strings.Contains(r, "writable by group or others"):
		return "writable by group or others"
	}
	return "cannot be checked"
}

// checkPtrace reports Yama's ptrace_scope for information: trust rests on the set-gid groups
// the kernel grants at any ptrace_scope (checks groups, setgid, seal_key, brokerd_trust), so
// no value is a warning.
func (d *run) checkPtrace() {
	if !d.linux() {
		d.set(CheckPtraceScope, Unsupported, "", "Yama ptrace_scope is a Linux setting")
		return
	}
	scope := "unknown"
	if d.p.PtraceScope != nil {
		scope = d.p.PtraceScope()
	}
	const info = "informational: brokerd and the host are kept from your programs by their groups at any value"
	switch scope {
	case "0", "1", "2", "3":
		d.set(CheckPtraceScope, Healthy, "", "kernel.yama.ptrace_scope = %s (%s)", scope, info)
	case "absent":
		d.set(CheckPtraceScope, Healthy, "", "the kernel has no Yama (%s)", info)
	default:
		d.set(CheckPtraceScope, Healthy, "", "kernel.yama.ptrace_scope cannot be read (%s)", info)
	}
}

func (d *run) checkUndumpable() {
	if !d.linux() {
		d.set(CheckUndumpable, Unsupported, "", "PR_SET_DUMPABLE is a Linux facility")
		return
	}
	var yes, no []string
	if d.broker != nil {
		if d.broker.Facts.Undumpable {
			yes = append(yes, "brokerd")
		} else {
			no = append(no, "brokerd")
		}
	}
	if d.host != nil {
		if d.host.Undumpable {
			yes = append(yes, "host")
		} else {
			no = append(no, "host")
		}
	}
	switch {
	case len(no) > 0:
		d.set(CheckUndumpable, Failed, "run the headless and brokerd of the Debian package (or scripts/build.sh); read their logs",
			"%s is dumpable: a program running as you could read its memory", strings.Join(no, " and "))
	case len(yes) == 0:
		d.set(CheckUndumpable, Warning, "'headless start', then run the doctor again", "not checked: neither brokerd nor the host runs")
	case len(yes) == 1:
		d.set(CheckUndumpable, Healthy, "", "%s is undumpable (the other does not run)", yes[0])
	default:
		d.set(CheckUndumpable, Healthy, "", "brokerd and the host are undumpable")
	}
}
