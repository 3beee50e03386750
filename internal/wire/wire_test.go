package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
)

func readAll(t testing.TB, r *Reader) ([]string, error) {
	var out []string
	for {
		f, err := r.ReadFrame()
		if err != nil {
			return out, err
		}
		out = append(out, string(f))
	}
}

func TestReadFrame(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		want  []string
		final error
	}{
		{"two frames", "{\"a\":1}\n{\"b\":2}\n", []string{`{"a":1}`, `{"b":2}`}, io.EOF},
		{"blank lines skipped", "\n\n{}\n\n", []string{"{}"}, io.EOF},
		{"truncated", "{}\n{\"a\"", []string{"{}"}, ErrTruncated},
		{"empty", "", nil, io.EOF},
		{"exactly max", strings.Repeat("x", MaxFrame-1) + "\n", []string{strings.Repeat("x", MaxFrame-1)}, io.EOF},
		{"one over max", strings.Repeat("x", MaxFrame) + "\n", nil, ErrFrameTooLarge},
		{"no newline, huge", strings.Repeat("x", 3*MaxFrame), nil, ErrFrameTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, wrap := range []func(io.Reader) io.Reader{
				func(r io.Reader) io.Reader { return r },
				iotest.OneByteReader,
				iotest.HalfReader,
			} {
				got, err := readAll(t, NewReader(wrap(strings.NewReader(tc.in))))
				if !errors.Is(err, tc.final) {
					t.Fatalf("final error %v, want %v", err, tc.final)
				}
				if len(got) != len(tc.want) {
					t.Fatalf("got %d frames, want %d", len(got), len(tc.want))
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Fatalf("frame %d = %.40q", i, got[i])
					}
				}
				if testing.Short() || tc.name == "no newline, huge" {
					break // OneByteReader over 3 MiB is slow
				}
			}
		})
	}
}

func TestReaderZeroesConsumedBytes(t *testing.T) {
	in := []byte("{\"secret\":\"hunter2-canary\"}\n{\"next\":1}\n")
	r := NewReader(bytes.NewReader(in))
	f, err := r.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	clear(f)
	if bytes.Contains(r.buf, []byte("hunter2-canary")) {
		t.Fatal("reader buffer still holds a consumed frame")
	}
	r.ReadFrame()
	r.Wipe()
	if bytes.ContainsAny(r.buf, "nx{") {
		t.Fatal("Wipe left bytes behind")
	}
}

func TestDecodeStrict(t *testing.T) {
	type p struct {
		A string `json:"a"`
	}
	for in, ok := range map[string]bool{
		`{"a":"x"}`:         true,
		`{"a":"x","b":1}`:   false,
		`{"a":1}`:           false,
		`{"a":"x"} {}`:      false,
		`{"a":"x"}garbage`:  false,
		`[]`:                false,
		`{"a":"x"}   `:      true,
		`{"a":"\u0000"}`:    true,
		`{"a":"x"`:          false,
		`{"A":"case-fold"}`: false, // exact key names only
		`null`:              false, // a struct is an object
		`{"a":"x","a":"y"}`: false, // a key once
		`{"a":null}`:        false, // a string is a string
		`{"a":"x",}`:        false,
		`{"a" "x"}`:         false,
		`{"a":"\q"}`:        false,
		`{"a":"x"}}`:        false,
		"{\"a\":\"\x01\"}":  false, // a raw control character in a string
	} {
		var v p
		if err := DecodeStrict([]byte(in), &v); (err == nil) != ok {
			t.Errorf("DecodeStrict(%s) err = %v, want ok=%v", in, err, ok)
		}
	}
}

func TestDecodeStrictNested(t *testing.T) {
	type inner struct {
		S []byte `json:"secret"`
	}
	type embedded struct {
		E string `json:"e"`
	}
	type outer struct {
		ID  uint64          `json:"id"`
		In  *inner          `json:"in"`
		Raw json.RawMessage `json:"raw"`
		embedded
	}
	for in, ok := range map[string]bool{
		`{"id":1,"in":{"secret":"cw=="},"raw":{"anything":1},"e":"x"}`: true,
		`{"id":1,"in":{"secret":"cw==","extra":1}}`:                    false,
		`{"id":1,"in":null}`: true,
		`{"id":1,"Id":2}`:    false,
	} {
		var v outer
		if err := DecodeStrict([]byte(in), &v); (err == nil) != ok {
			t.Errorf("DecodeStrict(%s) err = %v, want ok=%v", in, err, ok)
		}
	}
}

func TestErrorsCarryHints(t *testing.T) {
	for code := range hints {
		if Hint(code) == "" {
			t.Errorf("%s has no hint", code)
		}
	}
	e := Errorf(CodeVaultLocked, "vault %s", "locked")
	if e.Code != CodeVaultLocked || e.Hint == "" || e.Message != "vault locked" || CodeOf(e) != CodeVaultLocked {
		t.Fatalf("%+v", e)
	}
	if b := ErrorFrame(3, e); !bytes.HasSuffix(b, []byte("\n")) || !bytes.Contains(b, []byte(`"id":3`)) {
		t.Fatalf("%s", b)
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte("{}\n"), uint8(1))
	f.Add([]byte("\n\n\n"), uint8(3))
	f.Add([]byte("{\"id\":1}\n{\"id\""), uint8(7))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		r := NewReader(iotest.DataErrReader(&chunked{b: in, n: int(chunk%16) + 1}))
		total := 0
		for {
			fr, err := r.ReadFrame()
			if err != nil {
				break
			}
			if len(fr) == 0 || bytes.IndexByte(fr, '\n') >= 0 || len(fr) >= MaxFrame {
				t.Fatalf("bad frame %q", fr)
			}
			total += len(fr)
		}
		if total > len(in) {
			t.Fatal("produced more bytes than read")
		}
	})
}

type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), c.n, len(c.b))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

func TestFromAsksTheError(t *testing.T) {
	errLocked := Sentinel(CodeVaultLocked, "vault is locked")
	errOdd := SentinelHint(CodeInvalidArgument, "odd value", "use an even one")
	wrapped := fmt.Errorf("open collection: %w", errLocked)
	cases := []struct {
		name       string
		err        error
		code       Code
		msg, hint  string
		isSentinel error
	}{
		{"sentinel", errLocked, CodeVaultLocked, "vault is locked", Hint(CodeVaultLocked), errLocked},
		{"wrapped sentinel", wrapped, CodeVaultLocked, "open collection: vault is locked", Hint(CodeVaultLocked), errLocked},
		{"sentinel with its own hint", fmt.Errorf("x: %w", errOdd), CodeInvalidArgument, "x: odd value", "use an even one", errOdd},
		{"first coder wins", fmt.Errorf("%w: %w", errOdd, errLocked), CodeInvalidArgument, "odd value: vault is locked", "use an even one", errLocked},
		{"Errorf wraps its cause", Errorf(CodeBrowserFailed, "launch: %w", errLocked), CodeBrowserFailed, "launch: vault is locked", Hint(CodeBrowserFailed), errLocked},
		{"wrapped Error", fmt.Errorf("step: %w", Errorf(CodeSessionUnknown, "no session %q", "x")), CodeSessionUnknown, `step: no session "x"`, Hint(CodeSessionUnknown), nil},
		{"deadline", fmt.Errorf("wait: %w", context.DeadlineExceeded), CodeTimeout, "wait: context deadline exceeded", "", context.DeadlineExceeded},
		{"uncoded", errors.New("boom"), CodeInternal, "boom", Hint(CodeInternal), nil},
		{"full disk", fmt.Errorf("write index: %w", &os.PathError{Op: "write", Path: "/d/x", Err: syscall.ENOSPC}), CodeNoSpace,
			"write index: write /d/x: no space left on device", Hint(CodeNoSpace), syscall.ENOSPC},
		{"quota", fmt.Errorf("w: %w", syscall.EDQUOT), CodeNoSpace, "w: disk quota exceeded", Hint(CodeNoSpace), syscall.EDQUOT},
		{"a code beats the full disk", fmt.Errorf("%w: %w", errLocked, syscall.ENOSPC), CodeVaultLocked, "vault is locked: no space left on device", Hint(CodeVaultLocked), errLocked},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := From(c.err)
			if e.Code != c.code || e.Message != c.msg || c.hint != "" && e.Hint != c.hint || e.Hint == "" {
				t.Fatalf("From = %+v, want %s %q %q", e, c.code, c.msg, c.hint)
			}
			if c.isSentinel != nil && !errors.Is(e, c.isSentinel) {
				t.Fatalf("errors.Is(From(err), %v) = false: the cause was lost", c.isSentinel)
			}
			if got := CodeOf(c.err); c.code != CodeInternal && c.code != CodeTimeout && c.code != CodeNoSpace && got != c.code {
				t.Fatalf("CodeOf = %q, want %q", got, c.code)
			}
			if Uncoded(c.err) != (c.code == CodeInternal) {
				t.Fatalf("Uncoded = %v", Uncoded(c.err))
			}
		})
	}
	if From(nil) != nil || CodeOf(nil) != "" || Uncoded(nil) {
		t.Fatal("nil is not an error")
	}
	e := Errorf(CodeBusy, "x")
	if From(e) != e {
		t.Fatal("From of an *Error is not itself")
	}
}

// TestCauseNeverCrossesTheSocket: an Error's frame holds its code, message and hint only.
func TestCauseNeverCrossesTheSocket(t *testing.T) {
	e := Errorf(CodeVaultLocked, "open: %w", errors.New("secret-looking cause"))
	b := ErrorFrame(1, e)
	var r Response
	if err := DecodeStrict(bytes.TrimSpace(b), &r); err != nil {
		t.Fatal(err)
	}
	if r.Error.Code != CodeVaultLocked || r.Error.Message != "open: secret-looking cause" || r.Error.Unwrap() != nil {
		t.Fatalf("%+v", r.Error)
	}
}

func TestCodesAreListed(t *testing.T) {
	codes := Codes()
	if !slices.IsSorted(codes) || !slices.Contains(codes, CodeAuditTampered) || len(codes) != len(hints) {
		t.Fatalf("%v", codes)
	}
}

// TestDecodeStrictSays: a refusal names the path at fault and what is wrong there.
func TestDecodeStrictSays(t *testing.T) {
	type inner struct {
		N    int8     `json:"n"`
		F    float64  `json:"f"`
		B    bool     `json:"b"`
		List []string `json:"list"`
		Ptr  *string  `json:"ptr"`
		Raw  json.RawMessage
	}
	type outer struct {
		In    inner            `json:"in"`
		Items []inner          `json:"items"`
		Map   map[string]inner `json:"map"`
		Bytes []byte           `json:"bytes"`
	}
	for in, want := range map[string]string{
		`{"in":{"n":1.5}}`:                    "in.n: want an integer, got 1.5",
		`{"in":{"n":60.0}}`:                   "in.n: want an integer, got 60.0",
		`{"in":{"n":6e1}}`:                    "in.n: want an integer, got 6e1",
		`{"in":{"n":300}}`:                    "in.n: 300 is out of range",
		`{"in":{"n":"1"}}`:                    "in.n: want an integer, got a string",
		`{"in":{"b":1}}`:                      "in.b: want true or false, got a number",
		`{"in":{"f":"x"}}`:                    "in.f: want a number, got a string",
		`{"in":{"list":"x"}}`:                 "in.list: want an array, got a string",
		`{"in":{"list":[1]}}`:                 "in.list[0]: want a string, got a number",
		`{"items":[{},{"m":1}]}`:              "items[1].m: unknown key",
		`{"map":{"k":{"n":1,"n":2}}}`:         "map.k.n: duplicate key",
		`{"in":{"Raw":{"x":1,"x":2}}}`:        "in.Raw.x: duplicate key",
		`{"in":null}`:                         "in: want an object, got null",
		`{"bytes":[1]}`:                       "bytes: want a string, got an array",
		`{} {}`:                               "trailing data after the top-level value (an object)",
		`{}x`:                                 "invalid character 'x' after the top-level value",
		``:                                    "unexpected end of input",
		`{"in":{"Raw":` + deep(40) + `}}`:     "nested more than 32 deep",
		`{"in":{"n":1}`:                       "unexpected end of input",
		`{"in" {}}`:                           "in: syntax error",
		`{"in":{"ptr":null,"list":null}} `:    "",
		`{"bytes":"aGk=","in":{"Raw":[1,2]}}`: "",
	} {
		var v outer
		err := DecodeStrict([]byte(in), &v)
		if want == "" {
			if err != nil {
				t.Errorf("DecodeStrict(%s) = %v, want nil", in, err)
			}
			continue
		}
		var se *StrictError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeStrict(%s) = %v, want a StrictError with %q", in, err, want)
		}
	}
}

func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
