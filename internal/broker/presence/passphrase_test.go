//go:build linux

package presence

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

func newPassphrase(t *testing.T, mode string, timeout time.Duration) (*Passphrase, string) {
	t.Helper()
	program, logFile := presencetest.FakePinentry(t, mode)
	p, err := NewPassphrase(PinentryOptions{Program: program, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return p, logFile
}

// check opens with want only, counting its calls and keeping what it was given.
type checker struct {
	want string
	got  []string
}

func (c *checker) check(pass []byte) error {
	c.got = append(c.got, string(pass))
	if string(pass) != c.want {
		return fmt.Errorf("%w: wrong passphrase", ErrTryAgain)
	}
	return nil
}

func TestPassphraseAsk(t *testing.T) {
	ctx := context.Background()
	const right = "correct horse % battery\tstaple ü"
	for _, tc := range []struct {
		name   string
		mode   string
		typed  []string // nil: nothing typed
		repeat bool
		want   error // nil: granted
		checks []string
		errors int // SETERROR lines sent
	}{
		{"right", "approve", []string{right}, false, nil, []string{right}, 0},
		{"wrong then right", "approve", []string{"nope", right}, false, nil, []string{"nope", right}, 1},
		{"wrong three times", "approve", []string{"a", "b", "c", right}, false, ErrDenied, []string{"a", "b", "c"}, 2},
		{"nothing typed: cancelled", "approve", nil, false, ErrDenied, nil, 0},
		{"cancel", "deny", []string{right}, false, ErrDenied, nil, 0},
		{"dialog timeout", "timeout", []string{right}, false, ErrTimeout, nil, 0},
		{"crash", "crash", []string{right}, false, ErrDenied, nil, 0},
		{"garbage", "garbage", []string{right}, false, ErrDenied, nil, 0},
		{"no greeting", "nogreeting", []string{right}, false, ErrUnavailable, nil, 0},
		{"repeat", "approve", []string{right, right}, true, nil, []string{right}, 0},
		{"repeat differs, then matches", "approve", []string{right, "typo", right, right}, true, nil, []string{right}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, logFile := newPassphrase(t, tc.mode, 10*time.Second)
			presencetest.Type(t, logFile, tc.typed...)
			c := &checker{want: right}
			err := p.Ask(ctx, testRequest, tc.repeat, c.check)
			if tc.want == nil && err != nil || tc.want != nil && !slices.Equal(sentinels(err), []error{tc.want}) {
				t.Fatalf("Ask = %v; want %v", err, tc.want)
			}
			if !slices.Equal(c.got, tc.checks) {
				t.Errorf("check saw %q; want %q", c.got, tc.checks)
			}
			n := 0
			for _, cmd := range presencetest.Received(t, logFile) {
				if strings.HasPrefix(cmd, "SETERROR ") {
					n++
				}
			}
			if n != tc.errors {
				t.Errorf("SETERROR sent %d times; want %d", n, tc.errors)
			}
			if err != nil && strings.Contains(err.Error(), right) {
				t.Errorf("the error quotes the passphrase: %v", err)
			}
		})
	}
}

func TestPassphraseHangTimesOut(t *testing.T) {
	p, logFile := newPassphrase(t, "hang", 500*time.Millisecond)
	presencetest.Type(t, logFile, "whatever")
	called := false
	err := p.Ask(context.Background(), testRequest, false, func([]byte) error { called = true; return nil })
	if !errors.Is(err, ErrTimeout) || called {
		t.Fatalf("Ask against a hanging pinentry = %v (check called %v); want ErrTimeout", err, called)
	}
}

// TestPassphraseCheckErrorEnds: an error of check that does not ask again ends the prompt
// with that error (the vault was unreachable, say), after one try.
func TestPassphraseCheckErrorEnds(t *testing.T) {
	p, logFile := newPassphrase(t, "approve", 10*time.Second)
	presencetest.Type(t, logFile, "one", "two")
	boom := errors.New("vault gone")
	n := 0
	if err := p.Ask(context.Background(), testRequest, false, func([]byte) error { n++; return boom }); !errors.Is(err, boom) || n != 1 {
		t.Fatalf("Ask = %v after %d checks; want the check's error after 1", err, n)
	}
}

func TestPassphraseDoRefuses(t *testing.T) {
	p, _ := newPassphrase(t, "approve", time.Second)
	called := false
	if err := p.Do(context.Background(), testRequest, func(context.Context) error { called = true; return nil }); !errors.Is(err, ErrUnavailable) || called {
		t.Fatalf("Do = %v (use called %v); want ErrUnavailable and no use", err, called)
	}
}

// TestPassphrasePrompt: the dialog says what is asked (release or save) and never sends the
// passphrase anywhere but back to brokerd.
func TestPassphrasePrompt(t *testing.T) {
	p, logFile := newPassphrase(t, "approve", 10*time.Second)
	presencetest.Type(t, logFile, "pp-canary-1")
	save := testRequest
	save.Save = true
	if err := p.Ask(context.Background(), save, false, func([]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	got := presencetest.Received(t, logFile)
	desc := presencetest.Prompts(t, logFile)
	if len(desc) != 1 || !strings.HasPrefix(desc[0], `Save the password sent by the requester below for "alice@example.com" at https://example.com as alias "work"`) {
		t.Fatalf("prompt %q", desc)
	}
	if !slices.Contains(got, "SETPROMPT Passphrase to save it:") || !slices.Contains(got, "SETOK Save") || !slices.Contains(got, "GETPIN") {
		t.Fatalf("commands %q", got)
	}
	if b, _ := os.ReadFile(logFile); bytes.Contains(b, []byte("pp-canary-1")) {
		t.Fatal("the passphrase was sent to the pinentry")
	}
	for _, c := range got {
		if strings.Contains(c, "pp-canary-1") {
			t.Fatalf("the passphrase was sent to the pinentry: %q", c)
		}
	}
}

// TestPinentrySocketNotReopenable: the pinentry's stdin and stdout are a socket, which no
// process can open again through /proc/PID/fd (a pipe could be, and its reader would see the
// passphrase before brokerd does).
func TestPinentrySocketNotReopenable(t *testing.T) {
	p, logFile := newPassphrase(t, "gate", 10*time.Second)
	presencetest.Type(t, logFile, "pp-canary-2")
	done := make(chan error, 1)
	go func() { done <- p.Ask(context.Background(), testRequest, false, func([]byte) error { return nil }) }()
	pid := 0
	for deadline := time.Now().Add(5 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(logFile)
		if f := strings.Fields(string(b)); len(f) >= 3 && f[1] == "start" {
			pid, _ = strconv.Atoi(f[0])
		}
	}
	if pid == 0 {
		t.Fatal("the pinentry never started")
	}
	for _, fd := range []string{"0", "1"} {
		target, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd)
		if err != nil || !strings.HasPrefix(target, "socket:") {
			t.Errorf("fd %s of the pinentry is %q (%v); want a socket", fd, target, err)
		}
		f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/fd/" + fd)
		if err == nil {
			f.Close()
			t.Errorf("opened the pinentry's fd %s through /proc", fd)
		} else if !errors.Is(err, syscall.ENXIO) {
			t.Logf("open /proc/%d/fd/%s: %v", pid, fd, err)
		}
	}
	os.WriteFile(logFile+".gate", nil, 0o600)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestGetpinOverPipe runs GETPIN against scripted answers.
func TestGetpinOverPipe(t *testing.T) {
	long := strings.Repeat("x", MaxPassphrase+1)
	for _, tc := range []struct {
		name   string
		answer string
		pass   string
		want   error // nil: a passphrase
	}{
		{"plain", "D secret\nOK\n", "secret", nil},
		{"escapes", "D a%25b%20c%c3%BC\nOK\n", "a%b cü", nil},
		{"escaped LF", "D a%0Ab\nOK\n", "", ErrDenied},
		{"split over D lines", "D abc\nD def\nOK\n", "abcdef", nil},
		{"status and comments", "S PIN_REPEATED\n# hi\nD pw\nOK\n", "pw", nil},
		{"nothing typed", "OK\n", "", ErrTryAgain},
		{"empty D", "D \nOK\n", "", ErrTryAgain},
		{"cancelled", "ERR 83886179 Operation cancelled\n", "", ErrDenied},
		{"dialog timeout", "ERR 83886142 Timeout\n", "", ErrTimeout},
		{"no tty", "ERR 83918950 Inappropriate ioctl\n", "", ErrUnavailable},
		{"too long", "D " + long + "\nOK\n", "", ErrDenied},
		{"bad escape", "D a%zz\nOK\n", "", ErrDenied},
		{"escaped NUL", "D a%00b\nOK\n", "", ErrDenied},
		{"truncated escape", "D a%4\nOK\n", "", ErrDenied},
		{"garbage", "\xff\n", "", ErrDenied},
		{"EOF", "", "", ErrDenied},
		{"inquire", "INQUIRE QUALITY\n", "", ErrDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server := net.Pipe()
			t.Cleanup(func() { client.Close(); server.Close() })
			go func() {
				defer server.Close()
				in := bufio.NewReader(server)
				if line, err := in.ReadString('\n'); err != nil || line != "GETPIN\n" {
					return
				}
				io.WriteString(server, tc.answer)
			}()
			wr := newWipeReader(client, maxResponseLine)
			c := &assuanConn{r: wr, w: client}
			pass, _, err := c.getpin(make([]byte, 0, MaxPassphrase))
			if tc.want == nil {
				if err != nil || string(pass) != tc.pass {
					t.Fatalf("getpin = %q, %v; want %q", pass, err, tc.pass)
				}
			} else if !errors.Is(err, tc.want) {
				t.Fatalf("getpin = %q, %v; want %v", pass, err, tc.want)
			}
			wr.wipe()
			if bytes.Contains(wr.buf, []byte("secret")) {
				t.Fatal("wipe left the passphrase in the reader's buffer")
			}
		})
	}
}

// FuzzUnescapeAssuan: a D line from the pinentry never panics the decoder, never gives more
// than the capacity, and never a NUL, CR or LF.
func FuzzUnescapeAssuan(f *testing.F) {
	f.Add([]byte("a%25b%0Ac"))
	f.Add([]byte("%"))
	f.Add([]byte("%4"))
	f.Add([]byte("%00"))
	f.Add(bytes.Repeat([]byte("%41"), 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		buf := make([]byte, 0, 16)
		out, ok := unescapeAssuan(buf, data)
		if cap(out) != 16 || len(out) > 16 {
			t.Fatalf("grew past its capacity: %d/%d", len(out), cap(out))
		}
		if ok && bytes.ContainsAny(out, "\x00\r\n") {
			t.Fatalf("accepted %q", out)
		}
		if ok && !bytes.Contains(data, []byte("%")) && !bytes.Equal(out, data) {
			t.Fatalf("%q decoded to %q", data, out)
		}
	})
}

// TestPassphraseExposedPinentryRefused: a pinentry whose memory the user's processes can read
// is never asked for the passphrase (red-team round 7 read a typed password out of Chromium's
// memory; a passphrase typed into a readable pinentry is as open): Exposed sees the started
// program's pid, and a yes, or an error, ends the prompt with ErrUnavailable before GETPIN.
func TestPassphraseExposedPinentryRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		open    bool
		err     error
		granted bool
	}{
		{"closed", false, nil, true},
		{"open", true, nil, false},
		{"cannot tell", false, errors.New("proc gone"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			program, logFile := presencetest.FakePinentry(t, "approve")
			var asked []int
			p, err := NewPassphrase(PinentryOptions{Program: program, Timeout: 10 * time.Second, Exposed: func(pid int) (bool, error) {
				asked = append(asked, pid)
				if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
					t.Errorf("Exposed asked about pid %d, which is not running: %v", pid, err)
				}
				return tc.open, tc.err
			}})
			if err != nil {
				t.Fatal(err)
			}
			presencetest.Type(t, logFile, "the passphrase")
			c := &checker{want: "the passphrase"}
			err = p.Ask(context.Background(), testRequest, false, c.check)
			if len(asked) != 1 {
				t.Fatalf("Exposed asked %d times; want once", len(asked))
			}
			if tc.granted {
				if err != nil || len(c.got) != 1 {
					t.Fatalf("Ask = %v, checks %q; want granted", err, c.got)
				}
				return
			}
			if !errors.Is(err, ErrUnavailable) || len(c.got) != 0 {
				t.Fatalf("Ask = %v, checks %q; want ErrUnavailable and nothing checked", err, c.got)
			}
			if slices.Contains(presencetest.Received(t, logFile), "GETPIN") {
				t.Error("the exposed pinentry was asked for the passphrase (GETPIN)")
			}
		})
	}
}

// TestPassphraseTimeoutPerTry: a pinentry's SETTIMEOUT applies to one GETPIN, so every GETPIN
// after the first is preceded by a SETTIMEOUT of what is left of the prompt's own timeout
// (never more than the first one said), and the dialog closes itself before it is killed.
func TestPassphraseTimeoutPerTry(t *testing.T) {
	p, logFile := newPassphrase(t, "approve", 30*time.Second)
	presencetest.Type(t, logFile, "nope", "right", "right")
	c := &checker{want: "right"}
	if err := p.Ask(context.Background(), testRequest, true, c.check); err != nil {
		t.Fatal(err)
	}
	var timeouts []int
	getpins := 0
	for _, cmd := range presencetest.Received(t, logFile) {
		if v, ok := strings.CutPrefix(cmd, "SETTIMEOUT "); ok {
			n, _ := strconv.Atoi(v)
			timeouts = append(timeouts, n)
		}
		if cmd == "GETPIN" {
			getpins++
			if len(timeouts) != getpins {
				t.Fatalf("GETPIN %d after %d SETTIMEOUTs; want one before each", getpins, len(timeouts))
			}
		}
	}
	if getpins != 4 {
		t.Fatalf("%d GETPINs; want 4 (two tries, each asked twice)", getpins)
	}
	for i, n := range timeouts {
		if n < 1 || n > timeouts[0] || n > 29 {
			t.Fatalf("SETTIMEOUT %d is %d (first %d); want 1..%d", i, n, timeouts[0], min(29, timeouts[0]))
		}
	}
}
