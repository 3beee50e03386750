package hardening

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
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

// DropGroup gives up a group a set-gid exec granted (real, effective and saved gid become the
// real one). The process stays undumpable: the kernel keeps it so when the effective gid
// changes, and Undumpable set it already.
func DropGroup() error {
	g := os.Getgid()
	if os.Getegid() == g {
		return nil
	}
	if err := syscall.Setresgid(g, g, g); err != nil {
		return fmt.Errorf("setresgid: %w", err)
	}
	return nil
}

// TakeGroup makes the granted group this process's real and effective gid, keeping the user's
// own gid as the saved one (so that [MemoryOpenAs] can still look with it). What it execs then
// runs with the group as real, effective and saved gid: Chromium, which refuses to start with
// a real gid other than its effective one, runs so, and the kernel refuses ptrace, /proc/PID/mem
// and process_vm_readv of it to every process of the user that lacks the group.
func TakeGroup() (userGID int, err error) {
	user, g := os.Getgid(), os.Getegid()
	if user == g {
		return user, fmt.Errorf("no group was granted to this process (effective gid %d is the real one): it was not exec'd from the installed set-gid binary, or under a tracer, in a user namespace or with no_new_privs", g)
	}
	if err := syscall.Setresgid(g, g, user); err != nil {
		return user, fmt.Errorf("setresgid: %w", err)
	}
	return user, nil
}

// MemoryOpenAs is [MemoryOpen] asked with the filesystem gid gid (which must be this
// process's real, effective or saved gid): what a process of the user whose gid is gid, and
// not this process's group, may open. The check runs on a thread of its own whose fsgid is
// changed and restored; a thread that cannot be restored is not given back to the runtime.
func MemoryOpenAs(pid, gid int) (bool, error) {
	var open bool
	err := WithFSGID(gid, func() error {
		var err error
		open, err = MemoryOpen(pid)
		return err
	})
	return open, err
}

// WithFSGID runs f on one locked OS thread whose filesystem gid is gid (the real, effective or
// saved gid: the kernel allows no other), and gives the thread its own back after. f must do
// its work on the calling goroutine. The kernel decides access to another process's /proc
// files (exe, fd/, mem) by the caller's fsgid against the target's gids, so a set-gid process
// asks about the user's processes as the user with it.
func WithFSGID(gid int, f func() error) error {
	runtime.LockOSThread()
	fsgid := func(g int) int { prev, _ := unix.SetfsgidRetGid(g); return prev }
	own := fsgid(-1) // -1 changes nothing and returns the current fsgid
	if own == gid {
		defer runtime.UnlockOSThread()
		return f()
	}
	fsgid(gid)
	if now := fsgid(-1); now != gid {
		fsgid(own)
		runtime.UnlockOSThread()
		return fmt.Errorf("setfsgid(%d): the kernel kept %d", gid, now)
	}
	err := f()
	fsgid(own)
	if fsgid(-1) == own {
		runtime.UnlockOSThread()
	} // else: the goroutine exits with the thread locked, and the runtime ends the thread
	return err
}

// AsUser runs f with the user's own gid ([UserGID]) as the thread's filesystem gid: what f
// reads of /proc, it reads as any process of the user could. If the kernel refuses the gid,
// f runs as the process is.
func AsUser(f func()) {
	if WithFSGID(UserGID(), func() error { f(); return nil }) != nil {
		f()
	}
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

// UserGID is the user's own gid: the real gid, or the saved one after [TakeGroup] moved the
// real gid to the granted group.
func UserGID() int {
	r, e, s := unix.Getresgid()
	if r == e && s != r {
		return s
	}
	return r
}

// NoCoreDumps sets this process's core size limit to 0, soft and hard, so that neither it nor
// anything it starts (Chromium, whose memory holds typed passwords) leaves a core dump, and
// nothing it starts can raise the limit again.
func NoCoreDumps() error {
	return unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0})
}
