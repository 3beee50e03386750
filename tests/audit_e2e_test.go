//go:build linux

package tests

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// TestAuditLog: every add, release, denial and remove is recorded with the requester, the log
// holds no secret, and editing it is detected by both verify commands.
func TestAuditLog(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	approve, _ := presencetest.FakePinentry(t, "approve")
	e.pinentryConfig(approve)
	canary := newCanary()
	if r := e.addCredential("audited", "a@example.test", canary); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	e.start(t)
	if r := e.run("", "headless", "credentials", "verify", "--origin", origin, "--alias", "audited", "--json"); r.code != 0 {
		t.Fatalf("verify: %+v", r)
	}
	e.stopBroker()
	deny, _ := presencetest.FakePinentry(t, "deny")
	e.pinentryConfig(deny)
	e.start(t)
	if r := e.run("", "headless", "credentials", "verify", "--origin", origin, "--alias", "audited", "--json"); errCode(t, r) != "PRESENCE_DENIED" {
		t.Fatalf("denied verify: %+v", r)
	}
	if r := e.runTTY([]step{{"[y/N]", "y\n"}}, "headless", "credentials", "remove", "--origin", origin, "--alias", "audited", "--json"); r.code != 0 {
		t.Fatalf("remove: %+v", r)
	}

	r := e.run("", "headless", "audit", "list", "--json")
	if r.code != 0 {
		t.Fatalf("audit list: %+v", r)
	}
	var list struct {
		Records []struct {
			Op, Decision, Code, Origin, Alias, Session, Exe, Provider, Prev, Purpose string
			PID                                                                      int
			Seq                                                                      uint64
			Chain, Agent                                                             []struct {
				PID       int
				Exe, Comm string
			}
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range list.Records {
		got = append(got, rec.Op+"/"+rec.Decision+"/"+rec.Code)
		if rec.Alias != "audited" || rec.Origin != origin || rec.PID == 0 || !strings.HasSuffix(rec.Exe, "/headless") {
			t.Errorf("record lacks who/what: %+v", rec)
		}
		if rec.Op == "release" && rec.Provider != "pinentry" {
			t.Errorf("release record without the provider: %+v", rec)
		}
		// The requester's chain (brokerd's view) on every record; on releases also the agent
		// chain the host reported (the CLI that asked for the verification, then this test).
		// The requester is named "headless" even when it is the host brokerd ran through
		// /proc/self/fd/N (the kernel would call it "N").
		if len(rec.Chain) < 2 || rec.Chain[0].PID != rec.PID || rec.Chain[0].Exe != rec.Exe || rec.Chain[0].Comm != "headless" {
			t.Errorf("record without the requester's chain: %+v", rec)
		}
		if rec.Op == "release" && (rec.Purpose != "verify" || len(rec.Agent) < 2 || rec.Agent[0].Comm != "headless") {
			t.Errorf("release record without what the host reported: %+v", rec)
		}
	}
	// The human list shows the chains too.
	human := e.run("", "headless", "audit", "list")
	if !strings.Contains(human.stdout, " ← pid ") || !strings.Contains(human.stdout, "asked by pid ") || !strings.Contains(human.stdout, "(as reported by the host)") {
		t.Errorf("audit list does not show the chains:\n%s", human.stdout)
	}
	want := "add/ok/ release/allow/ release/deny/PRESENCE_DENIED remove/ok/"
	if strings.Join(got, " ") != want {
		t.Fatalf("audit records %q, want %q", strings.Join(got, " "), want)
	}
	logPath := filepath.Join(e.root, "data", "headless", "audit.jsonl")
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	assertNoCanary(t, "audit log", string(b), canary)
	if fi, _ := os.Stat(logPath); fi.Mode().Perm() != 0o600 {
		t.Fatalf("audit log mode %v", fi.Mode().Perm())
	}
	if r := e.run("", "headless", "audit", "verify", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"intact":true`) {
		t.Fatalf("verify intact log: %+v", r)
	}
	if r := e.run("", "brokerd", "audit", "verify"); r.code != 0 {
		t.Fatalf("brokerd audit verify: %+v", r)
	}
	// Edit the second record (allow → deny): both verifiers name the damage and fail.
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	lines[1] = strings.Replace(lines[1], `"allow"`, `"deny"`, 1)
	os.WriteFile(logPath, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	if r := e.run("", "headless", "audit", "verify", "--json"); r.code != 1 || errCode(t, r) != "AUDIT_TAMPERED" {
		t.Fatalf("verify after editing: %+v", r)
	}
	if r := e.run("", "brokerd", "audit", "verify"); r.code != 1 {
		t.Fatalf("brokerd audit verify after editing: %+v", r)
	}
}

// TestAuditTornRecordRecovered: a record a power loss cut short (no final newline) no longer
// keeps brokerd from starting: its bytes are kept aside, the chain goes on with a "recover"
// record, and both verifiers find the log intact. A whole line that is not a record is not a
// crash's work: brokerd refuses to start and says so (AUDIT_TAMPERED in brokerd.log).
func TestAuditTornRecordRecovered(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	canary := newCanary()
	if r := e.addCredential("torn", "a@example.test", canary); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	e.stopBroker()
	logPath := filepath.Join(e.root, "data", "headless", "audit.jsonl")
	whole, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	const tail = `{"seq":2,"time":"2026-12-01T00:00:00Z","op":"rele`
	if err := os.WriteFile(logPath, append(slices.Clip(whole), tail...), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "headless", "credentials", "list", "--origin", origin, "--json"); r.code != 0 || !strings.Contains(r.stdout, `"torn"`) {
		t.Fatalf("list after the torn record (brokerd must start): %+v", r)
	}
	kept, _ := filepath.Glob(logPath + ".torn-*")
	if len(kept) != 1 {
		t.Fatalf("torn-record files %v; want one", kept)
	}
	if b, err := os.ReadFile(kept[0]); err != nil || string(b) != tail {
		t.Fatalf("%s holds %q, %v; want the torn bytes", kept[0], b, err)
	}
	r := e.run("", "headless", "audit", "list", "--json")
	var list struct {
		Records []struct {
			Seq          uint64
			Op, Decision string
			Detail       string
		} `json:"records"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list.Records) != 2 {
		t.Fatalf("audit list: %+v", r)
	}
	if rec := list.Records[1]; rec.Seq != 2 || rec.Op != "recover" || rec.Decision != "ok" || !strings.Contains(rec.Detail, filepath.Base(kept[0])) {
		t.Fatalf("record 2 = %+v; want the recovery naming %s", rec, filepath.Base(kept[0]))
	}
	if r := e.run("", "headless", "audit", "verify", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"records":2`) {
		t.Fatalf("verify after recovery: %+v", r)
	}
	if human := e.run("", "headless", "audit", "list"); !strings.Contains(human.stdout, "cut a torn last record") {
		t.Fatalf("audit list does not show the recovery:\n%s", human.stdout)
	}

	// A whole last line that is not a record is no crash's work: brokerd does not continue
	// the log (issue 46: nor does it refuse to start, which would let whoever wrote it stop
	// every release): it moves the files aside as they are and starts the chain again from
	// its anchor with the finding, which verify reports.
	e.stopBroker()
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not a record\n")
	f.Close()
	before, _ := os.ReadFile(logPath)
	if r := e.run("", "headless", "audit", "verify", "--json"); r.code != 1 || errCode(t, r) != "AUDIT_TAMPERED" || !strings.Contains(r.stdout, "record 3: malformed") {
		t.Fatalf("verify with a whole line that is not a record: %+v", r)
	}
	if r := e.run("", "headless", "credentials", "list", "--origin", origin, "--json"); r.code != 0 {
		t.Fatalf("list with a whole line that is not a record (brokerd must start): %+v", r)
	}
	moved, _ := filepath.Glob(logPath + ".tampered-*")
	if len(moved) != 1 {
		t.Fatalf("files moved aside: %v", moved)
	}
	if b, _ := os.ReadFile(moved[0]); !bytes.Equal(before, b) {
		t.Fatal("brokerd changed the log it moved aside")
	}
	if r := e.run("", "headless", "audit", "verify", "--json"); r.code != 1 || errCode(t, r) != "AUDIT_TAMPERED" ||
		!strings.Contains(r.stdout, "record 3: malformed: brokerd found the log tampered with") {
		t.Fatalf("verify after brokerd moved the log aside: %+v", r)
	}
	assertNoCanary(t, "audit log", string(before), canary)
}
