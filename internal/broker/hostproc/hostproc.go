// Package hostproc is brokerd's side of the browser host: it starts the one host executable
// brokerd trusts, owns that process, and says which connections come from it.
//
// # Security contract
//
//   - The host executable is the headless binary beside brokerd's own executable; no config
//     names another. [Open] opens it once and checks the open file: a regular, executable ELF,
//     not writable by group or others, whose Go build info says this module's cmd/headless at
//     brokerd's own version. With Options.Group (brokerd always sets it), the file must also be
//     root-owned and set-gid to that group: only root makes such a file, so a build stamp
//     copied into a program of the agent's (which -ldflags -X reproduces) is not enough. The
//     checked inode is the one executed: the child execs /proc/self/fd/N of that open
//     descriptor, so nothing can swap the file between the check and the exec.
//   - The host gets an environment built by brokerd (Options.Env), cwd /, a session of its own,
//     fd 3 for its one-line ready or error report, and fd 4, the read end of a pipe whose write
//     end only brokerd holds: when brokerd ends, however it ends (SIGKILL included), the host
//     reads EOF there and shuts down gracefully. A restarted brokerd therefore never meets a
//     host it did not start.
//   - [Supervisor.Genuine] is true only for the pid of the host process this Supervisor
//     started, while that process has not exited, for connections accepted after it was
//     started, and (with Options.Group) whose kernel-reported effective gid is that group:
//     the kernel gives it only to an exec of the set-gid file that is not traced, not inside a
//     user namespace that leaves root unmapped, and not under no_new_privs. The exit is seen with waitid(WEXITED|WNOWAIT) and the state cleared before the
//     process is reaped, so its pid cannot be reused by another process while it still counts
//     as the host.
//
// # Not guaranteed
//
// Without Options.Group (unit tests with a stand-in program) any executable passes. A connection queued in the listen backlog by an earlier process with the
// host's pid, before that pid was reused for the host, would count as the host's; that needs
// the kernel's pid counter to wrap within the accept latency.
package hostproc

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/version"
	"github.com/headless-dev/headless/internal/wire"
)

// HostPackage is the main package the host executable must be built from.
const HostPackage = "github.com/headless-dev/headless/cmd/headless"

// Options configure a Supervisor.
type Options struct {
	// Program is the absolute path of the host executable.
	Program string
	// Version is brokerd's own version (internal/version); the host's build must match it.
	// Empty skips the build check (unit tests with a stand-in program only).
	Version string
	// Group is the gid the host executable must be set-gid to (root-owned), and the
	// effective gid its connections must have; -1 checks neither (unit tests only).
	Group int
	// Env is the host's complete environment.
	Env []string
	// LogPath names the host's log, for error messages.
	LogPath string
	Log     *slog.Logger
	// StartTimeout bounds the wait for the host's ready report (default 100 s); StopTimeout
	// the wait for a graceful exit before SIGKILL (default 30 s).
	StartTimeout, StopTimeout time.Duration
}

// Result is what a start reports.
type Result struct {
	Status string          // "started" or "running"
	PID    int             // the host's pid
	Ready  json.RawMessage // the host's ready report
}

// Supervisor starts and owns one host process at a time.
type Supervisor struct {
	o       Options
	startMu sync.Mutex // one start at a time

	mu  sync.Mutex
	cur *proc
}

type proc struct {
	pid      int
	started  time.Time
	exe      string
	ready    json.RawMessage
	lifeline *os.File // the write end of the host's fd 4; closing it asks the host to stop
	cmd      *exec.Cmd
	exited   chan struct{}
}

// New returns a Supervisor; nothing is started until Start.
func New(o Options) *Supervisor {
	if o.StartTimeout <= 0 {
		o.StartTimeout = 100 * time.Second
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{o: o}
}

// Program is the host executable this Supervisor starts.
func (s *Supervisor) Program() string { return s.o.Program }

// Genuine reports whether pid, with effective gid gid, is the running host this Supervisor
// started, for a connection accepted at accepted.
func (s *Supervisor) Genuine(pid, gid int, accepted time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur != nil && pid > 0 && s.cur.pid == pid && !accepted.Before(s.cur.started) &&
		(s.o.Group < 0 || gid == s.o.Group)
}

// Running returns the pid and executable of the running host (0, "" when none).
func (s *Supervisor) Running() (pid int, exe string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return 0, ""
	}
	return s.cur.pid, s.cur.exe
}

// Start starts the host unless the one this Supervisor started still runs, and returns its
// ready report. A start that does not become ready within StartTimeout, or whose caller goes
// away first (ctx), is stopped: no half-started host is left behind.
//
// allow, when not nil, is the navigation allowlist asked for ('headless start --allow',
// canonical): a new host gets it (--allow), and a running host whose list (its ready report's
// "allow") differs refuses the request; the same list is a no-op. nil asks for nothing: a new
// host takes the config's list, a running one keeps its own.
//
// display, when not nil, asks for a browser with windows: a new host gets --window and these
// variables (DISPLAY, WAYLAND_DISPLAY, XAUTHORITY: where the person is) besides Env; a
// running host without windows (its ready report's "window" empty) refuses it. nil asks for
// nothing: a running host keeps its windows.
func (s *Supervisor) Start(ctx context.Context, allow, display []string) (Result, error) {
	s.startMu.Lock()
	defer s.startMu.Unlock()
	s.mu.Lock()
	if p := s.cur; p != nil {
		s.mu.Unlock()
		var r struct {
			Allow  []string `json:"allow"`
			Window string   `json:"window"`
		}
		json.Unmarshal(p.ready, &r)
		if display != nil && r.Window == "" {
			return Result{}, wire.Errorf(wire.CodeInvalidArgument, "the running host has no windows; it was asked for a browser with windows").
				WithHint("stop the host first ('headless stop'), then 'headless start --window'")
		}
		if allow != nil {
			if !slices.Equal(r.Allow, allow) {
				return Result{}, wire.Errorf(wire.CodeInvalidArgument, "the running host's navigation allowlist is %s, not %s",
					listString(r.Allow), listString(allow)).WithHint("stop the host first ('headless stop') to start it with another navigation allowlist")
			}
		}
		return Result{Status: "running", PID: p.pid, Ready: p.ready}, nil
	}
	s.mu.Unlock()

	f, err := Open(s.o.Program, s.o.Version)
	if err != nil {
		return Result{}, wire.Errorf(wire.CodeHostUnavail, "%w", err)
	}
	defer f.Close()
	if s.o.Group >= 0 {
		if err := hardening.SetGIDTo(f, s.o.Program, s.o.Group); err != nil {
			return Result{}, wire.Errorf(wire.CodeBrokerUntrusted, "%w", err)
		}
	}
	// A descriptor far above the child's 0-4, close-on-exec: the child execs it by name before
	// the kernel closes it, and the host does not inherit it.
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 100)
	if err != nil {
		return Result{}, fmt.Errorf("host executable: %w", err)
	}
	exeFile := os.NewFile(uintptr(fd), s.o.Program)
	defer exeFile.Close()
	notifyR, notifyW, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	defer notifyR.Close()
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		notifyW.Close()
		return Result{}, err
	}
	args := []string{"headless", "host", "--notify-fd", "3", "--lifeline-fd", "4"}
	if allow != nil {
		args = append(args, "--allow", strings.Join(allow, ","))
	}
	env := append([]string{}, s.o.Env...)
	if display != nil {
		args = append(args, "--window")
		env = append(env, display...)
	}
	cmd := &exec.Cmd{
		Path:        fdPath + strconv.Itoa(fd),
		Args:        args,
		Env:         env,
		Dir:         "/",
		ExtraFiles:  []*os.File{notifyW, lifeR},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	started := time.Now()
	err = cmd.Start()
	notifyW.Close()
	lifeR.Close()
	if err != nil {
		lifeW.Close()
		return Result{}, wire.Errorf(wire.CodeHostUnavail, "start the host %s: %w", s.o.Program, err)
	}
	p := &proc{pid: cmd.Process.Pid, started: started, exe: s.o.Program, lifeline: lifeW, cmd: cmd, exited: make(chan struct{})}
	// It counts as the host from now on: it may dial brokerd while it starts.
	s.mu.Lock()
	s.cur = p
	s.mu.Unlock()
	go s.watch(p)
	s.o.Log.Info("host started", "pid", p.pid, "program", p.exe)

	ready, err := s.readReady(ctx, notifyR, p)
	if err != nil {
		s.stop(p, 5*time.Second)
		return Result{}, err
	}
	s.mu.Lock()
	p.ready = ready
	s.mu.Unlock()
	return Result{Status: "started", PID: p.pid, Ready: ready}, nil
}

func listString(l []string) string {
	if len(l) == 0 {
		return "(none: every host)"
	}
	return strings.Join(l, ",")
}

// readReady reads the host's one line: {"ready":{…}} or {"error":{…}}.
func (s *Supervisor) readReady(ctx context.Context, r io.Reader, p *proc) (json.RawMessage, error) {
	type line struct {
		Ready json.RawMessage `json:"ready"`
		Error *wire.Error     `json:"error"`
	}
	got := make(chan line, 1)
	go func() {
		var l line
		sc := bufio.NewScanner(io.LimitReader(r, 64<<10))
		sc.Buffer(make([]byte, 0, 4096), 64<<10)
		if sc.Scan() {
			json.Unmarshal(sc.Bytes(), &l)
		}
		got <- l
	}()
	t := time.NewTimer(s.o.StartTimeout)
	defer t.Stop()
	select {
	case l := <-got:
		switch {
		case l.Error != nil:
			return nil, l.Error
		case len(l.Ready) > 0 && l.Ready[0] == '{':
			return l.Ready, nil
		}
		return nil, wire.Errorf(wire.CodeHostUnavail, "the host exited during start-up; see %s", s.o.LogPath)
	case <-t.C:
		return nil, wire.Errorf(wire.CodeHostUnavail, "the host did not become ready within %s; see %s", s.o.StartTimeout, s.o.LogPath)
	case <-ctx.Done():
		return nil, wire.Errorf(wire.CodeHostUnavail, "the start was abandoned before the host was ready")
	}
}

// watch waits for p to exit without reaping it, clears it as the host, then reaps it.
func (s *Supervisor) watch(p *proc) {
	waitExited(p.pid) // exited, not reaped: the pid is still ours
	s.mu.Lock()
	if s.cur == p {
		s.cur = nil
	}
	s.mu.Unlock()
	p.lifeline.Close()
	err := p.cmd.Wait() // reaps: only now may the pid be reused
	s.o.Log.Info("host exited", "pid", p.pid, "status", fmt.Sprint(err))
	close(p.exited)
}

// Stop asks the running host to stop (EOF on its lifeline: a graceful Browser.close) and
// waits for it, SIGKILLing it after StopTimeout.
func (s *Supervisor) Stop() {
	s.mu.Lock()
	p := s.cur
	s.mu.Unlock()
	if p != nil {
		s.stop(p, s.o.StopTimeout)
	}
}

func (s *Supervisor) stop(p *proc, grace time.Duration) {
	p.lifeline.Close()
	select {
	case <-p.exited:
		return
	case <-time.After(grace):
	}
	s.o.Log.Warn("host did not stop in time; killing it", "pid", p.pid)
	syscall.Kill(p.pid, syscall.SIGKILL) // not reaped yet (watch reaps), so the pid is still ours
	<-p.exited
}

// Open opens the host executable at path and checks the open file (see the package doc). A
// non-empty version also requires the Go build info of this module's cmd/headless at that
// version.
func Open(path, want string) (*os.File, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("host executable %q is not an absolute path", path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("host executable: %w", err)
	}
	if err := checkFile(f, path, true); err != nil {
		f.Close()
		return nil, err
	}
	if want != "" {
		bi, err := buildinfo.Read(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("host executable %s is not a Go program of headless: %w", path, err)
		}
		if bi.Path != HostPackage {
			f.Close()
			return nil, fmt.Errorf("host executable %s is %q, not %s", path, bi.Path, HostPackage)
		}
		if v := version.Of(bi); v != want {
			f.Close()
			return nil, fmt.Errorf("host executable %s is version %s, brokerd is %s: install both from the same build", path, v, want)
		}
	}
	return f, nil
}

// CheckChromium checks the Chromium executable at path (hardening.CheckChromium): a regular,
// executable ELF file (not a wrapper script, which could log what it is given or exec
// something else), owned by the user or root, not writable by group or others.
func CheckChromium(path string) error { return hardening.CheckChromium(path) }

// checkFile checks an open executable (hardening.CheckExecutable).
func checkFile(f *os.File, path string, elf bool) error {
	return hardening.CheckExecutable(f, path, elf)
}
