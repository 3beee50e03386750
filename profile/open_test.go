//go:build linux

package profile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/lockfile"
)

var fixedNow = time.Date(2026, 11, 30, 1, 22, 33, 0, time.UTC)

const corruptName = "profile.corrupt-20261130T012233Z"

func clock() time.Time { return fixedNow }

func newDataDir(t *testing.T) string { return filepath.Join(t.TempDir(), "data") }

func openT(t *testing.T, dataDir string) *Profile {
	t.Helper()
	p, err := Open(Options{Dir: profDir(dataDir), Lock: lockPath(dataDir), Now: clock})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// sqliteImage is a plausible SQLite database file: a header with page size ps, n pages.
func sqliteImage(ps, n int) []byte {
	b := make([]byte, ps*n)
	copy(b, sqliteMagic)
	v := uint16(ps)
	if ps == 65536 {
		v = 1
	}
	binary.BigEndian.PutUint16(b[16:], v)
	for i := 100; i < len(b); i++ {
		b[i] = byte(i * 7)
	}
	return b
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// populate makes the profile at dir look like one Chromium has used. Its Preferences already
// hold the password prefs, so a healthy Open has nothing to rewrite.
func populate(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "Local State"), []byte(`{"profile":{"info_cache":{"Default":{"name":"Your Chromium"}}},"user_experience_metrics":{"stability":{"exited_cleanly":true}}}`))
	prefs, err := setPasswordPrefs([]byte(`{"browser":{"window_placement":{"bottom":590}},"profile":{"creation_time":"13440471727839382","exit_type":"Normal"}}`))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "Default", "Preferences"), prefs)
	writeFile(t, filepath.Join(dir, "Default", "Secure Preferences"), []byte(`{"protection":{"super_mac":"B6136"}}`))
	writeFile(t, filepath.Join(dir, "Default", "Cookies"), sqliteImage(4096, 3))
	writeFile(t, filepath.Join(dir, "Default", "Network", "Cookies"), sqliteImage(2048, 5))
	writeFile(t, filepath.Join(dir, "Default", "Network", "Cookies-journal"), nil)
	writeFile(t, filepath.Join(dir, "Default", "Local Storage", "leveldb", "000003.log"), []byte("local storage \x00\x01 bytes"))
	if err := os.Symlink("host-1234", filepath.Join(dir, "SingletonLock")); err != nil {
		t.Fatal(err)
	}
}

// snapshot maps every entry under dir to its type, mode and content (a symlink's target).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			m[rel] = "symlink " + target
		case d.IsDir():
			m[rel] = "dir " + fi.Mode().Perm().String()
		default:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			m[rel] = "file " + fi.Mode().Perm().String() + " " + fi.ModTime().String() + " " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func readPrefs(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "Default", "Preferences"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := decodeObject(b)
	if err != nil {
		t.Fatalf("Preferences: %v", err)
	}
	return m
}

// checkPasswordPrefs fails t unless every password pref holds its value in dir's Preferences.
func checkPasswordPrefs(t *testing.T, dir string) {
	t.Helper()
	m := readPrefs(t, dir)
	for _, p := range passwordPrefs {
		var v any = m
		for _, k := range p.path {
			obj, _ := v.(map[string]any)
			v = obj[k]
		}
		if v != p.value {
			t.Errorf("Preferences %s = %v, want %v", strings.Join(p.path, "."), v, p.value)
		}
	}
}

// checkFresh fails t unless dir is a freshly created headless profile.
func checkFresh(t *testing.T, dir string) {
	t.Helper()
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("profile dir: %v %v", fi, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, markerName))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("marker: %v", err)
	}
	want := map[string]any{"version": float64(1), "created": "2026-11-30T01:22:33Z", "password_store": "gnome-libsecret"}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("marker = %v, want %v", m, want)
	}
	checkPasswordPrefs(t, dir)
	if fi, err := os.Stat(filepath.Join(dir, "Default")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("Default: %v %v", fi, err)
	}
	for _, name := range []string{markerName, "Default/Preferences"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", name, fi, err)
		}
	}
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestOpenCreatesProfile(t *testing.T) {
	dataDir := newDataDir(t)
	p := openT(t, dataDir)
	if p.Dir() != filepath.Join(dataDir, "profile") {
		t.Fatalf("Dir = %q", p.Dir())
	}
	if got := p.Report(); got != (Report{Created: true}) {
		t.Fatalf("Report = %+v", got)
	}
	checkFresh(t, p.Dir())
	if fi, _ := os.Stat(dataDir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("data dir mode %v", fi.Mode().Perm())
	}
	if got, want := entries(t, dataDir), []string{"profile", "profile.lock"}; !slices.Equal(got, want) {
		t.Fatalf("data dir holds %v, want %v", got, want)
	}
	if got := entries(t, filepath.Join(p.Dir(), "Default")); !slices.Equal(got, []string{"Preferences", "Sessions", "Sessions_Encrypted"}) {
		t.Fatalf("Default holds %v (temporary files left?)", got)
	}
	want := []string{"--user-data-dir=" + p.Dir(), "--profile-directory=Default", "--password-store=gnome-libsecret"}
	if got := p.ChromiumArgs(); !slices.Equal(got, want) {
		t.Fatalf("ChromiumArgs = %q, want %q", got, want)
	}
	if p.LockOwner() != os.Getpid() {
		t.Fatalf("LockOwner = %d, want %d", p.LockOwner(), os.Getpid())
	}
	p.Close()
	p.Close() // idempotent

	// A looser data dir of ours is tightened; reopening finds the profile healthy.
	os.Chmod(dataDir, 0o755)
	os.Chmod(p.Dir(), 0o755)
	p2 := openT(t, dataDir)
	if got := p2.Report(); got != (Report{}) {
		t.Fatalf("second Open Report = %+v, want nothing done", got)
	}
	for _, d := range []string{dataDir, p2.Dir()} {
		if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s mode %v after Open", d, fi.Mode().Perm())
		}
	}
}

func TestOpenRejectsRelativeDataDir(t *testing.T) {
	for _, d := range []string{"", "data", "./data"} {
		if _, err := Open(Options{Dir: profDir(d), Lock: lockPath(d)}); err == nil {
			t.Errorf("Open(%q) succeeded", d)
		}
	}
}

func checkLocked(t *testing.T, err error, pid int) {
	t.Helper()
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) || !errors.Is(err, lockfile.ErrHeld) {
		t.Fatalf("Open on a held profile: %v; want a *LockedError", err)
	}
	if le.PID != pid {
		t.Fatalf("LockedError.PID = %d, want %d", le.PID, pid)
	}
	msg := err.Error()
	if !strings.Contains(msg, "pid "+strconv.Itoa(pid)) || !strings.Contains(msg, "headless session create NAME --isolated") {
		t.Fatalf("message %q does not name the owner pid %d and the remedy", msg, pid)
	}
}

func TestOpenLockedInProcess(t *testing.T) {
	dataDir := newDataDir(t)
	p := openT(t, dataDir)
	before := snapshot(t, p.Dir())
	_, err := Open(Options{Dir: profDir(dataDir), Lock: lockPath(dataDir), Now: clock})
	checkLocked(t, err, os.Getpid())
	if after := snapshot(t, p.Dir()); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused Open changed the profile")
	}
	p.Close()
	p2 := openT(t, dataDir)
	if p2.Report() != (Report{}) {
		t.Fatalf("Open after Close: %+v", p2.Report())
	}
}

func TestOpenLockedAcrossProcesses(t *testing.T) {
	dataDir := newDataDir(t)

	// Another process holds it: we are refused, naming its pid.
	line, pid, stop := startHelper(t, "hold", dataDir)
	if line != "HELD "+strconv.Itoa(pid) {
		t.Fatalf("helper said %q", line)
	}
	_, err := Open(Options{Dir: profDir(dataDir), Lock: lockPath(dataDir), Now: clock})
	checkLocked(t, err, pid)
	stop()
	p := openT(t, dataDir)

	// We hold it: another process is refused, naming our pid.
	line, _, _ = startHelper(t, "try", dataDir)
	if line != "LOCKED "+strconv.Itoa(os.Getpid()) {
		t.Fatalf("helper said %q, want LOCKED %d", line, os.Getpid())
	}
	p.Close()
	if line, _, _ = startHelper(t, "try", dataDir); line != "OPENED" {
		t.Fatalf("helper said %q after Close, want OPENED", line)
	}
}

func TestInterruptedCreation(t *testing.T) {
	dataDir := newDataDir(t)
	if err := EnsurePrivateDir(dataDir); err != nil {
		t.Fatal(err)
	}
	// A creation that crashed just before its final rename: a complete temporary sibling,
	// and no profile.
	full, err := buildTemp(dataDir, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	checkFresh(t, full)
	// One that crashed early: a temporary sibling with only a half-written marker.
	early, err := os.MkdirTemp(dataDir, tempPrefix)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(early, markerName), []byte(`{"vers`))
	if _, err := os.Lstat(profDir(dataDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the profile path exists before creation completed: %v", err)
	}

	p := openT(t, dataDir)
	if p.Report() != (Report{Created: true}) {
		t.Fatalf("Report = %+v", p.Report())
	}
	checkFresh(t, p.Dir())
	if got, want := entries(t, dataDir), []string{"profile", "profile.lock"}; !slices.Equal(got, want) {
		t.Fatalf("data dir holds %v, want %v", got, want)
	}

	// A leftover beside a healthy profile is removed too; the profile is left alone.
	p.Close()
	populate(t, p.Dir())
	before := snapshot(t, p.Dir())
	if _, err := buildTemp(dataDir, fixedNow); err != nil {
		t.Fatal(err)
	}
	p = openT(t, dataDir)
	if p.Report() != (Report{}) {
		t.Fatalf("Report = %+v", p.Report())
	}
	if got, want := entries(t, dataDir), []string{"profile", "profile.lock"}; !slices.Equal(got, want) {
		t.Fatalf("data dir holds %v, want %v", got, want)
	}
	if after := snapshot(t, p.Dir()); !reflect.DeepEqual(before, after) {
		t.Fatal("the healthy profile changed")
	}
}

func TestCorruptProfileMovedAside(t *testing.T) {
	cookies := sqliteImage(4096, 3)
	badPageSize := sqliteImage(4096, 1)
	binary.BigEndian.PutUint16(badPageSize[16:], 1000)
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, dir string)
		reason string
	}{
		{"garbage Local State", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Local State"), []byte("\x00\xffgarbage{"))
		}, "corrupt: Local State is not a JSON object"},
		{"Local State not an object", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Local State"), []byte(`["profile"]`))
		}, "corrupt: Local State is not a JSON object"},
		{"Local State null", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Local State"), []byte(`null`))
		}, "corrupt: Local State is not a JSON object"},
		{"garbage Preferences", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Default", "Preferences"), []byte(`{"credentials_enable_service":fal`))
		}, "corrupt: Default/Preferences is not a JSON object"},
		{"Preferences with trailing data", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Default", "Preferences"), []byte(`{"a":1}{"b":2}`))
		}, "corrupt: Default/Preferences is not a JSON object"},
		{"empty Preferences", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Default", "Preferences"), nil)
		}, "corrupt: Default/Preferences is not a JSON object"},
		{"garbage Secure Preferences", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Default", "Secure Preferences"), []byte("}"))
		}, "corrupt: Default/Secure Preferences is not a JSON object"},
		{"garbage Cookies", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Default", "Cookies"), bytes.Repeat([]byte("garbage!"), 1024))
		}, "corrupt: Default/Cookies: not a SQLite 3 database"},
		{"truncated Cookies", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Default", "Cookies"), cookies[:4096+1000])
		}, "corrupt: Default/Cookies: size 5096 is not a whole number of 4096-byte pages"},
		{"Cookies shorter than a page", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Default", "Cookies"), cookies[:100])
		}, "corrupt: Default/Cookies: size 100 is not a whole number"},
		{"Cookies truncated inside the header", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Default", "Cookies"), cookies[:10])
		}, "corrupt: Default/Cookies: not a SQLite 3 database"},
		{"Cookies with a bad page size", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Default", "Cookies"), badPageSize)
		}, "corrupt: Default/Cookies: invalid SQLite page size 1000"},
		{"truncated Network/Cookies", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "Default", "Network", "Cookies"), cookies[:17])
		}, "corrupt: Default/Network/Cookies: not a SQLite 3 database"},
		{"Cookies is a directory", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "Default", "Network", "Cookies"))
			os.Mkdir(filepath.Join(dir, "Default", "Network", "Cookies"), 0o700)
		}, "corrupt: Default/Network/Cookies: not a regular file"},
		{"Preferences is a symlink", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "Default", "Preferences"))
			os.Symlink("/etc/passwd", filepath.Join(dir, "Default", "Preferences"))
		}, "corrupt: Default/Preferences: is a symlink"},
		{"Default is a symlink", func(t *testing.T, dir string) {
			os.Rename(filepath.Join(dir, "Default"), filepath.Join(dir, "Elsewhere"))
			os.Symlink("Elsewhere", filepath.Join(dir, "Default"))
		}, "corrupt: Default is not a directory"},
		{"missing marker", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, markerName))
		}, "foreign: no headless-profile.json marker"},
		{"marker with another password store", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, markerName), []byte(`{"version":1,"created":"2026-01-01T00:00:00Z","password_store":"basic"}`))
		}, `foreign: profile uses password store "basic", not "gnome-libsecret"`},
		{"marker without a password store", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, markerName), []byte(`{"version":1}`))
		}, `foreign: profile uses password store "", not "gnome-libsecret"`},
		{"garbage marker", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, markerName), []byte(`{"version":1,"password_store":`))
		}, "corrupt: headless-profile.json is not valid"},
		{"marker version 0", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, markerName), []byte(`{"version":0,"password_store":"gnome-libsecret"}`))
		}, "corrupt: headless-profile.json is not a version 1 marker"},
		{"marker with a wrong type", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, markerName), []byte(`{"version":1,"password_store":["gnome-libsecret"]}`))
		}, "corrupt: headless-profile.json is not a version 1 marker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := newDataDir(t)
			p := openT(t, dataDir)
			dir := p.Dir()
			populate(t, dir)
			p.Close()
			tc.break_(t, dir)
			before := snapshot(t, dir)

			p = openT(t, dataDir)
			r := p.Report()
			aside := filepath.Join(dataDir, corruptName)
			if !r.Created || r.MovedAside != aside || !strings.HasPrefix(r.Reason, tc.reason) {
				t.Fatalf("Report = %+v\nwant Created, MovedAside %s, Reason starting %q", r, aside, tc.reason)
			}
			if after := snapshot(t, aside); !reflect.DeepEqual(before, after) {
				t.Fatalf("moved-aside profile differs from the original:\nbefore %v\nafter  %v", before, after)
			}
			checkFresh(t, dir)
			if got, want := entries(t, dataDir), []string{"profile", corruptName, "profile.lock"}; !slices.Equal(got, want) {
				t.Fatalf("data dir holds %v, want %v", got, want)
			}
		})
	}
}

func TestForeignProfilePathMovedAside(t *testing.T) {
	for _, tc := range []struct {
		name   string
		make   func(t *testing.T, path string)
		reason string
	}{
		{"regular file", func(t *testing.T, path string) { writeFile(t, path, []byte("not a profile")) }, "foreign: "},
		{"symlink", func(t *testing.T, path string) { os.Symlink(t.TempDir(), path) }, "foreign: "},
		{"a Chromium profile of someone else", func(t *testing.T, path string) {
			writeFile(t, filepath.Join(path, "Local State"), []byte(`{}`))
			writeFile(t, filepath.Join(path, "Default", "Preferences"), []byte(`{}`))
		}, "foreign: no headless-profile.json marker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := newDataDir(t)
			if err := EnsurePrivateDir(dataDir); err != nil {
				t.Fatal(err)
			}
			tc.make(t, profDir(dataDir))
			before := snapshot(t, profDir(dataDir))
			p := openT(t, dataDir)
			r := p.Report()
			aside := filepath.Join(dataDir, corruptName)
			if !r.Created || r.MovedAside != aside || !strings.HasPrefix(r.Reason, tc.reason) {
				t.Fatalf("Report = %+v", r)
			}
			if after := snapshot(t, aside); !reflect.DeepEqual(before, after) {
				t.Fatal("moved-aside entry differs from the original")
			}
			checkFresh(t, p.Dir())
		})
	}
}

func TestMovedAsideNamesDoNotCollide(t *testing.T) {
	dataDir := newDataDir(t)
	var asides []string
	for i := range 3 {
		p := openT(t, dataDir)
		if i > 0 {
			asides = append(asides, p.Report().MovedAside)
		}
		writeFile(t, filepath.Join(p.Dir(), "Local State"), []byte("garbage "+strconv.Itoa(i)))
		p.Close()
	}
	want := []string{filepath.Join(dataDir, corruptName), filepath.Join(dataDir, corruptName+"-2")}
	if !slices.Equal(asides, want) {
		t.Fatalf("moved aside to %v, want %v", asides, want)
	}
	for i, a := range asides {
		if b, _ := os.ReadFile(filepath.Join(a, "Local State")); string(b) != "garbage "+strconv.Itoa(i) {
			t.Fatalf("%s holds %q", a, b)
		}
	}
}

func TestHealthyProfileUntouched(t *testing.T) {
	dataDir := newDataDir(t)
	p := openT(t, dataDir)
	populate(t, p.Dir())
	// An empty cookie database is an empty SQLite database, not a corrupt one.
	writeFile(t, filepath.Join(p.Dir(), "Default", "Network", "Cookies"), nil)
	// A 64 KiB page size is written as 1.
	writeFile(t, filepath.Join(p.Dir(), "Default", "Cookies"), sqliteImage(65536, 2))
	p.Close()
	before := snapshot(t, p.Dir())
	time.Sleep(20 * time.Millisecond) // a rewrite would show in the modification times
	for range 2 {
		p = openT(t, dataDir)
		if p.Report() != (Report{}) {
			t.Fatalf("Report = %+v, want nothing done", p.Report())
		}
		if after := snapshot(t, p.Dir()); !reflect.DeepEqual(before, after) {
			t.Fatalf("Open changed a healthy profile:\nbefore %v\nafter  %v", before, after)
		}
		p.Close()
	}
}

func TestPrefsReasserted(t *testing.T) {
	dataDir := newDataDir(t)
	p := openT(t, dataDir)
	dir := p.Dir()
	p.Close()
	// Chromium rewrote Preferences: saving back on, plus keys of its own that must survive
	// exactly (large integers, HTML characters, non-ASCII, nesting, a non-object where a
	// pref's parent should be).
	orig := `{"credentials_enable_service":true,"credentials_enable_autosignin":true,` +
		`"profile":{"password_manager_leak_detection":true,"exit_type":"Crashed","avatar_index":26,"creation_time":"13440471727839382"},` +
		`"big":13440471728622471123,"float":1.5e-7,"html":"<b>&amp;</b>","name":"Crème ☃","list":[1,{"x":null}],` +
		`"automated_password_change_enabled":"yes"}`
	writeFile(t, filepath.Join(dir, "Default", "Preferences"), []byte(orig))
	p = openT(t, dataDir)
	if p.Report() != (Report{}) {
		t.Fatalf("Report = %+v", p.Report())
	}
	checkPasswordPrefs(t, dir)
	got := readPrefs(t, dir)
	want, err := decodeObject([]byte(orig))
	if err != nil {
		t.Fatal(err)
	}
	applyPasswordPrefs(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Preferences after re-assertion:\n got %v\nwant %v", got, want)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "Default", "Preferences"))
	for _, s := range []string{`13440471728622471123`, `1.5e-7`, `"<b>&amp;</b>"`, `"Crème ☃"`, `"creation_time":"13440471727839382"`} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("Preferences lost %s: %s", s, b)
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, "Default", "Preferences")); fi.Mode().Perm() != 0o600 {
		t.Errorf("Preferences mode %v", fi.Mode().Perm())
	}
	if got := entries(t, filepath.Join(dir, "Default")); !slices.Equal(got, []string{"Preferences", "Sessions", "Sessions_Encrypted"}) {
		t.Errorf("Default holds %v (temporary files left?)", got)
	}
	p.Close()

	// A rewrite interrupted before its rename leaves a temporary file; the next Open removes it.
	writeFile(t, filepath.Join(dir, "Default", ".Preferences.tmp-123456"), []byte(`{"credentials_enable_se`))
	p = openT(t, dataDir)
	if got := entries(t, filepath.Join(dir, "Default")); !slices.Equal(got, []string{"Preferences", "Sessions", "Sessions_Encrypted"}) {
		t.Errorf("Default holds %v, want the leftover removed", got)
	}
	p.Close()

	// Preferences (and Default) gone: written again.
	if err := os.RemoveAll(filepath.Join(dir, "Default")); err != nil {
		t.Fatal(err)
	}
	p = openT(t, dataDir)
	if p.Report() != (Report{}) {
		t.Fatalf("Report = %+v", p.Report())
	}
	checkPasswordPrefs(t, dir)
}

func TestNewerMarkerRefused(t *testing.T) {
	dataDir := newDataDir(t)
	p := openT(t, dataDir)
	writeFile(t, filepath.Join(p.Dir(), markerName), []byte(`{"version":2,"password_store":"something-new"}`))
	p.Close()
	before := snapshot(t, p.Dir())
	_, err := Open(Options{Dir: profDir(dataDir), Lock: lockPath(dataDir), Now: clock})
	if err == nil || !strings.Contains(err.Error(), "upgrade headless") {
		t.Fatalf("Open with a newer marker: %v", err)
	}
	if after := snapshot(t, p.Dir()); !reflect.DeepEqual(before, after) {
		t.Fatal("a newer profile was changed")
	}
	// The lock was released.
	unlock, err := Lock(lockPath(dataDir))
	if err != nil {
		t.Fatalf("lock after a failed Open: %v", err)
	}
	unlock()
}

// TestSessionsBlocked: every Open leaves Default/Sessions a regular empty read-only file, so
// Chromium writes no session restore data (page state: form values, POST bodies); a Sessions
// directory of an older profile is removed with the data in it.
func TestSessionsBlocked(t *testing.T) {
	dataDir := t.TempDir()
	p := openT(t, dataDir)
	dir := p.Dir()
	check := func(when string) {
		t.Helper()
		for _, name := range []string{"Sessions", "Sessions_Encrypted"} {
			fi, err := os.Lstat(filepath.Join(dir, "Default", name))
			if err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 || fi.Mode().Perm() != 0o400 {
				t.Fatalf("%s: Default/%s %v %v, want a regular empty 0400 file", when, name, fi, err)
			}
		}
	}
	check("created")
	p.Close()
	for _, c := range []struct{ name, kind string }{
		{"Sessions", "dir"}, {"Sessions", "file"}, {"Sessions", "symlink"},
		{"Sessions_Encrypted", "dir"}, {"Sessions_Encrypted", "file"},
	} {
		path, kind := filepath.Join(dir, "Default", c.name), c.kind
		os.Remove(path)
		switch kind {
		case "dir":
			os.Mkdir(path, 0o700)
			writeFile(t, filepath.Join(path, "Session_13440613731851167"), []byte("otp=123456"))
		case "file":
			writeFile(t, path, []byte("otp=123456"))
		case "symlink":
			os.Symlink(t.TempDir(), path)
		}
		p = openT(t, dataDir)
		check("a " + c.name + " " + kind + " before Open")
		p.Close()
	}
}

// TestPlantedStateDisarmed: what a same-user process planted in the profile while the host
// was stopped to route the browser's traffic or run code as a site — a proxy in Preferences
// (red-team round 6b read a sign-in's password through one), secure DNS and chrome://flags
// entries in Local State, the disk cache, the code cache, service workers — is gone when the
// profile is opened again; every other key stays.
func TestPlantedStateDisarmed(t *testing.T) {
	dataDir := t.TempDir()
	p := openT(t, dataDir)
	dir := p.Dir()
	p.Close()
	prefs := readPrefs(t, dir)
	prefs["proxy"] = map[string]any{"mode": "fixed_servers", "server": "http://127.0.0.1:41999", "bypass_list": "<-loopback>"}
	prefs["keep_me"] = "yes"
	prefs["safebrowsing"] = map[string]any{"password_protection_login_urls": []any{"http://127.0.0.1:9/login"}, "enabled": true}
	prefs["profile"].(map[string]any)["password_hash_data_list"] = []any{map[string]any{"hash": "1", "length": 20}}
	prefs["profile"].(map[string]any)["content_settings"] = map[string]any{"exceptions": map[string]any{
		"ssl_cert_decisions": map[string]any{"http://127.0.0.1:8443,*": map[string]any{"setting": map[string]any{"decisions": "proceed"}}},
		"keep_this":          map[string]any{}}}
	b, _ := encodePrefs(prefs)
	writeFile(t, filepath.Join(dir, "Default", "Preferences"), b)
	ls := `{"dns_over_https":{"mode":"secure","templates":"https://127.0.0.1:8443/dns-query"},` +
		`"browser":{"enabled_labs_experiments":["unsafely-treat-insecure-origin-as-secure"],"keep":1},"other":{"x":2}}`
	writeFile(t, filepath.Join(dir, "Local State"), []byte(ls))
	for _, d := range []string{"Cache/Cache_Data", "Code Cache/js", "Service Worker/Database"} {
		if err := os.MkdirAll(filepath.Join(dir, "Default", d), 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "Default", d, "planted"), []byte("agent's"))
	}
	os.Remove(filepath.Join(dir, "WidevineCdm")) // the block, as a process of the user can
	if err := os.MkdirAll(filepath.Join(dir, "WidevineCdm"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "WidevineCdm", "latest-component-updated-widevine-cdm"), []byte(`{"Path":"/home/agent/lib"}`))

	p = openT(t, dataDir)
	defer p.Close()
	got := readPrefs(t, dir)
	if _, ok := got["proxy"]; ok || got["keep_me"] != "yes" {
		t.Fatalf("Preferences after the open: proxy %v, keep_me %v", got["proxy"], got["keep_me"])
	}
	if sb := got["safebrowsing"].(map[string]any); sb["password_protection_login_urls"] != nil || sb["enabled"] != true {
		t.Fatalf("Preferences after the open: safebrowsing %v", sb)
	}
	if got["profile"].(map[string]any)["password_hash_data_list"] != nil {
		t.Fatal("Preferences after the open still hold password_hash_data_list")
	}
	if ex := got["profile"].(map[string]any)["content_settings"].(map[string]any)["exceptions"].(map[string]any); ex["ssl_cert_decisions"] != nil || ex["keep_this"] == nil {
		t.Fatalf("Preferences after the open: content_settings.exceptions %v; want ssl_cert_decisions gone, keep_this kept", ex)
	}
	checkPasswordPrefs(t, dir)
	lsb, err := os.ReadFile(filepath.Join(dir, "Local State"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := decodeObject(lsb)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"browser": map[string]any{"keep": json.Number("1")}, "other": map[string]any{"x": json.Number("2")}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("Local State after the open: %s; want %v", lsb, want)
	}
	for _, d := range []string{"Cache", "Code Cache", "Service Worker"} {
		if _, err := os.Lstat(filepath.Join(dir, "Default", d)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Default/%s is still there: %v", d, err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, "WidevineCdm")); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 || fi.Mode().Perm() != 0o400 {
		t.Errorf("WidevineCdm is %v, %v; want a regular empty 0400 file", fi, err)
	}
}
