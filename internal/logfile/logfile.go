// Package logfile is a size-bounded log file with one rotated generation.
//
// # Security contract
//
// The file is created 0600. When a write would take it past Max bytes it is renamed to
// NAME.1 (replacing the previous generation) and a new file is started, so the log never
// exceeds 2×Max on disk. It holds only what callers write: callers never log secrets.
package logfile

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

// File is an io.Writer safe for concurrent use.
type File struct {
	path string
	max  int64
	mu   sync.Mutex
	f    *os.File
	size int64
}

// Open opens (appending to) the log at path, bounded to max bytes per generation.
func Open(path string, max int64) (*File, error) {
	l := &File{path: path, max: max}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *File) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat log: %w", err)
	}
	f.Chmod(0o600)
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when needed. A single write larger than max is truncated.
func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	if int64(len(p)) > l.max {
		p = p[:l.max]
	}
	if l.size+int64(len(p)) > l.max {
		l.f.Close()
		if err := os.Rename(l.path, l.path+".1"); err != nil && !os.IsNotExist(err) {
			return 0, fmt.Errorf("rotate log: %w", err)
		}
		if err := l.open(); err != nil {
			return 0, err
		}
	}
	w, err := l.f.Write(p)
	l.size += int64(w)
	if err != nil {
		return w, err
	}
	return n, nil
}

// Close closes the file.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
