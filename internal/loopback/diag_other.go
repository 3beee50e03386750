//go:build !linux

package loopback

import "errors"

// diagListening: socket diagnostics are Linux's; elsewhere the tables are read.
func diagListening(limits) ([]Socket, error) {
	return nil, errors.New("no socket diagnostics on this system")
}
