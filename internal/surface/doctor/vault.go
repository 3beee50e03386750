package doctor

// The vault's checks: the Secret Service, the keyring it unlocks, and the presence provider.

import (
	"context"
	"errors"
	"strings"

	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/config"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/keyprobe"
)

func (d *run) checkSecretService() {
	if !d.linux() {
		d.set(CheckSecretService, Unsupported, "", "no D-Bus Secret Service on %s (the Keychain is used)", d.p.GOOS)
		return
	}
	switch {
	case d.p.BusAddress == "":
		d.set(CheckSecretService, Failed, "run headless inside your desktop session, or start a session bus with gnome-keyring",
			"no session bus (DBUS_SESSION_BUS_ADDRESS is unset and there is no bus socket in the runtime dir): Chromium's cookie key and the credentials have nowhere to live")
	case !d.looked:
		d.set(CheckSecretService, Warning, "this is a bug of the doctor", "not checked")
	case d.busErr != nil:
		d.set(CheckSecretService, Failed, "start a Secret Service (gnome-keyring or KWallet) on your session bus",
			"the session bus or its Secret Service does not answer (%s)", classifyBus(d.busErr))
	case errors.Is(d.bus.Default, keyprobe.ErrLocked):
		d.set(CheckSecretService, Failed, "unlock your login keyring (log in to the desktop session); the host will not launch Chromium without it",
			"reachable, but the default collection (Chromium's cookie key) is locked")
	case d.bus.Default != nil:
		d.set(CheckSecretService, Failed, "start a Secret Service with a default collection (gnome-keyring creates 'login')",
			"reachable, but it has no usable default collection for Chromium's cookie key")
	default:
		d.set(CheckSecretService, Healthy, "", "reachable; the default collection (Chromium's cookie key) is unlocked")
	}
}

func classifyBus(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "no answer in time"
	case errors.Is(err, keyprobe.ErrLocked):
		return "locked"
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connect to session bus"), strings.Contains(msg, "authenticate"):
		return "the bus cannot be connected to"
	case strings.Contains(msg, "has no owner"):
		return "no Secret Service on the bus"
	}
	return "an error on the bus"
}

// provider is the presence provider brokerd uses (when it runs) or would choose.
func (d *run) provider() (name string, known bool) {
	if d.broker != nil {
		return d.broker.Presence, true
	}
	if d.cfgErr != nil {
		return "", false
	}
	if p := d.cfg.Presence.Provider; p != config.ProviderAuto {
		return p, true
	}
	if !d.linux() {
		return config.ProviderNone, true
	}
	idx, _ := d.p.Layout.CredentialsIndex()
	if d.looked && d.busErr == nil && (d.bus.Keyrings > 0 || d.bus.PrompterRunning || d.bus.PrompterActivatable) || idx != "" && exists(idx) {
		return config.ProviderSecretService, true
	}
	return config.ProviderNone, true
}

func (d *run) checkKeyring() {
	prov, known := d.provider()
	switch {
	case !d.linux():
		d.set(CheckKeyring, Unsupported, "", "no 'headless' keyring on %s", d.p.GOOS)
		d.set(CheckAutoUnlock, Unsupported, "", "no keyring auto-unlock on %s", d.p.GOOS)
		return
	case !d.looked || d.busErr != nil || d.p.BusAddress == "":
		d.set(CheckKeyring, Warning, "see check secret_service", "not checked: the Secret Service cannot be reached")
		d.set(CheckAutoUnlock, Warning, "see check secret_service", "not checked: the Secret Service cannot be reached")
		return
	case d.bus.Keyrings > 1:
		d.set(CheckKeyring, Failed, "remove the keyrings headless did not create (Seahorse), keeping the one with your credentials",
			"%d keyrings are labelled 'headless': one could be a decoy; brokerd refuses to choose", d.bus.Keyrings)
		d.set(CheckAutoUnlock, Warning, "see check keyring", "not checked: more than one 'headless' keyring")
		return
	case d.bus.Keyrings == 0 && known && prov != config.ProviderSecretService:
		d.set(CheckKeyring, Unsupported, "", "not used: presence provider %s keeps credentials in the default collection", provName(prov))
		d.set(CheckAutoUnlock, Unsupported, "", "not used: presence provider %s", provName(prov))
		return
	case d.bus.Keyrings == 0:
		d.set(CheckKeyring, Warning, "run 'headless credentials init' (the keyring asks you for the new keyring's password)",
			"the 'headless' keyring does not exist yet")
		d.set(CheckAutoUnlock, Unsupported, "", "no 'headless' keyring yet")
		return
	}
	if d.bus.Locked {
		d.set(CheckKeyring, Healthy, "", "the 'headless' keyring exists and is locked at rest")
	} else {
		d.set(CheckKeyring, Warning, "lock it (Seahorse, or 'headless credentials list' after any release locks it again); brokerd locks it after every use",
			"the 'headless' keyring is unlocked now: any program running as you can read it until it is locked")
	}
	if d.bus.AutoUnlockStored {
		d.set(CheckAutoUnlock, Failed, "run 'headless credentials repair': it changes the keyring's password through the keyring's own prompt and has the keyring discard the stored one (approve with 'Automatically unlock' unticked)",
			"the keyring stores the 'headless' keyring's password for automatic unlock: nobody would be asked, so brokerd refuses every release (PRESENCE_AUTO_UNLOCK)")
	} else {
		d.set(CheckAutoUnlock, Healthy, "", "no automatic-unlock password is stored for the 'headless' keyring")
	}
}

func provName(p string) string {
	if p == "" {
		return "(automatic)"
	}
	return p
}

func (d *run) checkPresence() {
	prov, known := d.provider()
	if !known {
		d.set(CheckPresence, Warning, "fix the config first (check config)", "not judged: the config is refused, so brokerd would not start")
		return
	}
	started := ""
	if d.broker != nil {
		started = d.broker.Started
	}
	byPerson := started == brokerapi.StartedPerson || started == brokerapi.StartedSystemd
	configured := d.cfg.Presence.Display != "" || d.cfg.Presence.WaylandDisplay != ""
	switch prov {
	case config.ProviderNone, "":
		hint := `set "presence" in the config: {"provider":"passphrase","program":"/usr/bin/pinentry-gnome3"} (or pinentry-tty) keeps the passwords from an agent's shell; {"provider":"secret-service"} on a desktop, or {"provider":"pinentry","program":…}, do not (README, Providers)`
		if d.p.GOOS == "darwin" {
			hint = `use pinentry-mac: {"presence":{"provider":"pinentry","program":"/opt/homebrew/bin/pinentry-mac"}} (README, macOS)`
		}
		d.set(CheckPresence, Warning, hint, "no presence provider: every release is refused (PRESENCE_UNAVAILABLE); nothing can sign in by alias")
	case config.ProviderSecretService:
		switch {
		case !d.linux():
			d.set(CheckPresence, Failed, "use the pinentry provider with pinentry-mac (README, macOS)", "secret-service presence exists only on Linux")
		case !d.looked || d.busErr != nil:
			d.set(CheckPresence, Warning, "see check secret_service", "secret-service: not checked, the Secret Service cannot be reached")
		case d.bus.PrompterRunning:
			d.set(CheckPresence, Healthy, "", "secret-service: the keyring's prompter (gcr-prompter) runs on the session bus and will ask you")
		case d.bus.PrompterActivatable && byPerson:
			d.set(CheckPresence, Healthy, "", "secret-service: the bus starts the keyring's prompter on demand, on the display of the brokerd you started")
		case d.bus.PrompterActivatable:
			d.set(CheckPresence, Warning, "start brokerd from your desktop session (or enable the systemd user units, README) so the prompter has your display",
				"secret-service: the bus can start the keyring's prompter, but only where a display is; a brokerd started by headless has none unless the desktop gave the bus one")
		default:
			d.set(CheckPresence, Failed, "install gcr (gcr-prompter) and run inside your desktop session, or use the pinentry provider",
				"secret-service: the keyring has no prompter to ask you (no org.gnome.keyring.SystemPrompter): every release is PRESENCE_UNAVAILABLE")
		}
	case config.ProviderPinentry, config.ProviderPassphrase:
		prog := d.cfg.Presence.Program
		base := prog[strings.LastIndexByte(prog, '/')+1:]
		terminal := strings.Contains(base, "tty") || strings.Contains(base, "curses")
		switch {
		case d.linux() && hardening.CheckPinentry(prog) != nil:
			d.set(CheckPresence, Failed, "name a root-owned program named pinentry* in a directory only root can write (e.g. /usr/bin/pinentry-curses)",
				"%s: brokerd refuses it, every prompt is PRESENCE_UNAVAILABLE", hardening.CheckPinentry(prog))
		case d.p.GOOS == "darwin" && !strings.Contains(base, "mac"):
			d.set(CheckPresence, Warning, "use pinentry-mac (brew install pinentry-mac; README, macOS)", "pinentry %s: on macOS the prompt that works today is pinentry-mac", base)
		case d.p.GOOS == "darwin":
			d.set(CheckPresence, Healthy, "", "pinentry-mac asks you in a dialog of your macOS session (the supported macOS path)")
		case configured && !terminal:
			d.set(CheckPresence, Healthy, "", "pinentry %s, on the display the config names", base)
		case byPerson && terminal && started == brokerapi.StartedSystemd:
			d.set(CheckPresence, Failed, "use a graphical pinentry with the systemd unit, or start brokerd in a terminal yourself", "pinentry %s needs a terminal, and a brokerd run by systemd has none", base)
		case byPerson:
			d.set(CheckPresence, Healthy, "", "pinentry %s, on the terminal or display of the brokerd you started", base)
		case terminal:
			d.set(CheckPresence, Warning, "start brokerd yourself in a terminal you watch before an agent runs (a brokerd headless starts has no terminal)",
				"pinentry %s needs a terminal, and a brokerd started by headless has none: releases would be PRESENCE_UNAVAILABLE", base)
		default:
			d.set(CheckPresence, Warning, `set "presence.display" (and "presence.xauthority") in the config, or start brokerd from your desktop session`,
				"pinentry %s: a brokerd started by headless never takes a display from the environment, and the config names none", base)
		}
	default:
		d.set(CheckPresence, Failed, "fix presence.provider in the config", "unknown presence provider")
	}
}
