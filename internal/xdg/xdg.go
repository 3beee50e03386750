// Package xdg is where headless keeps its files: one [Layout], resolved once in each main from
// the environment it was given and passed down, that names the runtime, data and config
// directories and every file in them. No other package derives headless's own paths from the
// environment (the session bus address, which is D-Bus's, is internal/keyprobe's).
//
// # Security contract
//
// Only absolute directories are taken from the environment (a relative XDG_* or HOME is ignored,
// as the XDG base directory specification says, or is an error when there is no fallback). The
// runtime directory is $XDG_RUNTIME_DIR/headless, else $TMPDIR/headless-UID (TMPDIR defaults to
// /tmp), where UID is the Layout's; the data directory is $XDG_DATA_HOME/headless, else
// $HOME/.local/share/headless; the config file is $XDG_CONFIG_HOME/headless/config.json, else
// $HOME/.config/headless/config.json. The Layout only names paths: creating the directories
// private and checking their owner is the job of the packages that use them (safesock for the
// runtime dir, profile for the data dir, config for the config file).
//
// # Not guaranteed
//
// The environment is the caller's: an agent that starts a process with another XDG_RUNTIME_DIR
// or HOME points it at other files (brokerd refuses a host whose config path differs from its
// own; see package internal/broker/gate).
package xdg

import (
	"errors"
	"path/filepath"
	"strconv"
)

// Layout names every directory and file of headless for one user and environment. The zero
// Layout is not usable; build one with [New].
type Layout struct {
	// UID is the user the layout is for (os.Getuid in production): the fallback runtime
	// directory's name and the peer uid the sockets accept.
	UID int
	// Runtime is the runtime directory: sockets, brokerd's lock, logs, artifacts, Chromium's
	// temporary directory.
	Runtime string

	data, config       string
	dataErr, configErr error
	legacy             []string
}

// New resolves the layout from getenv (os.Getenv in production) for uid. It never fails: a data
// or config directory that cannot be resolved makes the methods that need it return an error,
// so that commands which need only the runtime directory still work.
func New(getenv func(string) string, uid int) Layout {
	l := Layout{UID: uid}
	if x := getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		l.Runtime = filepath.Join(x, "headless")
		l.legacy = append(l.legacy, filepath.Join(x, "headless", "profile"))
	}
	tmp := getenv("TMPDIR")
	if tmp == "" || !filepath.IsAbs(tmp) {
		tmp = "/tmp"
	}
	fallback := filepath.Join(tmp, "headless-"+strconv.Itoa(uid))
	if l.Runtime == "" {
		l.Runtime = fallback
	}
	l.legacy = append(l.legacy, filepath.Join(fallback, "profile"))
	home := getenv("HOME")
	switch x := getenv("XDG_DATA_HOME"); {
	case x != "" && filepath.IsAbs(x):
		l.data = filepath.Join(x, "headless")
	case home != "" && filepath.IsAbs(home):
		l.data = filepath.Join(home, ".local", "share", "headless")
	default:
		l.dataErr = errors.New("neither XDG_DATA_HOME nor HOME is set to an absolute path")
	}
	switch x := getenv("XDG_CONFIG_HOME"); {
	case x != "" && filepath.IsAbs(x):
		l.config = filepath.Join(x, "headless")
	case home != "" && filepath.IsAbs(home):
		l.config = filepath.Join(home, ".config", "headless")
	default:
		l.configErr = errors.New("config: locate config file: $XDG_CONFIG_HOME and $HOME are unset or not absolute")
	}
	return l
}

// Files in the runtime directory.

// BrokerSocket is brokerd's socket, broker.sock.
func (l Layout) BrokerSocket() string { return filepath.Join(l.Runtime, "broker.sock") }

// ControlSocket is the browser host's socket, control.sock.
func (l Layout) ControlSocket() string { return filepath.Join(l.Runtime, "control.sock") }

// BrokerLock is the lock one brokerd per runtime directory holds, broker.lock.
func (l Layout) BrokerLock() string { return filepath.Join(l.Runtime, "broker.lock") }

// BrokerLog is brokerd's bounded log, brokerd.log.
func (l Layout) BrokerLog() string { return filepath.Join(l.Runtime, "brokerd.log") }

// HostLog is the browser host's bounded log, host.log.
func (l Layout) HostLog() string { return filepath.Join(l.Runtime, "host.log") }

// Artifacts is the private directory screenshots are written to.
func (l Layout) Artifacts() string { return filepath.Join(l.Runtime, "artifacts") }

// ChromiumTemp is Chromium's private temporary directory (its TMPDIR and XDG_CONFIG_HOME).
func (l Layout) ChromiumTemp() string { return filepath.Join(l.Runtime, "chromium-tmp") }

// The data directory and its files.

// Data is the data directory, $XDG_DATA_HOME/headless.
func (l Layout) Data() (string, error) { return l.data, l.dataErr }

// Profile is the durable Chromium profile (its user-data-dir), in the data directory.
func (l Layout) Profile() (string, error) { return l.inData("profile") }

// ProfileLock is the lock file of the durable profile, beside it.
func (l Layout) ProfileLock() (string, error) { return l.inData("profile.lock") }

// AuditLog is brokerd's hash-chained audit log, audit.jsonl (rotated generations beside it).
func (l Layout) AuditLog() (string, error) { return l.inData("audit.jsonl") }

// CredentialsIndex is the locked keyring's record metadata (never a password),
// credentials.json.
func (l Layout) CredentialsIndex() (string, error) { return l.inData("credentials.json") }

// LegacyProfiles lists where older layouts kept the durable profile: inside the runtime
// directory, $XDG_RUNTIME_DIR/headless/profile, and its fallback $TMPDIR/headless-$UID/profile.
// No released headless used another location.
func (l Layout) LegacyProfiles() []string { return append([]string(nil), l.legacy...) }

func (l Layout) inData(name string) (string, error) {
	if l.dataErr != nil {
		return "", l.dataErr
	}
	return filepath.Join(l.data, name), nil
}

// The config directory.

// Config is the user-only config file, config.json.
func (l Layout) Config() (string, error) {
	if l.configErr != nil {
		return "", l.configErr
	}
	return filepath.Join(l.config, "config.json"), nil
}
