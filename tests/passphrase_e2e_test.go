//go:build linux

package tests

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/test/realtest"
)

// TestPassphrasePresenceE2E: with the passphrase provider, the keyring holds only sealed
// credentials. A same-user program reading every item of the keyring all through enrollment
// and sign-ins — what red-team round 6 did to the secret-service provider's keyring during its
// unlock window — gets sealed texts only, never the password; the person's passphrase, typed
// at the (scripted) pinentry, signs in; a wrong one three times releases nothing; neither the
// password nor the passphrase is anywhere on disk or in any output.
func TestPassphrasePresenceE2E(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	const account = "alice@example.test"
	canary := newCanary() // the site password
	pass := newCanary()   // the person's headless passphrase
	ls.SetAccount(account, canary)
	program, plog := presencetest.FakePinentry(t, "approve")
	e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"passphrase","program":%q,"timeout_seconds":10}}`, program))

	// A same-user reader of the keyring, from the first enrollment to the end.
	spy := startKeyringSpy(t, e.k.Addr)

	// Enrollment: the passphrase is chosen (typed twice at the pinentry).
	presencetest.Type(t, plog, pass, pass)
	lsEnroll(t, e, ls.Origin(), "main", account, canary)
	if got := strings.Count(strings.Join(presencetest.Received(t, plog), "\n"), "GETPIN"); got != 2 {
		t.Fatalf("GETPIN %d times at enrollment; want 2 (the passphrase is chosen, asked twice)", got)
	}
	// secret-tool, as any program of the person's, gets the sealed text.
	cmd := exec.Command(realtest.Binary(t, "secret-tool"), "lookup", "alias", "main")
	cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+e.k.Addr)
	out, err := cmd.Output()
	if err != nil || !bytes.HasPrefix(out, []byte("hlseal2:p:")) || bytes.Contains(out, []byte(canary)) {
		t.Fatalf("secret-tool lookup: %q, %v; want the sealed text", out, err)
	}

	e.start(t)
	posts := len(ls.Posts())
	lsVisit(t, e, ls.URL("/login"))
	presencetest.Type(t, plog, pass)
	lsLoginOK(t, e, "authenticated", "--alias", "main")
	if p := ls.Posts(); len(p) != posts+1 || p[len(p)-1].Password != canary {
		t.Fatalf("the site received %v", p[posts:])
	}
	if d := presencetest.Prompts(t, plog); !strings.Contains(d[len(d)-1], `Release the saved password for "alice@example.test"`) {
		t.Fatalf("release prompt %q", d[len(d)-1])
	}

	// The wrong passphrase, three times: denied, nothing typed.
	e.run("", "headless", "visit", ls.URL("/logout"))
	lsVisit(t, e, ls.URL("/login"))
	posts, typed := len(ls.Posts()), len(ls.Typed())
	presencetest.Type(t, plog, "wrong-passphrase-1", "wrong-passphrase-2", "wrong-passphrase-3", pass)
	lsLoginFails(t, e, []string{"PRESENCE_DENIED"}, "--alias", "main")
	lsNothingTyped(t, ls, posts, typed)

	// A second credential: the passphrase must be the one the first is sealed with.
	other := newCanary()
	presencetest.Type(t, plog, "not-the-passphrase", pass)
	lsEnroll(t, e, ls.Origin(), "second", "bob@example.test", other)

	reads := spy.stop()
	if reads.sealed == 0 {
		t.Fatal("the spy never read a saved credential: the test would not see a leak")
	}
	for _, s := range []string{canary, other} {
		if reads.seen(s) {
			t.Fatalf("a same-user reader of the keyring got a password (%d reads)", reads.total)
		}
	}
	t.Logf("keyring spy: %d reads, %d sealed texts, %d plain values", reads.total, reads.sealed, reads.plain)
	if reads.plain != 0 {
		t.Fatalf("the keyring handed out %d values that are not sealed", reads.plain)
	}

	e.run("", "headless", "stop")
	sweep := &lsSweep{t: t, needles: append(append(lsNeedles("password", canary), lsNeedles("second password", other)...), lsNeedles("passphrase", pass)...),
		files: map[string]int{}, seen: map[string]bool{}}
	sweep.tree("root", e.root)
	sweep.search("every output", []byte(e.allOutput()))
	b, _ := os.ReadFile(plog)
	sweep.search("the pinentry's log", b)
}

// keyringSpy reads every headless item of the keyring, over and over, as any same-user
// program can.
type keyringSpy struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	res    spyReads
}

type spyReads struct {
	total, sealed, plain int
	values               map[string]bool
}

func (r spyReads) seen(s string) bool {
	for v := range r.values {
		if strings.Contains(v, s) {
			return true
		}
	}
	return false
}

func startKeyringSpy(t *testing.T, addr string) *keyringSpy {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	var sess dbus.ObjectPath
	var outv dbus.Variant
	svc := conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets")
	if err := svc.Call("org.freedesktop.Secret.Service.OpenSession", 0, "plain", dbus.MakeVariant("")).Store(&outv, &sess); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &keyringSpy{cancel: cancel, done: make(chan struct{}), res: spyReads{values: map[string]bool{}}}
	go func() {
		defer close(s.done)
		defer conn.Close()
		for ctx.Err() == nil {
			var unlocked, locked []dbus.ObjectPath
			if svc.Call("org.freedesktop.Secret.Service.SearchItems", 0, map[string]string{"xdg:schema": "dev.headless.Credential"}).Store(&unlocked, &locked) != nil {
				time.Sleep(time.Millisecond)
				continue
			}
			for _, it := range unlocked {
				var sec struct {
					Session     dbus.ObjectPath
					Params      []byte
					Value       []byte
					ContentType string
				}
				if conn.Object("org.freedesktop.secrets", it).Call("org.freedesktop.Secret.Item.GetSecret", 0, sess).Store(&sec) != nil {
					continue
				}
				s.mu.Lock()
				s.res.total++
				if bytes.HasPrefix(sec.Value, []byte(credential.SealedPrefix)) {
					s.res.sealed++
				} else {
					s.res.plain++
				}
				s.res.values[string(sec.Value)] = true
				s.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

func (s *keyringSpy) stop() spyReads {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.res
}
