package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/wire"
)

// signInAt issues a challenge for origin on c and releases alias's password for a form
// sign-in at path; it returns the challenge, for learn_path.
func signInAt(t *testing.T, c *brokerapi.Client, origin, alias, path string, newPath bool) (string, []byte, error) {
	t.Helper()
	ctx := context.Background()
	ch, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: origin})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: alias, Session: "s", Document: "d",
		Path: path, Field: "Password", NewPath: newPath})
	return ch.Challenge, secret, err
}

// pathsOf is alias's LoginPaths as credentials.list shows them.
func pathsOf(t *testing.T, c *brokerapi.Client, session, origin, alias string) []string {
	t.Helper()
	creds, err := c.ListIn(context.Background(), session, origin)
	if err != nil {
		t.Fatal(err)
	}
	for _, cr := range creds {
		if strings.EqualFold(cr.Alias, alias) {
			return cr.LoginPaths
		}
	}
	t.Fatalf("alias %q is not listed: %+v", alias, creds)
	return nil
}

// lastRecord is the newest audit record.
func lastRecord(t *testing.T, f *fixture) auditwriter.Record {
	t.Helper()
	recs := f.audit.records()
	if len(recs) == 0 {
		t.Fatal("no audit record")
	}
	return recs[len(recs)-1]
}

// TestSignInPathIsLearnedAndKept: a credential's first form sign-in is asked with a first
// line that warns no sign-in page was set and names the page the agent chose, and learn_path
// after it learns that path; a form at another path of the origin is then LOGIN_PATH_CHANGED
// with nobody asked and nothing read, naming both paths; the known path goes on as before; the
// host's NewPath asks the person with the warning first, and the learn after it learns nothing
// (red-team round 31: an agent's look-alike, approved once, became a known path), so the next
// sign-in there is LOGIN_PATH_CHANGED again. The paths survive a new brokerd on the same state
// directory.
func TestSignInPathIsLearnedAndKept(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := f.client(t)
	const o, alias = "https://app.example", "staging-admin"

	ch, secret, err := signInAt(t, c, o, alias, "/login", false)
	if err != nil || string(secret) != canary {
		t.Fatalf("first sign-in: %v", err)
	}
	r := f.pres.last.Load()
	if d := r.Description(); !r.FirstLogin || !strings.HasPrefix(d, "NO SIGN-IN PAGE WAS SET FOR THIS CREDENTIAL: page \"/login\", which the agent chose, will be remembered as its sign-in page. Approve only if it is the site's own sign-in page.\nRelease the saved password") {
		t.Fatalf("first sign-in prompt:\n%s", d)
	}
	if got := pathsOf(t, c, "", o, alias); got != nil {
		t.Fatalf("paths before learn_path: %q", got)
	}
	res, err := c.LearnPath(ctx, ch)
	if err != nil || !res.Learned || !slices.Equal(res.LoginPaths, []string{"/login"}) {
		t.Fatalf("learn_path: %+v %v", res, err)
	}
	if rec := lastRecord(t, f); rec.Op != "learn_path" || rec.Decision != "ok" || rec.Origin != o || rec.Alias != alias || rec.Path != "/login" || rec.Account != "admin@example" {
		t.Fatalf("learn_path record %+v", rec)
	}
	if got := pathsOf(t, c, "", o, alias); !slices.Equal(got, []string{"/login"}) {
		t.Fatalf("listed paths %q", got)
	}

	// Another path of the origin: refused before anyone is asked.
	asked, reads := f.pres.asked.Load(), f.store.secrets.Load()
	_, secret, err = signInAt(t, c, o, alias, "/u/agent/signin", false)
	if code(err) != wire.CodeLoginPathChanged || secret != nil {
		t.Fatalf("sign-in at another path: %v, want LOGIN_PATH_CHANGED", err)
	}
	if f.pres.asked.Load() != asked || f.store.secrets.Load() != reads {
		t.Fatalf("asked %d more times, vault read %d more times", f.pres.asked.Load()-asked, f.store.secrets.Load()-reads)
	}
	if msg := err.Error(); msg != `the sign-in form is at "/u/agent/signin", not where alias "staging-admin" signed in before ("/login"); nothing was asked or released` ||
		!strings.Contains(wire.From(err).Hint, "--new-login-path") {
		t.Fatalf("message %q, hint %q", msg, wire.From(err).Hint)
	}
	if rec := lastRecord(t, f); rec.Op != "release" || rec.Decision != "deny" || rec.Code != string(wire.CodeLoginPathChanged) ||
		rec.Path != "/u/agent/signin" || !strings.Contains(rec.Detail, `"/login"`) {
		t.Fatalf("refusal record %+v", rec)
	}

	// The known path: as before, no warning, and learn_path learns nothing.
	ch, _, err = signInAt(t, c, o, alias, "/login", false)
	if err != nil {
		t.Fatal(err)
	}
	if r := f.pres.last.Load(); r.FirstLogin || r.KnownPaths != nil {
		t.Fatalf("a sign-in at the known path was asked with %+v", r)
	}
	if res, err := c.LearnPath(ctx, ch); err != nil || res.Learned || !slices.Equal(res.LoginPaths, []string{"/login"}) {
		t.Fatalf("learn_path at the known path: %+v %v", res, err)
	}

	// The host asks the person to allow the new path: the warning is the first line.
	ch, secret, err = signInAt(t, c, o, alias, "/u/agent/signin", true)
	if err != nil || string(secret) != canary {
		t.Fatalf("sign-in at a new path the person allowed: %v", err)
	}
	d := f.pres.last.Load().Description()
	first, rest, _ := strings.Cut(d, "\n")
	if first != `NOT WHERE YOU SIGNED IN BEFORE: this sign-in form is at "/u/agent/signin"; alias "staging-admin" signed in at "/login" before.` ||
		!strings.HasPrefix(rest, "Release the saved password") || strings.Contains(d, "NO SIGN-IN PAGE") {
		t.Fatalf("new-path prompt:\n%s", d)
	}
	if rec := lastRecord(t, f); rec.Decision != "allow" || !strings.Contains(rec.Detail, `"/login"`) {
		t.Fatalf("the allowed new path's record %+v", rec)
	}
	if res, err := c.LearnPath(ctx, ch); err != nil || res.Learned || !slices.Equal(res.LoginPaths, []string{"/login"}) {
		t.Fatalf("learn_path after the new path: %+v %v", res, err)
	}
	if rec := lastRecord(t, f); rec.Op != "learn_path" || !strings.Contains(rec.Detail, "a new path is never learned") {
		t.Fatalf("learn_path record %+v", rec)
	}
	if _, _, err := signInAt(t, c, o, alias, "/u/agent/signin", false); code(err) != wire.CodeLoginPathChanged {
		t.Fatalf("the allowed new path again without new_path: %v, want LOGIN_PATH_CHANGED", err)
	}

	// brokerd's file: 0600, and read back as it was by a new LoginPaths on the directory.
	fi, err := os.Stat(f.srv.Paths.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("login-paths.json: %v %v", fi.Mode(), err)
	}
	again, err := OpenLoginPaths(filepath.Dir(f.srv.Paths.dir), os.Getuid())
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := knownPaths(again, o, "STAGING-ADMIN"); err != nil || !slices.Equal(got, []string{"/login"}) {
		t.Fatalf("read back: %q %v", got, err)
	}
}

// TestLearnPathIsTheHostsAlone: learn_path is refused from anything but the genuine host
// (PEER_NOT_HOST), for a challenge that released no form sign-in to that host process
// (CHALLENGE_UNKNOWN: unknown, released to a host that was replaced since, a denied release, a
// Basic answer), a second time (CHALLENGE_USED), and after ten minutes (CHALLENGE_EXPIRED);
// nothing is learned by any of them. Any connection of the host that released may report it
// (the host releases on a connection of its own and reports on its long-lived one).
func TestLearnPathIsTheHostsAlone(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.srv.Now = f.clock.Now
	c := f.client(t)
	const o, alias = "https://app.example", "staging-admin"
	ch, _, err := signInAt(t, c, o, alias, "/login", false)
	if err != nil {
		t.Fatal(err)
	}
	notHost := brokerapi.NewClient(f.connAs(t, Peer{PID: 778, Exe: "/usr/bin/agent"}))
	if _, err := notHost.LearnPath(ctx, ch); code(err) != wire.CodePeerNotHost {
		t.Fatalf("learn_path from another process: %v, want PEER_NOT_HOST", err)
	}
	if rec := lastRecord(t, f); rec.Op != "learn_path" || rec.Decision != "error" || rec.Code != string(wire.CodePeerNotHost) || rec.PID != 778 {
		t.Fatalf("the refusal's record %+v", rec)
	}
	if _, err := c.LearnPath(ctx, "AAAAAAAAAAAAAAAAAAAAAAAAAA"); code(err) != wire.CodeChallengeUnk {
		t.Fatalf("learn_path of an unknown challenge: %v", err)
	}
	// Another genuine host (brokerd started a new one): not the process it was released to.
	f.hosts.pid = 779
	if _, err := brokerapi.NewClient(f.connOf(t, 779)).LearnPath(ctx, ch); code(err) != wire.CodeChallengeUnk {
		t.Fatalf("learn_path from a later host: %v, want CHALLENGE_UNKNOWN", err)
	}
	f.hosts.pid = 777
	if got := pathsOf(t, c, "", o, alias); got != nil {
		t.Fatalf("learned by a refused learn_path: %q", got)
	}
	other := f.client(t) // the host, on another connection
	if res, err := other.LearnPath(ctx, ch); err != nil || !res.Learned {
		t.Fatalf("learn_path on another connection of the host: %+v %v", res, err)
	}
	if _, err := c.LearnPath(ctx, ch); code(err) != wire.CodeChallengeUsed {
		t.Fatalf("second learn_path: %v, want CHALLENGE_USED", err)
	}
	// A sign-in released to a host that has since been replaced is forgotten.
	f.srv.Paths = mustPaths(t)
	old, _, err := signInAt(t, c, o, alias, "/login", false)
	if err != nil {
		t.Fatal(err)
	}
	f.hosts.pid = 779
	if _, _, err := signInAt(t, brokerapi.NewClient(f.connOf(t, 779)), o, alias, "/login", false); err != nil {
		t.Fatal(err)
	}
	f.hosts.pid = 777
	if _, err := c.LearnPath(ctx, old); code(err) != wire.CodeChallengeUnk {
		t.Fatalf("learn_path of a replaced host's sign-in: %v, want CHALLENGE_UNKNOWN", err)
	}

	// Releases that are not an allowed form sign-in leave nothing to learn from.
	f.pres.decide = func(context.Context, presence.Request) error { return presence.ErrDenied }
	denied, _, err := signInAt(t, c, o, alias, "/login", false)
	if code(err) != wire.CodePresenceDenied {
		t.Fatal(err)
	}
	f.pres.decide = nil
	basic, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: o})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: basic.Challenge, Alias: alias, Session: "s", Document: "d", Purpose: brokerapi.PurposeBasic, Path: "/other?x=1"}); err != nil {
		t.Fatal(err)
	}
	for name, id := range map[string]string{"denied": denied, "basic": basic.Challenge} {
		if _, err := c.LearnPath(ctx, id); code(err) != wire.CodeChallengeUnk {
			t.Fatalf("learn_path of a %s release: %v, want CHALLENGE_UNKNOWN", name, err)
		}
	}

	// Ten minutes on, the sign-in is forgotten for learning.
	f.pres.decide = nil
	f.srv.Paths = mustPaths(t) // a credential without paths again
	late, _, err := signInAt(t, c, o, alias, "/login", false)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Add(signInTTL)
	if _, err := c.LearnPath(ctx, late); code(err) != wire.CodeChallengeExp {
		t.Fatalf("learn_path after %v: %v, want CHALLENGE_EXPIRED", signInTTL, err)
	}
	if got, _, _ := knownPaths(f.srv.Paths, o, alias); got != nil {
		t.Fatalf("learned: %q", got)
	}
}

func mustPaths(t *testing.T) *LoginPaths {
	t.Helper()
	lp, err := OpenLoginPaths(t.TempDir(), os.Getuid())
	if err != nil {
		t.Fatal(err)
	}
	return lp
}

// TestEnrolledPaths: the paths set at enrolment are checked (INVALID_ARGUMENT naming the bad
// one, nothing saved), deduplicated and listed; a sign-in elsewhere is refused; removing the
// credential drops them, and the alias added again starts without any.
func TestEnrolledPaths(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := f.client(t)
	const o = "https://app.example"
	for name, tc := range map[string]struct {
		paths []string
		want  string
	}{
		"relative":     {[]string{"/ok", "login"}, `"login"`},
		"query":        {[]string{"/login?next=/"}, `"/login?next=/"`},
		"fragment":     {[]string{"/login#x"}, `"/login#x"`},
		"space":        {[]string{"/sign in"}, `"/sign in"`},
		"control":      {[]string{"/log\x1bin"}, `"/log?in"`},
		"long":         {[]string{"/" + strings.Repeat("a", brokerapi.MaxPath)}, "longer than 512 bytes"},
		"too many":     {[]string{"/1", "/2", "/3", "/4", "/5", "/6", "/7", "/8", "/9"}, "at most 8"},
		"empty string": {[]string{""}, `""`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.AddCredential(ctx, brokerapi.AddParams{Origin: o, Account: "e@x", Alias: "enrolled", LoginPaths: tc.paths, Secret: []byte("pw")})
			if code(err) != wire.CodeInvalidArgument || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("add with %q: %v, want INVALID_ARGUMENT naming %s", tc.paths, err, tc.want)
			}
			if recs, _ := f.store.List(ctx, o); len(recs) != 1 {
				t.Fatalf("saved anyway: %+v", recs)
			}
		})
	}
	cred, err := c.AddCredential(ctx, brokerapi.AddParams{Origin: o, Account: "e@x", Alias: "Enrolled", LoginPaths: []string{"/login", "/sso/start", "/login"}, Secret: []byte("pw")})
	if err != nil || !slices.Equal(cred.LoginPaths, []string{"/login", "/sso/start"}) {
		t.Fatalf("add: %+v %v", cred, err)
	}
	if got := pathsOf(t, c, "", o, "enrolled"); !slices.Equal(got, []string{"/login", "/sso/start"}) {
		t.Fatalf("listed %q", got)
	}
	if _, _, err := signInAt(t, c, o, "enrolled", "/sso/start", false); err != nil {
		t.Fatalf("sign-in at a set path: %v", err)
	}
	if r := f.pres.last.Load(); r.FirstLogin {
		t.Fatal("a credential with set paths was asked as a first sign-in")
	}
	if _, _, err := signInAt(t, c, o, "enrolled", "/", false); code(err) != wire.CodeLoginPathChanged {
		t.Fatalf("sign-in at the root: %v", err)
	}
	if _, err := c.AddCredential(ctx, brokerapi.AddParams{Origin: o, Account: "e2@x", Alias: "ENROLLED", LoginPaths: []string{"/x"}, Secret: []byte("pw")}); code(err) != wire.CodeAliasExists {
		t.Fatalf("a second add of the alias: %v", err)
	}
	if got := pathsOf(t, c, "", o, "enrolled"); !slices.Equal(got, []string{"/login", "/sso/start"}) {
		t.Fatalf("a refused add changed the paths: %q", got)
	}
	if err := c.Remove(ctx, o, "ENROLLED"); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := knownPaths(f.srv.Paths, o, "enrolled"); got != nil {
		t.Fatalf("the removed credential's paths are kept: %q", got)
	}
	if _, err := c.Add(ctx, o, "e@x", "enrolled", []byte("pw")); err != nil {
		t.Fatal(err)
	}
	if got := pathsOf(t, c, "", o, "enrolled"); got != nil {
		t.Fatalf("added again, it has paths %q", got)
	}
	if _, _, err := signInAt(t, c, o, "enrolled", "/anywhere", false); err != nil || !f.pres.last.Load().FirstLogin {
		t.Fatalf("the new credential's first sign-in: %v", err)
	}
}

// TestNewPathIsNeverLearned: a sign-in the person allowed at a new path learns nothing,
// whether the credential's paths were set at enrolment (all eight, or fewer) or learned by its
// first sign-in, and the record says why; the credential keeps at most MaxLoginPaths.
func TestNewPathIsNeverLearned(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := f.client(t)
	const o = "https://app.example"
	for _, set := range [][]string{{"/s1", "/s2", "/s3", "/s4", "/s5", "/s6", "/s7"}, {"/1", "/2", "/3", "/4", "/5", "/6", "/7", "/8"}} {
		alias := fmt.Sprintf("set%d", len(set))
		if _, err := c.AddCredential(ctx, brokerapi.AddParams{Origin: o, Account: "b@x", Alias: alias, LoginPaths: set, Secret: []byte("pw")}); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/l1", "/l2"} {
			ch, _, err := signInAt(t, c, o, alias, path, true)
			if err != nil {
				t.Fatal(err)
			}
			if res, err := c.LearnPath(ctx, ch); err != nil || res.Learned || !slices.Equal(res.LoginPaths, set) {
				t.Fatalf("%s at %s: %+v %v, want nothing learned", alias, path, res, err)
			}
			if rec := lastRecord(t, f); rec.Op != "learn_path" || !strings.Contains(rec.Detail, "a new path is never learned") {
				t.Fatalf("record %+v", rec)
			}
		}
		if got := pathsOf(t, c, "", o, alias); !slices.Equal(got, set) {
			t.Fatalf("%s paths %q, want %q", alias, got, set)
		}
	}
}

// TestSignInPathChecks: only a form sign-in is held to the paths; its page path must be one
// (an empty one is the root); new_path is refused on any other purpose.
func TestSignInPathChecks(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := f.client(t)
	const o, alias = "https://app.example", "staging-admin"
	if err := setPaths(f.srv.Paths, pathEntry{Origin: o, Alias: alias, Set: []string{"/login"}}); err != nil {
		t.Fatal(err)
	}
	release := func(p brokerapi.ReleaseParams) error {
		ch, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: o})
		if err != nil {
			t.Fatal(err)
		}
		p.Challenge, p.Alias, p.Session, p.Document = ch.Challenge, alias, "s", "d"
		_, _, err = c.Release(ctx, p)
		return err
	}
	for name, tc := range map[string]struct {
		p    brokerapi.ReleaseParams
		want wire.Code
	}{
		"verify elsewhere":     {brokerapi.ReleaseParams{Purpose: brokerapi.PurposeVerify, Path: "/other"}, ""},
		"basic elsewhere":      {brokerapi.ReleaseParams{Purpose: brokerapi.PurposeBasic, Path: "/api?x=1"}, ""},
		"empty path is root":   {brokerapi.ReleaseParams{}, wire.CodeLoginPathChanged},
		"relative page path":   {brokerapi.ReleaseParams{Path: "login"}, wire.CodeInvalidArgument},
		"page path with query": {brokerapi.ReleaseParams{Path: "/login?x"}, wire.CodeInvalidArgument},
		"new path on basic":    {brokerapi.ReleaseParams{Purpose: brokerapi.PurposeBasic, Path: "/x", NewPath: true}, wire.CodeInvalidArgument},
		"new path on verify":   {brokerapi.ReleaseParams{Purpose: brokerapi.PurposeVerify, NewPath: true}, wire.CodeInvalidArgument},
	} {
		t.Run(name, func(t *testing.T) {
			asked := f.pres.asked.Load()
			err := release(tc.p)
			if code(err) != tc.want && !(tc.want == "" && err == nil) {
				t.Fatalf("release %+v: %v, want %q", tc.p, err, tc.want)
			}
			if tc.want != "" && f.pres.asked.Load() != asked {
				t.Fatal("presence asked")
			}
			if tc.p.Purpose == brokerapi.PurposeBasic && tc.want == "" {
				if d := f.pres.last.Load().Description(); !strings.Contains(d, "The Authorization header goes with this session's requests to the protection space of \"/api?x=1\"") {
					t.Fatalf("basic prompt:\n%s", d)
				}
			}
		})
	}
}

// TestIsolatedSessionPaths: an isolated session's credentials learn their paths in memory, with
// their store: the vault's alias of the same name is untouched, and a closed and re-opened
// session starts without them.
func TestIsolatedSessionPaths(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	hostc, _ := isoFixture(t, f)
	const o = "https://app.example"
	issue := func() string {
		ch, err := hostc.Challenge(ctx, brokerapi.ChallengeParams{Session: "iso", Document: "d", Origin: o, Isolated: true})
		if err != nil {
			t.Fatal(err)
		}
		return ch.Challenge
	}
	ch := issue()
	if _, _, err := hostc.Release(ctx, brokerapi.ReleaseParams{Challenge: ch, Alias: "iso-admin", Session: "iso", Document: "d", Path: "/login"}); err != nil {
		t.Fatal(err)
	}
	if res, err := hostc.LearnPath(ctx, ch); err != nil || !res.Learned {
		t.Fatalf("learn_path: %+v %v", res, err)
	}
	if got := pathsOf(t, hostc, "iso", o, "iso-admin"); !slices.Equal(got, []string{"/login"}) {
		t.Fatalf("isolated paths %q", got)
	}
	if es, _ := f.srv.Paths.entries(nil); len(es) != 0 {
		t.Fatalf("the vault's file holds an isolated credential: %+v", es)
	}
	ch = issue()
	if _, _, err := hostc.Release(ctx, brokerapi.ReleaseParams{Challenge: ch, Alias: "iso-admin", Session: "iso", Document: "d", Path: "/u/agent/signin"}); code(err) != wire.CodeLoginPathChanged {
		t.Fatalf("isolated sign-in elsewhere: %v", err)
	}
	st := f.srv.isolated("iso")
	if err := hostc.CloseSession(ctx, "iso"); err != nil {
		t.Fatal(err)
	}
	if es, _ := st.paths.entries(nil); len(es) != 0 {
		t.Fatalf("a closed session's paths are kept: %+v", es)
	}
}

// TestOldLearnedPathsAreNotKnown: paths the rule before red-team round 31 learned from a
// sign-in the person allowed at a new path (a learned path beside the person's, or after the
// first learned one) are not known: a sign-in there is LOGIN_PATH_CHANGED, nobody asked.
func TestOldLearnedPathsAreNotKnown(t *testing.T) {
	f := newFixture(t)
	c := f.client(t)
	const o, alias = "https://app.example", "staging-admin"
	for _, e := range []pathEntry{
		{Origin: o, Alias: alias, Set: []string{"/login"}, Learned: []string{"/u/agent/fake"}},
		{Origin: o, Alias: alias, Learned: []string{"/login", "/u/agent/fake"}},
	} {
		// As the old rule left the file (setPaths keeps only entries of the person's).
		if err := f.srv.Paths.update(func([]pathEntry) ([]pathEntry, error) { return []pathEntry{e}, nil }); err != nil {
			t.Fatal(err)
		}
		if got := pathsOf(t, c, "", o, alias); !slices.Equal(got, []string{"/login"}) {
			t.Fatalf("%+v: listed paths %q, want only /login", e, got)
		}
		before := f.pres.asked.Load()
		if _, _, err := signInAt(t, c, o, alias, "/u/agent/fake", false); code(err) != wire.CodeLoginPathChanged {
			t.Fatalf("%+v: a sign-in at the old learned path: %v, want LOGIN_PATH_CHANGED", e, err)
		}
		if f.pres.asked.Load() != before {
			t.Fatalf("%+v: the person was asked", e)
		}
		if _, _, err := signInAt(t, c, o, alias, "/login", false); err != nil {
			t.Fatalf("%+v: the known path: %v", e, err)
		}
	}
}

// TestLoginPathsTwoBrokerds: two brokerds of one user (two runtime dirs) keep the same file;
// their changes, made at once, are all kept (each read, change and write is one step under
// the file's lock).
func TestLoginPathsTwoBrokerds(t *testing.T) {
	root := t.TempDir()
	books := make([]*LoginPaths, 2)
	for i := range books {
		lp, err := OpenLoginPaths(root, os.Getuid())
		if err != nil {
			t.Fatal(err)
		}
		books[i] = lp
	}
	const each = 25
	errs := make(chan error, 2*each)
	done := make(chan struct{})
	for i, lp := range books {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := range each {
				_, err := learnPath(lp, "https://example.test", fmt.Sprintf("a%d-%d", i, j), "acct", "/login", false)
				errs <- err
			}
		}()
	}
	<-done
	<-done
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	es, err := books[0].entries(nil)
	if err != nil || len(es) != 2*each {
		t.Fatalf("%d entries after %d learned by two brokerds at once (%v), want all of them", len(es), 2*each, err)
	}
}

// TestLoginPathsLeftoversRemoved: a brokerd killed while it wrote the file left its temporary
// file in the state directory; the next change of the book, under the file's lock, removes it
// (and only it: the book and its lock stay).
func TestLoginPathsLeftoversRemoved(t *testing.T) {
	root := t.TempDir()
	lp, err := OpenLoginPaths(root, os.Getuid())
	if err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(filepath.Dir(lp.Path()), "."+filepath.Base(lp.Path())+".tmp-123456")
	if err := os.WriteFile(torn, []byte(`{"version":1,"credentials":[`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := learnPath(lp, "https://example.test", "a", "acct", "/login", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(torn); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the torn write's file is still there: %v", err)
	}
	if es, err := lp.entries(nil); err != nil || len(es) != 1 {
		t.Errorf("the book after: %+v, %v", es, err)
	}
}

// TestAlsoOrigins: the other origins the person names at enrolment are kept with the
// credential's sign-in paths (brokerd's own file), listed, and checked: canonical, not the
// credential's own, at most brokerapi.MaxAlsoOrigins.
func TestAlsoOrigins(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := f.client(t)
	const o = "https://signin.example.com"
	cred, err := c.AddCredential(ctx, brokerapi.AddParams{Origin: o, Account: "e@x", Alias: "ebay",
		AlsoOrigins: []string{"https://www.example.com", "https://www.example.com"}, Secret: []byte("pw")})
	if err != nil || !slices.Equal(cred.AlsoOrigins, []string{"https://www.example.com"}) {
		t.Fatalf("add: %+v %v", cred, err)
	}
	list, err := c.List(ctx, o)
	if err != nil || len(list) != 1 || !slices.Equal(list[0].AlsoOrigins, []string{"https://www.example.com"}) {
		t.Fatalf("list: %+v %v", list, err)
	}
	if _, also, err := knownPaths(f.srv.Paths, o, "EBAY"); err != nil || !slices.Equal(also, []string{"https://www.example.com"}) {
		t.Fatalf("known: %v %v", also, err)
	}
	for name, also := range map[string][]string{
		"own origin":    {o},
		"not canonical": {"https://WWW.example.com/"},
		"not an origin": {"ftp://x"},
		"too many":      {"https://a1.x", "https://a2.x", "https://a3.x", "https://a4.x", "https://a5.x", "https://a6.x", "https://a7.x", "https://a8.x", "https://a9.x"},
	} {
		if _, err := c.AddCredential(ctx, brokerapi.AddParams{Origin: o, Account: "e@x", Alias: "other", AlsoOrigins: also, Secret: []byte("pw")}); code(err) != wire.CodeInvalidArgument && code(err) != wire.CodeInvalidOrigin {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", name, err)
		}
	}
}
