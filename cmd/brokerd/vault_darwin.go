package main

import (
	"context"
	"log/slog"

	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/config"
	"github.com/headless-dev/headless/vault"
)

// openVault opens the login Keychain. The secret-service provider does not exist on macOS.
func openVault(ctx context.Context, cfg config.Config, index string, getenv func(string) string, log *slog.Logger) (vault.Store, presence.Provider, func()) {
	return vault.NewKeychain(vault.KeychainOptions{}), nil, func() {}
}
