//go:build linux

package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/test/realtest"
)

// TestSecretServicePresenceE2E runs the secret-service provider end to end: brokerd chooses it
// by itself (a system prompter is on the bus and the config leaves the provider unset), the
// person creates the locked 'headless' keyring, enrolls through the CLI on a pty, and approves,
// denies and ignores alias logins by answering (or not) gnome-keyring's own unlock prompt —
// played by a scripted peer of gcr's system-prompter protocol on the private bus.
func TestSecretServicePresenceE2E(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	const account = "alice@example.test"
	canary := newCanary() // the site password
	keypw := newCanary()  // the 'headless' keyring's password, typed only at the keyring prompt
	ls.SetAccount(account, canary)
	pr := presencetest.StartPrompter(t, e.k.Addr, presencetest.SystemPrompterName, presencetest.Answer{Cancel: true})
	e.writeConfig(`{"presence":{"timeout_seconds":3}}`)
	approve := presencetest.Answer{Password: keypw}

	// init: the keyring asks for the new keyring's password.
	pr.Script(approve)
	var ini struct {
		Created  bool   `json:"created"`
		Provider string `json:"provider"`
	}
	e.ok(t, &ini, "credentials", "init")
	if !ini.Created || ini.Provider != "secret-service" {
		t.Fatalf("credentials init = %+v; want created by the secret-service provider (chosen by default)", ini)
	}
	if got := pr.Prompts(); len(got) != 1 || !got[0].PasswordNew {
		t.Fatalf("init prompts %+v, want one new-password prompt", got)
	}

	// add: the password comes from the tty, the keyring is unlocked by the person to take it.
	pr.Script(approve)
	lsEnroll(t, e, ls.Origin(), "main", account, canary)
	if got := pr.Prompts(); len(got) != 2 || got[1].Type != "password" || got[1].PasswordNew {
		t.Fatalf("add prompts %+v, want an unlock prompt", got)
	}
	var list struct {
		Credentials []struct{ Origin, Alias string } `json:"credentials"`
	}
	e.ok(t, &list, "credentials", "list") // metadata of a locked keyring, no prompt
	if len(list.Credentials) != 1 || list.Credentials[0].Alias != "main" || len(pr.Prompts()) != 2 {
		t.Fatalf("credentials list = %+v (prompts %d)", list, len(pr.Prompts()))
	}

	// At rest the item is locked: secret-tool has to prompt, and the person says no.
	bin := realtest.Binary(t, "secret-tool")
	cmd := exec.Command(bin, "lookup", "origin", ls.Origin(), "alias", "main")
	cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+e.k.Addr)
	out, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(out), canary) || len(pr.Prompts()) != 3 {
		t.Fatalf("secret-tool lookup at rest: %v %q (prompts %d); want a refused prompt", err, out, len(pr.Prompts()))
	}

	e.start(t)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(e.runDir() + "/brokerd.log")
			t.Logf("brokerd.log:\n%s", b)
		}
	})
	posts := len(ls.Posts())
	typedN := len(ls.Typed())

	// Denied at the keyring prompt.
	lsVisit(t, e, ls.URL("/login"))
	pr.Script(presencetest.Answer{Cancel: true})
	lsLoginFails(t, e, []string{"PRESENCE_DENIED"}, "--alias", "main")
	lsNothingTyped(t, ls, posts, typedN)

	// Nobody answers: PRESENCE_TIMEOUT; the keyring daemon lives on. While the prompt is
	// open, other requests are served.
	pr.Script(presencetest.Answer{Hold: true})
	n0 := len(pr.Prompts())
	timedOut := make(chan result, 1)
	go func() { timedOut <- lsLogin(e, "--alias", "main") }()
	if pr.WaitPrompts(n0+1, 10*time.Second) != n0+1 {
		t.Fatal("the held login never reached the keyring prompt")
	}
	var during struct {
		Credentials []struct{ Alias string } `json:"credentials"`
	}
	e.ok(t, &during, "credentials", "list")
	e.ok(t, &struct{}{}, "session", "list")
	if len(during.Credentials) != 1 {
		t.Fatalf("credentials list during an open prompt: %+v", during)
	}
	if r := <-timedOut; r.code == 0 || errCode(t, r) != "PRESENCE_TIMEOUT" {
		t.Fatalf("unanswered login: %+v", r)
	}
	if !e.k.Alive() {
		t.Fatal("gnome-keyring-daemon died after an unanswered prompt")
	}
	lsNothingTyped(t, ls, posts, typedN)
	pr.AnswerHeld(presencetest.Answer{Cancel: true}) // the person closes the stale dialog

	// Approved: the keyring password unlocks for this one read; the site gets the password.
	lsVisit(t, e, ls.URL("/login"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		pr.Script(approve)
		r := lsLogin(e, "--alias", "main")
		if r.code == 0 {
			var a lsAuth
			if json.Unmarshal([]byte(r.stdout), &a) != nil || a.Status != "authenticated" {
				t.Fatalf("approved login: %+v", r)
			}
			break
		}
		// The stale dialog may still be closing when the first try comes.
		if code := errCode(t, r); code != "PRESENCE_TIMEOUT" || time.Now().After(deadline) {
			t.Fatalf("approved login: %s %+v", code, r)
		}
	}
	if p := ls.Posts(); len(p) != posts+1 || p[posts].Password != canary {
		t.Fatalf("the site received %v, want the enrolled password once", p[posts:])
	}

	// Interactive enrollment saves into the locked keyring: the keyring asks the person once
	// (to unlock for the write), and the alias is listed afterwards.
	lsVisit(t, e, ls.URL("/login"))
	n0 = len(pr.Prompts())
	pr.Script(approve)
	out1, r1 := loginInteractive(t, e, append(typed(account, canary), step{"Save as alias? [y/N] ", "y\n"}, step{"Alias: ", "enrolled\n"}))
	if out1.Status != "authenticated" || *out1.Saved != "enrolled" {
		t.Fatalf("interactive login saved into the keyring: %+v", out1)
	}
	noSecretIn(t, "interactive save", r1, canary)
	if got := len(pr.Prompts()) - n0; got != 1 {
		t.Fatalf("the save asked %d keyring prompts, want 1", got)
	}
	if got := aliasesIn(t, e, "--origin", ls.Origin()); !slices.Equal(got, []string{"enrolled", "main"}) {
		t.Fatalf("keyring after the save: %v", got)
	}

	// An isolated session's store is written without the keyring (memory only), and a release
	// from it is still gated by the keyring's prompt.
	e.ok(t, nil, "session", "create", "iso", "--isolated")
	n0 = len(pr.Prompts())
	r := e.runTTY([]step{{"Password for", canary + "\n"}, {"Repeat the password", canary + "\n"}},
		"headless", "credentials", "add", "--session", "iso", "--origin", ls.Origin(), "--account", account, "--alias", "iso-main", "--json")
	if r.code != 0 || len(pr.Prompts()) != n0 {
		t.Fatalf("credentials add --session iso: %+v (prompts %d)", r, len(pr.Prompts())-n0)
	}
	lsVisit(t, e, ls.URL("/login"), "--session", "iso")
	pr.Script(presencetest.Answer{Cancel: true})
	lsLoginFails(t, e, []string{"PRESENCE_DENIED"}, "--alias", "iso-main", "--session", "iso")
	pr.Script(approve)
	lsLoginOK(t, e, "authenticated", "--alias", "iso-main", "--session", "iso")
	if got := len(pr.Prompts()) - n0; got != 2 {
		t.Fatalf("isolated releases asked %d keyring prompts, want 2", got)
	}

	// Locked again right after the release: secret-tool is refused again.
	n := len(pr.Prompts())
	out, err = exec.Command("env", "DBUS_SESSION_BUS_ADDRESS="+e.k.Addr, bin, "lookup", "origin", ls.Origin(), "alias", "main").CombinedOutput()
	if err == nil || strings.Contains(string(out), canary) || len(pr.Prompts()) != n+1 {
		t.Fatalf("secret-tool lookup after a release: %v %q; want a refused prompt", err, out)
	}

	// The audit log names the provider and the decisions.
	r = e.run("", "headless", "audit", "list", "--json")
	var al struct {
		Records []struct{ Op, Decision, Code, Provider string } `json:"records"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &al) != nil {
		t.Fatalf("audit list: %+v", r)
	}
	var got []string
	for _, rec := range al.Records {
		got = append(got, rec.Op+"/"+rec.Decision+"/"+rec.Code+"/"+rec.Provider)
	}
	want := []string{"init/ok//", "add/ok//", "release/deny/PRESENCE_DENIED/secret-service",
		"release/deny/PRESENCE_TIMEOUT/secret-service", "release/allow//secret-service"}
	if !containsInOrder(got, want) {
		t.Fatalf("audit records %v; want %v in order", got, want)
	}

	// Without a prompter after a restart, brokerd keeps the dedicated keyring (never the
	// default collection): releases and writes are PRESENCE_UNAVAILABLE, the list is intact.
	e.ok(t, nil, "stop")
	pr.Close()
	var st struct {
		Broker struct{ Presence string } `json:"broker"`
	}
	e.ok(t, &list, "credentials", "list")
	e.ok(t, &st, "status")
	if st.Broker.Presence != "secret-service" || len(list.Credentials) != 2 {
		t.Fatalf("after a restart without a prompter: presence %q, list %+v", st.Broker.Presence, list)
	}
	r = e.runTTY([]step{
		{"Password for", "other-pw\n"},
		{"Repeat the password", "other-pw\n"},
	}, "headless", "credentials", "add", "--origin", ls.Origin(), "--account", "bob", "--alias", "second", "--json")
	if r.code == 0 || !strings.Contains(r.stdout, `"PRESENCE_UNAVAILABLE"`) {
		t.Fatalf("credentials add without a prompter: %+v", r)
	}
	out, _ = exec.Command("env", "DBUS_SESSION_BUS_ADDRESS="+e.k.Addr, bin, "search", "--all", "alias", "second").CombinedOutput()
	if strings.Contains(string(out), "second") {
		t.Fatalf("the add went somewhere anyway: %s", out)
	}

	// Neither password shows up in anything the commands printed.
	all := e.allOutput()
	for _, s := range []string{canary, keypw} {
		if strings.Contains(all, s) {
			t.Fatal("a password appeared in command output")
		}
	}
}

// TestSecretServiceNotChosenWithoutPrompter: no system prompter on the bus and no provider
// chosen → brokerd uses none, and init says which provider is in use.
func TestSecretServiceNotChosenWithoutPrompter(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	r := e.run("", "headless", "credentials", "init", "--json")
	if r.code == 0 || errCode(t, r) != "INVALID_ARGUMENT" || !strings.Contains(r.stdout, `\"none\"`) {
		t.Fatalf("credentials init without a prompter: %+v", r)
	}
}

func containsInOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// TestBrokerdLocksAnUnlockedKeyringAtStart: the keyring's unlock is not per caller, so a
// brokerd killed (or stopped) inside a release's window leaves every credential readable by
// any same-user process (red-team round 6). The next brokerd locks the collection before it
// answers anything but host.start, warns, and audits it ("lock"); it leaves a locked one alone.
func TestBrokerdLocksAnUnlockedKeyringAtStart(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	pr := presencetest.StartPrompter(t, e.k.Addr, presencetest.SystemPrompterName, presencetest.Answer{Cancel: true})
	e.writeConfig(`{"presence":{"timeout_seconds":5}}`)
	keypw := newCanary()
	pr.Script(presencetest.Answer{Password: keypw})
	e.ok(t, nil, "credentials", "init")
	e.stopBroker()
	conn, err := dbus.Connect(e.k.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	coll := labelled(t, conn, "headless")
	if !locked(t, conn, coll) {
		t.Fatal("the keyring is unlocked after init")
	}
	lockOps := func() int {
		n := 0
		for _, l := range e.auditFile(t, filepath.Join(e.root, "data", "headless", "audit.jsonl")) {
			if r, _ := audit.Parse(l); r.Op == "lock" && r.Decision == "ok" && strings.Contains(r.Detail, "unlocked when brokerd started") {
				n++
			}
		}
		return n
	}

	// A locked keyring: nothing to do, nothing audited.
	b := e.startBrokerd()
	b.Stop()
	if lockOps() != 0 {
		t.Fatal("a lock was audited for a keyring that was locked")
	}

	// What a killed brokerd leaves: the collection unlocked by the person's answer.
	pr.Script(presencetest.Answer{Password: keypw})
	var unlocked []dbus.ObjectPath
	var prm dbus.ObjectPath
	if err := conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").Call("org.freedesktop.Secret.Service.Unlock", 0,
		[]dbus.ObjectPath{coll}).Store(&unlocked, &prm); err != nil {
		t.Fatal(err)
	}
	sig := make(chan *dbus.Signal, 4)
	conn.Signal(sig)
	if err := conn.AddMatchSignal(dbus.WithMatchInterface("org.freedesktop.Secret.Prompt")); err != nil {
		t.Fatal(err)
	}
	if err := conn.Object("org.freedesktop.secrets", prm).Call("org.freedesktop.Secret.Prompt.Prompt", 0, "").Err; err != nil {
		t.Fatal(err)
	}
	select {
	case <-sig:
	case <-time.After(10 * time.Second):
		t.Fatal("the unlock prompt never completed")
	}
	if locked(t, conn, coll) {
		t.Fatal("precondition: the test could not unlock the keyring")
	}
	// brokerd looks for the Secret Service while it already answers host.start; it answers
	// nothing else (version included) before that look, and the lock, are done.
	b = e.startBrokerd()
	bc, err := brokerapi.Dial(context.Background(), e.sockPath())
	if err != nil {
		t.Fatal(err)
	}
	_, err = bc.Version(context.Background())
	bc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if locked(t, conn, coll) != true {
		t.Fatal("brokerd answered version and left the keyring unlocked")
	}
	if n := lockOps(); n != 1 {
		t.Fatalf("audited locks at start: %d; want 1", n)
	}
	b.Stop()
}
