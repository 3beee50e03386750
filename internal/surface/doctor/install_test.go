package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/broker/seal"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/hardening"
)

// withFile replaces one file of world's install (nil: it does not exist).
func withFile(path string, f *File) func(p *Probes) {
	return func(p *Probes) {
		files := installed()
		delete(files, path)
		if f != nil {
			files[path] = *f
		}
		p.Stat = statIn(files)
	}
}

// brokerRunning makes a live brokerd hold broker.lock and answer v.
func brokerRunning(t *testing.T, p *Probes, v brokerapi.VersionResult) {
	t.Helper()
	if err := os.MkdirAll(p.Layout.Runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Layout.BrokerLock(), []byte("4242\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v.PID == 0 {
		v.PID = 4242
	}
	v.Version = "v1"
	p.Broker = func(context.Context) (brokerapi.VersionResult, error) { return v, nil }
}

func writeConfig(t *testing.T, p *Probes, body string) {
	t.Helper()
	path, err := p.Layout.Config()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestInstallVerdicts: the checks of what the install makes, of brokerd's trust, of
// Chromium's sandbox, of the session's display and of Yama. Each case names a word of the
// detail, so that a check's absence (the "not checked" warning) fails it.
func TestInstallVerdicts(t *testing.T) {
	file := func(mode fs.FileMode, uid, gid int, size int64) *File {
		return &File{Mode: mode, UID: uid, GID: gid, Size: size}
	}
	sandbox := "/usr/lib/chromium/chrome-sandbox"
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, p *Probes)
		id     string
		want   State
		detail string
	}{
		// groups
		{"groups exist, you are in neither", nil, CheckGroups, Healthy, "you are in neither"},
		{"no headless-broker group", func(t *testing.T, p *Probes) {
			look := p.LookupGroup
			p.LookupGroup = func(n string) (int, error) {
				if n == hardening.BrokerGroup {
					return look("nope")
				}
				return look(n)
			}
		}, CheckGroups, Failed, "headless-broker does not exist"},
		{"group lookup fails", func(t *testing.T, p *Probes) {
			p.LookupGroup = func(string) (int, error) { return -1, errors.New("nss down") }
		}, CheckGroups, Failed, "cannot be looked up"},
		{"member of headless", func(t *testing.T, p *Probes) { p.InGroup = func(g int) bool { return g == hostGID } }, CheckGroups, Failed, "member of headless:"},
		{"member of headless-broker, as root", func(t *testing.T, p *Probes) {
			p.Root, p.InGroup = true, func(g int) bool { return g == brokerGID }
		}, CheckGroups, Failed, "member of headless-broker"},

		// setgid
		{"binaries set-gid, beside each other", nil, CheckSetGID, Healthy, "root-owned, one directory"},
		{"no brokerd beside headless", withFileT("/opt/hl/bin/brokerd", nil), CheckSetGID, Failed, "brokerd does not exist"},
		{"headless not set-gid", withFileT(fakeExe, file(0o755, 0, hostGID, 1)), CheckSetGID, Failed, "not set-gid to headless "},
		{"brokerd of the host group", withFileT("/opt/hl/bin/brokerd", file(0o755|fs.ModeSetgid, 0, hostGID, 1)), CheckSetGID, Failed, "not set-gid to headless-broker"},
		{"brokerd owned by the user", withFileT("/opt/hl/bin/brokerd", file(0o755|fs.ModeSetgid, 1000, brokerGID, 1)), CheckSetGID, Failed, "owned by uid 1000"},
		{"brokerd a symlink", withFileT("/opt/hl/bin/brokerd", &File{Mode: 0o755 | fs.ModeSetgid, GID: brokerGID, Symlink: true}), CheckSetGID, Failed, "is a symlink"},
		{"the running brokerd is another install's", func(t *testing.T, p *Probes) {
			brokerRunning(t, p, brokerapi.VersionResult{Facts: hardening.Report{Binaries: []hardening.BinaryFact{{Path: "/usr/bin/brokerd"}}}})
		}, CheckSetGID, Warning, "the running brokerd (pid 4242) is /usr/bin/brokerd"},
		{"groups missing: setgid not judged", func(t *testing.T, p *Probes) {
			p.LookupGroup = func(n string) (int, error) { return -1, errors.New("nss down") }
		}, CheckSetGID, Warning, "not checked: the group"},

		// seal_key
		{"seal key as installed", nil, CheckSealKey, Healthy, "root:headless-broker, mode 0640, 32 bytes"},
		{"no seal key", withFileT(hardening.KeyPath, nil), CheckSealKey, Failed, "does not exist"},
		{"seal key readable by others", withFileT(hardening.KeyPath, file(0o644, 0, brokerGID, 32)), CheckSealKey, Failed, "has mode 0644"},
		{"seal key group-writable", withFileT(hardening.KeyPath, file(0o660, 0, brokerGID, 32)), CheckSealKey, Failed, "has mode 0660"},
		{"seal key 0600", withFileT(hardening.KeyPath, file(0o600, 0, brokerGID, 32)), CheckSealKey, Failed, "may not read it"},
		{"seal key of the host group", withFileT(hardening.KeyPath, file(0o640, 0, hostGID, 32)), CheckSealKey, Failed, "not headless-broker"},
		{"seal key owned by the user", withFileT(hardening.KeyPath, file(0o640, 1000, brokerGID, 32)), CheckSealKey, Failed, "owned by uid 1000"},
		{"seal key short", withFileT(hardening.KeyPath, file(0o640, 0, brokerGID, 16)), CheckSealKey, Failed, "holds 16 bytes"},
		{"seal key a symlink", withFileT(hardening.KeyPath, &File{Mode: 0o640, GID: brokerGID, Size: 32, Symlink: true}), CheckSealKey, Failed, "is a symlink"},
		{"seal key a directory", withFileT(hardening.KeyPath, file(0o750|fs.ModeDir, 0, brokerGID, 32)), CheckSealKey, Failed, "not a regular file"},
		// state_dir
		{"state dir as installed", nil, CheckStateDir, Healthy, "mode 1770"},
		{"no state dir", withFileT(hardening.StateDir, nil), CheckStateDir, Failed, "does not exist"},
		{"state dir not sticky", withFileT(hardening.StateDir, file(0o770|fs.ModeDir, 0, brokerGID, 0)), CheckStateDir, Failed, "not 1770"},
		{"state dir open to others", withFileT(hardening.StateDir, file(0o775|fs.ModeDir|fs.ModeSticky, 0, brokerGID, 0)), CheckStateDir, Failed, "not 1770"},
		{"state dir the user's", withFileT(hardening.StateDir, file(0o770|fs.ModeDir|fs.ModeSticky, 1000, brokerGID, 0)), CheckStateDir, Failed, "owned by uid 1000"},
		{"state dir of the host group", withFileT(hardening.StateDir, file(0o770|fs.ModeDir|fs.ModeSticky, 0, hostGID, 0)), CheckStateDir, Failed, "not headless-broker"},
		{"state dir a symlink", withFileT(hardening.StateDir, &File{Mode: 0o770 | fs.ModeDir, GID: brokerGID, Symlink: true}), CheckStateDir, Failed, "not a directory"},
		{"seal key dir group-writable", withFileT("/etc/headless", file(0o775|fs.ModeDir, 0, 0, 0)), CheckSealKey, Failed, "only root can write"},
		{"seal key dir the user's", withFileT("/etc/headless", file(0o755|fs.ModeDir, 1000, 0, 0)), CheckSealKey, Failed, "uid 1000"},

		// brokerd_trust
		{"brokerd not running", nil, CheckBrokerTrust, Warning, "brokerd does not run"},
		{"brokerd trusted", func(t *testing.T, p *Probes) { brokerRunning(t, p, brokerapi.VersionResult{}) }, CheckBrokerTrust, Healthy, "has the seal key"},
		{"brokerd not given its group", func(t *testing.T, p *Probes) {
			brokerRunning(t, p, brokerapi.VersionResult{Untrusted: "the kernel did not give this brokerd its group (headless-broker), so it may not read the seal key: it was not installed set-gid"})
		}, CheckBrokerTrust, Failed, "did not give it its group headless-broker"},
		{"brokerd without a key file", func(t *testing.T, p *Probes) {
			brokerRunning(t, p, brokerapi.VersionResult{Untrusted: "the seal key file does not exist: /etc/headless/seal.key"})
		}, CheckBrokerTrust, Failed, "the seal key does not exist"},
		{"brokerd untrusted for a reason unknown", func(t *testing.T, p *Probes) {
			brokerRunning(t, p, brokerapi.VersionResult{Untrusted: "something new"})
		}, CheckBrokerTrust, Failed, "a reason this doctor does not know"},

		// chromium_sandbox
		{"sandbox setuid root", nil, CheckSandbox, Healthy, "root-owned, setuid, mode 4755"},
		{"no sandbox", withFileT(sandbox, nil), CheckSandbox, Failed, "does not exist"},
		{"no sandbox, as root", func(t *testing.T, p *Probes) { withFile(sandbox, nil)(p); p.Root = true }, CheckSandbox, Warning, "as root Chromium runs with --no-sandbox"},
		{"sandbox as root", func(t *testing.T, p *Probes) { p.Root = true }, CheckSandbox, Healthy, "does not use it"},
		{"sandbox not setuid", withFileT(sandbox, file(0o755, 0, 0, 1)), CheckSandbox, Failed, "not setuid"},
		{"sandbox not root's", withFileT(sandbox, file(0o755|fs.ModeSetuid, 1000, 0, 1)), CheckSandbox, Failed, "owned by uid 1000"},
		{"sandbox not for others", withFileT(sandbox, file(0o750|fs.ModeSetuid, 0, 0, 1)), CheckSandbox, Failed, "may not be run by others"},
		{"sandbox beside the configured Chromium", func(t *testing.T, p *Probes) {
			writeConfig(t, p, `{"chromium":"/opt/chromium/chrome"}`)
		}, CheckSandbox, Failed, "/opt/chromium/chrome-sandbox does not exist"},

		// chromium: a Chromium anyone may read is fine (it runs with the headless group and the
		// setuid sandbox); /usr/bin/true stands for a root-owned, readable ELF.
		{"a readable Chromium", func(t *testing.T, p *Probes) {
			needLinux(t)
			writeConfig(t, p, `{"chromium":"/usr/bin/true"}`)
		}, CheckChromium, Healthy, "/usr/bin/true"},
		{"a readable Chromium, as root", func(t *testing.T, p *Probes) {
			needLinux(t)
			p.Root = true
			writeConfig(t, p, `{"chromium":"/usr/bin/true"}`)
		}, CheckChromium, Healthy, "/usr/bin/true"},

		// x11
		{"no display", nil, CheckX11, Healthy, "no display"},
		{"X11 session", func(t *testing.T, p *Probes) { p.Display = true }, CheckX11, Warning, "uses X11"},
		{"Wayland with Xwayland", func(t *testing.T, p *Probes) { p.Display, p.Wayland = true, true }, CheckX11, Healthy, "uses Wayland"},
		{"config sends prompts to X11", func(t *testing.T, p *Probes) {
			p.Wayland = true
			writeConfig(t, p, `{"presence":{"display":":1"}}`)
		}, CheckX11, Warning, "presence.display"},
		{"config names both displays", func(t *testing.T, p *Probes) {
			p.Wayland = true
			writeConfig(t, p, `{"presence":{"display":":1","wayland_display":"wayland-0"}}`)
		}, CheckX11, Healthy, "uses Wayland"},

		// ptrace_scope: informational at every value
		{"ptrace_scope 0", func(t *testing.T, p *Probes) { p.PtraceScope = func() string { return "0" } }, CheckPtraceScope, Healthy, "ptrace_scope = 0 (informational"},
		{"ptrace_scope 1", nil, CheckPtraceScope, Healthy, "ptrace_scope = 1 (informational"},
		{"no Yama", func(t *testing.T, p *Probes) { p.PtraceScope = func() string { return "absent" } }, CheckPtraceScope, Healthy, "no Yama"},
		{"ptrace_scope unreadable", func(t *testing.T, p *Probes) { p.PtraceScope = func() string { return "unknown" } }, CheckPtraceScope, Healthy, "cannot be read"},
		{"ptrace_scope as root", func(t *testing.T, p *Probes) { p.Root = true; p.PtraceScope = func() string { return "0" } }, CheckPtraceScope, Healthy, "ptrace_scope = 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := world(t)
			if tc.setup != nil {
				tc.setup(t, &p)
			}
			r := Run(context.Background(), p)
			c := check(r, tc.id)
			if c.State != tc.want || !strings.Contains(c.Detail, tc.detail) {
				t.Fatalf("%s = %s %q, want %s with %q", tc.id, c.State, c.Detail, tc.want, tc.detail)
			}
			if c.State != Healthy && c.State != Unsupported && c.Hint == "" {
				t.Fatalf("%s is %s without a hint", tc.id, c.State)
			}
		})
	}
}

// needLinux: the case reads a real ELF of the system.
func needLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads a Linux ELF binary")
	}
}

func withFileT(path string, f *File) func(*testing.T, *Probes) {
	return func(_ *testing.T, p *Probes) { withFile(path, f)(p) }
}

func check(r Report, id string) Check {
	for _, c := range r.Checks {
		if c.ID == id {
			return c
		}
	}
	return Check{}
}

// TestUntrustedNotEchoed: brokerd's reason is put in the doctor's words, never printed.
func TestUntrustedNotEchoed(t *testing.T) {
	p := world(t)
	brokerRunning(t, &p, brokerapi.VersionResult{Untrusted: "seal key: open /secret/path-value: https://example.test"})
	b, _ := json.Marshal(Run(context.Background(), p))
	if strings.Contains(string(b), "path-value") || strings.Contains(string(b), "://") {
		t.Fatalf("the report echoes brokerd's reason: %s", b)
	}
}

// TestNotInstalled: a machine without the install fails on each thing only root can make.
func TestNotInstalled(t *testing.T) {
	p := world(t)
	p.LookupGroup = func(n string) (int, error) { return -1, errors.New("unknown group") }
	p.Stat = statIn(map[string]File{})
	st := states(Run(context.Background(), p))
	for id, want := range map[string]State{CheckGroups: Failed, CheckSealKey: Failed, CheckSandbox: Failed, CheckSetGID: Warning} {
		if st[id] != want {
			t.Errorf("%s = %s, want %s", id, st[id], want)
		}
	}
}

func TestStatFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, make([]byte, 32), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f, filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	got, err := StatFile(f)
	if err != nil || got.Size != 32 || got.Mode.Perm() != 0o640 || got.UID != os.Getuid() || got.Symlink {
		t.Fatalf("StatFile(file) = %+v, %v", got, err)
	}
	got, err = StatFile(filepath.Join(dir, "l"))
	if err != nil || !got.Symlink || got.Size != 32 || !got.Mode.IsRegular() {
		t.Fatalf("StatFile(symlink) = %+v, %v", got, err)
	}
	if _, err := StatFile(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("StatFile(missing): %v", err)
	}
}

// TestSealKeyLen: the doctor's copy of the key length is the seal package's.
func TestSealKeyLen(t *testing.T) {
	if sealKeyLen != seal.KeyLen {
		t.Fatalf("sealKeyLen %d, seal.KeyLen %d", sealKeyLen, seal.KeyLen)
	}
}
