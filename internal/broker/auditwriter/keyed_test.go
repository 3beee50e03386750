package auditwriter

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/wire"
)

var testKey = bytes.Repeat([]byte{7}, 32)

// keyedWorld is a data dir and a state dir (brokerd's, in a test's directory).
type keyedWorld struct {
	data    string
	anchors *Anchors
}

func newKeyedWorld(t *testing.T) keyedWorld {
	t.Helper()
	a, err := OpenAnchors(t.TempDir(), os.Getuid())
	if err != nil {
		t.Fatal(err)
	}
	return keyedWorld{data: t.TempDir(), anchors: a}
}

func (w keyedWorld) opts() Options {
	return Options{Path: logPath(w.data), Key: testKey, Anchors: w.anchors, Now: clock()}
}

func (w keyedWorld) check(t *testing.T) (audit.Report, error) {
	t.Helper()
	return Check(logPath(w.data), testKey, w.anchors)
}

// lines reads the live file's lines.
func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func writeLines(t *testing.T, path string, ls [][]byte) {
	t.Helper()
	var b []byte
	for _, l := range ls {
		b = append(append(b, l...), '\n')
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// rechain rewrites seq and prev of every line in order, as a program of the user can (it
// cannot make a MAC, so it keeps the old ones).
func rechain(t *testing.T, ls [][]byte) [][]byte {
	t.Helper()
	var out [][]byte
	prev := ""
	for i, l := range ls {
		r, err := audit.Parse(l)
		if err != nil {
			t.Fatal(err)
		}
		r.Seq, r.Prev = uint64(i+1), prev
		b, _ := json.Marshal(r)
		prev = audit.Hash(b)
		out = append(out, b)
	}
	return out
}

func TestKeyedAppendCheck(t *testing.T) {
	w := newKeyedWorld(t)
	l := openT(t, w.opts())
	appendN(t, l, 5)
	rep, err := w.check(t)
	if err != nil || !rep.Intact || rep.Records != 5 || rep.Legacy != 0 || rep.Anchored != 5 || !rep.Keyed {
		t.Fatalf("Check = %+v, %v", rep, err)
	}
	for _, ln := range lines(t, logPath(w.data)) {
		r, _ := audit.Parse(ln)
		if !audit.VerifyMAC(testKey, r) || audit.VerifyMAC(bytes.Repeat([]byte{8}, 32), r) {
			t.Fatalf("record %d: MAC %q does not verify with the key alone", r.Seq, r.MAC)
		}
	}
	// The plain chain still verifies (what a program of the user can check without the key).
	if n, err := audit.Verify(logPath(w.data)); n != 5 || err != nil {
		t.Fatalf("Verify = %d, %v", n, err)
	}
}

// TestKeyedTamperIsFoundAndNotContinued: every change a program of the user can make to a
// keyed log is found by Check with its kind and record, and brokerd, opening the log, moves
// it aside and starts the chain again from its anchor with a record of the finding, which
// Check keeps reporting.
func TestKeyedTamperIsFoundAndNotContinued(t *testing.T) {
	for _, c := range []struct {
		name string
		do   func(t *testing.T, path string)
		kind audit.Kind
		seq  uint64
	}{
		{"edit", func(t *testing.T, p string) {
			ls := lines(t, p)
			ls[2] = bytes.Replace(ls[2], []byte(`"allow"`), []byte(`"deny"`), 1)
			writeLines(t, p, ls)
		}, audit.KindEdited, 3},
		{"edit the newest", func(t *testing.T, p string) {
			ls := lines(t, p)
			ls[5] = bytes.Replace(ls[5], []byte(`"a5"`), []byte(`"zz"`), 1)
			writeLines(t, p, ls)
		}, audit.KindEdited, 6},
		{"drop", func(t *testing.T, p string) {
			ls := lines(t, p)
			writeLines(t, p, append(ls[:2:2], ls[3:]...))
		}, audit.KindDropped, 3},
		{"drop and rechain", func(t *testing.T, p string) {
			ls := lines(t, p)
			writeLines(t, p, rechain(t, append(ls[:2:2], ls[3:]...)))
		}, audit.KindRechained, 3},
		{"drop the one before the newest and rechain", func(t *testing.T, p string) {
			ls := lines(t, p)
			writeLines(t, p, rechain(t, append(ls[:4:4], ls[5])))
		}, audit.KindRechained, 5},
		{"reorder", func(t *testing.T, p string) {
			ls := lines(t, p)
			ls[2], ls[3] = ls[3], ls[2]
			writeLines(t, p, ls)
		}, audit.KindReordered, 4},
		{"reorder and rechain", func(t *testing.T, p string) {
			ls := lines(t, p)
			ls[2], ls[3] = ls[3], ls[2]
			writeLines(t, p, rechain(t, ls))
		}, audit.KindRechained, 3},
		{"truncate", func(t *testing.T, p string) {
			ls := lines(t, p)
			writeLines(t, p, ls[:4])
		}, audit.KindTruncated, 5},
		{"truncate mid-record", func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-20], 0o600)
		}, audit.KindTruncated, 6},
		{"append unkeyed", func(t *testing.T, p string) {
			ls := lines(t, p)
			r, _ := audit.Parse(ls[5])
			r.Seq, r.Prev, r.MAC, r.Alias = 7, audit.Hash(ls[5]), "", "forged"
			b, _ := json.Marshal(r)
			writeLines(t, p, append(ls, b))
		}, audit.KindInserted, 7},
		{"insert with a made-up MAC", func(t *testing.T, p string) {
			ls := lines(t, p)
			r, _ := audit.Parse(ls[2])
			r.Alias, r.MAC = "forged", strings.Repeat("0", 64)
			b, _ := json.Marshal(r)
			writeLines(t, p, append(ls[:3:3], append([][]byte{b}, ls[3:]...)...))
		}, audit.KindInserted, 3},
		{"delete", func(t *testing.T, p string) { os.Remove(p) }, audit.KindDeleted, 1},
		{"replace by an unkeyed log", func(t *testing.T, p string) {
			ls := lines(t, p)
			var out [][]byte
			for _, l := range ls {
				r, _ := audit.Parse(l)
				r.MAC = ""
				b, _ := json.Marshal(r)
				out = append(out, b)
			}
			writeLines(t, p, rechain(t, out))
		}, audit.KindReplaced, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newKeyedWorld(t)
			l := openT(t, w.opts())
			appendN(t, l, 6)
			l.Close()
			path := logPath(w.data)
			c.do(t, path)
			_, err := w.check(t)
			var ve *audit.VerifyError
			if !errors.As(err, &ve) || ve.Kind != c.kind || ve.Seq != c.seq {
				t.Fatalf("Check after %s = %v; want %s at record %d", c.name, err, c.kind, c.seq)
			}
			found, _ := os.ReadFile(path)
			// brokerd opens it: moves it aside, records the finding after its anchor (6).
			l2 := openT(t, w.opts())
			appendN(t, l2, 2)
			_, err = w.check(t)
			var fe *audit.FindingError
			if !errors.As(err, &fe) || fe.Kind != c.kind || fe.Seq != 7 || wire.CodeOf(err) != wire.CodeAuditTampered {
				t.Fatalf("Check after brokerd opened it = %v; want the finding (%s) as record 7", err, c.kind)
			}
			if kept, _ := filepath.Glob(path + ".tampered-*"); len(found) > 0 && (len(kept) != 1 || !bytes.Equal(mustRead(t, kept[0]), found)) {
				t.Fatalf("kept %v; want the file found, as it was", kept)
			}
			// The finding, brokerd's own important records found in those files (kept), the
			// two appends.
			ls := lines(t, path)
			for i, ln := range ls {
				r, _ := audit.Parse(ln)
				want := "kept"
				switch {
				case i == 0:
					want = "tamper"
				case i >= len(ls)-2:
					want = "release"
				}
				if r.Op != want {
					t.Fatalf("record %d of the new chain is %s, want %s", r.Seq, r.Op, want)
				}
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestKeyedAppendFindsATamperWhileOpen: a change made while brokerd runs is found at its
// next append, which is written after the finding, never after the change.
func TestKeyedAppendFindsATamperWhileOpen(t *testing.T) {
	w := newKeyedWorld(t)
	l := openT(t, w.opts())
	appendN(t, l, 4)
	path := logPath(w.data)
	ls := lines(t, path)
	writeLines(t, path, ls[:3]) // cut the newest record (a release, say)
	var ve *audit.VerifyError
	if _, err := w.check(t); !errors.As(err, &ve) || ve.Kind != audit.KindTruncated || !strings.Contains(ve.Reason, "brokerd keeps a copy of what is gone: record 4 (release/allow a3 at ") {
		t.Fatalf("Check of the cut log = %v; want it truncated, naming what went", err)
	}
	appendN(t, l, 1)
	_, err := w.check(t)
	var fe *audit.FindingError
	if !errors.As(err, &fe) || fe.Kind != audit.KindTruncated || fe.Seq != 5 {
		t.Fatalf("Check = %v; want the truncation found as record 5", err)
	}
	// The cut release is not lost: brokerd's anchor kept it, and it is back in the chain.
	ls = lines(t, path)
	if r, _ := audit.Parse(ls[0]); r.Op != "tamper" || len(ls) != 2+4 {
		t.Fatalf("%d records; want the finding, the 4 releases kept (the cut one too), and the append", len(ls))
	}
	if r, _ := audit.Parse(ls[4]); r.Op != "kept" || r.Alias != "a3" || !strings.HasPrefix(r.Detail, "record 4, release at ") {
		t.Fatalf("record after the kept ones = %+v; want the cut release, kept", r)
	}
}

// TestLegacyLogIsKeyed: a log written unkeyed is checked as the plain chain it is, anchored,
// and continued with a keyed "migrate" record; after that an edit of the old records shows.
func TestLegacyLogIsKeyed(t *testing.T) {
	w := newKeyedWorld(t)
	path := logPath(w.data)
	old := openT(t, Options{Path: path, Now: clock()})
	appendN(t, old, 3)
	old.Close()
	rep, err := w.check(t)
	if err != nil || !rep.Intact || rep.Legacy != 3 || rep.Records != 3 || rep.Anchored != 0 {
		t.Fatalf("Check of an unkeyed log = %+v, %v; want 3 legacy records, intact", rep, err)
	}
	l := openT(t, w.opts())
	appendN(t, l, 2)
	rep, err = w.check(t)
	if err != nil || !rep.Intact || rep.Legacy != 3 || rep.Records != 6 || rep.Anchored != 6 {
		t.Fatalf("Check after keying = %+v, %v", rep, err)
	}
	if r, _ := audit.Parse(lines(t, path)[3]); r.Op != "migrate" || !strings.Contains(r.Detail, "records 1-3") || r.MAC == "" {
		t.Fatalf("record 4 = %+v; want the migration", r)
	}
	ls := lines(t, path)
	ls[1] = bytes.Replace(ls[1], []byte(`"a1"`), []byte(`"zz"`), 1)
	writeLines(t, path, ls)
	var ve *audit.VerifyError
	if _, err := w.check(t); !errors.As(err, &ve) || ve.Kind != audit.KindEdited {
		t.Fatalf("Check after editing a legacy record = %v; want edited", err)
	}
	ls = rechain(t, ls[:3])
	writeLines(t, path, append(ls, lines(t, path)[3:]...))
	if _, err := w.check(t); !errors.As(err, &ve) {
		t.Fatalf("Check after rebuilding the legacy chain = %v; want tampered", err)
	}
}

// TestKeyedNewlineOnly: the newest record, anchored, whole but for its final newline, is a
// torn end (nothing of it is lost), and brokerd puts the newline back.
func TestKeyedNewlineOnly(t *testing.T) {
	w := newKeyedWorld(t)
	l := openT(t, w.opts())
	appendN(t, l, 3)
	l.Close()
	path := logPath(w.data)
	b := mustRead(t, path)
	os.WriteFile(path, b[:len(b)-1], 0o600)
	var te *audit.TornError
	if _, err := w.check(t); !errors.As(err, &te) || te.Seq != 3 {
		t.Fatalf("Check = %v; want torn at 3", err)
	}
	l2 := openT(t, w.opts())
	appendN(t, l2, 1)
	rep, err := w.check(t)
	if err != nil || len(rep.Recovered) != 1 || !strings.Contains(rep.Recovered[0].Detail, "restored the final newline of record 3") || rep.Records != 5 {
		t.Fatalf("Check after recovery = %+v, %v", rep, err)
	}
	if !bytes.HasPrefix(mustRead(t, path), b) {
		t.Fatal("the records before lost bytes")
	}
}

// TestKeyedTornEnd: a record cut short as it was written (never anchored) is AUDIT_TORN, and
// brokerd recovers it as before, keyed.
func TestKeyedTornEnd(t *testing.T) {
	w := newKeyedWorld(t)
	l := openT(t, w.opts())
	appendN(t, l, 3)
	l.Close()
	path := logPath(w.data)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"seq":4,"time":"2026-01-02T03:04:05Z","op":"rel`)
	f.Close()
	var te *audit.TornError
	if _, err := w.check(t); !errors.As(err, &te) || te.Seq != 4 {
		t.Fatalf("Check = %v; want torn at 4", err)
	}
	l2 := openT(t, w.opts())
	appendN(t, l2, 1)
	rep, err := w.check(t)
	if err != nil || !rep.Intact || len(rep.Recovered) != 1 || rep.Recovered[0].Seq != 4 || rep.Records != 5 {
		t.Fatalf("Check after recovery = %+v, %v", rep, err)
	}
}

// TestKeyedRotation: the anchor follows the oldest record kept; removing the oldest
// generation shows. A flood of refusals (what an agent can make brokerd write at will) rotates
// out everything but what matters: a release is copied forward (op "kept") generation after
// generation, and a finding stays in the anchor after its record went.
func TestKeyedRotation(t *testing.T) {
	w := newKeyedWorld(t)
	o := w.opts()
	o.MaxBytes, o.Keep = 2000, 2
	l := openT(t, o)
	if err := l.Append(Record{Op: "release", Decision: "allow", Alias: "precious", PID: 42}); err != nil {
		t.Fatal(err)
	}
	flood := func(n int) {
		for range n {
			if err := l.Append(Record{Op: "release", Decision: "deny", Code: "PEER_NOT_HOST", Alias: "flood", PID: 666}); err != nil {
				t.Fatal(err)
			}
		}
	}
	flood(200)
	rep, err := w.check(t)
	if err != nil || !rep.Intact || rep.First <= 1 {
		t.Fatalf("Check after rotations = %+v, %v", rep, err)
	}
	recs, _ := audit.List(logPath(w.data), time.Time{}, 0)
	kept := 0
	for _, r := range recs {
		if r.Op == "kept" && r.Alias == "precious" && r.Decision == "allow" && strings.HasPrefix(r.Detail, "record 1, release at ") {
			kept++
		}
	}
	if kept != 1 || recs[0].Seq == 1 {
		t.Fatalf("the release of record 1 after a flood: %d copies in %+v", kept, recs)
	}
	gens, _ := audit.Generations(logPath(w.data))
	oldest := logPath(w.data) + "." + strconv.Itoa(gens[len(gens)-1])
	saved := mustRead(t, oldest)
	os.Remove(oldest)
	var ve *audit.VerifyError
	if _, err := w.check(t); !errors.As(err, &ve) || ve.Kind != audit.KindDropped || ve.Seq != rep.First {
		t.Fatalf("Check without the oldest generation = %v; want dropped from %d", err, rep.First)
	}
	os.WriteFile(oldest, saved, 0o600)
	// A finding, then a flood: the finding's record rotates out, the finding stays.
	ls := lines(t, logPath(w.data))
	writeLines(t, logPath(w.data), ls[:len(ls)-1])
	flood(300)
	var fe *audit.FindingError
	if _, err := w.check(t); !errors.As(err, &fe) || fe.Kind != audit.KindTruncated {
		t.Fatalf("Check after a finding and a flood = %v; want the finding (truncated)", err)
	}
	recs, _ = audit.List(logPath(w.data), time.Time{}, 0)
	if recs[0].Op == "tamper" {
		t.Fatal("the flood did not rotate the finding's record out: the test shows nothing")
	}
}

// TestKeyedSymlinkedDir: a brokerd opening the log through another path to the same directory
// anchors the same log; replacing the data dir by a symlink elsewhere shows.
func TestKeyedSymlinkedDir(t *testing.T) {
	w := newKeyedWorld(t)
	l := openT(t, w.opts())
	appendN(t, l, 2)
	l.Close()
	alias := filepath.Join(t.TempDir(), "alias")
	os.Symlink(w.data, alias)
	la := openT(t, Options{Path: logPath(alias), Key: testKey, Anchors: w.anchors, Now: clock()})
	appendN(t, la, 2)
	la.Close()
	os.WriteFile(logPath(w.data), bytes.Join(lines(t, logPath(w.data))[:3], []byte("\n")), 0o600) // cut the record written through the alias
	var ve *audit.VerifyError
	if _, err := w.check(t); !errors.As(err, &ve) || ve.Kind != audit.KindTruncated {
		t.Fatalf("Check = %v; want truncated (the alias anchors the same log)", err)
	}
	// The data dir itself replaced by a symlink to a fresh keyed log of the user's.
	w2 := newKeyedWorld(t)
	w2.anchors = w.anchors
	other := openT(t, w2.opts())
	appendN(t, other, 5)
	other.Close()
	moved := w.data + ".moved"
	os.Rename(w.data, moved)
	os.Symlink(w2.data, w.data)
	if _, err := w.check(t); !errors.As(err, &ve) || (ve.Kind != audit.KindReplaced && ve.Kind != audit.KindTruncated) {
		t.Fatalf("Check through a swapped directory = %v; want replaced", err)
	}
}

// TestAnchorSlots: an update cut short leaves the other slot whole.
func TestAnchorSlots(t *testing.T) {
	w := newKeyedWorld(t)
	l := openT(t, w.opts())
	appendN(t, l, 3)
	l.Close()
	name := w.anchors.fileOf(logPath(w.data))
	b := mustRead(t, name)
	// Tear the newest slot (slot of n): the other holds the record before.
	a, _ := w.anchors.Get(logPath(w.data))
	var newest int
	for i := range 2 {
		if s := decodeSlot(b[i*anchorSlot : (i+1)*anchorSlot]); s != nil && s.Anchor.Seq == a.Seq {
			newest = i
		}
	}
	copy(b[newest*anchorSlot+10:], "xxxx")
	os.WriteFile(name, b, 0o600)
	if a2, err := w.anchors.Get(logPath(w.data)); err != nil || a2.Seq != a.Seq-1 {
		t.Fatalf("anchor after a torn slot = %+v, %v; want record %d", a2, err, a.Seq-1)
	}
	// The log is then one record ahead of its anchor: its MAC vouches for it.
	if rep, err := w.check(t); err != nil || !rep.Intact {
		t.Fatalf("Check = %+v, %v", rep, err)
	}
	l2 := openT(t, w.opts())
	appendN(t, l2, 1)
	if a3, _ := w.anchors.Get(logPath(w.data)); a3.Seq != 4 {
		t.Fatalf("anchor = %+v; want record 4", a3)
	}
}

// TestAnchorsRefuseWhatBrokerdDidNotMake: an anchor directory that is not the user's alone, or
// an anchor file that is not as brokerd writes it, is refused (AUDIT_UNAVAILABLE).
func TestAnchorsRefuseWhatBrokerdDidNotMake(t *testing.T) {
	root := t.TempDir()
	user := filepath.Join(root, strconv.Itoa(os.Getuid()))
	os.Mkdir(user, 0o755)
	if _, err := OpenAnchors(root, os.Getuid()); err == nil {
		t.Fatal("an anchors directory open to others was used")
	}
	os.Chmod(user, 0o700)
	a, err := OpenAnchors(root, os.Getuid())
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	os.WriteFile(a.fileOf(logPath(data)), []byte("junk"), 0o600)
	if _, err := Open(Options{Path: logPath(data), Key: testKey, Anchors: a}); err == nil || !strings.Contains(err.Error(), "anchor") {
		t.Fatalf("Open with a junk anchor = %v", err)
	}
}

// TestKeyedLogNotAFile: the log replaced by a symlink or a FIFO is "replaced", and brokerd
// moves it aside and goes on (it neither follows nor waits). A file made unreadable is the
// same (tests/audit_tamper_e2e_test.go, as uid 65534: root reads it).
func TestKeyedLogNotAFile(t *testing.T) {
	for name, do := range map[string]func(p string){
		"symlink": func(p string) { os.Rename(p, p+".real"); os.Symlink(p+".real", p) },
		"fifo":    func(p string) { os.Remove(p); syscall.Mkfifo(p, 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			w := newKeyedWorld(t)
			l := openT(t, w.opts())
			appendN(t, l, 2)
			l.Close()
			do(logPath(w.data))
			var ve *audit.VerifyError
			if _, err := w.check(t); !errors.As(err, &ve) || ve.Kind != audit.KindReplaced {
				t.Fatalf("Check = %v; want replaced", err)
			}
			l2 := openT(t, w.opts())
			appendN(t, l2, 1)
			var fe *audit.FindingError
			if _, err := w.check(t); !errors.As(err, &fe) || fe.Kind != audit.KindReplaced {
				t.Fatalf("Check after brokerd went on = %v; want the finding", err)
			}
		})
	}
}

// TestElsewhere: a release written to another log of the user's (a brokerd started with
// another data dir) is named by the check of this one.
func TestElsewhere(t *testing.T) {
	w := newKeyedWorld(t)
	l := openT(t, w.opts())
	appendN(t, l, 1)
	other := keyedWorld{data: t.TempDir(), anchors: w.anchors}
	lo := openT(t, other.opts())
	if err := lo.Append(Record{Op: "release", Decision: "allow", Alias: "elsewhere", PID: 7}); err != nil {
		t.Fatal(err)
	}
	if err := lo.Append(Record{Op: "release", Decision: "deny", Code: "PEER_NOT_HOST", PID: 7}); err != nil {
		t.Fatal(err)
	}
	rep, err := w.check(t)
	if err != nil || !rep.Intact || len(rep.Elsewhere) != 1 || rep.Elsewhere[0].Record.Alias != "elsewhere" || rep.Elsewhere[0].Log != logPath(other.data) {
		t.Fatalf("Check = %+v, %v; want the release in the other log named", rep, err)
	}
	if rep, _ := other.check(t); len(rep.Elsewhere) != 1 || rep.Elsewhere[0].Record.Alias != "a0" {
		t.Fatalf("the other log's check names %+v; want this log's release", rep.Elsewhere)
	}
}

// TestKeyedTwoWritersShareOneChain: two brokerds on one data dir (one through a symlink to it)
// extend one keyed chain and one anchor, rotating, and neither takes the other's records for
// a change.
func TestKeyedTwoWritersShareOneChain(t *testing.T) {
	w := newKeyedWorld(t)
	alias := filepath.Join(t.TempDir(), "alias")
	os.Symlink(w.data, alias)
	oa, ob := w.opts(), w.opts()
	ob.Path = logPath(alias)
	oa.MaxBytes, ob.MaxBytes, oa.Keep, ob.Keep = 4000, 4000, 8, 8
	a, b := openT(t, oa), openT(t, ob)
	var wg sync.WaitGroup
	for _, l := range []*Log{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				if err := l.Append(Record{Op: "release", Decision: "deny", Code: "PEER_NOT_HOST", Alias: "x"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	rep, err := w.check(t)
	if err != nil || rep.Last != 60 || rep.Anchored != 60 {
		t.Fatalf("Check = %+v, %v; want 60 records in one chain, anchored", rep, err)
	}
	if kept, _ := filepath.Glob(logPath(w.data) + ".tampered-*"); len(kept) != 0 {
		t.Fatalf("a writer took the other's records for a change: %v", kept)
	}
}
