package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

const full = `{
  "presence": {"provider": "secret-service", "timeout_seconds": 30},
  "challenge_ttl_seconds": 300,
  "allow_direct_password_fill": true
}
`

func TestDefaults(t *testing.T) {
	d := Defaults()
	want := Config{Presence: Presence{Provider: "", TimeoutSeconds: 45}, ChallengeTTLSeconds: 120}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("Defaults = %+v, want %+v", d, want)
	}
	if d.PresenceTimeout() != 45*time.Second || d.ChallengeTTL() != 120*time.Second {
		t.Errorf("durations %v %v", d.PresenceTimeout(), d.ChallengeTTL())
	}
	var zero Config
	if zero.PresenceTimeout() != 45*time.Second || zero.ChallengeTTL() != 120*time.Second {
		t.Errorf("zero Config durations %v %v", zero.PresenceTimeout(), zero.ChallengeTTL())
	}
	c := Config{Presence: Presence{TimeoutSeconds: 5}, ChallengeTTLSeconds: 15}
	if c.PresenceTimeout() != 5*time.Second || c.ChallengeTTL() != 15*time.Second {
		t.Errorf("durations %v %v", c.PresenceTimeout(), c.ChallengeTTL())
	}
}

// writeFile writes data to dir/config.json with exactly mode perm (not filtered by umask).
func writeFile(t *testing.T, dir, data string, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	return p
}

// executable writes a small file with mode perm and returns its path.
func executable(t *testing.T, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pinentry")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho OK\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadMissing(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{
		filepath.Join(dir, "config.json"),
		filepath.Join(dir, "absent", "config.json"),
		filepath.Join(dir, "a", "b", "config.json"),
	} {
		c, err := Load(p)
		if err != nil || !reflect.DeepEqual(c, Defaults()) {
			t.Errorf("Load(%s) = %+v, %v; want Defaults", p, c, err)
		}
	}
}

func TestLoadAccepts(t *testing.T) {
	want := Config{
		Presence:                Presence{Provider: "secret-service", TimeoutSeconds: 30},
		ChallengeTTLSeconds:     300,
		AllowDirectPasswordFill: true,
	}
	for _, perm := range []os.FileMode{0o600, 0o400, 0o644, 0o640, 0o604, 0o444} {
		t.Run(perm.String(), func(t *testing.T) {
			p := writeFile(t, t.TempDir(), full, perm)
			c, err := Load(p)
			if err != nil || !reflect.DeepEqual(c, want) {
				t.Fatalf("Load = %+v, %v; want %+v", c, err, want)
			}
		})
	}
	t.Run("directory 0755", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(writeFile(t, dir, full, 0o600)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("symlinked directory", func(t *testing.T) {
		// A symlink to the directory (~/.config -> dotfiles) is followed; the directory it
		// names is what is checked.
		real := t.TempDir()
		writeFile(t, real, full, 0o600)
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(filepath.Join(link, "config.json")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("empty object", func(t *testing.T) {
		c, err := Load(writeFile(t, t.TempDir(), "{}", 0o600))
		if err != nil || !reflect.DeepEqual(c, Defaults()) {
			t.Fatalf("Load = %+v, %v; want Defaults", c, err)
		}
	})
	t.Run("pinentry", func(t *testing.T) {
		prog := executable(t, 0o755)
		p := writeFile(t, t.TempDir(), `{"presence":{"provider":"pinentry","program":"`+prog+`"}}`, 0o600)
		c, err := Load(p)
		want := Config{Presence: Presence{Provider: "pinentry", Program: prog, TimeoutSeconds: 45}, ChallengeTTLSeconds: 120}
		if err != nil || !reflect.DeepEqual(c, want) {
			t.Fatalf("Load = %+v, %v; want %+v", c, err, want)
		}
	})
}

func TestLoadRefuses(t *testing.T) {
	if os.Getuid() != 0 {
		t.Log("not root: wrong-owner cases check against another uid instead of chown")
	}
	tests := []struct {
		name  string
		setup func(t *testing.T) (path string, uid int)
		err   error
		msg   string
	}{
		{"file 0666", func(t *testing.T) (string, int) {
			return writeFile(t, t.TempDir(), full, 0o666), os.Getuid()
		}, ErrInsecure, "is writable by group or others (mode 0666)"},
		{"file 0620", func(t *testing.T) (string, int) {
			return writeFile(t, t.TempDir(), full, 0o620), os.Getuid()
		}, ErrInsecure, "(mode 0620)"},
		{"file 0602", func(t *testing.T) (string, int) {
			return writeFile(t, t.TempDir(), full, 0o602), os.Getuid()
		}, ErrInsecure, "(mode 0602)"},
		{"file 0777", func(t *testing.T) (string, int) {
			return writeFile(t, t.TempDir(), full, 0o777), os.Getuid()
		}, ErrInsecure, "(mode 0777)"},
		{"file owned by another user", func(t *testing.T) (string, int) {
			p := writeFile(t, t.TempDir(), full, 0o600)
			return p, chownOrOtherUID(t, p)
		}, ErrInsecure, "is owned by uid"},
		{"symlink to a good file", func(t *testing.T) (string, int) {
			dir := t.TempDir()
			target := writeFile(t, t.TempDir(), full, 0o600)
			p := filepath.Join(dir, "config.json")
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			return p, os.Getuid()
		}, ErrInsecure, "is a symlink"},
		{"dangling symlink", func(t *testing.T) (string, int) {
			p := filepath.Join(t.TempDir(), "config.json")
			if err := os.Symlink("/nonexistent/config.json", p); err != nil {
				t.Fatal(err)
			}
			return p, os.Getuid()
		}, ErrInsecure, "is a symlink"},
		{"directory as config file", func(t *testing.T) (string, int) {
			p := filepath.Join(t.TempDir(), "config.json")
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			return p, os.Getuid()
		}, ErrInsecure, "not a regular file"},
		{"fifo", func(t *testing.T) (string, int) {
			p := filepath.Join(t.TempDir(), "config.json")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			return p, os.Getuid()
		}, ErrInsecure, "not a regular file"},
		{"directory 0777", func(t *testing.T) (string, int) {
			return writeFile(t, chmodDir(t, 0o777), full, 0o600), os.Getuid()
		}, ErrInsecure, "is writable by group or others (mode 0777)"},
		{"directory 1777 (sticky)", func(t *testing.T) (string, int) {
			return writeFile(t, chmodDir(t, 0o1777), full, 0o600), os.Getuid()
		}, ErrInsecure, "directory"},
		{"directory 0770", func(t *testing.T) (string, int) {
			return writeFile(t, chmodDir(t, 0o770), full, 0o600), os.Getuid()
		}, ErrInsecure, "(mode 0770)"},
		{"directory 0703", func(t *testing.T) (string, int) {
			return writeFile(t, chmodDir(t, 0o703), full, 0o600), os.Getuid()
		}, ErrInsecure, "(mode 0703)"},
		{"insecure directory without a file", func(t *testing.T) (string, int) {
			return filepath.Join(chmodDir(t, 0o777), "config.json"), os.Getuid()
		}, ErrInsecure, "directory"},
		{"directory owned by another user", func(t *testing.T) (string, int) {
			dir := filepath.Join(t.TempDir(), "headless")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			p := writeFile(t, dir, full, 0o600)
			return p, chownOrOtherUID(t, dir)
		}, ErrInsecure, "headless is owned by uid"},
		{"too large", func(t *testing.T) (string, int) {
			return writeFile(t, t.TempDir(), "{"+strings.Repeat(" ", MaxSize)+"}", 0o600), os.Getuid()
		}, ErrInvalid, "larger than 65536 bytes"},
		{"parse error names the field", func(t *testing.T) (string, int) {
			return writeFile(t, t.TempDir(), `{"presence":{"timeout_seconds":601}}`, 0o600), os.Getuid()
		}, ErrInvalid, "presence.timeout_seconds: must be between 1 and 600"},
		{"pinentry program missing", func(t *testing.T) (string, int) {
			return writeFile(t, t.TempDir(), `{"presence":{"provider":"pinentry","program":"/nonexistent/pinentry"}}`, 0o600), os.Getuid()
		}, ErrInvalid, "presence.program: stat /nonexistent/pinentry: no such file"},
		{"pinentry program not executable", func(t *testing.T) (string, int) {
			prog := executable(t, 0o644)
			return writeFile(t, t.TempDir(), `{"presence":{"provider":"pinentry","program":"`+prog+`"}}`, 0o600), os.Getuid()
		}, ErrInvalid, "is not executable"},
		{"pinentry program is a directory", func(t *testing.T) (string, int) {
			return writeFile(t, t.TempDir(), `{"presence":{"provider":"pinentry","program":"`+t.TempDir()+`"}}`, 0o600), os.Getuid()
		}, ErrInvalid, "is not a regular file"},
		{"pinentry program writable by others", func(t *testing.T) (string, int) {
			prog := executable(t, 0o757)
			return writeFile(t, t.TempDir(), `{"presence":{"provider":"pinentry","program":"`+prog+`"}}`, 0o600), os.Getuid()
		}, ErrInsecure, "writable by group or others (mode 0757)"},
		{"pinentry program relative", func(t *testing.T) (string, int) {
			return writeFile(t, t.TempDir(), `{"presence":{"provider":"pinentry","program":"pinentry"}}`, 0o600), os.Getuid()
		}, ErrInvalid, `presence.program: "pinentry" is not an absolute path`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, uid := tt.setup(t)
			c, err := load(path, uid)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Load = %+v, %v; want %v", c, err, tt.err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			if !reflect.DeepEqual(c, Config{}) {
				t.Errorf("Load returned %+v with an error", c)
			}
			if tt.err == ErrInsecure && errors.Is(err, ErrInvalid) || tt.err == ErrInvalid && errors.Is(err, ErrInsecure) {
				t.Errorf("error %v wraps both sentinels", err)
			}
		})
	}
}

func TestLoadErrorNotInsecure(t *testing.T) {
	// A path through a regular file is a plain error, neither "missing" nor a silent default.
	f := writeFile(t, t.TempDir(), full, 0o600)
	_, err := Load(filepath.Join(f, "config.json"))
	if err == nil || errors.Is(err, ErrInsecure) || errors.Is(err, ErrInvalid) {
		t.Fatalf("Load under a file = %v, want a plain error", err)
	}
}

func chmodDir(t *testing.T, perm os.FileMode) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "headless")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, perm|permSticky(perm)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func permSticky(perm os.FileMode) os.FileMode {
	if perm&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

// chownOrOtherUID gives p to uid 65534 when running as root and returns the current uid;
// otherwise it leaves p alone and returns another uid to check against.
func chownOrOtherUID(t *testing.T, p string) int {
	t.Helper()
	if os.Getuid() == 0 {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		return 0
	}
	return os.Getuid() + 1
}
