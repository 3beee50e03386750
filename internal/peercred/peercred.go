// Package peercred identifies the process at the other end of a Unix socket from the kernel.
//
// # Security contract
//
// [Get] reads SO_PEERCRED, which the kernel records when the connection is made; the peer
// cannot forge it. The pid may be reused after the peer exits, so [Cred.Exe] is informational
// (shown in prompts and the audit log), never an authorisation decision; it is "" for an
// undumpable process (headless's own) unless the reader is root. Sockets authorise by uid;
// brokerd additionally releases secrets only to the pid of the host process it started itself
// and still owns (package hostproc), where pid reuse cannot happen unnoticed.
package peercred

import (
	"errors"
)

var errNotUnix = errors.New("peer credentials: not a unix socket")

// Cred is the kernel's record of a peer.
type Cred struct {
	UID int
	GID int
	PID int
}

// Exe returns the executable of the peer process, or "" when it cannot be read.
func (c Cred) Exe() string {
	if c.PID <= 0 {
		return ""
	}
	p, err := exePath(c.PID)
	if err != nil {
		return ""
	}
	return p
}
