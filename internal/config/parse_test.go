package config

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseAccepts(t *testing.T) {
	def := Defaults()
	with := func(f func(*Config)) Config {
		c := Defaults()
		f(&c)
		return c
	}
	tests := []struct {
		name, in string
		want     Config
	}{
		{"empty object", `{}`, def},
		{"whitespace", " \n\t{ }\n\n", def},
		{"empty presence", `{"presence":{}}`, def},
		{"explicit none", `{"presence":{"provider":"none"}}`, with(func(c *Config) { c.Presence.Provider = "none" })},
		{"empty provider is not chosen", `{"presence":{"provider":""}}`, def},
		{"zeros take defaults", `{"presence":{"timeout_seconds":0},"challenge_ttl_seconds":0}`, def},
		{"negative zero", `{"challenge_ttl_seconds":-0}`, def},
		{"empty program without pinentry", `{"presence":{"provider":"secret-service","program":""}}`,
			with(func(c *Config) { c.Presence.Provider = "secret-service" })},
		{"secret-service", `{"presence":{"provider":"secret-service"}}`,
			with(func(c *Config) { c.Presence.Provider = "secret-service" })},
		{"pinentry", `{"presence":{"provider":"pinentry","program":"/usr/bin/pinentry-gnome3"}}`,
			with(func(c *Config) {
				c.Presence = Presence{Provider: "pinentry", Program: "/usr/bin/pinentry-gnome3", TimeoutSeconds: 45}
			})},
		{"bounds low", `{"presence":{"timeout_seconds":1},"challenge_ttl_seconds":10}`,
			with(func(c *Config) { c.Presence.TimeoutSeconds, c.ChallengeTTLSeconds = 1, 10 })},
		{"bounds high", `{"presence":{"timeout_seconds":600},"challenge_ttl_seconds":3600}`,
			with(func(c *Config) { c.Presence.TimeoutSeconds, c.ChallengeTTLSeconds = 600, 3600 })},
		{"allow fill", `{"allow_direct_password_fill":true}`,
			with(func(c *Config) { c.AllowDirectPasswordFill = true })},
		{"disallow fill", `{"allow_direct_password_fill":false}`, def},
		{"escaped key", `{"allow_direct_password_fill":false, "presence":{"provid\u0065r":"none"}}`,
			with(func(c *Config) { c.Presence.Provider = "none" })},
		{"full", full, Config{Presence: Presence{Provider: "secret-service", TimeoutSeconds: 30}, ChallengeTTLSeconds: 300, AllowDirectPasswordFill: true}},
		{"window and hand-over", `{"window":true,"presence":{"timeout_seconds":20,"handover_timeout_seconds":21}}`,
			with(func(c *Config) { c.Window, c.Presence.TimeoutSeconds, c.Presence.HandoverTimeoutSeconds = true, 20, 21 })},
		{"where and what", `{"presence":{"display":":1","wayland_display":"wayland-0","xauthority":"/home/a/.Xauthority"},"chromium":"/opt/chromium/chrome"}`,
			with(func(c *Config) {
				c.Presence.Display, c.Presence.WaylandDisplay, c.Presence.XAuthority = ":1", "wayland-0", "/home/a/.Xauthority"
				c.Chromium = "/opt/chromium/chrome"
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ name, in, msg string }{
		// Syntax and shape.
		{"empty", ``, "unexpected end of input"},
		{"whitespace only", "  \n", "unexpected end of input"},
		{"null", `null`, "want an object, got null"},
		{"array", `[]`, "want an object, got an array"},
		{"string", `"x"`, "want an object, got a string"},
		{"unterminated", `{"presence":{}`, "unexpected end of input"},
		{"syntax", `{"presence" {}}`, "syntax error"},
		{"trailing comma", `{"allow_direct_password_fill":true,}`, "invalid character"},
		{"comment", `{/* c */}`, "invalid character"},
		{"trailing object", `{}{}`, "trailing data after the top-level value (an object)"},
		{"trailing number", `{} 1`, "trailing data"},
		{"trailing garbage", `{}x`, "invalid character"},
		{"trailing close", `{}}`, "after the top-level value"},
		{"invalid UTF-8", "{\"presence\":{\"program\":\"/a\xff\"}}", "not valid UTF-8"},
		{"BOM", "\ufeff{}", "invalid character"},
		{"too large", "{" + strings.Repeat(" ", MaxSize) + "}", "larger than 65536 bytes"},
		// Where prompts appear and what runs.
		{"relative chromium", `{"chromium":"chromium"}`, `chromium: "chromium" is not an absolute path`},
		{"unclean chromium", `{"chromium":"/usr/lib/../bin/chromium"}`, "chromium: \"/usr/lib/../bin/chromium\" is not a clean path"},
		{"host program", `{"host_program":"/home/a/headless"}`, "host_program: is no longer read"},
		{"chromium NUL", `{"chromium":"/a\u0000b"}`, "chromium: contains a NUL byte"},
		{"display with space", `{"presence":{"display":":0 -x"}}`, "presence.display"},
		{"wayland control char", `{"presence":{"wayland_display":"w\n"}}`, "presence.wayland_display"},
		{"relative xauthority", `{"presence":{"xauthority":".Xauthority"}}`, "presence.xauthority"},
		{"chromium not a string", `{"chromium":1}`, "chromium: want a string"},
		{"window not a bool", `{"window":"yes"}`, "window: want true or false"},
		{"hand-over no longer than a release", `{"presence":{"timeout_seconds":60,"handover_timeout_seconds":60}}`, "presence.handover_timeout_seconds: must be longer than presence.timeout_seconds (60)"},
		{"hand-over too long", `{"presence":{"handover_timeout_seconds":3601}}`, "at most 3600"},
		// Keys.
		{"unknown top-level key", `{"presense":{}}`, "presense: unknown key"},
		{"unknown nested key", `{"presence":{"provider":"none","prog":"/x"}}`, "presence.prog: unknown key"},
		{"case variant", `{"Presence":{}}`, "Presence: unknown key"},
		{"nested case variant", `{"presence":{"Provider":"none"}}`, "presence.Provider: unknown key"},
		{"duplicate key", `{"allow_direct_password_fill":false,"allow_direct_password_fill":true}`, "allow_direct_password_fill: duplicate key"},
		{"duplicate nested key", `{"presence":{"provider":"none","provider":"pinentry"}}`, "presence.provider: duplicate key"},
		{"duplicate object", `{"presence":{},"presence":{}}`, "presence: duplicate key"},
		// Types.
		{"presence string", `{"presence":"pinentry"}`, "presence: want an object, got a string"},
		{"presence null", `{"presence":null}`, "presence: want an object, got null"},
		{"presence array", `{"presence":[]}`, "presence: want an object, got an array"},
		{"provider number", `{"presence":{"provider":1}}`, "presence.provider: want a string, got a number"},
		{"provider null", `{"presence":{"provider":null}}`, "presence.provider: want a string, got null"},
		{"program bool", `{"presence":{"program":true}}`, "presence.program: want a string, got a boolean"},
		{"timeout string", `{"presence":{"timeout_seconds":"60"}}`, "presence.timeout_seconds: want an integer, got a string"},
		{"timeout float", `{"presence":{"timeout_seconds":1.5}}`, "presence.timeout_seconds: want an integer, got 1.5"},
		{"timeout float integral", `{"presence":{"timeout_seconds":60.0}}`, "want an integer, got 60.0"},
		{"timeout exponent", `{"presence":{"timeout_seconds":6e1}}`, "want an integer, got 6e1"},
		{"ttl huge", `{"challenge_ttl_seconds":99999999999999999999}`, "challenge_ttl_seconds: 99999999999999999999 is out of range"},
		{"ttl bool", `{"challenge_ttl_seconds":true}`, "challenge_ttl_seconds: want an integer, got a boolean"},
		{"ttl object", `{"challenge_ttl_seconds":{}}`, "challenge_ttl_seconds: want an integer, got an object"},
		{"allow string", `{"allow_direct_password_fill":"true"}`, "allow_direct_password_fill: want true or false, got a string"},
		{"allow number", `{"allow_direct_password_fill":1}`, "allow_direct_password_fill: want true or false, got a number"},
		{"allow null", `{"allow_direct_password_fill":null}`, "allow_direct_password_fill: want true or false, got null"},
		// Values.
		{"unknown provider", `{"presence":{"provider":"auto"}}`, `presence.provider: unknown provider "auto"`},
		{"provider case", `{"presence":{"provider":"None"}}`, `unknown provider "None"`},
		{"provider space", `{"presence":{"provider":"none "}}`, `unknown provider "none "`},
		{"pinentry without program", `{"presence":{"provider":"pinentry"}}`, `presence.program: required with provider "pinentry"`},
		{"relative program", `{"presence":{"provider":"pinentry","program":"pinentry"}}`, `presence.program: "pinentry" is not an absolute path`},
		{"dot-relative program", `{"presence":{"provider":"pinentry","program":"./bin/pinentry"}}`, "not an absolute path"},
		{"unclean program", `{"presence":{"provider":"pinentry","program":"/usr/bin/../bin/pinentry"}}`, `is not a clean path (want "/usr/bin/pinentry")`},
		{"NUL in program", `{"presence":{"provider":"pinentry","program":"/usr/bin/pin\u0000entry"}}`, "contains a NUL byte"},
		{"program with other provider", `{"presence":{"provider":"secret-service","program":"/usr/bin/pinentry"}}`, `presence.program: only used with provider "pinentry"`},
		{"program with default provider", `{"presence":{"program":"/usr/bin/pinentry"}}`, `only used with provider "pinentry"`},
		{"timeout negative", `{"presence":{"timeout_seconds":-1}}`, "presence.timeout_seconds: must be between 1 and 600 (or 0 for the default 45), got -1"},
		{"timeout high", `{"presence":{"timeout_seconds":601}}`, "presence.timeout_seconds: must be between 1 and 600"},
		{"ttl low", `{"challenge_ttl_seconds":9}`, "challenge_ttl_seconds: must be between 10 and 3600 (or 0 for the default 120), got 9"},
		{"ttl high", `{"challenge_ttl_seconds":3601}`, "challenge_ttl_seconds: must be between 10 and 3600"},
		{"ttl negative", `{"challenge_ttl_seconds":-120}`, "got -120"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse = %+v, want error containing %q", c, tt.msg)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			if !reflect.DeepEqual(c, Config{}) {
				t.Errorf("Parse returned %+v with an error", c)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `{}{}`, `{} `, full,
		`{"presence":{"provider":"pinentry","program":"/usr/bin/pinentry","timeout_seconds":600}}`,
		`{"presence":{"provider":"secret-service"},"challenge_ttl_seconds":3600,"allow_direct_password_fill":true}`,
		`{"presence":{"provider":"none","provider":"pinentry"}}`,
		`{"Presence":{}}`,
		`{"presence":{"timeout_seconds":1e2}}`,
		`{"presence":{"program":"/a\u0000b","provider":"pinentry"}}`,
		`{"challenge_ttl_seconds":-0}`,
		`{"presence":{"provider":"pinentry","program":"/\ud800"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			if !reflect.DeepEqual(c, Config{}) {
				t.Fatalf("Parse returned %+v with an error", c)
			}
			return
		}
		// A parsed config is normalized and in range.
		switch c.Presence.Provider {
		case ProviderAuto, ProviderNone, ProviderSecretService:
			if c.Presence.Program != "" {
				t.Fatalf("program %q with provider %q", c.Presence.Program, c.Presence.Provider)
			}
		case ProviderPinentry:
			if !strings.HasPrefix(c.Presence.Program, "/") {
				t.Fatalf("pinentry program %q", c.Presence.Program)
			}
		default:
			t.Fatalf("provider %q", c.Presence.Provider)
		}
		if c.Presence.TimeoutSeconds < 1 || c.Presence.TimeoutSeconds > 600 ||
			c.ChallengeTTLSeconds < 10 || c.ChallengeTTLSeconds > 3600 {
			t.Fatalf("out of range: %+v", c)
		}
		// Re-marshalled, it parses to the same value.
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%s) of re-marshalled %+v: %v", out, c, err)
		}
		if !reflect.DeepEqual(c2, c) {
			t.Fatalf("round trip: %+v became %+v (via %s)", c, c2, out)
		}
	})
}

// A hand-over always waits longer than a release's prompt: the default, or the config's.
func TestHandoverTimeout(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{{`{}`, 300}, {`{"presence":{"timeout_seconds":600}}`, 601}, {`{"presence":{"handover_timeout_seconds":90}}`, 90}} {
		c, err := Parse([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.HandoverTimeout().Seconds(); got != float64(tt.want) {
			t.Errorf("%s: HandoverTimeout = %vs, want %ds", tt.in, got, tt.want)
		}
	}
}
