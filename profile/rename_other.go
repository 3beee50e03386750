//go:build !linux

package profile

// renameNoReplace renames oldpath to newpath, which must not exist. The caller holds the
// profile lock and owns the data directory.
func renameNoReplace(oldpath, newpath string) error { return renameChecked(oldpath, newpath) }

// exchange swaps the directories a and b with three renames (no atomic exchange here).
func exchange(a, b string) error { return exchangeByRenames(a, b) }
