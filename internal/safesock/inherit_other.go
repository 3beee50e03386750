//go:build !linux

package safesock

import "net"

// Inherited reports no inherited socket: socket activation is systemd's, on Linux.
func Inherited(getenv func(string) string, pid int, path string, uid int) (*net.UnixListener, error) {
	return nil, nil
}
