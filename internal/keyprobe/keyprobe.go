// Package keyprobe answers one question before every launch of the durable profile: is the
// Secret Service that holds Chromium's cookie key there, with its default collection unlocked?
// It also finds the session bus ([SessionBusAddress]) that question is asked on.
//
// # Security contract
//
// [Check] and [Inspect] (the doctor's questions: the dedicated keyring, whether it is locked,
// whether an auto-unlock password is stored for it, the system prompter) are read-only: it connects privately to the given address (never an autolaunched bus,
// which it refuses), opens no Secret Service session, reads no secret, creates, changes or
// unlocks nothing, and shows no prompt. It answers nil only when org.freedesktop.secrets has an
// owner, the collection with alias "default" exists and is unlocked; otherwise an error
// wrapping [ErrUnavailable] (no address, an autolaunch address, no bus, no service, no default
// collection) or [ErrLocked]. One launch of Chromium (--password-store=gnome-libsecret) without
// that key deletes every encrypted cookie row for good, so the host launches only after nil.
//
// This is the only package through which D-Bus code may reach the agent-facing binary
// (cmd/headless); the vault, which reads passwords, never does (internal/test/archtest).
//
// # Not guaranteed
//
// The answer is a snapshot: the collection can be locked or the service can exit right after
// Check returns. Like libsecret, Check lets the bus start an activatable service; one started
// that way normally comes up locked, which answers ErrLocked. The Secret Service exists only on
// Linux; elsewhere every answer wraps ErrUnavailable.
package keyprobe

import (
	"strings"

	"github.com/headless-dev/headless/internal/wire"
)

// Errors Check and SessionBusAddress wrap. Their texts are the vault's, since the person reads
// them as the state of the keyring (codes VAULT_UNAVAILABLE and VAULT_LOCKED).
var (
	ErrUnavailable = wire.Sentinel(wire.CodeVaultUnavail, "vault is unavailable")
	ErrLocked      = wire.Sentinel(wire.CodeVaultLocked, "vault is locked")
)

// IsAutolaunch reports whether any entry of a D-Bus address list would autolaunch a bus.
func IsAutolaunch(addr string) bool {
	for _, a := range strings.Split(addr, ";") {
		if t, _, _ := strings.Cut(a, ":"); t == "autolaunch" || t == "launchd" {
			return true
		}
	}
	return false
}
