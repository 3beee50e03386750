package hardening

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Undumpable makes this process undumpable (prctl PR_SET_DUMPABLE 0). Call it first thing in
// main; a failure must stop the program (fail closed).
func Undumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}

// Dumpable reports PR_GET_DUMPABLE of this process: true when same-user processes may ptrace
// it and read its memory.
func Dumpable() (bool, error) {
	r, _, errno := unix.Syscall6(unix.SYS_PRCTL, unix.PR_GET_DUMPABLE, 0, 0, 0, 0, 0)
	if errno != 0 {
		return true, fmt.Errorf("prctl(PR_GET_DUMPABLE): %w", errno)
	}
	return r != 0, nil
}
