// Package peercred identifies the process at the other end of a Unix socket from the kernel.
//
// # Security contract
//
// [Get] reads SO_PEERCRED, which the kernel records when the connection is made; the peer
// cannot forge it. The pid may be reused after the peer exits, so [Cred.Exe] is informational
// (shown in prompts and the audit log), never an authorisation decision. Authorisation is by
// uid only.
package peercred

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Cred is the kernel's record of a peer.
type Cred struct {
	UID int
	GID int
	PID int
}

// Get returns the credentials of the peer of c, which must be a *net.UnixConn.
func Get(c net.Conn) (Cred, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return Cred{}, errors.New("peer credentials: not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return Cred{}, fmt.Errorf("peer credentials: %w", err)
	}
	var ucred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		ucred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Cred{}, fmt.Errorf("peer credentials: %w", err)
	}
	if serr != nil {
		return Cred{}, fmt.Errorf("peer credentials: %w", serr)
	}
	return Cred{UID: int(ucred.Uid), GID: int(ucred.Gid), PID: int(ucred.Pid)}, nil
}

// Exe returns the executable of the peer process, or "" when it cannot be read.
func (c Cred) Exe() string {
	if c.PID <= 0 {
		return ""
	}
	p, err := os.Readlink("/proc/" + strconv.Itoa(c.PID) + "/exe")
	if err != nil {
		return ""
	}
	return p
}
