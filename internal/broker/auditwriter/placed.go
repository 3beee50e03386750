package auditwriter

// Where the user's important records went. A brokerd an agent starts with another data dir
// ($XDG_DATA_HOME) keeps its own audit log there, which the person's 'audit verify' does not
// read: a release through it would be recorded where nobody looks. So every important record
// ([audit.Important]: a release allowed, an add, a finding …), whatever log it is written to, is
// also placed, with that log's path, in one file of the user's anchors' directory (placed: the
// newest MaxPlaced, two slots written in turn like an anchor's, under the anchors' lock), and
// the check of any log names those in other logs ([audit.Report.Elsewhere]).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/lockfile"
)

const (
	placedName = "placed" // in the anchors' directory
	// MaxPlaced bounds the records placed (the newest).
	MaxPlaced = 16
)

// Place records that r, an important record just written, is in the log at path.
func (a *Anchors) Place(path string, r audit.Record) error {
	unlock, err := lockfile.Wait(filepath.Join(a.dir, anchorsLock), lockWait)
	if err != nil {
		return fmt.Errorf("%w: %w", errAnchorUnusable, err)
	}
	defer unlock()
	name := filepath.Join(a.dir, placedName)
	f, err := openAnchor(name, a.uid, os.O_RDWR)
	if errors.Is(err, fs.ErrNotExist) {
		if err := makePlaced(name); err != nil {
			return err
		}
		f, err = openAnchor(name, a.uid, os.O_RDWR)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := readSlot(f, func(*slot) error { return nil })
	if err != nil {
		return err
	}
	list := append(s.Placed, audit.Placed{Log: path, Record: r})
	af := &anchorFile{f: f, n: s.N}
	return af.storeSlot(slot{Format: anchorFormat, Placed: list[max(len(list)-MaxPlaced, 0):]})
}

// Placed returns the records placed (none before the first).
func (a *Anchors) Placed() ([]audit.Placed, error) {
	f, err := openAnchor(filepath.Join(a.dir, placedName), a.uid, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := readSlot(f, func(*slot) error { return nil })
	return s.Placed, err
}

// elsewhere returns the records placed in other logs than the one at paths, whose MAC verifies
// under key, oldest first.
func (a *Anchors) elsewhere(key []byte, paths ...string) ([]audit.Placed, error) {
	placed, err := a.Placed()
	if err != nil {
		return nil, err
	}
	out := []audit.Placed{}
	for _, p := range placed {
		mine := false
		for _, q := range paths {
			mine = mine || p.Log == q
		}
		if !mine && audit.VerifyMAC(key, p.Record) {
			out = append(out, p)
		}
	}
	return out, nil
}

// makePlaced writes an empty placed file, whole.
func makePlaced(name string) error {
	b, err := encodeSlot(slot{Format: anchorFormat, N: 1})
	if err != nil {
		return err
	}
	if err := atomicfile.Write(name, append(b, make([]byte, 2*anchorSlot-len(b))...)); err != nil {
		return fmt.Errorf("audit: make the placed records: %w", err)
	}
	return nil
}
