package doctor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// shipped is the [Service] of contrib/systemd/user/brokerd.service before set-gid brokerd: the
// options that keep brokerd from its group.
const shipped = `[Unit]
Description=headless credential broker
Requires=brokerd.socket

[Service]
Type=simple
ExecStart=/usr/bin/brokerd
KillMode=mixed
NoNewPrivileges=yes
UMask=0077
LockPersonality=yes
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK
RestrictRealtime=yes
RestrictSUIDSGID=yes
SystemCallArchitectures=native

[Install]
Also=brokerd.socket
`

const plain = "[Unit]\nDescription=headless credential broker\n\n[Service]\nType=simple\nExecStart=/usr/bin/brokerd\nUMask=0077\nKillMode=mixed\n"

func TestSystemdUnitVerdicts(t *testing.T) {
	unit := func(bodies ...string) func() ([]UnitFile, error) {
		return func() ([]UnitFile, error) {
			var fs []UnitFile
			for i, b := range bodies {
				path := "/usr/lib/systemd/user/brokerd.service"
				if i > 0 {
					path = "/etc/systemd/user/brokerd.service.d/" + string(rune('a'+i)) + ".conf"
				}
				fs = append(fs, UnitFile{Path: path, Body: []byte(b)})
			}
			return fs, nil
		}
	}
	for _, tc := range []struct {
		name   string
		units  func() ([]UnitFile, error)
		want   State
		detail string
	}{
		{"no unit installed", unit(), Unsupported, "no brokerd.service user unit"},
		{"a unit without sandboxing", unit(plain), Healthy, "sets nothing"},
		{"the old shipped unit", unit(shipped), Failed, "NoNewPrivileges= sets no_new_privs"},
		{"the old shipped unit names every option", unit(shipped), Failed, "LockPersonality= implies no_new_privs in a user unit"},
		{"SystemCallArchitectures", unit(plain + "SystemCallArchitectures=native\n"), Failed, "SystemCallArchitectures="},
		{"ProtectKernelTunables", unit(plain + "ProtectKernelTunables=true\n"), Failed, "ProtectKernelTunables="},
		{"MemoryDenyWriteExecute", unit(plain + "MemoryDenyWriteExecute=on\n"), Failed, "MemoryDenyWriteExecute="},
		{"RestrictNamespaces list", unit(plain + "RestrictNamespaces=~user\n"), Failed, "RestrictNamespaces="},
		{"ProtectSystem", unit(plain + "ProtectSystem=strict\n"), Failed, "ProtectSystem= implies PrivateUsers="},
		{"PrivateUsers", unit(plain + "PrivateUsers=yes\n"), Failed, "PrivateUsers="},
		{"a continued SystemCallFilter", unit(plain + "SystemCallFilter=@system-service \\\n  @mount\n"), Failed, "SystemCallFilter="},
		{"a drop-in sets it", unit(plain, "[Service]\nNoNewPrivileges=yes\n"), Failed, "brokerd.service.d/b.conf"},
		{"a drop-in turns it off", unit(plain+"NoNewPrivileges=yes\n", "[Service]\nNoNewPrivileges=no\n"), Healthy, "sets nothing"},
		{"a drop-in resets a list", unit(plain+"RestrictAddressFamilies=AF_UNIX\n", "[Service]\nRestrictAddressFamilies=\n"), Healthy, "sets nothing"},
		{"false words", unit(plain + "NoNewPrivileges=false\nLockPersonality=0\nRestrictRealtime=off\nRestrictNamespaces=no\n"), Healthy, "sets nothing"},
		{"comments", unit(plain + "#NoNewPrivileges=yes\n; LockPersonality=yes\n"), Healthy, "sets nothing"},
		{"another section", unit("[Unit]\nNoNewPrivileges=yes\n[Service]\nExecStart=/usr/bin/brokerd\n"), Healthy, "sets nothing"},
		{"unreadable", func() ([]UnitFile, error) { return nil, errors.New("permission denied") }, Warning, "cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := world(t)
			p.Units = tc.units
			c := check(Run(context.Background(), p), CheckSystemdUnit)
			if c.State != tc.want || !strings.Contains(c.Detail, tc.detail) {
				t.Fatalf("systemd_unit = %s %q, want %s with %q", c.State, c.Detail, tc.want, tc.detail)
			}
		})
	}
	p := world(t)
	p.GOOS = "darwin"
	if c := check(Run(context.Background(), p), CheckSystemdUnit); c.State != Unsupported {
		t.Fatalf("systemd_unit on darwin: %+v", c)
	}
}

// TestUserUnits: the unit of the first directory, then every directory's drop-ins by name, one
// of a name masking the same name further down; masked, FIFO and oversized files.
func TestUserUnits(t *testing.T) {
	root := t.TempDir()
	high, low := filepath.Join(root, "high"), filepath.Join(root, "low")
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(low, unitName), "low unit")
	write(filepath.Join(high, unitName+".d", "20-b.conf"), "high b")
	write(filepath.Join(low, unitName+".d", "20-b.conf"), "low b (masked)")
	write(filepath.Join(low, unitName+".d", "10-a.conf"), "low a")
	write(filepath.Join(low, unitName+".d", "ignored.txt"), "not a drop-in")
	if err := syscall.Mkfifo(filepath.Join(low, unitName+".d", "30-fifo.conf"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := UserUnits([]string{filepath.Join(root, "none"), high, low})()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, strings.TrimPrefix(f.Path, root)+"="+string(f.Body))
	}
	want := []string{"/low/brokerd.service=low unit", "/low/brokerd.service.d/10-a.conf=low a", "/high/brokerd.service.d/20-b.conf=high b", "/low/brokerd.service.d/30-fifo.conf="}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("UserUnits = %q\nwant %q", got, want)
	}

	// The unit of a higher directory wins; one masked to /dev/null reads as empty.
	if err := os.Symlink("/dev/null", filepath.Join(high, unitName)); err != nil {
		t.Fatal(err)
	}
	if files, err := UserUnits([]string{high, low})(); err != nil || len(files) == 0 || files[0].Path != filepath.Join(high, unitName) || len(files[0].Body) != 0 {
		t.Fatalf("a masked unit: %+v, %v", files, err)
	}

	// No unit: no drop-ins either.
	if files, err := UserUnits([]string{filepath.Join(root, "none")})(); err != nil || files != nil {
		t.Fatalf("no unit: %+v, %v", files, err)
	}

	// A file past the bound is an error, not a partial read.
	write(filepath.Join(root, "big", unitName), strings.Repeat("#", maxUnitBytes+1))
	if _, err := UserUnits([]string{filepath.Join(root, "big")})(); err == nil {
		t.Fatal("an oversized unit was read")
	}
}

func TestUserUnitDirs(t *testing.T) {
	env := map[string]string{"HOME": "/home/a", "XDG_RUNTIME_DIR": "/run/user/1000", "XDG_CONFIG_HOME": "relative/ignored"}
	dirs := UserUnitDirs(func(k string) string { return env[k] })
	want := []string{"/home/a/.config/systemd/user.control", "/run/user/1000/systemd/user.control", "/run/user/1000/systemd/transient",
		"/home/a/.config/systemd/user", "/etc/systemd/user", "/run/user/1000/systemd/user", "/run/systemd/user",
		"/home/a/.local/share/systemd/user", "/usr/local/share/systemd/user", "/usr/share/systemd/user",
		"/usr/local/lib/systemd/user", "/usr/lib/systemd/user"}
	if !reflect.DeepEqual(dirs, want) {
		t.Fatalf("UserUnitDirs = %q\nwant %q", dirs, want)
	}
}
