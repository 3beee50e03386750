package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/config"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/keyprobe"
	"github.com/headless-dev/headless/internal/logfile"
	"github.com/headless-dev/headless/internal/safesock"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/internal/xdg"
)

// DefaultChromium is Debian's Chromium binary (its /usr/bin/chromium wrapper adds flags and
// exports API keys, so it is not used). The config's "chromium" key chooses another; no
// environment variable can.
const DefaultChromium = config.DefaultChromium

// RunOptions configure Run.
type RunOptions struct {
	Getenv  func(string) string // the environment (Chromium's allowlisted variables, the bus)
	Layout  xdg.Layout          // the files (built once in main from the same environment)
	Notify  io.WriteCloser      // receives one Ready or error line, then is closed; may be nil
	Stderr  io.Writer
	Version string
	// Allow is the navigation allowlist 'headless start --allow' asked for (nil: the
	// config's "allow", if any). It may narrow the config's list, never widen it.
	Allow []string
	// Window: the browser shows its sessions' windows on the person's display, which
	// brokerd put in the environment (DISPLAY, WAYLAND_DISPLAY, XAUTHORITY); NO_DISPLAY
	// without one (window.go).
	Window bool
	// Lifeline, when set, is the read end of a pipe whose write end only the brokerd that
	// started this host holds: EOF there (brokerd stopped, crashed or was killed) shuts the
	// host down gracefully, so a host never outlives the brokerd that vouches for it.
	Lifeline io.ReadCloser
}

// Run is the host process: it starts the host, serves control.sock until SIGTERM, SIGINT or a
// shutdown request, then closes Chromium gracefully. It returns the exit status.
func Run(ctx context.Context, o RunOptions) int {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if o.Lifeline != nil {
		lctx, brokerGone := context.WithCancel(ctx)
		ctx = lctx
		go func() {
			io.Copy(io.Discard, io.LimitReader(o.Lifeline, 1<<10)) // brokerd never writes: this returns at EOF
			brokerGone()
		}()
	}
	notified := false
	fail := func(err error) int {
		we := wireForm(err)
		if o.Notify != nil && !notified {
			b, _ := json.Marshal(struct {
				Error *wire.Error `json:"error"`
			}{we})
			o.Notify.Write(append(b, '\n'))
			o.Notify.Close()
		}
		fmt.Fprintf(o.Stderr, "headless host: error: %s\nhint: %s\n", we.Message, we.Hint)
		return 1
	}
	getenv, layout := o.Getenv, o.Layout
	if err := safesock.EnsureDir(layout.Runtime, layout.UID); err != nil {
		return fail(wire.Errorf(wire.CodeRuntimeDir, "%w", err))
	}
	lf, err := logfile.Open(layout.HostLog(), 1<<20)
	if err != nil {
		return fail(wire.Errorf(wire.CodeRuntimeDir, "%w", err))
	}
	defer lf.Close()
	log := slog.New(slog.NewTextHandler(lf, nil))
	if _, err := layout.Profile(); err != nil {
		return fail(err)
	}
	cfgPath, err := layout.Config()
	if err != nil {
		return fail(wire.Errorf(wire.CodeConfigInvalid, "%w", err))
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return fail(wire.Errorf(wire.CodeConfigInvalid, "%w", err))
	}
	allow, err := navAllowlist(o.Allow, cfg.Allow)
	if err != nil {
		return fail(err)
	}
	bus, busErr := keyprobe.SessionBusAddress(getenv) // "" → keyprobe.Check reports VAULT_UNAVAILABLE
	if busErr != nil && getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return fail(wire.Errorf(wire.CodeVaultUnavail, "%w; Chromium was not launched", busErr)) // an address refused, not a missing one
	}
	chromium := cfg.ChromiumPath()
	// Chromium's environment: only allowlisted names (brokerapi.ChromiumEnv; cdp adds TMPDIR and
	// its own XDG_CONFIG_HOME). The bus carries Chromium's cookie key in the Secret Service.
	var env []string
	names := []string{"TMPDIR"}
	for _, k := range brokerapi.ChromiumEnv {
		v := getenv(k)
		switch k {
		case "TMPDIR":
			continue
		case "DBUS_SESSION_BUS_ADDRESS":
			v = bus
		case "PATH":
			v = hardening.SystemPath // never the user's: see hardening.SystemPath
		case "HOME", "XDG_DATA_HOME":
			// Not the user's: NSS loads every PKCS#11 module listed in ~/.pki/nssdb or
			// $XDG_DATA_HOME/pki/nssdb into the browser process, and any process of the
			// user can list one there (red-team round 6d ran code in the browser so and read
			// the typed password off the DevTools pipe). Chromium gets a home nobody can
			// create anything in.
			v = ChromiumHome
		case "XDG_CACHE_HOME":
			continue // under ChromiumHome, like the rest
		case "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY":
			continue // only with a window: displayEnv
		}
		if v != "" {
			env = append(env, k+"="+v)
			names = append(names, k)
		}
	}
	platform := ""
	if o.Window {
		var denv []string
		if platform, denv, err = displayEnv(getenv); err != nil {
			return fail(err)
		}
		for _, kv := range denv {
			env = append(env, kv)
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
	}
	hello := brokerapi.HelloParams{Chromium: chromium, ChromiumEnv: names, Config: cfgPath, Version: o.Version}
	sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	h, err := Start(sctx, Options{
		Layout: layout, Chromium: chromium, BusAddress: bus, Env: env,
		AllowDirectPasswordFill: cfg.AllowDirectPasswordFill, Log: log, Version: o.Version, Allow: allow, Window: platform,
		// Every broker connection first says how this host runs; brokerd releases nothing on
		// a connection where that disagrees with its own config (PEER_NOT_HOST with the
		// reason), but the rest (challenges, lists) still works, so the reason reaches the
		// person at the first login.
		Broker: func(ctx context.Context) (*brokerapi.Client, error) {
			c, err := brokerapi.Dial(ctx, layout.BrokerSocket())
			if err != nil {
				return nil, err
			}
			if err := c.Call(ctx, brokerapi.MethodHostHello, hello, nil); err != nil {
				if wire.CodeOf(err) != wire.CodePeerNotHost {
					c.Close()
					return nil, err
				}
				log.Warn("brokerd will release nothing to this host", "reason", err.Error())
			}
			return c, nil
		},
	})
	cancel()
	if err != nil {
		log.Error("start failed", "err", err)
		return fail(err)
	}
	closeHost := func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.Close(cctx); err != nil {
			log.Error("close browser", "err", err)
		}
	}
	l, err := safesock.Listen(layout.ControlSocket())
	if err != nil {
		closeHost()
		var inUse *safesock.InUseError
		if errors.As(err, &inUse) {
			return fail(wire.Errorf(wire.CodeProfileLocked, "another host (pid %d) serves %s", inUse.PID, inUse.Path))
		}
		return fail(wire.Errorf(wire.CodeRuntimeDir, "%w", err))
	}
	defer l.Close()
	st := h.Status()
	if o.Notify != nil {
		b, _ := json.Marshal(struct {
			Ready control.Ready `json:"ready"`
		}{st.Ready()})
		o.Notify.Write(append(b, '\n'))
		o.Notify.Close()
		notified = true
	}
	log.Info("serving", "pid", st.PID, "profile", st.Profile, "chromium", st.Chromium, "chromium_path", chromium)
	sctx, shutdown := context.WithCancel(ctx)
	defer shutdown()
	srv := &Server{Host: h, Log: log, Shutdown: shutdown}
	err = srv.Serve(sctx, l, layout.UID)
	closeHost()
	if err != nil {
		log.Error("serve", "err", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

// ChromiumHome is Chromium's HOME (and XDG_DATA_HOME): a path under /proc, where nobody, root
// included, can create a file, so nothing of the user's — NSS's module list and certificate
// database above all — is read from there. Chromium runs without a user certificate
// database: only its own root store (client certificates in the user's NSS database are not
// offered).
const ChromiumHome = "/proc/headless-chromium-has-no-home"
