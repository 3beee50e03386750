package vault

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/wire"
)

// index is the metadata (never a secret) of the records in a collection that is locked at
// rest. gnome-keyring cannot be trusted to list a locked collection: once it reloads the
// keyring file, item attributes are encrypted and searches find nothing. The index is
// written by Add, Remove and Create, and rebuilt from the collection whenever it is unlocked,
// so drift (an item removed in Seahorse, an entry planted by another program) heals at the
// next approved unlock. An entry with no item behind it can only make a release fail after
// the prompt; it can never release anything.
type index struct {
	path string
	mu   sync.Mutex
}

// indexMax bounds the file.
const indexMax = 1 << 20

type indexFile struct {
	Version     int      `json:"version"`
	Credentials []Record `json:"credentials"`
}

// load reads the index; a missing file is empty.
func (x *index) load() ([]Record, error) {
	// Non-blocking and no symlinks: a FIFO or a link planted at the path must not hang or
	// redirect us (the index is read inside the unlock window).
	f, err := os.OpenFile(x.path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read credentials index: %w: %w", ErrUnavailable, err)
	}
	defer f.Close()
	if err := regularOwned(f); err != nil {
		return nil, fmt.Errorf("read credentials index: %w: %s: %w", ErrUnavailable, x.path, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, indexMax+1))
	if err != nil {
		return nil, fmt.Errorf("read credentials index: %w: %w", ErrUnavailable, err)
	}
	var file indexFile
	if len(b) > indexMax || wire.DecodeStrict(b, &file) != nil || file.Version != 1 {
		return nil, fmt.Errorf("read credentials index: %w: %s is not a valid index (run 'headless credentials init' to rebuild it)", ErrUnavailable, x.path)
	}
	out := file.Credentials[:0]
	for _, r := range file.Credentials {
		if validOrigin(r.Origin) == nil && credential.ValidAlias(r.Alias) == nil && credential.ValidAccount(r.Account) == nil {
			out = append(out, r)
		}
	}
	sortRecords(out)
	if len(out) > MaxList {
		out = out[:MaxList]
	}
	return out, nil
}

// store replaces the index atomically (temp file, fsync, rename, fsync of the directory).
func (x *index) store(recs []Record) error {
	sortRecords(recs)
	b, err := json.Marshal(indexFile{Version: 1, Credentials: append([]Record{}, recs...)})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(x.path), 0o700); err != nil {
		return fmt.Errorf("write credentials index: %w", err)
	}
	if err := atomicfile.Write(x.path, append(b, '\n')); err != nil {
		return fmt.Errorf("write credentials index: %w", err)
	}
	return nil
}

// update applies fn to the index under its lock; an unchanged index is not rewritten.
func (x *index) update(fn func([]Record) []Record) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	recs, err := x.load()
	if err != nil {
		recs = nil // a corrupt index is replaced; the next unlock rebuilds it in full
	}
	old := slices.Clone(recs)
	next := fn(recs)
	sortRecords(next)
	if err == nil && slices.EqualFunc(old, next, sameRecord) {
		if _, serr := os.Lstat(x.path); serr == nil {
			return nil
		}
	}
	return x.store(next)
}

// list returns the entries of origin ("" for all).
func (x *index) list(origin string) ([]Record, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	recs, err := x.load()
	if err != nil || origin == "" {
		return recs, err
	}
	out := recs[:0]
	for _, r := range recs {
		if r.Origin == origin {
			out = append(out, r)
		}
	}
	return out, nil
}

// without returns recs minus the entry origin/alias.
func without(recs []Record, origin, alias string) []Record {
	out := recs[:0]
	for _, r := range recs {
		if !(r.Origin == origin && strings.EqualFold(r.Alias, alias)) {
			out = append(out, r)
		}
	}
	return out
}

// regularOwned checks that f is a regular file owned by this user.
func regularOwned(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("owned by uid %d, not %d", st.Uid, os.Getuid())
	}
	return nil
}

func sameRecord(a, b Record) bool {
	return a.Origin == b.Origin && a.Account == b.Account && a.Alias == b.Alias && a.Created.Equal(b.Created)
}
