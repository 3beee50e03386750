package cli

import "golang.org/x/sys/unix"

const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)

// flushInput discards what the terminal has received but nobody has read (FREAD = 1).
func flushInput(fd int) { unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, 1) }
