//go:build !linux

package keyprobe

import (
	"context"
	"fmt"
)

// SessionBusAddress reports that there is no D-Bus Secret Service on this platform.
func SessionBusAddress(getenv func(string) string) (string, error) {
	return "", fmt.Errorf("%w: no D-Bus Secret Service on this platform", ErrUnavailable)
}

// Check always fails: the Secret Service exists only on Linux.
func Check(ctx context.Context, addr string) error {
	return fmt.Errorf("secret service: %w: not available on this operating system", ErrUnavailable)
}

// Inspect always fails: the Secret Service exists only on Linux.
func Inspect(ctx context.Context, addr, label string) (Inspection, error) {
	err := Check(ctx, addr)
	return Inspection{Default: err}, err
}

// CheckAddress refuses every address: there is no session bus here.
func CheckAddress(addr string) error {
	return fmt.Errorf("%w: no D-Bus session bus on this platform", ErrUnavailable)
}
