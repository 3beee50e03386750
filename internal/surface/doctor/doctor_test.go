package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/keyprobe"
	"github.com/headless-dev/headless/internal/xdg"
)

// The fake install of world: gids of the two groups, and the files scripts/install.sh makes.
const (
	hostGID   = 994
	brokerGID = 993
	fakeExe   = "/opt/hl/bin/headless"
)

// installed is the file system world stats: what scripts/install.sh and chromium-sandbox make.
func installed() map[string]File {
	return map[string]File{
		fakeExe:                            {Mode: 0o755 | fs.ModeSetgid, GID: hostGID, Size: 1 << 20},
		"/opt/hl/bin/brokerd":              {Mode: 0o755 | fs.ModeSetgid, GID: brokerGID, Size: 1 << 20},
		hardening.KeyPath:                  {Mode: 0o640, GID: brokerGID, Size: 32},
		"/etc/headless":                    {Mode: 0o755 | fs.ModeDir},
		hardening.StateDir:                 {Mode: 0o770 | fs.ModeDir | fs.ModeSticky, GID: brokerGID},
		"/usr/lib/chromium/chrome-sandbox": {Mode: 0o755 | fs.ModeSetuid, Size: 14840},
	}
}

// statIn is a Stat probe over files (a missing path is fs.ErrNotExist).
func statIn(files map[string]File) func(string) (File, error) {
	return func(path string) (File, error) {
		if f, ok := files[path]; ok {
			return f, nil
		}
		return File{}, &fs.PathError{Op: "lstat", Path: path, Err: fs.ErrNotExist}
	}
}

// world is a user's files in a temp dir and fakes for what the doctor asks.
func world(t *testing.T) Probes {
	root := t.TempDir()
	env := map[string]string{"HOME": root, "XDG_RUNTIME_DIR": filepath.Join(root, "run"), "XDG_DATA_HOME": filepath.Join(root, "data"), "XDG_CONFIG_HOME": filepath.Join(root, "config")}
	l := xdg.New(func(k string) string { return env[k] }, os.Getuid())
	return Probes{
		Version: "v1", GOOS: "linux", Layout: l, BusAddress: "unix:path=/secret/bus-address-value",
		Inspect: func(ctx context.Context, addr, label string) (keyprobe.Inspection, error) {
			return keyprobe.Inspection{Keyrings: 1, Locked: true, PrompterRunning: true}, nil
		},
		Profile: func() (control.ProfileFacts, error) {
			return control.ProfileFacts{Path: filepath.Join(root, "data/headless/profile")}, nil
		},
		Alive:       func(int) bool { return true },
		Listening:   func(string) (bool, error) { return false, nil },
		PtraceScope: func() string { return "1" },
		Executable:  fakeExe,
		LookupGroup: func(name string) (int, error) {
			switch name {
			case hardening.HostGroup:
				return hostGID, nil
			case hardening.BrokerGroup:
				return brokerGID, nil
			}
			return -1, user.UnknownGroupError(name)
		},
		InGroup: func(int) bool { return false },
		Stat:    statIn(installed()),
		Units:   func() ([]UnitFile, error) { return nil, nil },
	}
}

func states(r Report) map[string]State {
	m := map[string]State{}
	for _, c := range r.Checks {
		m[c.ID] = c.State
	}
	return m
}

func TestEveryIDOnceInOrder(t *testing.T) {
	r := Run(context.Background(), world(t))
	if len(r.Checks) != len(IDs) || r.Format != Format {
		t.Fatalf("report %+v", r)
	}
	for i, c := range r.Checks {
		if c.ID != IDs[i] || c.Detail == "" {
			t.Errorf("check %d: %+v", i, c)
		}
		if c.State != Healthy && c.Hint == "" && c.State != Unsupported {
			t.Errorf("%s is %s without a hint", c.ID, c.State)
		}
	}
}

func TestVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(p *Probes)
		id    string
		want  State
	}{
		{"keyring locked at rest", func(p *Probes) {}, CheckKeyring, Healthy},
		{"keyring unlocked", func(p *Probes) {
			p.Inspect = func(context.Context, string, string) (keyprobe.Inspection, error) {
				return keyprobe.Inspection{Keyrings: 1, PrompterRunning: true}, nil
			}
		}, CheckKeyring, Warning},
		{"two keyrings", func(p *Probes) {
			p.Inspect = func(context.Context, string, string) (keyprobe.Inspection, error) {
				return keyprobe.Inspection{Keyrings: 2, PrompterRunning: true}, nil
			}
		}, CheckKeyring, Failed},
		{"auto-unlock stored", func(p *Probes) {
			p.Inspect = func(context.Context, string, string) (keyprobe.Inspection, error) {
				return keyprobe.Inspection{Keyrings: 1, Locked: true, AutoUnlockStored: true, PrompterRunning: true}, nil
			}
		}, CheckAutoUnlock, Failed},
		{"default collection locked", func(p *Probes) {
			p.Inspect = func(context.Context, string, string) (keyprobe.Inspection, error) {
				return keyprobe.Inspection{Default: keyprobe.ErrLocked}, nil
			}
		}, CheckSecretService, Failed},
		{"no bus", func(p *Probes) { p.BusAddress = "" }, CheckSecretService, Failed},
		{"bus down", func(p *Probes) {
			p.Inspect = func(context.Context, string, string) (keyprobe.Inspection, error) {
				return keyprobe.Inspection{}, errors.New("connect to session bus: no")
			}
		}, CheckKeyring, Warning},
		{"no prompter anywhere", func(p *Probes) {
			p.Inspect = func(context.Context, string, string) (keyprobe.Inspection, error) {
				return keyprobe.Inspection{Keyrings: 1, Locked: true}, nil
			}
		}, CheckPresence, Failed},
		{"brokerd not running", func(p *Probes) {}, CheckBrokerd, Warning},
		{"darwin", func(p *Probes) { p.GOOS = "darwin" }, CheckSecretService, Unsupported},
		{"darwin presence without a provider", func(p *Probes) { p.GOOS = "darwin" }, CheckPresence, Warning},
		{"nothing runs: undumpable not checked", func(p *Probes) {}, CheckUndumpable, Warning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := world(t)
			tc.setup(&p)
			r := Run(context.Background(), p)
			if got := states(r)[tc.id]; got != tc.want {
				t.Fatalf("%s = %s, want %s (%+v)", tc.id, got, tc.want, r.Checks)
			}
			if (r.Summary.Failed > 0) != r.Failed() {
				t.Fatal("Failed() disagrees with the summary")
			}
		})
	}
}

func TestRunningDaemons(t *testing.T) {
	p := world(t)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(p.Layout.Runtime, 0o700))
	must(os.WriteFile(p.Layout.BrokerLock(), []byte("4242\n"), 0o600))
	p.Broker = func(context.Context) (brokerapi.VersionResult, error) {
		return brokerapi.VersionResult{Version: "v1", PID: 4242, Presence: "secret-service", Started: brokerapi.StartedPerson,
			Facts: hardening.Report{Undumpable: true, Binaries: []hardening.BinaryFact{{Path: "/usr/bin/brokerd"}, {Path: "/usr/bin/headless"}}}}, nil
	}
	p.Listening = func(path string) (bool, error) { return strings.HasSuffix(path, "control.sock"), nil }
	must(os.WriteFile(p.Layout.ControlSocket(), nil, 0o600)) // a plain file: the sockets check must fail it
	p.Host = func(context.Context) (control.Status, error) {
		return control.Status{PID: 99, Undumpable: false, Chromium: "HeadlessChrome/156"}, nil
	}
	st := states(Run(context.Background(), p))
	for id, want := range map[string]State{CheckBrokerd: Healthy, CheckHost: Healthy, CheckUndumpable: Failed, CheckBinaries: Healthy, CheckSockets: Failed} {
		if st[id] != want {
			t.Errorf("%s = %s, want %s", id, st[id], want)
		}
	}
}

// TestNothingSecretPrinted: the bus address (an environment value) never appears.
func TestNothingSecretPrinted(t *testing.T) {
	p := world(t)
	b, _ := json.Marshal(Run(context.Background(), p))
	if strings.Contains(string(b), "bus-address-value") || strings.Contains(string(b), "://") {
		t.Fatalf("the report carries an environment value or a URL: %s", b)
	}
}

func TestListeningIn(t *testing.T) {
	table := `Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 123 /run/x/broker.sock
0000000000000000: 00000002 00000000 00000000 0001 03 124 /run/x/control.sock
0000000000000000: 00000002 00000000 00000000 0001 03 125
`
	for path, want := range map[string]bool{"/run/x/broker.sock": true, "/run/x/control.sock": false, "/nope": false} {
		got, err := listeningIn(strings.NewReader(table), path)
		if err != nil || got != want {
			t.Errorf("listeningIn(%s) = %v, %v; want %v", path, got, err, want)
		}
	}
	if _, err := listeningIn(strings.NewReader(""), "/x"); err == nil {
		t.Error("an empty table is an answer")
	}
}

func TestDpkgVersion(t *testing.T) {
	status := "Package: chromium-common\nStatus: install ok installed\nVersion: 1\n\nPackage: chromium\nStatus: install ok installed\nVersion: 156.0-1~deb12u1\n\nPackage: x\n"
	if v := dpkgVersion(strings.NewReader(status), "chromium"); v != "156.0-1~deb12u1" {
		t.Fatalf("version %q", v)
	}
	if v := dpkgVersion(strings.NewReader("Package: chromium\nStatus: deinstall ok config-files\nVersion: 9\n"), "chromium"); v != "" {
		t.Fatalf("a removed package has version %q", v)
	}
}

// TestBusyIsNotBroken: a daemon that took the question and did not answer within the wait is
// busy (a warning) when it holds its lock; a slow answer is healthy, its time said; an answer
// that is not the daemon's, or a silent listener no host stands behind, fails.
func TestBusyIsNotBroken(t *testing.T) {
	silent := func(ctx context.Context) (control.Status, error) { <-ctx.Done(); return control.Status{}, ctx.Err() }
	slow := func(ctx context.Context) (control.Status, error) {
		time.Sleep(20 * time.Millisecond)
		return control.Status{PID: 99}, nil
	}
	wrong := func(context.Context) (control.Status, error) {
		return control.Status{}, fmt.Errorf("%w: malformed reply", control.ErrUnavailable)
	}
	for _, tc := range []struct {
		name      string
		host      func(context.Context) (control.Status, error)
		lockPID   int
		want      State
		detailHas string
	}{
		{"silent, the host holds the profile", silent, 99, Warning, "busy: pid 99 holds the profile"},
		{"silent, no host holds the profile", silent, 0, Failed, "no host holds the profile"},
		{"slow answer", slow, 99, Healthy, "busy"},
		{"not the host", wrong, 99, Failed, "does not answer as the host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := world(t)
			p.Wait, p.Slow = 50*time.Millisecond, time.Millisecond
			p.Listening = func(path string) (bool, error) { return strings.HasSuffix(path, "control.sock"), nil }
			p.Host = tc.host
			p.Profile = func() (control.ProfileFacts, error) {
				return control.ProfileFacts{Path: "/p", Exists: true, LockPID: tc.lockPID}, nil
			}
			r := Run(context.Background(), p)
			for _, c := range r.Checks {
				if c.ID == CheckHost && (c.State != tc.want || !strings.Contains(c.Detail, tc.detailHas)) {
					t.Fatalf("host: %s %q, want %s with %q", c.State, c.Detail, tc.want, tc.detailHas)
				}
			}
		})
	}

	p := world(t)
	p.Wait = 50 * time.Millisecond
	if err := os.MkdirAll(p.Layout.Runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Layout.BrokerLock(), []byte("4242\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.Broker = func(ctx context.Context) (brokerapi.VersionResult, error) {
		<-ctx.Done()
		return brokerapi.VersionResult{}, ctx.Err()
	}
	if st := states(Run(context.Background(), p)); st[CheckBrokerd] != Warning {
		t.Fatalf("a brokerd holding its lock and not answering: %s, want warning (busy)", st[CheckBrokerd])
	}
}

// The X11 warning says what a browser with windows adds: its windows are readable and
// writable by every X client too.
func TestX11WarnsOfWindows(t *testing.T) {
	p := world(t)
	p.Display = true
	for _, c := range Run(context.Background(), p).Checks {
		if c.ID == CheckX11 && (c.State != Warning || !strings.Contains(c.Detail, "start --window") || !strings.Contains(c.Detail, "read the browser's windows")) {
			t.Fatalf("x11: %+v", c)
		}
	}
}
