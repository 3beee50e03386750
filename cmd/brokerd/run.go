package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/headless-dev/headless/challenge"
	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/broker/gate"
	"github.com/headless-dev/headless/internal/broker/hostproc"
	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/broker/seal"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/config"
	"github.com/headless-dev/headless/internal/filestore"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/keyprobe"
	"github.com/headless-dev/headless/internal/lockfile"
	"github.com/headless-dev/headless/internal/logfile"
	"github.com/headless-dev/headless/internal/loopback"
	"github.com/headless-dev/headless/internal/safesock"
	"github.com/headless-dev/headless/internal/version"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/internal/xdg"
	"github.com/headless-dev/headless/vault"
)

const usage = `brokerd — the headless credential broker (one per user)

Usage:
    brokerd              run in the foreground until SIGTERM or SIGINT
    brokerd --auto       the same, marked as started by headless (what 'headless' runs when
                         no brokerd answers): prompts then appear only where the config says,
                         and 'headless stop' stops it
    brokerd --version    print the version
    brokerd audit verify [--json]
                         check the audit log with the key and the anchor (read-only; exit 1
                         at the first problem, naming the record and how); 'headless audit
                         verify' runs it, and believes it only with brokerd's group
    brokerd --help       print this help

brokerd listens on $XDG_RUNTIME_DIR/headless/broker.sock (fallback /tmp/headless-$UID/),
or serves the socket systemd passes it (socket activation, contrib/systemd/user: LISTEN_FDS,
only that path, mode 0600; 'headless stop' leaves such a brokerd running), accepts only
connections from its own uid, and is the only process that reads passwords
from the Secret Service. 'headless' starts it (with --auto) when it is not running.

brokerd starts the browser host itself ('headless start' asks it to): the headless binary
beside brokerd, checked (root-owned, set-gid to the headless group, the headless built together
with this brokerd) and executed from the very file it checked. Passwords are released only to
that process, and only while the kernel reports the headless group for its connection
(PEER_NOT_HOST for anything else, audited). When brokerd stops, however it stops, the host it
started shuts down.

Every saved secret is sealed with the seal key in /etc/headless/seal.key, which only the
headless-broker group reads: brokerd is installed set-gid to it, and the kernel grants the group
only to an exec that is not traced, not inside a user namespace and not under no_new_privs. A
brokerd without the key releases and saves nothing (BROKER_UNTRUSTED).

Where presence prompts appear: "presence.display", "presence.wayland_display" and
"presence.xauthority" in the config. A brokerd you start yourself falls back to its own
environment and terminal; one started by headless (--auto, perhaps for an agent's verb)
never passes its environment's DISPLAY, WAYLAND_DISPLAY, XAUTHORITY or bus address to the
pinentry, nor uses a terminal. The browser's windows ('headless start --window', or "window":
true in the config) appear on that same display; without one the start fails NO_DISPLAY.

Presence (who approves each release) is chosen only in $XDG_CONFIG_HOME/headless/config.json:
    {"presence": {"provider": "secret-service"}}
    {"presence": {"provider": "pinentry", "program": "/usr/bin/pinentry-curses"}}
secret-service keeps the credentials in a dedicated 'headless' keyring that stays locked; each
release unlocks it through the keyring's own prompt (you type that keyring's password), reads,
and locks it again. With no provider chosen, brokerd uses secret-service when the session has
a Secret Service with a system prompter (gcr-prompter), else none: every release then fails
with PRESENCE_UNAVAILABLE. The pinentry provider shows its prompt on the terminal brokerd was
started from (its standard input), if any.

Files:
    broker.sock, broker.lock, brokerd.log (bounded: 1 MiB + one rotated generation)
    in the runtime dir; audit.jsonl and, with secret-service presence, credentials.json
    (the locked keyring's record metadata, never a password) in $XDG_DATA_HOME/headless/;
    login-paths.json (each credential's known sign-in paths), audit/log-*.anchor (the
    newest and oldest record of each audit log) and audit/log-*.decided (the person's
    decisions in it, 64 of each kind) in /var/lib/headless/UID/, which only
    brokerd's group can reach (the install makes /var/lib/headless; a brokerd that cannot
    use it releases and saves nothing). Every audit record carries a MAC under a key derived
    from the seal key; a brokerd without the key keeps no audit log.

Exit status: 0 after a clean stop; 1 on a start-up error (another brokerd running,
unsafe runtime dir, invalid config); 2 on a usage error.
`

const logMax = 1 << 20

// run is brokerd. getenv is its environment (for the processes it starts and where prompts
// appear); layout names its files (built once, in main, from the same environment).
func run(ctx context.Context, args []string, stdin *os.File, stdout, stderr io.Writer, getenv func(string) string, layout xdg.Layout) int {
	fs := flag.NewFlagSet("brokerd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	showVersion := fs.Bool("version", false, "print the version")
	auto := fs.Bool("auto", false, "started by headless, not by the person")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "brokerd: error: %v\nhint: run 'brokerd --help'\n", err)
		return 2
	}
	if fs.NArg() >= 1 && fs.Arg(0) == "audit" {
		return auditCommand(fs.Args()[1:], stdout, stderr, layout)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "brokerd: error: unexpected argument %q\nhint: run 'brokerd --help'\n", fs.Arg(0))
		return 2
	}
	if *showVersion {
		fmt.Fprintf(stdout, "brokerd %s\n", version.String())
		return 0
	}
	// Catch SIGTERM before anything exists that a stop must clean up (socket, lock).
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// brokerd's working set is tiny; a lower GC target keeps its heap (and RSS) small
	// after bursts, without the thrashing a hard memory limit caused under 64 connections.
	debug.SetGCPercent(50)
	fail := func(code wire.Code, format string, a ...any) int {
		fmt.Fprintf(stderr, "brokerd: error: %s\nhint: %s\n", fmt.Sprintf(format, a...), wire.Hint(code))
		return 1
	}

	if err := safesock.EnsureDir(layout.Runtime, layout.UID); err != nil {
		return fail(wire.CodeRuntimeDir, "%v", err)
	}
	unlock, err := lockfile.Lock(layout.BrokerLock())
	if err != nil {
		var held *lockfile.HeldError
		if errors.As(err, &held) {
			return fail(wire.CodeBrokerRunning, "brokerd is already running (pid %d)", held.PID)
		}
		return fail(wire.CodeRuntimeDir, "%v", err)
	}
	defer unlock()
	lf, err := logfile.Open(layout.BrokerLog(), logMax)
	if err != nil {
		return fail(wire.CodeRuntimeDir, "%v", err)
	}
	defer lf.Close()
	log := slog.New(slog.NewTextHandler(lf, nil))
	fatal := func(code wire.Code, format string, a ...any) int {
		log.Error("start failed", "code", code, "err", fmt.Sprintf(format, a...))
		return fail(code, format, a...)
	}

	cfgPath, err := layout.Config()
	if err != nil {
		return fatal(wire.CodeConfigInvalid, "%v", err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return fatal(wire.CodeConfigInvalid, "%v", err)
	}
	auditPath, err := layout.AuditLog()
	if err != nil {
		return fatal(wire.CodeConfigInvalid, "%v", err)
	}
	index, _ := layout.CredentialsIndex() // resolved whenever AuditLog is
	self, err := os.Executable()
	if err != nil {
		return fatal(wire.CodeInternal, "find brokerd's own executable: %v", err)
	}
	// The host, and the shim the pinentry runs through: the headless installed beside brokerd.
	hostProgram := filepath.Join(filepath.Dir(self), "headless")
	// Finding the Secret Service and choosing the keyring's provider takes a connection and
	// a few calls: when the config leaves that to brokerd, or names the secret-service
	// provider, brokerd answers meanwhile (it can start the host), and every other request
	// waits for it (Server.Pending). The other providers are known from the config alone.
	var (
		store   vault.Store
		prov    presence.Provider
		look    *vaultLook // the look for the Secret Service, when it runs meanwhile
		pending chan struct{}
	)
	switch cfg.Presence.Provider {
	case config.ProviderAuto, config.ProviderSecretService:
		look = lookForVault(ctx, cfg, index, getenv, log, func() (presence.Provider, error) {
			return newProvider(cfg, stdin, getenv, *auto, hostProgram)
		})
		defer look.close()
		pending = make(chan struct{})
	default:
		var closeStore func()
		store, prov, closeStore = openVault(ctx, cfg, index, getenv, log)
		defer closeStore()
		if prov == nil {
			if prov, err = newProvider(cfg, stdin, getenv, *auto, hostProgram); err != nil {
				return fatal(wire.CodeConfigInvalid, "%v", err)
			}
		}
	}
	// No secret goes through a brokerd the kernel did not give its group: only such a brokerd
	// reads the seal key, and so opens or seals anything (a traced, namespaced or copied
	// brokerd has no key). Everything that needs the key is refused with the reason.
	key, hostGID, untrusted := trust()
	defer key.Zero()
	// Nor through one that cannot keep the credentials' sign-in paths where no program of the
	// user can write them: it could not refuse a sign-in form at another path of the origin.
	paths, noPaths := loginPaths(layout.UID)
	if noPaths != "" {
		log.Warn("the credentials' sign-in paths cannot be kept", "reason", noPaths)
		if untrusted == "" {
			key.Zero()
			key, untrusted = nil, noPaths
		}
	}
	// Nor through one that cannot anchor the audit log where no program of the user can
	// reach it: its records could be cut unseen.
	var anchors *auditwriter.Anchors
	if untrusted == "" {
		if anchors, err = auditwriter.OpenAnchors(hardening.StateDir, layout.UID); err != nil {
			key.Zero()
			key, untrusted = nil, "brokerd cannot keep the audit log's anchors: "+err.Error()
		}
	}
	if untrusted != "" {
		log.Warn("no secret will be released or saved", "reason", untrusted)
		fmt.Fprintf(stderr, "brokerd: warning: no secret will be released or saved: %s\nhint: %s\n", untrusted, wire.Hint(wire.CodeBrokerUntrusted))
	}
	bus, _ := keyprobe.SessionBusAddress(getenv)
	hosts := hostproc.New(hostproc.Options{
		Program: hostProgram, Group: hostGID, Version: version.String(), Env: hostEnv(getenv, bus),
		LogPath: layout.HostLog(), Log: log,
	})
	// However brokerd stops (SIGKILL aside: then the host sees its lifeline close), the host
	// it started goes first, gracefully.
	defer hosts.Stop()
	// The audit log: every record with its MAC under the user's audit key, its ends anchored
	// in the state dir. A brokerd without the key keeps none: it releases and saves nothing,
	// and what it wrote could be anyone's (brokerd.log has its refusals).
	var auditLog gate.Auditor = unaudited{log}
	if untrusted == "" {
		akey := seal.AuditKey(key, layout.UID)
		l, err := auditwriter.Open(auditwriter.Options{Path: auditPath, Key: akey, Anchors: anchors})
		clear(akey)
		if err != nil {
			// Its own code and hint: NO_SPACE says what is full, AUDIT_UNAVAILABLE what is wrong.
			we := wire.From(err)
			log.Error("start failed", "code", we.Code, "err", err)
			fmt.Fprintf(stderr, "brokerd: error: open the audit log: %v\nhint: %s\n", err, we.Hint)
			return 1
		}
		defer l.Close()
		auditLog = l
	}

	// The socket appears only once everything behind it is ready. Under systemd socket
	// activation (brokerd.socket) the socket is inherited instead, checked, and left to
	// systemd when brokerd stops; peer uids are checked on every connection either way.
	sockPath := layout.BrokerSocket()
	started := brokerapi.StartedPerson
	if *auto {
		started = brokerapi.StartedAuto
	}
	var l net.Listener
	if il, err := safesock.Inherited(getenv, os.Getpid(), sockPath, layout.UID); err != nil {
		return fatal(wire.CodeRuntimeDir, "%v", err)
	} else if il != nil {
		l, started = il, brokerapi.StartedSystemd
	} else {
		sl, err := safesock.Listen(sockPath)
		if err != nil {
			var inUse *safesock.InUseError
			if errors.As(err, &inUse) {
				return fatal(wire.CodeBrokerRunning, "brokerd is already running (pid %d)", inUse.PID)
			}
			return fatal(wire.CodeRuntimeDir, "%v", err)
		}
		l = sl
	}
	defer l.Close()

	srv := &gate.Server{
		Vault:      store,
		Presence:   prov,
		Pending:    pending,
		Challenges: challenge.New(challenge.Options{TTL: cfg.ChallengeTTL()}),
		Log:        log,
		Version:    version.String(),
		PID:        os.Getpid(),
		Audit:      auditLog,
		Hosts:      hosts,
		Expect: gate.HostExpect{Chromium: cfg.ChromiumPath(), Config: cfgPath, Version: version.String(),
			CheckChromium: hostproc.CheckChromium},
		Started:   started,
		Facts:     func() hardening.Report { return hardening.Facts(self, hostProgram) },
		Loopback:  loopback.Finder{},
		Key:       key,
		Untrusted: untrusted,
		Paths:     paths,
		FileStore: filestore.Store{Runtime: layout.Runtime}.Path(),
		// The browser's windows appear where the prompts do, never where an agent says.
		Window:          gate.WindowSetup{Default: cfg.Window, Display: windowDisplay(getenv, cfg.Presence, *auto)},
		HandoverTimeout: cfg.HandoverTimeout(),
	}
	if look != nil {
		go func() {
			defer close(pending)
			<-look.done
			srv.Vault, srv.Presence = look.store, look.prov
			lockAtStart(ctx, look.prov, auditLog, log, stderr)
			log.Info("presence", "provider", look.prov.Name())
		}()
	} else {
		lockAtStart(ctx, prov, auditLog, log, stderr)
	}
	presenceName := "being chosen"
	if prov != nil {
		presenceName = prov.Name()
	}
	log.Info("started", "pid", os.Getpid(), "version", srv.Version, "socket", sockPath, "presence", presenceName, "config", cfgPath,
		"started_by", started, "host_program", hostProgram)
	fmt.Fprintf(stderr, "brokerd: listening on %s (pid %d, presence %s)\n", sockPath, os.Getpid(), presenceName)
	if err := srv.Serve(ctx, l, layout.UID); err != nil {
		log.Error("serve", "err", err)
		return fail(wire.CodeInternal, "%v", err)
	}
	log.Info("stopped")
	return 0
}

// vaultLook is openVault run in the background: done is closed when store and prov are set.
type vaultLook struct {
	done       chan struct{}
	store      vault.Store
	prov       presence.Provider
	closeStore func()
}

// lookForVault starts openVault; a look that finds no provider takes fallback's (the
// configured choice's answer without a Secret Service: none, or unavailable).
func lookForVault(ctx context.Context, cfg config.Config, index string, getenv func(string) string, log *slog.Logger, fallback func() (presence.Provider, error)) *vaultLook {
	l := &vaultLook{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.store, l.prov, l.closeStore = openVault(ctx, cfg, index, getenv, log)
		if l.prov == nil {
			p, err := fallback()
			if err != nil {
				p = presence.Unavailable{Provider: cfg.Presence.Provider, Reason: err.Error()}
			}
			l.prov = p
		}
	}()
	return l
}

// close waits for the look (openVault is bounded) and closes what it opened.
func (l *vaultLook) close() {
	<-l.done
	l.closeStore()
}

// lockAtStart locks the keyring of the secret-service provider when it is unlocked, and says
// so: a brokerd killed or stopped inside a release's window leaves it unlocked, and its unlock
// is not per caller.
func lockAtStart(ctx context.Context, prov presence.Provider, auditLog gate.Auditor, log *slog.Logger, stderr io.Writer) {
	ss, ok := prov.(*presence.SecretService)
	if !ok {
		return
	}
	if was, err := ss.LockIfUnlocked(ctx); err != nil {
		log.Warn("could not check or lock the headless keyring at start", "err", err)
	} else if was {
		const what = "the headless keyring was unlocked when brokerd started (a brokerd stopped or killed during a release, or another program unlocked it): locked it"
		log.Warn(what)
		fmt.Fprintf(stderr, "brokerd: warning: %s\n", what)
		if err := auditLog.Append(auditwriter.Record{Op: "lock", Decision: "ok", Provider: prov.Name(), Detail: what}); err != nil {
			log.Error("audit append failed", "op", "lock", "err", err)
		}
	}
}

// newProvider builds the configured presence provider. Only the config file chooses it, and
// with auto (started by headless) only the config says where the prompt appears.
//
// The pinentry is started through shim, the installed headless binary ('headless pinentry-exec'):
// it runs with the headless group, so the kernel keeps every process of the user out of its
// memory (and out of the answers typed into it), and without brokerd's group, so it cannot read
// the seal key.
func newProvider(cfg config.Config, stdin *os.File, getenv func(string) string, auto bool, shim string) (presence.Provider, error) {
	switch cfg.Presence.Provider {
	case config.ProviderPinentry, config.ProviderPassphrase:
		tty := ""
		if !auto && stdin != nil && term.IsTerminal(int(stdin.Fd())) {
			if p, err := os.Readlink("/proc/self/fd/0"); err == nil && strings.HasPrefix(p, "/dev/") {
				tty = p
			}
		}
		o := presence.PinentryOptions{
			Program: cfg.Presence.Program,
			Timeout: cfg.PresenceTimeout(),
			TTY:     tty,
			TTYType: getenv("TERM"),
			Env:     pinentryEnv(getenv, cfg.Presence, auto),
			Exposed: memoryOpen,
			Via:     shim,
		}
		// The program the person answers — and, under passphrase, types the passphrase
		// into — must be one no program of the user's can replace with a wrapper.
		if err := hardening.CheckPinentry(cfg.Presence.Program); err != nil {
			why := "the pinentry program is refused: " + err.Error() +
				" (the shim starts only a root-owned program named pinentry* in a directory only root can write: a program of yours could put a wrapper in its place that answers, or reads what is typed)"
			return refused(cfg.Presence.Provider, cfg.Presence.Provider, why,
				`name a root-owned pinentry in a directory only root can write as "program" in the config's "presence" (e.g. /usr/bin/pinentry-gnome3 or /usr/bin/pinentry-curses); 'headless doctor' checks it`), nil
		}
		if cfg.Presence.Provider == config.ProviderPassphrase {
			return presence.NewPassphrase(o)
		}
		return presence.NewPinentry(o)
	case config.ProviderSecretService:
		// openVault builds it when the Secret Service can be reached.
		return presence.Unavailable{Provider: "secret-service", Reason: "no Secret Service is reachable on the session bus"}, nil
	default:
		return presence.None{}, nil
	}
}

// pinentryEnv passes only what a pinentry needs to find its display or terminal. The display
// comes from the config; without it, a brokerd the person started uses its own environment,
// and one started by headless (auto: perhaps for an agent's verb, in the agent's environment)
// passes no display, X authority or bus address at all, so the agent never chooses where the
// prompt appears.
func pinentryEnv(getenv func(string) string, p config.Presence, auto bool) []string {
	env := []string{"PATH=" + hardening.SystemPath} // never the user's: see hardening.SystemPath
	for _, k := range []string{"HOME", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "XDG_RUNTIME_DIR"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, displayEnv(getenv, p, auto)...)
	switch v := getenv("DBUS_SESSION_BUS_ADDRESS"); {
	case auto || v == "":
	case keyprobe.CheckAddress(v) != nil:
		// Not a single unix address: a unixexec: entry would start a program with the
		// pinentry's group (keyprobe.CheckAddress).
	default:
		env = append(env, "DBUS_SESSION_BUS_ADDRESS="+v)
	}
	return env
}

// displayEnv is where the person is: each of DISPLAY, WAYLAND_DISPLAY and XAUTHORITY from the
// config's presence keys, else, for a brokerd the person started, from its own environment; a
// brokerd headless started (auto: perhaps for an agent's verb, in the agent's environment)
// takes none from its environment. The pinentry is shown there, and so are the browser's
// windows ('headless start --window').
func displayEnv(getenv func(string) string, p config.Presence, auto bool) []string {
	var env []string
	for _, d := range []struct{ key, config string }{{"DISPLAY", p.Display}, {"WAYLAND_DISPLAY", p.WaylandDisplay}, {"XAUTHORITY", p.XAuthority}} {
		switch v := getenv(d.key); {
		case d.config != "":
			env = append(env, d.key+"="+d.config)
		case !auto && v != "":
			env = append(env, d.key+"="+v)
		}
	}
	return env
}

// windowDisplay is displayEnv when it names a display (X11 or Wayland), else nil: the
// browser's windows need one.
func windowDisplay(getenv func(string) string, p config.Presence, auto bool) []string {
	env := displayEnv(getenv, p, auto)
	for _, kv := range env {
		if strings.HasPrefix(kv, "DISPLAY=") || strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
			return env
		}
	}
	return nil
}

// hostEnv is the complete environment of the browser host: what it needs to find its dirs,
// its config and the Secret Service (the bus brokerd itself uses), nothing else.
func hostEnv(getenv func(string) string, bus string) []string {
	env := []string{"PATH=" + hardening.SystemPath} // never the user's: see hardening.SystemPath
	for _, k := range []string{"HOME", "LANG", "LC_ALL", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	if bus != "" {
		env = append(env, "DBUS_SESSION_BUS_ADDRESS="+bus)
	}
	return env
}

// memoryOpen says whether the user's processes can read process pid's memory (a pinentry the
// passphrase is about to be typed into): asked with the user's own gid, not brokerd's group.
// Root reads every process's memory, so for brokerd run as root the question means nothing
// and the answer is no (SECURITY.md: root is never kept out).
func memoryOpen(pid int) (bool, error) {
	if os.Geteuid() == 0 {
		return false, nil
	}
	return hardening.MemoryOpenAs(pid, os.Getgid())
}

// trust reads the seal key and the host group, and says why this brokerd may not be trusted
// with secrets ("" when it may). As root the key is read (root is kept out of nothing); as
// any other user the kernel must have given brokerd the key's group, which the user is not a
// member of.
func trust() (key *seal.Key, hostGID int, untrusted string) {
	hostGID, gerr := hardening.LookupGroup(hardening.HostGroup)
	if gerr != nil {
		hostGID = noGroup
	}
	key, kf, err := seal.LoadKey(hardening.KeyPath)
	egid, granted := hardening.Granted()
	switch {
	case err != nil && errors.Is(err, seal.ErrKeyDenied) && !granted && os.Getuid() != 0:
		untrusted = "the kernel did not give this brokerd its group (" + hardening.BrokerGroup + "), so it may not read the seal key: it was not installed set-gid, or it was started under a tracer, inside a user namespace or with no_new_privs (" + err.Error() + ")"
	case err != nil:
		untrusted = err.Error()
	case os.Getuid() != 0 && (!granted || egid != kf.GID):
		untrusted = fmt.Sprintf("brokerd runs with group %d, not the seal key's group %d", egid, kf.GID)
	case hardening.InGroup(kf.GID):
		untrusted = "you are a member of the seal key's group (" + hardening.BrokerGroup + "): every program of yours can read the key; remove yourself from it"
	case gerr != nil:
		untrusted = gerr.Error()
	case hardening.InGroup(hostGID):
		untrusted = "you are a member of the " + hardening.HostGroup + " group: every program of yours could pass for the browser host; remove yourself from it"
	}
	if untrusted != "" {
		key.Zero()
		return nil, hostGID, untrusted
	}
	return key, hostGID, ""
}

// loginPaths opens the credentials' known sign-in paths in brokerd's state directory
// (hardening.StateDir/UID), and says why this brokerd may not be trusted with secrets when it
// cannot ("" when it can).
func loginPaths(uid int) (*gate.LoginPaths, string) {
	gid, err := hardening.LookupGroup(hardening.BrokerGroup)
	if err == nil {
		err = hardening.CheckStateDir(hardening.StateDir, gid)
	}
	var lp *gate.LoginPaths
	if err == nil {
		lp, err = gate.OpenLoginPaths(hardening.StateDir, uid)
	}
	if err != nil {
		return nil, "brokerd cannot keep the credentials' sign-in paths: " + err.Error() +
			" (the install makes " + hardening.StateDir + ": run 'sudo scripts/install.sh' in a source checkout, or install the .deb)"
	}
	return lp, ""
}

// noGroup is a gid no process has: the host check when the host group does not exist.
const noGroup = 1 << 30

// refused is the provider that stands for the configured one when it may not ask: every
// prompt is ErrUnavailable with why. Under the passphrase provider it still has Ask, so that
// nothing is saved unsealed for want of a prompt.
func refused(provider, name, why string, hint ...string) presence.Provider {
	h := strings.Join(hint, " ")
	if provider == config.ProviderPassphrase {
		return presence.UnavailablePassphrase{Reason: why, Hint: h}
	}
	return presence.Unavailable{Provider: name, Reason: why, Hint: h}
}
