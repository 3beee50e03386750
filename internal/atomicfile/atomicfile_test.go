package atomicfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "credentials.json")
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	for _, data := range []string{"first", "second, longer than the first", ""} {
		if err := Write(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Fatalf("read back %q, %v; want %q", got, err, data)
		}
		fi, _ := os.Stat(path)
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("leftovers beside the file: %v", ents)
	}
}

// TestWriteReplacesSymlink: a symlink planted at the target is replaced, its target untouched.
func TestWriteReplacesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	path := filepath.Join(dir, "index")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("the symlink's target was written: %q", b)
	}
	if fi, _ := os.Lstat(path); !fi.Mode().IsRegular() {
		t.Fatalf("the target is still %v", fi.Mode())
	}
}

// TestWriteFailureLeavesNothing: a write into a missing directory fails, names the path, and
// leaves no temporary file.
func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gone", "f")
	err := Write(path, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Write into a missing directory = %v", err)
	}
	// A directory in the way of the rename: the temp file is removed.
	target := filepath.Join(dir, "d")
	os.Mkdir(target, 0o700)
	os.WriteFile(filepath.Join(target, "x"), nil, 0o600)
	if err := Write(target, []byte("x")); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestSyncDir(t *testing.T) {
	if err := SyncDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("SyncDir of a missing directory succeeded")
	}
}

// RemoveLeftovers removes what a write killed midway left (Write's temporary names of that
// path), and nothing else: not another path's, not the target, not a directory.
func TestRemoveLeftovers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "book.json")
	if err := Write(path, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".book.json.tmp-1", ".book.json.tmp-22", ".other.json.tmp-3", "book.json.tmp-4"} {
		os.WriteFile(filepath.Join(dir, name), []byte("torn"), 0o600)
	}
	os.Mkdir(filepath.Join(dir, ".book.json.tmp-dir"), 0o700)
	n, err := RemoveLeftovers(path)
	if err != nil || n != 2 {
		t.Fatalf("RemoveLeftovers = %d, %v; want 2", n, err)
	}
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	want := []string{".book.json.tmp-dir", ".other.json.tmp-3", "book.json", "book.json.tmp-4"}
	if !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
	if b, _ := os.ReadFile(path); string(b) != "kept" {
		t.Errorf("the file holds %q", b)
	}
}
