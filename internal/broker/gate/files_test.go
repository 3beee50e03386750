package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/filestore"
	"github.com/headless-dev/headless/internal/wire"
)

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// withStore gives f's brokerd a file store (a directory that exists).
func withStore(t *testing.T, f *fixture) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "artifacts", "files")
	os.MkdirAll(dir, 0o700)
	f.srv.FileStore = dir
	return dir
}

// TestFileApproval: a file is recorded only when the person allows it at the prompt, which
// names it, its size and digest and where it was read from; a denial records nothing; every
// decision is audited; list and remove are metadata only.
func TestFileApproval(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	withStore(t, f)
	c := brokerapi.NewClient(f.connAs(t, Peer{PID: 4321, Exe: "/usr/bin/headless"}))
	p := brokerapi.FileApproveParams{Name: "report.pdf", Size: 12, SHA256: digest("twelve bytes"), Source: "/home/me/report.pdf"}

	f.pres.decide = func(context.Context, presence.Request) error { return presence.ErrDenied }
	if _, err := c.ApproveFile(ctx, p); code(err) != wire.CodePresenceDenied {
		t.Fatalf("a denied approval: %v", err)
	}
	if l, err := c.Files(ctx); err != nil || len(l.Files) != 0 {
		t.Fatalf("after a denial the list is %+v, %v", l, err)
	}
	if rec := lastRecord(t, f); rec.Op != "file_add" || rec.Decision != "deny" || rec.Code != "PRESENCE_DENIED" || !strings.Contains(rec.Detail, p.SHA256) {
		t.Fatalf("the denial's record %+v", rec)
	}
	r := f.pres.last.Load()
	if r.File == nil || r.File.Name != "report.pdf" || r.File.SHA256 != p.SHA256 || r.File.Size != 12 {
		t.Fatalf("the prompt's request %+v", r)
	}
	desc := r.Description()
	for _, want := range []string{`"report.pdf"`, "12 bytes", p.SHA256, `"/home/me/report.pdf"`, "any page", "pid 4321"} {
		if !strings.Contains(desc, want) {
			t.Errorf("the prompt %q does not say %q", desc, want)
		}
	}

	f.pres.decide = nil
	e, err := c.ApproveFile(ctx, p)
	if err != nil || e.Name != "report.pdf" || e.Size != 12 || e.SHA256 != p.SHA256 {
		t.Fatalf("an allowed approval: %+v %v", e, err)
	}
	if rec := lastRecord(t, f); rec.Op != "file_add" || rec.Decision != "allow" || rec.Provider != "fake" {
		t.Fatalf("the approval's record %+v", rec)
	}
	l, err := c.Files(ctx)
	if err != nil || len(l.Files) != 1 || l.Files[0] != e {
		t.Fatalf("list %+v %v", l, err)
	}
	// Another store (another runtime dir's brokerd) sees none of them.
	if l, err := storeFiles(f.srv.Paths, filepath.Join(t.TempDir(), "files")); err != nil || len(l) != 0 {
		t.Fatalf("another store lists %+v %v", l, err)
	}

	if _, err := c.RemoveFile(ctx, "nope.txt"); code(err) != wire.CodeFileUnknown {
		t.Fatalf("remove of an unknown file: %v", err)
	}
	if got, err := c.RemoveFile(ctx, "report.pdf"); err != nil || got != e {
		t.Fatalf("remove: %+v %v", got, err)
	}
	if rec := lastRecord(t, f); rec.Op != "file_remove" || rec.Decision != "ok" {
		t.Fatalf("the removal's record %+v", rec)
	}
	if l, _ := c.Files(ctx); len(l.Files) != 0 {
		t.Fatalf("after remove: %+v", l)
	}
}

// TestFileApprovalRefusals: what is refused before anyone is asked.
func TestFileApprovalRefusals(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	withStore(t, f)
	c := f.client(t)
	good := brokerapi.FileApproveParams{Name: "a.txt", Size: 1, SHA256: digest("a")}
	for name, tc := range map[string]struct {
		p    brokerapi.FileApproveParams
		want wire.Code
	}{
		"a path":       {brokerapi.FileApproveParams{Name: "../a.txt", Size: 1, SHA256: good.SHA256}, wire.CodeInvalidArgument},
		"absolute":     {brokerapi.FileApproveParams{Name: "/etc/passwd", Size: 1, SHA256: good.SHA256}, wire.CodeInvalidArgument},
		"dot-dot":      {brokerapi.FileApproveParams{Name: "..", Size: 1, SHA256: good.SHA256}, wire.CodeInvalidArgument},
		"short digest": {brokerapi.FileApproveParams{Name: "a.txt", Size: 1, SHA256: "abc"}, wire.CodeInvalidArgument},
		"upper digest": {brokerapi.FileApproveParams{Name: "a.txt", Size: 1, SHA256: strings.ToUpper(good.SHA256)}, wire.CodeInvalidArgument},
		"too large":    {brokerapi.FileApproveParams{Name: "a.txt", Size: filestore.MaxFileSize + 1, SHA256: good.SHA256}, wire.CodeInvalidArgument},
		"negative":     {brokerapi.FileApproveParams{Name: "a.txt", Size: -1, SHA256: good.SHA256}, wire.CodeInvalidArgument},
	} {
		if _, err := c.ApproveFile(ctx, tc.p); code(err) != tc.want {
			t.Errorf("%s: %v, want %s", name, err, tc.want)
		}
	}
	if n := f.pres.asked.Load(); n != 0 {
		t.Fatalf("the person was asked %d times about refused files", n)
	}
	// Bounded: count, then bytes, refused before the prompt.
	for i := range filestore.MaxFiles {
		p := good
		p.Name = "f" + strings.Repeat("x", i) + ".txt"
		if _, err := c.ApproveFile(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	asked := f.pres.asked.Load()
	p := good
	p.Name = "one-more.txt"
	if _, err := c.ApproveFile(ctx, p); code(err) != wire.CodeFilesFull {
		t.Fatalf("file %d: %v", filestore.MaxFiles+1, err)
	}
	p.Name = "f.txt" // replacing one is no more files
	if _, err := c.ApproveFile(ctx, p); err != nil {
		t.Fatalf("replacing a file in a full store: %v", err)
	}
	if f.pres.asked.Load() != asked+1 {
		t.Fatalf("the person was asked about a file the store had no room for")
	}
	// An untrusted brokerd approves nothing.
	f.srv.Key = nil
	if _, err := c.ApproveFile(ctx, good); code(err) != wire.CodeBrokerUntrusted {
		t.Fatalf("untrusted: %v", err)
	}
}

// TestFileStoreBytesBound: the store's total size is bounded.
func TestFileStoreBytesBound(t *testing.T) {
	have := []brokerapi.FileEntry{{Name: "a", Size: filestore.MaxStoreBytes - 10}}
	if err := roomFor(have, "b", 11); code(err) != wire.CodeFilesFull {
		t.Fatalf("over the bytes bound: %v", err)
	}
	if err := roomFor(have, "b", 10); err != nil {
		t.Fatal(err)
	}
	if err := roomFor(have, "a", filestore.MaxFileSize); err != nil {
		t.Fatalf("replacing a: %v", err)
	}
}

// TestFilesOfGoneStoresDropped: records of stores that no longer exist do not pile up.
func TestFilesOfGoneStoresDropped(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	gone := withStore(t, f)
	c := f.client(t)
	if _, err := c.ApproveFile(ctx, brokerapi.FileApproveParams{Name: "a.txt", Size: 1, SHA256: digest("a")}); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(gone)
	withStore(t, f)
	if _, err := c.ApproveFile(ctx, brokerapi.FileApproveParams{Name: "b.txt", Size: 1, SHA256: digest("b")}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(f.srv.Paths.dir, filesName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), gone) || !strings.Contains(string(b), "b.txt") {
		t.Fatalf("files.json %s", b)
	}
}

// TestFileApprovalPassphrase: under the passphrase provider a file is approved with the
// passphrase the credentials are sealed with (a wrong one three times approves nothing), and
// with none saved yet nobody can approve one.
func TestFileApprovalPassphrase(t *testing.T) {
	ctx := context.Background()
	f, sp := newSealedFixture(t)
	withStore(t, f)
	c := f.client(t)
	p := brokerapi.FileApproveParams{Name: "a.txt", Size: 1, SHA256: digest("a")}
	if _, err := c.ApproveFile(ctx, p); code(err) != wire.CodePresenceUnavail {
		t.Fatalf("no sealed credential yet: %v", err)
	}
	sp.typing(passphrase)
	if _, err := c.Add(ctx, "https://app.example", "admin@example", "staging-admin", []byte(canary)); err != nil {
		t.Fatal(err)
	}
	sp.typing("not the passphrase")
	if _, err := c.ApproveFile(ctx, p); code(err) != wire.CodePresenceDenied {
		t.Fatalf("a wrong passphrase: %v", err)
	}
	if l, _ := c.Files(ctx); len(l.Files) != 0 {
		t.Fatalf("approved with a wrong passphrase: %+v", l)
	}
	sp.typing(passphrase)
	if _, err := c.ApproveFile(ctx, p); err != nil {
		t.Fatal(err)
	}
	if l, _ := c.Files(ctx); len(l.Files) != 1 {
		t.Fatalf("after the passphrase: %+v", l)
	}
	if a := sp.asks[len(sp.asks)-1]; a.File == nil || a.File.Name != "a.txt" {
		t.Fatalf("the prompt %+v", a)
	}
}

// A change of files.json, under its lock, removes what a brokerd killed mid-write left.
func TestFilesLeftoversRemoved(t *testing.T) {
	lp, err := OpenLoginPaths(t.TempDir(), os.Getuid())
	if err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(lp.dir, "."+filesName+".tmp-99")
	if err := os.WriteFile(torn, []byte(`{"version":1,"fi`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := updateFiles(lp, func(rs []fileRecord) ([]fileRecord, error) { return rs, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(torn); !os.IsNotExist(err) {
		t.Errorf("the torn write's file is still there: %v", err)
	}
}
