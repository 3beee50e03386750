package peercred

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Pair returns a connected pair of SOCK_SEQPACKET sockets: mine, which receives the
// credentials of every message (SO_PASSCRED) and is read with [Receive], and theirs (blocking),
// to hand to a child as its stdout, which answers with [SendAs].
func Pair() (mine, theirs *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socket pair: %w", err)
	}
	if err := unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err == nil {
		err = unix.SetNonblock(fds[1], false)
	}
	if err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("socket pair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "peercred-mine"), os.NewFile(uintptr(fds[1]), "peercred-theirs"), nil
}

// SendAs writes b to the socket f as one message that carries this process's credentials:
// its pid, its real uid and its effective gid (SCM_CREDENTIALS). The kernel lets a process
// name only its own pid, and only uids and gids it has (real, effective or saved), so the
// receiver learns from the kernel, not from the sender, that the sender has that gid.
func SendAs(f *os.File, b []byte) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("send with credentials: %w", err)
	}
	oob := unix.UnixCredentials(&unix.Ucred{Pid: int32(os.Getpid()), Uid: uint32(os.Getuid()), Gid: uint32(os.Getegid())})
	var serr error
	if err := raw.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), b, oob, nil, 0)
		return !errors.Is(serr, unix.EAGAIN)
	}); err != nil {
		return fmt.Errorf("send with credentials: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("send with credentials: %w", serr)
	}
	return nil
}

// IsSocket reports whether f is a socket.
func IsSocket(f *os.File) bool {
	var st syscall.Stat_t
	return syscall.Fstat(int(f.Fd()), &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFSOCK
}

// Receive reads one message of at most max bytes from f (from [Pair]; its read deadline
// applies) and returns it with the credentials the kernel attached to it. A longer message, or
// one without credentials, is an error; so is the end of the stream (io.EOF) before any.
func Receive(f *os.File, max int) ([]byte, Cred, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return nil, Cred{}, fmt.Errorf("receive with credentials: %w", err)
	}
	buf := make([]byte, max+1)
	oob := make([]byte, unix.CmsgSpace(unix.SizeofUcred))
	var n, oobn, flags int
	var rerr error
	if err := raw.Read(func(fd uintptr) bool {
		n, oobn, flags, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return !errors.Is(rerr, unix.EAGAIN)
	}); err != nil {
		return nil, Cred{}, fmt.Errorf("receive with credentials: %w", err)
	}
	switch {
	case rerr != nil:
		return nil, Cred{}, fmt.Errorf("receive with credentials: %w", rerr)
	case n == 0 && oobn == 0:
		return nil, Cred{}, errEOF
	case n > max || flags&unix.MSG_TRUNC != 0:
		return nil, Cred{}, fmt.Errorf("receive with credentials: a message over %d bytes", max)
	case flags&unix.MSG_CTRUNC != 0:
		return nil, Cred{}, errors.New("receive with credentials: control data cut short")
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, Cred{}, fmt.Errorf("receive with credentials: %w", err)
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_CREDENTIALS {
			uc, err := unix.ParseUnixCredentials(&m)
			if err != nil {
				return nil, Cred{}, fmt.Errorf("receive with credentials: %w", err)
			}
			return buf[:n], Cred{UID: int(uc.Uid), GID: int(uc.Gid), PID: int(uc.Pid)}, nil
		}
	}
	return nil, Cred{}, errors.New("receive with credentials: the message carries none")
}
