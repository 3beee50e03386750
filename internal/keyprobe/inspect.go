package keyprobe

import "errors"

// Inspection is what [Inspect] saw of the Secret Service.
type Inspection struct {
	// Default is what [Check] answers: nil when the default collection (which holds
	// Chromium's cookie key) is there and unlocked.
	Default error
	// Keyrings counts the collections with the dedicated label (more than one: a decoy).
	Keyrings int
	// Locked and AutoUnlockStored describe the dedicated collection when there is one.
	Locked           bool
	AutoUnlockStored bool
	// PrompterRunning: the keyring's system prompter owns its bus name now;
	// PrompterActivatable: the bus can start it (on a display).
	PrompterRunning, PrompterActivatable bool
}

var errNoService = errors.New("org.freedesktop.secrets has no owner and cannot be activated")
