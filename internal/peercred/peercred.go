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
//
// [SendAs] and [Receive] (Linux) carry the sender's credentials with one message
// (SCM_CREDENTIALS), [SendAllAs] and [ReceiveAll] with every chunk of a longer one, which the
// kernel checks: a process may name only its own pid and uids and
// gids it has. The CLI takes brokerd's answer to 'brokerd audit verify' only with brokerd's
// group on it (whatever brokerd's socket is, systemd's included, whose SO_PEERCRED is systemd's).
package peercred

import (
	"errors"
	"fmt"
	"io"
)

var (
	errNotUnix = errors.New("peer credentials: not a unix socket")
	// errEOF: the peer closed the socket before sending a message.
	errEOF = fmt.Errorf("receive with credentials: %w", io.EOF)
)

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
