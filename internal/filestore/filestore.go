// Package filestore is the store of the files a person chose for uploads: a private directory
// of the runtime dir ($XDG_RUNTIME_DIR/headless/artifacts/files, 0700, files 0600), whose
// files an agent names by a basename, never by a path. 'headless files add PATH' (the
// person's command) copies a file in; the browser host attaches one to a page's file input
// ('headless upload REF NAME').
//
// # Security contract
//
//   - A name is a basename ([ValidName]): no separator, no control or format character, not "."
//     or "..", no leading dot (the store's own temporary files), at most [MaxName] bytes.
//   - The store is reached from the runtime dir one component at a time without following a
//     link, and must be a directory of the user's, mode 0700 ([Store.dir]); a file in it is
//     opened without following a link and read only when it is a regular file of at most
//     [MaxFileSize] bytes ([Store.Open]). A name never reaches a file outside the store, and a
//     link planted in it is refused (FILE_CHANGED).
//   - [Store.Stage] copies the bytes the person's command read into a temporary file of the
//     store, hashing what it wrote; [Staged.Commit] hashes that file again before renaming it
//     to its name, so the name holds the bytes whose SHA-256 the person approved, or nothing.
//
// # Not guaranteed
//
// The store is the user's: any process of the user can write it, so it can replace a file
// after a check (Chromium reads an attached file when the page sends it). Such a process reads
// and sends the user's files without headless. What keeps an agent without a shell (MCP, or a
// shell allowed only 'headless' commands) from sending any other file is that it names files,
// never paths, and that the host sends only a file whose SHA-256 brokerd recorded the person
// approving under that name (host/upload.go, internal/broker/gate/files.go).
package filestore

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/headless-dev/headless/internal/wire"
)

// Bounds of the store.
const (
	MaxName       = 128       // bytes of a file's name
	MaxFiles      = 32        // files a store holds (brokerd counts the approved ones)
	MaxFileSize   = 32 << 20  // bytes of one file
	MaxStoreBytes = 128 << 20 // bytes of every file of a store together
)

// stagePrefix starts the name of a file being added (never a valid name: a leading dot).
const stagePrefix = ".add-"

// staleStage is how old a leftover temporary file (a command killed mid-add) must be to be
// removed by the next add.
const staleStage = 10 * time.Minute

// ValidName reports whether name may name a file of the store.
func ValidName(name string) error {
	bad := func(why string) error {
		return wire.Errorf(wire.CodeInvalidArgument, "file name %q %s: a file of the store is named by a basename (no '/', not '.' or '..', no leading dot, no control characters, at most %d bytes), never by a path", clipName(name), why, MaxName)
	}
	switch {
	case name == "":
		return bad("is empty")
	case len(name) > MaxName:
		return bad("is too long")
	case !utf8.ValidString(name):
		return bad("is not UTF-8")
	case name == "." || name == "..":
		return bad("is a directory's")
	case strings.HasPrefix(name, "."):
		return bad("starts with a dot")
	case strings.ContainsAny(name, `/\`):
		return bad("holds a path separator")
	case strings.TrimSpace(name) != name:
		return bad("starts or ends with a space")
	}
	for _, r := range name {
		// Format characters too: a right-to-left override would make the prompt show
		// "report<U+202E>fdp.exe" as another name than the one stored.
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return bad("holds a control or format character")
		}
	}
	return nil
}

// clipName bounds a refused name for a message.
func clipName(name string) string {
	if len(name) > 64 {
		name = name[:64]
	}
	return strings.ToValidUTF8(name, "?")
}

// Store is the store of one runtime dir.
type Store struct {
	// Runtime is the runtime dir ($XDG_RUNTIME_DIR/headless), already checked (xdg).
	Runtime string
}

// Path is the store's directory.
func (s Store) Path() string { return filepath.Join(s.Runtime, "artifacts", "files") }

// dir opens the store's directory (making it when create), one component at a time from the
// runtime dir, following no link, and checks it is the user's alone.
func (s Store) dir(create bool) (*os.File, error) {
	fd, err := unix.Open(s.Runtime, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the runtime dir: %w", err)
	}
	for _, name := range []string{"artifacts", "files"} {
		if create {
			if err := unix.Mkdirat(fd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return nil, fmt.Errorf("make the file store: %w", err)
			}
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if errors.Is(err, unix.ENOENT) {
			return nil, errNoStore
		}
		if err != nil {
			return nil, wire.Errorf(wire.CodeFileChanged, "the file store %s is not a directory of yours (%v): nothing was read", s.Path(), err)
		}
		fd = next
	}
	f := os.NewFile(uintptr(fd), s.Path())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, err
	}
	if int(st.Uid) != os.Getuid() {
		f.Close()
		return nil, wire.Errorf(wire.CodeFileChanged, "the file store %s is owned by uid %d, not yours: nothing was read", s.Path(), st.Uid)
	}
	if st.Mode&0o077 != 0 {
		if err := unix.Fchmod(fd, 0o700); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// errNoStore: no file was ever added (the store's directory does not exist).
var errNoStore = wire.Sentinel(wire.CodeFileUnknown, "no file was added to the store")

// Opened is a file of the store as [Store.Open] read it.
type Opened struct {
	Path   string // its path, for the browser (never shown to an agent as something it may name)
	Size   int64
	SHA256 string // hex
}

// Open reads the file name of the store: a regular file (not a link), at most MaxFileSize
// bytes, hashed.
func (s Store) Open(name string) (Opened, error) {
	if err := ValidName(name); err != nil {
		return Opened{}, err
	}
	d, err := s.dir(false)
	if err != nil {
		return Opened{}, err
	}
	defer d.Close()
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return Opened{}, wire.Errorf(wire.CodeFileUnknown, "file %q is not in the store (%s)", name, s.Path())
	case errors.Is(err, unix.ELOOP):
		return Opened{}, wire.Errorf(wire.CodeFileChanged, "file %q of the store is a link, not the file the person added: nothing was read", name)
	case err != nil:
		return Opened{}, wire.Errorf(wire.CodeFileChanged, "file %q of the store cannot be read: %v", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Opened{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return Opened{}, wire.Errorf(wire.CodeFileChanged, "file %q of the store is not a regular file: nothing was read", name)
	}
	if st.Size > MaxFileSize {
		return Opened{}, wire.Errorf(wire.CodeFileChanged, "file %q of the store is over %d bytes: nothing was read", name, MaxFileSize)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return Opened{}, fmt.Errorf("read file %q of the store: %w", name, err)
	}
	if n > MaxFileSize {
		return Opened{}, wire.Errorf(wire.CodeFileChanged, "file %q of the store grew over %d bytes: nothing was sent", name, MaxFileSize)
	}
	return Opened{Path: filepath.Join(s.Path(), name), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Present reports the size of the regular file name of the store (no link followed), and
// false when there is none.
func (s Store) Present(name string) (int64, bool) {
	if ValidName(name) != nil {
		return 0, false
	}
	d, err := s.dir(false)
	if err != nil {
		return 0, false
	}
	defer d.Close()
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return 0, false
	}
	return st.Size, true
}

// Remove removes the file name from the store (a missing one is no error).
func (s Store) Remove(name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	d, err := s.dir(false)
	if errors.Is(err, errNoStore) {
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Unlinkat(int(d.Fd()), name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove file %q of the store: %w", name, err)
	}
	return unix.Fsync(int(d.Fd()))
}

// Staged is a file being added: its bytes in a temporary file of the store, hashed as they
// were written.
type Staged struct {
	Size   int64
	SHA256 string // hex

	d   *os.File
	f   *os.File
	tmp string
}

// Stage copies at most MaxFileSize bytes of src into a temporary file of the store (made
// 0700 when missing), hashing what it writes; more is FILE_TOO… INVALID_ARGUMENT and nothing
// is kept. The caller commits or discards it.
func (s Store) Stage(src io.Reader) (*Staged, error) {
	d, err := s.dir(true)
	if err != nil {
		return nil, err
	}
	s.dropStale(d)
	tmp := stagePrefix + rand.Text()
	fd, err := unix.Openat(int(d.Fd()), tmp, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("add to the file store: %w", err)
	}
	st := &Staged{d: d, f: os.NewFile(uintptr(fd), tmp), tmp: tmp}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(st.f, h), io.LimitReader(src, MaxFileSize+1))
	if err == nil && n > MaxFileSize {
		err = wire.Errorf(wire.CodeInvalidArgument, "the file is over %d bytes (%d MiB), the most the store takes", MaxFileSize, MaxFileSize>>20)
	}
	if err == nil {
		err = st.f.Sync()
	}
	if err != nil {
		st.Discard()
		return nil, err
	}
	st.Size, st.SHA256 = n, hex.EncodeToString(h.Sum(nil))
	return st, nil
}

// Commit hashes the temporary file again and, when it still holds the bytes staged, renames
// it to name (replacing a file of that name); otherwise FILE_CHANGED and nothing is kept.
func (st *Staged) Commit(name string) error {
	defer st.close()
	if err := ValidName(name); err != nil {
		st.unlink()
		return err
	}
	h := sha256.New()
	n, err := io.Copy(h, io.NewSectionReader(st.f, 0, MaxFileSize+1))
	if err != nil {
		st.unlink()
		return fmt.Errorf("read the staged file again: %w", err)
	}
	if n != st.Size || hex.EncodeToString(h.Sum(nil)) != st.SHA256 {
		st.unlink()
		return wire.Errorf(wire.CodeFileChanged, "the file's copy in the store changed while the person was asked: nothing was added")
	}
	if err := unix.Renameat(int(st.d.Fd()), st.tmp, int(st.d.Fd()), name); err != nil {
		st.unlink()
		return fmt.Errorf("add %q to the file store: %w", name, err)
	}
	return unix.Fsync(int(st.d.Fd()))
}

// Discard removes the temporary file.
func (st *Staged) Discard() {
	st.unlink()
	st.close()
}

func (st *Staged) unlink() { unix.Unlinkat(int(st.d.Fd()), st.tmp, 0) }

func (st *Staged) close() {
	st.f.Close()
	st.d.Close()
}

// dropStale removes temporary files of adds that did not finish (a command killed mid-add).
func (s Store) dropStale(d *os.File) {
	ents, err := os.ReadDir(s.Path())
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), stagePrefix) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(int(d.Fd()), e.Name(), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && time.Since(time.Unix(st.Mtim.Unix())) > staleStage {
			unix.Unlinkat(int(d.Fd()), e.Name(), 0)
		}
	}
}

// OpenSource opens a person's file for [Store.Stage]: a regular file (a link is followed: the
// person named it) of at most MaxFileSize bytes; a device, a pipe or a directory is refused.
func OpenSource(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, 0, wire.Errorf(wire.CodeInvalidArgument, "%v", err)
		}
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, wire.Errorf(wire.CodeInvalidArgument, "%s is not a regular file (a directory, a device or a pipe): only files can be added", path)
	}
	if fi.Size() > MaxFileSize {
		f.Close()
		return nil, 0, wire.Errorf(wire.CodeInvalidArgument, "%s is %d bytes, over the %d MiB the store takes", path, fi.Size(), MaxFileSize>>20)
	}
	return f, fi.Size(), nil
}
