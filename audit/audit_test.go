package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chainLines builds n canonical, chained lines as the writer would, without the writer.
func chainLines(t *testing.T, n int) [][]byte {
	t.Helper()
	var out [][]byte
	prev := ""
	for i := range n {
		r := Record{Seq: uint64(i + 1), Time: time.Date(2026, 1, 2, 3, 4, i, 0, time.UTC), Op: "release", Decision: "allow", Alias: "a", Prev: prev}
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		prev = Hash(line)
		out = append(out, append(line, '\n'))
	}
	return out
}

func write(t *testing.T, path string, lines [][]byte) {
	t.Helper()
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyAndList(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	if n, err := Verify(path); n != 0 || err != nil {
		t.Fatalf("Verify of a missing log = %d, %v", n, err)
	}
	ls := chainLines(t, 6)
	// Two generations: .1 holds the first three records.
	write(t, path+".1", ls[:3])
	write(t, path, ls[3:])
	if n, err := Verify(path); n != 6 || err != nil {
		t.Fatalf("Verify = %d, %v; want 6 records", n, err)
	}
	recs, err := List(path, time.Date(2026, 1, 2, 3, 4, 4, 0, time.UTC), 0)
	if err != nil || len(recs) != 2 || recs[0].Seq != 5 {
		t.Fatalf("List since the 5th = %+v, %v", recs, err)
	}
	if recs, _ := List(path, time.Time{}, 2); len(recs) != 2 || recs[1].Seq != 6 {
		t.Fatalf("List max 2 = %+v; want the newest two", recs)
	}
	// A non-canonical line (extra space) is malformed, even with the right content.
	bad := append([][]byte{}, ls[3:]...)
	bad[1] = bytes.Replace(bad[1], []byte(`"seq":5,`), []byte(`"seq": 5,`), 1)
	write(t, path, bad)
	var ve *VerifyError
	if _, err := Verify(path); !errors.As(err, &ve) || ve.Seq != 5 || !strings.Contains(ve.Reason, "malformed") {
		t.Fatalf("Verify of a non-canonical line = %v", err)
	}
	if _, err := List(path, time.Time{}, 0); !errors.As(err, &ve) {
		t.Fatalf("List of a malformed log = %v", err)
	}
}

// TestNoSymlinks: a log path that is a symlink is not followed.
func TestNoSymlinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.jsonl")
	write(t, real, chainLines(t, 2))
	path := filepath.Join(dir, "audit.jsonl")
	if err := os.Symlink(real, path); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(path); err == nil {
		t.Fatal("Verify followed a symlink")
	}
}

func TestGenerations(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	for _, n := range []string{"audit.jsonl.3", "audit.jsonl.1", "audit.jsonl.01", "audit.jsonl.x", "audit.jsonl.", "other.jsonl.2"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	gens, err := Generations(path)
	if err != nil || len(gens) != 2 || gens[0] != 1 || gens[1] != 3 {
		t.Fatalf("Generations = %v, %v; want [1 3]", gens, err)
	}
}

// TestVerifyTornEnd: a live file whose last line has no final newline, after records that
// verify, is a *TornError (AUDIT_TORN) naming where the cut bytes start and how many there are;
// a torn line anywhere else, or an edit before a torn end, is a *VerifyError (AUDIT_TAMPERED).
func TestVerifyTornEnd(t *testing.T) {
	ls := chainLines(t, 4)
	cut := ls[3][:len(ls[3])/2]
	for _, c := range []struct {
		name      string
		gen, live [][]byte
		torn      *TornError // nil: tampered
	}{
		{"live file", nil, [][]byte{ls[0], ls[1], ls[2], cut}, &TornError{Line: 4, Seq: 4, Offset: int64(len(ls[0]) + len(ls[1]) + len(ls[2])), Bytes: len(cut)}},
		{"only line", nil, [][]byte{ls[0][:10]}, &TornError{Line: 1, Seq: 1, Offset: 0, Bytes: 10}},
		{"after rotation", ls[:3], [][]byte{cut}, &TornError{Line: 1, Seq: 4, Offset: 0, Bytes: len(cut)}},
		{"rotated generation", [][]byte{ls[0], ls[1], cut}, nil, nil},
		{"edit before", nil, [][]byte{ls[0], bytes.Replace(ls[1], []byte(`"alias":"a"`), []byte(`"alias":"b"`), 1), ls[2], cut}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "audit.jsonl")
			if c.gen != nil {
				write(t, path+".1", c.gen)
			}
			if c.live != nil {
				write(t, path, c.live)
			}
			n, err := Verify(path)
			var te *TornError
			var ve *VerifyError
			if c.torn == nil {
				if !errors.As(err, &ve) || errors.As(err, &te) || ve.WireCode() != "AUDIT_TAMPERED" {
					t.Fatalf("Verify = %v; want a *VerifyError", err)
				}
				return
			}
			want := *c.torn
			want.File = path
			if !errors.As(err, &te) || *te != want || te.WireCode() != "AUDIT_TORN" || n != int(want.Seq)-1 {
				t.Fatalf("Verify = %d, %#v; want %d records, then %#v", n, err, want.Seq-1, want)
			}
		})
	}
}

func TestRecoveries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	if recs, err := Recoveries(path); err != nil || len(recs) != 0 {
		t.Fatalf("Recoveries of a missing log = %v, %v", recs, err)
	}
	r := Record{Seq: 1, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Op: "recover", Decision: "ok", Detail: "cut"}
	line, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, [][]byte{append(line, '\n'), []byte("not a record\n")})
	if recs, err := Recoveries(path); err != nil || len(recs) != 1 || recs[0].Detail != "cut" {
		t.Fatalf("Recoveries = %+v, %v", recs, err)
	}
}
