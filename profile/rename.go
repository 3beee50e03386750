package profile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// wrapRename returns nil for a nil err, else err as an *os.LinkError (errors.Is finds the
// errno: EXDEV, EEXIST, ENOTEMPTY, …).
func wrapRename(oldpath, newpath string, err error) error {
	if err == nil {
		return nil
	}
	return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
}

// renameChecked renames oldpath to newpath after checking that newpath does not exist. Only
// for callers that hold the profile lock in a directory they own.
func renameChecked(oldpath, newpath string) error {
	if _, err := os.Lstat(newpath); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			err = syscall.EEXIST
		}
		return wrapRename(oldpath, newpath, err)
	}
	return os.Rename(oldpath, newpath)
}

// exchangeByRenames swaps a and b with three renames through a+"-swap". Between them b is
// briefly absent (Open then creates a fresh profile) and a+"-swap", a temporary name when a
// is one, holds b's old content.
func exchangeByRenames(a, b string) error {
	mid := a + "-swap"
	if err := renameChecked(b, mid); err != nil {
		return err
	}
	if err := renameChecked(a, b); err != nil {
		if rerr := renameChecked(mid, b); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	return renameChecked(mid, a)
}
