package peercred

import (
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// Get returns the credentials of the peer of c (LOCAL_PEERCRED and LOCAL_PEERPID).
func Get(c net.Conn) (Cred, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return Cred{}, errNotUnix
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return Cred{}, fmt.Errorf("peer credentials: %w", err)
	}
	var cred Cred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		var x *unix.Xucred
		x, serr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if serr != nil {
			return
		}
		cred.UID = int(x.Uid)
		if x.Ngroups > 0 {
			cred.GID = int(x.Groups[0])
		}
		cred.PID, serr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	}); err != nil {
		return Cred{}, fmt.Errorf("peer credentials: %w", err)
	}
	if serr != nil {
		return Cred{}, fmt.Errorf("peer credentials: %w", serr)
	}
	return cred, nil
}

func exePath(pid int) (string, error) { return "", errors.New("executable path unavailable") }
