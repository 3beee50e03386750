package presence

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/headless-dev/headless/internal/clip"
)

// MaxPassphrase bounds a passphrase, in bytes.
const MaxPassphrase = 1024

// MaxPassphraseTries bounds the tries at one passphrase prompt: a wrong passphrase, or two
// that do not match when a new one is chosen, is asked again (the dialog says why) until then.
const MaxPassphraseTries = 3

// ErrTryAgain, wrapped in the error of a passphrase check, asks the person again (with the
// error's text shown in the dialog) while tries are left; any other error ends the prompt.
var ErrTryAgain = errors.New("try again")

// Passphrase is the "passphrase" provider: presence is the person typing the passphrase that
// seals the saved credentials (package internal/broker/seal) into a pinentry program. A grant is the
// passphrase itself, handed to the caller's check, which opens the sealed credential with it:
// nothing of what the vault hands out (to brokerd, or to any program of the person's that
// asks the keyring) is usable without it, and no program of theirs can answer the prompt
// without knowing it. The prompt, its placement, its queue and its failures are those of
// [Pinentry] (see there), asked with GETPIN instead of CONFIRM.
type Passphrase struct{ p *Pinentry }

var _ Provider = (*Passphrase)(nil)

// NewPassphrase returns the provider; o is as for [NewPinentry].
func NewPassphrase(o PinentryOptions) (*Passphrase, error) {
	p, err := NewPinentry(o)
	if err != nil {
		return nil, err
	}
	return &Passphrase{p: p}, nil
}

// Name returns "passphrase".
func (p *Passphrase) Name() string { return "passphrase" }

// Do refuses: with this provider a release is a sealed credential opened with the person's
// passphrase ([Passphrase.Ask]), never a yes.
func (p *Passphrase) Do(ctx context.Context, r Request, use func(context.Context) error) error {
	return fmt.Errorf("%w: the passphrase provider opens sealed credentials only; it has no yes to give", ErrUnavailable)
}

// Ask shows one prompt about r and asks for the passphrase; with repeat (a passphrase chosen
// now) twice, the two compared. check is called with the passphrase (zeroed when it returns)
// and decides: nil is the grant; an error wrapping [ErrTryAgain] asks again while tries are
// left, showing its text (then [ErrDenied]); any other error is returned as it is. A
// cancelled, timed-out or failing prompt is [ErrDenied], [ErrTimeout] or [ErrUnavailable] as
// for [Pinentry.Do], and check is not called.
func (p *Passphrase) Ask(ctx context.Context, r Request, repeat bool, check func(pass []byte) error) error {
	if err := p.p.acquire(ctx); err != nil {
		return err
	}
	defer func() { <-p.p.slot }()
	return p.p.passphrase(ctx, r, repeat, check)
}

// passphrase runs one pinentry program for r and its passphrase tries. In every case the
// program's process group is killed and the program reaped before it returns.
func (p *Pinentry) passphrase(ctx context.Context, r Request, repeat bool, check func(pass []byte) error) error {
	prompt, ok := "Passphrase to allow:", "Allow"
	if r.Save {
		prompt, ok = "Passphrase to save it:", "Save"
	}
	d, err := p.open(ctx, r, prompt, ok, true)
	if err != nil {
		return err
	}
	defer d.close()
	pctx, proc, c := d.pctx, d.proc, d.c
	if err := c.setup(d.cmds); err != nil {
		return p.outcome(ctx, pctx, false, err)
	}
	pass := make([]byte, 0, MaxPassphrase)
	again := make([]byte, 0, MaxPassphrase)
	defer func() { clear(pass[:cap(pass)]); clear(again[:cap(again)]) }()
	// A pinentry's SETTIMEOUT applies to each GETPIN; ours bounds the whole prompt. Every GETPIN
	// after the first is told what is left of ours, so the dialog closes itself (restoring a
	// terminal) before it would be killed.
	remaining := func() error {
		dl, ok := pctx.Deadline()
		if !ok {
			return nil
		}
		return c.command("SETTIMEOUT " + strconv.FormatInt(max(1, int64((time.Until(dl)-time.Second)/time.Second)), 10))
	}
	for try := 1; ; try++ {
		var answered bool
		if try > 1 {
			if err := remaining(); err != nil {
				return p.outcome(ctx, pctx, false, err)
			}
		}
		pass, answered, err = c.getpin(pass[:0])
		if err == nil && repeat {
			err = c.command("SETPROMPT Repeat it:")
			if err == nil {
				err = remaining()
			}
			if err == nil {
				again, answered, err = c.getpin(again[:0])
			}
			if err == nil && subtle.ConstantTimeCompare(pass, again) != 1 {
				err = fmt.Errorf("%w: the two passphrases differ", ErrTryAgain)
			}
			clear(again[:cap(again)])
			if err == nil || errors.Is(err, ErrTryAgain) {
				if cerr := c.command("SETPROMPT " + prompt); cerr != nil && err == nil {
					err = cerr
				}
			}
		}
		if err != nil && !errors.Is(err, ErrTryAgain) {
			return p.outcome(ctx, pctx, answered, err)
		}
		if err == nil {
			err = check(pass)
		}
		clear(pass[:cap(pass)])
		if err == nil {
			c.bye(proc, time.Now().Add(byeGrace))
			return nil
		}
		if !errors.Is(err, ErrTryAgain) {
			c.bye(proc, time.Now().Add(byeGrace))
			return err
		}
		if try == MaxPassphraseTries {
			c.bye(proc, time.Now().Add(byeGrace))
			return fmt.Errorf("%w: %d tries: %w", ErrDenied, try, err)
		}
		msg := err.Error()
		if i := bytes.Index([]byte(msg), []byte(ErrTryAgain.Error()+": ")); i >= 0 {
			msg = msg[i+len(ErrTryAgain.Error())+2:]
		}
		if err := c.command("SETERROR " + escapeAssuan(clip.Text(msg, 200)+fmt.Sprintf(" (try %d of %d)", try+1, MaxPassphraseTries))); err != nil {
			return p.outcome(ctx, pctx, false, err)
		}
	}
}

// outcome is the error of a prompt that ended without a grant, as [Pinentry.prompt] has it.
func (p *Pinentry) outcome(ctx, pctx context.Context, answered bool, err error) error {
	if !answered && pctx.Err() != nil {
		if ctx.Err() != nil {
			return contextError(ctx.Err())
		}
		return fmt.Errorf("%w: no answer from pinentry within %s", ErrTimeout, p.timeout)
	}
	return err
}

// setup reads the greeting and sends cmds; every failure is ErrUnavailable.
func (c *assuanConn) setup(cmds []string) error {
	if err := c.response(); err != nil {
		return fmt.Errorf("%w: read pinentry greeting: %w", ErrUnavailable, err)
	}
	for _, cmd := range cmds {
		if err := c.command(cmd); err != nil {
			return err
		}
	}
	return nil
}

// command sends one command and reads its OK; every failure is ErrUnavailable.
func (c *assuanConn) command(cmd string) error {
	verb, _, _ := bytes.Cut([]byte(cmd), []byte(" "))
	if err := c.send(cmd); err != nil {
		return fmt.Errorf("%w: send %s: %w", ErrUnavailable, verb, err)
	}
	if err := c.response(); err != nil {
		return fmt.Errorf("%w: send %s: %w", ErrUnavailable, verb, err)
	}
	return nil
}

// getpin sends GETPIN and appends the passphrase the program answers to buf (its capacity,
// MaxPassphrase, bounds it: nothing is reallocated, so nothing is copied where it cannot be
// zeroed). Comment and status lines are skipped; the data may come in several D lines. An ERR
// maps as the answer to CONFIRM does; garbage, a longer passphrase or none is ErrDenied.
func (c *assuanConn) getpin(buf []byte) (pass []byte, answered bool, err error) {
	if err := c.send("GETPIN"); err != nil {
		return buf, false, fmt.Errorf("%w: send GETPIN: %w", ErrUnavailable, err)
	}
	got := false
	for range maxSkipped {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return buf, false, fmt.Errorf("%w: pinentry gave no answer: %w", ErrDenied, readErr(err))
		}
		line = line[:len(line)-1]
		if bytes.HasPrefix(line, []byte("D ")) {
			var ok bool
			if buf, ok = unescapeAssuan(buf, line[2:]); !ok {
				return buf, false, fmt.Errorf("%w: pinentry sent a malformed or over-long passphrase", ErrDenied)
			}
			got = true
			continue
		}
		kind, code := parseLine(line)
		switch kind {
		case lineComment, lineStatus:
			continue
		case lineOK:
			if !got || len(buf) == 0 {
				return buf, true, fmt.Errorf("%w: %w", ErrTryAgain, errEmptyPassphrase)
			}
			return buf, true, nil
		case lineErr:
			return buf, true, pinentryOutcome(&PinentryError{code})
		default:
			return buf, false, fmt.Errorf("%w: pinentry gave no answer: %w", ErrDenied, errGarbage)
		}
	}
	return buf, false, fmt.Errorf("%w: %w: more than %d status lines", ErrDenied, errGarbage, maxSkipped)
}

var errEmptyPassphrase = errors.New("no passphrase was typed")

// readErr names a failed line read.
func readErr(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	if errors.Is(err, bufio.ErrBufferFull) {
		return fmt.Errorf("%w: longer than %d bytes", errGarbage, maxResponseLine)
	}
	return err
}

// pinentryOutcome maps an ERR answer to a prompt (CONFIRM or GETPIN) to its denial.
func pinentryOutcome(pe *PinentryError) error {
	switch pe.GPGCode() {
	case gpgErrTimeout:
		// The dialog's own SETTIMEOUT expired.
		return fmt.Errorf("%w: the dialog closed itself: %w", ErrTimeout, pe)
	case gpgErrENOTTY:
		// "Could not ask" is not "the person said no": nobody saw a prompt.
		return fmt.Errorf("%w: the pinentry has no terminal or display to show the prompt on: %w", ErrUnavailable, pe)
	}
	return fmt.Errorf("%w: %w", ErrDenied, pe)
}

// unescapeAssuan appends the percent-unescaped data of a D line to buf, within buf's capacity.
// ok is false for a bad escape, a NUL or a CR/LF, or data beyond the capacity.
func unescapeAssuan(buf, data []byte) ([]byte, bool) {
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '%' {
			if i+2 >= len(data) {
				return buf, false
			}
			h, l := unhex(data[i+1]), unhex(data[i+2])
			if h < 0 || l < 0 {
				return buf, false
			}
			c = byte(h<<4 | l)
			i += 2
		}
		if c == 0 || c == '\r' || c == '\n' || len(buf) == cap(buf) {
			return buf, false
		}
		buf = append(buf, c)
	}
	return buf, true
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// wipeReader reads lines, as bufio.Reader.ReadSlice does, through a buffer of its own that
// wipe zeroes: a passphrase passes through it.
type wipeReader struct {
	rd   io.Reader
	buf  []byte
	r, w int
	err  error
}

func newWipeReader(rd io.Reader, size int) *wipeReader {
	return &wipeReader{rd: rd, buf: make([]byte, size)}
}

// ReadSlice returns the next line, delim included, as a slice of the buffer, valid until the
// next read. A line that does not fit is bufio.ErrBufferFull.
func (b *wipeReader) ReadSlice(delim byte) ([]byte, error) {
	for {
		if i := bytes.IndexByte(b.buf[b.r:b.w], delim); i >= 0 {
			line := b.buf[b.r : b.r+i+1]
			b.r += i + 1
			return line, nil
		}
		if b.err != nil {
			line := b.buf[b.r:b.w]
			b.r = b.w
			return line, b.err
		}
		if b.w-b.r == len(b.buf) {
			b.r, b.w = 0, 0
			return nil, bufio.ErrBufferFull
		}
		if b.r > 0 {
			n := copy(b.buf, b.buf[b.r:b.w])
			clear(b.buf[n:b.w])
			b.r, b.w = 0, n
		}
		n, err := b.rd.Read(b.buf[b.w:])
		b.w += n
		if err != nil {
			b.err = err
		}
	}
}

// Read reads what is buffered first, then from the underlying reader.
func (b *wipeReader) Read(p []byte) (int, error) {
	if b.r < b.w {
		n := copy(p, b.buf[b.r:b.w])
		b.r += n
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.rd.Read(p)
}

func (b *wipeReader) wipe() { clear(b.buf) }
