package filestore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/headless-dev/headless/internal/wire"
)

func TestValidName(t *testing.T) {
	for _, ok := range []string{"report.pdf", "a", "avatar 1.png", "Ünïcode.txt", strings.Repeat("x", MaxName)} {
		if err := ValidName(ok); err != nil {
			t.Errorf("ValidName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b", "/etc/passwd", `a\b`, ".hidden", ".add-x", "a\x00b", "a\nb", " lead", "trail ",
		strings.Repeat("x", MaxName+1), "\xff\xfe", "x\u202e"} {
		err := ValidName(bad)
		if err == nil {
			t.Errorf("ValidName(%q) accepted it", bad)
			continue
		}
		if wire.CodeOf(err) != wire.CodeInvalidArgument {
			t.Errorf("ValidName(%q): code %s", bad, wire.CodeOf(err))
		}
	}
}

func newStore(t *testing.T) Store {
	t.Helper()
	rt := t.TempDir()
	return Store{Runtime: rt}
}

func add(t *testing.T, s Store, name string, b []byte) {
	t.Helper()
	st, err := s.Stage(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(name); err != nil {
		t.Fatal(err)
	}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestStageCommitOpen(t *testing.T) {
	s := newStore(t)
	if _, err := s.Open("x.txt"); wire.CodeOf(err) != wire.CodeFileUnknown {
		t.Fatalf("Open before any add: %v", err)
	}
	body := []byte("hello\x00world")
	st, err := s.Stage(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size != int64(len(body)) || st.SHA256 != sum(body) {
		t.Fatalf("staged %d %s", st.Size, st.SHA256)
	}
	if _, ok := s.Present("x.txt"); ok {
		t.Fatal("a staged file is in the store under its name before Commit")
	}
	if err := st.Commit("x.txt"); err != nil {
		t.Fatal(err)
	}
	o, err := s.Open("x.txt")
	if err != nil {
		t.Fatal(err)
	}
	if o.Size != int64(len(body)) || o.SHA256 != sum(body) || o.Path != filepath.Join(s.Path(), "x.txt") {
		t.Fatalf("opened %+v", o)
	}
	for _, dir := range []string{filepath.Dir(s.Path()), s.Path()} {
		fi, _ := os.Stat(dir)
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v", dir, fi.Mode())
		}
	}
	if fi, _ := os.Stat(o.Path); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v", fi.Mode())
	}
	ents, _ := os.ReadDir(s.Path())
	if len(ents) != 1 {
		t.Errorf("the store holds %d entries, want the one file", len(ents))
	}
	if err := s.Remove("x.txt"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Present("x.txt"); ok {
		t.Fatal("removed file still present")
	}
}

func TestDiscardKeepsNothing(t *testing.T) {
	s := newStore(t)
	st, err := s.Stage(strings.NewReader("abc"))
	if err != nil {
		t.Fatal(err)
	}
	st.Discard()
	ents, _ := os.ReadDir(s.Path())
	if len(ents) != 0 {
		t.Fatalf("a discarded add left %v", ents)
	}
}

// A staged file changed before the commit (another process of the user writing the store
// while the person is asked) is not added.
func TestCommitRefusesAChangedStage(t *testing.T) {
	s := newStore(t)
	st, err := s.Stage(strings.NewReader("the approved bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Path(), st.tmp), []byte("other bytes!!!!!!!"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit("x.txt"); wire.CodeOf(err) != wire.CodeFileChanged {
		t.Fatalf("Commit of a changed stage: %v", err)
	}
	ents, _ := os.ReadDir(s.Path())
	if len(ents) != 0 {
		t.Fatalf("a refused commit left %v", ents)
	}
}

func TestOpenRefusesWhatThePersonDidNotAdd(t *testing.T) {
	s := newStore(t)
	add(t, s, "ok.txt", []byte("ok"))
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("a file of the user"), 0o600)
	// A link planted in the store, to a file outside it.
	if err := os.Symlink(outside, filepath.Join(s.Path(), "link.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open("link.txt"); wire.CodeOf(err) != wire.CodeFileChanged {
		t.Errorf("Open of a link: %v", err)
	}
	if _, ok := s.Present("link.txt"); ok {
		t.Error("a link counts as present")
	}
	// A fifo (a read would block) and a directory.
	syscall.Mkfifo(filepath.Join(s.Path(), "fifo"), 0o600)
	os.Mkdir(filepath.Join(s.Path(), "dir"), 0o700)
	for _, n := range []string{"fifo", "dir"} {
		if _, err := s.Open(n); wire.CodeOf(err) != wire.CodeFileChanged {
			t.Errorf("Open(%q): %v", n, err)
		}
	}
	// Names that are paths.
	for _, n := range []string{"../ok.txt", "..", outside, "files/ok.txt", "./ok.txt"} {
		if _, err := s.Open(n); wire.CodeOf(err) != wire.CodeInvalidArgument {
			t.Errorf("Open(%q): %v", n, err)
		}
	}
	if _, err := s.Open("missing.txt"); wire.CodeOf(err) != wire.CodeFileUnknown {
		t.Errorf("Open of a missing name: %v", err)
	}
	// The store itself a link (to a directory holding a file of that name).
	elsewhere := t.TempDir()
	os.WriteFile(filepath.Join(elsewhere, "ok.txt"), []byte("not the person's"), 0o600)
	os.RemoveAll(s.Path())
	if err := os.Symlink(elsewhere, s.Path()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open("ok.txt"); wire.CodeOf(err) != wire.CodeFileChanged {
		t.Errorf("Open through a store that is a link: %v", err)
	}
}

func TestStageBounds(t *testing.T) {
	s := newStore(t)
	big := bytes.NewReader(make([]byte, MaxFileSize+1))
	if _, err := s.Stage(big); wire.CodeOf(err) != wire.CodeInvalidArgument {
		t.Fatalf("Stage of %d bytes: %v", MaxFileSize+1, err)
	}
	ents, _ := os.ReadDir(s.Path())
	if len(ents) != 0 {
		t.Fatalf("a refused stage left %v", ents)
	}
	if _, _, err := OpenSource(t.TempDir()); wire.CodeOf(err) != wire.CodeInvalidArgument {
		t.Errorf("OpenSource of a directory: %v", err)
	}
	if _, _, err := OpenSource("/dev/zero"); wire.CodeOf(err) != wire.CodeInvalidArgument {
		t.Errorf("OpenSource of a device: %v", err)
	}
	if _, _, err := OpenSource(filepath.Join(t.TempDir(), "none")); wire.CodeOf(err) != wire.CodeInvalidArgument {
		t.Errorf("OpenSource of a missing file: %v", err)
	}
}
