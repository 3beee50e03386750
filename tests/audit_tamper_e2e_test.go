//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// auditTamper is the agent's script against the audit log (AUDIT_LOG), run as the user with
// nothing but the user's rights and package audit's format: what TAMPER says. It rewrites the
// file the way an editor does (a new file renamed over it).
func auditTamper() int {
	path := os.Getenv("AUDIT_LOG")
	copyPath := filepath.Join(filepath.Dir(path), "agent-copy")
	read := func() []audit.Record {
		b, err := os.ReadFile(path)
		if err != nil {
			panic(err)
		}
		var out []audit.Record
		for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			r, err := audit.Parse(l)
			if err != nil {
				panic(err)
			}
			out = append(out, r)
		}
		return out
	}
	write := func(rs []audit.Record, rechain bool) {
		var b []byte
		prev := ""
		for i, r := range rs {
			if rechain {
				r.Seq, r.Prev = uint64(i+1), prev
			}
			l, _ := json.Marshal(r)
			prev = audit.Hash(l)
			b = append(append(b, l...), '\n')
		}
		if err := os.WriteFile(path+".new", b, 0o600); err != nil {
			panic(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			panic(err)
		}
	}
	firstRelease := func(rs []audit.Record) int {
		for i, r := range rs {
			if r.Op == "release" {
				return i
			}
		}
		panic("no release record")
	}
	switch what := os.Getenv("TAMPER"); what {
	case "droprechain": // the hostile review of issue 26: drop the release, rebuild the chain
		rs := read()
		i := firstRelease(rs)
		write(append(rs[:i:i], rs[i+1:]...), true)
	case "edit":
		rs := read()
		i := firstRelease(rs)
		rs[i].Decision, rs[i].Code = "deny", "PRESENCE_DENIED"
		write(rs, false)
	case "reorder":
		rs := read()
		rs[1], rs[2] = rs[2], rs[1]
		write(rs, false)
	case "truncate":
		rs := read()
		write(rs[:len(rs)-1], false)
	case "tear":
		b, _ := os.ReadFile(path)
		os.WriteFile(path, b[:len(b)-10], 0o600)
	case "replaceold":
		if err := os.Rename(copyPath, path); err != nil {
			panic(err)
		}
	case "delete":
		os.Remove(path)
	case "chmod":
		os.Chmod(path, 0)
	case "forge": // a log of its own, in the old format: no release, no MAC
		var rs []audit.Record
		for _, r := range read() {
			if r.Op != "release" {
				r.MAC = ""
				rs = append(rs, r)
			}
		}
		write(rs, true)
	case "fakebroker": // a broker.sock of its own that says "intact" to every question
		l, err := net.Listen("unix", os.Getenv("RAW_SOCK"))
		if err != nil {
			panic(err)
		}
		fmt.Println("listening")
		for {
			c, err := l.Accept()
			if err != nil {
				return 1
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return
					}
					var req struct{ ID int }
					json.Unmarshal(line, &req)
					fmt.Fprintf(c, `{"id":%d,"result":{"intact":true,"records":3,"recovered":[]}}`+"\n", req.ID)
				}
			}()
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown tamper %q\n", what)
		return 2
	}
	fmt.Println("ok")
	return 0
}

// tamperAs runs the agent's script as the env's user.
func (e *env) tamperAs(t *testing.T, logPath, what string) {
	t.Helper()
	out, err := e.attackerIn(t, "audittamper", "AUDIT_LOG="+logPath, "TAMPER="+what).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("the agent's %s: %v %s", what, err, out)
	}
}

// wantTampered runs 'headless audit verify --json' and wants AUDIT_TAMPERED naming the record
// and the kind, with a hint.
func wantTampered(t *testing.T, e *env, what string, seq uint64, kind audit.Kind) {
	t.Helper()
	r := e.run("", "headless", "audit", "verify", "--json")
	var je jsonErr
	want := fmt.Sprintf("record %d: %s: ", seq, kind)
	if seq == 0 {
		want = fmt.Sprintf(": %s: ", kind) // the file as a whole
	}
	if r.code != 1 || json.Unmarshal([]byte(r.stdout), &je) != nil || je.Error.Code != "AUDIT_TAMPERED" || !strings.Contains(je.Error.Message, want) || je.Error.Hint == "" {
		t.Fatalf("audit verify after the agent's %s: %+v; want AUDIT_TAMPERED naming %q", what, r, want)
	}
}

// testAuditRewrittenByTheUser (issue 46): a program of the user — the agent, as uid 65534 —
// rewrites the audit log after a release it caused, every way it can: the hostile review of
// issue 26 (the release dropped and the chain rebuilt, which the plain hash chain calls
// intact), an edit, a reorder, the newest record cut (whole, or inside it), the file replaced by
// an older copy or by a log of its own, the file deleted. 'headless audit verify', run by the
// person, names each with the record and how; the doctor fails; a broker.sock of the agent's
// that says "intact" is never asked, and a brokerd of its own (copies, no group) cannot answer
// (AUDIT_UNVERIFIED). When brokerd next starts it moves the rewritten log aside and records the
// finding, which verify keeps reporting.
func testAuditRewrittenByTheUser(t *testing.T) {
	e := newEnv(t, envOptions{user: true})
	program, _ := presencetest.FakePinentryAs(t, "approve", 65534, 65534)
	e.pinentryConfig(program)
	if r := e.addCredential("audited", "a@example.test", newCanary()); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	logPath := filepath.Join(e.root, "data", "headless", "audit.jsonl")
	e.start(t)
	for range 2 {
		if r := e.run("", "headless", "credentials", "verify", "--origin", origin, "--alias", "audited", "--json"); r.code != 0 {
			t.Fatalf("verify: %+v", r)
		}
	}
	e.run("", "headless", "stop", "--json")
	e.stopBroker()
	pristine, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var v auditVerifyResult
	e.ok(t, &v, "audit", "verify")
	last := uint64(bytes.Count(pristine, []byte("\n")))
	if !v.Intact || uint64(v.Records) != last || last < 3 {
		t.Fatalf("audit verify before the agent's edits: %+v", v)
	}
	firstRelease := uint64(0)
	for i, l := range bytes.Split(pristine, []byte("\n")) {
		if r, err := audit.Parse(l); err == nil && r.Op == "release" && firstRelease == 0 {
			firstRelease = uint64(i + 1)
		}
	}
	restore := func() {
		if err := os.WriteFile(logPath, pristine, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(logPath, 0o600)
		e.own(logPath)
		os.Remove(filepath.Join(filepath.Dir(logPath), "agent-copy"))
	}
	for _, c := range []struct {
		what string
		seq  uint64
		kind audit.Kind
	}{
		{"droprechain", firstRelease, audit.KindRechained},
		{"edit", firstRelease, audit.KindEdited},
		{"reorder", 3, audit.KindReordered},
		{"truncate", last, audit.KindTruncated},
		{"tear", last, audit.KindTruncated},
		{"replaceold", 2, audit.KindTruncated},
		{"delete", 1, audit.KindDeleted},
		{"forge", 2, audit.KindTruncated},
		{"chmod", 0, audit.KindReplaced},
	} {
		restore()
		if c.what == "replaceold" { // the copy the agent kept from before its releases
			old := filepath.Join(filepath.Dir(logPath), "agent-copy")
			os.WriteFile(old, pristine[:bytes.IndexByte(pristine, '\n')+1], 0o600)
			e.own(old)
		}
		e.tamperAs(t, logPath, c.what)
		if c.what == "droprechain" {
			// What 'audit verify' said before issue 46: the plain chain holds.
			if n, err := audit.Verify(logPath); err != nil || uint64(n) != last-1 {
				t.Fatalf("the plain chain of the rebuilt log: %d, %v; want it to hold (that is the point)", n, err)
			}
		}
		wantTampered(t, e, c.what, c.seq, c.kind)
	}

	// The doctor tells the same.
	restore()
	e.tamperAs(t, logPath, "droprechain")
	code, st, r := doctorReport(t, e)
	if code != 1 || st["audit"] != "failed" || !strings.Contains(r.stdout, fmt.Sprintf("record %d: rechained", firstRelease)) {
		t.Fatalf("doctor after the agent's rewrite: exit %d %v\n%s", code, st, r.stdout)
	}

	// A broker.sock of the agent's that says "intact" to everything is never asked.
	fake := e.attackerIn(t, "audittamper", "AUDIT_LOG="+logPath, "TAMPER=fakebroker", "RAW_SOCK="+e.sockPath())
	var fo syncBuffer
	fake.Stdout = &fo
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Process.Kill(); fake.Wait() })
	if !pollUntil(10*time.Second, func() bool { return strings.Contains(fo.String(), "listening") }) {
		t.Fatal("the fake broker.sock did not come up")
	}
	wantTampered(t, e, "droprechain (with a fake broker.sock)", firstRelease, audit.KindRechained)
	fake.Process.Kill()
	fake.Wait()
	os.Remove(e.sockPath())

	// Nor can a brokerd of the agent's answer: copies of the binaries, without the group.
	own := filepath.Join(e.root, "data", "own")
	os.Mkdir(own, 0o700)
	e.own(own)
	for _, n := range []string{"brokerd", "headless"} {
		b, _ := os.ReadFile(filepath.Join(binDir, n))
		if err := writeExecutable(filepath.Join(own, n), b, 0o755); err != nil {
			t.Fatal(err)
		}
		e.own(filepath.Join(own, n))
	}
	cmd := e.command("brokerd")
	cmd.Path, cmd.Args = filepath.Join(own, "headless"), []string{"headless", "audit", "verify", "--json"}
	out, _ := cmd.Output()
	if !strings.Contains(string(out), `"AUDIT_UNVERIFIED"`) || strings.Contains(string(out), `"intact"`) {
		t.Fatalf("audit verify with the agent's own copies: %s; want AUDIT_UNVERIFIED", out)
	}

	// brokerd, started again, does not continue the rewritten log: it moves it aside and
	// starts the chain again from its anchor with what it found.
	rewritten, _ := os.ReadFile(logPath)
	if r := e.run("", "headless", "credentials", "list", "--json"); r.code != 0 {
		t.Fatalf("list (brokerd starts): %+v", r)
	}
	r = e.run("", "headless", "audit", "verify", "--json")
	want := fmt.Sprintf("record %d: rechained: brokerd found the log tampered with", last+1)
	if r.code != 1 || errCode(t, r) != "AUDIT_TAMPERED" || !strings.Contains(r.stdout, want) {
		t.Fatalf("audit verify after brokerd found the rewrite: %+v; want %q", r, want)
	}
	kept, _ := filepath.Glob(logPath + ".tampered-*")
	if len(kept) != 1 {
		t.Fatalf("files moved aside: %v", kept)
	}
	if b, _ := os.ReadFile(kept[0]); !bytes.Equal(b, rewritten) {
		t.Fatal("the rewritten log was not kept as it was")
	}
	var list struct {
		Records []struct {
			Seq          uint64
			Op, Decision string
			Code         string
		} `json:"records"`
	}
	e.ok(t, &list, "audit", "list")
	if len(list.Records) == 0 || list.Records[0].Op != "tamper" || list.Records[0].Seq != last+1 || list.Records[0].Code != "AUDIT_TAMPERED" {
		t.Fatalf("audit list after brokerd found the rewrite: %+v", list)
	}
}

// TestAuditLegacyLogIsKeyed (issue 46): a log written before records were keyed verifies as
// the plain chain it is, and says so; brokerd keys it when it starts (a "migrate" record that
// commits to its last record), and from then on the old records are checked too.
func TestAuditLegacyLogIsKeyed(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	dir := filepath.Join(e.root, "data", "headless")
	os.MkdirAll(dir, 0o700)
	logPath := filepath.Join(dir, "audit.jsonl")
	var b []byte
	prev := ""
	for i, op := range []string{"add", "release", "remove"} {
		l, _ := json.Marshal(audit.Record{Seq: uint64(i + 1), Time: time.Date(2026, 1, 2, 3, 4, i, 0, time.UTC), Op: op, Decision: "ok", Origin: origin, Alias: "old", Prev: prev})
		prev = audit.Hash(l)
		b = append(append(b, l...), '\n')
	}
	if err := os.WriteFile(logPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Intact          bool
		Records, Legacy int
	}
	e.ok(t, &v, "audit", "verify")
	if !v.Intact || v.Records != 3 || v.Legacy != 3 {
		t.Fatalf("audit verify of a log written before keying: %+v", v)
	}
	if h := e.run("", "headless", "audit", "verify"); !strings.Contains(h.stdout, "written before brokerd keyed its records") {
		t.Fatalf("audit verify does not say the records are legacy:\n%s", h.stdout)
	}
	if r := e.run("", "headless", "credentials", "list", "--json"); r.code != 0 { // brokerd starts
		t.Fatalf("list: %+v", r)
	}
	e.ok(t, &v, "audit", "verify")
	if !v.Intact || v.Records != 4 || v.Legacy != 3 {
		t.Fatalf("audit verify after brokerd keyed the log: %+v", v)
	}
	now, _ := os.ReadFile(logPath)
	if !bytes.HasPrefix(now, b) {
		t.Fatal("brokerd changed the records written before keying")
	}
	r, err := audit.Parse(bytes.Split(now, []byte("\n"))[3])
	if err != nil || r.Op != "migrate" || r.Prev != prev || r.MAC == "" || !strings.Contains(r.Detail, "records 1-3") {
		t.Fatalf("record 4 = %+v, %v; want the keyed migrate record", r, err)
	}
	// An edit of an old record now shows.
	e.stopBroker()
	os.WriteFile(logPath, bytes.Replace(now, []byte(`"alias":"old"`), []byte(`"alias":"new"`), 1), 0o600)
	if r := e.run("", "headless", "audit", "verify", "--json"); r.code != 1 || errCode(t, r) != "AUDIT_TAMPERED" {
		t.Fatalf("audit verify after an edit of a legacy record: %+v", r)
	}
}

// testAuditElsewhere (issue 46): the agent starts the genuine brokerd with a data dir of its
// own (another XDG_DATA_HOME and runtime dir) and has a release go through it: the record is in
// that log, which the person's verify does not read — but brokerd placed it where no program of
// the user reaches, and the person's 'audit verify' and doctor name it.
func testAuditElsewhere(t *testing.T) {
	e := newEnv(t, envOptions{user: true})
	program, _ := presencetest.FakePinentryAs(t, "approve", 65534, 65534)
	e.pinentryConfig(program)
	if r := e.addCredential("audited", "a@example.test", newCanary()); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	e.stopBroker()
	other := filepath.Join(e.root, "o") // short: Chromium's sockets under its runtime dir have a length limit
	for _, d := range []string{"", "run", "data"} {
		os.Mkdir(filepath.Join(other, d), 0o700)
		e.own(filepath.Join(other, d))
	}
	saved := e.vars
	e.vars = append(slices.Clone(e.vars), "XDG_RUNTIME_DIR="+filepath.Join(other, "run"), "XDG_DATA_HOME="+filepath.Join(other, "data"))
	func() {
		defer func() {
			e.run("", "headless", "stop", "--json")
			e.stopBroker()
			e.vars = saved
		}()
		if r := e.run("", "headless", "start", "--json"); r.code != 0 {
			hl, _ := os.ReadFile(filepath.Join(other, "run", "headless", "host.log"))
			t.Fatalf("the agent's start: %+v\nhost.log: %s", r, hl)
		}
		if r := e.run("", "headless", "credentials", "verify", "--origin", origin, "--alias", "audited", "--json"); r.code != 0 {
			t.Fatalf("a release through the agent's brokerd: %+v", r)
		}
	}()
	var v struct {
		Intact    bool
		Elsewhere []struct {
			Log    string
			Record struct{ Op, Decision, Alias string }
		}
	}
	e.ok(t, &v, "audit", "verify")
	// (The user's other logs are named too: uid 65534's worlds of other tests.)
	want := filepath.Join(other, "data", "headless", "audit.jsonl")
	if !v.Intact || !slices.ContainsFunc(v.Elsewhere, func(p struct {
		Log    string
		Record struct{ Op, Decision, Alias string }
	}) bool {
		return p.Log == want && p.Record.Op == "release" && p.Record.Decision == "allow" && p.Record.Alias == "audited"
	}) {
		t.Fatalf("audit verify of the person's log: %+v; want the release in %s named", v, want)
	}
	if h := e.run("", "headless", "audit", "verify"); !strings.Contains(h.stdout, "went to other audit logs of yours") || !strings.Contains(h.stdout, want) {
		t.Fatalf("audit verify (human) does not warn:\n%s", h.stdout)
	}
	if _, st, r := doctorReport(t, e); st["audit"] != "healthy" || !strings.Contains(r.stdout, "went to other audit logs") {
		t.Fatalf("doctor: audit %s, not naming the other logs\n%s", st["audit"], r.stdout)
	}
	// F2 of the hostile review of issue 46: 16 records in the person's own log (8 adds and 8
	// removes, which the agent can make without the person) and the agent's log deleted used
	// to clear the list; the person's verify still names the release.
	for i := range 8 {
		alias := fmt.Sprintf("flood%d", i)
		if r := e.addCredential(alias, "f@example.test", newCanary()); r.code != 0 {
			t.Fatalf("add %s: %+v", alias, r)
		}
		if r := e.runTTY([]step{{"[y/N]", "y\n"}}, "headless", "credentials", "remove", "--origin", origin, "--alias", alias, "--json"); r.code != 0 {
			t.Fatalf("remove %s: %+v", alias, r)
		}
	}
	if err := os.RemoveAll(filepath.Join(other, "data", "headless")); err != nil {
		t.Fatal(err)
	}
	v.Elsewhere = nil
	e.ok(t, &v, "audit", "verify")
	if !v.Intact || !slices.ContainsFunc(v.Elsewhere, func(p struct {
		Log    string
		Record struct{ Op, Decision, Alias string }
	}) bool {
		return p.Log == want && p.Record.Op == "release" && p.Record.Decision == "allow" && p.Record.Alias == "audited"
	}) {
		t.Fatalf("audit verify after 16 adds and removes and the other log deleted: %+v; want the release in %s still named", v, want)
	}
}
