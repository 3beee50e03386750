//go:build !linux

package presence

import "syscall"

// pinentryProcAttr puts the pinentry in its own process group (killed as a group).
func pinentryProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// socketpair returns a connected pair of Unix stream sockets, close-on-exec (set under
// ForkLock, so that no exec in between inherits them).
func socketpair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fds, err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return fds, nil
}
