package auditwriter

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/test/realtest"
)

// TestDiskFullCutsThePartialRecord puts the log on a small tmpfs, fills it, and appends
// records until one does not fit: tmpfs takes the part of that record that fits the file's
// last page and then fails, so without the cut the file would end with half a record (and
// the next Open would refuse it). The failed Append is an error naming ENOSPC, the file still
// ends with its last whole record and verifies, and once space is freed the same Log appends
// again, continuing the chain. Needs root (mount).
func TestDiskFullCutsThePartialRecord(t *testing.T) {
	realtest.NeedRoot(t, "mount a tmpfs")
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=16k,mode=0700"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	l := openT(t, Options{Path: logPath(dir)})
	long := strings.Repeat("x", MaxField)
	rec := Record{Op: "release", Decision: "allow", Origin: "https://app.example", Account: long, Alias: "a", Path: long, Field: long}
	if err := l.Append(rec); err != nil {
		t.Fatal(err)
	}
	filler := fill(t, dir)
	var lineLen int64
	appended := 1
	for {
		fi, err := os.Stat(logPath(dir))
		if err != nil {
			t.Fatal(err)
		}
		size := fi.Size()
		err = l.Append(rec)
		if err == nil {
			appended++
			fi, _ := os.Stat(logPath(dir))
			lineLen = fi.Size() - size
			if appended > 64 {
				t.Fatal("64 records fit on a full tmpfs")
			}
			continue
		}
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("append on a full disk: %v, want ENOSPC", err)
		}
		// The record straddled the end of the file's last page: part of it fitted.
		if slack := (4096 - size%4096) % 4096; lineLen == 0 || slack == 0 || slack >= lineLen {
			t.Fatalf("set-up: %d bytes free in the last page for a %d-byte record; want a partial fit", slack, lineLen)
		}
		break
	}
	b, err := os.ReadFile(logPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' || bytes.Count(b, []byte("\n")) != appended {
		t.Fatalf("after the failed append the log holds %d bytes, %d lines (want %d whole records), ends %q",
			len(b), bytes.Count(b, []byte("\n")), appended, b[max(0, len(b)-20):])
	}
	if n, err := audit.Verify(logPath(dir)); err != nil || n != appended {
		t.Fatalf("verify after the failed append: %d, %v", n, err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(rec); err != nil {
		t.Fatalf("append after space was freed: %v", err)
	}
	if n, err := audit.Verify(logPath(dir)); err != nil || n != appended+1 {
		t.Fatalf("verify after space was freed: %d, %v", n, err)
	}
	// A new writer (brokerd restarted) resumes the chain.
	l.Close()
	l2 := openT(t, Options{Path: logPath(dir)})
	if err := l2.Append(rec); err != nil {
		t.Fatal(err)
	}
	if n, err := audit.Verify(logPath(dir)); err != nil || n != appended+2 {
		t.Fatalf("verify after reopening: %d, %v", n, err)
	}
}

// fill writes a file in dir until its filesystem has no free block left.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Bavail != 0 {
		t.Fatalf("statfs after filling: %+v, %v", st, err)
	}
	return p
}

// TestReserveOnFullDisk: space reserved before the disk fills up takes the next record (the
// allow written after a prompt); on a full disk Reserve is the ENOSPC, before anyone would be
// asked, and the file is unchanged. Needs root (mount).
func TestReserveOnFullDisk(t *testing.T) {
	realtest.NeedRoot(t, "mount a tmpfs")
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0700"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	l := openT(t, Options{Path: logPath(dir)})
	long := strings.Repeat("x", MaxField)
	rec := Record{Op: "release", Decision: "allow", Origin: "https://app.example", Account: long, Path: long, Field: long}
	if err := l.Append(rec); err != nil {
		t.Fatal(err)
	}
	if err := l.Reserve(); err != nil {
		t.Fatalf("reserve with space: %v", err)
	}
	filler := fill(t, dir)
	// The reservation holds more than a few records, whatever the slack of the last page.
	for i := range 8 {
		if err := l.Append(rec); err != nil {
			t.Fatalf("append %d into the reserved space: %v", i, err)
		}
	}
	// Use up the rest, then Reserve finds the disk full.
	for l.Append(rec) == nil {
	}
	before, _ := os.ReadFile(logPath(dir))
	if err := l.Reserve(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("reserve on a full disk: %v, want ENOSPC", err)
	}
	if after, _ := os.ReadFile(logPath(dir)); !bytes.Equal(before, after) {
		t.Fatal("Reserve changed the file")
	}
	if n, err := audit.Verify(logPath(dir)); err != nil || n < 10 {
		t.Fatalf("verify: %d, %v", n, err)
	}
	os.Remove(filler)
	if err := l.Reserve(); err != nil {
		t.Fatalf("reserve once space is freed: %v", err)
	}
}
