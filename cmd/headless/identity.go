package main

import (
	"fmt"
	"os"
	"syscall"

	"github.com/headless-dev/headless/internal/hardening"
)

// identity sets the group this invocation runs with, before anything else happens. The headless
// binary is installed set-gid to the headless group; only the browser host (which brokerd
// starts, and trusts by that group) keeps it, as real and effective gid, so that Chromium runs
// with it and no process of the user's without it may trace or read Chromium. The pinentry shim
// keeps it as effective gid only (the pinentry is then undumpable). Every other command — the
// CLI and MCP server an agent runs — gives it up at once.
func identity(args []string) error {
	switch {
	case len(args) > 0 && args[0] == "host":
		if _, granted := hardening.Granted(); !granted {
			return nil // not installed set-gid: brokerd will not trust this host (PEER_NOT_HOST)
		}
		if _, err := hardening.TakeGroup(); err != nil {
			return err
		}
		return hardening.NoCoreDumps()
	case len(args) > 0 && args[0] == hardening.PinentryShim:
		return nil
	}
	return hardening.DropGroup()
}

// pinentryEnvKeys is what the shim passes on to the pinentry (what brokerd gives it).
var pinentryEnvKeys = []string{"HOME", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "XDG_RUNTIME_DIR",
	"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS"}

// pinentryExec is 'headless pinentry-exec PROGRAM': it execs PROGRAM — an absolute path to a
// pinentry (its name starts with "pinentry") that no process of the user could replace — in its
// own place, with the headless group as effective gid, and only the environment a pinentry
// needs (never LD_PRELOAD or the like: the program is not set-gid itself, so its loader would
// honour them). It returns only on failure.
func pinentryExec(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "headless: error: "+format+"\nhint: this command is brokerd's, to start the configured pinentry\n", a...)
		return 2
	}
	if len(args) != 1 {
		return fail("%s takes one argument, the pinentry program", hardening.PinentryShim)
	}
	prog := args[0]
	if err := hardening.CheckPinentry(prog); err != nil {
		return fail("%v", err)
	}
	env := []string{"PATH=" + hardening.SystemPath} // never the user's: see hardening.SystemPath
	for _, k := range pinentryEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	err := syscall.Exec(prog, []string{prog}, env)
	return fail("exec %s: %v", prog, err)
}
