package hardening

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNotUndumpable: prctl said yes, but the kernel still treats this process as dumpable — a
// seccomp filter (or another sandbox) that answers prctl without running it, as an agent can
// install before it execs headless.
var ErrNotUndumpable = errors.New("the kernel still treats this process as dumpable after prctl(PR_SET_DUMPABLE, 0): a seccomp filter or sandbox answers prctl without running it")

// Undumpable makes this process undumpable (prctl PR_SET_DUMPABLE 0) and checks that the
// kernel agrees ([Dumpable]). Call it first thing in main; a failure must stop the program
// (fail closed).
func Undumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	d, err := Dumpable()
	if err != nil {
		return err
	}
	if d {
		return ErrNotUndumpable
	}
	return nil
}

// Dumpable reports whether same-user processes may ptrace this process and read its memory.
// It asks the kernel's /proc rather than prctl(PR_GET_DUMPABLE), which a seccomp filter can
// answer with anything: the kernel gives a non-dumpable process's /proc/PID files to root
// (task_dump_owner), so for a process not running as root, /proc/self/stat owned by its own
// uid means dumpable. For root (which nothing keeps out anyway) it falls back to prctl.
func Dumpable() (bool, error) {
	uid := os.Getuid()
	if uid != 0 {
		var st syscall.Stat_t
		if err := syscall.Stat("/proc/self/stat", &st); err != nil {
			return true, fmt.Errorf("stat /proc/self/stat: %w", err)
		}
		return int(st.Uid) == uid, nil
	}
	r, _, errno := unix.Syscall6(unix.SYS_PRCTL, unix.PR_GET_DUMPABLE, 0, 0, 0, 0, 0)
	if errno != 0 {
		return true, fmt.Errorf("prctl(PR_GET_DUMPABLE): %w", errno)
	}
	return r != 0, nil
}
