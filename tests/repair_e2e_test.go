//go:build linux

package tests

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// doctorReport runs 'headless doctor --json' and returns its exit status and the checks'
// states by id.
func doctorReport(t *testing.T, e *env) (int, map[string]string, result) {
	t.Helper()
	r := e.run("", "headless", "doctor", "--json")
	var rep struct {
		Format int `json:"format"`
		Checks []struct {
			ID, State, Detail, Hint string
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Format != 1 {
		t.Fatalf("doctor --json: %v; %+v", err, r)
	}
	states := map[string]string{}
	for _, c := range rep.Checks {
		states[c.ID] = c.State
	}
	return r.code, states, r
}

// TestCredentialsRepairE2E: the way out of PRESENCE_AUTO_UNLOCK, tried as a user would. The
// person approves a sign-in but leaves "Automatically unlock" ticked: gnome-keyring stores the
// 'headless' keyring's password and brokerd refuses every release. What the old hint said
// (change the keyring's password, as Seahorse does, then approve the next prompt unticked)
// does not clear it: brokerd refuses before any unlock is tried, so the stale stored copy is
// never found wrong and stays. 'headless credentials repair' does clear it, through the
// keyring's own prompts, and the doctor shows the state before and after.
func TestCredentialsRepairE2E(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	const account = "alice@example.test"
	canary := newCanary()
	keypw, keypw2, keypw3 := newCanary(), newCanary(), newCanary()
	ls.SetAccount(account, canary)
	pr := presencetest.StartPrompter(t, e.k.Addr, presencetest.SystemPrompterName, presencetest.Answer{Cancel: true})
	e.writeConfig(`{"presence":{"provider":"secret-service","timeout_seconds":5}}`)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(e.runDir() + "/brokerd.log")
			t.Logf("brokerd.log:\n%s", b)
		}
	})

	// Nothing to repair yet: nobody is asked.
	pr.Script(presencetest.Answer{Password: keypw})
	e.ok(t, nil, "credentials", "init")
	var rep struct {
		Repaired bool `json:"repaired"`
	}
	n := len(pr.Prompts())
	e.ok(t, &rep, "credentials", "repair")
	if rep.Repaired || len(pr.Prompts()) != n {
		t.Fatalf("repair with nothing stored: %+v, %d prompts", rep, len(pr.Prompts())-n)
	}
	pr.Script(presencetest.Answer{Password: keypw})
	lsEnroll(t, e, ls.Origin(), "main", account, canary)
	e.start(t)
	if code, st, r := doctorReport(t, e); code != 0 || st["keyring"] != "healthy" || st["keyring_auto_unlock"] != "healthy" || st["presence"] != "healthy" {
		t.Fatalf("doctor before the trap: exit %d %v\n%s", code, st, r.stdout)
	}

	// The trap: approved with the box left ticked.
	lsVisit(t, e, ls.URL("/login"))
	pr.Script(presencetest.Answer{Password: keypw, KeepAutoUnlock: true})
	lsLoginFails(t, e, []string{"PRESENCE_AUTO_UNLOCK"}, "--alias", "main")
	r := lsLogin(e, "--alias", "main")
	if !strings.Contains(r.stdout, "credentials repair") {
		t.Errorf("the PRESENCE_AUTO_UNLOCK hint does not name the remedy: %s", r.stdout)
	}
	code, st, dr := doctorReport(t, e)
	if code != 1 || st["keyring_auto_unlock"] != "failed" {
		t.Fatalf("doctor with a stored auto-unlock password: exit %d %v\n%s", code, st, dr.stdout)
	}
	if !strings.Contains(dr.stdout, "credentials repair") {
		t.Errorf("doctor's hint does not name the remedy: %s", dr.stdout)
	}

	// What the old hint said, as Seahorse does it: change the password through the keyring's
	// prompt. The stored copy stays (it holds the old password), and every release stays
	// refused before any unlock is tried.
	conn, err := dbus.Connect(e.k.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	coll := labelled(t, conn, "headless")
	pr.Script(presencetest.Answer{Password: keypw}, presencetest.Answer{Password: keypw2})
	prompt(t, conn, "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface.ChangeWithPrompt", coll)
	lockColl(t, conn, coll)
	n = len(pr.Prompts())
	pr.Script(presencetest.Answer{Password: keypw2})
	lsVisit(t, e, ls.URL("/login"))
	lsLoginFails(t, e, []string{"PRESENCE_AUTO_UNLOCK"}, "--alias", "main")
	if len(pr.Prompts()) != n {
		t.Fatalf("a release was tried although an auto-unlock password is stored")
	}
	if _, st, _ := doctorReport(t, e); st["keyring_auto_unlock"] != "failed" {
		t.Fatalf("after a password change alone the doctor says %v", st)
	}

	// The repair: change (old, new) and one unlock with the new password, box unticked.
	pr = restartPrompter(t, pr, e.k.Addr)
	pr.Script(presencetest.Answer{Password: keypw2}, presencetest.Answer{Password: keypw3}, presencetest.Answer{Password: keypw3})
	n = len(pr.Prompts())
	rr := e.run("", "headless", "credentials", "repair", "--json")
	if rr.code != 0 || json.Unmarshal([]byte(rr.stdout), &rep) != nil || !rep.Repaired {
		t.Fatalf("credentials repair: %+v", rr)
	}
	ps := pr.Prompts()[n:]
	if len(ps) != 3 || ps[1].PasswordNew != true || ps[2].PasswordNew {
		t.Fatalf("repair prompts: %+v; want old password, new password, unlock", ps)
	}
	if locked(t, conn, coll) != true {
		t.Fatal("the keyring was left unlocked after the repair")
	}
	code, st, dr = doctorReport(t, e)
	if st["keyring_auto_unlock"] != "healthy" || st["keyring"] != "healthy" {
		t.Fatalf("doctor after the repair: exit %d %v\n%s", code, st, dr.stdout)
	}

	// Releases work again, with the person asked each time at the unlock prompt.
	lsVisit(t, e, ls.URL("/login"))
	pr.Script(presencetest.Answer{Password: keypw3})
	lsLoginOK(t, e, "authenticated", "--alias", "main")
	if p := ls.Posts(); len(p) != 1 || p[0].Password != canary {
		t.Fatalf("the site received %v", p)
	}

	// Audit: the repair is recorded; no password in anything printed.
	var al struct {
		Records []struct{ Op, Decision, Code string } `json:"records"`
	}
	e.ok(t, &al, "audit", "list")
	var ops []string
	for _, rec := range al.Records {
		ops = append(ops, rec.Op+"/"+rec.Decision+"/"+rec.Code)
	}
	if !containsInOrder(ops, []string{"release/deny/PRESENCE_AUTO_UNLOCK", "repair/ok/", "release/allow/"}) {
		t.Fatalf("audit: %v", ops)
	}
	all := e.allOutput()
	for _, s := range []string{canary, keypw, keypw2, keypw3} {
		if strings.Contains(all, s) {
			t.Fatal("a password appeared in command output")
		}
	}
}

// restartPrompter replaces the scripted person (a fresh script, same bus name).
func restartPrompter(t *testing.T, old *presencetest.Prompter, addr string) *presencetest.Prompter {
	old.Close()
	time.Sleep(50 * time.Millisecond) // the bus name goes with the connection
	return presencetest.StartPrompter(t, addr, presencetest.SystemPrompterName, presencetest.Answer{Cancel: true})
}

func labelled(t *testing.T, conn *dbus.Conn, label string) dbus.ObjectPath {
	t.Helper()
	v, err := conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").GetProperty("org.freedesktop.Secret.Service.Collections")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range v.Value().([]dbus.ObjectPath) {
		l, err := conn.Object("org.freedesktop.secrets", c).GetProperty("org.freedesktop.Secret.Collection.Label")
		if err == nil && l.Value() == label {
			return c
		}
	}
	t.Fatalf("no collection labelled %q", label)
	return ""
}

func locked(t *testing.T, conn *dbus.Conn, coll dbus.ObjectPath) bool {
	t.Helper()
	v, err := conn.Object("org.freedesktop.secrets", coll).GetProperty("org.freedesktop.Secret.Collection.Locked")
	if err != nil {
		t.Fatal(err)
	}
	return v.Value().(bool)
}

func lockColl(t *testing.T, conn *dbus.Conn, coll dbus.ObjectPath) {
	t.Helper()
	var done []dbus.ObjectPath
	var p dbus.ObjectPath
	if err := conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").Call("org.freedesktop.Secret.Service.Lock", 0, []dbus.ObjectPath{coll}).Store(&done, &p); err != nil {
		t.Fatal(err)
	}
}

// prompt calls a method that answers a prompt path and waits for the prompt to complete.
func prompt(t *testing.T, conn *dbus.Conn, method string, coll dbus.ObjectPath) {
	t.Helper()
	var p dbus.ObjectPath
	if err := conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").Call(method, 0, coll).Store(&p); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	ch := make(chan *dbus.Signal, 8)
	conn.Signal(ch)
	defer conn.RemoveSignal(ch)
	if err := conn.AddMatchSignal(dbus.WithMatchObjectPath(p)); err != nil {
		t.Fatal(err)
	}
	if err := conn.Object("org.freedesktop.secrets", p).Call("org.freedesktop.Secret.Prompt.Prompt", 0, "").Err; err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-ch:
		if len(s.Body) < 1 || s.Body[0] != false {
			t.Fatalf("%s: prompt completed %v", method, s.Body)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the prompt did not complete", method)
	}
}
