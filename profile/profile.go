// Package profile locates and locks the durable browser profile.
//
// # Security contract
//
// The durable profile lives in $XDG_DATA_HOME/headless/profile (default
// ~/.local/share/headless/profile), a directory created 0700. One process owns it at a time
// through a non-blocking flock on the sibling file profile.lock, which the kernel releases when
// the owner exits however it exits; a second owner gets [lockfile.HeldError] naming the owner's
// pid. The data directory also holds the audit log.
//
// The browser host (issue 3) builds on this: Chromium's cookie key pinned to the Secret
// Service, corruption moved aside and reported, never deleted.
package profile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/headless-dev/headless/internal/lockfile"
)

// DataDir is $XDG_DATA_HOME/headless, or $HOME/.local/share/headless.
func DataDir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "headless"), nil
	}
	home := getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", errors.New("neither XDG_DATA_HOME nor HOME is set to an absolute path")
	}
	return filepath.Join(home, ".local", "share", "headless"), nil
}

// Dir is the durable profile directory inside dataDir.
func Dir(dataDir string) string { return filepath.Join(dataDir, "profile") }

// EnsurePrivateDir creates dir (and missing parents) and checks that dir is a directory we
// own with mode 0700, tightening a looser mode of our own directory.
func EnsurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is not a directory owned by uid %d", dir, os.Getuid())
	}
	if fi.Mode().Perm() != 0o700 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// Lock takes the profile lock in dataDir. The returned unlock releases it.
func Lock(dataDir string) (unlock func(), err error) {
	if err := EnsurePrivateDir(dataDir); err != nil {
		return nil, err
	}
	return lockfile.Lock(filepath.Join(dataDir, "profile.lock"))
}
