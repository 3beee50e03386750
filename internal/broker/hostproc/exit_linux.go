package hostproc

import "golang.org/x/sys/unix"

// fdPath names an open descriptor of the process itself for exec.
const fdPath = "/proc/self/fd/"

// waitExited returns once pid (a child) has exited, without reaping it: waitid(WNOWAIT).
func waitExited(pid int) {
	var si unix.Siginfo
	for {
		if err := unix.Waitid(unix.P_PID, pid, &si, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			return
		}
	}
}
