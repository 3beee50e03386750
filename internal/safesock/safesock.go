// Package safesock creates the private runtime directory and the Unix sockets in it.
//
// # Security contract
//
// The runtime directory is named by package internal/xdg ($XDG_RUNTIME_DIR/headless, or
// /tmp/headless-UID when XDG_RUNTIME_DIR is unset). [EnsureDir] creates it 0700 and refuses to
// use one that is a symlink, not a directory, or owned by another user than the layout's; a directory of ours with a looser mode is
// tightened to 0700. [Listen] creates a socket 0600 inside it. An existing socket path is probed
// before removal: if something answers, Listen fails with [InUseError] naming the owner's pid
// (from SO_PEERCRED of the probe); only a socket nobody listens on is removed; any other kind
// of file is left alone and reported. [Inherited] takes the socket systemd passes instead (socket
// activation), checked the same way (its path, owner and mode). Callers must still check the
// peer uid of every accepted connection (package peercred); the file mode is not the only gate.
package safesock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/headless-dev/headless/internal/peercred"
	"github.com/headless-dev/headless/internal/wire"
)

// ErrUnsafeDir reports a runtime directory we must not use.
var ErrUnsafeDir = wire.Sentinel(wire.CodeRuntimeDir, "unsafe runtime directory")

// EnsureDir creates dir 0700 if needed and verifies it is private and owned by uid (the
// layout's, which is this process's).
func EnsureDir(dir string, uid int) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create runtime dir: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("stat runtime dir: %w", err)
	}
	if !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafeDir, dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != uid {
		return fmt.Errorf("%w: %s is owned by another user", ErrUnsafeDir, dir)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("%w: chmod %s: %w", ErrUnsafeDir, dir, err)
		}
	}
	return nil
}

// InUseError reports a socket path that a live process is listening on.
type InUseError struct {
	Path string
	PID  int // 0 when unknown
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("%s is in use by pid %d", e.Path, e.PID)
}

// Listener is a Unix listener that, on Close, removes its socket file only if the path still
// names the socket it created (never a file someone put there since).
type Listener struct {
	*net.UnixListener
	path     string
	dev, ino uint64
}

// Close stops listening and removes the socket file if it is still ours.
func (l *Listener) Close() error {
	err := l.UnixListener.Close()
	var st syscall.Stat_t
	if syscall.Lstat(l.path, &st) == nil && uint64(st.Dev) == l.dev && st.Ino == l.ino {
		os.Remove(l.path)
	}
	return err
}

// Listen listens on the Unix socket at path with mode 0600, replacing a stale socket.
func Listen(path string) (*Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket; not removing it", path)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := (&net.Dialer{}).DialContext(ctx, "unix", path)
		cancel()
		if err == nil {
			cred, _ := peercred.Get(c)
			c.Close()
			return nil, &InUseError{Path: path, PID: cred.PID}
		}
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ENOENT) {
			return nil, fmt.Errorf("probe %s: %w", path, err)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	old := syscall.Umask(0o177)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("chmod socket: %w", err)
	}
	l.SetUnlinkOnClose(false)
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		l.Close()
		return nil, fmt.Errorf("stat socket: %w", err)
	}
	return &Listener{UnixListener: l, path: path, dev: uint64(st.Dev), ino: st.Ino}, nil
}
