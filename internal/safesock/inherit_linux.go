package safesock

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// listenFD is the first descriptor of systemd's socket-activation protocol (SD_LISTEN_FDS_START).
const listenFD = 3

// Inherited returns the listening socket the service manager passed to this process (systemd
// socket activation: LISTEN_PID names pid, LISTEN_FDS is "1", the socket is fd 3), or nil when
// none was passed to this process. It is accepted only when it is a listening Unix stream
// socket bound to path, and the file at path is a socket owned by uid with no group or other
// permission bits: then the directory and the file were made as [EnsureDir] and [Listen] would
// make them. Callers must still check the peer uid of every accepted connection (package
// peercred), as with [Listen]. Closing the listener never removes the socket file: it is the
// service manager's.
func Inherited(getenv func(string) string, pid int, path string, uid int) (*net.UnixListener, error) {
	lp := getenv("LISTEN_PID")
	if lp == "" {
		return nil, nil
	}
	if n, err := strconv.Atoi(lp); err != nil || n != pid {
		return nil, nil // meant for another process (our parent, say)
	}
	if n := getenv("LISTEN_FDS"); n != "1" {
		return nil, fmt.Errorf("socket activation: LISTEN_FDS is %q; brokerd takes exactly one socket (broker.sock)", n)
	}
	bad := func(format string, a ...any) (*net.UnixListener, error) {
		return nil, fmt.Errorf("socket activation: the inherited socket (fd %d) %s", listenFD, fmt.Sprintf(format, a...))
	}
	if typ, err := unix.GetsockoptInt(listenFD, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || typ != unix.SOCK_STREAM {
		return bad("is not a stream socket")
	}
	if dom, err := unix.GetsockoptInt(listenFD, unix.SOL_SOCKET, unix.SO_DOMAIN); err != nil || dom != unix.AF_UNIX {
		return bad("is not a Unix socket")
	}
	if acc, err := unix.GetsockoptInt(listenFD, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || acc != 1 {
		return bad("is not listening")
	}
	sa, err := unix.Getsockname(listenFD)
	if ua, ok := sa.(*unix.SockaddrUnix); err != nil || !ok || ua.Name != path {
		name := ""
		if ok {
			name = ua.Name
		}
		return bad("is bound to %q, not %s (ListenStream must be %%t/headless/broker.sock)", name, path)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return bad("is bound to %s, which cannot be looked at: %v", path, err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode().Type() != fs.ModeSocket:
		return bad("is bound to %s, which is not a socket now", path)
	case st == nil || int(st.Uid) != uid:
		return bad("file %s is not owned by uid %d", path, uid)
	case fi.Mode().Perm()&0o077 != 0:
		return bad("file %s has mode %04o; SocketMode must be 0600", path, fi.Mode().Perm())
	}
	f := os.NewFile(listenFD, "broker.sock")
	l, err := net.FileListener(f) // a close-on-exec duplicate
	f.Close()                     // fd 3 itself must not reach the processes brokerd starts
	if err != nil {
		return bad("cannot be used: %v", err)
	}
	ul, ok := l.(*net.UnixListener)
	if !ok {
		l.Close()
		return bad("is not a Unix listener")
	}
	ul.SetUnlinkOnClose(false)
	return ul, nil
}
