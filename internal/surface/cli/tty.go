package cli

import (
	"bytes"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/headless-dev/headless/internal/wire"
)

// TTY is the controlling terminal: the only source of secrets and confirmations.
type TTY interface {
	// Secret prints prompt and reads one line with echo off into a fresh []byte the caller
	// zeroes. The line ending is not included.
	Secret(prompt string, max int) ([]byte, error)
	// Line prints prompt and reads one line with echo on.
	Line(prompt string, max int) (string, error)
	Close() error
}

var errTTYCancelled = wire.Sentinel(wire.CodeCancelled, "cancelled at the terminal")

// OpenTTY opens /dev/tty, the process's controlling terminal. It never falls back to stdin.
func OpenTTY() (TTY, error) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	return &devTTY{f: f}, nil
}

type devTTY struct{ f *os.File }

func (t *devTTY) Close() error { return t.f.Close() }

func (t *devTTY) Line(prompt string, max int) (string, error) {
	b, err := t.read(prompt, max, false)
	defer clear(b)
	return string(b), err
}

func (t *devTTY) Secret(prompt string, max int) ([]byte, error) {
	return t.read(prompt, max, true)
}

// read reads one canonical-mode line into a fixed buffer (no reallocations that would leave
// copies behind). With secret, echo is off and signals are disabled so that ^C arrives as a
// byte (cancel) instead of killing us with echo still off.
func (t *devTTY) read(prompt string, max int, secret bool) ([]byte, error) {
	fd := int(t.f.Fd())
	if secret {
		old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
		if err != nil {
			return nil, fmt.Errorf("terminal: %w", err)
		}
		raw := *old
		raw.Lflag &^= unix.ECHO | unix.ISIG
		raw.Lflag |= unix.ICANON
		if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &raw); err != nil {
			return nil, fmt.Errorf("terminal: %w", err)
		}
		defer func() {
			unix.IoctlSetTermios(fd, ioctlSetTermios, old)
			t.f.WriteString("\n")
		}()
	}
	if _, err := t.f.WriteString(prompt); err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	buf := make([]byte, max+2)
	n := 0
	for n < len(buf) {
		m, err := t.f.Read(buf[n:])
		n += m
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			n = i
			break
		}
		if err != nil || m == 0 {
			clear(buf)
			return nil, errTTYCancelled
		}
	}
	line := buf[:n]
	if bytes.IndexByte(line, 0x03) >= 0 || bytes.IndexByte(line, 0x04) >= 0 {
		clear(buf)
		return nil, errTTYCancelled
	}
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) > max || n == len(buf) {
		clear(buf)
		// Drop the rest of an over-long line so that it never reaches the shell once echo
		// is back on.
		flushInput(int(t.f.Fd()))
		return nil, fmt.Errorf("input longer than %d bytes", max)
	}
	out := bytes.Clone(line)
	clear(buf)
	return out, nil
}
