package auditwriter

// Anchors. What the MAC of each record cannot show — records cut from the log's end, a file
// replaced by an older copy of itself, the oldest generation removed, the whole log deleted —
// brokerd's anchor of the log shows: the seq and hash of the newest record it wrote and the seq
// of the oldest it keeps ([audit.Anchor]), kept in brokerd's per-user state directory
// (hardening.StateDir/UID/audit), which no program of the user can reach (only brokerd's group
// may search hardening.StateDir). One file per log, named by the hash of the log's path, holds
// two slots of 4 KiB; an update writes the slot the last one did not, with a checksum, and
// fdatasyncs it, so a crash in the middle of one leaves the other whole (the record it misses
// is the newest, which its MAC still authenticates, and whose decision brokerd had not acted
// on). A file is made whole (both slots) by an atomic write. At most maxAnchors logs per user
// are anchored; past that, anchors of logs whose directory is gone are dropped, and a new log
// is refused (AUDIT_UNAVAILABLE) while none is.

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/lockfile"
	"github.com/headless-dev/headless/internal/wire"
)

const (
	anchorSub    = "audit"        // root/UID/audit
	anchorSlot   = 32 << 10       // bytes per slot (the anchor and its recent records); two per file
	anchorPrefix = "log-"         // then 32 hex digits of the path's SHA-256
	anchorSuffix = ".anchor"      //
	anchorsLock  = "anchors.lock" // taken to make or prune a file
	maxAnchors   = 1024
	maxPath      = 3 << 10 // a log path longer than this is not anchored (nor the log opened)
	anchorFormat = 1
)

var (
	// errAnchorUnusable: brokerd's own anchor file is not as it writes it (only root, or a
	// failing disk, could make it so): nothing is written on it.
	errAnchorUnusable = wire.SentinelHint(wire.CodeAuditUnavail, "brokerd's anchor of the audit log is unusable",
		"it is brokerd's own file in /var/lib/headless/UID/audit, which no program of yours can write: as root, move it away (the next verify then reports the log as unanchored) and restart brokerd")
	// errAnchorsFull: no room for another log's anchor.
	errAnchorsFull = wire.SentinelHint(wire.CodeAuditUnavail, "brokerd anchors no more audit logs of yours",
		"brokerd keeps the anchors of at most 1024 audit logs per user (one per data dir): remove data dirs ($XDG_DATA_HOME/headless) you no longer use; their anchors go when their directory is gone")
)

// Anchors keeps the anchors of one user's logs in dir (root/UID/audit).
type Anchors struct {
	dir string
	uid int
}

// OpenAnchors opens the anchors of uid under root (hardening.StateDir, which the caller has
// checked; a test's directory in tests): root/UID and root/UID/audit, made mode 0700 when
// missing. Either one a symlink, not a directory, not owned by uid or open to its group or
// others is refused.
func OpenAnchors(root string, uid int) (*Anchors, error) {
	user := filepath.Join(root, strconv.Itoa(uid))
	a := &Anchors{dir: filepath.Join(user, anchorSub), uid: uid}
	for _, d := range []string{user, a.dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: make %s: %w", errAnchorUnusable, d, err)
		}
		if err := checkOwnDir(d, uid); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// ReadAnchors opens the anchors of uid under root to read them only: nothing is made, and a
// missing directory holds no anchor.
func ReadAnchors(root string, uid int) (*Anchors, error) {
	user := filepath.Join(root, strconv.Itoa(uid))
	a := &Anchors{dir: filepath.Join(user, anchorSub), uid: uid}
	for _, d := range []string{user, a.dir} {
		if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) {
			return a, nil
		}
		if err := checkOwnDir(d, uid); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// checkOwnDir refuses a directory that is not uid's alone.
func checkOwnDir(dir string, uid int) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return fmt.Errorf("%w: %s: %w", errAnchorUnusable, dir, err)
	}
	switch mode := uint32(st.Mode); {
	case mode&syscall.S_IFMT != syscall.S_IFDIR:
		return fmt.Errorf("%w: %s is not a directory (a symlink or another file)", errAnchorUnusable, dir)
	case int(st.Uid) != uid:
		return fmt.Errorf("%w: %s is owned by uid %d, not %d", errAnchorUnusable, dir, st.Uid, uid)
	case mode&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %04o, not 0700", errAnchorUnusable, dir, mode&0o7777)
	}
	return nil
}

// FilesOf names the files brokerd keeps under root for uid of the log at path: its anchor and
// its decisions. For the end-to-end suite, which removes its own worlds' at their end: a
// machine that runs it again and again would otherwise fill the maxAnchors of its user with
// the anchors of worlds long gone, kept on purpose (see evict), and then have the anchors of
// the logs in use evicted.
func FilesOf(root string, uid int, path string) []string {
	a := &Anchors{dir: filepath.Join(root, strconv.Itoa(uid), anchorSub), uid: uid}
	return []string{a.fileOf(path), a.decidedOf(path)}
}

// fileOf is the anchor file of the log at path.
func (a *Anchors) fileOf(path string) string {
	h := sha256.Sum256([]byte(path))
	return filepath.Join(a.dir, anchorPrefix+hex.EncodeToString(h[:16])+anchorSuffix)
}

// Get returns the anchor of the log at path; nil when there is none.
func (a *Anchors) Get(path string) (*audit.Anchor, error) {
	f, err := openAnchor(a.fileOf(path), a.uid, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := readSlots(f, path)
	if err != nil {
		return nil, err
	}
	return &s.Anchor, nil
}

// List returns every anchor (at most maxAnchors, in no order), skipping none: an unusable
// file is an error.
func (a *Anchors) List() ([]audit.Anchor, error) {
	names, err := a.names()
	if err != nil {
		return nil, err
	}
	var out []audit.Anchor
	for _, n := range names {
		f, err := openAnchor(filepath.Join(a.dir, n), a.uid, os.O_RDONLY)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		s, err := readSlots(f, "")
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, s.Anchor)
	}
	return out, nil
}

// names lists the anchor files (at most maxAnchors+1: more is refused by whoever makes one).
func (a *Anchors) names() ([]string, error) {
	d, err := os.Open(a.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errAnchorUnusable, err)
	}
	defer d.Close()
	var out []string
	for {
		des, err := d.ReadDir(256)
		for _, de := range des {
			if strings.HasPrefix(de.Name(), anchorPrefix) && strings.HasSuffix(de.Name(), anchorSuffix) {
				out = append(out, de.Name())
			}
		}
		if err == io.EOF || len(des) == 0 || len(out) > maxAnchors {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errAnchorUnusable, err)
		}
	}
}

// anchorFile is one log's anchor, open for updates.
type anchorFile struct {
	f    *os.File
	path string // the log
	n    uint64 // the slot counter of the newest slot
}

// openFile opens the anchor of the log at path for updates; nil when it has none.
func (a *Anchors) openFile(path string) (*anchorFile, error) {
	f, err := openAnchor(a.fileOf(path), a.uid, os.O_RDWR)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	af := &anchorFile{f: f, path: path}
	if _, err := af.load(); err != nil {
		f.Close()
		return nil, err
	}
	return af, nil
}

// create makes the anchor of the log at path, holding an, and opens it for updates.
func (a *Anchors) create(path string, an audit.Anchor) (*anchorFile, error) {
	if len(path) > maxPath {
		return nil, fmt.Errorf("%w: the log's path is longer than %d bytes", errAnchorUnusable, maxPath)
	}
	if err := a.make(a.fileOf(path), path, an); err != nil {
		return nil, err
	}
	af, err := a.openFile(path)
	if err == nil && af == nil {
		err = fmt.Errorf("%w: the anchor just made is gone", errAnchorUnusable)
	}
	return af, err
}

// make writes a new anchor file for the log at path, whole (slot 1 holds first, slot 2 is
// empty), after dropping the anchors of logs whose directory is gone when there are too many.
func (a *Anchors) make(name, path string, first audit.Anchor) error {
	unlock, err := lockfile.Wait(filepath.Join(a.dir, anchorsLock), lockWait)
	if err != nil {
		return fmt.Errorf("%w: %w", errAnchorUnusable, err)
	}
	defer unlock()
	names, err := a.names()
	if err != nil {
		return err
	}
	if len(names) >= maxAnchors {
		names = a.prune(names)
	}
	if len(names) >= maxAnchors {
		names = a.evict(names)
	}
	if len(names) >= maxAnchors {
		return errAnchorsFull
	}
	first.Path = path
	b, err := encodeSlot(slot{Format: anchorFormat, N: 1, Anchor: first})
	if err != nil {
		return err
	}
	if err := atomicfile.Write(name, append(b, make([]byte, 2*anchorSlot-len(b))...)); err != nil {
		return fmt.Errorf("audit: make the log's anchor: %w", err)
	}
	return nil
}

// prune removes the anchors of logs whose directory no longer exists and that keep no
// decision of the person's, and returns the names left.
func (a *Anchors) prune(names []string) []string {
	var left []string
	for _, n := range names {
		p := filepath.Join(a.dir, n)
		f, err := openAnchor(p, a.uid, os.O_RDONLY)
		if err != nil {
			left = append(left, n)
			continue
		}
		s, err := readSlots(f, "")
		f.Close()
		// The anchor of a log that keeps a decision of the person's stays, its directory gone
		// or not: an agent that deleted the log it released through, then made new logs,
		// would otherwise take the decision out of every other log's check (Elsewhere).
		if err == nil && !a.holdsDecided(n) {
			if _, err := os.Lstat(filepath.Dir(s.Anchor.Path)); errors.Is(err, fs.ErrNotExist) {
				os.Remove(filepath.Join(a.dir, strings.TrimSuffix(n, anchorSuffix)+decidedSuffix))
				if os.Remove(p) == nil {
					continue
				}
			}
		}
		left = append(left, n)
	}
	return left
}

// evict makes room for one more anchor when prune could not: first the oldest anchor of a log
// that keeps no decision of the person's (any process of the user can make such logs, by
// starting brokerd with other directories: they must not crowd out what the person decided;
// that log, if it is still used, then verifies as unanchored, which says so), else the oldest
// of a log whose directory is gone (only the person's own decisions, in 1024 logs, can bring
// that about). The anchors of logs still there that keep decisions are never evicted: then
// nothing is, and the caller refuses a new log.
func (a *Anchors) evict(names []string) []string {
	type cand struct {
		name string
		mod  time.Time
	}
	var bare, gone []cand
	for _, n := range names {
		p := filepath.Join(a.dir, n)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		c := cand{n, fi.ModTime()}
		if !a.holdsDecided(n) {
			bare = append(bare, c)
			continue
		}
		f, err := openAnchor(p, a.uid, os.O_RDONLY)
		if err != nil {
			continue
		}
		s, err := readSlots(f, "")
		f.Close()
		if err == nil {
			if _, err := os.Lstat(filepath.Dir(s.Anchor.Path)); errors.Is(err, fs.ErrNotExist) {
				gone = append(gone, c)
			}
		}
	}
	for _, cs := range [][]cand{bare, gone} {
		if len(cs) == 0 {
			continue
		}
		oldest := slices.MinFunc(cs, func(x, y cand) int { return x.mod.Compare(y.mod) })
		os.Remove(filepath.Join(a.dir, strings.TrimSuffix(oldest.name, anchorSuffix)+decidedSuffix))
		if os.Remove(filepath.Join(a.dir, oldest.name)) == nil {
			return slices.DeleteFunc(names, func(n string) bool { return n == oldest.name })
		}
	}
	return names
}

// store writes an as the file's next slot and makes it durable.
func (af *anchorFile) store(an audit.Anchor) error {
	an.Path = af.path
	return af.storeSlot(slot{Format: anchorFormat, Anchor: an})
}

// storeSlot writes s as the file's next slot and makes it durable.
func (af *anchorFile) storeSlot(s slot) error {
	s.N = af.n + 1
	b, err := encodeSlot(s)
	if err != nil {
		return err
	}
	if _, err := af.f.WriteAt(b, int64((af.n+1)%2)*anchorSlot); err != nil {
		return fmt.Errorf("audit: update the log's anchor: %w", err)
	}
	if err := datasync(af.f); err != nil {
		return fmt.Errorf("audit: update the log's anchor: %w", err)
	}
	af.n++
	return nil
}

// load reads the newest whole slot.
func (af *anchorFile) load() (audit.Anchor, error) {
	s, err := readSlots(af.f, af.path)
	if err != nil {
		return audit.Anchor{}, err
	}
	af.n = s.N
	return s.Anchor, nil
}

func (af *anchorFile) close() { af.f.Close() }

// slot is one slot of an anchor file: the anchor, the slot counter, and the SHA-256 of the
// slot's JSON without Sum.
type slot struct {
	Format int          `json:"format"`
	N      uint64       `json:"n"`
	Anchor audit.Anchor `json:"anchor"`
	Sum    string       `json:"sum,omitempty"`
}

func encodeSlot(s slot) ([]byte, error) {
	s.Sum = ""
	body, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(body)
	s.Sum = hex.EncodeToString(h[:])
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if len(b)+1 > anchorSlot && len(s.Anchor.Recent) > 0 {
		// The copies of recent records make room for the anchor itself (the oldest first).
		s.Anchor.Recent = s.Anchor.Recent[1:]
		return encodeSlot(s)
	}
	if len(b)+1 > anchorSlot {
		return nil, fmt.Errorf("%w: the anchor does not fit its slot", errAnchorUnusable)
	}
	return append(b, '\n'), nil
}

// decodeSlot reads one slot: nil when it is not whole (torn, empty, or its sum wrong).
func decodeSlot(b []byte) *slot {
	i := bytes.IndexByte(b, '\n')
	if i <= 0 {
		return nil
	}
	var s slot
	if wire.DecodeStrict(b[:i], &s) != nil || s.Format != anchorFormat || s.N == 0 {
		return nil
	}
	sum := s.Sum
	s.Sum = ""
	body, err := json.Marshal(s)
	h := sha256.Sum256(body)
	if err != nil || sum != hex.EncodeToString(h[:]) {
		return nil
	}
	return &s
}

// readSlots returns the newest whole slot of f, which must be the anchor of path (any path
// when path is ""), with a valid anchor.
func readSlots(f *os.File, path string) (slot, error) {
	return readSlot(f, func(s *slot) error {
		switch {
		case path != "" && s.Anchor.Path != path:
			return fmt.Errorf("%w: %s is the anchor of another log", errAnchorUnusable, filepath.Base(f.Name()))
		case !validAnchor(s.Anchor):
			return fmt.Errorf("%w: %s holds an invalid anchor", errAnchorUnusable, filepath.Base(f.Name()))
		}
		return nil
	})
}

// readSlot returns the newest whole slot of f, which check accepts.
func readSlot(f *os.File, check func(*slot) error) (slot, error) {
	b := make([]byte, 2*anchorSlot)
	n, err := f.ReadAt(b, 0)
	if err != nil && err != io.EOF {
		return slot{}, fmt.Errorf("%w: %w", errAnchorUnusable, err)
	}
	var best *slot
	for i := 0; i < 2; i++ {
		if (i+1)*anchorSlot > n {
			break
		}
		if s := decodeSlot(b[i*anchorSlot : (i+1)*anchorSlot]); s != nil && (best == nil || s.N > best.N) {
			best = s
		}
	}
	if best == nil {
		return slot{}, fmt.Errorf("%w: %s holds no whole slot", errAnchorUnusable, filepath.Base(f.Name()))
	}
	if err := check(best); err != nil {
		return slot{}, err
	}
	return *best, nil
}

func validAnchor(a audit.Anchor) bool {
	_, herr := hex.DecodeString(a.Hash)
	return a.First >= 1 && filepath.IsAbs(a.Path) && (a.Seq == 0 && a.Hash == "" || a.Seq > 0 && len(a.Hash) == 64 && herr == nil) &&
		(a.Finding == nil || a.Finding.Seq >= 1 && a.Finding.Kind != "")
}

// openAnchor opens an anchor file: a regular file of uid, 0600, 8 KiB, never through a
// symlink.
func openAnchor(name string, uid, flag int) (*os.File, error) {
	f, err := os.OpenFile(name, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errAnchorUnusable, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %w", errAnchorUnusable, err)
	}
	if uint32(st.Mode)&syscall.S_IFMT != syscall.S_IFREG || int(st.Uid) != uid || uint32(st.Mode)&0o077 != 0 || st.Size != 2*anchorSlot {
		f.Close()
		return nil, fmt.Errorf("%w: %s is not a regular file of uid %d, 0600, %d bytes", errAnchorUnusable, filepath.Base(name), uid, 2*anchorSlot)
	}
	return f, nil
}

// For returns the anchors of the log at path — of the log in its directory's real path, and of
// path itself when that differs and has one — and the real path.
func (a *Anchors) For(path string) ([]audit.Anchor, string, error) {
	real := path
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		real = filepath.Join(dir, filepath.Base(path))
	}
	paths := []string{real}
	if path != real {
		paths = append(paths, path)
	}
	var out []audit.Anchor
	for _, p := range paths {
		an, err := a.Get(p)
		if err != nil {
			return nil, real, err
		}
		if an != nil {
			out = append(out, *an)
		}
	}
	return out, real, nil
}

// Check checks the log at path with the user's audit key against its anchors in a (see
// [audit.Check]); the report names path as given.
func Check(path string, key []byte, a *Anchors) (audit.Report, error) {
	anchors, real, err := a.For(path)
	if err != nil {
		return audit.Report{Path: path}, err
	}
	rep, err := audit.Check(real, key, anchors)
	rep.Path = path
	rep.Decided = []audit.Record{}
	// The person's decisions the log no longer holds: before its oldest record (rotated out),
	// or all of them when it holds none.
	paths := []string{real}
	if path != real {
		paths = append(paths, path)
	}
	for _, p := range paths {
		kept, derr := a.Decided(p)
		if derr != nil && err == nil {
			err = derr
		}
		for _, r := range kept {
			if (rep.Records == 0 || r.Seq < rep.First) && !slices.ContainsFunc(rep.Decided, func(d audit.Record) bool { return d.Seq == r.Seq }) {
				rep.Decided = append(rep.Decided, r)
			}
		}
	}
	slices.SortFunc(rep.Decided, func(x, y audit.Record) int { return cmp.Compare(x.Seq, y.Seq) })
	if els, logs, omitted, perr := a.elsewhere(real, path); perr == nil {
		rep.Elsewhere, rep.ElsewhereLogs, rep.ElsewhereOmitted = els, logs, omitted
	} else if err == nil {
		err = perr
	}
	return rep, err
}
