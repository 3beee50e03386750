//go:build linux

package tests

// Passkeys by alias: headless enrols a passkey at a real WebAuthn relying party (go-webauthn,
// passkeysite_test.go) and signs in with it by alias, with the person approving at the presence
// prompt, against the real brokerd and headless binaries, gnome-keyring and Chromium. The
// private key never leaves brokerd and the host's authenticator: it is on no surface an agent
// or a file of the user's world holds.

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/creack/pty"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/hardening"
)

// pkAlias is the alias the passkey is saved under.
const pkAlias = "rp-passkey"

// pkcs8P256Prefix is how every PKCS#8 DER encoding of a P-256 private key begins (SEQUENCE,
// version 0, the id-ecPublicKey and prime256v1 OIDs, the OCTET STRING of the SEC 1
// ECPrivateKey up to its 32-byte private scalar): a key leaked in any encoding shows it.
var pkcs8P256Prefix = []byte{
	0x30, 0x81, 0x87, 0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
	0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x04, 0x6d, 0x30, 0x6b, 0x02, 0x01, 0x01, 0x04, 0x20,
}

// pkcs8P256Base64 is pkcs8P256Prefix in standard base64 (36 bytes: 48 characters, no padding;
// it has neither '+' nor '/', so its base64url is the same text).
const pkcs8P256Base64 = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg"

// pkKeyNeedles are the leak sweep's needles for any P-256 private key: the PKCS#8 prefix raw,
// in hex (both cases), in base64 and base64url at every byte alignment (the key inside a longer
// blob: a CDP message, a JSON record, a sealed item's plaintext), and those base64 texts in
// UTF-16 (Blink and LevelDB keep DOM strings so).
func pkKeyNeedles() []lsNeedle {
	out := []lsNeedle{
		{"PKCS#8 P-256 prefix raw", pkcs8P256Prefix},
		{"PKCS#8 P-256 prefix hex", []byte(hex.EncodeToString(pkcs8P256Prefix))},
		{"PKCS#8 P-256 prefix HEX", []byte(strings.ToUpper(hex.EncodeToString(pkcs8P256Prefix)))},
	}
	for _, n := range lsBase64Needles("PKCS#8 P-256 prefix", pkcs8P256Prefix) {
		out = lsAddNeedle(out, n)
		u16 := utf16.Encode([]rune(string(n.b)))
		le := make([]byte, 2*len(u16))
		for i, r := range u16 {
			le[2*i], le[2*i+1] = byte(r), byte(r>>8)
		}
		out = lsAddNeedle(out, lsNeedle{n.name + " utf-16le", le})
	}
	return out
}

// pkNeedlesHit reports which of needles are in hay (for the needles' own check).
func pkNeedlesHit(needles []lsNeedle, hay []byte) []string {
	var hit []string
	for _, n := range needles {
		if bytes.Contains(hay, n.b) {
			hit = append(hit, n.name)
		}
	}
	return hit
}

// pkNeedlesCatchAKey checks the needles before they are trusted: they hold the exact
// base64 the issue names, and they find a fresh P-256 key's PKCS#8 raw, in base64 and in
// base64url at each byte offset inside a longer blob (the sweep can fail).
func pkNeedlesCatchAKey(t *testing.T, needles []lsNeedle) {
	t.Helper()
	if base64.StdEncoding.EncodeToString(pkcs8P256Prefix) != pkcs8P256Base64 {
		t.Fatalf("the PKCS#8 prefix's base64 is %s, want %s", base64.StdEncoding.EncodeToString(pkcs8P256Prefix), pkcs8P256Base64)
	}
	if !slices.ContainsFunc(needles, func(n lsNeedle) bool { return string(n.b) == pkcs8P256Base64 }) {
		t.Fatalf("no needle is %s", pkcs8P256Base64)
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(der, pkcs8P256Prefix) {
		t.Fatalf("a P-256 key's PKCS#8 begins %x, not with the prefix %x", der[:len(pkcs8P256Prefix)], pkcs8P256Prefix)
	}
	for shift := 0; shift < 3; shift++ {
		blob := append(append(make([]byte, shift), der...), "tail"...)
		for name, hay := range map[string][]byte{
			"raw":       append([]byte("junk"), blob...),
			"base64":    []byte(`{"privateKey":"` + base64.StdEncoding.EncodeToString(blob) + `"}`),
			"base64url": []byte(base64.RawURLEncoding.EncodeToString(blob)),
		} {
			if len(pkNeedlesHit(needles, hay)) == 0 {
				t.Fatalf("the needles miss a P-256 key in %s at byte offset %d: the sweep would prove nothing", name, shift)
			}
		}
	}
}

// pkBackground is a headless command left running, on a terminal of its own as a person runs
// it, while the test acts on the page.
type pkBackground struct {
	args   []string
	exited chan struct{} // closed when it has ended and r is set
	r      result
}

// background starts 'NAME ARGS' on a fresh pty (nobody types at it) and returns at once; its
// outputs go into e's record (the leak sweep reads them) when it ends. At cleanup a command
// still running is killed.
func (e *env) background(t testing.TB, name string, args ...string) *pkBackground {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	cmd := e.command(name, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &so, &se, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Credential: e.cred}
	if err := cmd.Start(); err != nil {
		ptmx.Close()
		tty.Close()
		t.Fatal(err)
	}
	tty.Close()
	var transcript bytes.Buffer
	var tmu sync.Mutex
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			tmu.Lock()
			transcript.Write(buf[:n])
			tmu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	b := &pkBackground{args: append([]string{name}, args...), exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		ptmx.Close()
		select {
		case <-read:
		case <-time.After(10 * time.Second):
		}
		tmu.Lock()
		b.r = result{stdout: so.String(), stderr: se.String(), tty: transcript.String(), code: code}
		tmu.Unlock()
		e.record(b.r.stdout, b.r.stderr, b.r.tty)
		close(b.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-b.exited:
		default:
			cmd.Process.Kill()
			<-b.exited
		}
	})
	return b
}

// wait waits up to d for the command to end; ok is false when it is still running.
func (b *pkBackground) wait(d time.Duration) (r result, ok bool) {
	select {
	case <-b.exited:
		return b.r, true
	default:
	}
	select {
	case <-b.exited:
		return b.r, true
	case <-time.After(d):
		return result{}, false
	}
}

// pkListed is a credential as 'credentials list --json' lists it.
type pkListed struct {
	Origin, Account, Alias string
	Passkey                bool `json:"passkey"`
}

// pkWorld is one test's world: the env, the relying party and the scripted person (a
// "switch" pinentry: approves, or denies while its .deny file exists).
type pkWorld struct {
	e         *env
	site      *passkeySite
	personLog string
}

// deny makes the person deny (on) or approve (off) every prompt from now on.
func (w *pkWorld) deny(on bool) {
	if on {
		os.WriteFile(w.personLog+".deny", nil, 0o600)
	} else {
		os.Remove(w.personLog + ".deny")
	}
}

// prompts is how many presence prompts the person has been shown so far.
func (w *pkWorld) prompts(t testing.TB) int { return len(presencetest.Prompts(t, w.personLog)) }

// visit opens path of the relying party in session.
func (w *pkWorld) visit(t testing.TB, session, path string) lsPageResult {
	t.Helper()
	return lsVisit(t, w.e, w.site.URL(path), "--session", session)
}

// snapshot is session's outline now.
func (w *pkWorld) snapshot(t testing.TB, session string) outline {
	t.Helper()
	var o outline
	w.e.ok(t, &o, "snapshot", "--session", session)
	return o
}

// click clicks, with the ordinary click verb, the button of session's page whose text is
// text (its ref from a fresh snapshot).
func (w *pkWorld) click(t testing.TB, session, text string) {
	t.Helper()
	ref := w.snapshot(t, session).ref(t, "button", text)
	w.e.ok(t, nil, "click", ref, "--session", session)
}

// waitText waits up to d for text on session's page; false when it did not appear.
func (w *pkWorld) waitText(session, text string, d time.Duration) bool {
	r := w.e.run("", "headless", "wait", "--session", session, "--text", text, "--timeout", d.String(), "--json")
	return r.code == 0
}

// signIn runs 'auth login --session SESSION --alias rp-passkey' on session's /login page with
// the person approving, and checks the sign-in:
//   - the command exits 0 with status "authenticated";
//   - the person was asked exactly once;
//   - the session ends at /account, which says "Signed in as alice" (the site's session
//     cookie, set only by a verified assertion);
//   - the site recorded exactly one new sign-in, whose sign count (as the authenticator signed
//     it) is > 0 and > every earlier one.
//
// It returns that sign count.
func (w *pkWorld) signIn(t *testing.T, session string) uint32 {
	t.Helper()
	w.deny(false)
	w.e.run("", "headless", "visit", w.site.URL("/logout"), "--session", session, "--json") // no session cookie before
	p := w.visit(t, session, "/login")
	t.Logf("visit /login in %s: auth_required %+v", session, p.AuthRequired)
	counts, prompts := w.site.SignCounts(), w.prompts(t)
	lsLoginOK(t, w.e, "authenticated", "--session", session, "--alias", pkAlias)
	if got := w.prompts(t) - prompts; got != 1 {
		t.Errorf("%d presence prompts for one sign-in, want 1", got)
	}
	if !w.waitText(session, "Signed in as alice", 15*time.Second) {
		t.Errorf("session %s does not show \"Signed in as alice\"; site: %v", session, w.site.Errors())
	}
	if o := w.snapshot(t, session); !strings.HasPrefix(o.URL, w.site.URL("/account")) {
		t.Errorf("session %s is at %s after the sign-in, want %s", session, o.URL, w.site.URL("/account"))
	}
	now := w.site.SignCounts()
	if len(now) != len(counts)+1 {
		t.Fatalf("the site recorded %d sign-ins, want 1 (refusals %v; site: %v)", len(now)-len(counts), w.site.RefusalNames(), w.site.Errors())
	}
	n := now[len(now)-1]
	if n == 0 {
		t.Errorf("the authenticator signed with sign count 0, want > 0")
	}
	for _, before := range counts {
		if n <= before {
			t.Errorf("sign count %d after earlier sign-ins with %v: want strictly greater", n, counts)
		}
	}
	return n
}

// enrol opens /register in session, runs 'credentials add --passkey' for it in the background
// and, while it waits, clicks "Create a passkey" as an agent would. A click that reached the
// page before the command was ready (the page reports "Registration failed") is tried again,
// at most three times in all.
func (w *pkWorld) enrol(t testing.TB, session string) result {
	t.Helper()
	w.visit(t, session, "/register")
	bg := w.e.background(t, "headless", "credentials", "add", "--passkey", "--session", session,
		"--origin", w.site.Origin(), "--account", pkAccount, "--alias", pkAlias, "--json")
	time.Sleep(time.Second) // let it get ready
	for attempt := 1; attempt <= 3; attempt++ {
		failures := len(w.site.RegistrationFailures())
		w.click(t, session, "Create a passkey")
		deadline := time.Now().Add(45 * time.Second)
		for w.site.Registered() == 0 && len(w.site.RegistrationFailures()) == failures && time.Now().Before(deadline) {
			if _, done := bg.wait(100 * time.Millisecond); done {
				break
			}
		}
		if _, done := bg.wait(0); done || w.site.Registered() > 0 {
			break
		}
		t.Logf("click %d: registration failed in the page (%v); the command still waits", attempt, w.site.RegistrationFailures())
	}
	r, done := bg.wait(60 * time.Second)
	if !done {
		t.Fatalf("%v still runs a minute after the click (the site registered %d credentials; page failures %v; site: %v)",
			bg.args, w.site.Registered(), w.site.RegistrationFailures(), w.site.Errors())
	}
	return r
}

// TestPasskeyByAlias: a passkey enrolled through headless at a local WebAuthn relying party
// (go-webauthn, RP ID localhost) signs in by alias only with the person's approval, never for
// a page alone or for another origin, with a sign count that grows across sign-ins and
// restarts, and its private key is on no surface.
func TestPasskeyByAlias(t *testing.T) {
	parallel(t)
	needles := pkKeyNeedles()
	pkNeedlesCatchAKey(t, needles)
	e := newEnv(t, envOptions{})
	site := newPasskeySite(t)
	person, personLog := presencetest.FakePinentry(t, "switch")
	w := &pkWorld{e: e, site: site, personLog: personLog}
	lsPresence(e, person, 10)
	shmBefore, _ := filepath.Glob("/dev/shm/*")
	tmpBefore := lsChromiumTmp()
	e.start(t)
	e.ok(t, nil, "session", "create", "s1")

	// a. Enrolment: 'headless credentials add --passkey --session s1 --origin ORIGIN --account
	// alice --alias rp-passkey --json' waits for the registration in s1, which the agent starts
	// with the ordinary click on "Create a passkey" (the scripted person answers any prompt).
	//   - the command exits 0, its output names the alias;
	//   - the page says "Passkey registered", and the site has 1 credential of alice;
	//   - 'credentials list --json' lists rp-passkey for ORIGIN and alice with "passkey": true.
	ok := t.Run("enrol", func(t *testing.T) {
		prompts := w.prompts(t)
		r := w.enrol(t, "s1")
		if r.code != 0 || !strings.Contains(r.stdout, `"alias":"`+pkAlias+`"`) {
			t.Fatalf("credentials add --passkey: %+v (page failures %v; site: %v)", r, site.RegistrationFailures(), site.Errors())
		}
		// (Under the pinentry provider a save asks nobody, as for a password; the passphrase
		// provider would ask for the passphrase to seal it with.)
		t.Logf("enrolment prompts: %q", presencetest.Prompts(t, personLog)[prompts:])
		if !w.waitText("s1", "Passkey registered", 15*time.Second) {
			t.Errorf("the page does not say \"Passkey registered\" (page failures %v)", site.RegistrationFailures())
		}
		if n := site.Registered(); n != 1 {
			t.Fatalf("the site has %d credentials of alice, want 1 (site: %v)", n, site.Errors())
		}
		var l struct {
			Credentials []pkListed `json:"credentials"`
		}
		e.ok(t, &l, "credentials", "list")
		i := slices.IndexFunc(l.Credentials, func(c pkListed) bool { return c.Alias == pkAlias })
		if i < 0 {
			t.Fatalf("credentials list has no %s: %+v", pkAlias, l.Credentials)
		}
		if c := l.Credentials[i]; !c.Passkey || c.Origin != site.Origin() || c.Account != pkAccount {
			t.Errorf("credentials list: %+v, want a passkey for %s at %s", c, pkAccount, site.Origin())
		}
	})
	if !ok {
		t.FailNow()
	}

	// b. Sign-in by alias: 'headless auth login --session s1 --alias rp-passkey --json' on
	// /login, the person approving: authenticated, /account says "Signed in as alice", and the
	// site recorded one sign-in with a sign count > 0 (signIn says it all).
	var first uint32
	if !t.Run("sign in", func(t *testing.T) { first = w.signIn(t, "s1") }) {
		t.FailNow()
	}

	// c. Denial: in a new session s2 at /login, the person denies: auth login fails with
	// PRESENCE_DENIED after one prompt, and the site has no new sign-in. Then the agent clicks
	// "Sign in with a passkey" itself, no auth login running (and the person would approve,
	// were they asked): the page's own request is answered by nobody —
	//   - no presence prompt is shown;
	//   - within the page's 5 s timeout the page says "Sign-in refused: …" (logged, not
	//     required: what matters is what follows);
	//   - the site has no new sign-in, s2 is not at /account, and /account in s2 sends it to
	//     /login (no session cookie was set).
	t.Run("denied", func(t *testing.T) {
		e.ok(t, nil, "session", "create", "s2")
		e.run("", "headless", "visit", site.URL("/logout"), "--session", "s2", "--json")
		w.visit(t, "s2", "/login")
		counts, prompts, refusals := len(site.SignCounts()), w.prompts(t), site.Refusals()
		w.deny(true)
		lsLoginFails(t, e, []string{"PRESENCE_DENIED"}, "--session", "s2", "--alias", pkAlias)
		w.deny(false)
		if got := w.prompts(t) - prompts; got != 1 {
			t.Errorf("%d presence prompts for the denied sign-in, want 1", got)
		}
		if n := len(site.SignCounts()); n != counts {
			t.Fatalf("a denied sign-in reached the site: %d new sign-ins", n-counts)
		}

		prompts = w.prompts(t)
		w.click(t, "s2", "Sign in with a passkey")
		if w.waitText("s2", "Sign-in refused", 6*time.Second) {
			t.Logf("the page's own request was refused: %v", site.RefusalNames()[refusals:])
		} else {
			t.Logf("the page did not say \"Sign-in refused\" within 6 s (with no authenticator, Chromium lets the request wait); refusals %v", site.RefusalNames()[refusals:])
		}
		if got := w.prompts(t) - prompts; got != 0 {
			t.Errorf("the page's own request showed %d presence prompts: %q", got, presencetest.Prompts(t, personLog)[prompts:])
		}
		if n := len(site.SignCounts()); n != counts {
			t.Errorf("the page signed in without auth login: %d new sign-ins (counts %v)", n-counts, site.SignCounts())
		}
		if o := w.snapshot(t, "s2"); strings.Contains(o.URL, "/account") {
			t.Errorf("s2 reached %s without an approved sign-in", o.URL)
		}
		if p := w.visit(t, "s2", "/account"); !strings.HasPrefix(p.URL, site.URL("/login")) {
			t.Errorf("/account in s2 is %s, want a redirect to /login (no session cookie)", p.URL)
		}
	})

	// d. Cross-origin: a sign-in page that frames http://partner.localhost:PORT2 (allowed
	// publickey-credentials-get), which asks again and again for the credential under its
	// parent's RP ID, "localhost" (Chromium itself refuses that claim under localhost with
	// SecurityError, so a frame's outcome alone proves nothing of headless; under a registrable
	// domain a subdomain may make it). What headless does is checked: the host refuses before
	// anyone is asked, ORIGIN_MISMATCH; nobody is asked, the site has no new sign-in, and the
	// frame, which did load, is never answered.
	t.Run("cross-origin frame", func(t *testing.T) {
		counts, prompts := len(site.SignCounts()), w.prompts(t)
		xs := len(site.XOriginResults())
		w.visit(t, "s1", "/login-framed")
		pollUntil(10*time.Second, func() bool { return site.FrameLoads() > 0 })
		if site.FrameLoads() == 0 {
			t.Fatalf("the other origin's frame was never loaded: the check proves nothing")
		}
		time.Sleep(500 * time.Millisecond) // the frame is asking
		lsLoginFails(t, e, []string{"ORIGIN_MISMATCH"}, "--session", "s1", "--alias", pkAlias)
		time.Sleep(time.Second)
		if got := w.prompts(t) - prompts; got != 0 {
			t.Errorf("a sign-in on a page framing another origin showed %d presence prompts", got)
		}
		if res := site.XOriginResults()[xs:]; slices.Contains(res, "ok") {
			t.Errorf("the framed other origin got an assertion: %q", res)
		}
		if n := len(site.SignCounts()); n != counts {
			t.Errorf("%d sign-ins on the framed page", n-counts)
		}
	})

	// d1b. A frame added by the page during the ceremony (the click's handler adds one, then
	// asks 300 ms later): the host takes the key back at the frame, ORIGIN_MISMATCH, and the
	// site has no new sign-in.
	t.Run("frame added during the ceremony", func(t *testing.T) {
		site.FrameOnClick(true)
		defer site.FrameOnClick(false)
		counts := len(site.SignCounts())
		e.run("", "headless", "visit", site.URL("/logout"), "--session", "s1", "--json")
		w.visit(t, "s1", "/login")
		lsLoginFails(t, e, []string{"ORIGIN_MISMATCH"}, "--session", "s1", "--alias", pkAlias)
		time.Sleep(time.Second)
		if n := len(site.SignCounts()); n != counts {
			t.Errorf("%d sign-ins after the key was taken back at the new frame", n-counts)
		}
	})

	// d2. Overuse (red-team review of the passkey path, F1): the agent's own page at the
	// credential's sign-in path has the host stopped (SIGSTOP, as any process of the user may)
	// the moment the host clicks its passkey button, asks for three assertions while the key is
	// in Chromium's authenticator, and lets the host go on. The host cannot stop that; it must
	// not hide it:
	//   - auth login answers PASSKEY_OVERUSED (not success, not "removed unused");
	//   - the audit log has a passkey_overused record saying 3 times;
	//   - the site saw the three sign-ins, and the next approved sign-in signs a count above
	//     all of them (brokerd kept the highest: no clone warning).
	t.Run("overuse while the host is stopped", func(t *testing.T) {
		var st lsStatus
		e.ok(t, &st, "status")
		host := st.Host.PID
		site.Greedy(3, func(what string) {
			switch what {
			case "stop":
				syscall.Kill(host, syscall.SIGSTOP)
			case "cont":
				syscall.Kill(host, syscall.SIGCONT)
			}
		})
		defer func() { site.Greedy(0, nil); syscall.Kill(host, syscall.SIGCONT) }()
		counts := len(site.SignCounts())
		e.run("", "headless", "visit", site.URL("/logout"), "--session", "s1", "--json")
		w.visit(t, "s1", "/login")
		lsLoginFails(t, e, []string{"PASSKEY_OVERUSED"}, "--session", "s1", "--alias", pkAlias)
		got := site.SignCounts()[counts:]
		if len(got) != 3 {
			t.Errorf("the agent's page signed in %d times (%v), want the 3 it asked for: the test proves nothing", len(got), got)
		}
		r := e.run("", "headless", "audit", "list", "--json")
		if r.code != 0 || !strings.Contains(r.stdout, `"op":"passkey_overused"`) || !strings.Contains(r.stdout, "3 times") {
			t.Errorf("audit list has no passkey_overused record of 3 uses: %+v", r)
		}
		site.Greedy(0, nil)
		n := w.signIn(t, "s1")
		if max := slices.Max(site.SignCounts()[:len(site.SignCounts())-1]); n <= max {
			t.Errorf("the sign-in after the overuse signed %d, not above the overuse's %d", n, max)
		}
		if c := site.CloneWarnings(); c != 0 {
			t.Errorf("%d clone warnings after the overuse", c)
		}
	})

	// e. The sign count grows: a second sign-in in s1 signs a count > the first; after
	// 'headless stop' (host, Chromium and the brokerd headless started) and 'headless start',
	// a sign-in in a fresh session s3 signs a count > the second; go-webauthn never saw a count
	// that did not grow (CloneWarnings() == 0), and the site keeps the last count.
	t.Run("sign count across sign-ins and restarts", func(t *testing.T) {
		second := w.signIn(t, "s1")
		if second <= first {
			t.Errorf("second sign count %d, want > %d", second, first)
		}
		var st lsStatus
		e.ok(t, &st, "status")
		oldBroker, oldHost := e.brokerPID(), st.Host.PID
		e.ok(t, nil, "stop")
		e.stopBroker() // (nothing left to stop when headless started brokerd)
		e.start(t)
		e.ok(t, &st, "status")
		if b := e.brokerPID(); b == 0 || b == oldBroker || st.Host.PID == oldHost {
			t.Fatalf("after stop and start: brokerd %d (was %d), host %d (was %d): not restarted", b, oldBroker, st.Host.PID, oldHost)
		}
		e.ok(t, nil, "session", "create", "s3")
		third := w.signIn(t, "s3")
		if third <= second {
			t.Errorf("sign count after the restart %d, want > %d", third, second)
		}
		if n := site.CloneWarnings(); n != 0 {
			t.Errorf("go-webauthn flagged %d sign-ins as from a cloned authenticator (counts %v)", n, site.SignCounts())
		}
		if c := site.Credentials(); len(c) != 1 || c[0].SignCount != third {
			t.Errorf("the site's credential: %+v, want one with sign count %d", c, third)
		}
		t.Logf("sign counts: %v; refusals: %v", site.SignCounts(), site.RefusalNames())
	})

	// f. The leak sweep: no P-256 private key (pkKeyNeedles) in any output of any command of
	// the test, in anything the site received, in the command lines and environments of
	// brokerd, the host and Chromium, in any file of the world (runtime dir running and
	// stopped, config, data with the profile and the audit log, home), in brokerd's state dir,
	// in the pinentry's log, or in what Chromium left in /dev/shm and /tmp.
	sweep := &lsSweep{t: t, needles: needles, files: map[string]int{}, seen: map[string]bool{}}
	out := e.allOutput()
	if !strings.Contains(out, `"status":"authenticated"`) {
		t.Error("the CLI output holds no successful sign-in: the sweep proves little")
	}
	sweep.search("every CLI stdout, stderr and tty transcript", []byte(out))
	for i, b := range site.Bodies() {
		sweep.search("request body "+strconv.Itoa(i)+" the site received", b)
	}
	var st lsStatus
	e.ok(t, &st, "status")
	sweep.processes(e, st.Host.PID)
	sweep.tree("runtime dir (running)", e.runDir())
	for _, p := range lsNewSince(shmBefore, lsGlob("/dev/shm/*")) {
		sweep.tree("/dev/shm", p)
	}
	e.ok(t, nil, "stop")
	sweep.search("the output of the last stop", []byte(e.allOutput()[len(out):]))
	for _, d := range []string{"run", "config", "data", "home"} {
		sweep.tree(d+" dir (stopped)", filepath.Join(e.root, d))
	}
	if entries, _ := os.ReadDir(e.root); len(entries) != 4 {
		t.Errorf("the env root holds more than run, config, data and home (unswept): %v", entries)
	}
	// brokerd's state dir (the sign count book), shared with the other worlds of this uid.
	sweep.tree("brokerd state dir", filepath.Join(hardening.StateDir, strconv.Itoa(os.Getuid())))
	sweep.tree("pinentry log", filepath.Dir(personLog))
	for _, p := range lsNewSince(tmpBefore, lsChromiumTmp()) {
		sweep.tree("/tmp", p)
	}
	profile := filepath.Join(e.root, "data", "headless", "profile")
	if !lsPathUnder(sweep.seen, profile, "Preferences") || sweep.files["data dir (stopped)"] < 40 || sweep.procs < 5 {
		t.Errorf("too little searched: %v files, %d processes", sweep.files, sweep.procs)
	}
	t.Logf("passkey sweep: %v files, %d bytes, %d processes, %d needles", sweep.files, sweep.bytes, sweep.procs, len(sweep.needles))
}
