package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/headless-dev/headless/internal/broker"
	"github.com/headless-dev/headless/internal/config"
	"github.com/headless-dev/headless/internal/logfile"
	"github.com/headless-dev/headless/internal/safesock"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/profile"
	"github.com/headless-dev/headless/vault"
)

// DefaultChromium is Debian's Chromium binary (its /usr/bin/chromium wrapper adds flags and
// exports API keys, so it is not used).
const DefaultChromium = "/usr/lib/chromium/chromium"

// Ready is the one JSON line the host writes to its notify file when it is serving (or
// {"error":…} when it could not start).
type Ready struct {
	PID        int    `json:"pid"`
	Profile    string `json:"profile"`
	Chromium   string `json:"chromium"`
	MovedAside string `json:"profile_moved_aside,omitempty"`
	Reason     string `json:"profile_moved_aside_reason,omitempty"`

	MigratedFrom string                  `json:"profile_migrated_from,omitempty"`
	NotMigrated  []profile.LegacyProfile `json:"profile_not_migrated,omitempty"`
}

// RunOptions configure Run.
type RunOptions struct {
	Getenv  func(string) string
	Notify  io.WriteCloser // receives one Ready or error line, then is closed; may be nil
	Stderr  io.Writer
	Version string
}

// Run is the host process: it starts the host, serves control.sock until SIGTERM, SIGINT or a
// shutdown request, then closes Chromium gracefully. It returns the exit status.
func Run(ctx context.Context, o RunOptions) int {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	notified := false
	fail := func(err error) int {
		we := ToWire(err)
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
	getenv := o.Getenv
	dir := safesock.Dir(getenv)
	if err := safesock.EnsureDir(dir); err != nil {
		return fail(wire.Errorf(wire.CodeRuntimeDir, "%v", err))
	}
	lf, err := logfile.Open(filepath.Join(dir, "host.log"), 1<<20)
	if err != nil {
		return fail(wire.Errorf(wire.CodeRuntimeDir, "%v", err))
	}
	defer lf.Close()
	log := slog.New(slog.NewTextHandler(lf, nil))
	dataDir, err := profile.DataDir(getenv)
	if err != nil {
		return fail(err)
	}
	cfgPath, err := config.Path(getenv)
	if err != nil {
		return fail(wire.Errorf(wire.CodeConfigInvalid, "%v", err))
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return fail(wire.Errorf(wire.CodeConfigInvalid, "%v", err))
	}
	bus, _ := vault.SessionBusAddress(getenv) // "" → CheckKeyring reports VAULT_UNAVAILABLE
	chromium := getenv("HEADLESS_CHROMIUM")
	if chromium == "" {
		chromium = DefaultChromium
	}
	var env []string
	for _, k := range []string{"PATH", "HOME", "LANG", "LC_ALL", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	if bus != "" {
		env = append(env, "DBUS_SESSION_BUS_ADDRESS="+bus) // Chromium's cookie key lives in the Secret Service
	}
	sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	h, err := Start(sctx, Options{
		RunDir: dir, DataDir: dataDir, Chromium: chromium, BusAddress: bus, Env: env,
		AllowDirectPasswordFill: cfg.AllowDirectPasswordFill, Log: log, Version: o.Version,
		LegacyProfiles: profile.LegacyDirs(getenv),
		Broker: func(ctx context.Context) (*broker.Client, error) {
			return broker.Dial(ctx, filepath.Join(dir, "broker.sock"))
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
	l, err := safesock.Listen(filepath.Join(dir, "control.sock"))
	if err != nil {
		closeHost()
		var inUse *safesock.InUseError
		if errors.As(err, &inUse) {
			return fail(wire.Errorf(wire.CodeProfileLocked, "another host (pid %d) serves %s", inUse.PID, inUse.Path))
		}
		return fail(wire.Errorf(wire.CodeRuntimeDir, "%v", err))
	}
	defer l.Close()
	st := h.Status()
	if o.Notify != nil {
		b, _ := json.Marshal(struct {
			Ready Ready `json:"ready"`
		}{st.Ready()})
		o.Notify.Write(append(b, '\n'))
		o.Notify.Close()
		notified = true
	}
	log.Info("serving", "pid", st.PID, "profile", st.Profile, "chromium", st.Chromium)
	sctx, shutdown := context.WithCancel(ctx)
	defer shutdown()
	srv := &Server{Host: h, Log: log, Shutdown: shutdown}
	err = srv.Serve(sctx, l, os.Getuid())
	closeHost()
	if err != nil {
		log.Error("serve", "err", err)
		return 1
	}
	log.Info("stopped")
	return 0
}
