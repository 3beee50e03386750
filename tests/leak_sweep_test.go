//go:build linux

package tests

// The leak sweep (issue 4): drive every alias-login flow against the local login site of
// loginsite_test.go — success, wrong password, presence denied, presence timeout, an isolated
// session (its own store in brokerd), a two-step login, an interactive login saved as an alias,
// hostile pages — with random canary passwords, then search every
// place a password could end up for every encoding of them. The real headless and brokerd
// binaries, a real gnome-keyring on a private bus and real Chromium run it; the only stand-in
// is the person at the presence prompt (the scripted pinentry).

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// lsNeedle is one encoding of one secret.
type lsNeedle struct {
	name string
	b    []byte
}

// lsNeedles lists the encodings a leak of secret could take: canaryForms (raw, base64 std and
// URL, hex, URL-encoded, without the prefix) plus its random core alone (catches JSON and HTML
// escaping of the non-ASCII tail), UTF-16 (Blink and LevelDB store DOM strings so), Latin-1,
// upper-case hex, and base64 at every byte alignment (a secret inside a longer encoded blob).
func lsNeedles(label, secret string) []lsNeedle {
	var out []lsNeedle
	add := func(name string, b []byte) { out = lsAddNeedle(out, lsNeedle{label + " " + name, b}) }
	for i, f := range canaryForms(secret) {
		add("canaryForms["+strconv.Itoa(i)+"]", []byte(f))
	}
	core := strings.TrimSuffix(strings.TrimPrefix(secret, "cnry-"), "-Ü")
	add("core", []byte(core))
	add("core hex", []byte(hex.EncodeToString([]byte(core))))
	add("hex upper", []byte(strings.ToUpper(hex.EncodeToString([]byte(secret)))))
	u16 := utf16.Encode([]rune(secret))
	le, be := make([]byte, 2*len(u16)), make([]byte, 2*len(u16))
	for i, r := range u16 {
		le[2*i], le[2*i+1] = byte(r), byte(r>>8)
		be[2*i], be[2*i+1] = byte(r>>8), byte(r)
	}
	add("utf-16le", le)
	add("utf-16be", be)
	var latin1 []byte
	for _, r := range secret {
		latin1 = append(latin1, byte(r)) // every rune of a canary is < 256
	}
	add("latin-1", latin1)
	for _, n := range lsBase64Needles(label, []byte(secret)) {
		out = lsAddNeedle(out, n)
	}
	return out
}

// lsAddNeedle appends n to needles unless one of them has the same bytes.
func lsAddNeedle(needles []lsNeedle, n lsNeedle) []lsNeedle {
	for _, m := range needles {
		if bytes.Equal(m.b, n.b) {
			return needles
		}
	}
	return append(needles, n)
}

// lsBase64Needles lists b in base64, standard and URL alphabets, at every byte alignment: the
// characters made of b's bits only, which are there whatever bytes come before and after b in
// a longer encoded blob.
func lsBase64Needles(label string, b []byte) []lsNeedle {
	var out []lsNeedle
	for _, enc := range []struct {
		name string
		e    *base64.Encoding
	}{{"base64", base64.StdEncoding}, {"base64url", base64.URLEncoding}} {
		for shift := 0; shift < 3; shift++ {
			s := enc.e.EncodeToString(append(make([]byte, shift), b...))
			lo, hi := (8*shift+5)/6, 8*(shift+len(b))/6 // characters made of b's bits only
			out = lsAddNeedle(out, lsNeedle{fmt.Sprintf("%s %s shift %d", label, enc.name, shift), []byte(s[lo:hi])})
		}
	}
	return out
}

// lsSweep counts what was searched and reports every hit.
type lsSweep struct {
	t       *testing.T
	needles []lsNeedle
	files   map[string]int // files searched per area
	bytes   int64
	procs   int
	seen    map[string]bool // every path searched
}

func (s *lsSweep) search(where string, hay []byte) {
	s.t.Helper()
	for _, n := range s.needles {
		if bytes.Contains(hay, n.b) {
			s.t.Errorf("LEAK: %s found in %s", n.name, where)
		}
	}
}

// tree searches every regular file under root (skipping the keyring's own files).
func (s *lsSweep) tree(area, root string) {
	s.t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() && d.Name() == "keyrings" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a temporary file went away meanwhile
		}
		if err != nil {
			s.t.Errorf("sweep: cannot read %s: %v", p, err)
			return nil
		}
		s.search(p, b)
		s.files[area]++
		s.bytes += int64(len(b))
		s.seen[p] = true
		return nil
	})
	if err != nil {
		s.t.Errorf("sweep of %s: %v", root, err)
	}
}

// processes searches /proc/PID/cmdline and environ of every live process of e (brokerd, the
// host, every Chromium process, a lingering pinentry) and checks that the sweep saw brokerd,
// the host and Chromium's browser, renderer and utility processes.
//
// e.leftovers() alone does not find Chromium: it overwrites its argv and environ area with its
// process title, so /proc/PID/environ of a Chromium process no longer holds XDG_RUNTIME_DIR
// (only the crashpad handlers keep theirs). The host's descendants and every process whose
// command line names this env's root are added.
func (s *lsSweep) processes(e *env, hostPID int) {
	s.t.Helper()
	var broker, host, chromium int
	types := map[string]bool{}
	bpid := e.brokerPID()
	pids := e.leftovers()
	for _, p := range append(lsDescendants(hostPID), lsWithArg(e.root)...) {
		if !slices.Contains(pids, p) {
			pids = append(pids, p)
		}
	}
	for _, pid := range pids {
		exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
		read := 0
		for _, f := range []string{"cmdline", "environ"} {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + f)
			if err != nil {
				continue // exited meanwhile
			}
			s.search(fmt.Sprintf("/proc/%d/%s (%s)", pid, f, exe), b)
			read++
		}
		if read < 2 {
			continue
		}
		s.procs++
		switch {
		case pid == bpid:
			broker++
		case pid == hostPID:
			host++
		case filepath.Base(exe) == "chromium":
			chromium++
			cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			typ := "browser"
			for _, a := range strings.FieldsFunc(string(cmd), func(r rune) bool { return r == 0 || r == ' ' }) { // Chromium rewrites its title: one space-separated string
				if v, ok := strings.CutPrefix(a, "--type="); ok {
					typ = v
				}
			}
			types[typ] = true
		}
	}
	if broker != 1 || host != 1 || !types["browser"] || !types["renderer"] || !types["utility"] {
		s.t.Errorf("process sweep saw brokerd %d, host %d, Chromium %d times %v (brokerd pid %d, host pid %d): the sweep proves little",
			broker, host, chromium, types, bpid, hostPID)
	}
	s.t.Logf("process sweep: %d processes: brokerd, host and %d Chromium processes %v", len(pids), chromium, slices.Sorted(maps.Keys(types)))
}

// lsDescendants returns the live descendants of pid (from the parent field of /proc/PID/stat).
func lsDescendants(pid int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		p, err := strconv.Atoi(d.Name())
		if err != nil || isZombie(p) {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(string(f[1]))
		children[pp] = append(children[pp], p)
	}
	var out []int
	for q := []int{pid}; len(q) > 0; q = q[1:] {
		for _, c := range children[q[0]] {
			out = append(out, c)
			q = append(q, c)
		}
	}
	return out
}

// lsWithArg lists live processes other than this one whose command line contains s.
func lsWithArg(s string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() || isZombie(pid) {
			continue
		}
		if b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline"); err == nil && bytes.Contains(b, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// lsAuth is the --json result of 'headless auth login'.
type lsAuth struct {
	Status   string         `json:"status"`
	Origin   string         `json:"origin"`
	Alias    string         `json:"alias"`
	Session  string         `json:"session"`
	Evidence map[string]any `json:"evidence"`
}

// lsPageResult is the --json result of visit.
type lsPageResult struct {
	Session      string `json:"session"`
	URL          string `json:"url"`
	Title        string `json:"title"`
	AuthRequired *struct {
		Challenge string    `json:"challenge"`
		Origin    string    `json:"origin"`
		Aliases   []string  `json:"aliases"`
		ExpiresAt time.Time `json:"expires_at"`
	} `json:"auth_required"`
}

// lsEnroll enrolls a credential for origin through the CLI on a real pty, as a person would;
// extra are more flags of credentials add (--also-origin ORIGIN).
func lsEnroll(t *testing.T, e *env, origin, alias, account, password string, extra ...string) {
	t.Helper()
	r := e.runTTY([]step{
		{"Password for", password + "\n"},
		{"Repeat the password", password + "\n"},
	}, "headless", append([]string{"credentials", "add", "--origin", origin, "--account", account, "--alias", alias, "--json"}, extra...)...)
	if r.code != 0 || !strings.Contains(r.stdout, `"alias":"`+alias+`"`) {
		t.Fatalf("credentials add %s at %s: %+v", alias, origin, r)
	}
}

// lsPresence points the config at the scripted pinentry program. The running brokerd keeps
// its old config until restarted.
func lsPresence(e *env, program string, timeoutSeconds int) {
	e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"pinentry","program":%q,"timeout_seconds":%d}}`, program, timeoutSeconds))
}

func lsVisit(t testing.TB, e *env, url string, extra ...string) lsPageResult {
	t.Helper()
	var p lsPageResult
	e.ok(t, &p, append([]string{"visit", url}, extra...)...)
	return p
}

// lsLogin runs 'headless auth login ARGS --json'.
func lsLogin(e *env, args ...string) result {
	return e.run("", "headless", append(append([]string{"auth", "login"}, args...), "--json")...)
}

// lsLoginOK runs auth login, which must exit 0 with status want.
func lsLoginOK(t *testing.T, e *env, want string, args ...string) lsAuth {
	t.Helper()
	r := lsLogin(e, args...)
	var a lsAuth
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &a) != nil || a.Status != want {
		t.Fatalf("auth login %v: want status %q; exit %d\nstdout %s\nstderr %s", args, want, r.code, r.stdout, r.stderr)
	}
	t.Logf("auth login %v: %s, evidence %v", args, a.Status, a.Evidence)
	return a
}

// lsLoginFails runs auth login, which must fail with one of codes.
func lsLoginFails(t *testing.T, e *env, codes []string, args ...string) string {
	t.Helper()
	r := lsLogin(e, args...)
	if r.code == 0 {
		t.Fatalf("auth login %v succeeded, want one of %v: %s", args, codes, r.stdout)
	}
	code := errCode(t, r)
	if !slices.Contains(codes, code) {
		t.Fatalf("auth login %v: code %s, want one of %v: %+v", args, code, codes, r)
	}
	return code
}

// lsNothingTyped waits a moment for stray input reports or submissions and fails if any
// arrived since the counts were taken.
func lsNothingTyped(t *testing.T, ls *loginSite, posts, typed int) {
	t.Helper()
	time.Sleep(500 * time.Millisecond)
	if p := ls.Posts(); len(p) != posts {
		t.Errorf("the site received credentials it should not have: %v", p[posts:])
	}
	if ty := ls.Typed(); len(ty) != typed {
		t.Errorf("something was typed into the page: %v", ty[typed:])
	}
}

func TestLeakSweep(t *testing.T) {
	began := time.Now()
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	const account = "alice@example.test"
	canary := newCanary()  // the right password of alias "main"
	wrongPW := newCanary() // alias "wrong": same account, a wrong (and just as secret) password
	otherPW := newCanary() // alias "partner" on the other origin: never released here
	if canary == wrongPW || canary == otherPW {
		t.Fatal("canaries collide")
	}
	ls.SetAccount(account, canary)
	shmBefore, _ := filepath.Glob("/dev/shm/*")
	tmpBefore := lsChromiumTmp()

	// The scripted pinentries, made here so their logs (the prompt texts) outlive the subtests.
	approve, approveLog := presencetest.FakePinentry(t, "approve")
	deny, denyLog := presencetest.FakePinentry(t, "deny")
	hang, hangLog := presencetest.FakePinentry(t, "hang")
	pinentryLogs := []string{approveLog, denyLog, hangLog}
	lsPresence(e, approve, 5)

	lsEnroll(t, e, ls.Origin(), "main", account, canary)
	lsEnroll(t, e, ls.Origin(), "wrong", account, wrongPW)
	lsEnroll(t, e, ls.OtherOrigin(), "partner", "alice@partner.test", otherPW)
	e.start(t)
	var st lsStatus
	e.ok(t, &st, "status")
	hostPID := st.Host.PID

	// surfaces are the agent-visible outputs taken after each flow, swept by name below (they
	// are in e.allOutput() too).
	type surface struct{ name, text string }
	var surfaces []surface
	capture := func(flow string, sessions ...string) {
		t.Helper()
		for _, s := range sessions {
			for _, args := range [][]string{{"snapshot", "--session", s, "--json"}, {"snapshot", "--session", s}} {
				r := e.run("", "headless", args...)
				if r.code != 0 {
					t.Errorf("%s: headless %v: %+v", flow, args, r)
				}
				surfaces = append(surfaces, surface{flow + ": " + strings.Join(args, " "), r.stdout + r.stderr})
			}
		}
		for _, args := range [][]string{{"session", "list", "--json"}, {"session", "list"}} {
			r := e.run("", "headless", args...)
			if r.code != 0 {
				t.Errorf("%s: headless %v: %+v", flow, args, r)
			}
			surfaces = append(surfaces, surface{flow + ": " + strings.Join(args, " "), r.stdout + r.stderr})
		}
	}
	snapshotHas := func(t *testing.T, session, text string) {
		t.Helper()
		r := e.run("", "headless", "snapshot", "--session", session, "--json")
		if r.code != 0 || !strings.Contains(r.stdout, text) {
			t.Errorf("session %s does not show %q: %+v", session, text, r)
		}
	}
	// delivered checks that exactly want arrived at the site since n submissions.
	delivered := func(t *testing.T, n int, want ...loginPost) {
		t.Helper()
		got := ls.Posts()[n:]
		if len(got) != len(want) {
			t.Fatalf("the site received %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("submission %d: got %v, want %v (same password: %v)", i, got[i], want[i], got[i].Password == want[i].Password)
			}
		}
	}
	profile := filepath.Join(e.root, "data", "headless", "profile")
	sweep := &lsSweep{t: t, files: map[string]int{}, seen: map[string]bool{}}
	for _, sec := range []struct{ label, s string }{{"canary", canary}, {"wrong-password canary", wrongPW}, {"partner canary", otherPW}} {
		sweep.needles = append(sweep.needles, lsNeedles(sec.label, sec.s)...)
	}

	// Presence approves: success, wrong password, two-step, isolated session, hostile pages.
	t.Run("success", func(t *testing.T) {
		n := len(ls.Posts())
		p := lsVisit(t, e, ls.URL("/login"))
		a := p.AuthRequired
		if a == nil || a.Challenge == "" || a.Origin != ls.Origin() || a.ExpiresAt.Before(time.Now()) {
			t.Fatalf("visit of the login page: auth_required %+v, want a challenge for %s", a, ls.Origin())
		}
		aliases := slices.Sorted(slices.Values(a.Aliases))
		if !slices.Equal(aliases, []string{"main", "wrong"}) {
			t.Errorf("aliases offered for %s: %v, want [main wrong] (exact origin only)", ls.Origin(), a.Aliases)
		}
		res := lsLoginOK(t, e, "authenticated", "--challenge", a.Challenge, "--alias", "main")
		if res.Origin != ls.Origin() || res.Alias != "main" || res.Session != "default" {
			t.Errorf("result %+v", res)
		}
		delivered(t, n, loginPost{"main", "/login", account, canary})
		snapshotHas(t, "default", "Welcome "+account)
		capture("success", "default")
	})

	t.Run("wrong password", func(t *testing.T) {
		n := len(ls.Posts())
		p := lsVisit(t, e, ls.URL("/login"))
		if p.AuthRequired == nil {
			t.Fatal("no auth_required on the login page")
		}
		res := lsLoginOK(t, e, "failed", "--challenge", p.AuthRequired.Challenge, "--alias", "wrong")
		if res.Alias != "wrong" || res.Origin != ls.Origin() {
			t.Errorf("result %+v", res)
		}
		delivered(t, n, loginPost{"main", "/login", account, wrongPW})
		snapshotHas(t, "default", "Invalid credentials")
		capture("wrong password (form posted)", "default")

		// A script-driven login keeps the typed password in the field after the failure: the
		// snapshots below must not show it.
		n = len(ls.Posts())
		lsVisit(t, e, ls.URL("/spa"))
		lsLoginOK(t, e, "failed", "--alias", "wrong")
		delivered(t, n, loginPost{"main", "/api/login", account, wrongPW})
		capture("wrong password (script login)", "default")
	})

	t.Run("two-step", func(t *testing.T) {
		e.ok(t, nil, "session", "create", "twostep")
		n := len(ls.Posts())
		p := lsVisit(t, e, ls.URL("/step1"), "--session", "twostep")
		t.Logf("step 1 page: auth_required %+v", p.AuthRequired)
		// The password step is at /step2, not /login where main signed in first: new to the person.
		res := lsLoginOK(t, e, "authenticated", "--session", "twostep", "--alias", "main", "--new-login-path")
		if res.Session != "twostep" || res.Origin != ls.Origin() {
			t.Errorf("result %+v", res)
		}
		delivered(t, n, loginPost{"main", "/step1", account, ""}, loginPost{"main", "/step2", account, canary})
		snapshotHas(t, "twostep", "Welcome "+account)
		capture("two-step", "twostep")
	})

	t.Run("interactive login", func(t *testing.T) {
		e.ok(t, nil, "session", "create", "typed")
		n := len(ls.Posts())
		lsVisit(t, e, ls.URL("/login"), "--session", "typed")
		r := e.runTTY([]step{{"Account: ", account + "\n"}, {"Password (not shown): ", canary + "\n"},
			{"Save as alias? [y/N] ", "y\n"}, {"Alias: ", "typed\n"}},
			"headless", "auth", "login", "--interactive", "--session", "typed", "--json")
		if r.code != 0 || !strings.Contains(r.stdout, `"status":"authenticated"`) || !strings.Contains(r.stdout, `"saved":"typed"`) {
			t.Fatalf("auth login --interactive: %+v", r)
		}
		delivered(t, n, loginPost{"main", "/login", account, canary})
		snapshotHas(t, "typed", "Welcome "+account)
		capture("interactive login", "typed")
	})

	t.Run("isolated session", func(t *testing.T) {
		e.ok(t, nil, "session", "create", "iso", "--isolated")
		lsVisit(t, e, ls.URL("/home"), "--session", "iso")
		snapshotHas(t, "iso", "Not signed in") // its own cookie jar: the login below is its own
		// Its own credential store in brokerd: the vault's "main" is not visible there.
		r := e.runTTY([]step{{"Password for", canary + "\n"}, {"Repeat the password", canary + "\n"}},
			"headless", "credentials", "add", "--session", "iso", "--origin", ls.Origin(), "--account", account, "--alias", "main", "--json")
		if r.code != 0 {
			t.Fatalf("credentials add --session iso: %+v", r)
		}
		n := len(ls.Posts())
		p := lsVisit(t, e, ls.URL("/login"), "--session", "iso")
		if p.AuthRequired == nil || p.AuthRequired.Origin != ls.Origin() || !slices.Equal(p.AuthRequired.Aliases, []string{"main"}) {
			t.Fatalf("isolated session, login page: auth_required %+v", p.AuthRequired)
		}
		t.Logf("isolated session: aliases offered %v", p.AuthRequired.Aliases)
		res := lsLoginOK(t, e, "authenticated", "--session", "iso", "--challenge", p.AuthRequired.Challenge, "--alias", "main")
		if res.Session != "iso" {
			t.Errorf("result %+v", res)
		}
		delivered(t, n, loginPost{"main", "/login", account, canary})
		snapshotHas(t, "iso", "Welcome "+account)
		capture("isolated session", "iso", "default")
	})

	t.Run("hostile pages", func(t *testing.T) {
		prompts := len(presencetest.Prompts(t, approveLog))
		n, typed := len(ls.Posts()), len(ls.Typed())

		// The only login form is in a cross-origin iframe: no challenge, nothing typed, not even
		// for the alias saved for the frame's own origin.
		p := lsVisit(t, e, ls.URL("/hostile"))
		if p.AuthRequired != nil {
			t.Errorf("a page whose only login form is in a cross-origin frame got auth_required %+v", p.AuthRequired)
		}
		lsLoginFails(t, e, []string{"NO_LOGIN_FORM", "ORIGIN_MISMATCH"}, "--alias", "main")
		lsLoginFails(t, e, []string{"NO_LOGIN_FORM", "ORIGIN_MISMATCH", "ALIAS_UNKNOWN"}, "--alias", "partner")
		if got := presencetest.Prompts(t, approveLog); len(got) != prompts {
			t.Errorf("presence was asked for a page without a usable login form: %q", got[prompts:])
		}
		capture("hostile iframe", "default")
		lsNothingTyped(t, ls, n, typed)

		// A same-origin password form whose action is the other origin.
		lsVisit(t, e, ls.URL("/crossaction"))
		before := len(presencetest.Prompts(t, approveLog))
		lsLoginFails(t, e, []string{"FORM_ACTION_CROSS_ORIGIN"}, "--alias", "main")
		if n := len(presencetest.Prompts(t, approveLog)) - before; n > 0 {
			// Not a leak (nothing is typed), but the person approved a release that could
			// never be used: the action origin is only checked after the release.
			t.Logf("note: presence was asked (%d prompt) for a form that posts to another origin", n)
		}
		capture("cross-origin form action", "default")
		lsNothingTyped(t, ls, n, typed)

		// The other origin's own login page: aliases of that origin only; main is refused.
		p = lsVisit(t, e, ls.OtherURL("/frame"))
		if p.AuthRequired == nil || p.AuthRequired.Origin != ls.OtherOrigin() || !slices.Equal(p.AuthRequired.Aliases, []string{"partner"}) {
			t.Errorf("other origin's login page: auth_required %+v, want only alias partner for %s", p.AuthRequired, ls.OtherOrigin())
		} else {
			lsLoginFails(t, e, []string{"ALIAS_UNKNOWN", "ORIGIN_MISMATCH", "CHALLENGE_MISMATCH"}, "--challenge", p.AuthRequired.Challenge, "--alias", "main")
		}
		lsLoginFails(t, e, []string{"ALIAS_UNKNOWN", "ORIGIN_MISMATCH"}, "--alias", "main")
		capture("other origin", "default")
		lsNothingTyped(t, ls, n, typed)
	})

	// Processes of the first host and Chromium, before they are replaced below.
	sweep.processes(e, hostPID)

	// Presence denied: restart brokerd alone. The host goes with the brokerd that started it
	// (a new brokerd never faces a host it cannot vouch for); start brings a fresh one.
	t.Run("presence denied", func(t *testing.T) {
		lsPresence(e, deny, 5)
		plog := denyLog
		old := e.brokerPID()
		e.stopBroker()
		s := e.start(t)
		if h, _ := s["host"].(map[string]any); s["started"] != true || h["pid"] == float64(hostPID) {
			t.Fatalf("start after stopping brokerd: %v (the host pid %d should have stopped with its brokerd)", s, hostPID)
		}
		if e.brokerPID() == old || e.brokerPID() == 0 {
			t.Fatalf("brokerd was not restarted (pid %d → %d)", old, e.brokerPID())
		}
		n, typed := len(ls.Posts()), len(ls.Typed())
		p := lsVisit(t, e, ls.URL("/login"))
		if p.AuthRequired == nil {
			t.Errorf("no auth_required from the new host after brokerd restarted")
		}
		lsLoginFails(t, e, []string{"PRESENCE_DENIED"}, "--alias", "main")
		if got := presencetest.Prompts(t, plog); len(got) != 1 {
			t.Errorf("deny: %d prompts, want 1: %q", len(got), got)
		}
		lsNothingTyped(t, ls, n, typed)
		capture("presence denied", "default")
	})

	// Presence timeout: a full stop and start with a pinentry that never answers.
	t.Run("presence timeout", func(t *testing.T) {
		lsPresence(e, hang, 1)
		plog := hangLog
		e.ok(t, nil, "stop")
		// Chromium drops state of the last run when it starts again (session storage of
		// sessions not restored, for one): sweep the profile as this stop left it.
		sweep.tree("durable profile (first stop)", profile)
		if s := e.start(t); s["started"] != true {
			t.Fatalf("start after stop: %v", s)
		}
		n, typed := len(ls.Posts()), len(ls.Typed())
		lsVisit(t, e, ls.URL("/login"))
		began := time.Now()
		lsLoginFails(t, e, []string{"PRESENCE_TIMEOUT"}, "--alias", "main")
		// The config's 1 s, not the default 45 s: a bound between them, far from both.
		if d := time.Since(began); d > 30*time.Second {
			t.Errorf("a 1 s presence timeout took %v", d)
		}
		if got := presencetest.Prompts(t, plog); len(got) != 1 {
			t.Errorf("hang: %d prompts, want 1: %q", len(got), got)
		}
		// The pinentry that ignores SIGTERM must not outlive the timeout.
		deadline := time.Now().Add(30 * time.Second)
		for len(lsWithArg(plog)) > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if left := lsWithArg(plog); len(left) > 0 {
			t.Errorf("the hung pinentry still runs 5 s after PRESENCE_TIMEOUT: pids %v", left)
		}
		lsNothingTyped(t, ls, n, typed)
		capture("presence timeout", "default")
	})

	// The sweep. Agent-visible outputs first.
	if len(surfaces) < 10 {
		t.Errorf("only %d snapshots and session lists were taken", len(surfaces))
	}
	for _, s := range surfaces {
		sweep.search(s.name, []byte(s.text))
	}
	e.ok(t, &st, "status")
	sweep.processes(e, st.Host.PID)
	// The runtime dir while everything runs (Chromium's temporary dir lives there).
	sweep.tree("runtime dir (running)", e.runDir())
	for _, p := range lsNewSince(shmBefore, lsGlob("/dev/shm/*")) {
		sweep.tree("/dev/shm", p)
	}

	// A graceful stop: Chromium writes its profile out.
	e.ok(t, nil, "stop")
	if left := append(e.leftovers(), lsWithArg(e.root)...); len(left) > 0 {
		t.Errorf("still running after stop: %v", left)
	}
	out := e.allOutput()
	sweep.search("every CLI stdout, stderr and tty transcript", []byte(out))
	if !strings.Contains(out, `"status":"authenticated"`) {
		t.Error("the CLI output holds no successful login: the sweep proves little")
	}
	logs := 0
	for _, name := range []string{"host.log", "host.log.1", "brokerd.log", "brokerd.log.1"} {
		b, err := os.ReadFile(filepath.Join(e.runDir(), name))
		if err != nil {
			continue
		}
		logs++
		sweep.search(name, b)
		switch name {
		case "host.log":
			if !bytes.Contains(b, []byte("auth.login")) {
				t.Errorf("host.log does not record auth.login: the sweep of it proves little")
			}
		case "brokerd.log":
			if !bytes.Contains(b, []byte("released")) {
				t.Errorf("brokerd.log does not record a release: the sweep of it proves little")
			}
		}
	}
	if logs < 2 {
		t.Errorf("found %d of host.log and brokerd.log", logs)
	}
	sweep.tree("runtime dir (stopped)", e.runDir())
	sweep.tree("durable profile", profile)
	// Everything else of this user's world: the data dir (audit log, lock), config, home
	// (~/.cache, ~/.pki), then the scripted pinentry's logs (the prompt texts) and any
	// Chromium leftovers in /tmp.
	rest, _ := filepath.Glob(filepath.Join(e.root, "data", "headless", "*"))
	rest = append(rest, filepath.Join(e.root, "config"), filepath.Join(e.root, "home"))
	for _, p := range rest {
		if p != profile {
			sweep.tree("data (but the profile), config and home", p)
		}
	}
	if entries, _ := os.ReadDir(e.root); len(entries) != 4 {
		t.Errorf("the env root holds more than run, config, data and home (unswept): %v", entries)
	}
	if entries, _ := os.ReadDir(filepath.Join(e.root, "data")); len(entries) != 1 {
		t.Errorf("the data dir holds more than headless/ (unswept): %v", entries)
	}
	for _, l := range pinentryLogs {
		sweep.tree("pinentry logs", filepath.Dir(l))
	}
	for _, p := range lsNewSince(tmpBefore, lsChromiumTmp()) {
		sweep.tree("/tmp", p)
	}

	// The sweep must not be vacuous: the site really got the password, and the profile is a
	// real, used Chromium profile with the stores the issue names.
	var okLogins int
	for _, p := range ls.Posts() {
		if p.Password == canary {
			okLogins++
		}
	}
	if okLogins != 4 {
		t.Errorf("the site received the canary %d times, want 4 (success, two-step, interactive, isolated)", okLogins)
	}
	for _, p := range ls.Posts() {
		if p.Server != "main" || p.Password == otherPW {
			t.Errorf("a password reached the wrong place: %v", p)
		}
	}
	var missing []string
	for _, want := range []string{"Local State", "Default/Preferences", "Default/Login Data", "Default/Local Storage/leveldb",
		"Default/Session Storage", "Default/History"} {
		if _, err := os.Stat(filepath.Join(profile, want)); err != nil {
			missing = append(missing, want)
		}
	}
	if !lsPathUnder(sweep.seen, profile, "Cookies") {
		missing = append(missing, "Cookies")
	}
	if !lsPathUnder(sweep.seen, profile, "Cache") && !lsPathUnder(sweep.seen, filepath.Join(e.root, "home"), "Cache") {
		missing = append(missing, "Cache")
	}
	if len(missing) > 0 {
		t.Errorf("the profile lacks %v: the sweep of it proves little", missing)
	}
	if sweep.files["durable profile"] < 40 || sweep.files["runtime dir (running)"] < 2 || sweep.procs < 5 {
		t.Errorf("too little searched: %v files, %d processes", sweep.files, sweep.procs)
	}
	total := 0
	for _, n := range sweep.files {
		total += n
	}
	t.Logf("swept %d files (%v), %d bytes, %d process cmdlines and environs, %d surfaces, %d needles; %d submissions reached the site; %v",
		total, sweep.files, sweep.bytes, sweep.procs, len(surfaces), len(sweep.needles), len(ls.Posts()), time.Since(began).Round(time.Millisecond))
}

// lsStatus is the part of 'headless status --json' the sweep needs.
type lsStatus struct {
	Host struct {
		PID int `json:"pid"`
	} `json:"host"`
}

func lsGlob(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return m
}

// lsChromiumTmp lists Chromium's entries in the shared /tmp.
func lsChromiumTmp() []string { return lsGlob("/tmp/org.chromium.Chromium.*") }

// newSince returns the entries of after that are not in before.
func lsNewSince(before, after []string) []string {
	var out []string
	for _, a := range after {
		if !slices.Contains(before, a) {
			out = append(out, a)
		}
	}
	return out
}

// pathUnder reports whether a searched path under root has a component containing name.
func lsPathUnder(seen map[string]bool, root, name string) bool {
	for p := range seen {
		if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") && strings.Contains(rel, name) {
			return true
		}
	}
	return false
}
