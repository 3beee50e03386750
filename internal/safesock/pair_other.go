//go:build !linux

package safesock

import "syscall"

// Pair returns a connected pair of Unix stream sockets, close-on-exec: set after the fact (no
// SOCK_CLOEXEC here), under the fork lock so that no concurrent exec inherits them in between.
func Pair() ([2]int, error) {
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
