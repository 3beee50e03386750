//go:build !linux

package profile

import (
	"context"
	"fmt"

	"github.com/headless-dev/headless/vault"
)

// CheckKeyring is the launch gate of the durable profile. The Secret Service exists only on
// Linux; elsewhere it always fails with an error wrapping [vault.ErrUnavailable].
func CheckKeyring(ctx context.Context, busAddress string) error {
	return fmt.Errorf("secret service: %w: not available on this operating system", vault.ErrUnavailable)
}
