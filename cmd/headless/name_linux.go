package main

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// setName names the process "headless" in /proc/PID/comm. The host brokerd starts runs the
// binary it checked through /proc/self/fd/N, so the kernel names it "N": audit records'
// process chains, ps and the prompt would show a number.
func setName() {
	name := []byte("headless\x00")
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0)
}
