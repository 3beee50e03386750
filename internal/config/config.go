// Package config reads the user-only configuration file, internal/xdg's Layout.Config
// ($XDG_CONFIG_HOME/headless/config.json): the format is on [Config].
//
// # Guarantees
//
//   - The file is the only place that chooses the presence provider, the browser that receives
//     passwords, or allows direct password fill; no environment variable or flag can, and the
//     host executable is not the config's to choose ("host_program" is refused).
//   - [Load] trusts the file only if no other user could have written it: its directory and the
//     file owned by the user and not writable by group or others, the file regular and opened
//     with O_NOFOLLOW relative to the checked directory, checked with fstat on the open
//     descriptors; a refusal wraps [ErrInsecure] and never falls back to the defaults.
//   - Decoding is strict (internal/wire.DecodeStrict): unknown or duplicate keys, null, wrong
//     types and trailing data wrap [ErrInvalid] naming the field's path. A missing file gives
//     [Defaults].
//   - brokerd auto-started by headless takes the display only from the file, never from its
//     environment.
//
// # Not guaranteed
//
// Only the file and its directory are checked, not every ancestor (~/.config may be a symlink
// into a dotfiles tree). A process of the same user can rewrite the file: the file defends
// against other users.
package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/headless-dev/headless/internal/allowlist"
	"github.com/headless-dev/headless/internal/wire"
)

// Presence providers.
const (
	ProviderSecretService = "secret-service"
	ProviderPinentry      = "pinentry"
	// ProviderPassphrase: credentials are sealed with a passphrase the person types into the
	// pinentry program (package internal/broker/seal); a release is the person opening one.
	ProviderPassphrase = "passphrase"
	ProviderNone       = "none"
	// ProviderAuto (the field unset) leaves the choice to brokerd: "secret-service" when a
	// Secret Service with a system prompter is present, "none" otherwise.
	ProviderAuto = ""
)

// Limits and defaults.
const (
	MaxSize = 64 << 10 // bytes

	// DefaultPresenceTimeoutSeconds is under the 60 s at which common MCP clients (the
	// TypeScript SDK, Codex) end a tool call by default: the agent gets PRESENCE_TIMEOUT, not
	// the client's own timeout (issue 28).
	DefaultPresenceTimeoutSeconds = 45
	MinPresenceTimeoutSeconds     = 1
	MaxPresenceTimeoutSeconds     = 600

	// A hand-over waits for a person to do something in the page (a CAPTCHA, an SSO page, a
	// second factor) and then press Done: longer than a release's yes, and at least that.
	DefaultHandoverTimeoutSeconds = 300
	MaxHandoverTimeoutSeconds     = 3600

	DefaultChallengeTTLSeconds = 120
	MinChallengeTTLSeconds     = 10
	MaxChallengeTTLSeconds     = 3600

	// DefaultChromium is Debian's Chromium binary (its /usr/bin/chromium wrapper script adds
	// flags and exports API keys, so it is not used).
	DefaultChromium = "/usr/lib/chromium/chromium"

	maxDisplay = 256 // bytes of a display name
)

// Errors. Every error from Parse wraps ErrInvalid; Load also returns errors wrapping
// ErrInsecure, and plain errors when the file system fails.
var (
	ErrInvalid  = wire.Sentinel(wire.CodeConfigInvalid, "config: invalid")
	ErrInsecure = wire.Sentinel(wire.CodeConfigInvalid, "config: insecure")
)

// Config is the user-only configuration: one JSON object of at most [MaxSize] bytes; omitted
// keys and zero values take the defaults.
//
//	{
//	  "presence": {
//	    "provider": "pinentry",          // "secret-service", "passphrase", "pinentry" or "none"
//	    "program": "/usr/bin/pinentry",  // only with "pinentry" and "passphrase": absolute, executable
//	    "timeout_seconds": 45,           // 1..600, default 45
//	    "display": ":0",                 // optional: DISPLAY for the pinentry
//	    "wayland_display": "wayland-0",  // optional: WAYLAND_DISPLAY for the pinentry
//	    "xauthority": "/home/me/.Xauthority", // optional, absolute: XAUTHORITY for the pinentry
//	    "handover_timeout_seconds": 300  // longer than timeout_seconds, at most 3600, default 300
//	  },
//	  "window": false,                   // true: the browser shows windows on the display above
//	  "challenge_ttl_seconds": 120,      // 10..3600, default 120
//	  "allow_direct_password_fill": false,
//	  "chromium": "/usr/lib/chromium/chromium", // absolute; the browser the host launches
//	  "allow": ["staging.example.com", "*.corp.example"] // the navigation allowlist (package allowlist)
//	}
//
// An unset provider ([ProviderAuto]) is "secret-service" when the session has a Secret Service
// with a system prompter, else "none", which refuses every release. The display keys say where
// the person sees presence prompts: brokerd started by the person falls back to its own
// environment, brokerd auto-started by headless (an agent's verb may do that) uses only them;
// with "window" (or 'headless start --window') the browser's windows appear there too.
// [Parse] checks everything that needs no file system; [Load] also checks that a pinentry
// program is a regular executable not writable by group or others. brokerd checks the
// chromium file itself when it uses it.
type Config struct {
	Presence                Presence `json:"presence"`
	ChallengeTTLSeconds     int      `json:"challenge_ttl_seconds"`
	AllowDirectPasswordFill bool     `json:"allow_direct_password_fill"`
	// Chromium is the browser the host launches ("" = DefaultChromium; see ChromiumPath).
	Chromium string `json:"chromium"`
	// HostProgram is read only to be refused: a config (which any program of the user can
	// write) no longer names the host executable (red-team: a forged host named there).
	HostProgram string `json:"host_program"`
	// Allow is the navigation allowlist (canonical; nil: no allowlist): the hosts the browser
	// may show documents of. 'headless start --allow' may narrow it, never widen it.
	Allow []string `json:"allow,omitempty"`
	// Window: the browser shows its sessions' windows on the person's display (the
	// presence keys' display), as 'headless start --window' asks. Only the person's file
	// chooses it, never an environment variable.
	Window bool `json:"window"`
}

// Presence chooses how brokerd asks the person at the machine, and where.
type Presence struct {
	Provider       string `json:"provider"`
	Program        string `json:"program"`
	TimeoutSeconds int    `json:"timeout_seconds"`
	Display        string `json:"display"`
	WaylandDisplay string `json:"wayland_display"`
	XAuthority     string `json:"xauthority"`
	// HandoverTimeoutSeconds bounds the wait for the person to finish a hand-over (Done).
	HandoverTimeoutSeconds int `json:"handover_timeout_seconds"`
}

// UsesProgram reports whether the provider runs a pinentry program ("pinentry",
// "passphrase").
func (p Presence) UsesProgram() bool {
	return p.Provider == ProviderPinentry || p.Provider == ProviderPassphrase
}

// ChromiumPath is the configured Chromium, or DefaultChromium.
func (c Config) ChromiumPath() string {
	if c.Chromium == "" {
		return DefaultChromium
	}
	return c.Chromium
}

// Defaults returns the configuration used when there is no file.
func Defaults() Config {
	return Config{
		Presence: Presence{
			Provider:       ProviderAuto,
			TimeoutSeconds: DefaultPresenceTimeoutSeconds,
		},
		ChallengeTTLSeconds: DefaultChallengeTTLSeconds,
	}
}

// PresenceTimeout returns how long a presence prompt may wait; the default for a zero Config.
func (c Config) PresenceTimeout() time.Duration {
	s := c.Presence.TimeoutSeconds
	if s <= 0 {
		s = DefaultPresenceTimeoutSeconds
	}
	return time.Duration(s) * time.Second
}

// HandoverTimeout returns how long a hand-over's prompt may wait: the config's, else the
// default, and always longer than a release's prompt.
func (c Config) HandoverTimeout() time.Duration {
	s := c.Presence.HandoverTimeoutSeconds
	if s <= 0 {
		s = DefaultHandoverTimeoutSeconds
	}
	return max(time.Duration(s)*time.Second, c.PresenceTimeout()+time.Second)
}

// ChallengeTTL returns the lifetime of a challenge; the default for a zero Config.
func (c Config) ChallengeTTL() time.Duration {
	s := c.ChallengeTTLSeconds
	if s <= 0 {
		s = DefaultChallengeTTLSeconds
	}
	return time.Duration(s) * time.Second
}

// Load reads, checks and parses the config file at path; see the package documentation.
func Load(path string) (Config, error) {
	return load(path, os.Getuid())
}

func load(path string, uid int) (Config, error) {
	data, err := readFile(path, uid)
	if errors.Is(err, os.ErrNotExist) {
		return Defaults(), nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("load %s: %w", path, err)
	}
	c, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("load %s: %w", path, err)
	}
	if c.Presence.UsesProgram() {
		if err := checkProgram(c.Presence.Program); err != nil {
			return Config{}, fmt.Errorf("load %s: %w", path, err)
		}
	}
	return c, nil
}

// readFile opens path's directory, checks it, opens the file relative to it without following
// a symlink, checks the open file and reads it. A missing directory or file gives an error
// that wraps os.ErrNotExist.
func readFile(path string, uid int) ([]byte, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return nil, fmt.Errorf("%w: not a file name", ErrInsecure)
	}
	dfd, err := openRetry(func() (int, error) {
		return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &os.PathError{Op: "open directory", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstat(dfd, &st); err != nil {
		return nil, &os.PathError{Op: "stat directory", Path: dir, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR { // O_DIRECTORY makes this unreachable
		return nil, fmt.Errorf("%w: %s is not a directory", ErrInsecure, dir)
	}
	if err := checkOwner("directory "+filepath.Clean(dir), st, uid); err != nil {
		return nil, err
	}

	// O_NONBLOCK: opening a FIFO must not block; the fstat below refuses it.
	fd, err := openRetry(func() (int, error) {
		return unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	})
	if err == unix.ELOOP {
		return nil, fmt.Errorf("%w: file is a symlink", ErrInsecure)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%w: file is not a regular file", ErrInsecure)
	}
	if err := checkOwner("file", st, uid); err != nil {
		return nil, err
	}
	if st.Size > MaxSize {
		return nil, fmt.Errorf("%w: file is larger than %d bytes", ErrInvalid, MaxSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%w: file is larger than %d bytes", ErrInvalid, MaxSize)
	}
	return data, nil
}

func openRetry(open func() (int, error)) (int, error) {
	for {
		fd, err := open()
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func checkOwner(what string, st unix.Stat_t, uid int) error {
	if int64(st.Uid) != int64(uid) {
		return fmt.Errorf("%w: %s is owned by uid %d, not by the current user (uid %d)", ErrInsecure, what, st.Uid, uid)
	}
	if perm := st.Mode & 0o7777; perm&0o022 != 0 {
		return fmt.Errorf("%w: %s is writable by group or others (mode %04o)", ErrInsecure, what, perm)
	}
	return nil
}

// checkProgram checks the file system part of a pinentry program: it exists, is a regular
// executable file, and is not writable by group or others.
func checkProgram(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("%w: presence.program: %w", ErrInvalid, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: presence.program: %s is not a regular file", ErrInvalid, p)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%w: presence.program: %s is not executable", ErrInvalid, p)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%w: presence.program: %s is writable by group or others (mode %04o)", ErrInsecure, p, perm)
	}
	return nil
}

// Parse decodes and validates a config file's contents; see the package documentation.
// It touches no file system: Load also checks the pinentry program.
func Parse(data []byte) (Config, error) {
	if len(data) > MaxSize {
		return Config{}, invalid("", "larger than %d bytes", MaxSize)
	}
	if !utf8.Valid(data) {
		return Config{}, invalid("", "not valid UTF-8")
	}
	var c Config
	if err := wire.DecodeStrict(data, &c); err != nil {
		var se *wire.StrictError
		if errors.As(err, &se) {
			return Config{}, invalid(se.Path, "%s", se.Problem)
		}
		return Config{}, invalid("", "%v", err)
	}
	if err := c.validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func (c *Config) validate() error {
	p := &c.Presence
	switch p.Provider {
	case ProviderAuto, ProviderNone, ProviderSecretService, ProviderPinentry, ProviderPassphrase:
	default:
		return invalid("presence.provider", "unknown provider %q; want %q, %q, %q or %q",
			p.Provider, ProviderSecretService, ProviderPassphrase, ProviderPinentry, ProviderNone)
	}
	switch {
	case !p.UsesProgram():
		if p.Program != "" {
			return invalid("presence.program", "only used with provider %q or %q", ProviderPinentry, ProviderPassphrase)
		}
	case p.Program == "":
		return invalid("presence.program", "required with provider %q", p.Provider)
	case strings.IndexByte(p.Program, 0) >= 0:
		return invalid("presence.program", "contains a NUL byte")
	case !filepath.IsAbs(p.Program):
		return invalid("presence.program", "%q is not an absolute path", p.Program)
	case filepath.Clean(p.Program) != p.Program:
		return invalid("presence.program", "%q is not a clean path (want %q)", p.Program, filepath.Clean(p.Program))
	}
	for _, d := range []struct{ path, v string }{{"presence.display", p.Display}, {"presence.wayland_display", p.WaylandDisplay}} {
		if len(d.v) > maxDisplay {
			return invalid(d.path, "longer than %d bytes", maxDisplay)
		}
		for i := 0; i < len(d.v); i++ {
			if d.v[i] <= ' ' || d.v[i] >= 0x7f {
				return invalid(d.path, "%q must be printable ASCII without spaces", d.v)
			}
		}
	}
	if c.HostProgram != "" {
		return invalid("host_program", "is no longer read: brokerd starts only the headless installed beside it (set-gid to the headless group, which only root grants); remove the key")
	}
	for _, f := range []struct{ path, v string }{{"presence.xauthority", p.XAuthority}, {"chromium", c.Chromium}} {
		if err := absPath(f.path, f.v); err != nil {
			return err
		}
	}
	if c.Allow != nil {
		if len(c.Allow) > allowlist.Max {
			return invalid("allow", "more than %d entries", allowlist.Max)
		}
		l, err := allowlist.Parse(c.Allow)
		if err != nil {
			return invalid("allow", "%v", err)
		}
		if l.Empty() {
			return invalid("allow", "an empty list would allow nothing; leave the key out to allow every host")
		}
		c.Allow = l.Strings()
	}
	if err := defaultRange("presence.timeout_seconds", &p.TimeoutSeconds,
		DefaultPresenceTimeoutSeconds, MinPresenceTimeoutSeconds, MaxPresenceTimeoutSeconds); err != nil {
		return err
	}
	if h := p.HandoverTimeoutSeconds; h != 0 && (h <= p.TimeoutSeconds || h > MaxHandoverTimeoutSeconds) {
		return invalid("presence.handover_timeout_seconds", "must be longer than presence.timeout_seconds (%d) and at most %d (or 0 for the default), got %d",
			p.TimeoutSeconds, MaxHandoverTimeoutSeconds, h)
	}
	return defaultRange("challenge_ttl_seconds", &c.ChallengeTTLSeconds,
		DefaultChallengeTTLSeconds, MinChallengeTTLSeconds, MaxChallengeTTLSeconds)
}

// absPath accepts "" (unset) or an absolute, clean path without a NUL byte.
func absPath(path, v string) error {
	switch {
	case v == "":
		return nil
	case strings.IndexByte(v, 0) >= 0:
		return invalid(path, "contains a NUL byte")
	case !filepath.IsAbs(v):
		return invalid(path, "%q is not an absolute path", v)
	case filepath.Clean(v) != v:
		return invalid(path, "%q is not a clean path (want %q)", v, filepath.Clean(v))
	}
	return nil
}

func defaultRange(path string, v *int, def, lo, hi int) error {
	if *v == 0 {
		*v = def
		return nil
	}
	if *v < lo || *v > hi {
		return invalid(path, "must be between %d and %d (or 0 for the default %d), got %d", lo, hi, def, *v)
	}
	return nil
}

func invalid(path, format string, args ...any) error {
	if path == "" {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
	}
	return fmt.Errorf("%w: %s: "+format, append([]any{ErrInvalid, path}, args...)...)
}
