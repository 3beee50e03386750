package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/headless-dev/headless/vault"
)

// openVault opens the Secret Service on the session bus named by the environment (never an
// autolaunched bus). When it cannot be reached, every vault call fails VAULT_UNAVAILABLE; the
// store reconnects by itself when the service comes (back).
func openVault(ctx context.Context, getenv func(string) string, log *slog.Logger) (vault.Store, func()) {
	addr, err := vault.SessionBusAddress(getenv)
	if err != nil {
		log.Warn("no Secret Service", "err", err)
		return vault.Unavailable{Reason: err.Error()}, func() {}
	}
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ss, err := vault.OpenSecretService(octx, vault.SecretServiceOptions{Address: addr, Lazy: true})
	if err != nil {
		log.Warn("Secret Service unavailable", "err", err)
		return vault.Unavailable{Reason: err.Error()}, func() {}
	}
	return ss, func() { ss.Close() }
}
