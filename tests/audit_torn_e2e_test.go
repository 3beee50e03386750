//go:build linux

package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/brokerapi"
)

// auditVerifyResult is 'headless audit verify --json' when the chain holds.
type auditVerifyResult struct {
	Intact    bool `json:"intact"`
	Records   int  `json:"records"`
	Recovered []struct {
		Seq    uint64 `json:"seq"`
		Detail string `json:"detail"`
	} `json:"recovered"`
}

// TestKill9DuringAuditAppends (issue 30, torn audit records): 20 rounds of a real brokerd
// killed with SIGKILL at a random moment while a client adds and removes credentials as fast as
// it can (every one an fsynced audit record). In every other round the log then also ends in a
// torn write, as a power loss in the middle of one leaves it: the next record in part, or the
// newest without its newline (a real SIGKILL tears a write only rarely). Each time, before brokerd starts again,
// 'headless audit verify --json' says what is there: intact, or AUDIT_TORN naming the offset and
// length of the cut bytes, never AUDIT_TAMPERED; brokerd then starts again; every whole record
// before the cut is still there byte for byte; the cut is in the chain (a "recover" record that
// 'audit verify' lists, naming the offset) and its bytes are kept beside the log; the log
// verifies. At the end a cut inside the newest record, which brokerd anchored, is
// AUDIT_TAMPERED (truncated), and so is an edited byte in an early record.
func TestKill9DuringAuditAppends(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	approve, _ := presencetest.FakePinentry(t, "approve")
	e.pinentryConfig(approve)
	logPath := filepath.Join(e.root, "data", "headless", "audit.jsonl")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed>>1))
	ctx := context.Background()

	var kept []byte         // the whole records the log must still start with
	var recoveries []string // what each recovery so far must say, oldest first
	cuts := 0
	appended, killedMid := 0, 0
	const rounds = 20
	for round := 1; round <= rounds+1; round++ {
		b := e.startBrokerd() // fails the test if brokerd does not come up
		data, err := os.ReadFile(logPath)
		if err != nil && round > 1 {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, kept) {
			t.Fatalf("round %d: brokerd started, but the log lost whole records:\nwant a prefix %q\ngot %q", round, kept, data)
		}
		v := verifyIntact(t, e, round)
		if len(v.Recovered) != len(recoveries) {
			t.Fatalf("round %d: audit verify lists %d recoveries, want %d %q: %+v", round, len(v.Recovered), len(recoveries), recoveries, v)
		}
		for i, want := range recoveries {
			if !strings.Contains(v.Recovered[i].Detail, want) {
				t.Fatalf("round %d: recovery %d = %+v; want it to say %q", round, i, v.Recovered[i], want)
			}
		}
		if round > rounds {
			b.Stop()
			break
		}

		// Audited operations as fast as brokerd takes them, until it is killed.
		c, err := brokerapi.Dial(ctx, e.sockPath())
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan int)
		go func() {
			n := 0
			defer func() { done <- n }()
			for i := 0; ; i++ {
				alias := fmt.Sprintf("r%d-%d", round, i)
				if _, err := c.Add(ctx, origin, "a@example.test", alias, []byte("pw-"+alias)); err != nil {
					return
				}
				n++
				if err := c.Remove(ctx, origin, alias); err != nil {
					return
				}
				n++
			}
		}()
		time.Sleep(time.Duration(30+rng.IntN(400)) * time.Millisecond)
		if err := syscall.Kill(b.Pid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		select {
		case <-b.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: brokerd %d survived SIGKILL", round, b.Pid())
		}
		appended += <-done
		c.Close()

		data, err = os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			killedMid++
		}
		if round%2 == 0 && len(data) > 0 && data[len(data)-1] == '\n' {
			// A torn write, as a power loss in the middle of one leaves it: the next record
			// written only in part, never anchored (brokerd anchors a record once it is
			// fsynced, and acts on it only then); or, every fourth round, the newest record
			// without its final newline (nothing of it lost: brokerd puts the newline back).
			// A record cut inside after it was anchored is no crash's work (below).
			if round%4 == 0 {
				data = data[:len(data)-1]
			} else {
				start := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
				prev, err := audit.Parse(data[start : len(data)-1])
				if err != nil {
					t.Fatal(err)
				}
				next, _ := json.Marshal(audit.Record{Seq: prev.Seq + 1, Time: prev.Time, Op: "add", Decision: "ok", Origin: origin, Alias: "torn",
					Prev: audit.Hash(data[start : len(data)-1]), MAC: strings.Repeat("0", 64)})
				data = append(data, next[:1+rng.IntN(len(next)-1)]...)
			}
			if err := os.WriteFile(logPath, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		start := bytes.LastIndexByte(data, '\n') + 1
		torn := data[start:]
		kept = data[:start]
		r := e.run("", "headless", "audit", "verify", "--json")
		if len(torn) == 0 {
			var v auditVerifyResult
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &v) != nil || !v.Intact || v.Records != bytes.Count(data, []byte("\n")) {
				t.Fatalf("round %d: audit verify of a log killed between records: %+v", round, r)
			}
			continue
		}
		var je jsonErr
		want := fmt.Sprintf("%d bytes at offset %d", len(torn), start)
		if r.code == 0 || json.Unmarshal([]byte(r.stdout), &je) != nil || je.Error.Code != "AUDIT_TORN" ||
			!strings.Contains(je.Error.Message, want) || je.Error.Hint == "" {
			t.Fatalf("round %d: audit verify of a torn end (%s) = %+v; want AUDIT_TORN naming it, with a hint", round, want, r)
		}
		if json.Valid(torn) { // a record whole but for its newline: brokerd puts the newline back
			kept = data
			recoveries = append(recoveries, "restored the final newline of record ")
		} else {
			cuts++
			recoveries = append(recoveries, fmt.Sprintf("cut a torn last record (%d bytes at offset %d, no final newline)", len(torn), start))
		}
	}
	t.Logf("%d audited operations in %d rounds, %d torn ends (%d by the kill itself)", appended, rounds, len(recoveries), killedMid)
	files, _ := filepath.Glob(logPath + ".torn-*")
	if want := min(cuts, 4); len(files) != want {
		t.Fatalf("torn-record files %v; want the newest %d", files, want)
	}
	if appended < rounds {
		t.Fatalf("only %d audited operations in %d rounds: the kills raced nothing", appended, rounds)
	}

	// An anchored record cut inside is not a torn write but a truncation (issue 46: the
	// agent killing brokerd and cutting the record of its release is not a crash).
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logPath, data[:len(data)-10], 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "headless", "audit", "verify", "--json"); r.code == 0 || errCode(t, r) != "AUDIT_TAMPERED" || !strings.Contains(r.stdout, ": truncated: ") {
		t.Fatalf("audit verify after a cut inside the newest (anchored) record: %+v; want AUDIT_TAMPERED, truncated", r)
	}

	// An edit is still an edit: one byte of the second record.
	at := bytes.IndexByte(data, '\n') + 1 + len(`{"seq":2,"time":"`)
	data[at] ^= 1
	if err := os.WriteFile(logPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "headless", "audit", "verify", "--json"); r.code == 0 || errCode(t, r) != "AUDIT_TAMPERED" {
		t.Fatalf("audit verify after an edit of record 2: %+v; want AUDIT_TAMPERED", r)
	}
}

// verifyIntact runs 'headless audit verify --json' and wants the chain intact.
func verifyIntact(t *testing.T, e *env, round int) auditVerifyResult {
	t.Helper()
	r := e.run("", "headless", "audit", "verify", "--json")
	var v auditVerifyResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &v) != nil || !v.Intact {
		t.Fatalf("round %d: audit verify after brokerd started: %+v", round, r)
	}
	return v
}
