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
//     anything, and never takes a lock (a lock's owner is read from its file). To check the
//     audit log with brokerd's key it runs the installed brokerd once, in its read-only
//     'brokerd audit verify' (which waits for the log's writers' lock, reads and exits), and
//     believes it only with brokerd's group from the kernel.
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
// # Busy is not broken
//
// brokerd and the host are given as long to answer as the CLI gives them ([Probes.Wait]). One
// that took the question (it holds its lock, the socket accepted) and has not answered by then
// is busy — a loaded machine, a long verb, a stopped process — a warning; only an answer that
// is not the daemon's, or a listener no daemon stands behind, fails the report. A slow answer
// is healthy, its time in the detail.
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
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/config"
	"github.com/headless-dev/headless/internal/keyprobe"
	"github.com/headless-dev/headless/internal/lockfile"
	"github.com/headless-dev/headless/internal/xdg"
)

// Format is the version of the report's shape. It changes only when a field changes meaning.
const Format = 1

// DefaultWait is how long brokerd and the host may take to answer by default: as long as
// every other command of the CLI waits for them.
const DefaultWait = 2 * time.Minute

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
	// Timeout bounds each question to the bus (default 3 s).
	Timeout time.Duration
	// Wait is how long brokerd and the host may take to answer: as long as the CLI waits for
	// them (default 2 min). One that accepts the question and has not answered by then is
	// busy (a warning), not broken: only an answer that is not theirs fails the report.
	Wait time.Duration
	// Slow: an answer that took longer is noted in the check's detail (default 2 s).
	Slow time.Duration
	// AuditVerify checks the audit log with brokerd's key: the installed brokerd, run once
	// ('brokerd audit verify', which reads and exits), believed only with its group from the
	// kernel (cli.BrokerdAudit); nil: not checked.
	AuditVerify func(ctx context.Context) (audit.Outcome, error)
}

// Run runs every check and returns the report.
func Run(ctx context.Context, p Probes) Report {
	if p.Timeout <= 0 {
		p.Timeout = 3 * time.Second
	}
	if p.Wait <= 0 {
		p.Wait = DefaultWait
	}
	if p.Slow <= 0 {
		p.Slow = 2 * time.Second
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
	brokerAns answer

	hostListening bool
	host          *control.Status
	hostAns       answer

	prof    control.ProfileFacts // the durable profile, LockPID the live host holding it
	profErr error
	profNil bool // no Profile probe
}

// answer is how a daemon took the doctor's question.
type answer struct {
	took time.Duration
	err  error
}

// busy: the daemon took the question and did not answer within the wait (or its backlog
// was full): a slow daemon, not a wrong one.
func (a answer) busy() bool {
	return errors.Is(a.err, context.DeadlineExceeded) || errors.Is(a.err, context.Canceled) || errors.Is(a.err, syscall.EAGAIN)
}

// slowly notes an answer that took longer than slow ("" otherwise).
func (a answer) slowly(slow time.Duration) string {
	if a.took <= slow {
		return ""
	}
	return fmt.Sprintf(" (after %s: busy)", a.took.Round(100*time.Millisecond))
}

// ask asks a daemon q, bounded by wait.
func ask[R any](ctx context.Context, wait time.Duration, q func(context.Context) (R, error)) (*R, answer) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	start := time.Now()
	r, err := q(ctx)
	a := answer{took: time.Since(start), err: err}
	if err != nil {
		return nil, a
	}
	return &r, a
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
	if d.p.Profile != nil && d.linux() {
		d.prof, d.profErr = d.p.Profile()
	} else {
		d.profNil = true
	}
	// brokerd and the host are asked at once: a busy one costs the wait once.
	var wg sync.WaitGroup
	if pid := lockfile.Owner(d.p.Layout.BrokerLock()); pid > 0 && d.p.Alive(pid) {
		d.brokerPID = pid
		if d.p.Broker != nil {
			wg.Go(func() { d.broker, d.brokerAns = ask(d.ctx, d.p.Wait, d.p.Broker) })
		}
	}
	if ok, err := d.p.Listening(d.p.Layout.ControlSocket()); ok || err != nil && exists(d.p.Layout.ControlSocket()) {
		d.hostListening = true
		if d.p.Host != nil {
			wg.Go(func() { d.host, d.hostAns = ask(d.ctx, d.p.Wait, d.p.Host) })
		}
	}
	wg.Wait()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
