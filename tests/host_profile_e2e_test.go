//go:build linux

package tests

// End-to-end tests of the durable profile and of crash recovery (issue 3): the real headless
// and brokerd binaries, a real gnome-keyring on a private bus, real Chromium, and the local
// test site of site_test.go. Lifecycle, verbs and isolated sessions are in host_e2e_test.go.

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// profStart is the --json result of 'headless start'.
type profStart struct {
	Started bool `json:"started"`
	Host    struct {
		PID        int    `json:"pid"`
		Profile    string `json:"profile"`
		Chromium   string `json:"chromium"`
		MovedAside string `json:"profile_moved_aside"`
		Reason     string `json:"profile_moved_aside_reason"`
	} `json:"host"`
	BrokerPID int `json:"broker_pid"`
}

// profStatus is the --json result of 'headless status'.
type profStatus struct {
	Host struct {
		Running    bool   `json:"running"`
		PID        int    `json:"pid"`
		BrowserPID int    `json:"browser_pid"`
		Profile    string `json:"profile"`
		LockOwner  int    `json:"lock_owner"`
		MovedAside string `json:"profile_moved_aside"`
		Reason     string `json:"profile_moved_aside_reason"`
	} `json:"host"`
	Broker struct {
		Running bool `json:"running"`
		PID     int  `json:"pid"`
	} `json:"broker"`
}

// profRun runs 'headless ARGS --json', which must succeed, and decodes its output into v.
func (e *env) profRun(t *testing.T, v any, args ...string) {
	t.Helper()
	r := e.run("", "headless", append(args, "--json")...)
	if r.code != 0 {
		t.Fatalf("headless %v: exit %d\nstdout %s\nstderr %s", args, r.code, r.stdout, r.stderr)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
			t.Fatalf("headless %v: output %q: %v", args, r.stdout, err)
		}
	}
}

func (e *env) profStart(t *testing.T) profStart {
	t.Helper()
	var s profStart
	e.profRun(t, &s, "start")
	if s.Host.PID == 0 {
		t.Fatalf("start reported no host pid: %+v", s)
	}
	return s
}

func (e *env) profStatus(t *testing.T) profStatus {
	t.Helper()
	var s profStatus
	e.profRun(t, &s, "status")
	return s
}

// profEcho visits /echo in the default session and returns the snapshot JSON, which holds
// "cookie=…" and "storage=…".
func (e *env) profEcho(t *testing.T, siteURL string) string {
	t.Helper()
	e.profRun(t, nil, "visit", siteURL+"/echo")
	r := e.run("", "headless", "snapshot", "--json")
	if r.code != 0 {
		t.Fatalf("snapshot: %+v", r)
	}
	return r.stdout
}

func (e *env) profileDir() string { return filepath.Join(e.root, "data", "headless", "profile") }

// cookieDB returns the profile's cookie database (Chromium moved it from Default/Cookies to
// Default/Network/Cookies; whichever exists).
func cookieDB(t *testing.T, profile string) string {
	t.Helper()
	for _, rel := range []string{filepath.Join("Default", "Network", "Cookies"), filepath.Join("Default", "Cookies")} {
		if fi, err := os.Stat(filepath.Join(profile, rel)); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return filepath.Join(profile, rel)
		}
	}
	t.Fatalf("no cookie database in %s", profile)
	return ""
}

// randomValue is a fresh cookie/storage value (base32: safe in a URL, HTML and JS).
func randomValue() string { return "v" + rand.Text() }

// setCookie visits /set?v=value: a persistent cookie sid=value and localStorage ls=value.
func (e *env) setCookie(t *testing.T, siteURL, value string) {
	t.Helper()
	e.profRun(t, nil, "visit", siteURL+"/set?v="+url.QueryEscape(value))
}

func wantEcho(t *testing.T, snap, cookie, storage string) {
	t.Helper()
	if !strings.Contains(snap, "cookie="+cookie) || !strings.Contains(snap, "storage="+storage) {
		t.Fatalf("want cookie=%s and storage=%s in the page; snapshot %s", cookie, storage, snap)
	}
}

// pollUntil polls cond every 10 ms until it holds or d passes; it reports whether it held.
func pollUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// procAlive reports whether pid is a live process (a zombie is dead).
func procAlive(pid int) bool { return pid > 0 && !isZombie(pid) }

// procParents maps every live pid to its parent (from /proc/PID/stat).
func procParents() map[int]int {
	out := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 2 || string(f[0]) == "Z" || string(f[0]) == "X" {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		out[pid] = ppid
	}
	return out
}

// procTree returns pid and all its live descendants.
func procTree(pid int) []int {
	children := map[int][]int{}
	for p, pp := range procParents() {
		children[pp] = append(children[pp], p)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// procsWithArg lists live processes with an argument containing s.
func procsWithArg(s string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(s)) && !isZombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// chromiumTmp lists /tmp/org.chromium.Chromium.* (left behind by a Chromium that runs on the
// shared /tmp and dies without cleaning up).
func chromiumTmp() []string {
	m, _ := filepath.Glob("/tmp/org.chromium.Chromium.*")
	return m
}

// newEntries returns the entries of after that are not in before.
func newEntries(before, after []string) []string {
	var out []string
	for _, a := range after {
		if !slices.Contains(before, a) {
			out = append(out, a)
		}
	}
	return out
}

// watchChromium runs fn while watching, every 2 ms, for a process with profile as its
// --user-data-dir; it returns fn's result and every such pid seen while fn ran.
func watchChromium(profile string, fn func() result) (result, []int) {
	done := make(chan result, 1)
	go func() { done <- fn() }()
	var seen []int
	for {
		seen = append(seen, procsWithArg("--user-data-dir="+profile)...)
		select {
		case r := <-done:
			seen = append(seen, procsWithArg("--user-data-dir="+profile)...)
			slices.Sort(seen)
			return r, slices.Compact(seen)
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// withEnv runs fn with e.vars changed by edit, then restores them.
func (e *env) withEnv(edit func([]string) []string, fn func()) {
	saved := e.vars
	e.vars = edit(append([]string(nil), saved...))
	defer func() { e.vars = saved }()
	fn()
}

func setVar(vars []string, key, value string) []string {
	vars = slices.DeleteFunc(vars, func(v string) bool { return strings.HasPrefix(v, key+"=") })
	if value != "" {
		vars = append(vars, key+"="+value)
	}
	return vars
}

func TestCookiesAndStorageSurviveStopStart(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	v := randomValue()
	e.profStart(t)
	e.setCookie(t, srv.URL, v)
	e.profRun(t, nil, "stop")
	s := e.profStart(t)
	if !s.Started || s.Host.MovedAside != "" {
		t.Fatalf("restart of a healthy profile: %+v", s)
	}
	wantEcho(t, e.profEcho(t, srv.URL), v, v)
}

func TestNoKeyringNoLaunchCookiesIntact(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	v := randomValue()
	e.profStart(t)
	e.setCookie(t, srv.URL, v)
	e.profRun(t, nil, "stop")
	db := cookieDB(t, e.profileDir())
	want, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	fiBefore, _ := os.Stat(db)
	// The row is encrypted with the key Chromium keeps in the Secret Service (libsecret's "v11"
	// format), never stored in clear: so a launch without that key would lose it.
	if bytes.Contains(want, []byte(v)) || !bytes.Contains(want, []byte("v11")) {
		t.Fatalf("the cookie database does not hold the cookie encrypted with the keyring's key (v11)")
	}

	for _, c := range []struct {
		name string
		bus  string // DBUS_SESSION_BUS_ADDRESS; "" = unset
	}{
		{"no bus address", ""},
		{"dead bus", "unix:path=" + filepath.Join(e.root, "no-such-bus")},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.withEnv(func(vars []string) []string { return setVar(vars, "DBUS_SESSION_BUS_ADDRESS", c.bus) }, func() {
				r, seen := watchChromium(e.profileDir(), func() result { return e.run("", "headless", "start", "--json") })
				if r.code == 0 || errCode(t, r) != "VAULT_UNAVAILABLE" {
					t.Errorf("start without a keyring: %+v, want VAULT_UNAVAILABLE", r)
				}
				if len(seen) > 0 {
					t.Errorf("Chromium ran on the durable profile without the keyring: pids %v", seen)
				}
				e.profRun(t, nil, "stop") // the brokerd that start brought up
			})
			got, err := os.ReadFile(db)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("the cookie database changed after a refused start (err %v, %d → %d bytes)", err, len(want), len(got))
			}
			if fi, _ := os.Stat(db); !fi.ModTime().Equal(fiBefore.ModTime()) {
				t.Errorf("the cookie database was written to: mtime %v → %v", fiBefore.ModTime(), fi.ModTime())
			}
			if m, _ := filepath.Glob(filepath.Join(e.root, "data", "headless", "profile.corrupt-*")); len(m) > 0 {
				t.Errorf("a refused start moved the profile aside: %v", m)
			}
		})
	}

	s := e.profStart(t)
	if s.Host.MovedAside != "" {
		t.Fatalf("start with the keyring moved the profile aside: %+v", s)
	}
	wantEcho(t, e.profEcho(t, srv.URL), v, v)

	// A locked keyring is no key either.
	t.Run("locked keyring", func(t *testing.T) {
		e.profRun(t, nil, "stop")
		lock := exec.Command("dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.secrets",
			"/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login")
		lock.Env = e.vars
		if out, err := lock.CombinedOutput(); err != nil {
			t.Fatalf("lock the keyring: %v %s", err, out)
		}
		want, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		r, seen := watchChromium(e.profileDir(), func() result { return e.run("", "headless", "start", "--json") })
		if r.code == 0 || errCode(t, r) != "VAULT_LOCKED" {
			t.Errorf("start with a locked keyring: %+v, want VAULT_LOCKED", r)
		}
		if len(seen) > 0 {
			t.Errorf("Chromium ran on the durable profile with the keyring locked: pids %v", seen)
		}
		if got, err := os.ReadFile(db); err != nil || !bytes.Equal(got, want) {
			t.Errorf("the cookie database changed after a refused start (err %v)", err)
		}
	})
}

// TestNoKeyringNoRelaunchAfterCrash: the launch gate holds for the relaunch after a crash too.
// The keyring goes away under a running host, then Chromium dies: the host must not relaunch
// Chromium on the durable profile without the key of its cookies.
func TestNoKeyringNoRelaunchAfterCrash(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	e.profStart(t)
	e.setCookie(t, srv.URL, randomValue())
	e.profRun(t, nil, "stop")
	e.profStart(t)
	st := e.profStatus(t)
	if st.Host.BrowserPID == 0 {
		t.Fatalf("status: %+v", st)
	}
	syscall.Kill(e.k.KeyringPID, syscall.SIGTERM)
	if !pollUntil(10*time.Second, func() bool { return !e.k.Alive() }) {
		t.Fatal("gnome-keyring-daemon ignored SIGTERM")
	}
	old := procTree(st.Host.BrowserPID)
	syscall.Kill(st.Host.BrowserPID, syscall.SIGKILL)
	if !pollUntil(10*time.Second, func() bool {
		return procGone(st.Host.BrowserPID) && !slices.ContainsFunc(old, procAlive)
	}) {
		t.Fatalf("the killed Chromium %v was not gone within 10s of SIGKILL", old)
	}
	db := cookieDB(t, e.profileDir())
	want, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}

	r, seen := watchChromium(e.profileDir(), func() result { return e.run("", "headless", "visit", srv.URL+"/echo", "--json") })
	if len(seen) > 0 {
		t.Errorf("after the keyring went away, the host relaunched Chromium on the durable profile: pids %v", seen)
	}
	if r.code == 0 {
		t.Errorf("a verb after the crash worked without the keyring: %+v", r)
	} else if c := errCode(t, r); c != "VAULT_UNAVAILABLE" && c != "BROWSER_CRASHED" {
		t.Errorf("a verb after the crash without the keyring: code %s (%s)", c, r.stdout)
	}
	// An agent retries, as the hint says. Then stop whatever runs before reading the database.
	if r := e.run("", "headless", "visit", srv.URL+"/echo", "--json"); r.code == 0 {
		t.Errorf("a retried verb worked without the keyring: %+v", r)
	}
	e.run("", "headless", "stop", "--json")
	got, err := os.ReadFile(db)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("the cookie database changed (err %v, %d → %d bytes): a launch without the keyring deletes the encrypted rows", err, len(want), len(got))
	}
}

func TestSecondHostProfileLocked(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	e.profStart(t)
	st := e.profStatus(t)
	if !st.Host.Running || st.Host.LockOwner != st.Host.PID {
		t.Fatalf("status: %+v", st)
	}
	// A second user world sharing the data dir (the profile) but not the runtime dir (its
	// sockets). It lives under e's runtime dir so that e.leftovers() sees its processes too.
	run2 := filepath.Join(e.root, "run", "second")
	if err := os.Mkdir(run2, 0o700); err != nil {
		t.Fatal(err)
	}
	e2 := &env{t: t, root: e.root, outputs: &bytes.Buffer{}, vars: setVar(append([]string(nil), e.vars...), "XDG_RUNTIME_DIR", run2)}
	t.Cleanup(func() { e2.run("", "headless", "stop", "--json") })

	before := procsWithArg("--user-data-dir=" + e.profileDir())
	if !slices.Contains(before, st.Host.BrowserPID) {
		// procsWithArg is also what proves that no Chromium ran without the keyring.
		t.Fatalf("procsWithArg does not find the running Chromium %d on the profile: %v", st.Host.BrowserPID, before)
	}
	r := e2.run("", "headless", "start", "--json")
	if r.code == 0 {
		t.Fatalf("a second host on the same profile started: %+v", r)
	}
	if c := errCode(t, r); c != "PROFILE_LOCKED" {
		t.Fatalf("second host: code %s, want PROFILE_LOCKED: %s", c, r.stdout)
	}
	var je jsonErr
	json.Unmarshal([]byte(r.stdout), &je)
	if !strings.Contains(je.Error.Message, "pid "+strconv.Itoa(st.Host.PID)) {
		t.Errorf("PROFILE_LOCKED does not name the owner (host pid %d): %q", st.Host.PID, je.Error.Message)
	}
	if !strings.Contains(je.Error.Hint, "session create NAME --isolated") {
		t.Errorf("PROFILE_LOCKED hint lacks the remedy: %q", je.Error.Hint)
	}
	// A process the running Chromium started meanwhile (a spare renderer, late on a loaded
	// machine) is its own; any other new one on the profile is the refused host's.
	for _, pid := range procsWithArg("--user-data-dir=" + e.profileDir()) {
		if !slices.Contains(before, pid) && !descendsFrom(pid, st.Host.BrowserPID) {
			t.Errorf("the refused host touched Chromium on the profile: pid %d is new (before: %v)", pid, before)
		}
	}
	if _, err := os.Stat(filepath.Join(run2, "headless", "control.sock")); err == nil {
		t.Error("the refused host left a control.sock")
	}
	// The first host is unaffected.
	if st2 := e.profStatus(t); st2.Host.PID != st.Host.PID || st2.Host.BrowserPID != st.Host.BrowserPID {
		t.Fatalf("first host changed: %+v → %+v", st, st2)
	}
	e.profRun(t, nil, "visit", srv.URL+"/")
}

// TestCorruptProfileMovedAside corrupts one file at a time of a profile Chromium wrote (one
// env: each case starts from the replacement profile of the case before).
func TestCorruptProfileMovedAside(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	e.profStart(t)
	profile := e.profileDir()
	var asides []string
	for _, c := range []struct {
		name   string
		file   func(t *testing.T) string // the file to corrupt
		reason string                    // the reason names it
	}{
		{"Local State", func(t *testing.T) string { return filepath.Join(profile, "Local State") }, "Local State"},
		{"Preferences", func(t *testing.T) string { return filepath.Join(profile, "Default", "Preferences") }, "Preferences"},
		{"cookie database", func(t *testing.T) string { return cookieDB(t, profile) }, "Cookies"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.setCookie(t, srv.URL, randomValue()) // so that Chromium writes a cookie database
			e.profRun(t, nil, "stop")
			path := c.file(t)
			rel, _ := filepath.Rel(profile, path)
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("%s does not exist after a stop, so corrupting it proves nothing: %v", rel, err)
			}
			bad := []byte("\x00garbage \xff\xfe not JSON, not SQLite " + rand.Text() + "\n")
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}

			s := e.profStart(t)
			aside := s.Host.MovedAside
			if aside == "" || s.Host.Reason == "" {
				t.Fatalf("start over a corrupt %s did not report a move aside: %+v", rel, s)
			}
			if filepath.Dir(aside) != filepath.Dir(profile) || !strings.HasPrefix(filepath.Base(aside), "profile.corrupt-") || slices.Contains(asides, aside) {
				t.Errorf("moved aside to %q, want a new %s/profile.corrupt-* (earlier: %v)", aside, filepath.Dir(profile), asides)
			}
			asides = append(asides, aside)
			if !strings.Contains(s.Host.Reason, c.reason) {
				t.Errorf("reason %q does not name %s", s.Host.Reason, c.reason)
			}
			st := e.profStatus(t)
			if st.Host.MovedAside != aside || st.Host.Reason != s.Host.Reason {
				t.Errorf("status reports moved aside %q (%q), start reported %q (%q)", st.Host.MovedAside, st.Host.Reason, aside, s.Host.Reason)
			}
			got, err := os.ReadFile(filepath.Join(aside, rel))
			if err != nil || !bytes.Equal(got, bad) {
				t.Errorf("the corrupt %s in %s is not what was written (err %v)", rel, aside, err)
			}
			if fi, err := os.Stat(aside); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("moved-aside dir: %v %v", fi, err)
			}
			// Nothing moved aside earlier was deleted.
			for _, a := range asides {
				if _, err := os.Stat(filepath.Join(a, "headless-profile.json")); err != nil {
					t.Errorf("an earlier moved-aside profile lost its content: %v", err)
				}
			}
			// The replacement profile works, and is a new one.
			var page struct{ Title string }
			e.profRun(t, &page, "visit", srv.URL+"/next")
			if page.Title != "Next" {
				t.Fatalf("visit on the new profile: %+v", page)
			}
			wantEcho(t, e.profEcho(t, srv.URL), "none", "none")
			if fi, err := os.Stat(profile); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("new profile dir: %v %v", fi, err)
			}
		})
	}
}

func TestHostKill9Recovers(t *testing.T) {
	parallel(t)
	tmpBefore := chromiumTmp()
	e := newEnv(t, envOptions{})
	srv := site(t)
	v := randomValue()
	e.profStart(t)
	e.setCookie(t, srv.URL, v)
	e.profRun(t, nil, "stop")
	e.profStart(t)
	e.profRun(t, nil, "visit", srv.URL+"/next") // a renderer is running
	st := e.profStatus(t)
	if st.Host.PID == 0 || st.Host.BrowserPID == 0 {
		t.Fatalf("status: %+v", st)
	}
	chromium := procTree(st.Host.BrowserPID)
	if err := syscall.Kill(st.Host.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !pollUntil(10*time.Second, func() bool { return !procAlive(st.Host.PID) }) {
		t.Fatalf("host pid %d survived SIGKILL", st.Host.PID)
	}
	if _, err := os.Lstat(filepath.Join(e.runDir(), "control.sock")); err != nil {
		t.Fatalf("no stale control.sock after kill -9, so recovery from one is not tested: %v", err)
	}
	// Chromium dies with its host.
	var survivors []int
	if !pollUntil(10*time.Second, func() bool {
		survivors = slices.DeleteFunc(slices.Clone(chromium), func(p int) bool { return !procAlive(p) })
		return len(survivors) == 0
	}) {
		t.Errorf("Chromium processes of the killed host still run 10s later: %v of %v", survivors, chromium)
	}

	s := e.profStart(t)
	if !s.Started || s.Host.PID == st.Host.PID || s.Host.MovedAside != "" {
		t.Fatalf("start after kill -9 of the host: %+v", s)
	}
	if st2 := e.profStatus(t); !st2.Host.Running || st2.Host.LockOwner != s.Host.PID {
		t.Fatalf("status after recovery: %+v", st2)
	}
	wantEcho(t, e.profEcho(t, srv.URL), v, v)
	if n := newEntries(tmpBefore, chromiumTmp()); len(n) > 0 {
		t.Errorf("left in /tmp: %v", n)
	}
}

// procGone reports whether pid no longer exists at all: every thread exited and its parent
// reaped it. (A multi-threaded process's leader shows as a zombie while its other threads are
// still tearing down and its pipes are still open.)
func procGone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err != nil
}

// hasSocket reports whether pid has a socket open (a CLI that has dialled control.sock).
func hasSocket(pid int) bool { return len(socketInodes(pid)) > 0 }

// TestChromiumKill9: kill -9 of Chromium → the host answers BROWSER_CRASHED and recovers on
// the next command.
func TestChromiumKill9(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		name string
		// crash kills Chromium (pid) and returns the result of the verb that meets the crash.
		crash func(t *testing.T, e *env, siteURL string, pid int) result
	}{
		{"next verb after the host reaped Chromium", func(t *testing.T, e *env, siteURL string, pid int) result {
			syscall.Kill(pid, syscall.SIGKILL)
			if !pollUntil(10*time.Second, func() bool { return procGone(pid) }) {
				t.Fatalf("browser pid %d was not reaped within 10s of SIGKILL", pid)
			}
			return e.run("", "headless", "visit", siteURL+"/next", "--json")
		}},
		{"next verb right after the kill", func(t *testing.T, e *env, siteURL string, pid int) result {
			syscall.Kill(pid, syscall.SIGKILL)
			return e.run("", "headless", "visit", siteURL+"/next", "--json")
		}},
		{"verb in flight during the kill", func(t *testing.T, e *env, siteURL string, pid int) result {
			cmd := e.command("headless", "wait", "--text", "never-on-the-page", "--timeout", "60s", "--json")
			var so bytes.Buffer
			cmd.Stdout = &so
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			if !pollUntil(10*time.Second, func() bool { return hasSocket(cmd.Process.Pid) }) {
				t.Fatal("the wait command never connected to control.sock")
			}
			// Its answer is BROWSER_CRASHED (checked below), never its own TIMEOUT: the host
			// noticed the crash.
			syscall.Kill(pid, syscall.SIGKILL)
			err := <-done
			return result{stdout: so.String(), code: exitCode(t, err)}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			srv := site(t)
			e.profStart(t)
			e.profRun(t, nil, "visit", srv.URL+"/")
			st := e.profStatus(t)
			if st.Host.BrowserPID == 0 {
				t.Fatalf("status: %+v", st)
			}
			old := procTree(st.Host.BrowserPID)
			r := c.crash(t, e, srv.URL, st.Host.BrowserPID)
			if r.code == 0 || errCode(t, r) != "BROWSER_CRASHED" {
				t.Errorf("the verb that met the crash: %+v, want BROWSER_CRASHED", r)
			}
			r = e.run("", "headless", "visit", srv.URL+"/next", "--json")
			if r.code != 0 || !strings.Contains(r.stdout, `"title":"Next"`) {
				t.Fatalf("the next verb after BROWSER_CRASHED did not work: %+v", r)
			}
			st2 := e.profStatus(t)
			if st2.Host.PID != st.Host.PID || st2.Host.BrowserPID == 0 || st2.Host.BrowserPID == st.Host.BrowserPID {
				t.Fatalf("status after recovery: %+v (before %+v)", st2, st)
			}
			var survivors []int
			if !pollUntil(10*time.Second, func() bool {
				survivors = slices.DeleteFunc(slices.Clone(old), func(p int) bool { return !procAlive(p) })
				return len(survivors) == 0
			}) {
				t.Errorf("processes of the crashed Chromium still run: %v of %v", survivors, old)
			}
		})
	}
}

// socketInodes returns the inodes of the sockets pid has open.
func socketInodes(pid int) []string {
	var out []string
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, _ := os.ReadDir(dir)
	for _, d := range ents {
		l, err := os.Readlink(filepath.Join(dir, d.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]"))
		}
	}
	return out
}

// listeningInodes reads the LISTEN (state 0A) sockets of /proc/PID/net/tcp and tcp6 (the
// network namespace of pid) and returns their inodes.
func listeningInodes(t *testing.T, pid int) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/net/" + name)
		if errors.Is(err, fs.ErrNotExist) && name == "tcp6" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			f := strings.Fields(sc.Text())
			if len(f) >= 10 && f[3] == "0A" {
				out[f[9]] = true
			}
		}
		f.Close()
	}
	return out
}

func TestNoTCPListener(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	e.profStart(t)
	e.profRun(t, nil, "visit", srv.URL+"/")
	e.profRun(t, nil, "session", "create", "iso", "--isolated")
	e.profRun(t, nil, "visit", srv.URL+"/next", "--session", "iso")
	st := e.profStatus(t)
	if st.Host.BrowserPID == 0 {
		t.Fatalf("status: %+v", st)
	}
	// The parser must see listeners at all: this test's own site is one.
	self := listeningInodes(t, os.Getpid())
	if !slices.ContainsFunc(socketInodes(os.Getpid()), func(i string) bool { return self[i] }) {
		t.Fatalf("the test site's listening socket was not found in /proc/net/tcp*: the check below would prove nothing")
	}
	pids := procTree(st.Host.BrowserPID)
	if len(pids) < 2 {
		t.Fatalf("Chromium has no child processes (%v); is it the browser pid?", pids)
	}
	listen := listeningInodes(t, st.Host.BrowserPID)
	sockets := 0
	for _, p := range pids {
		for k, v := range listeningInodes(t, p) { // a helper in another network namespace
			listen[k] = v
		}
		for _, ino := range socketInodes(p) {
			sockets++
			if listen[ino] {
				cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
				t.Errorf("Chromium process %d owns a listening TCP socket (inode %s): %s", p, ino, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
			}
		}
	}
	if sockets == 0 {
		t.Fatalf("no socket fds seen in Chromium's %d processes %v: the check proves nothing", len(pids), pids)
	}
	t.Logf("%d Chromium processes, %d sockets, none listening on TCP", len(pids), sockets)
}

func TestStopLeavesNothing(t *testing.T) {
	parallel(t)
	tmpBefore := chromiumTmp()
	e := newEnv(t, envOptions{})
	srv := site(t)
	e.profStart(t)
	e.profRun(t, nil, "visit", srv.URL+"/")
	e.profRun(t, nil, "session", "create", "iso", "--isolated")
	e.profRun(t, nil, "visit", srv.URL+"/next", "--session", "iso")
	if len(e.leftovers()) < 3 {
		t.Fatalf("expected brokerd, the host and Chromium to run: %v", e.leftovers())
	}
	var stopped struct {
		Stopped struct {
			Host   int `json:"host_pid"`
			Broker int `json:"broker_pid"`
		} `json:"stopped"`
	}
	e.profRun(t, &stopped, "stop")
	if stopped.Stopped.Host == 0 || stopped.Stopped.Broker == 0 {
		t.Fatalf("stop: %+v", stopped)
	}
	if left := e.leftovers(); len(left) > 0 {
		var desc []string
		for _, p := range left {
			cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
			desc = append(desc, fmt.Sprintf("%d %.120s", p, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
		}
		t.Errorf("processes still running right after stop returned:\n%s", strings.Join(desc, "\n"))
	}
	for _, name := range []string{"control.sock", "broker.sock", "chromium-tmp"} {
		if _, err := os.Lstat(filepath.Join(e.runDir(), name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left in the runtime dir after stop (%v)", name, err)
		}
	}
	if n := newEntries(tmpBefore, chromiumTmp()); len(n) > 0 {
		t.Errorf("left in /tmp: %v", n)
	}
	// The profile lock is free.
	f, err := os.OpenFile(filepath.Join(e.root, "data", "headless", "profile.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("profile lock still held after stop: %v", err)
	}
}

// descendsFrom reports whether pid is a descendant of ancestor (from /proc's ppid chain).
func descendsFrom(pid, ancestor int) bool {
	for i := 0; i < 64 && pid > 1; i++ {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 {
			return false
		}
		pid, _ = strconv.Atoi(f[1])
		if pid == ancestor {
			return true
		}
	}
	return false
}
