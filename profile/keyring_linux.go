package profile

import (
	"context"

	"github.com/headless-dev/headless/vault"
)

// CheckKeyring is the launch gate of the durable profile. It answers nil only when the
// Secret Service on the session bus at busAddress has an owner and its default collection
// exists and is unlocked, so that Chromium (--password-store=gnome-libsecret) can read the
// key it encrypts cookies with. Otherwise it returns an error wrapping [vault.ErrUnavailable]
// or [vault.ErrLocked], and the caller must not launch the durable profile: one launch without
// the key deletes every encrypted cookie row for good.
//
// It connects privately to busAddress (never an autolaunched bus); see [vault.Reachable].
// Launch Chromium with DBUS_SESSION_BUS_ADDRESS set to the same busAddress.
func CheckKeyring(ctx context.Context, busAddress string) error {
	return vault.Reachable(ctx, busAddress)
}
