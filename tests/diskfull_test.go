//go:build linux

package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/test/realtest"
)

// Disk-full faults: the audit log, the credentials index and the durable profile each on a
// small tmpfs that the test fills (a filler file written until ENOSPC, so not one free block is
// left), with the real brokerd, host, Chromium and gnome-keyring. Each test checks the exact
// typed error, that nothing was released or written half-way, that the daemons stay up, and
// that everything works again once the filler is removed.

// needMount skips unless the test can mount a tmpfs (root; CI runs as root).
func needMount(t *testing.T) {
	t.Helper()
	realtest.NeedRoot(t, "mount a small tmpfs")
}

// stopAll stops the env's host and brokerd (before their files are unmounted).
func (e *env) stopAll() {
	if _, err := os.Stat(filepath.Join(e.runDir(), "control.sock")); err == nil {
		e.run("", "headless", "stop", "--json")
	}
	e.stopBroker()
}

// unmountAtCleanup unmounts dir when t ends, after stopping the env's processes (they hold
// files there). Cleanups run last-registered first, so this runs before newEnv's.
func (e *env) unmountAtCleanup(t *testing.T, dir string) {
	t.Cleanup(func() {
		e.stopAll()
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
			syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
}

// tmpfs mounts a tmpfs of size (mount's size= syntax) at dir, created 0700 if missing.
func (e *env) tmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Fatalf("mount a tmpfs at %s: %v", dir, err)
	}
	e.unmountAtCleanup(t, dir)
}

// bindFile makes the file dst (created empty, 0600, if missing) show the file src (likewise).
func (e *env) bindFile(t *testing.T, src, dst string) {
	t.Helper()
	for _, p := range []string{src, dst} {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND, ""); err != nil {
		t.Fatalf("bind %s on %s: %v", src, dst, err)
	}
	e.unmountAtCleanup(t, dst)
}

// fillFS writes a filler file in dir until its filesystem has no free block left, and returns
// its path (remove it to free the space).
func fillFS(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for n := len(buf); n > 0; n /= 2 {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill %s: %v", dir, err)
				}
				break
			}
		}
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Bavail != 0 {
		t.Fatalf("statfs %s after filling: %d blocks free, %v", dir, st.Bavail, err)
	}
	return p
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// auditFile reads the audit log and checks that it is whole: every line a canonical record,
// the last one ended by its newline, and 'headless audit verify' content with the chain. It
// returns the lines.
func (e *env) auditFile(t *testing.T, p string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("the audit log ends with an incomplete record: …%q", b[max(0, len(b)-80):])
	}
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	for i, l := range lines {
		if _, err := audit.Parse(l); err != nil {
			t.Fatalf("audit line %d: %v: %q", i+1, err, l)
		}
	}
	var v struct {
		Intact  bool `json:"intact"`
		Records int  `json:"records"`
	}
	e.ok(t, &v, "audit", "verify")
	if !v.Intact || v.Records != len(lines) {
		t.Fatalf("audit verify: %+v, want intact with %d records", v, len(lines))
	}
	return lines
}

// wantFailure checks that r failed with code, a message containing msg, and a hint.
func wantFailure(t *testing.T, what string, r result, code, msg string) {
	t.Helper()
	var je jsonErr
	if r.code == 0 || json.Unmarshal([]byte(r.stdout), &je) != nil || je.Error.Code != code || je.Error.Hint == "" ||
		!strings.Contains(je.Error.Message, msg) {
		t.Fatalf("%s: %+v; want %s naming %q, with a hint", what, r, code, msg)
	}
}

func (e *env) addTTY(origin, alias, account, password string) result {
	return e.runTTY([]step{{"Password for", password + "\n"}, {"Repeat the password", password + "\n"}},
		"headless", "credentials", "add", "--origin", origin, "--account", account, "--alias", alias, "--json")
}

// benchLogin visits the bench site's login page and answers its challenge with alias.
func (e *env) benchLogin(t *testing.T, srv *benchSite, alias string) result {
	t.Helper()
	var p pageJSON
	e.ok(t, &p, "visit", srv.URL+"/login")
	if p.AuthRequired == nil || !slices.Contains(p.AuthRequired.Aliases, alias) {
		t.Fatalf("visit /login: %+v", p)
	}
	return e.run("", "headless", "auth", "login", "--challenge", p.AuthRequired.Challenge, "--alias", alias, "--json")
}

// wantReleaseThenLearn checks that the newest two records of the audit log are a form
// sign-in's: the release of alias, then the host's report that it ended authenticated
// (learn_path), and returns the release's line.
func wantReleaseThenLearn(t *testing.T, lines [][]byte, alias string) []byte {
	t.Helper()
	if len(lines) < 2 {
		t.Fatalf("%d audit records, want a release and its learn_path", len(lines))
	}
	rel, _ := audit.Parse(lines[len(lines)-2])
	learn, _ := audit.Parse(lines[len(lines)-1])
	if rel.Op != "release" || rel.Decision != "allow" || rel.Alias != alias || learn.Op != "learn_path" || learn.Decision != "ok" || learn.Alias != alias {
		t.Fatalf("newest records %+v, %+v; want the release of %s and its learn_path", rel, learn, alias)
	}
	return lines[len(lines)-2]
}

// TestDiskFullAuditLog: the audit log alone is on a small tmpfs (bind-mounted over
// audit.jsonl; the rest of the data dir keeps its space), filled to the last block, and the
// space left for the log (what brokerd reserved past its end, the last page's slack) is used
// up by refused adds (each a record shorter than a
// release's) until one no longer fits. A new add is then AUDIT_UNAVAILABLE and not saved, and
// an alias login fails AUDIT_UNAVAILABLE naming the full disk before anyone is asked (brokerd could not reserve the record's space): no prompt,
// the site receives nothing, the log holds its prior bytes (plus at most the whole refusal)
// and verifies, brokerd and the host keep their pids, and the password is on no file and in
// no output. With the filler removed the next login works and is audited.
func TestDiskFullAuditLog(t *testing.T) {
	parallel(t)
	needMount(t)
	e := newEnv(t, envOptions{})
	program, plog := presencetest.FakePinentry(t, "approve")
	e.pinentryConfig(program)
	pw := newCanary()
	srv := newBenchSite(t, benchAccount, pw)
	data := filepath.Join(e.root, "data", "headless")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	fsDir := filepath.Join(e.root, "auditfs")
	e.tmpfs(t, fsDir, "256k")
	logFile := filepath.Join(data, "audit.jsonl")
	e.bindFile(t, filepath.Join(fsDir, "audit.jsonl"), logFile)

	e.start(t)
	if r := e.addTTY(srv.URL, "bench", benchAccount, pw); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	if r := e.benchLogin(t, srv, "bench"); r.code != 0 || !strings.Contains(r.stdout, `"status":"authenticated"`) {
		t.Fatalf("login before the disk is full: %+v", r)
	}
	lines := e.auditFile(t, logFile)
	release := wantReleaseThenLearn(t, lines, "bench")
	allowLen := len(release) + 1
	// A refused add (ALIAS_EXISTS) is a record too: measure one.
	size := fileSize(t, logFile)
	if r := e.addTTY(srv.URL, "bench", benchAccount, newCanary()); r.code == 0 || errCode(t, r) != "ALIAS_EXISTS" {
		t.Fatalf("duplicate add: %+v", r)
	}
	dupLen := int(fileSize(t, logFile) - size)
	if dupLen <= 0 || dupLen >= allowLen {
		t.Fatalf("set-up: a refused add's record is %d bytes, a release's %d; the slack left must be too small for the release", dupLen, allowLen)
	}
	var st profStatus
	e.profRun(t, &st, "status")
	brokerPID, hostPID := e.brokerPID(), st.Host.PID

	filler := fillFS(t, fsDir)
	// Refused adds are records too: first ALIAS_EXISTS, then (once the space brokerd can
	// reserve runs out) AUDIT_UNAVAILABLE, each recorded while it fits.
	for i := 0; ; i++ {
		size := fileSize(t, logFile)
		if r := e.addTTY(srv.URL, "bench", benchAccount, newCanary()); r.code == 0 || !slices.Contains([]string{"ALIAS_EXISTS", "AUDIT_UNAVAILABLE"}, errCode(t, r)) {
			t.Fatalf("duplicate add on a full disk: %+v", r)
		}
		if fileSize(t, logFile) == size {
			// This record did not fit: fewer than dupLen bytes are left.
			t.Logf("records: a release's %d bytes, a refused add's %d; %d refused adds fitted on the full disk", allowLen, dupLen, i)
			break
		}
		// The space brokerd reserved past the log's end for the last release (16 KiB), and
		// the last page's slack.
		if i > (16<<10+4096)/dupLen+1 {
			t.Fatalf("%d records fitted in a full tmpfs", i)
		}
	}
	prior, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	e.auditFile(t, logFile)

	// A new credential is refused before the vault is written: it could not be audited.
	r := e.addTTY(srv.URL, "unaudited", benchAccount, newCanary())
	wantFailure(t, "add with the audit log's disk full", r, "AUDIT_UNAVAILABLE", "nothing was saved")
	if got := aliasesIn(t, e, "--origin", srv.URL); !slices.Equal(got, []string{"bench"}) {
		t.Fatalf("aliases after an add the audit log had no space for: %v", got)
	}

	prompts := len(presencetest.Prompts(t, plog))
	r = e.benchLogin(t, srv, "bench")
	wantFailure(t, "login with the audit log's disk full", r, "AUDIT_UNAVAILABLE", "no space left on device")
	if a, f := srv.accepted.Load(), srv.refused.Load(); a != 1 || f != 0 {
		t.Fatalf("the site saw %d accepted and %d refused sign-ins, want the 1 from before the disk was full", a, f)
	}
	after, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	// The log holds its prior bytes, plus at most the refusals themselves when they fitted where
	// a reservation did not: never an allow, never a part of a record.
	if !bytes.HasPrefix(after, prior) {
		t.Fatalf("the audit log's prior bytes changed on a full disk: %d bytes, then %d", len(prior), len(after))
	}
	for _, l := range bytes.Split(bytes.TrimSuffix(after[len(prior):], []byte("\n")), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if rec, err := audit.Parse(l); err != nil || rec.Decision == "allow" || rec.Decision == "ok" || rec.Code != "AUDIT_UNAVAILABLE" {
			t.Fatalf("written on a full disk: %q (%v), want nothing or the refusal", l, err)
		}
	}
	e.auditFile(t, logFile)
	if n := len(presencetest.Prompts(t, plog)) - prompts; n != 0 {
		t.Fatalf("%d prompts for a login the audit log had no space for; want none", n)
	}
	e.profRun(t, &st, "status")
	if e.brokerPID() != brokerPID || st.Host.PID != hostPID {
		t.Fatalf("brokerd %d → %d, host %d → %d: a daemon restarted on a full disk", brokerPID, e.brokerPID(), hostPID, st.Host.PID)
	}

	// A profile clear the audit log has no space for is refused before anything is closed or
	// removed, with the host running and with it stopped (issue 30: both went ahead
	// unaudited). The session and the profile's files are as they were.
	e.ok(t, nil, "session", "create", "kept")
	marker := filepath.Join(e.profileDir(), "Default")
	before, err := os.Stat(marker)
	if err != nil {
		t.Fatal(err)
	}
	r = e.run("", "headless", "profile", "clear", "--yes", "--json")
	wantFailure(t, "profile clear (host running) with the audit log's disk full", r, "AUDIT_UNAVAILABLE", "nothing was cleared")
	if r := e.run("", "headless", "session", "list", "--json"); !strings.Contains(r.stdout, `"name":"kept"`) {
		t.Fatalf("a refused clear closed the sessions: %+v", r)
	}
	e.ok(t, nil, "stop")
	r = e.run("", "headless", "profile", "clear", "--yes", "--json")
	wantFailure(t, "profile clear (host stopped) with the audit log's disk full", r, "AUDIT_UNAVAILABLE", "nothing was cleared")
	if after, err := os.Stat(marker); err != nil || !os.SameFile(before, after) {
		t.Fatalf("a refused clear changed the profile: %v", err)
	}
	e.start(t)
	brokerPID = e.brokerPID() // 'stop' may have let it go with the host

	// Space again: the next login works and is the newest record.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if r := e.benchLogin(t, srv, "bench"); r.code != 0 || !strings.Contains(r.stdout, `"status":"authenticated"`) {
		t.Fatalf("login once space is freed: %+v", r)
	}
	if a := srv.accepted.Load(); a != 2 {
		t.Fatalf("the site accepted %d sign-ins, want 2", a)
	}
	wantReleaseThenLearn(t, e.auditFile(t, logFile), "bench")
	if e.brokerPID() != brokerPID {
		t.Fatal("brokerd restarted")
	}
	sweep := &lsSweep{t: t, needles: lsNeedles("password", pw), files: map[string]int{}, seen: map[string]bool{}}
	sweep.tree("root", e.root)
	if out := e.allOutput(); strings.Contains(out, pw) {
		t.Error("the password is in an output")
	}
}

// TestDiskFullCredentialsIndex: the data dir (the credentials index's) is a small tmpfs, filled
// to the last block; the audit log keeps its space (bind-mounted from the disk), so only the
// index is short of it. With the secret-service provider (the keyring's own unlock prompt,
// played by a scripted gcr prompter) 'credentials add' fails NO_SPACE: the index keeps its
// exact prior bytes, no temporary file is left, the keyring item it created is taken out again
// (re-adding the alias later works, which an orphan would refuse as ALIAS_EXISTS), the failure
// is audited, and brokerd keeps its pid. A remove is refused the same way with nothing removed.
// With the filler removed the remove and the add work.
func TestDiskFullCredentialsIndex(t *testing.T) {
	parallel(t)
	needMount(t)
	e := newEnv(t, envOptions{})
	pr := presencetest.StartPrompter(t, e.k.Addr, presencetest.SystemPrompterName, presencetest.Answer{Cancel: true})
	e.writeConfig(`{"presence":{"timeout_seconds":5}}`)
	approve := presencetest.Answer{Password: newCanary()}
	data := filepath.Join(e.root, "data", "headless")
	e.tmpfs(t, data, "256k")
	disk := filepath.Join(e.root, "audit-disk")
	if err := os.MkdirAll(disk, 0o700); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(data, "audit.jsonl")
	e.bindFile(t, filepath.Join(disk, "audit.jsonl"), logFile)

	pr.Script(approve)
	e.ok(t, nil, "credentials", "init")
	pw1, pw2 := newCanary(), newCanary()
	pr.Script(approve)
	lsEnroll(t, e, origin, "first", "first@example.test", pw1)
	index := filepath.Join(data, "credentials.json")
	prior, err := os.ReadFile(index)
	if err != nil || !bytes.Contains(prior, []byte(`"first"`)) {
		t.Fatalf("index after the first add: %q, %v", prior, err)
	}
	brokerPID := e.brokerPID()

	filler := fillFS(t, data)
	pr.Script(approve)
	r := e.addTTY(origin, "second", "second@example.test", pw2)
	wantFailure(t, "add with the index's disk full", r, "NO_SPACE", "no space left on device")
	if got, err := os.ReadFile(index); err != nil || !bytes.Equal(got, prior) {
		t.Fatalf("the index changed on a full disk: %q (%v), was %q", got, err, prior)
	}
	ents, _ := os.ReadDir(data)
	for _, de := range ents {
		if strings.HasPrefix(de.Name(), ".credentials.json") {
			t.Errorf("left in the data dir: %s", de.Name())
		}
	}
	if got := aliasesIn(t, e); !slices.Equal(got, []string{"first"}) {
		t.Fatalf("aliases after the failed add: %v", got)
	}
	lines := e.auditFile(t, logFile)
	if rec, _ := audit.Parse(lines[len(lines)-1]); rec.Op != "add" || rec.Decision != "error" || rec.Code != "NO_SPACE" || rec.Alias != "second" {
		t.Fatalf("newest record %+v, want the failed add", rec)
	}
	if e.brokerPID() != brokerPID {
		t.Fatalf("brokerd %d → %d", brokerPID, e.brokerPID())
	}
	// A remove the index cannot record is refused with nothing removed: the index keeps its
	// bytes and the keyring its item (the remove once space is freed finds it).
	pr.Script(approve)
	r = e.runTTY([]step{{"[y/N]", "y\n"}}, "headless", "credentials", "remove", "--origin", origin, "--alias", "first", "--json")
	wantFailure(t, "remove with the index's disk full", r, "NO_SPACE", "nothing was removed")
	if got, err := os.ReadFile(index); err != nil || !bytes.Equal(got, prior) {
		t.Fatalf("the index changed on a full disk: %q (%v), was %q", got, err, prior)
	}
	lines = e.auditFile(t, logFile)
	if rec, _ := audit.Parse(lines[len(lines)-1]); rec.Op != "remove" || rec.Decision != "error" || rec.Code != "NO_SPACE" || rec.Alias != "first" {
		t.Fatalf("newest record %+v, want the failed remove", rec)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	pr.Script(approve)
	if r := e.runTTY([]step{{"[y/N]", "y\n"}}, "headless", "credentials", "remove", "--origin", origin, "--alias", "first", "--json"); r.code != 0 {
		t.Fatalf("remove once space is freed (the item must still be there): %+v", r)
	}
	pr.Script(approve)
	lsEnroll(t, e, origin, "first", "first@example.test", pw1)
	pr.Script(approve)
	lsEnroll(t, e, origin, "second", "second@example.test", pw2)
	if got := aliasesIn(t, e); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("aliases once space is freed: %v", got)
	}
	if e.brokerPID() != brokerPID {
		t.Fatalf("brokerd %d → %d", brokerPID, e.brokerPID())
	}
	for _, pw := range []string{pw1, pw2} {
		sweep := &lsSweep{t: t, needles: lsNeedles("password", pw), files: map[string]int{}, seen: map[string]bool{}}
		sweep.tree("root", e.root)
	}
}

// TestDiskFullProfile: the durable profile (made on the disk by a first start) is moved onto
// a small tmpfs that is then filled. 'headless start' opens it (the profile is whole; Chromium
// runs degraded: it cannot write its state), a visit and an alias login work, the host and
// Chromium keep their pids over several commands (no crash loop), and the password is on no
// file (the full profile included) and in no output. With the filler removed, stop and start
// open the same profile (not moved aside) and it works.
func TestDiskFullProfile(t *testing.T) {
	parallel(t)
	needMount(t)
	e := newEnv(t, envOptions{})
	program, _ := presencetest.FakePinentry(t, "approve")
	e.pinentryConfig(program)
	pw := newCanary()
	srv := newBenchSite(t, benchAccount, pw)
	if r := e.addTTY(srv.URL, "bench", benchAccount, pw); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	e.profStart(t)
	e.ok(t, nil, "visit", srv.URL+"/login")
	e.ok(t, nil, "stop")
	prof := e.profileDir()
	saved := filepath.Join(e.root, "profile-saved")
	if err := os.Rename(prof, saved); err != nil {
		t.Fatal(err)
	}
	e.tmpfs(t, prof, "128m")
	if out, err := exec.Command("cp", "-a", saved+"/.", prof+"/").CombinedOutput(); err != nil {
		t.Fatalf("copy the profile onto the tmpfs: %v %s", err, out)
	}
	filler := fillFS(t, prof)

	s := e.profStart(t)
	if s.Host.MovedAside != "" {
		t.Fatalf("the profile was moved aside on a full disk: %+v", s)
	}
	st := e.profStatus(t)
	if st.Host.BrowserPID == 0 {
		t.Fatalf("status: %+v", st)
	}
	r := e.benchLogin(t, srv, "bench")
	t.Logf("login with the profile's disk full: %+v", r)
	if r.code != 0 || !strings.Contains(r.stdout, `"status":"authenticated"`) || srv.accepted.Load() != 1 {
		t.Fatalf("login with the profile's disk full: %+v (accepted %d)", r, srv.accepted.Load())
	}
	e.ok(t, nil, "visit", srv.URL+"/home")
	e.ok(t, nil, "snapshot")
	e.ok(t, nil, "session", "create", "other")
	e.ok(t, nil, "visit", "--session", "other", srv.URL+"/login")
	if got := e.profStatus(t); got.Host.PID != st.Host.PID || got.Host.BrowserPID != st.Host.BrowserPID || got.Broker.PID != st.Broker.PID {
		t.Fatalf("pids changed on a full profile: %+v → %+v", st, got)
	}
	if b, err := os.ReadFile(filepath.Join(e.runDir(), "host.log")); err != nil || bytes.Contains(b, []byte("browser crashed")) {
		t.Fatalf("host.log (%v) tells of a crash on a full profile:\n%s", err, b)
	}
	sweep := &lsSweep{t: t, needles: lsNeedles("password", pw), files: map[string]int{}, seen: map[string]bool{}}
	sweep.tree("profile", prof)
	if sweep.files["profile"] == 0 {
		t.Fatal("the sweep searched no file of the profile")
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	e.ok(t, nil, "stop")
	s = e.profStart(t)
	if s.Host.MovedAside != "" || s.Host.Profile != prof {
		t.Fatalf("start once space is freed: %+v", s)
	}
	if r := e.benchLogin(t, srv, "bench"); r.code != 0 || !strings.Contains(r.stdout, `"status":"authenticated"`) {
		t.Fatalf("login once space is freed: %+v", r)
	}
	e.ok(t, nil, "stop")
	sweep.tree("root", e.root)
	if strings.Contains(e.allOutput(), pw) {
		t.Error("the password is in an output")
	}
}

// TestDiskFullProfileCreate: the first start, with no profile yet, finds the data dir (a small
// tmpfs) full: it fails NO_SPACE with a hint, leaves no half-made profile (no .profile.tmp-*),
// and brokerd stays up; with the filler removed, start creates the profile.
func TestDiskFullProfileCreate(t *testing.T) {
	parallel(t)
	needMount(t)
	e := newEnv(t, envOptions{})
	program, _ := presencetest.FakePinentry(t, "approve")
	e.pinentryConfig(program)
	data := filepath.Join(e.root, "data", "headless")
	e.tmpfs(t, data, "1m")
	filler := fillFS(t, data)
	r := e.run("", "headless", "start", "--json")
	wantFailure(t, "start with a full data dir", r, "NO_SPACE", "no space left on device")
	brokerPID := e.brokerPID()
	if !procAlive(brokerPID) {
		t.Fatalf("brokerd (pid %d) is not running after the failed start", brokerPID)
	}
	ents, _ := os.ReadDir(data)
	for _, de := range ents {
		if strings.HasPrefix(de.Name(), ".profile.tmp-") || de.Name() == "profile" {
			t.Errorf("left in the data dir: %s", de.Name())
		}
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	s := e.profStart(t)
	if s.Host.Profile != e.profileDir() || s.BrokerPID != brokerPID && s.BrokerPID != 0 {
		t.Fatalf("start once space is freed: %+v (brokerd was %d)", s, brokerPID)
	}
}
