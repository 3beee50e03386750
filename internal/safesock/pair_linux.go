package safesock

import "syscall"

// Pair returns a connected pair of Unix stream sockets, close-on-exec. A socket, unlike a
// pipe, cannot be opened again through /proc/PID/fd by another process of the user: the
// DevTools channel (host/cdp) and the pinentry's stdio (internal/broker/presence) are pairs.
func Pair() ([2]int, error) {
	return syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}
