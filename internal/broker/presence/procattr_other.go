//go:build !linux

package presence

import "syscall"

// pinentryProcAttr puts the pinentry in its own process group (killed as a group).
func pinentryProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
