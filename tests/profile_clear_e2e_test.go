//go:build linux

package tests

// End-to-end tests of 'headless profile clear' and of the migration of a profile of an older
// layout (issue 6): the real headless and brokerd binaries, a real gnome-keyring on a private
// bus, real Chromium, the local sites of site_test.go and loginsite_test.go, and a real pty.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// clearResult is the --json result of 'headless profile clear'.
type clearResult struct {
	Cleared        bool   `json:"cleared"`
	Profile        string `json:"profile"`
	SessionsClosed int    `json:"sessions_closed"`
}

// wantNoTemps fails t when the data dir holds anything of a clear but the profile and its lock.
func (e *env) wantNoTemps(t *testing.T) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(e.root, "data", "headless"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ents {
		if strings.HasPrefix(d.Name(), ".profile.") {
			t.Errorf("left in the data dir: %s", d.Name())
		}
	}
}

// wantHeadlessProfile fails t unless the profile holds the marker pinning the cookie key to
// the Secret Service and Preferences with Chromium's password saving off.
func (e *env) wantHeadlessProfile(t *testing.T) {
	t.Helper()
	var m struct {
		PasswordStore string `json:"password_store"`
	}
	b, err := os.ReadFile(filepath.Join(e.profileDir(), "headless-profile.json"))
	if err != nil || json.Unmarshal(b, &m) != nil || m.PasswordStore != "gnome-libsecret" {
		t.Errorf("marker after the clear: %q (%v)", b, err)
	}
	var prefs struct {
		Save *bool `json:"credentials_enable_service"`
	}
	b, err = os.ReadFile(filepath.Join(e.profileDir(), "Default", "Preferences"))
	if err != nil || json.Unmarshal(b, &prefs) != nil || prefs.Save == nil || *prefs.Save {
		t.Errorf("Preferences after the clear do not turn password saving off (%v)", err)
	}
}

func TestProfileClearWithHostRunning(t *testing.T) {
	parallel(t)
	const account = "alice@example.test"
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	srv := site(t)
	pw := newCanary()
	ls.SetAccount(account, pw)
	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, ls.Origin(), "main", account, pw)
	e.start(t)
	st := e.profStatus(t)

	signIn := func(t *testing.T) {
		t.Helper()
		p := lsVisit(t, e, ls.URL("/login"))
		if p.AuthRequired == nil {
			t.Fatalf("no auth_required on the login page: %+v", p)
		}
		lsLoginOK(t, e, "authenticated", "--alias", "main", "--challenge", p.AuthRequired.Challenge)
	}
	home := func(t *testing.T) string {
		t.Helper()
		lsVisit(t, e, ls.URL("/home"))
		r := e.run("", "headless", "snapshot", "--json")
		if r.code != 0 {
			t.Fatalf("snapshot: %+v", r)
		}
		return r.stdout
	}
	signIn(t)
	if h := home(t); !strings.Contains(h, "Welcome "+account) {
		t.Fatalf("not signed in after auth login: %s", h)
	}
	v := randomValue()
	e.setCookie(t, srv.URL, v)
	wantEcho(t, e.profEcho(t, srv.URL), v, v)
	e.ok(t, nil, "session", "create", "iso", "--isolated")
	e.ok(t, nil, "visit", srv.URL+"/set?v=iso", "--session", "iso")
	isoPW := newCanary()
	if r := e.runTTY([]step{{"Password for", isoPW + "\n"}, {"Repeat the password", isoPW + "\n"}},
		"headless", "credentials", "add", "--session", "iso", "--origin", ls.Origin(), "--account", account, "--alias", "iso-main", "--json"); r.code != 0 {
		t.Fatalf("credentials add --session iso: %+v", r)
	}
	if got := aliasesIn(t, e, "--session", "iso"); !slices.Equal(got, []string{"iso-main"}) {
		t.Fatalf("isolated store before the clear: %v", got)
	}
	e.ok(t, nil, "session", "create", "tab")
	oldProfile, err := os.Stat(e.profileDir())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("refused without a terminal and --yes", func(t *testing.T) {
		r := e.run("y\n", "headless", "profile", "clear", "--json") // a y on stdin does not count
		if r.code == 0 || errCode(t, r) != "NO_TTY" {
			t.Fatalf("profile clear without a terminal: %+v, want NO_TTY", r)
		}
		var je jsonErr
		json.Unmarshal([]byte(r.stdout), &je)
		if !strings.Contains(je.Error.Hint, "--yes") {
			t.Errorf("hint does not name --yes: %q", je.Error.Hint)
		}
	})
	t.Run("answered no at the terminal", func(t *testing.T) {
		r := e.runTTY([]step{{"Saved credentials are kept. [y/N]", "n\n"}}, "headless", "profile", "clear", "--json")
		if r.code == 0 || errCode(t, r) != "CANCELLED" {
			t.Fatalf("profile clear answered no: %+v, want CANCELLED", r)
		}
	})
	t.Run("locked by this host for a host elsewhere", func(t *testing.T) {
		// A second user world sharing the data dir (the profile) but not the runtime dir: no
		// host answers there, so it clears directly, and must meet the running host's lock.
		run2 := filepath.Join(e.root, "run", "second")
		if err := os.Mkdir(run2, 0o700); err != nil {
			t.Fatal(err)
		}
		e2 := &env{t: t, root: e.root, outputs: &bytes.Buffer{}, vars: setVar(append([]string(nil), e.vars...), "XDG_RUNTIME_DIR", run2)}
		r := e2.run("", "headless", "profile", "clear", "--yes", "--json")
		// The clear needed a brokerd there to record it (it started one, --auto): it goes.
		defer e2.run("", "headless", "stop")
		if r.code == 0 || errCode(t, r) != "PROFILE_LOCKED" {
			t.Fatalf("profile clear while another host holds the profile: %+v, want PROFILE_LOCKED", r)
		}
		var je jsonErr
		json.Unmarshal([]byte(r.stdout), &je)
		if !strings.Contains(je.Error.Message, "pid "+strconv.Itoa(st.Host.PID)) {
			t.Errorf("PROFILE_LOCKED does not name the owner (host pid %d): %q", st.Host.PID, je.Error.Message)
		}
	})
	// Nothing above changed anything.
	wantEcho(t, e.profEcho(t, srv.URL), v, v)
	if h := home(t); !strings.Contains(h, "Welcome "+account) {
		t.Fatalf("signed out by a refused clear: %s", h)
	}

	var res clearResult
	e.ok(t, &res, "profile", "clear", "--yes")
	if !res.Cleared || res.Profile != e.profileDir() || res.SessionsClosed != 3 {
		t.Fatalf("profile clear: %+v, want cleared %s with 3 sessions closed", res, e.profileDir())
	}

	// The default session works, on a fresh profile: no cookie, no storage, signed out.
	wantEcho(t, e.profEcho(t, srv.URL), "none", "none")
	if h := home(t); !strings.Contains(h, "Not signed in") {
		t.Fatalf("still signed in after the clear: %s", h)
	}
	var l struct {
		Sessions []struct{ Name string } `json:"sessions"`
	}
	e.ok(t, &l, "session", "list")
	if len(l.Sessions) != 1 || l.Sessions[0].Name != "default" {
		t.Errorf("sessions after the clear: %+v, want only default", l.Sessions)
	}
	e.fails(t, "SESSION_UNKNOWN", "visit", srv.URL+"/echo", "--session", "iso")
	// The isolated session's store went with it: brokerd no longer knows the session, and a
	// re-created one starts empty.
	e.fails(t, "SESSION_UNKNOWN", "credentials", "list", "--session", "iso")
	e.ok(t, nil, "session", "create", "iso", "--isolated")
	if got := aliasesIn(t, e, "--session", "iso"); len(got) != 0 {
		t.Fatalf("isolated store after the clear: %v, want empty", got)
	}
	e.ok(t, nil, "session", "close", "iso")
	st2 := e.profStatus(t)
	if st2.Host.PID != st.Host.PID || st2.Host.BrowserPID == 0 || st2.Host.BrowserPID == st.Host.BrowserPID || st2.Host.LockOwner != st.Host.PID {
		t.Errorf("status after the clear: %+v (before %+v): same host and lock, new browser expected", st2.Host, st.Host)
	}
	if fi, err := os.Stat(e.profileDir()); err != nil || os.SameFile(fi, oldProfile) || fi.Mode().Perm() != 0o700 {
		t.Errorf("profile dir after the clear: %v %v (the same directory as before: %v)", fi, err, fi != nil && os.SameFile(fi, oldProfile))
	}
	e.wantHeadlessProfile(t)
	e.wantNoTemps(t)

	// Vault credentials are untouched, and the saved alias still signs in.
	r := e.run("", "headless", "credentials", "list", "--origin", ls.Origin(), "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"alias":"main"`) {
		t.Fatalf("credentials list after the clear: %+v", r)
	}
	signIn(t)
	if h := home(t); !strings.Contains(h, "Welcome "+account) {
		t.Fatalf("the saved alias did not sign in after the clear: %s", h)
	}
	wantClearAudited(t, e, 1)
	// And the fresh profile keeps cookies across a restart (its cookie key is the keyring's).
	v2 := randomValue()
	e.setCookie(t, srv.URL, v2)
	e.ok(t, nil, "stop")
	e.profStart(t)
	wantEcho(t, e.profEcho(t, srv.URL), v2, v2)
}

func TestProfileClearWithHostStopped(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	v := randomValue()
	e.profStart(t)
	e.setCookie(t, srv.URL, v)
	e.ok(t, nil, "stop")
	if db := cookieDB(t, e.profileDir()); db == "" {
		t.Fatal("no cookie database to clear")
	}

	r := e.run("", "headless", "profile", "clear", "--json")
	if r.code == 0 || errCode(t, r) != "NO_TTY" {
		t.Fatalf("profile clear without a terminal: %+v, want NO_TTY", r)
	}
	r = e.runTTY([]step{{"Clear the browser profile (cookies, storage, cache)? Saved credentials are kept. [y/N] ", "y\n"}}, "headless", "profile", "clear", "--json")
	var res clearResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil {
		t.Fatalf("profile clear with the host stopped: %+v", r)
	}
	if !res.Cleared || res.Profile != e.profileDir() || res.SessionsClosed != 0 {
		t.Fatalf("profile clear: %+v", res)
	}
	if st := e.profStatus(t); st.Host.Running {
		t.Fatalf("profile clear started a host: %+v", st)
	}
	ents, err := os.ReadDir(e.profileDir())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range ents {
		names = append(names, d.Name())
	}
	if !reflect.DeepEqual(names, []string{"Default", "headless-profile.json"}) {
		t.Errorf("cleared profile holds %v", names)
	}
	e.wantHeadlessProfile(t)
	e.wantNoTemps(t)
	wantClearAudited(t, e, 1)
	e.profStart(t)
	wantEcho(t, e.profEcho(t, srv.URL), "none", "none")
}

// wantClearAudited checks that the audit log holds exactly n "clear" records, each naming the
// process that cleared (the host, or the CLI when no host ran).
func wantClearAudited(t *testing.T, e *env, n int) {
	t.Helper()
	r := e.run("", "headless", "audit", "list", "--json")
	var al struct {
		Records []struct {
			Op, Decision, Exe string
			PID               int
		} `json:"records"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &al) != nil {
		t.Fatalf("audit list: %+v", r)
	}
	got := 0
	for _, rec := range al.Records {
		if rec.Op == "clear" {
			got++
			if rec.Decision != "ok" || rec.PID == 0 || !strings.HasSuffix(rec.Exe, "/headless") {
				t.Errorf("clear record %+v: want decision ok and the clearing headless process", rec)
			}
		}
	}
	if got != n {
		t.Fatalf("%d clear records in the audit log, want %d: %s", got, n, r.stdout)
	}
}

// migStart is the part of 'headless start --json' and 'headless status --json' about migration.
type migReport struct {
	MigratedFrom string `json:"profile_migrated_from"`
	NotMigrated  []struct {
		Path, Reason, Detail string
	} `json:"profile_not_migrated"`
}

// mine keeps the entries under e.root (the machine's /tmp/headless-UID/profile fallback is
// not this test's).
func (m migReport) mine(e *env) migReport {
	out := migReport{MigratedFrom: m.MigratedFrom}
	for _, n := range m.NotMigrated {
		if strings.HasPrefix(n.Path, e.root+"/") {
			out.NotMigrated = append(out.NotMigrated, n)
		}
	}
	return out
}

func TestProfileMigratedFromRuntimeDir(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := site(t)
	v := randomValue()
	e.profStart(t)
	e.setCookie(t, srv.URL, v)
	e.ok(t, nil, "stop")

	// The profile Chromium wrote, at the older layout's place inside the runtime dir.
	legacy := filepath.Join(e.runDir(), "profile")
	if err := os.Rename(e.profileDir(), legacy); err != nil {
		t.Fatal(err)
	}
	db, _ := filepath.Rel(legacy, cookieDB(t, legacy))
	want, err := os.ReadFile(filepath.Join(legacy, db))
	if err != nil {
		t.Fatal(err)
	}

	var s struct {
		Host migReport `json:"host"`
	}
	e.ok(t, &s, "start")
	if m := s.Host.mine(e); m.MigratedFrom != legacy || len(m.NotMigrated) != 0 {
		t.Fatalf("start: %+v, want migrated from %s", s.Host, legacy)
	}
	if _, err := os.Lstat(legacy); !os.IsNotExist(err) {
		t.Errorf("the old profile is still there: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(e.profileDir(), db))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("the cookie database is not the same bytes at the new place (err %v)", err)
	}
	var st struct {
		Host migReport `json:"host"`
	}
	e.ok(t, &st, "status")
	if st.Host.MigratedFrom != legacy {
		t.Errorf("status: %+v, want migrated from %s", st.Host, legacy)
	}
	wantEcho(t, e.profEcho(t, srv.URL), v, v)
	e.ok(t, nil, "stop")

	// A second older-layout profile now meets an existing profile: left in place, reported.
	if err := os.MkdirAll(filepath.Join(legacy, "Default"), 0o700); err != nil {
		t.Fatal(err)
	}
	oldBytes := []byte("an older profile's cookie bytes \x00\x01")
	if err := os.WriteFile(filepath.Join(legacy, "Default", "Cookies"), oldBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	s.Host = migReport{}
	e.ok(t, &s, "start")
	m := s.Host.mine(e)
	if m.MigratedFrom != "" || len(m.NotMigrated) != 1 || m.NotMigrated[0].Path != legacy || m.NotMigrated[0].Reason != "target_exists" {
		t.Fatalf("start: %+v, want %s left in place (target_exists)", s.Host, legacy)
	}
	st.Host = migReport{}
	e.ok(t, &st, "status")
	if m := st.Host.mine(e); len(m.NotMigrated) != 1 || m.NotMigrated[0].Reason != "target_exists" {
		t.Errorf("status: %+v, want the profile left in place reported", st.Host)
	}
	if got, err := os.ReadFile(filepath.Join(legacy, "Default", "Cookies")); err != nil || !bytes.Equal(got, oldBytes) {
		t.Errorf("the profile left in place changed (err %v)", err)
	}
	wantEcho(t, e.profEcho(t, srv.URL), v, v)
	r := e.run("", "headless", "status")
	if !strings.Contains(r.stdout, "left at "+legacy+" (target_exists") {
		t.Errorf("human status does not report the profile left in place: %q", r.stdout)
	}
	log, _ := os.ReadFile(filepath.Join(e.runDir(), "host.log"))
	if !bytes.Contains(log, []byte("left in place")) || !bytes.Contains(log, []byte("reason=target_exists")) {
		t.Errorf("host.log does not report the profile left in place")
	}
}
