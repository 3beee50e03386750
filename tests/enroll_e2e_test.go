//go:build linux

package tests

// Issue 6: interactive enrollment ('auth login --interactive') on a real pty, and the
// isolated-session credential stores in brokerd with each of their wipe triggers, against the
// real binaries, gnome-keyring, Chromium and the local login site.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// interactive is the --json result of 'auth login --interactive'.
type interactive struct {
	Status   string         `json:"status"`
	Origin   string         `json:"origin"`
	Session  string         `json:"session"`
	Evidence map[string]any `json:"evidence"`
	Saved    *string        `json:"saved"`
}

// loginInteractive runs 'auth login --interactive' on a pty with steps and decodes its output.
func loginInteractive(t *testing.T, e *env, steps []step, args ...string) (interactive, result) {
	t.Helper()
	r := e.runTTY(steps, "headless", append([]string{"auth", "login", "--interactive", "--json"}, args...)...)
	var out interactive
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || out.Saved == nil {
		t.Fatalf("auth login --interactive %v: %+v", args, r)
	}
	return out, r
}

func typed(account, password string) []step {
	return []step{{"Account: ", account + "\n"}, {"Password (not shown): ", password + "\n"}}
}

// aliasesIn lists the aliases 'credentials list' shows (with extra args such as --session).
func aliasesIn(t *testing.T, e *env, args ...string) []string {
	t.Helper()
	var l struct {
		Credentials []struct{ Alias string } `json:"credentials"`
	}
	e.ok(t, &l, append([]string{"credentials", "list"}, args...)...)
	var out []string
	for _, c := range l.Credentials {
		out = append(out, c.Alias)
	}
	slices.Sort(out)
	return out
}

func noSecretIn(t *testing.T, where string, r result, secret string) {
	t.Helper()
	for _, f := range canaryForms(secret) {
		if strings.Contains(r.stdout+r.stderr+r.tty, f) {
			t.Errorf("%s: the password appears in the output or on the terminal", where)
		}
	}
}

func TestInteractiveLogin(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	const account = "enrol@example.test"
	pw := newCanary()
	ls.SetAccount(account, pw)
	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	e.start(t)

	t.Run("no tty, password piped on stdin", func(t *testing.T) {
		n := len(ls.Posts())
		lsVisit(t, e, ls.URL("/login"))
		r := e.run(account+"\n"+pw+"\n", "headless", "auth", "login", "--interactive", "--json")
		if r.code == 0 || errCode(t, r) != "NO_TTY" {
			t.Fatalf("without a terminal: %+v, want NO_TTY", r)
		}
		noSecretIn(t, "no tty", r, pw)
		lsNothingTyped(t, ls, n, len(ls.Typed()))
	})

	t.Run("wrong password: no save question", func(t *testing.T) {
		wrong := newCanary()
		lsVisit(t, e, ls.URL("/login"))
		n := len(ls.Posts())
		out, r := loginInteractive(t, e, typed(account, wrong))
		if out.Status != "failed" || *out.Saved != "" || out.Origin != ls.Origin() || out.Session != "default" {
			t.Fatalf("result %+v", out)
		}
		if strings.Contains(r.tty, "Save as alias") {
			t.Errorf("a failed login offered to save: %q", r.tty)
		}
		if got := ls.Posts()[n:]; len(got) != 1 || got[0] != (loginPost{"main", "/login", account, wrong}) {
			t.Errorf("the site received %v", got)
		}
		noSecretIn(t, "wrong password", r, wrong)
		if got := aliasesIn(t, e); len(got) != 0 {
			t.Errorf("saved after a failed login: %v", got)
		}
	})

	t.Run("authenticated, not saved", func(t *testing.T) {
		lsVisit(t, e, ls.URL("/login"))
		out, r := loginInteractive(t, e, append(typed(account, pw), step{"Save as alias? [y/N] ", "\n"}))
		if out.Status != "authenticated" || *out.Saved != "" {
			t.Fatalf("result %+v", out)
		}
		if strings.Contains(r.tty, "Alias: ") {
			t.Errorf("asked for an alias after No: %q", r.tty)
		}
		noSecretIn(t, "not saved", r, pw)
		if got := aliasesIn(t, e); len(got) != 0 {
			t.Errorf("saved after No: %v", got)
		}
	})

	t.Run("authenticated, saved, then used by alias", func(t *testing.T) {
		lsVisit(t, e, ls.URL("/login"))
		out, r := loginInteractive(t, e, append(typed(account, pw), step{"Save as alias? [y/N] ", "y\n"}, step{"Alias: ", "enrolled\n"}))
		if out.Status != "authenticated" || *out.Saved != "enrolled" || out.Origin != ls.Origin() {
			t.Fatalf("result %+v", out)
		}
		noSecretIn(t, "saved", r, pw)
		if got := aliasesIn(t, e, "--origin", ls.Origin()); !slices.Equal(got, []string{"enrolled"}) {
			t.Fatalf("vault after save: %v", got)
		}
		n := len(ls.Posts())
		lsVisit(t, e, ls.URL("/login"))
		lsLoginOK(t, e, "authenticated", "--alias", "enrolled")
		if got := ls.Posts()[n:]; len(got) != 1 || got[0].Password != pw {
			t.Errorf("login by the saved alias sent %v", got)
		}
		// The save is audited, with no secret in the record.
		b, err := os.ReadFile(filepath.Join(e.root, "data", "headless", "audit.jsonl"))
		if err != nil || !strings.Contains(string(b), `"op":"add"`) || !strings.Contains(string(b), `"alias":"enrolled"`) {
			t.Errorf("no audit record of the save: %v", err)
		}
		for _, f := range canaryForms(pw) {
			if strings.Contains(string(b), f) {
				t.Error("the password is in the audit log")
			}
		}
	})

	t.Run("an existing alias name is asked again", func(t *testing.T) {
		lsVisit(t, e, ls.URL("/login"))
		out, _ := loginInteractive(t, e, append(typed(account, pw), step{"Save as alias? [y/N] ", "y\n"},
			step{"Alias: ", "enrolled\n"}, step{"Alias: ", "enrolled-2\n"}))
		if *out.Saved != "enrolled-2" {
			t.Fatalf("result %+v", out)
		}
	})

	for _, name := range []string{"host.log", "brokerd.log"} {
		b, _ := os.ReadFile(filepath.Join(e.runDir(), name))
		for _, f := range canaryForms(pw) {
			if strings.Contains(string(b), f) {
				t.Errorf("the password is in %s", name)
			}
		}
	}
}

func TestIsolatedStore(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	const account = "iso@example.test"
	pw := newCanary()
	ls.SetAccount(account, pw)
	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, ls.Origin(), "vaultmain", account, pw)
	e.start(t)
	e.ok(t, nil, "session", "create", "iso", "--isolated")

	addIso := func(t *testing.T) {
		t.Helper()
		r := e.runTTY([]step{{"Password for", pw + "\n"}, {"Repeat the password", pw + "\n"}},
			"headless", "credentials", "add", "--session", "iso", "--origin", ls.Origin(), "--account", account, "--alias", "isomain", "--json")
		if r.code != 0 || !strings.Contains(r.stdout, `"alias":"isomain"`) {
			t.Fatalf("credentials add --session iso: %+v", r)
		}
	}
	isoGone := func(t *testing.T) {
		t.Helper()
		e.fails(t, "SESSION_UNKNOWN", "credentials", "list", "--session", "iso")
	}

	t.Run("separation", func(t *testing.T) {
		addIso(t)
		if got := aliasesIn(t, e, "--session", "iso"); !slices.Equal(got, []string{"isomain"}) {
			t.Fatalf("list --session iso: %v", got)
		}
		if got := aliasesIn(t, e); !slices.Equal(got, []string{"vaultmain"}) {
			t.Fatalf("vault list: %v", got)
		}
		// --session names the session; default signs in with the vault.
		if got := aliasesIn(t, e, "--session", "default"); !slices.Equal(got, []string{"vaultmain"}) {
			t.Fatalf("list --session default: %v", got)
		}
		e.fails(t, "SESSION_UNKNOWN", "credentials", "list", "--session", "nosuch")

		// The isolated session is offered and uses only its own alias.
		p := lsVisit(t, e, ls.URL("/login"), "--session", "iso")
		if p.AuthRequired == nil || !slices.Equal(p.AuthRequired.Aliases, []string{"isomain"}) {
			t.Fatalf("isolated login page: %+v", p.AuthRequired)
		}
		lsLoginFails(t, e, []string{"ALIAS_UNKNOWN"}, "--session", "iso", "--alias", "vaultmain")
		lsVisit(t, e, ls.URL("/login"), "--session", "iso")
		n := len(ls.Posts())
		lsLoginOK(t, e, "authenticated", "--session", "iso", "--alias", "isomain")
		if got := ls.Posts()[n:]; len(got) != 1 || got[0].Password != pw {
			t.Errorf("isolated login sent %v", got)
		}

		// A normal session never sees it.
		p = lsVisit(t, e, ls.URL("/login"))
		if p.AuthRequired == nil || !slices.Equal(p.AuthRequired.Aliases, []string{"vaultmain"}) {
			t.Fatalf("default login page: %+v", p.AuthRequired)
		}
		lsLoginFails(t, e, []string{"ALIAS_UNKNOWN"}, "--alias", "isomain")
	})

	t.Run("interactive save goes to the isolated store", func(t *testing.T) {
		lsVisit(t, e, ls.URL("/login"), "--session", "iso")
		out, r := loginInteractive(t, e, append(typed(account, pw), step{"Save as alias? [y/N] ", "y\n"}, step{"Alias: ", "isotyped\n"}), "--session", "iso")
		if out.Status != "authenticated" || *out.Saved != "isotyped" || out.Session != "iso" {
			t.Fatalf("result %+v", out)
		}
		noSecretIn(t, "isolated interactive", r, pw)
		if got := aliasesIn(t, e, "--session", "iso"); !slices.Equal(got, []string{"isomain", "isotyped"}) {
			t.Fatalf("isolated store: %v", got)
		}
		if got := aliasesIn(t, e); !slices.Equal(got, []string{"vaultmain"}) {
			t.Fatalf("the vault got the isolated save: %v", got)
		}
	})

	t.Run("wiped on session close", func(t *testing.T) {
		e.ok(t, nil, "session", "close", "iso")
		isoGone(t)
		e.ok(t, nil, "session", "create", "iso", "--isolated")
		if got := aliasesIn(t, e, "--session", "iso"); len(got) != 0 {
			t.Fatalf("re-created isolated session has %v", got)
		}
	})

	t.Run("wiped on headless stop", func(t *testing.T) {
		addIso(t)
		brokerd := e.brokerPID()
		e.ok(t, nil, "stop")
		b, _ := os.ReadFile(filepath.Join(e.runDir(), "brokerd.log"))
		if !strings.Contains(string(b), `msg="isolated store wiped" session=iso reason="host connection ended"`) {
			t.Errorf("brokerd %d did not wipe the store when the host stopped:\n%s", brokerd, b)
		}
		e.start(t)
		e.ok(t, nil, "session", "create", "iso", "--isolated")
		if got := aliasesIn(t, e, "--session", "iso"); len(got) != 0 {
			t.Fatalf("after stop and start: %v", got)
		}
	})

	t.Run("wiped on SIGKILL of the host", func(t *testing.T) {
		addIso(t)
		var st lsStatus
		e.ok(t, &st, "status")
		brokerd := e.brokerPID()
		if err := syscall.Kill(st.Host.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if !pollUntil(10*time.Second, func() bool { return !procAlive(st.Host.PID) }) {
			t.Fatalf("host survived SIGKILL")
		}
		// brokerd (still the same one) dropped the store when the connection died; the store
		// is reached only through its host, which is gone.
		wiped := func() int {
			b, _ := os.ReadFile(filepath.Join(e.runDir(), "brokerd.log"))
			return strings.Count(string(b), `msg="isolated store wiped" session=iso reason="host connection ended" peer_pid=`+strconv.Itoa(st.Host.PID))
		}
		if !pollUntil(30*time.Second, func() bool { return wiped() == 1 }) {
			t.Fatal("the isolated store outlived its host's SIGKILL")
		}
		e.fails(t, "HOST_UNAVAILABLE", "credentials", "list", "--session", "iso")
		if e.brokerPID() != brokerd {
			t.Fatalf("brokerd changed (%d → %d): the test proves nothing", brokerd, e.brokerPID())
		}
		// Chromium dies with its host; then a new host, and the alias is unknown there.
		pollUntil(10*time.Second, func() bool { return len(lsWithArg(filepath.Join(e.root, "data"))) == 0 })
		e.start(t)
		e.ok(t, nil, "session", "create", "iso", "--isolated")
		lsVisit(t, e, ls.URL("/login"), "--session", "iso")
		lsLoginFails(t, e, []string{"ALIAS_UNKNOWN"}, "--session", "iso", "--alias", "isomain")
	})
}
