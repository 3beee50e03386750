package presence

import "syscall"

// pinentryProcAttr puts the pinentry in its own process group (killed as a group) and, on
// Linux, kills it if the broker dies mid-prompt so the dialog never outlives the broker.
func pinentryProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
