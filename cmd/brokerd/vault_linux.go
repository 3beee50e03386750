package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/config"
	"github.com/headless-dev/headless/internal/keyprobe"
	"github.com/headless-dev/headless/vault"
)

// keyringLabel is the label of the dedicated collection the secret-service provider keeps
// locked at rest.
const keyringLabel = "headless"

var _ presence.Keyring = (*vault.SecretService)(nil)

// openVault opens the Secret Service on the session bus named by the environment (never an
// autolaunched bus) and picks the secret-service provider when the config asks for it, or
// leaves the choice to brokerd and the session has a system prompter. With that provider the
// store is the dedicated "headless" collection, locked at rest; otherwise the default
// collection. When the service cannot be reached, every vault call fails VAULT_UNAVAILABLE;
// the store reconnects by itself when the service comes (back).
func openVault(ctx context.Context, cfg config.Config, index string, getenv func(string) string, log *slog.Logger) (vault.Store, presence.Provider, func()) {
	choice := cfg.Presence.Provider
	addr, err := keyprobe.SessionBusAddress(getenv)
	if err != nil {
		log.Warn("no Secret Service", "err", err)
		return vault.Unavailable{Reason: err.Error()}, nil, func() {}
	}
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if choice == config.ProviderSecretService || choice == config.ProviderAuto {
		ss, err := vault.OpenSecretService(octx, vault.SecretServiceOptions{
			Address: addr, Label: keyringLabel, Index: index, Lazy: true})
		if err != nil {
			log.Warn("Secret Service unavailable", "err", err)
			return vault.Unavailable{Reason: err.Error()}, nil, func() {}
		}
		display := getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != ""
		if choice == config.ProviderAuto && !dedicatedInUse(octx, ss, index) {
			owned, activatable, err := ss.SystemPrompter(octx)
			if err != nil || !(owned || activatable && display) {
				log.Info("presence provider: none (no Secret Service with a system prompter)", "err", err)
				ss.Close()
				choice = config.ProviderNone
			}
		}
		if choice != config.ProviderNone {
			p := presence.NewSecretService(presence.SecretServiceOptions{Keyring: ss, Timeout: cfg.PresenceTimeout(), Display: display})
			return ss, p, func() { ss.Close() }
		}
	}
	ss, err := vault.OpenSecretService(octx, vault.SecretServiceOptions{Address: addr, Lazy: true})
	if err != nil {
		log.Warn("Secret Service unavailable", "err", err)
		return vault.Unavailable{Reason: err.Error()}, nil, func() {}
	}
	return ss, nil, func() { ss.Close() }
}

// dedicatedInUse reports whether the secret-service provider's keyring or its index exists.
// Then the automatic choice keeps that provider even when no prompter can be found now
// (releases fail PRESENCE_UNAVAILABLE until one can): falling back to "none" would move
// enrollment and 'credentials add' into the default collection, which the desktop unlocks
// at login, and hide the saved credentials from list.
func dedicatedInUse(ctx context.Context, ss *vault.SecretService, index string) bool {
	if _, err := os.Lstat(index); err == nil {
		return true
	}
	_, err := ss.Locked(ctx) // ErrNoKeyring when there is none
	return err == nil
}
