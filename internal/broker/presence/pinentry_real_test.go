//go:build linux

package presence

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/headless-dev/headless/internal/test/realtest"
)

// terminal is a pseudo-terminal whose screen output a test can wait for.
type terminal struct {
	path string // the tty a pinentry is pointed at (OPTION ttyname)
	ptmx *os.File
	mu   sync.Mutex
	out  []byte
}

func openTerminal(t *testing.T) *terminal {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	term := &terminal{path: tty.Name(), ptmx: ptmx}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			term.mu.Lock()
			term.out = append(term.out, b[:n]...)
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		tty.Close()
		ptmx.Close()
		<-done
	})
	return term
}

func (term *terminal) screen() []byte {
	term.mu.Lock()
	defer term.mu.Unlock()
	return append([]byte(nil), term.out...)
}

// waitFor waits (bounded) until the program has written s to the terminal.
func (term *terminal) waitFor(t *testing.T, s string) {
	t.Helper()
	for bound := time.Now().Add(20 * time.Second); !bytes.Contains(term.screen(), []byte(s)); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(bound) {
			t.Fatalf("the terminal never showed %q; it shows %q", s, term.screen())
		}
	}
}

func (term *terminal) press(t *testing.T, keys string) {
	t.Helper()
	if _, err := term.ptmx.Write([]byte(keys)); err != nil {
		t.Fatal(err)
	}
}

// TestRealPinentryTerminal drives the real pinentry-curses and pinentry-tty on a pty through
// OPTION ttyname, as brokerd's terminal demo does.
func TestRealPinentryTerminal(t *testing.T) {
	for _, tc := range []struct {
		name, program string
		timeout       time.Duration
		ready, keys   string // keys are pressed once ready is on the screen ("" = none)
		want          error  // nil: allowed
		gpgCode       uint32 // the PinentryError code wrapped in want
	}{
		{"curses enter allows", "pinentry-curses", time.Minute, "<Deny>", "\r", nil, 0},
		{"curses deny button", "pinentry-curses", time.Minute, "<Deny>", "\t\r", ErrDenied, 99},
		// The dialog closes itself (SETTIMEOUT) before Timeout would kill it.
		{"curses dialog timeout", "pinentry-curses", 6 * time.Second, "<Deny>", "", ErrTimeout, gpgErrTimeout},
		{"tty a allows", "pinentry-tty", time.Minute, "[ad]? ", "a", nil, 0},
		{"tty d denies", "pinentry-tty", time.Minute, "[ad]? ", "d", ErrDenied, 99},
	} {
		t.Run(tc.name, func(t *testing.T) {
			program := realtest.Binary(t, tc.program)
			term := openTerminal(t)
			p, err := NewPinentry(PinentryOptions{Program: program, Timeout: tc.timeout, TTY: term.path, TTYType: "xterm"})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			called := false
			go func() {
				done <- p.Do(context.Background(), testRequest, func(context.Context) error { called = true; return nil })
			}()
			term.waitFor(t, tc.ready)
			if !bytes.Contains(term.screen(), []byte(`Requested by pid 4242 ("/usr/bin/agent").`)) {
				t.Errorf("the dialog does not name the requester: %q", term.screen())
			}
			if tc.keys != "" {
				term.press(t, tc.keys)
			}
			err = <-done
			// A curses pinentry that answered (rather than being killed) left the alternate screen.
			// Its last bytes may still be in the pty when Do returns: poll, bounded.
			if tc.program == "pinentry-curses" {
				bound := time.Now().Add(5 * time.Second)
				for !bytes.Contains(term.screen(), []byte("\x1b[?1049l")) && time.Now().Before(bound) {
					time.Sleep(10 * time.Millisecond)
				}
				if !bytes.Contains(term.screen(), []byte("\x1b[?1049l")) {
					t.Errorf("pinentry-curses did not restore the terminal: %q", term.screen())
				}
			}
			if tc.want == nil {
				if err != nil || !called {
					t.Fatalf("Do = %v (use called: %v), want allowed", err, called)
				}
				return
			}
			var pe *PinentryError
			if s := sentinels(err); len(s) != 1 || s[0] != tc.want || called {
				t.Fatalf("Do = %v (use called: %v), want %v", err, called, tc.want)
			}
			if !errors.As(err, &pe) || pe.GPGCode() != tc.gpgCode {
				t.Fatalf("Do = %v, want the pinentry's own gpg error %d", err, tc.gpgCode)
			}
		})
	}
}

// TestRealPinentryWithoutTerminal: with no OPTION ttyname and no display, the real terminal
// pinentries cannot ask. pinentry-curses says so (ENOTTY: unavailable, nobody was asked);
// pinentry-tty answers "not confirmed", which cannot be told apart from a no: a denial.
func TestRealPinentryWithoutTerminal(t *testing.T) {
	for _, tc := range []struct {
		program string
		gpgCode uint32
		want    error
	}{
		{"pinentry-curses", 32870, ErrUnavailable}, // ENOTTY: its stdin/stdout are our pipes
		{"pinentry-tty", 114, ErrDenied},           // not confirmed
	} {
		t.Run(tc.program, func(t *testing.T) {
			p, err := NewPinentry(PinentryOptions{Program: realtest.Binary(t, tc.program), Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			err = p.Do(context.Background(), testRequest, func(context.Context) error { t.Error("use called"); return nil })
			var pe *PinentryError
			if s := sentinels(err); len(s) != 1 || s[0] != tc.want || !errors.As(err, &pe) || pe.GPGCode() != tc.gpgCode {
				t.Fatalf("Do = %v, want %v with gpg error %d", err, tc.want, tc.gpgCode)
			}
		})
	}
}
