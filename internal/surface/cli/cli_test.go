package cli

import (
	"context"
	"encoding/json"
	"flag"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// TestHelpForEveryCommand: every command and subcommand prints its own usage for --help, -h
// and -help and exits 0, whatever else is on the line; so do the groups and 'help CMD'.
func TestHelpForEveryCommand(t *testing.T) {
	w := newWorld(t)
	table := (&cmd{}).commands()
	for _, c := range table {
		for _, h := range []string{"--help", "-h", "-help"} {
			args := append(strings.Fields(c.name), h)
			if code := w.run(args...); code != 0 {
				t.Fatalf("%v: exit %d, stderr %q", args, code, w.stderr.String())
			}
			out := w.stdout.String()
			if !strings.HasPrefix(out, "Usage: headless "+c.name) || !strings.Contains(out, "--json") || !strings.Contains(out, "-h, --help") {
				t.Fatalf("%v: not its usage:\n%s", args, out)
			}
			if w.methods("host") != nil || w.methods("broker") != nil {
				t.Fatalf("%v talked to a socket", args)
			}
		}
		// After other flags and arguments too, and with --json (help is never JSON).
		args := append(strings.Fields(c.name), "x", "--json", "--help")
		if code := w.run(args...); code != 0 || !strings.HasPrefix(w.stdout.String(), "Usage: headless "+c.name) {
			t.Fatalf("%v: exit %d: %q", args, code, w.stdout.String())
		}
		if code := w.run(append([]string{"help"}, strings.Fields(c.name)...)...); code != 0 || !strings.HasPrefix(w.stdout.String(), "Usage: headless "+c.name) {
			t.Fatalf("help %s: exit %d: %q", c.name, code, w.stdout.String())
		}
	}
	for group := range groups {
		if code := w.run(group, "--help"); code != 0 || !strings.HasPrefix(w.stdout.String(), "Usage: headless "+group+" SUBCOMMAND") {
			t.Fatalf("%s --help: exit %d: %q", group, code, w.stdout.String())
		}
	}
	// 'headless help' lists every command and every code of the one error table.
	if code := w.run("help"); code != 0 {
		t.Fatal(code)
	}
	for _, c := range table {
		if !strings.Contains(w.stdout.String(), "headless "+c.name) {
			t.Errorf("help does not list %q", c.name)
		}
	}
	for _, code := range wire.Codes() {
		if !strings.Contains(w.stdout.String(), string(code)) {
			t.Errorf("help does not list %s", code)
		}
	}
	// --help after "--" is an argument, not a request for help.
	w.host = fakeHost()
	if code := w.run("fill", "e1", "--", "--help"); code != 0 || !strings.HasPrefix(w.stdout.String(), "default: ") && !strings.Contains(w.stdout.String(), "filled e1") {
		t.Fatalf("fill e1 -- --help: exit %d: %q %q", code, w.stdout.String(), w.stderr.String())
	}
}

// TestUsageErrors: a bad command line is USAGE with exit status 2, in JSON when --json is
// anywhere before "--", with a hint naming the command's --help; nothing is asked of a socket.
func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args     []string
		json     bool
		contains string
		hint     string
	}{
		{[]string{"session", "--json"}, true, "session needs a subcommand", "headless session --help"},
		{[]string{"credentials", "--json"}, true, "credentials needs a subcommand", "headless credentials --help"},
		{[]string{"credentials", "nope", "--json"}, true, `unknown credentials subcommand "nope"`, "headless credentials --help"},
		{[]string{"audit"}, false, "audit needs a subcommand", "headless audit --help"},
		{[]string{"frobnicate", "--json"}, true, `unknown command "frobnicate"`, "headless help"},
		{[]string{"visit", "--json"}, true, "visit needs URL", "headless visit --help"},
		{[]string{"visit", "a", "b", "--json"}, true, `unexpected argument "b"`, "headless visit --help"},
		{[]string{"visit", "--session", "--json", "x"}, true, "--session needs a value", "headless visit --help"},
		{[]string{"visit", "x", "--session"}, false, "--session needs a value", "headless visit --help"},
		{[]string{"visit", "x", "--nope"}, false, "unknown flag --nope", "headless visit --help"},
		{[]string{"wait", "--timeout", "soon", "--json"}, true, `invalid value "soon" for --timeout`, "headless wait --help"},
		{[]string{"wait", "--json"}, true, "wait needs --text, --gone, --url, --ref or --network-idle", "headless wait --help"},
		{[]string{"fill", "e1", "text", "--json"}, true, `fill takes REF, then "--", then TEXT`, "headless fill --help"},
		{[]string{"select", "e1", "--json"}, true, "select needs REF VALUE…", "headless select --help"},
		{[]string{"hover", "--json"}, true, "hover needs REF", "headless hover --help"},
		{[]string{"scroll", "e1", "e2", "--json"}, true, `unexpected argument "e2"`, "headless scroll --help"},
		{[]string{"scroll", "--by", "far", "--json"}, true, `invalid value "far" for --by`, "headless scroll --help"},
		{[]string{"back", "x", "--json"}, true, `unexpected argument "x"`, "headless back --help"},
		{[]string{"screenshot", "--ref", "e1", "--full-page", "--json"}, true, "not both", "headless screenshot --help"},
		{[]string{"fill", "--", "e1", "text"}, false, `fill takes REF, then "--", then TEXT`, "headless fill --help"},
		{[]string{"session", "create", "--isolated"}, false, "session create needs NAME", "headless session create --help"},
		{[]string{"credentials", "add", "--origin", "https://a.example", "--account", "a@x", "--json"}, true, "--alias is required", "headless credentials add --help"},
		{[]string{"auth", "login", "--json"}, true, "--alias is required", "headless auth login --help"},
		{[]string{"auth", "login", "--interactive", "--alias", "a"}, false, "--interactive takes no --alias", "headless auth login --help"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			w := newWorld(t)
			w.host, w.broker = fakeHost(), fakeBroker(200, brokerapi.StartedAuto)
			if code := w.run(c.args...); code != 2 {
				t.Fatalf("exit %d, want 2; stdout %q stderr %q", code, w.stdout.String(), w.stderr.String())
			}
			if c.json {
				code, msg, hint := w.errOut()
				if code != "USAGE" || !strings.Contains(msg, c.contains) || !strings.Contains(hint, c.hint) {
					t.Fatalf("%s %q %q", code, msg, hint)
				}
				if w.stderr.Len() != 0 {
					t.Fatalf("stderr with --json: %q", w.stderr.String())
				}
			} else {
				want := "headless: error: USAGE: "
				if !strings.HasPrefix(w.stderr.String(), want) || !strings.Contains(w.stderr.String(), c.contains) || !strings.Contains(w.stderr.String(), "\nhint: ") || !strings.Contains(w.stderr.String(), c.hint) {
					t.Fatalf("stderr %q", w.stderr.String())
				}
				if w.stdout.Len() != 0 {
					t.Fatalf("stdout %q", w.stdout.String())
				}
			}
			if m := w.methods("host"); len(m) > 0 {
				t.Fatalf("a usage error asked the host %v", m)
			}
		})
	}
	w := newWorld(t)
	if code := w.run(); code != 2 || !strings.Contains(w.stderr.String(), "Usage:") {
		t.Fatalf("no arguments: exit %d", code)
	}
}

// TestArgumentParsing: flags before or after the arguments, --flag=value, and nothing after
// "--" is ever a flag.
func TestArgumentParsing(t *testing.T) {
	cases := []struct {
		args   []string
		method string
		want   string // the params the host gets
		asJSON bool
	}{
		{[]string{"visit", "https://a.example/", "--session", "s1"}, control.MethodVisit, `{"session":"s1","url":"https://a.example/"}`, false},
		{[]string{"visit", "--session", "s1", "https://a.example/", "--json"}, control.MethodVisit, `{"session":"s1","url":"https://a.example/"}`, true},
		{[]string{"visit", "--session=s1", "-json", "https://a.example/"}, control.MethodVisit, `{"session":"s1","url":"https://a.example/"}`, true},
		{[]string{"visit", "https://a.example/"}, control.MethodVisit, `{"session":"default","url":"https://a.example/"}`, false},
		{[]string{"fill", "e1", "--", "--json"}, control.MethodFill, `{"session":"default","ref":"e1","text":"--json"}`, false},
		{[]string{"fill", "--session", "s1", "e1", "--json", "--", "-- x --session y"}, control.MethodFill, `{"session":"s1","ref":"e1","text":"-- x --session y"}`, true},
		{[]string{"fill", "e1", "--", ""}, control.MethodFill, `{"session":"default","ref":"e1","text":""}`, false},
		{[]string{"click", "e7", "--session", "s1"}, control.MethodClick, `{"session":"s1","ref":"e7"}`, false},
		{[]string{"press", "--", "-"}, control.MethodPress, `{"session":"default","key":"-"}`, false},
		{[]string{"press", "-"}, control.MethodPress, `{"session":"default","key":"-"}`, false},
		{[]string{"wait", "--text=-5", "--timeout", "3s"}, control.MethodWait, `{"session":"default","text":"-5","timeout_ms":3000}`, false},
		{[]string{"wait", "--gone", "Loading", "--ref", "e2"}, control.MethodWait, `{"session":"default","gone":"Loading","ref":"e2","timeout_ms":10000}`, false},
		{[]string{"select", "e3", "red", "green", "--json"}, control.MethodSelect, `{"session":"default","ref":"e3","values":["red","green"]}`, true},
		{[]string{"select", "e3", "--", "-1", "--json"}, control.MethodSelect, `{"session":"default","ref":"e3","values":["-1","--json"]}`, false},
		{[]string{"select", "--session", "s1", "e3", "United Kingdom"}, control.MethodSelect, `{"session":"s1","ref":"e3","values":["United Kingdom"]}`, false},
		{[]string{"hover", "e2"}, control.MethodHover, `{"session":"default","ref":"e2"}`, false},
		{[]string{"scroll"}, control.MethodScroll, `{"session":"default"}`, false},
		{[]string{"scroll", "e4", "--by=-300", "--json"}, control.MethodScroll, `{"session":"default","ref":"e4","by":-300}`, true},
		{[]string{"scroll", "--by", "700"}, control.MethodScroll, `{"session":"default","by":700}`, false},
		{[]string{"back", "--session", "s1"}, control.MethodBack, `{"session":"s1"}`, false},
		{[]string{"press", "Enter", "--ref", "e5"}, control.MethodPress, `{"session":"default","key":"Enter","ref":"e5"}`, false},
		{[]string{"screenshot"}, control.MethodScreenshot, `{"session":"default"}`, false},
		{[]string{"screenshot", "--ref", "e1"}, control.MethodScreenshot, `{"session":"default","ref":"e1"}`, false},
		{[]string{"screenshot", "--full-page", "--json"}, control.MethodScreenshot, `{"session":"default","full_page":true}`, true},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			w := newWorld(t)
			w.host = fakeHost()
			if code := w.run(c.args...); code != 0 {
				t.Fatalf("exit %d: %q %q", code, w.stdout.String(), w.stderr.String())
			}
			got := w.received("host", c.method)
			if len(got) != 1 || string(got[0]) != c.want {
				t.Fatalf("host got %s, want %s", got, c.want)
			}
			if c.asJSON {
				w.jsonOut()
			} else if strings.HasPrefix(w.stdout.String(), "{") {
				t.Fatalf("JSON without --json: %q", w.stdout.String())
			}
		})
	}
}

// TestParseArgs: the parser knows which flags take a value from the flag set itself.
func TestParseArgs(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	s := fs.String("session", "default", "")
	b := fs.Bool("isolated", false, "")
	d := fs.Duration("timeout", time.Second, "")
	p, err := parseArgs(fs, []string{"a", "--isolated", "-session", "s", "b", "--timeout=2s", "--", "--isolated", "-h"})
	if err != nil || *s != "s" || !*b || *d != 2*time.Second || strings.Join(p.args, ",") != "a,b,--isolated,-h" || p.dash != 2 || p.help {
		t.Fatalf("%+v %v %q %v %v", p, err, *s, *b, *d)
	}
	if _, err := parseArgs(fs, []string{"--isolated=maybe"}); err == nil {
		t.Fatal("a bad boolean parsed")
	}
	if _, err := parseArgs(fs, []string{"---session", "x"}); err == nil {
		t.Fatal("---session parsed")
	}
	if p, _ := parseArgs(fs, []string{"x", "-h"}); !p.help || p.dash != -1 {
		t.Fatalf("%+v", p)
	}
	// --help=false asks for no help (a hostile review of issue 46 found it printed the help).
	if p, err := parseArgs(fs, []string{"--help=false"}); err != nil || p.help {
		t.Fatalf("--help=false: %+v %v; want no help", p, err)
	}
	if p, err := parseArgs(fs, []string{"--help=true"}); err != nil || !p.help {
		t.Fatalf("--help=true: %+v %v; want help", p, err)
	}
	if _, err := parseArgs(fs, []string{"--help=maybe"}); err == nil {
		t.Fatal("--help=maybe parsed")
	}
}

// TestErrorPrinting: an error prints its code, message and hint, as the README promises, or
// {"error":{code,message,hint}} with --json; exit status 1.
func TestErrorPrinting(t *testing.T) {
	w := newWorld(t)
	w.host = fakeHost()
	rpc.Handle(w.host, control.MethodAuthLogin, func(ctx context.Context, p control.AuthParams) (control.AuthResult, error) {
		return control.AuthResult{}, wire.Errorf(wire.CodePresenceDenied, "presence denied: the person said no")
	})
	if code := w.run("auth", "login", "--alias", "a"); code != 1 {
		t.Fatalf("exit %d", code)
	}
	want := "headless: error: PRESENCE_DENIED: presence denied: the person said no\nhint: " + wire.Hint(wire.CodePresenceDenied) + "\n"
	if w.stderr.String() != want || w.stdout.Len() != 0 {
		t.Fatalf("stderr %q\nwant   %q", w.stderr.String(), want)
	}
	if code := w.run("auth", "login", "--alias", "a", "--json"); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if code, msg, hint := w.errOut(); code != "PRESENCE_DENIED" || msg != "presence denied: the person said no" || hint != wire.Hint(wire.CodePresenceDenied) {
		t.Fatalf("%s %q %q", code, msg, hint)
	}
	// A CLI-side error of a sentinel: its code and its own hint.
	if code := w.run("credentials", "add", "--origin", "https://a.example", "--account", "u", "--alias", "bad alias", "--json"); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if code, _, hint := w.errOut(); code != "INVALID_ARGUMENT" || !strings.Contains(hint, "aliases are letters") {
		t.Fatalf("%s %q", code, hint)
	}
}

// TestControlSocketFailuresAreHostUnavailable: whatever goes wrong with control.sock — nothing
// listens, the host dies mid-call, a malformed reply, no answer before the CLI's own deadline —
// it is HOST_UNAVAILABLE, never BROKER_UNAVAILABLE or "start brokerd".
func TestControlSocketFailuresAreHostUnavailable(t *testing.T) {
	check := func(t *testing.T, w *world, ctx context.Context, args ...string) {
		t.Helper()
		if code := w.runCtx(ctx, append(args, "--json")...); code != 1 {
			t.Fatalf("exit %d: %q", code, w.stdout.String())
		}
		code, msg, hint := w.errOut()
		if code != "HOST_UNAVAILABLE" || strings.Contains(msg+hint, "broker") {
			t.Fatalf("%s %q %q", code, msg, hint)
		}
	}
	t.Run("not running", func(t *testing.T) {
		w := newWorld(t)
		for _, args := range [][]string{{"visit", "https://a.example/"}, {"snapshot"}, {"session", "list"}, {"auth", "login", "--alias", "a"}, {"credentials", "verify", "--origin", "https://a.example", "--alias", "a"}, {"credentials", "list", "--session", "iso"}} {
			check(t, w, context.Background(), args...)
		}
	})
	t.Run("died mid-call", func(t *testing.T) {
		w := newWorld(t)
		w.host = fakeHost()
		env := w.env()
		env.DialControl = func(ctx context.Context) (*control.Client, error) {
			a, b := net.Pipe()
			go func() {
				buf := make([]byte, 512)
				b.Read(buf) // the request, then the host is gone
				b.Close()
			}()
			return control.NewClient(a), nil
		}
		w.stdout.Reset()
		if code := Run(context.Background(), []string{"visit", "https://a.example/", "--json"}, env); code != 1 {
			t.Fatal(code)
		}
		if code, msg, _ := w.errOut(); code != "HOST_UNAVAILABLE" || !strings.Contains(msg, "browser host unreachable") {
			t.Fatalf("%s %q", code, msg)
		}
	})
	t.Run("malformed reply", func(t *testing.T) {
		w := newWorld(t)
		env := w.env()
		env.DialControl = func(ctx context.Context) (*control.Client, error) {
			a, b := net.Pipe()
			go func() {
				buf := make([]byte, 512)
				b.Read(buf)
				b.Write([]byte(`{"id":1,"result":{"session":7}}` + "\n"))
			}()
			t.Cleanup(func() { b.Close() })
			return control.NewClient(a), nil
		}
		if code := Run(context.Background(), []string{"visit", "https://a.example/", "--json"}, env); code != 1 {
			t.Fatal(code)
		}
		if code, _, _ := w.errOut(); code != "HOST_UNAVAILABLE" {
			t.Fatal(code)
		}
	})
	t.Run("no answer before the deadline", func(t *testing.T) {
		w := newWorld(t)
		w.host = fakeHost()
		rpc.Handle(w.host, control.MethodSnapshot, func(ctx context.Context, p control.SessionParams) (control.SnapshotResult, error) {
			<-ctx.Done() // a host that never answers
			return control.SnapshotResult{}, ctx.Err()
		})
		for i := 0; i < 20; i++ { // the socket's deadline and the context's race: never "unreachable" for a deadline
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			check(t, w, ctx, "snapshot")
			cancel()
			if _, msg, _ := w.errOut(); !strings.Contains(msg, "did not answer in time") {
				t.Fatalf("%q", msg)
			}
		}
	})
}

// TestCredentialsSession: --session S selects the store S signs in with: the vault for a
// normal session (default included), the isolated session's own store (through the host)
// for an isolated one. Without a host, no --session and --session default are the vault.
func TestCredentialsSession(t *testing.T) {
	cases := []struct {
		name      string
		host      bool
		args      []string
		wantStore string // "vault", "isolated" or an error code
	}{
		{"no session, no host", false, nil, "vault"},
		{"default, no host", false, []string{"--session", "default"}, "vault"},
		{"default, host", true, []string{"--session", "default"}, "vault"},
		{"normal session", true, []string{"--session", "work"}, "vault"},
		{"isolated session", true, []string{"--session", "iso"}, "isolated"},
		{"unknown session", true, []string{"--session", "nope"}, "SESSION_UNKNOWN"},
		{"isolated session, no host", false, []string{"--session", "iso"}, "HOST_UNAVAILABLE"},
		{"bad name", true, []string{"--session", "bad name"}, "INVALID_ARGUMENT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.broker = fakeBroker(200, brokerapi.StartedAuto)
			if c.host {
				w.host = fakeHost("work", "*iso")
			}
			code := w.run(append([]string{"credentials", "list", "--json"}, c.args...)...)
			switch c.wantStore {
			case "vault", "isolated":
				if code != 0 {
					t.Fatalf("exit %d: %s", code, w.stdout.String())
				}
				creds := w.jsonOut()["credentials"].([]any)
				alias := creds[0].(map[string]any)["alias"]
				if want := c.wantStore + "-alias"; c.wantStore == "isolated" && alias != "iso-alias" || c.wantStore == "vault" && alias != "vault-alias" {
					t.Fatalf("listed %v, want %s", alias, want)
				}
				if c.wantStore == "vault" && len(w.received("host", control.MethodCredentialsList)) != 0 {
					t.Fatal("the vault was listed through the host")
				}
				if c.wantStore == "vault" {
					if p := w.received("broker", brokerapi.MethodCredentialsList); len(p) != 1 || strings.Contains(string(p[0]), "session") {
						t.Fatalf("broker got %s", p)
					}
				}
				if c.wantStore == "isolated" {
					if p := w.received("host", control.MethodCredentialsList); len(p) != 1 || string(p[0]) != `{"session":"iso"}` {
						t.Fatalf("host got %s", p)
					}
				}
			default:
				if code != 1 {
					t.Fatalf("exit %d", code)
				}
				if got, _, _ := w.errOut(); got != c.wantStore {
					t.Fatalf("code %s, want %s", got, c.wantStore)
				}
			}
		})
	}
}

// TestCredentialsAdd: the password comes from the terminal only, twice, and goes to the store
// --session names; never an argument.
func TestCredentialsAdd(t *testing.T) {
	for _, session := range []string{"", "work", "iso"} {
		t.Run("session="+session, func(t *testing.T) {
			w := newWorld(t)
			w.broker = fakeBroker(200, brokerapi.StartedAuto)
			w.host = fakeHost("work", "*iso")
			var vaultGot, isoGot string
			rpc.Handle(w.broker, brokerapi.MethodCredentialsAdd, func(ctx context.Context, p brokerapi.AddParams) (brokerapi.Credential, error) {
				vaultGot = p.Session + ":" + string(p.Secret)
				return brokerapi.Credential{Origin: p.Origin, Account: p.Account, Alias: p.Alias}, nil
			})
			rpc.Handle(w.host, control.MethodCredentialsAdd, func(ctx context.Context, p control.CredentialsAddParams) (control.Credential, error) {
				isoGot = p.Session + ":" + string(p.Secret)
				return control.Credential{Origin: p.Origin, Account: p.Account, Alias: p.Alias}, nil
			})
			w.tty = &fakeTTY{answers: []string{"pw-1", "pw-1"}}
			args := []string{"credentials", "add", "--origin", "HTTPS://A.example:443", "--account", "u@a", "--alias", "al", "--json"}
			if session != "" {
				args = append(args, "--session", session)
			}
			if code := w.run(args...); code != 0 {
				t.Fatalf("exit %d: %s", code, w.stdout.String())
			}
			if m := w.jsonOut(); m["alias"] != "al" || m["origin"] != "https://a.example" {
				t.Fatalf("%v", m)
			}
			if session == "iso" && (isoGot != "iso:pw-1" || vaultGot != "") || session != "iso" && (vaultGot != ":pw-1" || isoGot != "") {
				t.Fatalf("vault got %q, isolated store got %q", vaultGot, isoGot)
			}
			if strings.Contains(w.stdout.String()+w.stderr.String(), "pw-1") {
				t.Fatal("the password was printed")
			}
		})
	}
	w := newWorld(t)
	w.broker = fakeBroker(200, brokerapi.StartedAuto)
	w.tty = &fakeTTY{answers: []string{"pw-1", "pw-2"}}
	if code := w.run("credentials", "add", "--origin", "https://a.example", "--account", "u", "--alias", "al", "--json"); code != 1 {
		t.Fatal(code)
	}
	if code, _, _ := w.errOut(); code != "INVALID_ARGUMENT" {
		t.Fatal(code)
	}
	w.tty = nil
	if code := w.run("credentials", "add", "--origin", "https://a.example", "--account", "u", "--alias", "al", "--json"); code != 1 {
		t.Fatal(code)
	}
	if code, _, _ := w.errOut(); code != "NO_TTY" {
		t.Fatal(code)
	}
	w.tty = &fakeTTY{} // ^C at the prompt
	if code := w.run("credentials", "add", "--origin", "https://a.example", "--account", "u", "--alias", "al", "--json"); code != 1 {
		t.Fatal(code)
	}
	if code, _, _ := w.errOut(); code != "CANCELLED" {
		t.Fatal(code)
	}
}

// TestJSONResults: the result objects of the README's convention.
func TestJSONResults(t *testing.T) {
	w := newWorld(t)
	w.autostart = fakeBroker(200, brokerapi.StartedAuto)
	if code := w.run("start", "--json"); code != 0 {
		t.Fatalf("start: %d %s", code, w.stdout.String())
	}
	if m := w.jsonOut(); m["started"] != true || m["broker_pid"] != float64(200) || m["host"].(map[string]any)["pid"] != float64(300) || m["status"] != nil {
		t.Fatalf("start: %v", m)
	}
	if w.started != 1 {
		t.Fatalf("brokerd auto-started %d times", w.started)
	}

	w.host = fakeHost("*iso")
	if code := w.run("session", "list", "--json"); code != 0 {
		t.Fatal(code)
	}
	ss := w.jsonOut()["sessions"].([]any)
	if s := ss[1].(map[string]any); len(ss) != 2 || s["name"] != "iso" || s["isolated"] != true || s["responsive"] != true || s["status"] != nil {
		t.Fatalf("session list: %v", ss)
	}

	rpc.Handle(w.host, control.MethodCredentialsVerify, func(ctx context.Context, p control.VerifyParams) (control.VerifyResult, error) {
		return control.VerifyResult{Released: true, Origin: p.Origin, Account: "u", Alias: p.Alias}, nil
	})
	if code := w.run("credentials", "verify", "--origin", "https://a.example", "--alias", "a", "--json"); code != 0 {
		t.Fatal(code)
	}
	if m := w.jsonOut(); m["released"] != true || m["status"] != nil || m["alias"] != "a" {
		t.Fatalf("verify: %v", m)
	}

	if code := w.run("status", "--json"); code != 0 {
		t.Fatal(code)
	}
	st := w.jsonOut()
	if h := st["host"].(map[string]any); h["running"] != true || h["pid"] != float64(300) {
		t.Fatalf("status: %v", st)
	}
	if b := st["broker"].(map[string]any); b["running"] != true || b["started"] != "auto" {
		t.Fatalf("status: %v", st)
	}

	if code := w.run("version", "--json"); code != 0 || w.jsonOut()["version"] == nil {
		t.Fatal(code)
	}
	if code := w.run("--version"); code != 0 || !strings.HasPrefix(w.stdout.String(), "headless ") {
		t.Fatal(code)
	}
}

// TestStop: the host is shut down; a brokerd headless started is signalled (through the
// injected Signal), one the person started is left running and the output says so.
func TestStop(t *testing.T) {
	w := newWorld(t)
	w.host = fakeHost()
	w.broker = fakeBroker(200, brokerapi.StartedAuto)
	w.alive[200] = true
	if code := w.run("stop", "--json"); code != 0 {
		t.Fatal(code, w.stdout.String())
	}
	m := w.jsonOut()["stopped"].(map[string]any)
	if m["host_pid"] != float64(300) || m["broker_pid"] != float64(200) || len(w.signals) != 1 || w.signals[0] != 200 {
		t.Fatalf("%v, signals %v", m, w.signals)
	}

	w = newWorld(t)
	w.broker = fakeBroker(201, brokerapi.StartedPerson)
	if code := w.run("stop"); code != 0 {
		t.Fatal(code)
	}
	if len(w.signals) != 0 || !strings.Contains(w.stdout.String(), "left running") {
		t.Fatalf("%q %v", w.stdout.String(), w.signals)
	}

	w = newWorld(t)
	if code := w.run("stop", "--json"); code != 0 {
		t.Fatal(code)
	}
	if m := w.jsonOut()["stopped"].(map[string]any); m["host_pid"] != float64(0) {
		t.Fatalf("%v", m)
	}
}

// TestProfileClear: with a host, through it; without one, with the injected ClearStopped;
// asked on the terminal unless --yes (no terminal: NO_TTY, nothing cleared).
func TestProfileClear(t *testing.T) {
	w := newWorld(t)
	if code := w.run("profile", "clear", "--json"); code != 1 {
		t.Fatal(code)
	}
	if code, _, _ := w.errOut(); code != "NO_TTY" || w.cleared != 0 {
		t.Fatal(code, w.cleared)
	}
	w.tty = &fakeTTY{answers: []string{"n"}}
	if code := w.run("profile", "clear", "--json"); code != 1 {
		t.Fatal(code)
	}
	if code, _, _ := w.errOut(); code != "CANCELLED" || w.cleared != 0 {
		t.Fatal(code)
	}
	// The host stopped: the clear must be recorded by brokerd. Without one nothing is cleared;
	// with its audit log full (the reservation refused) nothing is either.
	if code := w.run("profile", "clear", "--yes", "--json"); code != 1 || w.cleared != 0 {
		t.Fatal("clear without brokerd:", code, w.cleared)
	}
	w.broker = fakeBroker(200, brokerapi.StartedAuto)
	full := true
	var recorded []brokerapi.ProfileClearedParams
	rpc.Handle(w.broker, brokerapi.MethodProfileCleared, func(ctx context.Context, p brokerapi.ProfileClearedParams) (struct{}, error) {
		if p.Reserve && full {
			return struct{}{}, wire.Errorf(wire.CodeAuditUnavail, "the audit log cannot take a record: nothing was cleared")
		}
		recorded = append(recorded, p)
		return struct{}{}, nil
	})
	if code := w.run("profile", "clear", "--yes", "--json"); code != 1 || w.cleared != 0 {
		t.Fatal("clear with the audit log full:", code, w.cleared)
	}
	if code, _, _ := w.errOut(); code != "AUDIT_UNAVAILABLE" {
		t.Fatal(code)
	}
	full = false
	if code := w.run("profile", "clear", "--yes", "--json"); code != 0 || w.cleared != 1 || w.jsonOut()["cleared"] != true {
		t.Fatal(code, w.cleared)
	}
	if len(recorded) != 2 || !recorded[0].Reserve || recorded[1].Reserve {
		t.Fatalf("brokerd was told %+v; want the reservation, then the record", recorded)
	}
	w.broker = nil
	w.host = fakeHost()
	rpc.Handle(w.host, control.MethodProfileClear, func(ctx context.Context, _ struct{}) (control.ClearResult, error) {
		return control.ClearResult{Cleared: true, Profile: "/p", SessionsClosed: 2}, nil
	})
	if code := w.run("profile", "clear", "--yes", "--json"); code != 0 || w.cleared != 1 || w.jsonOut()["sessions_closed"] != float64(2) {
		t.Fatal(code, w.cleared, w.stdout.String())
	}
}

// TestAuthInteractive: account and password from the terminal only, in one hand-built frame;
// a save only after "authenticated" and a yes.
func TestAuthInteractive(t *testing.T) {
	w := newWorld(t)
	w.host = fakeHost()
	var secret string
	rpc.Handle(w.host, control.MethodAuthEnroll, func(ctx context.Context, p control.EnrollParams) (control.EnrollResult, error) {
		secret = p.Account + ":" + string(p.Secret)
		return control.EnrollResult{Status: "authenticated", Origin: "https://a.example", Session: "default", Token: "enr-1"}, nil
	})
	var saved string
	rpc.Handle(w.host, control.MethodAuthEnrollSave, func(ctx context.Context, p control.EnrollSaveParams) (control.EnrollSaved, error) {
		if p.Alias == "taken" {
			return control.EnrollSaved{}, wire.Errorf(wire.CodeAliasExists, "alias %q exists", p.Alias)
		}
		saved = p.Token + ":" + p.Alias
		return control.EnrollSaved{Saved: p.Alias, Origin: "https://a.example", Store: "vault"}, nil
	})
	w.tty = &fakeTTY{answers: []string{"me@a", "pw-9", "y", "taken", "mine"}}
	if code := w.run("auth", "login", "--interactive", "--json"); code != 0 {
		t.Fatal(code, w.stdout.String())
	}
	if m := w.jsonOut(); m["status"] != "authenticated" || m["saved"] != "mine" || secret != "me@a:pw-9" || saved != "enr-1:mine" {
		t.Fatalf("%v %q %q", m, secret, saved)
	}
	if p := w.tty.prompts[4]; !strings.Contains(p, `alias "taken" exists; choose another`) {
		t.Fatalf("prompt %q", p)
	}
	if strings.Contains(w.stdout.String(), "pw-9") {
		t.Fatal("password printed")
	}
	// An unknown session is refused before anything is read from the terminal.
	w.tty = &fakeTTY{answers: []string{"me@a", "pw-9"}}
	if code := w.run("auth", "login", "--interactive", "--session", "nope", "--json"); code != 1 {
		t.Fatal(code)
	}
	if code, _, _ := w.errOut(); code != "SESSION_UNKNOWN" || len(w.tty.prompts) != 0 {
		t.Fatal(code, w.tty.prompts)
	}
}

// TestHostResultPassesThrough: what the host answers is what --json prints.
func TestHostResultPassesThrough(t *testing.T) {
	w := newWorld(t)
	w.host = fakeHost()
	if code := w.run("visit", "https://a.example/x", "--json"); code != 0 {
		t.Fatal(code)
	}
	var got control.PageResult
	if err := json.Unmarshal(w.stdout.Bytes(), &got); err != nil || got.URL != "https://a.example/x" || got.Session != "default" {
		t.Fatalf("%+v %v", got, err)
	}
}

// TestPageVerbResults: the objects select, hover, scroll, back and screenshot print with
// --json (control.sock's, field for field), and what their human output says.
func TestPageVerbResults(t *testing.T) {
	w := newWorld(t)
	w.host = fakeHost()
	for _, c := range []struct {
		args  []string
		want  string // the --json line
		human string // in the human output
	}{
		{[]string{"select", "e3", "red", "green"}, `{"session":"default","url":"https://a.example/","title":"T","ref":"e3","selected":["red","green"]}`, `selected ["red" "green"] in e3`},
		{[]string{"hover", "e2"}, `{"session":"default","ref":"e2","hovered":true}`, "hovered e2 in default"},
		{[]string{"scroll"}, `{"session":"default","scroll_x":0,"scroll_y":600,"viewport_width":800,"viewport_height":600,"content_width":800,"content_height":5000}`, "at 0,600 (viewport 800×600 of a 800×5000 page)"},
		{[]string{"back"}, `{"session":"default","url":"https://a.example/before","title":"T"}`, "default: https://a.example/before"},
		{[]string{"screenshot", "--full-page"}, `{"session":"default","path":"/p/s.png","sha256":"ab","bytes":10,"width":800,"height":16384,"truncated":true}`, "800×16384 pixels"},
		{[]string{"screenshot"}, `{"session":"default","path":"/p/s.png","sha256":"ab","bytes":10,"width":800,"height":16384}`, "/p/s.png"},
	} {
		if code := w.run(append(c.args, "--json")...); code != 0 || strings.TrimSpace(w.stdout.String()) != c.want {
			t.Errorf("%v --json: exit %d: %s, want %s", c.args, code, w.stdout.String(), c.want)
		}
		if code := w.run(c.args...); code != 0 || !strings.Contains(w.stdout.String(), c.human) {
			t.Errorf("%v: exit %d: %q, want it to say %q", c.args, code, w.stdout.String(), c.human)
		}
	}
	if code := w.run("screenshot", "--full-page"); code != 0 || !strings.Contains(w.stdout.String(), "cut to 4096×16384") {
		t.Errorf("a cut screenshot does not say so: %q", w.stdout.String())
	}
}

// TestCredentialsAddTOTP: with --totp the seed is read from the terminal after the password
// and travels with it as one stored secret; a malformed seed saves nothing; neither is printed.
func TestCredentialsAddTOTP(t *testing.T) {
	const seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
	w := newWorld(t)
	w.broker = fakeBroker(200, brokerapi.StartedAuto)
	var got []byte
	rpc.Handle(w.broker, brokerapi.MethodCredentialsAdd, func(ctx context.Context, p brokerapi.AddParams) (brokerapi.Credential, error) {
		got = append([]byte(nil), p.Secret...)
		return brokerapi.Credential{Origin: p.Origin, Account: p.Account, Alias: p.Alias, TOTP: true}, nil
	})
	w.tty = &fakeTTY{answers: []string{"pw-1", "pw-1", "otpauth://totp/x:u?secret=" + seed + "&digits=8&algorithm=SHA256"}}
	if code := w.run("credentials", "add", "--origin", "https://a.example", "--account", "u", "--alias", "al", "--totp", "--json"); code != 0 {
		t.Fatalf("exit %d: %s %s", code, w.stdout.String(), w.stderr.String())
	}
	pw, factor := credential.SplitFactor(got)
	if string(pw) != "pw-1" || string(factor) != "totp1:SHA256:8:30:"+seed {
		t.Fatalf("stored secret not password + factor (%d bytes)", len(got))
	}
	if m := w.jsonOut(); m["totp"] != true {
		t.Fatalf("%v", m)
	}
	out := w.stdout.String() + w.stderr.String()
	if strings.Contains(out, "pw-1") || strings.Contains(out, seed) {
		t.Fatal("the password or the seed was printed")
	}
	got = nil
	w.tty = &fakeTTY{answers: []string{"pw-1", "pw-1", "not a seed!"}}
	if code := w.run("credentials", "add", "--origin", "https://a.example", "--account", "u", "--alias", "al", "--totp", "--json"); code != 1 {
		t.Fatal(code)
	}
	if code, _, _ := w.errOut(); code != "INVALID_ARGUMENT" || got != nil {
		t.Fatalf("code %s, saved %v", code, got != nil)
	}
}

// TestStatusBusy: a daemon whose socket answers BUSY (every connection taken) runs: status
// says so with the code, never "not running" (red-team round 5 saw "brokerd: not running"
// and "host":{"running":false} while both ran, saturated).
func TestStatusBusy(t *testing.T) {
	busy := func() *rpc.Methods {
		m := &rpc.Methods{}
		rpc.Handle(m, control.MethodStatus, func(ctx context.Context, _ struct{}) (control.Status, error) {
			return control.Status{}, wire.Errorf(wire.CodeBusy, "every connection is taken")
		})
		rpc.Handle(m, brokerapi.MethodVersion, func(ctx context.Context, _ struct{}) (brokerapi.VersionResult, error) {
			return brokerapi.VersionResult{}, wire.Errorf(wire.CodeBusy, "every connection is taken")
		})
		return m
	}
	w := newWorld(t)
	w.host, w.broker = busy(), busy()
	if code := w.run("status", "--json"); code != 0 {
		t.Fatal(code)
	}
	st := w.jsonOut()
	for _, k := range []string{"host", "broker"} {
		d := st[k].(map[string]any)
		p, _ := d["problem"].(map[string]any)
		if d["running"] != true || p == nil || p["code"] != "BUSY" {
			t.Errorf("status %s: %v", k, d)
		}
	}
	if code := w.run("status"); code != 0 || !strings.Contains(w.stdout.String(), "host:    running, not answering: BUSY") || !strings.Contains(w.stdout.String(), "brokerd: running, not answering: BUSY") {
		t.Errorf("status: %d %s", code, w.stdout.String())
	}
	// Nothing listening: not running, no problem.
	w = newWorld(t)
	if code := w.run("status", "--json"); code != 0 {
		t.Fatal(code)
	}
	if st := w.jsonOut(); st["host"].(map[string]any)["running"] != false || st["host"].(map[string]any)["problem"] != nil || st["broker"].(map[string]any)["running"] != false {
		t.Errorf("status with nothing running: %v", st)
	}
}

// TestProgressOnTerminal: while 'auth login' waits, a terminal's stderr shows how long it has
// waited of the prompt's timeout, rewritten in place and cleared at the end; stdout and --json
// never carry it, nor a stderr that is no terminal.
func TestProgressOnTerminal(t *testing.T) {
	w := newWorld(t)
	w.host = fakeHost()
	rpc.Handle(w.host, control.MethodAuthLogin, func(ctx context.Context, p control.AuthParams) (control.AuthResult, error) {
		time.Sleep(1500 * time.Millisecond)
		return control.AuthResult{Status: "authenticated", Alias: p.Alias, Session: "default", Origin: "https://a.example"}, nil
	})
	w.terminal = true
	if code := w.run("auth", "login", "--alias", "a"); code != 0 {
		t.Fatalf("exit %d: %s", code, w.stderr.String())
	}
	got := w.stderr.String()
	if !strings.Contains(got, "\r\x1b[Kwaiting for approval at the presence prompt: 0s of 45s") ||
		!strings.Contains(got, "\r\x1b[Kwaiting for approval at the presence prompt: 1s of 45s") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("stderr on a terminal: %q", got)
	}
	if strings.Contains(w.stdout.String(), "waiting") {
		t.Errorf("progress on stdout: %q", w.stdout.String())
	}
	w.stderr.Reset()
	if code := w.run("auth", "login", "--alias", "a", "--json"); code != 0 || w.stderr.Len() != 0 {
		t.Errorf("--json: exit %d, stderr %q", code, w.stderr.String())
	}
	w.terminal = false
	w.stderr.Reset()
	if code := w.run("auth", "login", "--alias", "a"); code != 0 || w.stderr.Len() != 0 {
		t.Errorf("no terminal: exit %d, stderr %q", code, w.stderr.String())
	}
}

// TestSignInPageGone: a sign-in that answered with the session's page gone says so to the
// person at the terminal (and in --json as page_lost / page_discarded), with the way back.
func TestSignInPageGone(t *testing.T) {
	for _, c := range []struct {
		ev   control.Evidence
		key  string
		want string
	}{
		{control.Evidence{PageLost: true}, `"page_lost":true`, "renderer crashed before the answer"},
		{control.Evidence{PageDiscarded: true}, `"page_discarded":true`, "it was discarded"},
		{control.Evidence{}, "", ""},
	} {
		w := newWorld(t)
		w.host = fakeHost()
		rpc.Handle(w.host, control.MethodAuthLogin, func(ctx context.Context, p control.AuthParams) (control.AuthResult, error) {
			return control.AuthResult{Status: "authenticated", Alias: p.Alias, Session: "default", Origin: "https://a.example", Evidence: c.ev}, nil
		})
		if code := w.run("auth", "login", "--alias", "a"); code != 0 {
			t.Fatalf("exit %d: %s", code, w.stderr.String())
		}
		out := w.stdout.String()
		if gone := strings.Contains(out, "blank page"); gone != (c.want != "") || !strings.Contains(out, c.want) {
			t.Fatalf("%+v: %q, want %q", c.ev, out, c.want)
		}
		if code := w.run("auth", "login", "--alias", "a", "--json"); code != 0 {
			t.Fatalf("exit %d", code)
		}
		if js := w.stdout.String(); c.key != "" && !strings.Contains(js, c.key) || c.key == "" && strings.Contains(js, "page_") {
			t.Fatalf("%+v: %s", c.ev, js)
		}
	}
}
