package hostproc

import "golang.org/x/sys/unix"

// fdPath names an open descriptor of the process itself for exec.
const fdPath = "/dev/fd/"

// waitExited returns once pid (a child) has exited, without reaping it: a kqueue NOTE_EXIT
// event fires at exit, before the parent waits. If the kqueue cannot be used it returns at
// once: the host then stops counting as genuine right away (fail closed).
func waitExited(pid int) {
	kq, err := unix.Kqueue()
	if err != nil {
		return
	}
	defer unix.Close(kq)
	ev := []unix.Kevent_t{{Ident: uint64(pid), Filter: unix.EVFILT_PROC, Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT}}
	out := make([]unix.Kevent_t, 1)
	for {
		n, err := unix.Kevent(kq, ev, out, nil) // EV_ADD again after EINTR is harmless
		if err == unix.EINTR {
			continue
		}
		if err == nil && n == 0 {
			ev = nil // registered, nothing yet
			continue
		}
		return
	}
}
