//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// TestKill9AfterRelease kills brokerd, the host or Chromium with SIGKILL at two points of a
// sign-in after brokerd released the password to the host:
//
//   - "released": after the release, before the password is typed. In the host (host/signin.go
//     authLogin, fillVerified) the order is: release (host/broker.go; brokerd appends the
//     audit record before it sends the secret), the recheck of the page, holdNavigations
//     (host/navguard.go: Fetch holds document requests from here), the account typed, then
//     Page.bringToFront and DOM.focus on the password field, the focus check that selects its
//     content (fnTypeReady), the listener/window checks, and only
//     then Input.insertText (b.InsertSecret). The password field's focus handler runs inside
//     that DOM.focus: the faultSite's handler blocks in a synchronous XHR to /focused, so the
//     host holds the released password in memory and waits in DOM.focus (a renderer stuck in
//     an event handler does not answer it). Only the host's own checks lie between it and
//     the typing; the account field's focus would also
//     fall after the release, but further from the typing. The kill comes once /focused
//     arrived and the audit log holds the release.
//   - "typed": after typing, before the submit. The field's input handler fires while
//     Input.insertText delivers the password (the value's length, never the value, goes to
//     /typed); it blocks the same way, so the host waits in InsertSecret: the password is in
//     the field, the rechecks and the submit click have not run.
//
// Each point and victim runs twice: with a vault credential in the default session, and with
// an isolated session's own credential (its store lives in brokerd's memory, tied to the host).
// Each time: the sign-in ends with its exact typed error, the site never received a POST of
// the form (not even after the page is let go), the vault holds exactly its one record (none
// in the isolated case, whose session and store are gone: SESSION_UNKNOWN), the next
// 'headless start' works (no stale lock or socket), the next sign-in succeeds (in the isolated
// case in a new isolated session, enrolled again), and the password is on no file under the
// test's root (Chromium's profile after the SIGKILL, with the password typed into a field,
// included) and in no output.
func TestKill9AfterRelease(t *testing.T) {
	parallel(t)
	type kase struct {
		point, victim string
		code          string // the auth login's error code
		isolated      bool   // the sign-in runs in an isolated session with its own credential
	}
	var cases []kase
	for _, iso := range []bool{false, true} {
		cases = append(cases,
			kase{"released", "brokerd", "HOST_UNAVAILABLE", iso}, // the host follows brokerd (its lifeline)
			kase{"released", "host", "HOST_UNAVAILABLE", iso},
			kase{"released", "chromium", "BROWSER_CRASHED", iso},
			kase{"typed", "brokerd", "HOST_UNAVAILABLE", iso},
			kase{"typed", "host", "HOST_UNAVAILABLE", iso},
			kase{"typed", "chromium", "BROWSER_CRASHED", iso})
	}
	for _, c := range cases {
		name := c.point + "/" + c.victim
		var sess []string // the session flags of every session verb
		if c.isolated {
			name += "/isolated"
			sess = []string{"--session", "iso"}
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			program, plog := presencetest.FakePinentry(t, "approve")
			e.pinentryConfig(program)
			pw := newCanary()
			srv := newFaultSite(t, benchAccount, pw, map[string]string{"released": "focus", "typed": "input"}[c.point])
			e.start(t)
			enroll := func() {
				t.Helper()
				if c.isolated {
					e.ok(t, nil, "session", "create", "iso", "--isolated")
				}
				if r := e.runTTY([]step{{"Password for", pw + "\n"}, {"Repeat the password", pw + "\n"}},
					"headless", slices.Concat([]string{"credentials", "add"}, sess, []string{"--origin", srv.URL, "--account", benchAccount, "--alias", "fault", "--json"})...); r.code != 0 {
					t.Fatalf("add: %+v", r)
				}
			}
			enroll()
			pids := victims(t, e)
			var p pageJSON
			e.ok(t, &p, append([]string{"visit", srv.URL + "/login"}, sess...)...)
			if p.AuthRequired == nil {
				t.Fatal("no auth_required")
			}
			cmd := e.command("headless", append([]string{"auth", "login", "--challenge", p.AuthRequired.Challenge, "--alias", "fault", "--json"}, sess...)...)
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-srv.held:
			case err := <-done:
				t.Fatalf("auth login ended before the page held it (%v): %s %s", err, so.String(), se.String())
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatal("the page never reported the point")
			}
			// The point is the one named: released (audited), and typed or not.
			if n := releasesAllowed(t, e, "fault"); n != 1 {
				t.Fatalf("%d audited releases at the point, want 1", n)
			}
			if c.point == "typed" {
				if got, want := srv.typedLen.Load(), int64(utf8.RuneCountInString(pw)); got != want {
					t.Fatalf("the field held %d characters at the point, want the password's %d", got, want)
				}
			}
			if n := srv.posts.Load(); n != 0 {
				t.Fatalf("the form was posted %d times before the kill", n)
			}

			victim := pids.of(c.victim)
			if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("auth login did not end 60s after %s was killed (the page still holds it)", c.victim)
			}
			r := result{stdout: so.String(), stderr: se.String(), code: exitCode(t, err)}
			e.record(r.stdout, r.stderr)
			t.Logf("auth login: %s", r.stdout)
			if r.code == 0 || errCode(t, r) != c.code {
				t.Errorf("auth login with %s killed at %s: %+v, want %s", c.victim, c.point, r, c.code)
			}
			if !pollUntil(10*time.Second, func() bool { return !procAlive(victim) }) {
				t.Fatalf("%s (pid %d) survived SIGKILL", c.victim, victim)
			}
			if c.victim == "brokerd" {
				hostFollows(t, pids.Host)
			}
			// Let the page go: whatever of the host or its Chromium is left must not submit.
			srv.resume()
			if c.victim != "chromium" && !pollUntil(30*time.Second, func() bool { return !procAlive(pids.Browser) }) {
				t.Fatalf("Chromium (pid %d) still runs 30s after its host went", pids.Browser)
			}

			// The password is on no file: Chromium's profile, the audit log, the runtime dir.
			sweepFiles(t, e, pw)

			// Recovery: start works, the vault holds exactly its record (an isolated
			// session and its store are gone with the host or the browser, and the vault
			// holds nothing), and a sign-in succeeds (in a new isolated session, enrolled
			// again, for an isolated case).
			e.start(t)
			if n := srv.posts.Load(); n != 0 {
				t.Fatalf("the site received %d submits of the interrupted sign-in", n)
			}
			want := []string{"fault"}
			if c.isolated {
				want = nil
				e.fails(t, "SESSION_UNKNOWN", "credentials", "list", "--session", "iso")
			}
			if got := aliasesAt(t, e, srv.URL); !slices.Equal(got, want) {
				t.Fatalf("the vault after the kill: %v, want %v", got, want)
			}
			if c.isolated {
				enroll()
			}
			e.ok(t, &p, append([]string{"visit", srv.URL + "/login"}, sess...)...)
			if p.AuthRequired == nil || !slices.Equal(p.AuthRequired.Aliases, []string{"fault"}) {
				t.Fatalf("after recovery: %+v", p.AuthRequired)
			}
			var a authJSON
			e.ok(t, &a, append([]string{"auth", "login", "--challenge", p.AuthRequired.Challenge, "--alias", "fault"}, sess...)...)
			if a.Status != "authenticated" || srv.accepted.Load() != 1 || srv.posts.Load() != 1 {
				t.Fatalf("sign-in after recovery: %+v, accepted %d, posts %d", a, srv.accepted.Load(), srv.posts.Load())
			}
			recoveredClean(t, e, pw)
			if n := len(presencetest.Prompts(t, plog)); n != 2 {
				t.Errorf("%d prompts, want 2 (the killed sign-in's and the recovery's)", n)
			}
		})
	}
}

// releasesAllowed counts the audit log's allowed releases of alias (read from the file: brokerd
// may be about to die).
func releasesAllowed(t *testing.T, e *env, alias string) int {
	t.Helper()
	f, err := os.Open(filepath.Join(e.root, "data", "headless", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct{ Op, Decision, Alias string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if r.Op == "release" && r.Decision == "allow" && r.Alias == alias {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestKill9DuringEnrollmentSave kills brokerd, the host or Chromium with SIGKILL while
// 'headless credentials add' waits for the vault to save, with either store: the pinentry
// provider's (the default collection, no index) and the secret-service provider's (the
// dedicated 'headless' keyring, locked at rest, with its metadata index credentials.json).
// The test's own gnome-keyring-daemon (e.k.KeyringPID, this env's private keyring, no other
// test's) is stopped (SIGSTOP) before the second password entry is typed, so brokerd's first
// Secret Service call of the save waits in the keyring's socket; once bytes wait there the
// victim is killed and the keyring continued (SIGCONT).
//
// brokerd (the only writer of the vault) killed: the add ends BROKER_UNAVAILABLE, no prompt
// was shown, and nothing of the record exists: no item and no index entry. The order of a
// save (internal/broker/credentials.go add, vault/secretservice_items_linux.go Add) is: the
// unlock (secret-service provider: Unlock and its prompt; the index is rebuilt from the
// collection after it), the collection's Locked property and the alias look-up, one
// CreateItem call (the item, secret and attributes at once), and only then the index entry.
// Each call waits for the answer of the one before, so the calls queued in the stopped keyring
// are answered to a peer that is gone and CreateItem is never sent. A kill in the instant
// between CreateItem and the index write would leave a complete item that the index does not
// list yet; the next unlock (a release or an add) rebuilds the index from the collection
// (vault/secretservice_unlock_linux.go). Stopping the keyring cannot land a kill in that
// instant, so it is not tested here.
//
// The host or Chromium killed: a durable 'credentials add' goes from the CLI to brokerd
// directly (internal/surface/cli/credentials.go), neither is on its path, so the save completes (exit
// 0, the record saved once, in the index too) — the test shows the kill does not disturb it.
// An isolated session's add goes through the host to an in-memory store that the keyring
// never sees, so stopping the keyring cannot hold it; the host killed with an isolated
// session is TestKill9DuringProfileClear's ground.
//
// Afterwards in every case: the next start works, the vault and the index hold exactly their
// records, a sign-in with the first one succeeds, and no password (nor the keyring's) is on a
// file under the test's root or in an output.
func TestKill9DuringEnrollmentSave(t *testing.T) {
	parallel(t)
	for _, c := range []struct{ provider, victim, code string }{
		{"pinentry", "brokerd", "BROKER_UNAVAILABLE"},
		{"pinentry", "host", ""},
		{"pinentry", "chromium", ""},
		{"secret-service", "brokerd", "BROKER_UNAVAILABLE"},
		{"secret-service", "host", ""},
		{"secret-service", "chromium", ""},
	} {
		t.Run(c.provider+"/"+c.victim, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			pw, pw2, keypw := newCanary(), newCanary(), newCanary()
			// approve answers the presence prompt of the next release or keyring write.
			var approve func()
			var pr *presencetest.Prompter
			if c.provider == "pinentry" {
				program, _ := presencetest.FakePinentry(t, "approve")
				e.pinentryConfig(program)
				approve = func() {}
			} else {
				// The dedicated 'headless' keyring, locked at rest, and its index
				// (credentials.json): every write and release is an unlock prompt, answered
				// by the scripted system prompter; an unscripted prompt is cancelled.
				pr = presencetest.StartPrompter(t, e.k.Addr, presencetest.SystemPrompterName, presencetest.Answer{Cancel: true})
				e.writeConfig(`{"presence":{"provider":"secret-service","timeout_seconds":5}}`)
				approve = func() { pr.Script(presencetest.Answer{Password: keypw}) }
				approve()
				e.ok(t, nil, "credentials", "init")
			}
			srv := newBenchSite(t, benchAccount, pw)
			e.start(t)
			approve()
			if r := e.runTTY([]step{{"Password for", pw + "\n"}, {"Repeat the password", pw + "\n"}},
				"headless", "credentials", "add", "--origin", srv.URL, "--account", benchAccount, "--alias", "bench", "--json"); r.code != 0 {
				t.Fatalf("add: %+v", r)
			}
			pids := victims(t, e)
			victim := pids.of(c.victim)
			kpid := e.k.KeyringPID
			if kpid == 0 {
				t.Fatal("no keyring pid")
			}
			cont := func() { syscall.Kill(kpid, syscall.SIGCONT) }
			t.Cleanup(cont)
			prompts := func() int {
				if pr == nil {
					return 0
				}
				return len(pr.Prompts())
			}
			before := prompts()
			if c.code == "" {
				approve() // the save goes on: its unlock prompt is answered
			}
			hook := func(i int, typed bool, cli int) {
				if i != 1 {
					return
				}
				if !typed {
					if err := syscall.Kill(kpid, syscall.SIGSTOP); err != nil {
						t.Fatal(err)
					}
					if !pollUntil(10*time.Second, func() bool { return procState(kpid) == 'T' }) {
						t.Fatalf("gnome-keyring-daemon (pid %d) did not stop", kpid)
					}
					return
				}
				// Both: bytes at the keyring alone need not be the save's call (other
				// clients of the bus can write to it: Chromium keeps its cookie key there,
				// --password-store=gnome-libsecret), and brokerd killed before the CLI
				// dialled it would let the CLI start a fresh one that then saves
				// (BrokerDialer), which is how this case once saw the add succeed.
				if !pollUntil(20*time.Second, func() bool { return connectedTo(t, cli, pids.Broker) && socketQueued(t, kpid) }) {
					cont()
					t.Fatal("the save never reached the keyring")
				}
				if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				if !pollUntil(10*time.Second, func() bool { return !procAlive(victim) }) {
					t.Fatalf("%s (pid %d) survived SIGKILL", c.victim, victim)
				}
				cont()
			}
			r := e.runTTYHook([]step{{"Password for", pw2 + "\n"}, {"Repeat the password", pw2 + "\n"}}, hook,
				"headless", "credentials", "add", "--origin", srv.URL, "--account", "second@example.test", "--alias", "second", "--json")
			if c.code == "" {
				if r.code != 0 || !strings.Contains(r.stdout, `"alias":"second"`) {
					t.Errorf("add with %s killed during the save: %+v, want saved", c.victim, r)
				}
			} else if r.code == 0 || errCode(t, r) != c.code {
				t.Errorf("add with %s killed during the save: %+v, want %s", c.victim, r, c.code)
			}
			if c.code != "" && prompts() != before {
				t.Errorf("the killed save prompted (%d prompts, %d before)", prompts(), before)
			}
			if c.victim == "brokerd" {
				hostFollows(t, pids.Host)
			}
			sweep := &lsSweep{t: t, needles: slices.Concat(lsNeedles("password", pw), lsNeedles("second password", pw2), lsNeedles("keyring password", keypw)), files: map[string]int{}, seen: map[string]bool{}}
			sweep.tree("root", e.root)
			if sweep.files["root"] == 0 {
				t.Fatal("the sweep searched no file")
			}

			e.start(t)
			want := []string{"bench"}
			if c.code == "" {
				want = []string{"bench", "second"}
			}
			if got := aliasesAt(t, e, srv.URL); !slices.Equal(got, want) {
				t.Errorf("the vault after the kill: %v, want %v", got, want)
			}
			// The index: none for the default collection; for the dedicated keyring
			// exactly the saved records (read before anything unlocked it again, which
			// would rebuild it from the collection).
			idx, err := os.ReadFile(filepath.Join(e.root, "data", "headless", "credentials.json"))
			if c.provider == "pinentry" {
				if err == nil {
					t.Error("the default collection's store wrote an index")
				}
			} else {
				var f struct {
					Credentials []struct{ Alias string } `json:"credentials"`
				}
				if err := json.Unmarshal(idx, &f); err != nil {
					t.Fatalf("the index after the kill: %v %q", err, idx)
				}
				var got []string
				for _, r := range f.Credentials {
					got = append(got, r.Alias)
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("the index after the kill: %v, want %v", got, want)
				}
			}
			if c.victim == "chromium" {
				// Nothing met the crash yet: the first verb after it does (and relaunches).
				e.fails(t, "BROWSER_CRASHED", "visit", srv.URL+"/login")
			}
			var p pageJSON
			e.ok(t, &p, "visit", srv.URL+"/login")
			if p.AuthRequired == nil {
				t.Fatal("no auth_required after recovery")
			}
			var a authJSON
			approve()
			e.ok(t, &a, "auth", "login", "--challenge", p.AuthRequired.Challenge, "--alias", "bench")
			if a.Status != "authenticated" || srv.accepted.Load() != 1 {
				t.Fatalf("sign-in after recovery: %+v, accepted %d", a, srv.accepted.Load())
			}
			for _, f := range []string{"broker.sock", "control.sock"} {
				if _, err := os.Lstat(filepath.Join(e.runDir(), f)); err != nil {
					t.Errorf("%s after recovery: %v", f, err)
				}
			}
			if out := e.allOutput(); strings.Contains(out, pw) || strings.Contains(out, pw2) || strings.Contains(out, keypw) {
				t.Error("a password is in an output")
			}
		})
	}
}

// aliasesAt lists the vault's aliases at origin, sorted.
func aliasesAt(t *testing.T, e *env, origin string) []string {
	t.Helper()
	var l struct {
		Credentials []struct{ Alias string } `json:"credentials"`
	}
	e.ok(t, &l, "credentials", "list", "--origin", origin)
	var out []string
	for _, c := range l.Credentials {
		out = append(out, c.Alias)
	}
	slices.Sort(out)
	return out
}

// procState is the state letter of /proc/PID/stat (0 when it cannot be read).
func procState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || len(b) < i+3 {
		return 0
	}
	return b[i+2]
}

// connectedTo reports whether a Unix socket of pid is connected to one of peer's.
func connectedTo(t *testing.T, pid, peer int) bool {
	t.Helper()
	mine, theirs := inodeSet(pid), inodeSet(peer)
	for _, f := range unixSockets(t) {
		if mine[f[5]] && theirs[f[7]] {
			return true
		}
	}
	return false
}

// socketQueued reports whether bytes wait unread in a Unix socket of pid (ss's Recv-Q).
func socketQueued(t *testing.T, pid int) bool {
	t.Helper()
	mine := inodeSet(pid)
	for _, f := range unixSockets(t) {
		if mine[f[5]] && f[2] != "0" {
			return true
		}
	}
	return false
}

// inodeSet is the set of pid's socket inodes.
func inodeSet(pid int) map[string]bool {
	set := map[string]bool{}
	for _, ino := range socketInodes(pid) {
		set[ino] = true
	}
	return set
}

// unixSockets returns the fields of every Unix socket line of ss -x -a: Netid State Recv-Q
// Send-Q Local Port Peer Port, where ss prints a socket's inode as its port and a connected
// socket's peer's inode as the peer port.
func unixSockets(t *testing.T) [][]string {
	t.Helper()
	out, err := exec.Command("ss", "-x", "-a", "-H").Output()
	if err != nil {
		t.Fatalf("ss: %v", err)
	}
	var socks [][]string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 8 {
			socks = append(socks, f)
		}
	}
	return socks
}
