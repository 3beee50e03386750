package logfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestRotationBoundsTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, err := Open(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if _, err := l.Write([]byte("0123456789abcdefghij\n")); err != nil {
			t.Fatal(err)
		}
	}
	l.Write(bytes.Repeat([]byte("Z"), 1000)) // larger than the bound: truncated
	l.Close()
	total := 0
	for _, p := range []string{path, path + ".1"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 100 || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: size %d mode %v", p, fi.Size(), fi.Mode().Perm())
		}
		total += int(fi.Size())
	}
	if total == 0 {
		t.Fatal("nothing written")
	}
	if _, err := os.Stat(path + ".2"); !os.IsNotExist(err) {
		t.Fatal("more than one rotated generation")
	}
}

func TestRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, nil, 0o600)
	link := filepath.Join(dir, "x.log")
	os.Symlink(target, link)
	if _, err := Open(link, 100); err == nil {
		t.Fatal("opened a log through a symlink")
	}
}
