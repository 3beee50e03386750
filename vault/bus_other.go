//go:build !linux

package vault

import "fmt"

// SessionBusAddress reports that there is no D-Bus Secret Service on this platform.
func SessionBusAddress(getenv func(string) string) (string, error) {
	return "", fmt.Errorf("%w: no D-Bus Secret Service on this platform", ErrUnavailable)
}
