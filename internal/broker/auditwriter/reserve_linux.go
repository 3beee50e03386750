package auditwriter

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// preallocate reserves n bytes past the end of f (size bytes long) without changing its size.
// A filesystem that cannot preallocate reserves nothing and is not an error.
func preallocate(f *os.File, size, n int64) error {
	err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, size, n)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return nil
	}
	return err
}

// datasync makes f's data durable without its times (fdatasync).
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
