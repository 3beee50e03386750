// Package atomicfile writes files so that a crash leaves either the old content or the new,
// complete and durable, never a mix.
//
// # Security contract
//
// [Write] creates a temporary file 0600 beside the target (same directory, so the rename stays
// on one filesystem), writes and fsyncs it, renames it over the target and fsyncs the directory
// so the rename itself survives a power loss. The temporary name starts with "." and the
// target's name; it is removed on every failure. The file is created 0600 whatever the umask,
// and a symlink at the target is replaced, never followed. Every writer of headless (the
// credentials index, the profile's marker and preferences, screenshots) goes through it.
//
// # Not guaranteed
//
// Concurrent writers of one path are not serialised: the last rename wins (callers that need
// more hold a lock). A crash can leave a temporary file behind: [RemoveLeftovers] removes
// them, for a caller holding the lock every writer of the path holds.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Write replaces path with data, 0600: temp file → fsync → rename → fsync of the directory.
func Write(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// RemoveLeftovers removes the temporary files [Write] left beside path when its process died
// mid-write (killed, the machine down), and says how many. Call it only while holding the lock
// every writer of path holds: a write in progress has one too. Only names that start as
// Write's temporary names of path do (".NAME.tmp-"); a directory of such a name is left
// alone.
func RemoveLeftovers(path string) (int, error) {
	dir, prefix := filepath.Dir(path), "."+filepath.Base(path)+".tmp-"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("remove leftovers of %s: %w", path, err)
	}
	n := 0
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), prefix) || e.IsDir() {
			continue
		}
		switch err := os.Remove(filepath.Join(dir, e.Name())); {
		case err == nil:
			n++
		case !errors.Is(err, fs.ErrNotExist):
			return n, fmt.Errorf("remove leftovers of %s: %w", path, err)
		}
	}
	return n, nil
}

// SyncDir fsyncs a directory so that the creations, renames and removals in it are durable.
// A filesystem that cannot sync a directory (EINVAL) is not an error.
func SyncDir(dir string) error {
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
