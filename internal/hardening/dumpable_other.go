//go:build !linux

package hardening

import "errors"

// Undumpable does nothing on this system: there is no PR_SET_DUMPABLE. (macOS keeps
// same-user debuggers out only for hardened-runtime binaries.)
func Undumpable() error { return nil }

// Dumpable reports true: this system offers no check.
func Dumpable() (bool, error) { return true, errors.New("no PR_GET_DUMPABLE on this system") }
