package presence

import "syscall"

// pinentryProcAttr puts the pinentry in its own process group (killed as a group) and, on
// Linux, kills it if the broker dies mid-prompt so the dialog never outlives the broker.
func pinentryProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// socketpair returns a connected pair of Unix stream sockets, close-on-exec.
func socketpair() ([2]int, error) {
	return syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}
