package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/safesock"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/internal/xdg"
)

// BrokerDialer returns an Env.Broker that connects to brokerd's socket, starting brokerd
// (found next to this executable, else on PATH) when nothing listens there.
func BrokerDialer(layout xdg.Layout) func(ctx context.Context) (*brokerapi.Client, error) {
	return func(ctx context.Context) (*brokerapi.Client, error) {
		if err := safesock.EnsureDir(layout.Runtime, layout.UID); err != nil {
			return nil, wire.Errorf(wire.CodeRuntimeDir, "%w", err)
		}
		sock := layout.BrokerSocket()
		if c, err := dialLive(ctx, sock); err == nil {
			return c, nil
		}
		if err := startBroker(ctx, layout); err != nil {
			return nil, err
		}
		return brokerapi.Dial(ctx, sock)
	}
}

// dialLive connects to the brokerd at sock and has it answer a ping: a brokerd killed a moment
// ago may still accept a connection (its listening socket goes with its last thread) and then
// reset it, and that one must be taken for gone, not answered BROKER_UNAVAILABLE.
func dialLive(ctx context.Context, sock string) (*brokerapi.Client, error) {
	c, err := brokerapi.Dial(ctx, sock)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Ping(pctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// BrokerSocket returns an Env.DialBroker: it connects to a running brokerd and starts none.
func BrokerSocket(layout xdg.Layout) func(ctx context.Context) (*brokerapi.Client, error) {
	return func(ctx context.Context) (*brokerapi.Client, error) {
		return brokerapi.Dial(ctx, layout.BrokerSocket())
	}
}

// ControlSocket returns an Env.DialControl: it connects to the running host's control.sock.
func ControlSocket(layout xdg.Layout) func(ctx context.Context) (*control.Client, error) {
	return func(ctx context.Context) (*control.Client, error) { return control.Dial(ctx, layout) }
}

// StderrIsTerminal reports whether this process's stderr is a terminal (Env.StderrIsTerminal).
func StderrIsTerminal() bool {
	fi, err := os.Stderr.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func brokerdPath() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "brokerd")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath("brokerd")
}

// startBroker starts brokerd detached (own session, no terminal, output discarded: it logs to
// its bounded log file) and waits until its socket answers. It is marked --auto: started by
// headless, perhaps for an agent's verb, so it takes where prompts appear from the config
// only, never from this (possibly the agent's) environment, and 'headless stop' stops it.
// A brokerd killed a moment ago may still hold its lock while it dies (the lock goes with its
// last thread): the new one then exits, and is started again, a few times.
func startBroker(ctx context.Context, layout xdg.Layout) error {
	path, err := brokerdPath()
	if err != nil {
		return wire.Errorf(wire.CodeBrokerUnavail, "brokerd is not running and was not found next to headless or on PATH")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for attempt := 1; ; attempt++ {
		again, err := runBroker(ctx, layout, path)
		if !again || attempt == maxBrokerStarts {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}
}

// maxBrokerStarts bounds the brokerds one startBroker starts.
const maxBrokerStarts = 4

// runBroker starts one brokerd and waits until a brokerd answers on its socket (nil) or the
// one it started exits; again says that it exited while no live brokerd held the lock (one
// dying, or none any more), when another start may succeed.
func runBroker(ctx context.Context, layout xdg.Layout, path string) (again bool, err error) {
	sock := layout.BrokerSocket()
	cmd := exec.Command(path, "--auto")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return false, wire.Errorf(wire.CodeBrokerUnavail, "start brokerd: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// brokerd listens within tens of milliseconds: poll often at first, then every 20 ms.
	wait := time.Millisecond
	tick := time.NewTimer(wait)
	defer tick.Stop()
	for {
		if c, err := dialLive(ctx, sock); err == nil {
			c.Close()
			return false, nil
		}
		select {
		case err := <-exited:
			// Another CLI may have started brokerd at the same moment; ours then exits
			// because the other holds the lock. Keep waiting for that one's socket.
			if c, derr := dialLive(ctx, sock); derr == nil {
				c.Close()
				return false, nil
			}
			if pid := lockHolder(layout.BrokerLock()); pid > 0 && pid != cmd.Process.Pid {
				exited = nil
				continue
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return true, wire.Errorf(wire.CodeBrokerUnavail, "brokerd exited with status %d during start-up; see %s", ee.ExitCode(), layout.BrokerLog())
			}
			return false, wire.Errorf(wire.CodeBrokerUnavail, "brokerd exited during start-up: %w", err)
		case <-ctx.Done():
			return false, wire.Errorf(wire.CodeBrokerUnavail, "brokerd did not answer within 10s; see %s", layout.BrokerLog())
		case <-tick.C:
			wait = min(2*wait, 20*time.Millisecond)
			tick.Reset(wait)
		}
	}
}

// lockHolder returns the pid recorded in brokerd's lock file if that process is alive (not
// exiting: a zombie is not), else 0.
func lockHolder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || !procstat.Alive(pid) {
		return 0
	}
	return pid
}
