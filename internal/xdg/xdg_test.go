package xdg

import (
	"slices"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		env                   map[string]string
		runtime, data, config string
		dataErr, configErr    bool
		legacy                []string
	}{
		{"xdg", map[string]string{"XDG_RUNTIME_DIR": "/run/user/7", "XDG_DATA_HOME": "/x/data", "XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"},
			"/run/user/7/headless", "/x/data/headless", "/x/cfg/headless/config.json", false, false,
			[]string{"/run/user/7/headless/profile", "/tmp/headless-7/profile"}},
		{"home only", map[string]string{"HOME": "/home/u"},
			"/tmp/headless-7", "/home/u/.local/share/headless", "/home/u/.config/headless/config.json", false, false,
			[]string{"/tmp/headless-7/profile"}},
		{"relative xdg ignored", map[string]string{"XDG_RUNTIME_DIR": "run", "XDG_DATA_HOME": "data", "XDG_CONFIG_HOME": "cfg", "HOME": "/home/u", "TMPDIR": "/var/tmp"},
			"/var/tmp/headless-7", "/home/u/.local/share/headless", "/home/u/.config/headless/config.json", false, false,
			[]string{"/var/tmp/headless-7/profile"}},
		{"relative TMPDIR ignored", map[string]string{"HOME": "/home/u", "TMPDIR": "tmp"},
			"/tmp/headless-7", "/home/u/.local/share/headless", "/home/u/.config/headless/config.json", false, false,
			[]string{"/tmp/headless-7/profile"}},
		{"nothing", map[string]string{}, "/tmp/headless-7", "", "", true, true, []string{"/tmp/headless-7/profile"}},
		{"relative home", map[string]string{"HOME": "home"}, "/tmp/headless-7", "", "", true, true, []string{"/tmp/headless-7/profile"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New(env(tc.env), 7)
			if l.UID != 7 || l.Runtime != tc.runtime {
				t.Errorf("UID %d Runtime %q; want 7 %q", l.UID, l.Runtime, tc.runtime)
			}
			data, err := l.Data()
			if data != tc.data || (err != nil) != tc.dataErr {
				t.Errorf("Data = %q, %v; want %q", data, err, tc.data)
			}
			cfg, err := l.Config()
			if cfg != tc.config || (err != nil) != tc.configErr {
				t.Errorf("Config = %q, %v; want %q", cfg, err, tc.config)
			}
			if _, err := l.AuditLog(); (err != nil) != tc.dataErr {
				t.Errorf("AuditLog error %v", err)
			}
			if got := l.LegacyProfiles(); !slices.Equal(got, tc.legacy) {
				t.Errorf("LegacyProfiles = %q, want %q", got, tc.legacy)
			}
		})
	}
}

// TestNames: the file names every process agrees on (brokerd, host and CLI each build their own
// Layout from the same environment).
func TestNames(t *testing.T) {
	l := New(env(map[string]string{"XDG_RUNTIME_DIR": "/r", "XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/c"}), 1)
	must := func(p string, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for got, want := range map[string]string{
		l.BrokerSocket():           "/r/headless/broker.sock",
		l.ControlSocket():          "/r/headless/control.sock",
		l.BrokerLock():             "/r/headless/broker.lock",
		l.BrokerLog():              "/r/headless/brokerd.log",
		l.HostLog():                "/r/headless/host.log",
		l.Artifacts():              "/r/headless/artifacts",
		l.ChromiumTemp():           "/r/headless/chromium-tmp",
		must(l.Data()):             "/d/headless",
		must(l.Profile()):          "/d/headless/profile",
		must(l.ProfileLock()):      "/d/headless/profile.lock",
		must(l.AuditLog()):         "/d/headless/audit.jsonl",
		must(l.CredentialsIndex()): "/d/headless/credentials.json",
		must(l.Config()):           "/c/headless/config.json",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}
