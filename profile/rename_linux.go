package profile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames oldpath to newpath and fails with EEXIST when newpath exists, even
// as an empty directory (which a plain rename would silently replace).
func renameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// A filesystem without RENAME_NOREPLACE: the caller holds the profile lock and owns
		// the data directory, so nothing creates newpath between this check and the rename.
		return renameChecked(oldpath, newpath)
	}
	return wrapRename(oldpath, newpath, err)
}

// exchange swaps the directories a and b atomically: at every moment each path holds one of
// the two complete directories.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return exchangeByRenames(a, b)
	}
	return wrapRename(a, b, err)
}
