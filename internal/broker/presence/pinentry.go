package presence

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/safesock"
)

// MaxPinentryQueue bounds the releases waiting behind the prompt being shown.
const MaxPinentryQueue = 32

// DefaultPinentryTimeout bounds one pinentry prompt when [PinentryOptions.Timeout] is zero.
const DefaultPinentryTimeout = 60 * time.Second

const (
	// maxResponseLine bounds one response line from the program, LF included. Assuan's own
	// limit is 1000 bytes; anything longer than this is garbage.
	maxResponseLine = 2048
	// maxCommandLine bounds one line we send, LF included (Assuan's limit).
	maxCommandLine = 1000
	// maxSkipped bounds the comment and status lines accepted before one OK or ERR.
	maxSkipped = 64
	// byeGrace bounds the goodbye: the answer to BYE and the program's exit after it.
	byeGrace = time.Second

	gpgErrTimeout = 62    // GPG_ERR_TIMEOUT: the dialog's own SETTIMEOUT expired
	gpgErrENOTTY  = 32870 // GPG_ERR_ENOTTY: no terminal (and no display) to prompt on
)

// PinentryOptions configure [NewPinentry].
type PinentryOptions struct {
	// Program is the absolute path of the pinentry program (required). It is run directly,
	// without a shell or a PATH search, with no arguments.
	Program string
	// Timeout bounds one whole prompt, from starting Program to its answer to CONFIRM. It
	// is also sent, less a second or more, as SETTIMEOUT so that the dialog closes itself
	// (restoring a terminal) before it would be killed. Zero means
	// DefaultPinentryTimeout. Waiting for another prompt to finish is not counted.
	Timeout time.Duration
	// TTY and TTYType, when non-empty, are sent as "OPTION ttyname=" and "OPTION ttytype="
	// (used by pinentry-curses and pinentry-tty; graphical pinentries ignore them).
	TTY     string
	TTYType string
	// Env is the complete environment of Program (DISPLAY, WAYLAND_DISPLAY,
	// DBUS_SESSION_BUS_ADDRESS, ... as the caller decides). Nil means an empty environment:
	// nothing is inherited from this process.
	Env []string
	// Exposed, when set, is asked about each started program before a passphrase is asked
	// of it (GETPIN): true means the program's memory can be read by processes of the user
	// (an agent's shell among them), and so could the passphrase typed into it. The prompt
	// then ends at once, [ErrUnavailable], before anything is typed. brokerd sets it
	// (hardening.MemoryOpen); nil asks nothing (tests with a scripted pinentry).
	Exposed func(pid int) (bool, error)
	// Via, when set, is the absolute path of a shim that starts Program in its place: it is
	// run as "Via pinentry-exec Program" and execs Program with the same pid, stdio and
	// environment. brokerd names the installed headless binary, so that the pinentry runs with
	// the headless group (the kernel keeps the user's processes out of its memory) and without
	// brokerd's (it cannot read the seal key). Empty starts Program directly (tests).
	Via string
}

// ShimCommand is the argument of [PinentryOptions].Via that execs the pinentry.
const ShimCommand = hardening.PinentryShim

// Pinentry asks for presence through a pinentry program speaking the Assuan protocol, the
// gpg-agent convention: for every request it starts Program in its own process group, sends
//
//	OPTION ttyname=<TTY>          (when set)
//	OPTION ttytype=<TTYType>      (when set)
//	SETTITLE headless
//	SETDESC <Request.Description, percent-escaped>
//	SETPROMPT ...
//	SETOK Allow
//	SETCANCEL Deny
//	SETTIMEOUT <whole seconds left, minus one>
//	CONFIRM
//	BYE
//
// and then kills the process group (SIGKILL) and reaps the program, whatever happened. Comment
// ("#") and status ("S ") lines are skipped; a response is "OK" or "OK ..." (success),
// "ERR <number> ..." (failure) or garbage.
//
// # Decisions
//
// Only "OK" in answer to CONFIRM allows; use then runs after the program has been told BYE and
// reaped, so the dialog is gone while the vault is read. Everything else fails closed:
//
//   - the program is missing, not executable or cannot start; it sends no valid greeting; it
//     answers ERR, garbage or nothing (EOF, exit) before CONFIRM is sent: [ErrUnavailable];
//   - after CONFIRM, ERR whose gpg error code (low 16 bits) is GPG_ERR_TIMEOUT (62), the dialog
//     having closed itself: [ErrTimeout];
//   - after CONFIRM, ERR with gpg code GPG_ERR_ENOTTY (32870): the program had no terminal
//     or display to ask on, so nobody was asked: [ErrUnavailable];
//   - after CONFIRM, any other ERR (cancelled 99, not confirmed 114, ...), garbage, a line
//     over 2 KiB, EOF or a crash: [ErrDenied];
//   - Timeout elapsing, or ctx's deadline passing, before the answer: [ErrTimeout];
//   - ctx cancelled: [ErrDenied], also wrapping ctx.Err();
//   - ctx done after the program allowed but before use: as the two cases above, and use is
//     not called.
//
// Errors never quote the program's output; at most they carry the Assuan error number, as a
// wrapped [*PinentryError].
//
// # Serialization
//
// A Pinentry shows one prompt at a time. A request waits for the previous prompt to be
// answered and its program reaped; that wait is bounded by ctx only, not by Timeout.
type Pinentry struct {
	program string
	via     string
	timeout time.Duration
	options []string // OPTION lines
	env     []string
	exposed func(pid int) (bool, error)
	slot    chan struct{} // one prompt at a time
	waiting atomic.Int32  // requests queued behind the current prompt
}

var _ Provider = (*Pinentry)(nil)

// NewPinentry returns a pinentry provider. It fails when Program is not an absolute path, when
// Timeout is negative, or when TTY or TTYType hold control characters or spaces. It does not
// check that Program exists: a missing program makes every Do fail with ErrUnavailable.
func NewPinentry(o PinentryOptions) (*Pinentry, error) {
	if o.Program == "" {
		return nil, errors.New("pinentry: no program configured")
	}
	if !filepath.IsAbs(o.Program) {
		return nil, fmt.Errorf("pinentry: program %q is not an absolute path", o.Program)
	}
	if strings.IndexByte(o.Program, 0) >= 0 {
		return nil, errors.New("pinentry: program path contains a NUL byte")
	}
	if o.Timeout < 0 {
		return nil, fmt.Errorf("pinentry: negative timeout %s", o.Timeout)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultPinentryTimeout
	}
	var options []string
	for _, opt := range []struct{ name, value string }{{"ttyname", o.TTY}, {"ttytype", o.TTYType}} {
		if opt.value == "" {
			continue
		}
		if !validOptionValue(opt.value) {
			return nil, fmt.Errorf("pinentry: %s %q must be printable ASCII without spaces, at most 256 bytes", opt.name, opt.value)
		}
		options = append(options, "OPTION "+opt.name+"="+opt.value)
	}
	env := append([]string{}, o.Env...) // non-nil: exec must not inherit our environment
	return &Pinentry{
		program: o.Program,
		via:     o.Via,
		timeout: o.Timeout,
		options: options,
		env:     env,
		exposed: o.Exposed,
		slot:    make(chan struct{}, 1),
	}, nil
}

func validOptionValue(v string) bool {
	if len(v) > 256 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] >= 0x7f {
			return false
		}
	}
	return true
}

// Name returns "pinentry".
func (p *Pinentry) Name() string { return "pinentry" }

// Do asks the pinentry program about r and, only if the person allows it, calls use. See
// [Pinentry] for the decision table.
func (p *Pinentry) Do(ctx context.Context, r Request, use func(ctx context.Context) error) error {
	if err := p.acquire(ctx); err != nil {
		return err
	}
	err := p.prompt(ctx, r)
	<-p.slot // the program is reaped: the next prompt may start while use runs
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return contextError(err)
	}
	return use(ctx)
}

// acquire waits for the prompt slot (one prompt at a time), in a bounded queue: a flood of
// releases must not line up dozens of prompts that the person would then click through
// without reading. The caller releases it with <-p.slot.
func (p *Pinentry) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return contextError(err)
	}
	if p.waiting.Add(1) > MaxPinentryQueue {
		p.waiting.Add(-1)
		return fmt.Errorf("%w: %d releases are already waiting for the prompt", ErrUnavailable, MaxPinentryQueue)
	}
	select {
	case p.slot <- struct{}{}:
		p.waiting.Add(-1)
		return nil
	case <-ctx.Done():
		p.waiting.Add(-1)
		return contextError(ctx.Err())
	}
}

// contextError maps a done context to a denial: a deadline is ErrTimeout, anything else
// (cancellation) is ErrDenied. Both also wrap err.
func contextError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return fmt.Errorf("%w: prompt abandoned: %w", ErrDenied, err)
}

// prompt runs one pinentry program for r. It returns nil only when the program answered OK to
// CONFIRM; in every case the program's process group is killed and the program reaped before
// prompt returns.
func (p *Pinentry) prompt(ctx context.Context, r Request) error {
	question, ok := "Release the password?", "Allow"
	switch {
	case r.Passkey:
		question = "Use the passkey?"
	case r.Handover:
		question, ok = "Done?", "Done"
	}
	d, err := p.open(ctx, r, question, ok, false)
	if err != nil {
		return err
	}
	defer d.close()
	answered, err := d.c.confirm(d.cmds)
	if !answered && d.pctx.Err() != nil {
		return p.outcome(ctx, d.pctx, answered, err)
	}
	if answered && d.pctx.Err() == nil {
		// Polite goodbye, bounded: lets the program restore the terminal and exit by itself.
		d.c.bye(d.proc, time.Now().Add(byeGrace))
	}
	return err
}

// dialog is one running pinentry program: one prompt, bounded by the provider's timeout.
type dialog struct {
	pctx  context.Context // ends at the timeout (or with the caller's context)
	proc  *pinentryProcess
	c     *assuanConn
	cmds  []string // the setup commands to send after the greeting
	close func()   // kills the process group and reaps the program (and wipes the reader)
}

// open starts the program for one prompt about r, with prompt and ok as the field's prompt and
// the allowing button's label. With wipe, what the program answers passes through a reader
// whose buffer close zeroes (a passphrase does).
func (p *Pinentry) open(ctx context.Context, r Request, prompt, ok string, wipe bool) (*dialog, error) {
	timeout := p.timeout
	if r.Wait > 0 {
		timeout = r.Wait
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	proc, err := startPinentry(p.via, p.program, p.env)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%w: start pinentry: %w", ErrUnavailable, err)
	}
	// A passphrase is typed into the program: its memory must be closed to the user's
	// processes (red-team round 7 read a typed password out of Chromium's memory through
	// /proc/PID/mem; a pinentry's is as open unless its binary is one the user cannot read).
	// Checked after the exec (cmd.Start returns after it), before anything is asked.
	if wipe && p.exposed != nil {
		open, err := p.exposed(proc.cmd.Process.Pid)
		if err != nil || open {
			proc.reap()
			cancel()
			if err != nil {
				return nil, fmt.Errorf("%w: could not check who can read the pinentry's memory: %w", ErrUnavailable, err)
			}
			return nil, fmt.Errorf("%w: the memory of the pinentry %s can be read by any process of yours, so a passphrase typed into it could be read back out of it; nothing was asked (as root, make the program unreadable: dpkg-statoverride --update --add root root 0711 %s)", ErrUnavailable, p.program, p.program)
		}
	}
	// On timeout or cancellation: kill the group and unblock our reads and writes (a
	// descendant outside the group could still hold the socket open).
	aborted := make(chan struct{})
	stopAbort := context.AfterFunc(pctx, func() {
		defer close(aborted)
		proc.kill()
		proc.conn.SetDeadline(time.Unix(1, 0))
	})
	var rd lineSource = bufio.NewReaderSize(proc.conn, maxResponseLine)
	var wr *wipeReader
	if wipe {
		wr = newWipeReader(proc.conn, maxResponseLine)
		rd = wr
	}
	// The dialog's own timeout ends a second or more before ours, so that it closes itself
	// cleanly (a curses pinentry restores the terminal) rather than being killed.
	seconds := int64(1)
	if dl, ok := pctx.Deadline(); ok {
		seconds = max(1, int64((time.Until(dl)-time.Second)/time.Second))
	}
	cmds := append(append([]string{}, p.options...),
		"SETTITLE headless",
		"SETDESC "+promptDescription(r),
		"SETPROMPT "+prompt,
		"SETOK "+ok,
		"SETCANCEL "+cancelLabel(r),
		"SETTIMEOUT "+strconv.FormatInt(seconds, 10),
	)
	return &dialog{pctx: pctx, proc: proc, c: &assuanConn{r: rd, w: proc.conn}, cmds: cmds, close: func() {
		if !stopAbort() {
			<-aborted // never kill a process group after its leader is reaped
		}
		proc.reap()
		if wr != nil {
			wr.wipe()
		}
		cancel()
	}}, nil
}

// cancelLabel is the label of the button that says no.
func cancelLabel(r Request) string {
	if r.Handover {
		return "Decline"
	}
	return "Deny"
}

// assuanConn is the client side of an Assuan conversation with a pinentry.
type assuanConn struct {
	r lineSource // the program's stdout; its buffer's size bounds a line
	w io.Writer  // the program's stdin
}

// lineSource is what assuanConn reads lines from: a *bufio.Reader, or a [wipeReader] when a
// passphrase passes through it.
type lineSource interface {
	io.Reader
	ReadSlice(delim byte) ([]byte, error)
}

// confirm reads the greeting, sends cmds and then CONFIRM, and returns nil only when the
// program answers OK to CONFIRM. answered reports whether the conversation ended on a
// well-formed OK or ERR line (so that the program can be told BYE). The error wraps
// ErrUnavailable for any failure before CONFIRM is sent, and ErrTimeout or ErrDenied after.
func (c *assuanConn) confirm(cmds []string) (answered bool, err error) {
	unavailable := func(step string, err error) (bool, error) {
		return false, fmt.Errorf("%w: %s: %w", ErrUnavailable, step, err)
	}
	if err := c.response(); err != nil {
		return unavailable("read pinentry greeting", err)
	}
	for _, cmd := range cmds {
		verb, _, _ := strings.Cut(cmd, " ")
		if err := c.send(cmd); err != nil {
			return unavailable("send "+verb, err)
		}
		if err := c.response(); err != nil {
			return unavailable("send "+verb, err)
		}
	}
	if err := c.send("CONFIRM"); err != nil {
		return unavailable("send CONFIRM", err)
	}
	err = c.response()
	var pe *PinentryError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &pe):
		return true, pinentryOutcome(pe)
	default:
		return false, fmt.Errorf("%w: pinentry gave no answer: %w", ErrDenied, err)
	}
}

// bye tells the program to exit and waits, until deadline at most, for its answer and exit.
func (c *assuanConn) bye(proc *pinentryProcess, deadline time.Time) {
	proc.conn.SetDeadline(deadline)
	if c.send("BYE") != nil {
		return
	}
	if c.response() != nil {
		return
	}
	io.Copy(io.Discard, io.LimitReader(c.r, 64<<10)) // until EOF: the program has exited
}

func (c *assuanConn) send(line string) error {
	if len(line)+1 > maxCommandLine || strings.ContainsAny(line, "\r\n") {
		return errors.New("command line too long or not one line") // a bug in this file
	}
	_, err := io.WriteString(c.w, line+"\n")
	return err
}

// errGarbage is returned for anything the program sends that is not an Assuan response.
var errGarbage = errors.New("pinentry sent a malformed line")

// PinentryError is an ERR answer from the pinentry program. Errors of [Pinentry.Do] wrap it
// (inside ErrUnavailable, ErrTimeout or ErrDenied) whenever the program answered ERR, so that
// a caller can give a better hint: for example, pinentry-curses without a usable terminal
// answers CONFIRM with gpg error code 32870 (ENOTTY), pinentry-tty with 114 (not confirmed).
type PinentryError struct {
	// Code is the Assuan error number: the gpg error source in the high bits, the gpg error
	// code in the low 16 bits (62 timeout, 99 cancelled, 114 not confirmed, ...).
	Code uint32
}

// GPGCode returns the gpg error code, the low 16 bits of Code.
func (e *PinentryError) GPGCode() uint32 { return e.Code & 0xffff }

func (e *PinentryError) Error() string {
	name := gpgErrorNames[e.GPGCode()]
	if name == "" {
		name = "error"
	}
	return fmt.Sprintf("pinentry answered ERR %d (gpg error code %d: %s)", e.Code, e.GPGCode(), name)
}

// gpgErrorNames names the gpg error codes a pinentry commonly returns. The program's own error
// text is never shown.
var gpgErrorNames = map[uint32]string{
	gpgErrTimeout: "timeout",
	83:            "not supported",
	99:            "cancelled",
	114:           "not confirmed",
	275:           "unknown command",
	32870:         "no terminal (ENOTTY)",
}

// response reads lines up to one OK (nil error) or ERR (*PinentryError), skipping comment and
// status lines.
func (c *assuanConn) response() error {
	for range maxSkipped {
		line, err := c.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("%w: longer than %d bytes", errGarbage, maxResponseLine)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		kind, code := parseLine(line[:len(line)-1])
		switch kind {
		case lineOK:
			return nil
		case lineErr:
			return &PinentryError{code}
		case lineComment, lineStatus:
			continue
		default:
			return errGarbage
		}
	}
	return fmt.Errorf("%w: more than %d status lines", errGarbage, maxSkipped)
}

// lineKind classifies an Assuan response line.
type lineKind int

const (
	lineGarbage lineKind = iota
	lineOK
	lineErr
	lineComment
	lineStatus
)

// parseLine classifies one Assuan response line, given without its LF. "OK" and "OK <text>"
// are lineOK; "ERR <decimal uint32>" optionally followed by " <text>" is lineErr with that
// number; a line starting with "#" is lineComment; "S <keyword>..." is lineStatus. Everything
// else, including "D" data, INQUIRE, a CR before the LF or an ERR number that does not fit 32
// bits, is lineGarbage.
func parseLine(line []byte) (lineKind, uint32) {
	switch {
	case bytes.Equal(line, []byte("OK")) || bytes.HasPrefix(line, []byte("OK ")):
		if bytes.IndexByte(line, '\r') >= 0 {
			return lineGarbage, 0
		}
		return lineOK, 0
	case bytes.HasPrefix(line, []byte("#")):
		return lineComment, 0
	case bytes.HasPrefix(line, []byte("S ")) && len(line) > 2:
		return lineStatus, 0
	case bytes.HasPrefix(line, []byte("ERR ")):
		num, _, _ := bytes.Cut(line[4:], []byte(" "))
		if len(num) == 0 || len(num) > 10 {
			return lineGarbage, 0
		}
		for _, b := range num {
			if b < '0' || b > '9' {
				return lineGarbage, 0
			}
		}
		n, err := strconv.ParseUint(string(num), 10, 32)
		if err != nil {
			return lineGarbage, 0
		}
		return lineErr, uint32(n)
	}
	return lineGarbage, 0
}

// escapeAssuan percent-escapes s for an Assuan command argument: "%" as %25, CR as %0D, LF as
// %0A and every other byte below 0x20 as %XX (upper-case hex).
func escapeAssuan(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' || c < 0x20 {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// promptDescription is r.Description(), percent-escaped, short enough for one Assuan line.
// Over-long fields are shortened ("…") until it fits, so the requester is always named.
func promptDescription(r Request) string {
	budget := maxCommandLine - len("SETDESC \n")
	desc := escapeAssuan(r.Description())
	for limit := 256; len(desc) > budget && limit >= 2; limit /= 2 {
		s := r
		s.Origin = clip.Text(s.Origin, limit)
		s.Account = clip.Text(s.Account, limit)
		s.Alias = clip.Text(s.Alias, limit)
		s.Session = clip.Text(s.Session, limit)
		s.Exe = clip.Text(s.Exe, limit)
		s.Path = clip.Text(s.Path, limit)
		s.Field = clip.Text(s.Field, limit)
		s.Listener = clip.Text(s.Listener, limit)
		s.Client = clip.Text(s.Client, limit)
		s.Reason = clip.Text(s.Reason, limit)
		s.Title = clip.Text(s.Title, limit)
		s.Agent = make([]procstat.Proc, len(r.Agent))
		for i, p := range r.Agent {
			s.Agent[i] = procstat.Proc{PID: p.PID, Exe: clip.Text(p.Exe, limit), Comm: clip.Text(p.Comm, limit)}
		}
		s.KnownPaths = make([]string, len(r.KnownPaths))
		for i, p := range r.KnownPaths {
			s.KnownPaths[i] = clip.Text(p, limit)
		}
		s.AlsoOrigins = make([]string, len(r.AlsoOrigins))
		for i, o := range r.AlsoOrigins {
			s.AlsoOrigins[i] = clip.Text(o, limit)
		}
		s.AgentSite = procstat.Proc{PID: r.AgentSite.PID, Exe: clip.Text(r.AgentSite.Exe, limit), Comm: clip.Text(r.AgentSite.Comm, limit)}
		if r.File != nil {
			f := *r.File
			f.Name, f.Source = clip.Text(f.Name, limit), clip.Text(f.Source, limit)
			s.File = &f
		}
		desc = escapeAssuan(s.Description())
	}
	return desc // with 2-byte fields the worst case (every list at its bound) fits the budget
}

// pinentryProcess is a running pinentry program, leader of its own process group.
type pinentryProcess struct {
	cmd  *exec.Cmd
	conn *os.File // our end of its stdin and stdout
}

// startPinentry starts program with exactly env, stdin and stdout on one end of a Unix socket
// pair, stderr discarded, in its own process group. A socket, not a pipe: a pipe can be opened
// again through /proc/PID/fd of the program by any process of the user, which could then read
// the program's answers (a passphrase) before we do; a socket cannot be (only duplicated, with
// pidfd_getfd, by a process allowed to ptrace the program — none of the user's when the
// program is undumpable: Exposed). Our end is ours alone
// (not os/exec's), non-blocking, so reading can go on while the process is reaped and
// deadlines work.
func startPinentry(via, program string, env []string) (*pinentryProcess, error) {
	fds, err := safesock.Pair()
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, err
	}
	ours := os.NewFile(uintptr(fds[0]), "pinentry")
	theirs := os.NewFile(uintptr(fds[1]), "pinentry-stdio")
	cmd := exec.Command(program)
	if via != "" {
		cmd = exec.Command(via, ShimCommand, program)
		cmd.Args[0] = "headless"
	}
	cmd.Env = env
	cmd.Dir = "/"
	cmd.Stdin = theirs
	cmd.Stdout = theirs
	cmd.Stderr = nil // /dev/null: nothing to bound, nothing to leak into our logs
	cmd.SysProcAttr = pinentryProcAttr()
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		ours.Close()
		return nil, err
	}
	return &pinentryProcess{cmd: cmd, conn: ours}, nil
}

// kill sends SIGKILL to the whole process group. The group id stays valid until reap: the
// leader is not waited for before then.
func (p *pinentryProcess) kill() {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// reap kills the process group, closes our end and waits for the program.
func (p *pinentryProcess) reap() {
	p.kill()
	p.conn.Close()
	p.cmd.Wait()
}
