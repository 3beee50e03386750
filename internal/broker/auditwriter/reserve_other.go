//go:build !linux

package auditwriter

import "os"

// preallocate reserves nothing where fallocate is unknown: a record that finds the disk full
// is still refused, only after the prompt.
func preallocate(f *os.File, size, n int64) error { return nil }

// datasync makes f's data durable; where fdatasync is unknown (darwin), fsync does.
func datasync(f *os.File) error { return f.Sync() }
