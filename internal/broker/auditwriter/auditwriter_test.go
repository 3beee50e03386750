package auditwriter

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/wire"
)

// fileName is the log's name in the data dir (internal/xdg names it there).
const fileName = "audit.jsonl"

func logPath(dir string) string { return filepath.Join(dir, fileName) }

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func clock() func() time.Time {
	var mu sync.Mutex
	n := 0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return t0.Add(time.Duration(n) * time.Minute)
	}
}

func openT(t *testing.T, o Options) *Log {
	t.Helper()
	if o.Now == nil {
		o.Now = clock()
	}
	l, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func appendN(t *testing.T, l *Log, n int) {
	t.Helper()
	for i := range n {
		if err := l.Append(Record{Op: "release", Decision: "allow", Alias: fmt.Sprintf("a%d", i), PID: 42}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAppendVerify(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l := openT(t, Options{Path: logPath(dir)})
	appendN(t, l, 5)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	n, err := audit.Verify(logPath(dir))
	if err != nil || n != 5 {
		t.Fatalf("Verify = %d, %v; want 5, nil", n, err)
	}
	recs, err := audit.List(logPath(dir), time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Seq != 1 || recs[0].Prev != "" || recs[4].Seq != 5 || recs[1].Prev == "" {
		t.Fatalf("bad chain: %+v", recs)
	}
	if !recs[0].Time.Equal(t0.Add(time.Minute)) {
		t.Fatalf("time = %v", recs[0].Time)
	}
	if err := l.Append(Record{Op: "add", Decision: "ok"}); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Append after Close = %v", err)
	}
}

func TestModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l := openT(t, Options{Path: logPath(dir)})
	appendN(t, l, 1)
	for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, logPath(dir): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s mode = %v, want %v", path, fi.Mode(), want)
		}
	}
}

// TestTwoWritersShareOneChain: two Logs on one directory (two brokerds sharing a data dir)
// append concurrently and still form one valid chain.
func TestTwoWritersShareOneChain(t *testing.T) {
	dir := t.TempDir()
	a := openT(t, Options{Path: logPath(dir), MaxBytes: 2000, Keep: 50})
	b := openT(t, Options{Path: logPath(dir), MaxBytes: 2000, Keep: 50})
	var wg sync.WaitGroup
	for _, l := range []*Log{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				if err := l.Append(Record{Op: "release", Decision: "allow", Alias: "x"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	n, err := audit.Verify(logPath(dir))
	if err != nil || n != 60 {
		t.Fatalf("Verify = %d, %v; want 60 records in one chain", n, err)
	}
}

func TestResume(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, Options{Path: logPath(dir)})
	appendN(t, l, 3)
	l.Close()
	l = openT(t, Options{Path: logPath(dir)})
	appendN(t, l, 2)
	l.Close()
	if n, err := audit.Verify(logPath(dir)); err != nil || n != 5 {
		t.Fatalf("Verify = %d, %v", n, err)
	}
}

// tear appends the start of a record with no newline, as a power loss mid-write leaves it.
func tear(t *testing.T, path, tail string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(tail); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkTornKept asserts that exactly one torn-record file sits beside the log, 0600, holding
// exactly tail, and returns its name.
func checkTornKept(t *testing.T, dir, tail string) string {
	t.Helper()
	kept, err := filepath.Glob(filepath.Join(dir, fileName+".torn-*"))
	if err != nil || len(kept) != 1 {
		t.Fatalf("torn-record files %v, %v; want one", kept, err)
	}
	got, err := os.ReadFile(kept[0])
	if err != nil || string(got) != tail {
		t.Fatalf("%s holds %q, %v; want %q", kept[0], got, err, tail)
	}
	if fi, err := os.Stat(kept[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, %v; want mode 0600", kept[0], fi.Mode(), err)
	}
	return filepath.Base(kept[0])
}

func TestResumeTorn(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, Options{Path: logPath(dir)})
	appendN(t, l, 2)
	l.Close()
	whole, err := os.ReadFile(logPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	const tail = `{"seq":3,"ti`
	tear(t, logPath(dir), tail)
	var te *audit.TornError
	if _, err := audit.Verify(logPath(dir)); !errors.As(err, &te) || te.Line != 3 || te.Seq != 3 || te.Bytes != len(tail) || te.Offset != int64(len(whole)) {
		t.Fatalf("Verify of the torn log = %v", err)
	}

	// Open sets the torn bytes aside, cuts the log back to its two whole records and records
	// the recovery as record 3; the chain goes on from there.
	l = openT(t, Options{Path: logPath(dir)})
	kept := checkTornKept(t, dir, tail)
	appendN(t, l, 1)
	l.Close()
	data, err := os.ReadFile(logPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, whole) || bytes.Count(data, []byte("\n")) != 4 || bytes.Contains(data, []byte(tail+"\n")) {
		t.Fatalf("log after recovery:\n%s", data)
	}
	if n, err := audit.Verify(logPath(dir)); err != nil || n != 4 {
		t.Fatalf("Verify after recovery = %d, %v; want 4 records", n, err)
	}
	recs, err := audit.List(logPath(dir), time.Time{}, 10)
	if err != nil || len(recs) != 4 {
		t.Fatalf("List = %d records, %v", len(recs), err)
	}
	want := fmt.Sprintf("cut a torn last record (12 bytes at offset %d, no final newline) from audit.jsonl; its bytes are in %s", len(whole), kept)
	if r := recs[2]; r.Seq != 3 || r.Op != "recover" || r.Decision != "ok" || r.Detail != want {
		t.Fatalf("record 3 = %+v; want op recover with detail %q", r, want)
	}
	if r := recs[3]; r.Seq != 4 || r.Op != "release" {
		t.Fatalf("record 4 = %+v", r)
	}
}

func TestResumeTornFirstRecord(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(logPath(dir), []byte(`{"seq":1,"time":"2026-`), 0o600); err != nil {
		t.Fatal(err)
	}
	l := openT(t, Options{Path: logPath(dir)})
	checkTornKept(t, dir, `{"seq":1,"time":"2026-`)
	l.Close()
	recs, err := audit.List(logPath(dir), time.Time{}, 10)
	if err != nil || len(recs) != 1 || recs[0].Seq != 1 || recs[0].Prev != "" || recs[0].Op != "recover" {
		t.Fatalf("List = %+v, %v; want the recovery as record 1", recs, err)
	}
	if n, err := audit.Verify(logPath(dir)); err != nil || n != 1 {
		t.Fatalf("Verify = %d, %v", n, err)
	}
}

// A writer that finds another writer's record torn (two brokerds on one data dir, one of them
// cut off) recovers the same way before its own record.
func TestAppendAfterTorn(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, Options{Path: logPath(dir)})
	appendN(t, l, 2)
	tear(t, logPath(dir), `{"seq":3`)
	appendN(t, l, 1)
	l.Close()
	checkTornKept(t, dir, `{"seq":3`)
	recs, err := audit.List(logPath(dir), time.Time{}, 10)
	if err != nil || len(recs) != 4 || recs[2].Op != "recover" || recs[3].Op != "release" || recs[3].Seq != 4 {
		t.Fatalf("List = %+v, %v", recs, err)
	}
	if n, err := audit.Verify(logPath(dir)); err != nil || n != 4 {
		t.Fatalf("Verify = %d, %v", n, err)
	}
}

// What a crash cannot leave is refused, and the file left as it is: a whole last line that is
// not a record, or a torn rotated generation (rotation renames a file only after its last
// record was fsynced).
func TestResumeRefusesWhatACrashCannotLeave(t *testing.T) {
	for _, c := range []struct {
		name, file string
		mess       func(t *testing.T, dir string)
	}{
		{"whole line not a record", fileName, func(t *testing.T, dir string) { tear(t, logPath(dir), "not a record\n") }},
		{"torn rotated generation", fileName + ".1", func(t *testing.T, dir string) {
			tear(t, logPath(dir), `{"seq":3`)
			if err := os.Rename(logPath(dir), logPath(dir)+".1"); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			l := openT(t, Options{Path: logPath(dir)})
			appendN(t, l, 2)
			l.Close()
			c.mess(t, dir)
			before := readAll(t, dir)
			if l, err := Open(Options{Path: logPath(dir)}); err == nil {
				l.Close()
				t.Fatal("Open resumed")
			} else if code := wire.CodeOf(err); code != wire.CodeAuditTampered {
				t.Fatalf("Open = %v (code %q); want AUDIT_TAMPERED", err, code)
			} else if h := wire.From(err).Hint; !strings.Contains(h, "headless audit verify") || !strings.Contains(h, "the last record of "+c.file+" ") {
				t.Fatalf("hint %q; want it to name %s", h, c.file)
			}
			if after := readAll(t, dir); !maps.Equal(before, after) {
				t.Fatalf("files changed: %v → %v", before, after)
			}
		})
	}
}

// readAll maps each file in dir but the lock to its bytes.
func readAll(t *testing.T, dir string) map[string]string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, de := range des {
		if de.Name() == lockName {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[de.Name()] = string(b)
	}
	return m
}

// lines returns the five lines of a fresh log in dir.
func fiveLines(t *testing.T, dir string) [][]byte {
	t.Helper()
	l := openT(t, Options{Path: logPath(dir)})
	appendN(t, l, 5)
	l.Close()
	data, err := os.ReadFile(logPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

func TestTamper(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(ls [][]byte) [][]byte
		line     int
		seq      uint64
		contains string
	}{
		{"edit 3", func(ls [][]byte) [][]byte {
			ls[2] = bytes.Replace(ls[2], []byte(`"allow"`), []byte(`"deny"`), 1)
			return ls
		}, 3, 3, "edited"},
		{"edit 3 seq only", func(ls [][]byte) [][]byte {
			ls[2] = bytes.Replace(ls[2], []byte(`"seq":3`), []byte(`"seq":9`), 1)
			return ls
		}, 3, 9, "edited"},
		{"edit 1", func(ls [][]byte) [][]byte {
			ls[0] = bytes.Replace(ls[0], []byte(`"a0"`), []byte(`"zz"`), 1)
			return ls
		}, 1, 1, "edited"},
		{"unknown field", func(ls [][]byte) [][]byte {
			ls[2] = bytes.Replace(ls[2], []byte(`"seq":3`), []byte(`"seq":3,"x":1`), 1)
			return ls
		}, 3, 3, "malformed"},
		{"duplicate key", func(ls [][]byte) [][]byte {
			ls[2] = bytes.Replace(ls[2], []byte(`"seq":3`), []byte(`"seq":3,"seq":3`), 1)
			return ls
		}, 3, 3, "malformed"},
		{"swap 2 3", func(ls [][]byte) [][]byte {
			ls[1], ls[2] = ls[2], ls[1]
			return ls
		}, 2, 3, "out of order"},
		{"insert naive", func(ls [][]byte) [][]byte {
			forged := []byte(`{"seq":3,"time":"2026-01-02T03:04:05Z","op":"release","decision":"allow","prev":""}` + "\n")
			return append(ls[:2:2], append([][]byte{forged}, ls[2:]...)...)
		}, 3, 3, "inserted"},
		{"insert chained", func(ls [][]byte) [][]byte {
			forged := []byte(`{"seq":3,"time":"2026-01-02T03:04:05Z","op":"release","decision":"allow","prev":"` +
				audit.Hash(bytes.TrimSuffix(ls[1], []byte("\n"))) + `"}` + "\n")
			return append(ls[:2:2], append([][]byte{forged}, ls[2:]...)...)
		}, 3, 3, "inserted"},
		{"delete 3", func(ls [][]byte) [][]byte {
			return append(ls[:2:2], ls[3:]...)
		}, 3, 3, "deleted"},
		{"delete 1", func(ls [][]byte) [][]byte {
			return ls[1:]
		}, 1, 1, "first record"},
		{"delete 2 3", func(ls [][]byte) [][]byte {
			return append(ls[:1:1], ls[3:]...)
		}, 2, 2, "records 2-3 deleted"},
		{"duplicate 2", func(ls [][]byte) [][]byte {
			return append(ls[:3:3], append([][]byte{ls[1]}, ls[3:]...)...)
		}, 4, 2, "inserted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ls := tt.edit(fiveLines(t, dir))
			if err := os.WriteFile(logPath(dir), bytes.Join(ls, nil), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := audit.Verify(logPath(dir))
			var ve *audit.VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Verify = %v, want *audit.VerifyError", err)
			}
			if ve.Line != tt.line || ve.Seq != tt.seq || !strings.Contains(ve.Reason, tt.contains) {
				t.Fatalf("Verify = %v; want line %d seq %d reason containing %q", ve, tt.line, tt.seq, tt.contains)
			}
		})
	}
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, Options{Path: logPath(dir), MaxBytes: 400, Keep: 2})
	appendN(t, l, 40)
	l.Close()
	des, _ := os.ReadDir(dir)
	var logs []string
	for _, de := range des {
		if strings.HasPrefix(de.Name(), fileName) {
			logs = append(logs, de.Name())
		}
	}
	if len(logs) != 3 {
		t.Fatalf("files = %v, want 3", logs)
	}
	n, err := audit.Verify(logPath(dir))
	if err != nil || n == 0 || n >= 40 {
		t.Fatalf("Verify = %d, %v", n, err)
	}
	recs, err := audit.List(logPath(dir), time.Time{}, 0)
	if err != nil || recs[len(recs)-1].Seq != 40 || recs[0].Seq != uint64(41-n) {
		t.Fatalf("List = %d records, %v", len(recs), err)
	}
	// Resume across rotation, also from an empty live file.
	l = openT(t, Options{Path: logPath(dir), MaxBytes: 400, Keep: 2})
	appendN(t, l, 3)
	l.Close()
	if _, err := audit.Verify(logPath(dir)); err != nil {
		t.Fatal(err)
	}
	// Deleting the middle generation breaks the chain.
	if err := os.Remove(logPath(dir) + ".1"); err != nil {
		t.Fatal(err)
	}
	var ve *audit.VerifyError
	if _, err := audit.Verify(logPath(dir)); !errors.As(err, &ve) || !strings.Contains(ve.Reason, "deleted") {
		t.Fatalf("Verify after removing .1 = %v", err)
	}
}

func TestList(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, Options{Path: logPath(dir)})
	appendN(t, l, 10) // times t0+1m … t0+10m
	l.Close()
	recs, err := audit.List(logPath(dir), t0.Add(4*time.Minute), 0)
	if err != nil || len(recs) != 7 || recs[0].Seq != 4 || recs[6].Seq != 10 {
		t.Fatalf("List since = %v, %v", recs, err)
	}
	recs, err = audit.List(logPath(dir), t0.Add(4*time.Minute), 3)
	if err != nil || len(recs) != 3 || recs[0].Seq != 8 || recs[2].Seq != 10 {
		t.Fatalf("List since max = %v, %v", recs, err)
	}
	if recs, err := audit.List(logPath(t.TempDir()), time.Time{}, 5); err != nil || len(recs) != 0 {
		t.Fatalf("List empty = %v, %v", recs, err)
	}
}

func TestBound(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, Options{Path: logPath(dir)})
	long := strings.Repeat("é", 300) // 600 bytes
	if err := l.Append(Record{Op: "add", Decision: "ok", Origin: long, Exe: "\xff\xfe"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	recs, err := audit.List(logPath(dir), time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs[0].Origin) > MaxField || !strings.HasSuffix(recs[0].Origin, "…") || !strings.HasPrefix(long, strings.TrimSuffix(recs[0].Origin, "…")) || recs[0].Exe != "\uFFFD" {
		t.Fatalf("record not bounded: %d bytes, exe %q", len(recs[0].Origin), recs[0].Exe)
	}
	if _, err := audit.Verify(logPath(dir)); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, Options{Path: logPath(dir), MaxBytes: 4096, Keep: 100})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				if err := l.Append(Record{Op: "release", Decision: "deny", Code: "PRESENCE_DENIED"}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	l.Close()
	if n, err := audit.Verify(logPath(dir)); err != nil || n != 200 {
		t.Fatalf("Verify = %d, %v", n, err)
	}
}

// TestChainsAreBoundedAndRoundTrip: the requester's chain and the host-reported agent chain
// are kept (bounded, printable) and survive List and Verify.
func TestChainsAreBoundedAndRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l := openT(t, Options{Path: logPath(dir)})
	long := strings.Repeat("x", 600)
	var chain []procstat.Proc
	for i := range 9 {
		chain = append(chain, procstat.Proc{PID: 100 + i, Exe: "/bin/\x1bevil" + long, Comm: "c\nomm-too-long-for-the-kernel"})
	}
	r := Record{Op: "release", Decision: "deny", Code: "PEER_NOT_HOST", Chain: chain, Agent: chain[:2],
		Purpose: "verify", Path: "/login", Field: "Password", Listener: "pid 7 /usr/bin/python3 (uid 0)"}
	if err := l.Append(r); err != nil {
		t.Fatal(err)
	}
	got, err := audit.List(logPath(dir), time.Time{}, 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("List = %v, %v", got, err)
	}
	g := got[0]
	if len(g.Chain) != MaxChain || len(g.Agent) != 2 || g.Chain[0].PID != 100 || g.Path != "/login" || g.Field != "Password" ||
		g.Purpose != "verify" || g.Listener != r.Listener {
		t.Fatalf("record = %+v", g)
	}
	for _, p := range append(g.Chain, g.Agent...) {
		if len(p.Exe) > procstat.MaxExe || len(p.Comm) > procstat.MaxComm || !procstat.Printable(p.Exe) || !procstat.Printable(p.Comm) {
			t.Errorf("unbounded or unprintable %+v", p)
		}
	}
	if n, err := audit.Verify(logPath(dir)); err != nil || n != 1 {
		t.Fatalf("Verify = %d, %v", n, err)
	}
}

// BenchmarkAppend is one record appended and made durable, as brokerd does per decision
// (on the test's temp dir's filesystem: its fsync decides the figure).
func BenchmarkAppend(b *testing.B) {
	l, err := Open(Options{Path: filepath.Join(b.TempDir(), fileName)})
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

// A last record whole but for its newline (the next record of the chain: a power loss can
// leave it, or a process that cut one byte) is kept: its newline is restored, and the recovery
// says so. Nothing is set aside.
func TestResumeRestoresANewline(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, Options{Path: logPath(dir)})
	appendN(t, l, 3)
	l.Close()
	whole, err := os.ReadFile(logPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logPath(dir), whole[:len(whole)-1], 0o600); err != nil {
		t.Fatal(err)
	}
	l = openT(t, Options{Path: logPath(dir)})
	l.Close()
	if kept, _ := filepath.Glob(filepath.Join(dir, fileName+".torn-*")); len(kept) != 0 {
		t.Fatalf("set aside: %v; want nothing", kept)
	}
	data, err := os.ReadFile(logPath(dir))
	if err != nil || !bytes.HasPrefix(data, whole) {
		t.Fatalf("log after recovery lost its records:\n%s", data)
	}
	recs, err := audit.List(logPath(dir), time.Time{}, 10)
	if err != nil || len(recs) != 4 || recs[2].Op != "release" || recs[3].Op != "recover" ||
		recs[3].Detail != "restored the final newline of record 3 (release/allow), whole but for it" {
		t.Fatalf("List = %+v, %v", recs, err)
	}
	if n, err := audit.Verify(logPath(dir)); err != nil || n != 4 {
		t.Fatalf("Verify = %d, %v", n, err)
	}
}

// At most maxTorn torn-record files are kept, the newest; every recovery stays in the chain.
func TestTornFilesAreBounded(t *testing.T) {
	dir := t.TempDir()
	clk := clock()
	l := openT(t, Options{Path: logPath(dir), Now: clk})
	appendN(t, l, 1)
	l.Close()
	for i := range maxTorn + 2 {
		tear(t, logPath(dir), fmt.Sprintf(`{"seq":%d`, i))
		l = openT(t, Options{Path: logPath(dir), Now: clk})
		l.Close()
	}
	kept, _ := filepath.Glob(filepath.Join(dir, fileName+".torn-*"))
	if len(kept) != maxTorn {
		t.Fatalf("torn-record files %v; want the newest %d", kept, maxTorn)
	}
	for _, k := range kept {
		if b, _ := os.ReadFile(k); string(b) == `{"seq":0` || string(b) == `{"seq":1` {
			t.Errorf("an oldest torn file was kept: %s holds %q", k, b)
		}
	}
	if n, err := audit.Verify(logPath(dir)); err != nil || n != 1+maxTorn+2 {
		t.Fatalf("Verify = %d, %v; want every recovery in the chain", n, err)
	}
}

// A file that cannot be read is not called tampered: it is an I/O error, and its code says so.
func TestResumeIOErrorIsNotTampered(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(logPath(dir)+".1", 0o700); err != nil {
		t.Fatal(err)
	}
	if l, err := Open(Options{Path: logPath(dir)}); err == nil {
		l.Close()
		t.Fatal("Open resumed from a generation it cannot read")
	} else if code := wire.CodeOf(err); code == wire.CodeAuditTampered {
		t.Fatalf("Open = %v: an unreadable file called tampered", err)
	}
}
