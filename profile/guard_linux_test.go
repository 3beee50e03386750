package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tampered waits up to 2 s for g to report something.
func tampered(g *Guard) string {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if t := g.Tampered(); t != "" {
			return t
		}
	}
	return ""
}

// TestGuard: while a browser runs, every change to a blocked entry of the profile
// (WidevineCdm, Default/Sessions), or to a directory on the way to them, is seen — red-team
// round 9 swapped WidevineCdm for a directory of its own right after Chromium's exec and back
// 2.5 s later — and nothing else in the profile (Chromium's own writes) is.
func TestGuard(t *testing.T) {
	dataDir := t.TempDir()
	p := openT(t, dataDir)
	defer p.Close()
	dir := p.Dir()
	prep := filepath.Join(dataDir, "prep")
	for _, c := range []struct {
		name   string
		change func() error
		want   string // "" nothing seen, else a substring of what is
	}{
		{"Chromium's own writes", func() error {
			os.WriteFile(filepath.Join(dir, "Local State"), []byte(`{}`), 0o600)
			os.WriteFile(filepath.Join(dir, "Default", "Preferences.tmp"), []byte(`{}`), 0o600)
			return os.Rename(filepath.Join(dir, "Default", "Preferences.tmp"), filepath.Join(dir, "Default", "Preferences"))
		}, ""},
		{"WidevineCdm exchanged for a directory", func() error {
			os.MkdirAll(prep, 0o700)
			return unix.Renameat2(unix.AT_FDCWD, filepath.Join(dir, "WidevineCdm"), unix.AT_FDCWD, prep, unix.RENAME_EXCHANGE)
		}, "WidevineCdm"},
		{"the blocker made writable", func() error { return os.Chmod(filepath.Join(dir, "WidevineCdm"), 0o600) }, "WidevineCdm"},
		{"Sessions replaced", func() error {
			os.Remove(filepath.Join(dir, "Default", "Sessions"))
			return os.Mkdir(filepath.Join(dir, "Default", "Sessions"), 0o700)
		}, "Sessions"},
		{"Default moved", func() error { return os.Rename(filepath.Join(dir, "Default"), filepath.Join(dir, "Default.old")) }, "Default"},
		{"the profile moved", func() error { return os.Rename(dir, dir+".old") }, filepath.Base(dir)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := p.Reassert(); err != nil {
				t.Fatal(err)
			}
			g, err := p.Guard()
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if err := c.change(); err != nil {
				t.Fatal(err)
			}
			got := tampered(g)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Fatalf("seen %q; want %q", got, c.want)
			}
			// Put things back for the next case.
			os.RemoveAll(prep)
			if _, err := os.Stat(dir + ".old"); err == nil {
				os.Rename(dir+".old", dir)
			}
			if _, err := os.Stat(filepath.Join(dir, "Default.old")); err == nil {
				os.Rename(filepath.Join(dir, "Default.old"), filepath.Join(dir, "Default"))
			}
			os.RemoveAll(filepath.Join(dir, "WidevineCdm"))
			os.RemoveAll(filepath.Join(dir, "Default", "Sessions"))
		})
	}
	// A blocker that is not one when the watch starts: refused at once.
	if err := p.Reassert(); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "WidevineCdm"))
	os.Mkdir(filepath.Join(dir, "WidevineCdm"), 0o700)
	if g, err := p.Guard(); err == nil {
		g.Close()
		t.Fatal("Guard accepted a WidevineCdm directory")
	}
}
