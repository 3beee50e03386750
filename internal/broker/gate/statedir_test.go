package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/test/realtest"
	"github.com/headless-dev/headless/internal/wire"
)

// TestStateDirIsTheUsersAlone: OpenLoginPaths makes root/UID 0700, and refuses one that is a
// symlink, another uid's, or open to group or others, and a file in it that brokerd did not
// write so (another mode, a symlink, oversize, malformed, out of bounds): BROKER_UNTRUSTED,
// naming what is wrong.
func TestStateDirIsTheUsersAlone(t *testing.T) {
	uid := os.Getuid()
	fresh := func(t *testing.T) (root, dir string) {
		root = t.TempDir()
		return root, filepath.Join(root, strconv.Itoa(uid))
	}
	root, dir := fresh(t)
	if _, err := OpenLoginPaths(root, uid); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("made %v %v", fi.Mode(), err)
	}
	for name, tc := range map[string]struct {
		prepare func(t *testing.T, dir string)
		want    string
	}{
		"group-readable dir": {func(t *testing.T, dir string) { os.Mkdir(dir, 0o700); os.Chmod(dir, 0o750) }, "mode 0750"},
		"world-open dir":     {func(t *testing.T, dir string) { os.Mkdir(dir, 0o700); os.Chmod(dir, 0o707) }, "mode 0707"},
		"symlinked dir": {func(t *testing.T, dir string) {
			target := t.TempDir()
			os.Chmod(target, 0o700)
			os.Symlink(target, dir)
		}, "not a directory"},
		"a file for the dir": {func(t *testing.T, dir string) { os.WriteFile(dir, nil, 0o600) }, "not a directory"},
		"another uid's dir": {func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			realtest.NeedRoot(t, "give a directory away") // the check is the same comparison as the mode's
			os.Chown(dir, 4321, 4321)
		}, "owned by uid 4321"},
		"group-readable file": {func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			os.WriteFile(filepath.Join(dir, loginPathsName), []byte(`{"version":1,"credentials":[]}`), 0o640)
			os.Chmod(filepath.Join(dir, loginPathsName), 0o640)
		}, "mode 0640"},
		"symlinked file": {func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			other := filepath.Join(t.TempDir(), "x.json")
			os.WriteFile(other, []byte(`{"version":1,"credentials":[]}`), 0o600)
			os.Symlink(other, filepath.Join(dir, loginPathsName))
		}, "too many levels of symbolic links"},
		"oversize file": {func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			os.WriteFile(filepath.Join(dir, loginPathsName), append([]byte(`{"version":1,"credentials":[]}`), make([]byte, maxPathsFile)...), 0o600)
		}, "over 1048576 bytes"},
		"unknown field": {func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			os.WriteFile(filepath.Join(dir, loginPathsName), []byte(`{"version":1,"credentials":[],"extra":1}`), 0o600)
		}, "extra"},
		"bad path in file": {func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			os.WriteFile(filepath.Join(dir, loginPathsName), []byte(`{"version":1,"credentials":[{"origin":"https://a.example","alias":"a","set":["/x?y"]}]}`), 0o600)
		}, "invalid or repeated"},
		"two entries for one alias": {func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			os.WriteFile(filepath.Join(dir, loginPathsName), []byte(`{"version":1,"credentials":[{"origin":"https://a.example","alias":"a","set":["/x"]},{"origin":"https://a.example","alias":"A","learned":["/y"]}]}`), 0o600)
		}, "listed twice"},
		"another version": {func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o700)
			os.WriteFile(filepath.Join(dir, loginPathsName), []byte(`{"version":2,"credentials":[]}`), 0o600)
		}, "version 2"},
	} {
		t.Run(name, func(t *testing.T) {
			root, dir := fresh(t)
			tc.prepare(t, dir)
			_, err := OpenLoginPaths(root, uid)
			if code(err) != wire.CodeBrokerUntrusted || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("OpenLoginPaths = %v (%s), want BROKER_UNTRUSTED naming %q", err, code(err), tc.want)
			}
		})
	}

	// A directory that goes bad after brokerd started: the next sign-in is refused before
	// anyone is asked.
	f := newFixture(t)
	if err := os.Chmod(f.srv.Paths.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := signInAt(t, f.client(t), "https://app.example", "staging-admin", "/login", false); code(err) != wire.CodeBrokerUntrusted || f.pres.asked.Load() != 0 {
		t.Fatalf("sign-in with an open state dir: %v (asked %d)", err, f.pres.asked.Load())
	}
}

// TestNoStateDirIsUntrusted: a brokerd with the seal key but nowhere to keep sign-in paths
// releases and saves nothing, and says why in "version".
func TestNoStateDirIsUntrusted(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.srv.Paths = nil
	c := f.client(t)
	if _, _, err := signInAt(t, c, "https://app.example", "staging-admin", "/login", false); code(err) != wire.CodeBrokerUntrusted {
		t.Fatalf("release: %v", err)
	}
	if _, err := c.Add(ctx, "https://app.example", "n@x", "n", []byte("pw")); code(err) != wire.CodeBrokerUntrusted {
		t.Fatalf("add: %v", err)
	}
	if v, err := c.Version(ctx); err != nil || !strings.Contains(v.Untrusted, "sign-in paths") {
		t.Fatalf("version: %+v %v", v, err)
	}
	if f.pres.asked.Load() != 0 {
		t.Fatal("presence asked")
	}
}

// TestLoginPathsFileIsBounded: a book refuses to grow past its entries (VAULT_FULL) and an add
// makes room by dropping the entries of credentials no longer in the store.
func TestLoginPathsFileIsBounded(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	es := make([]pathEntry, maxPathEntries)
	for i := range es {
		es[i] = pathEntry{Origin: "https://gone.example", Alias: fmt.Sprintf("a%d", i), Set: []string{"/login"}}
	}
	if err := f.srv.Paths.update(func([]pathEntry) ([]pathEntry, error) { return es, nil }); err != nil {
		t.Fatal(err)
	}
	if err := setPaths(f.srv.Paths, pathEntry{Origin: "https://app.example", Alias: "one-more", Set: []string{"/x"}}); code(err) != wire.CodeVaultFull {
		t.Fatalf("one entry more: %v, want VAULT_FULL", err)
	}
	b, _ := os.ReadFile(f.srv.Paths.Path())
	var file struct{ Credentials []json.RawMessage }
	if json.Unmarshal(b, &file); len(file.Credentials) != maxPathEntries {
		t.Fatalf("file holds %d entries", len(file.Credentials))
	}
	// Those credentials are not in the store: an add prunes them and is kept.
	cred, err := f.client(t).AddCredential(ctx, brokerapi.AddParams{Origin: "https://app.example", Account: "n@x", Alias: "new-one", LoginPaths: []string{"/login"}, Secret: []byte("pw")})
	if err != nil || !slices.Equal(cred.LoginPaths, []string{"/login"}) {
		t.Fatalf("add with a full file of gone credentials: %+v %v", cred, err)
	}
	if got, _ := f.srv.Paths.entries(nil); len(got) != 1 {
		t.Fatalf("after pruning, %d entries", len(got))
	}
}

// TestLoginPathsReadAfterEveryChange: a load after the file changed sees the change, whatever
// it read before (a rewrite of the same size, a file made unusable, a mode opened to others,
// the file gone), and what a load returns is its caller's: changing it changes no later load.
func TestLoginPathsReadAfterEveryChange(t *testing.T) {
	uid := os.Getuid()
	lp, err := OpenLoginPaths(t.TempDir(), uid)
	if err != nil {
		t.Fatal(err)
	}
	file := lp.Path()
	write := func(alias, path string) {
		t.Helper()
		b := fmt.Sprintf(`{"version":1,"credentials":[{"origin":"https://a.example","alias":%q,"set":[%q]}]}`, alias, path)
		if err := os.WriteFile(file, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	known := func() string {
		t.Helper()
		es, err := lp.entries(nil)
		if err != nil || len(es) != 1 {
			t.Fatalf("entries: %+v, %v", es, err)
		}
		return es[0].Alias + " " + strings.Join(es[0].known(), ",")
	}
	write("one", "/login")
	if got := known(); got != "one /login" {
		t.Fatalf("first read: %q", got)
	}
	es, _ := lp.entries(nil)
	es[0].Set[0], es[0].Alias = "/u/agent", "agent"
	if got := known(); got != "one /login" {
		t.Fatalf("after the caller changed what it got: %q", got)
	}
	write("two", "/signin") // the same size
	if got := known(); got != "two /signin" {
		t.Fatalf("after a rewrite of the same size: %q", got)
	}
	os.Chmod(file, 0o644)
	if _, err := lp.entries(nil); code(err) != wire.CodeBrokerUntrusted || !strings.Contains(err.Error(), "mode 0644") {
		t.Fatalf("a file opened to others, read before: %v", err)
	}
	os.Chmod(file, 0o600)
	if err := os.WriteFile(file, []byte(`{"version":1,"credentials":[{"origin":"https://a.example","alias":"two","set":["nope"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := lp.entries(nil); code(err) != wire.CodeBrokerUntrusted {
		t.Fatalf("an invalid path, read valid before: %v", err)
	}
	os.Remove(file)
	if es, err := lp.entries(nil); err != nil || len(es) != 0 {
		t.Fatalf("the file gone: %+v, %v", es, err)
	}
}

// TestLoginPathsSettledFileIsNotReadAgain: a file whose times are older than settleAge is read
// once and answered from memory while stat says it is the same file; a rewrite in place of the
// same size with its old mtime put back (its ctime moves), a replacement by rename of the same
// size, and a mode opened to others are each seen at once.
func TestLoginPathsSettledFileIsNotReadAgain(t *testing.T) {
	lp, err := OpenLoginPaths(t.TempDir(), os.Getuid())
	if err != nil {
		t.Fatal(err)
	}
	file := lp.Path()
	body := func(alias string) []byte {
		return fmt.Appendf(nil, `{"version":1,"credentials":[{"origin":"https://a.example","alias":%q,"set":["/login"]}]}`, alias)
	}
	if err := os.WriteFile(file, body("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	alias := func() string {
		t.Helper()
		es, err := lp.entries(nil)
		if err != nil || len(es) != 1 {
			t.Fatalf("entries: %+v, %v", es, err)
		}
		return es[0].Alias
	}
	alias() // unsettled: read every time
	alias()
	if lp.reads < 2 {
		t.Fatalf("a file written just now was read %d times for 2 loads", lp.reads)
	}
	time.Sleep(settleAge + 100*time.Millisecond)
	n := lp.reads
	for range 3 {
		if got := alias(); got != "one" {
			t.Fatalf("settled: %q", got)
		}
	}
	if lp.reads != n+1 {
		t.Fatalf("a settled file was read %d times for 3 loads, want 1", lp.reads-n)
	}
	fi, _ := os.Stat(file)
	if err := os.WriteFile(file, body("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(file, fi.ModTime(), fi.ModTime())
	if got := alias(); got != "two" {
		t.Fatalf("after a rewrite in place with the old mtime: %q", got)
	}
	time.Sleep(settleAge + 100*time.Millisecond)
	alias()
	tmp := file + ".new"
	if err := os.WriteFile(tmp, body("tri"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	if got := alias(); got != "tri" {
		t.Fatalf("after a replacement: %q", got)
	}
	time.Sleep(settleAge + 100*time.Millisecond)
	alias()
	os.Chmod(file, 0o640)
	if _, err := lp.entries(nil); code(err) != wire.CodeBrokerUntrusted {
		t.Fatalf("a settled file opened to its group: %v", err)
	}
}
