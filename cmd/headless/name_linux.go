package main

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// main runs on the process's main thread (the thread group's leader), so that setName names
// the process, not some thread.
func init() { runtime.LockOSThread() }

// setName names the process "headless" in /proc/PID/comm. The host brokerd starts runs the
// binary it checked through /proc/self/fd/N, so the kernel names it "N": audit records'
// process chains, ps and the prompt would show a number. prctl(PR_SET_NAME) on the main
// thread names the leader, whose name is the process's; writing /proc/self/comm instead fails
// for a non-root user once the process is undumpable (its /proc files then belong to root),
// which is why red-team round 6b, as an ordinary user, still saw the host as "100".
func setName() {
	if name, err := unix.BytePtrFromString("headless"); err == nil {
		_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(name)), 0, 0, 0)
	}
	runtime.UnlockOSThread()
}
