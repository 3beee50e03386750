package main

import (
	"context"
	"log/slog"

	"github.com/headless-dev/headless/vault"
)

// openVault opens the login Keychain.
func openVault(ctx context.Context, getenv func(string) string, log *slog.Logger) (vault.Store, func()) {
	return vault.NewKeychain(vault.KeychainOptions{}), func() {}
}
