package auditwriter

// What keying costs: the MAC, a keyed check per record, a keyed append (benchmarks), and
// that the line Sign makes is the canonical one.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/procstat"
)

// benchRecord is a release's record as brokerd writes it: every field a real one has, both
// process chains full.
func benchRecord() Record {
	chain := []procstat.Proc{{PID: 4242, Exe: "/usr/bin/headless", Comm: "headless"}, {PID: 4241, Exe: "/usr/bin/node", Comm: "node"},
		{PID: 4240, Exe: "/usr/bin/bash", Comm: "bash"}, {PID: 1, Exe: "/usr/lib/systemd/systemd", Comm: "systemd"}}
	return Record{Time: t0, Op: "release", Decision: "allow", Origin: "https://staging.example.com", Account: "admin@example.com",
		Alias: "staging-admin", Session: "default", PID: 4242, Exe: "/usr/bin/headless", Provider: "passphrase", Chain: chain,
		Path: "/login", Field: "Password", Agent: chain, Released: []string{"password"}, Seq: 41, Prev: strings.Repeat("ab", 32)}
}

// BenchmarkSign is what keying costs the writer per record: a release's line encoded with its
// MAC (BenchmarkEncode is the same line without one).
func BenchmarkSign(b *testing.B) {
	r := benchRecord()
	for b.Loop() {
		if _, _, err := audit.Sign(testKey, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	r := benchRecord()
	for b.Loop() {
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSignIsCanonical: Sign's line is what Parse takes back (the canonical JSON of the record
// with its MAC), and its MAC is MAC's.
func TestSignIsCanonical(t *testing.T) {
	line, r, err := audit.Sign(testKey, benchRecord())
	if err != nil {
		t.Fatal(err)
	}
	back, err := audit.Parse(line)
	if err != nil || back.MAC != r.MAC || !audit.VerifyMAC(testKey, back) {
		t.Fatalf("Parse(Sign) = %+v, %v", back, err)
	}
	if m, _ := audit.MAC(testKey, back); m != r.MAC {
		t.Fatalf("MAC %s, Sign %s", m, r.MAC)
	}
}

// BenchmarkCheckRecord is what a keyed check costs per record (parse, chain, MAC), over a log
// of 1000 releases.
func BenchmarkCheckRecord(b *testing.B) {
	a, err := OpenAnchors(b.TempDir(), os.Getuid())
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), fileName)
	l, err := Open(Options{Path: path, Key: testKey, Anchors: a, MaxBytes: audit.MaxFileBytes})
	if err != nil {
		b.Fatal(err)
	}
	for range 1000 {
		r := benchRecord()
		r.Seq, r.Prev, r.Time = 0, "", time.Time{}
		if err := l.Append(r); err != nil {
			b.Fatal(err)
		}
	}
	l.Close()
	b.ResetTimer()
	for b.Loop() {
		if rep, err := Check(path, testKey, a); err != nil || rep.Records != 1000 {
			b.Fatal(rep, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/record")
}

// BenchmarkAppendKeyedRefusal is BenchmarkAppend keyed, for an ordinary record (a refusal):
// the MAC, the look at the log's ends, and the anchor's update (one more fdatasync, in the state
// dir's filesystem: here the test's).
func BenchmarkAppendKeyedRefusal(b *testing.B) {
	a, err := OpenAnchors(b.TempDir(), os.Getuid())
	if err != nil {
		b.Fatal(err)
	}
	l, err := Open(Options{Path: filepath.Join(b.TempDir(), fileName), Key: testKey, Anchors: a})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for b.Loop() {
		if err := l.Append(Record{Op: "release", Decision: "deny", Code: "PEER_NOT_HOST", Alias: "bench", PID: 42}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendKeyed is BenchmarkAppend keyed, for an important record (an allowed release):
// BenchmarkAppendKeyedRefusal's work, the copy kept with the anchor, and the record placed in
// the user's list (one more lock and fdatasync).
func BenchmarkAppendKeyed(b *testing.B) {
	a, err := OpenAnchors(b.TempDir(), os.Getuid())
	if err != nil {
		b.Fatal(err)
	}
	l, err := Open(Options{Path: filepath.Join(b.TempDir(), fileName), Key: testKey, Anchors: a})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for b.Loop() {
		if err := l.Append(Record{Op: "release", Decision: "allow", Alias: "bench", PID: 42}); err != nil {
			b.Fatal(err)
		}
	}
}
