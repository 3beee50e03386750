package hardening

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNotUndumpable: prctl said yes, but the kernel still treats this process as dumpable — a
// seccomp filter (or another sandbox) that answers prctl without running it, as an agent can
// install before it execs headless.
var ErrNotUndumpable = errors.New("the kernel still treats this process as dumpable after prctl(PR_SET_DUMPABLE, 0): a seccomp filter or sandbox answers prctl without running it")

// ErrUserNamespace: the process runs in a user namespace other than the initial one. There,
// undumpable means nothing to the namespace's owner (red-team round 4: 'unshare -Ur headless
// start' left brokerd and the host traceable by the user who made the namespace, with every
// check passing).
var ErrUserNamespace = errors.New("this process runs inside a user namespace (not the system's own): whoever owns the namespace could ptrace it")

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
	initial, err := InitialUserNamespace()
	if err != nil {
		return err
	}
	if !initial {
		return ErrUserNamespace
	}
	return nil
}

// InitialUserNamespace reports whether this process runs in the system's own user namespace:
// its uid_map is the identity map of the whole range, which a namespace made by a user never is.
func InitialUserNamespace() (bool, error) {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return false, fmt.Errorf("read /proc/self/uid_map: %w", err)
	}
	f := strings.Fields(string(b))
	return len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295", nil
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

// MemoryOpen reports whether this process may open /proc/PID/mem of process pid: the access a
// ptrace attach needs, and what reads the process's memory. For a caller that is not root and
// runs as pid's user, true means every process of that user (an agent's shell among them) can
// read pid's memory; false means none can — the kernel refused the caller on pid's own terms
// (pid is undumpable in the system's user namespace, or Yama keeps non-ancestors out), not on
// the caller's. Root is refused nothing, so for root the answer is always true. A pid that has
// exited is an error wrapping os.ErrNotExist.
func MemoryOpen(pid int) (bool, error) {
	f, err := os.OpenFile("/proc/"+strconv.Itoa(pid)+"/mem", os.O_RDONLY, 0)
	if err == nil {
		f.Close()
		return true, nil
	}
	switch {
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return false, nil
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ESRCH):
		return false, fmt.Errorf("process %d: %w", pid, os.ErrNotExist)
	}
	return false, fmt.Errorf("open /proc/%d/mem: %w", pid, err)
}

// openPath opens path for fstat only (O_PATH): no read permission needed.
func openPath(path string) (*os.File, error) {
	return os.OpenFile(path, unix.O_PATH|syscall.O_CLOEXEC, 0)
}
