package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/allowlist"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// startResult is what 'headless start' did: Started is false when the host was running
// already.
type startResult struct {
	Started   bool           `json:"started"`
	Host      *control.Ready `json:"host"`
	BrokerPID int            `json:"broker_pid"`
}

// start starts brokerd (if needed) and has it start the host, and returns when both answer.
// brokerd starts and owns the host: passwords go only to the host process it started.
func (c *cmd) start(fs *flag.FlagSet) run {
	var allow listFlag
	fs.Var(&allow, "allow", "confine navigation to `HOST[:PORT][,…]` (repeatable; *.example.com: its subdomains; at most 32)")
	window := fs.Bool("window", false, "show the browser's windows on your display (where presence prompts appear), one per session")
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		var list []string
		if allow != nil {
			l, err := allowlist.Parse(allow)
			if err != nil {
				return nil, nil, usagef("--allow: %v", err)
			}
			list = l.Strings()
		}
		res, err := c.ensureStarted(ctx, c.env.StderrIsTerminal() && !c.json, list, *window)
		if err != nil {
			return nil, nil, err
		}
		return res, func(w io.Writer) {
			verb := "started"
			if !res.Started {
				verb = "already running"
			}
			fmt.Fprintf(w, "headless %s: host pid %d (%s), brokerd pid %d\nprofile: %s\n", verb, res.Host.PID, res.Host.Chromium, res.BrokerPID, res.Host.Profile)
			if res.Host.MovedAside != "" {
				fmt.Fprintf(w, "warning: the previous profile was unusable (%s) and was moved to %s\n", res.Host.Reason, res.Host.MovedAside)
			}
			migrationHuman(w, res.Host.MigratedFrom, res.Host.NotMigrated)
			allowHuman(w, res.Host.Allow)
			switch res.Host.Window {
			case "wayland":
				fmt.Fprintln(w, "windows: on your Wayland display, one per session, titled with its name")
			case "x11":
				fmt.Fprintln(w, "windows: on your X11 display, one per session, titled with its name\nwarning: under X11 any X client of yours can read these windows and type into them (SECURITY.md)")
			}
		}, nil
	}
}

// listFlag is a repeatable flag whose values are collected in order (nil: never given).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// allowHuman says what the navigation allowlist is.
func allowHuman(w io.Writer, allow []string) {
	if len(allow) > 0 {
		fmt.Fprintf(w, "navigation: only %s (a navigation policy for documents, not a network firewall)\n", strings.Join(allow, ", "))
	}
}

// ensureStarted starts brokerd (if needed) and has it start the host (if needed); progress
// says so on stderr when the host has to start.
// allow (nil: not asked for) is the navigation allowlist 'start --allow' asks for: a running
// host with another list refuses it; window asks for a browser with windows ('start --window').
func (c *cmd) ensureStarted(ctx context.Context, progress bool, allow []string, window bool) (startResult, error) {
	b, err := c.env.Broker(ctx)
	if err != nil {
		return startResult{}, err
	}
	defer b.Close()
	// host.start first: brokerd answers it while it still looks for the Secret Service, and
	// version waits for that look. A running host answers at once; one that has to start is
	// said so when it takes a while.
	if progress {
		done, said := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(said)
			select {
			case <-time.After(startProgressAfter):
				fmt.Fprintln(c.env.Stderr, "starting the browser host…")
			case <-done:
			}
		}()
		defer func() { close(done); <-said }()
	}
	var hs brokerapi.HostStartResult
	if err := b.Call(ctx, brokerapi.MethodHostStart, brokerapi.HostStartParams{Allow: allow, Window: window}, &hs); err != nil {
		return startResult{}, err
	}
	v, err := b.Version(ctx)
	if err != nil {
		return startResult{}, err
	}
	var ready control.Ready
	if err := json.Unmarshal(hs.Ready, &ready); err != nil {
		return startResult{}, wire.Errorf(wire.CodeHostUnavail, "the host's ready report is malformed: %w", err)
	}
	return startResult{Started: hs.Status != "running", Host: &ready, BrokerPID: v.PID}, nil
}

// startProgressAfter is how long a start runs before it says on a terminal that the host is
// starting.
const startProgressAfter = 200 * time.Millisecond

// stopResult is what 'headless stop' did.
type stopResult struct {
	Host   int `json:"host_pid"`
	Broker int `json:"broker_pid"`
	// BrokerLeftRunning is the pid of a brokerd the person started (not headless): stop
	// leaves it running, and Note says so.
	BrokerLeftRunning int    `json:"broker_left_running,omitempty"`
	Note              string `json:"note,omitempty"`
}

// stop closes the browser gracefully and stops the host, then brokerd if headless started it
// (--auto); a brokerd the person started is left running, and the output says so.
func (c *cmd) stop(fs *flag.FlagSet) run {
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		var res stopResult
		if sd, err := withHost(ctx, c, func(cl *control.Client) (control.ShutdownResult, error) { return cl.Shutdown(ctx) }); err == nil {
			res.Host = sd.PID
			if err := c.waitGone(ctx, sd.PID); err != nil {
				return nil, nil, err
			}
		}
		if b, err := c.env.DialBroker(ctx); err == nil {
			v, err := b.Version(ctx)
			b.Close()
			switch {
			case err != nil || v.PID <= 0:
			case v.Started == brokerapi.StartedSystemd:
				res.BrokerLeftRunning = v.PID
				res.Note = fmt.Sprintf("brokerd (pid %d) is run by systemd, not by headless: left running (systemctl --user stop brokerd.socket brokerd.service)", v.PID)
			case v.Started != brokerapi.StartedAuto:
				res.BrokerLeftRunning = v.PID
				res.Note = fmt.Sprintf("brokerd (pid %d) was started by you, not by headless: left running (stop it with kill -TERM %d)", v.PID, v.PID)
			default:
				res.Broker = v.PID
				c.env.Signal(v.PID, syscall.SIGTERM)
				if err := c.waitGone(ctx, v.PID); err != nil {
					return nil, nil, err
				}
			}
		}
		return struct {
				Stopped stopResult `json:"stopped"`
			}{res}, func(w io.Writer) {
				switch {
				case res.Host == 0 && res.Broker == 0 && res.BrokerLeftRunning == 0:
					fmt.Fprintln(w, "nothing was running")
				case res.BrokerLeftRunning != 0:
					fmt.Fprintf(w, "stopped (host pid %d)\n%s\n", res.Host, res.Note)
				default:
					fmt.Fprintf(w, "stopped (host pid %d, brokerd pid %d)\n", res.Host, res.Broker)
				}
			}, nil
	}
}

func (c *cmd) waitGone(ctx context.Context, pid int) error {
	for c.env.Alive(pid) {
		select {
		case <-ctx.Done():
			return wire.Errorf(wire.CodeTimeout, "pid %d did not exit", pid)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// brokerStatus is brokerd in 'headless status'.
type brokerStatus struct {
	Running  bool   `json:"running"`
	PID      int    `json:"pid,omitempty"`
	Version  string `json:"version,omitempty"`
	Presence string `json:"presence,omitempty"`
	Started  string `json:"started,omitempty"` // "auto" (by headless) or "person"
	// Facts are brokerd's doctor facts: undumpable, ptrace_scope, writable binaries.
	Facts *hardening.Report `json:"facts,omitempty"`
	// Untrusted says why brokerd releases and saves nothing (BROKER_UNTRUSTED); "" when it
	// holds the seal key.
	Untrusted string `json:"untrusted,omitempty"`
	// Problem: brokerd's socket answered, but not the question (BUSY: every connection taken).
	Problem *wire.Error `json:"problem,omitempty"`
}

// hostStatus is the host in 'headless status'.
type hostStatus struct {
	Running bool `json:"running"`
	*control.Status
	// Problem: the host's socket answered, but not the question (BUSY: every connection taken).
	Problem *wire.Error `json:"problem,omitempty"`
}

// answered is the problem of a daemon that answered with a typed error of its own (it runs),
// nil when err is nil or it could not be reached at all (it does not).
func answered(err error) *wire.Error {
	if err == nil || errors.Is(err, rpc.ErrUnreachable) {
		return nil
	}
	we := wire.From(err)
	if we.Code == wire.CodeHostUnavail || we.Code == wire.CodeBrokerUnavail {
		return nil
	}
	return &wire.Error{Code: we.Code, Message: we.Message, Hint: we.Hint}
}

// statusResult answers 'headless status'.
type statusResult struct {
	Host   hostStatus   `json:"host"`
	Broker brokerStatus `json:"broker"`
}

// status reports the host and brokerd without starting either.
func (c *cmd) status(fs *flag.FlagSet) run {
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		var res statusResult
		st, err := withHost(ctx, c, func(cl *control.Client) (control.Status, error) { return cl.Status(ctx) })
		if err == nil {
			res.Host = hostStatus{Running: true, Status: &st}
		} else if p := answered(err); p != nil {
			res.Host = hostStatus{Running: true, Problem: p}
		}
		if b, err := c.env.DialBroker(ctx); err == nil {
			if v, err := b.Version(ctx); err == nil {
				res.Broker = brokerStatus{true, v.PID, v.Version, v.Presence, v.Started, &v.Facts, v.Untrusted, nil}
			} else if p := answered(err); p != nil {
				res.Broker = brokerStatus{Running: true, Problem: p}
			}
			b.Close()
		} else if p := answered(err); p != nil {
			res.Broker = brokerStatus{Running: true, Problem: p}
		}
		return res, func(w io.Writer) {
			if res.Host.Problem != nil {
				fmt.Fprintf(w, "host:    running, not answering: %s: %s\n", res.Host.Problem.Code, res.Host.Problem.Message)
			} else if res.Host.Running {
				fmt.Fprintf(w, "host:    running, pid %d, %s (browser pid %d), %d session(s)\n", st.PID, st.Chromium, st.BrowserPID, st.Sessions)
				fmt.Fprintf(w, "profile: %s (lock owner pid %d)\n", st.Profile, st.LockOwner)
				if st.MovedAside != "" {
					fmt.Fprintf(w, "warning: an unusable profile (%s) was moved to %s\n", st.Reason, st.MovedAside)
				}
				migrationHuman(w, st.MigratedFrom, st.NotMigrated)
				allowHuman(w, st.Allow)
			} else {
				fmt.Fprintln(w, "host:    not running (start it with 'headless start')")
			}
			if res.Broker.Problem != nil {
				fmt.Fprintf(w, "brokerd: running, not answering: %s: %s\n", res.Broker.Problem.Code, res.Broker.Problem.Message)
			} else if res.Broker.Running {
				fmt.Fprintf(w, "brokerd: running, pid %d, version %s, presence %s, started by %s\n", res.Broker.PID, res.Broker.Version, res.Broker.Presence, res.Broker.Started)
				if res.Broker.Untrusted != "" {
					fmt.Fprintf(w, "warning: brokerd releases and saves nothing (BROKER_UNTRUSTED): %s\nhint: %s\n", res.Broker.Untrusted, wire.Hint(wire.CodeBrokerUntrusted))
				}
				for _, b := range res.Broker.Facts.Binaries {
					if b.UserWritable {
						fmt.Fprintf(w, "warning: %s can be replaced by programs running as you (%s): install it root-owned\n", b.Path, b.Reason)
					}
				}
			} else {
				fmt.Fprintln(w, "brokerd: not running")
			}
		}, nil
	}
}
