package auditwriter

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/wire"
)

// TestTornTailAtEveryOffset cuts a log the package wrote at every byte of its last record, at
// every record boundary and at random offsets before them, as a kill -9 or a power loss in the
// middle of an append leaves it, then does what brokerd does at start (Open with the path
// only, then Append). Each time:
//   - before the reopen, Verify says the end is torn (a *audit.TornError, AUDIT_TORN, naming
//     the offset and length of the cut bytes and counting the whole records before them): not
//     silence, and not AUDIT_TAMPERED; at a record boundary, the log is intact;
//   - Open succeeds, and every whole record before the cut is kept byte for byte;
//   - the cut is in the chain as a "recover" record naming its offset and length, which
//     Recoveries reports, and the cut bytes are kept aside; a last record whole but for its
//     newline gets it back and is kept;
//   - the records appended after the reopen verify;
//   - an edited byte in any whole record that a later whole record commits to is
//     AUDIT_TAMPERED, before the reopen (torn end or not) and after it.
func TestTornTailAtEveryOffset(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
		n    int
	}{
		{"one file", Options{}, 6},
		{"after rotation", Options{MaxBytes: 1000, Keep: 50}, 14},
	} {
		t.Run(c.name, func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, seed>>1))
			src := t.TempDir()
			o := c.o
			o.Path = logPath(src)
			l := openT(t, o)
			appendN(t, l, c.n)
			l.Close()
			gens := readGens(t, src)
			if c.o.MaxBytes > 0 && len(gens) == 0 {
				t.Fatal("no rotated generation: the case tests nothing more than one file")
			}
			live, err := os.ReadFile(logPath(src))
			if err != nil {
				t.Fatal(err)
			}
			starts := []int{0} // where each line of the live file starts, and its end
			for i, b := range live {
				if b == '\n' {
					starts = append(starts, i+1)
				}
			}
			if len(starts) < 3 {
				t.Fatalf("the live file holds %d records; want at least 2", len(starts)-1)
			}
			last := starts[len(starts)-2]
			cuts := slices.Clone(starts)
			for cut := last + 1; cut < len(live); cut++ {
				cuts = append(cuts, cut)
			}
			for range 20 {
				cuts = append(cuts, 1+rng.IntN(last-1))
			}
			for _, cut := range cuts {
				checkCut(t, rng, o, gens, live, cut)
				if t.Failed() {
					t.Fatalf("cut at offset %d of %d (seed %d)", cut, len(live), seed)
				}
			}
		})
	}
}

// gen is one rotated generation: its name in the data dir and its bytes.
type gen struct {
	name string
	data []byte
}

// readGens returns the rotated generations beside the log in dir, oldest first.
func readGens(t *testing.T, dir string) []gen {
	t.Helper()
	ns, err := audit.Generations(logPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	var out []gen
	for _, n := range slices.Backward(ns) {
		name := fileName + "." + strconv.Itoa(n)
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, gen{name, b})
	}
	return out
}

// stream is every generation of the log in dir, oldest first, then the live file: the chain's
// bytes in order, whatever rotation did.
func stream(t *testing.T, dir string) []byte {
	t.Helper()
	var out []byte
	for _, g := range readGens(t, dir) {
		out = append(out, g.data...)
	}
	b, err := os.ReadFile(logPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	return append(out, b...)
}

// checkCut lays out the generations and the live file cut to its first cut bytes in a new
// directory, and checks what TestTornTailAtEveryOffset says.
func checkCut(t *testing.T, rng *rand.Rand, o Options, gens []gen, live []byte, cut int) {
	t.Helper()
	dir := t.TempDir()
	o.Path, o.Now = logPath(dir), nil // brokerd's clock: torn files are named by it
	var before []byte
	whole := 0 // records before the cut
	for _, g := range gens {
		if err := os.WriteFile(filepath.Join(dir, g.name), g.data, 0o600); err != nil {
			t.Fatal(err)
		}
		before = append(before, g.data...)
		whole += bytes.Count(g.data, []byte("\n"))
	}
	if err := os.WriteFile(o.Path, live[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	start := bytes.LastIndexByte(live[:cut], '\n') + 1 // where the cut bytes start
	torn := live[start:cut]
	restored := len(torn) > 0 && live[cut] == '\n' // the last record whole but for its newline
	before = append(before, live[:start]...)
	whole += bytes.Count(live[:start], []byte("\n"))

	n, err := audit.Verify(o.Path)
	if len(torn) == 0 {
		if err != nil || n != whole {
			t.Errorf("Verify of a log cut at a record boundary = %d, %v; want %d records intact", n, err, whole)
		}
	} else {
		var te *audit.TornError
		var ve *audit.VerifyError
		switch {
		case errors.As(err, &ve) || wire.CodeOf(err) == wire.CodeAuditTampered:
			t.Errorf("Verify of a torn end = %v (code %s); a torn end is not an edit", err, wire.CodeOf(err))
		case !errors.As(err, &te) || wire.CodeOf(err) != wire.CodeAuditTorn:
			t.Errorf("Verify of a torn end = %d, %v (code %s); want a *audit.TornError, AUDIT_TORN", n, err, wire.CodeOf(err))
		case te.Offset != int64(start) || te.Bytes != len(torn) || te.Seq != uint64(whole+1) || te.File != o.Path || n != whole:
			t.Errorf("Verify of a torn end = %d, %+v; want %d whole records, then record %d torn: %d bytes at offset %d of %s",
				n, te, whole, whole+1, len(torn), start, o.Path)
		case wire.From(err).Hint == "" || !strings.Contains(err.Error(), fmt.Sprintf("%d bytes at offset %d", len(torn), start)):
			t.Errorf("Verify of a torn end = %q, hint %q; want the offset and length, and a hint", err, wire.From(err).Hint)
		}
	}
	checkEditIsTampered(t, rng, dir)

	l, err := Open(o)
	if err != nil {
		t.Fatalf("Open of a log cut at offset %d: %v (code %s)", cut, err, wire.CodeOf(err))
	}
	for i := range 2 {
		if err := l.Append(Record{Op: "release", Decision: "allow", Alias: fmt.Sprintf("after%d", i)}); err != nil {
			l.Close()
			t.Fatalf("Append after the reopen: %v", err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	after := stream(t, dir)
	if restored {
		before = append(before, torn...)
		before = append(before, '\n')
	}
	if !bytes.HasPrefix(after, before) {
		t.Errorf("the whole records before the cut were not kept byte for byte:\nbefore %q\nafter  %q", before, after)
	}
	want := whole + 2
	if len(torn) > 0 {
		want++ // the recovery
	}
	if restored {
		want++ // the record whole but for its newline
	}
	if n, err := audit.Verify(o.Path); err != nil || n != want {
		t.Errorf("Verify after the reopen = %d, %v; want %d records intact", n, err, want)
	}
	recs, err := audit.Recoveries(o.Path)
	kept, _ := filepath.Glob(filepath.Join(dir, fileName+".torn-*"))
	switch {
	case err != nil:
		t.Errorf("Recoveries = %v", err)
	case len(torn) == 0:
		if len(recs) != 0 || len(kept) != 0 {
			t.Errorf("a cut at a record boundary recovered %+v, kept %v; want nothing", recs, kept)
		}
	case restored:
		if len(recs) != 1 || recs[0].Seq != uint64(whole+2) || len(kept) != 0 ||
			recs[0].Detail != fmt.Sprintf("restored the final newline of record %d (release/allow), whole but for it", whole+1) {
			t.Errorf("recovery of a record whole but for its newline = %+v, kept %v", recs, kept)
		}
	default:
		if len(kept) != 1 {
			t.Fatalf("torn-record files %v; want one", kept)
		}
		b, err := os.ReadFile(kept[0])
		if err != nil || !bytes.Equal(b, torn) {
			t.Errorf("%s holds %q, %v; want the cut bytes %q", kept[0], b, err, torn)
		}
		d := fmt.Sprintf("cut a torn last record (%d bytes at offset %d, no final newline) from %s; its bytes are in %s",
			len(torn), start, fileName, filepath.Base(kept[0]))
		if len(recs) != 1 || recs[0].Seq != uint64(whole+1) || recs[0].Op != "recover" || recs[0].Detail != d {
			t.Errorf("Recoveries = %+v; want record %d: %q", recs, whole+1, d)
		}
	}
	checkEditIsTampered(t, rng, dir)
}

// checkEditIsTampered changes one byte of a random whole record of the log in dir that a later
// whole record commits to, checks that Verify calls it AUDIT_TAMPERED (a *audit.VerifyError,
// not a torn end), and puts the byte back.
func checkEditIsTampered(t *testing.T, rng *rand.Rand, dir string) {
	t.Helper()
	type line struct {
		path     string
		off, len int
	}
	var lines []line
	paths := []string{}
	for _, g := range readGens(t, dir) {
		paths = append(paths, filepath.Join(dir, g.name))
	}
	for _, p := range append(paths, logPath(dir)) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; ; {
			i := bytes.IndexByte(b[off:], '\n')
			if i < 0 {
				break // a torn end is not a whole record
			}
			lines = append(lines, line{p, off, i})
			off += i + 1
		}
	}
	if len(lines) < 2 {
		return // no record has a later one to commit to it
	}
	ln := lines[rng.IntN(len(lines)-1)]
	f, err := os.OpenFile(ln.path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := int64(ln.off + rng.IntN(ln.len))
	was := make([]byte, 1)
	if _, err := f.ReadAt(was, at); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{was[0] ^ byte(1+rng.IntN(255))}, at); err != nil {
		t.Fatal(err)
	}
	_, verr := audit.Verify(logPath(dir))
	var ve *audit.VerifyError
	if !errors.As(verr, &ve) || wire.CodeOf(verr) != wire.CodeAuditTampered {
		t.Errorf("Verify with byte %d of %s edited = %v (code %s); want AUDIT_TAMPERED", at, filepath.Base(ln.path), verr, wire.CodeOf(verr))
	}
	if _, err := f.WriteAt(was, at); err != nil {
		t.Fatal(err)
	}
}
