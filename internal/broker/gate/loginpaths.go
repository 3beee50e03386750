package gate

// Known sign-in paths. A credential's form sign-in goes only where it signed in before. The
// person sets paths at enrolment (credentials.add "login_paths"), or the credential learns the
// path of its first form sign-in the host reports authenticated (credentials.learn_path, from
// the genuine host, for an allowed login release to that process, once, within 10 minutes:
// learn.go). A login release at another path is LOGIN_PATH_CHANGED before anyone is asked,
// unless the host sets "new_path": then the prompt's first line says so, and the path is
// learned when that sign-in succeeds. The vault's paths live in
// hardening.StateDir/UID/login-paths.json, which no process of the user can reach (a brokerd
// that cannot use it is BROKER_UNTRUSTED); an isolated session's live and die with its store.

import (
	"bytes"
	"cmp"
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
	"sync"
	"syscall"
	"time"

	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/lockfile"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

// A credential's known sign-in paths: the paths of its origin where its form sign-in may be.
// The person sets them at enrolment (credentials.add), or the credential learns the path of
// its first authenticated form sign-in (credentials.learn_path); a form sign-in anywhere else
// on the origin is LOGIN_PATH_CHANGED before anyone is asked, unless the host asks the person
// to allow the new path (gate.go).
//
// They are kept where no process of the user can write them: neither the credentials index
// (a file of the user's) nor the keyring's attributes (which any D-Bus client of the user may
// set) could hold them, for an agent would rewrite or replay them. The vault's are in
// login-paths.json of brokerd's per-user state directory (LoginPaths), an isolated session's
// in memory with its store (memPaths), wiped with it.
//
// A credential is named by its origin and alias (case-insensitively), the name brokerd's add
// and remove use: add replaces the entry (so a credential removed and added again starts
// fresh) and remove drops it. The record's account and creation time are not part of the
// name, because what lists them can change them without brokerd: the index a user program
// may edit, and its rebuild from the keyring at each unlock (which stamps another creation
// time). A name an agent could change would let it make brokerd forget a credential's paths.

// pathEntry is one credential's known sign-in paths. Set and Learned together hold at most
// brokerapi.MaxLoginPaths paths, distinct.
type pathEntry struct {
	Origin  string   `json:"origin"`
	Alias   string   `json:"alias"`
	Account string   `json:"account,omitempty"` // as when the entry was made; not part of its name
	Set     []string `json:"set,omitempty"`     // by the person, at enrolment
	Learned []string `json:"learned,omitempty"` // by authenticated sign-ins, oldest first
	// Also are the other origins the person named at enrolment that the sign-in may post the
	// password to (never one the agent named).
	Also []string `json:"also,omitempty"`
	// SignCount is, for a passkey, the highest sign count its authenticator reported (not
	// secret: every assertion shows it to the site).
	SignCount uint32 `json:"sign_count,omitempty"`
}

// known is every known path: the person's, else the one path the credential's first sign-in
// learned. A learned path beside the person's, or after the first, came from a sign-in the
// person allowed at a new path, which brokerd learned before red-team round 31 (the agent's
// look-alike, then trusted with no warning): kept in the file, never known.
func (e pathEntry) known() []string {
	if len(e.Set) > 0 {
		return slices.Clone(e.Set)
	}
	return slices.Clone(e.Learned[:min(1, len(e.Learned))])
}

func (e pathEntry) names(o, alias string) bool {
	return e.Origin == o && strings.EqualFold(e.Alias, alias)
}

// pathBook holds entries: LoginPaths (a file) or memPaths (memory). update runs fn on the
// entries under the book's lock and keeps what it returns, unless it returns errUnchanged.
type pathBook interface {
	// entries returns copies of the entries match accepts (nil: every one), the caller's to
	// change: a request copies only what it looks at (the whole book per credentials.list was
	// a sixth of brokerd's CPU under the broker load, with a book of 200 credentials).
	entries(match func(pathEntry) bool) ([]pathEntry, error)
	update(fn func([]pathEntry) ([]pathEntry, error)) error
}

var (
	_ pathBook = (*LoginPaths)(nil)
	_ pathBook = (*memPaths)(nil)
)

// errUnchanged: an update that changed nothing (nothing is written).
var errUnchanged = errors.New("unchanged")

// Bounds of a book.
const (
	maxPathsFile    = 1 << 20 // bytes of login-paths.json
	maxPathEntries  = vault.MaxList
	loginPathsName  = "login-paths.json"
	loginPathsLock  = "login-paths.lock" // taken around every change of the file
	pathsLockWait   = 10 * time.Second
	pathsFileFormat = 1
)

var (
	// errPathsUnusable: the file is brokerd's own, which nothing but brokerd (and root) can
	// write, and it is not as brokerd writes it: nothing is decided on it.
	errPathsUnusable = wire.SentinelHint(wire.CodeBrokerUntrusted, "brokerd's record of the credentials' sign-in paths is unusable",
		"it is brokerd's own file in "+hardening.StateDir+"/UID, which no program of yours can write: as root, move it away (every credential then learns its sign-in path again) and restart brokerd")
	// errPathsFull: the book has no room for another entry.
	errPathsFull = wire.SentinelHint(wire.CodeVaultFull, "no room for another credential's sign-in paths",
		"remove credentials you no longer use ('headless credentials remove'), or set fewer sign-in paths")
)

// LoginPaths keeps the vault's credentials' known sign-in paths in login-paths.json of one
// directory: brokerd's per-user state directory (OpenLoginPaths). The file is written
// atomically, 0600, at most 1 MiB, and read back only when it is a regular file of the user
// in a directory that is still theirs alone.
type LoginPaths struct {
	dir string
	uid int
	mu  sync.Mutex
	// The bytes last read and what they decoded to: bytes equal to these are not decoded and
	// checked again (a list read and decoded the file each time: a fifth of brokerd's time
	// under load).
	raw    []byte
	parsed []pathEntry
	// The file's identity when raw was read, and whether it had settled by then (fileKey):
	// while the file at the path still has it, raw is what it holds, and entries answers
	// without opening it. Reading it per request, under mu, held 64 connections' lists
	// behind one another's open, read and close (13% of their blocked time, 22% of
	// brokerd's CPU under the broker load).
	key     fileKey
	settled bool
	reads   int // files read and checked (tests count them)
}

// fileKey is what stat says of a file: which file it is, its size and when it last changed.
// A write in place changes its size, mtime or ctime; a replacement (atomicfile.Write, which
// any brokerd of the user uses, renames a new file over it) changes its inode. The kernel
// stamps mtime and ctime from a coarse clock (a tick, a few ms), so two writes within one
// tick may leave the same times: a key is trusted only once the file's times are older than
// settleAge when it was read (git's "racily clean" index entries, the same problem), since
// a write after that read would stamp a later time. An inode freed and reused by a later
// replacement has a ctime after the read, so it differs too.
type fileKey struct {
	dev, ino, size   uint64
	mtimeNs, ctimeNs int64
}

// settleAge is how much older than its read a file's times must be for its key to be
// trusted: many ticks of the coarse clock.
const settleAge = time.Second

func keyOf(st *syscall.Stat_t) fileKey {
	mtime, ctime := statTimes(st) // stat_linux.go, stat_darwin.go
	return fileKey{dev: uint64(st.Dev), ino: uint64(st.Ino), size: uint64(st.Size), mtimeNs: mtime, ctimeNs: ctime}
}

// OpenLoginPaths opens the known sign-in paths of uid under root (hardening.StateDir, which
// the caller has checked; a test's directory in tests): root/UID, made mode 0700 when it is
// missing. A root/UID that is a symlink, not a directory, not owned by uid or open to its
// group or others is refused, and so is a file there that is not as brokerd writes it.
func OpenLoginPaths(root string, uid int) (*LoginPaths, error) {
	dir := filepath.Join(root, strconv.Itoa(uid))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("make brokerd's state directory: %w", err)
	}
	lp := &LoginPaths{dir: dir, uid: uid}
	if _, err := lp.entries(nil); err != nil {
		return nil, err
	}
	return lp, nil
}

// Path is the file.
func (lp *LoginPaths) Path() string { return filepath.Join(lp.dir, loginPathsName) }

// checkDir refuses a state directory that is not the user's alone.
func (lp *LoginPaths) checkDir() error {
	var st syscall.Stat_t
	if err := syscall.Lstat(lp.dir, &st); err != nil {
		return fmt.Errorf("%w: %s: %w", errPathsUnusable, lp.dir, err)
	}
	mode := uint32(st.Mode)
	switch {
	case mode&syscall.S_IFMT != syscall.S_IFDIR:
		return fmt.Errorf("%w: %s is not a directory (a symlink or another file)", errPathsUnusable, lp.dir)
	case int(st.Uid) != lp.uid:
		return fmt.Errorf("%w: %s is owned by uid %d, not %d", errPathsUnusable, lp.dir, st.Uid, lp.uid)
	case mode&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %04o, not 0700", errPathsUnusable, lp.dir, mode&0o7777)
	}
	return nil
}

// entries returns copies of the entries match accepts (nil: every one). The directory and
// the file are checked on every call (as load does, with lstat: a symlink is not a regular
// file), outside the lock; the file is read again only when its key changed or had not
// settled.
func (lp *LoginPaths) entries(match func(pathEntry) bool) ([]pathEntry, error) {
	if err := lp.checkDir(); err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	err := syscall.Lstat(lp.Path(), &st)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // as load says of a missing file: no entries (no credential has a path yet)
	}
	if err == nil && lp.checkFile(&st) == nil {
		key := keyOf(&st)
		lp.mu.Lock()
		if lp.settled && lp.raw != nil && lp.key == key {
			es := cloneMatching(lp.parsed, match)
			lp.mu.Unlock()
			return es, nil
		}
		lp.mu.Unlock()
	}
	// Missing, refused or changed: load says which, under the lock.
	lp.mu.Lock()
	defer lp.mu.Unlock()
	es, err := lp.load()
	if err != nil || match == nil {
		return es, err
	}
	return slices.DeleteFunc(es, func(e pathEntry) bool { return !match(e) }), nil
}

// checkFile refuses a file that is not as brokerd writes it: a regular file of the user,
// mode 0600 (no group or other bits).
func (lp *LoginPaths) checkFile(st *syscall.Stat_t) error {
	return checkStateFile(lp.Path(), st, lp.uid, errPathsUnusable)
}

// checkStateFile refuses a file of brokerd's state directory that is not as brokerd writes it:
// a regular file of uid, mode 0600 (unusable wraps the error).
func checkStateFile(path string, st *syscall.Stat_t, uid int, unusable error) error {
	switch {
	case uint32(st.Mode)&syscall.S_IFMT != syscall.S_IFREG:
		return fmt.Errorf("%w: %s is not a regular file", unusable, path)
	case int(st.Uid) != uid || uint32(st.Mode)&0o077 != 0:
		return fmt.Errorf("%w: %s is uid %d, mode %04o, not uid %d, 0600", unusable, path, st.Uid, uint32(st.Mode)&0o7777, uid)
	}
	return nil
}

// readStateFile reads a file of brokerd's state directory, at most max bytes, without
// following a link and only when checkStateFile accepts it; a missing file is (nil, false).
// st is what fstat said of the file read.
func readStateFile(path string, uid, max int, unusable error) (b []byte, st syscall.Stat_t, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, st, false, nil
	}
	if err != nil {
		return nil, st, false, fmt.Errorf("%w: %s: %w", unusable, path, err)
	}
	defer f.Close()
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nil, st, false, fmt.Errorf("%w: %s: %w", unusable, path, err)
	}
	if err := checkStateFile(path, &st, uid, unusable); err != nil {
		return nil, st, false, err
	}
	b, err = io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, st, false, fmt.Errorf("%w: %s: %w", unusable, path, err)
	}
	if len(b) > max {
		return nil, st, false, fmt.Errorf("%w: %s is over %d bytes", unusable, path, max)
	}
	return b, st, true, nil
}

func (lp *LoginPaths) update(fn func([]pathEntry) ([]pathEntry, error)) error {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	// Another brokerd of the user (another runtime dir) may change the file too: its read,
	// change and write are one step under a lock a crash releases, or one would lose the
	// other's change.
	if err := lp.checkDir(); err != nil {
		return err
	}
	unlock, err := lockfile.Wait(filepath.Join(lp.dir, loginPathsLock), pathsLockWait)
	if err != nil {
		return fmt.Errorf("%w: %w", errPathsUnusable, err)
	}
	defer unlock()
	// A brokerd killed while it wrote the file left its temporary file: no write is under
	// way while the lock is held, so whatever is there is such a leftover. Best effort: a
	// leftover that stays is untidy, never a reason to refuse the change.
	atomicfile.RemoveLeftovers(lp.Path())
	es, err := lp.load()
	if err != nil {
		return err
	}
	es, changed, err := apply(es, fn)
	if err != nil || !changed {
		return err
	}
	b, err := json.Marshal(struct {
		Version     int         `json:"version"`
		Credentials []pathEntry `json:"credentials"`
	}{pathsFileFormat, es})
	if err != nil {
		return err
	}
	if len(b) > maxPathsFile {
		return fmt.Errorf("%w: the file would be over %d bytes", errPathsFull, maxPathsFile)
	}
	if err := atomicfile.Write(lp.Path(), b); err != nil {
		return fmt.Errorf("save the sign-in paths: %w", err)
	}
	return nil
}

// load reads the file (lp.mu held); a missing file has no entries.
func (lp *LoginPaths) load() ([]pathEntry, error) {
	if err := lp.checkDir(); err != nil {
		return nil, err
	}
	path := lp.Path()
	readAt := time.Now()
	b, st, ok, err := readStateFile(path, lp.uid, maxPathsFile, errPathsUnusable)
	if err != nil || !ok {
		return nil, err
	}
	lp.reads++
	key := keyOf(&st)
	settled := readAt.Sub(time.Unix(0, max(key.mtimeNs, key.ctimeNs))) >= settleAge
	if lp.raw != nil && bytes.Equal(b, lp.raw) {
		lp.key, lp.settled = key, settled
		return cloneMatching(lp.parsed, nil), nil
	}
	lp.raw, lp.parsed, lp.settled = nil, nil, false
	var file struct {
		Version     int         `json:"version"`
		Credentials []pathEntry `json:"credentials"`
	}
	if err := wire.DecodeStrict(bytes.TrimSpace(b), &file); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errPathsUnusable, path, err)
	}
	if file.Version != pathsFileFormat {
		return nil, fmt.Errorf("%w: %s has version %d, not %d", errPathsUnusable, path, file.Version, pathsFileFormat)
	}
	if err := validEntries(file.Credentials); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errPathsUnusable, path, err)
	}
	lp.raw, lp.parsed, lp.key, lp.settled = b, cloneMatching(file.Credentials, nil), key, settled
	return file.Credentials, nil
}

// cloneMatching copies the entries of es that match accepts (nil: every one) and their
// paths: what load and entries return is their caller's to change.
func cloneMatching(es []pathEntry, match func(pathEntry) bool) []pathEntry {
	var out []pathEntry
	for _, e := range es {
		if match == nil || match(e) {
			e.Set, e.Learned, e.Also = slices.Clone(e.Set), slices.Clone(e.Learned), slices.Clone(e.Also)
			out = append(out, e)
		}
	}
	return out
}

// memPaths is an isolated session's book: memory, wiped with its store.
type memPaths struct {
	mu sync.Mutex
	es []pathEntry
}

func (m *memPaths) entries(match func(pathEntry) bool) ([]pathEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return cloneMatching(m.es, match), nil
}

func (m *memPaths) update(fn func([]pathEntry) ([]pathEntry, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	es, changed, err := apply(slices.Clone(m.es), fn)
	if changed {
		m.es = es
	}
	return err
}

func (m *memPaths) wipe() {
	m.mu.Lock()
	m.es = nil
	m.mu.Unlock()
}

// apply runs a book's update: the entries fn returns, sorted and within the bound, and
// whether there is anything to keep.
func apply(es []pathEntry, fn func([]pathEntry) ([]pathEntry, error)) ([]pathEntry, bool, error) {
	es, err := fn(es)
	switch {
	case errors.Is(err, errUnchanged):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	case len(es) > maxPathEntries:
		return nil, false, fmt.Errorf("%w: at most %d credentials have sign-in paths", errPathsFull, maxPathEntries)
	}
	slices.SortFunc(es, func(a, b pathEntry) int {
		return cmp.Or(cmp.Compare(a.Origin, b.Origin), cmp.Compare(strings.ToLower(a.Alias), strings.ToLower(b.Alias)))
	})
	return es, true, nil
}

// validEntries checks what is read back: each entry names a credential, once, and holds valid
// paths within the bounds.
func validEntries(es []pathEntry) error {
	if len(es) > maxPathEntries {
		return fmt.Errorf("%d entries, at most %d", len(es), maxPathEntries)
	}
	for i, e := range es {
		if o, err := origin.Canonical(e.Origin); err != nil || o != e.Origin {
			return fmt.Errorf("entry %d: origin %q is not canonical", i, procstat.Clean(e.Origin, 64))
		}
		if credential.ValidAlias(e.Alias) != nil || e.Account != "" && credential.ValidAccount(e.Account) != nil {
			return fmt.Errorf("entry %d: alias or account out of bounds", i)
		}
		known := e.known()
		if len(known) == 0 && e.SignCount == 0 && len(e.Also) == 0 || len(known) > brokerapi.MaxLoginPaths {
			return fmt.Errorf("entry %d: %d paths, 1 to %d (none: a passkey's sign count or other origins alone)", i, len(known), brokerapi.MaxLoginPaths)
		}
		if also, err := cleanAlso(e.Also, e.Origin); err != nil || len(also) != len(e.Also) {
			return fmt.Errorf("entry %d: other origins invalid or repeated", i)
		}
		for j, p := range known {
			if err := checkLoginPath(p); err != nil || slices.Contains(known[:j], p) {
				return fmt.Errorf("entry %d: path %q is invalid or repeated", i, procstat.Clean(p, 64))
			}
		}
		if slices.ContainsFunc(es[:i], func(d pathEntry) bool { return d.names(e.Origin, e.Alias) }) {
			return fmt.Errorf("entry %d: alias %q at %s is listed twice", i, e.Alias, e.Origin)
		}
	}
	return nil
}

// checkLoginPath says why p is not a sign-in path: one the host reports for a page (its URL's
// escaped path), absolute, without query or fragment, printable, at most MaxPath bytes.
func checkLoginPath(p string) error {
	switch {
	case len(p) > brokerapi.MaxPath:
		return fmt.Errorf("longer than %d bytes", brokerapi.MaxPath)
	case !strings.HasPrefix(p, "/"):
		return errors.New("not an absolute path (it starts with \"/\")")
	case strings.ContainsAny(p, "?#"):
		return errors.New("a path has no query or fragment")
	case strings.Contains(p, " ") || !procstat.Printable(p):
		return errors.New("not printable, or holds a space (write it as the URL does: %20)")
	}
	return nil
}

// cleanLoginPaths checks the paths the person set at enrolment and drops repeats.
func cleanLoginPaths(paths []string) ([]string, error) {
	if len(paths) > brokerapi.MaxLoginPaths {
		return nil, wire.Errorf(wire.CodeInvalidArgument, "%d sign-in paths; at most %d", len(paths), brokerapi.MaxLoginPaths)
	}
	var out []string
	for _, p := range paths {
		if err := checkLoginPath(p); err != nil {
			return nil, wire.Errorf(wire.CodeInvalidArgument, "sign-in path %q: %v", procstat.Clean(p, 128), err)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// cleanAlso checks the other origins the person named at enrolment for a credential of origin
// o (canonical, not o, at most brokerapi.MaxAlsoOrigins) and drops repeats.
func cleanAlso(also []string, o string) ([]string, error) {
	if len(also) > brokerapi.MaxAlsoOrigins {
		return nil, wire.Errorf(wire.CodeInvalidArgument, "%d other origins; at most %d", len(also), brokerapi.MaxAlsoOrigins)
	}
	var out []string
	for _, a := range also {
		c, err := origin.Canonical(a)
		if err != nil {
			return nil, err
		}
		if c != a || c == o {
			return nil, wire.Errorf(wire.CodeInvalidArgument, "other origin %q is not canonical, or is the credential's own", procstat.Clean(a, 128))
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// knownPaths is the credential's known sign-in paths (none: not known yet) and the other
// origins its sign-in may post to.
func knownPaths(b pathBook, o, alias string) (paths, also []string, err error) {
	es, err := b.entries(func(e pathEntry) bool { return e.names(o, alias) })
	if err != nil || len(es) == 0 {
		return nil, nil, err
	}
	return es[0].known(), es[0].Also, nil
}

// setPaths makes e the credential's entry (none when e has no path): what an add does.
func setPaths(b pathBook, e pathEntry) error {
	return b.update(func(es []pathEntry) ([]pathEntry, error) {
		es = slices.DeleteFunc(es, func(d pathEntry) bool { return d.names(e.Origin, e.Alias) })
		if len(e.Set) > 0 || len(e.Also) > 0 {
			es = append(es, e)
		}
		return es, nil
	})
}

// dropPaths forgets the credential's paths: what a remove does.
func dropPaths(b pathBook, o, alias string) error {
	return b.update(func(es []pathEntry) ([]pathEntry, error) {
		n := len(es)
		if es = slices.DeleteFunc(es, func(d pathEntry) bool { return d.names(o, alias) }); len(es) == n {
			return nil, errUnchanged
		}
		return es, nil
	})
}

// prunePaths drops the entries of credentials that keep reports gone (removed from the
// keyring by another program), making room.
func prunePaths(b pathBook, keep func(o, alias string) bool) error {
	return b.update(func(es []pathEntry) ([]pathEntry, error) {
		n := len(es)
		if es = slices.DeleteFunc(es, func(d pathEntry) bool { return !keep(d.Origin, d.Alias) }); len(es) == n {
			return nil, errUnchanged
		}
		return es, nil
	})
}

// learned is what a learn did: the paths now, whether path was added, and what the audit
// record says of it ("" when path was simply added).
type learned struct {
	paths []string
	added bool
	note  string
}

// learnPath adds the path of an allowed form sign-in that ended authenticated when the
// credential had no known path yet: its first sign-in, whose prompt warned the person that no
// sign-in page was set and named the page. A sign-in the person allowed at a new path
// (newPath) is not learned: it asks again, with its warning, every time.
func learnPath(b pathBook, o, alias, account, path string, newPath bool) (learned, error) {
	var res learned
	err := b.update(func(es []pathEntry) ([]pathEntry, error) {
		i := slices.IndexFunc(es, func(e pathEntry) bool { return e.names(o, alias) })
		e := pathEntry{Origin: o, Alias: alias, Account: account}
		if i >= 0 {
			e = es[i]
		}
		known := e.known()
		res.paths = known
		switch {
		case slices.Contains(known, path):
			res.note = "the path was already known"
			return nil, errUnchanged
		case newPath:
			// The page of a sign-in the person allowed at a new path is the agent's choice
			// (red-team round 31: a look-alike it published on the origin, approved once,
			// became a known path and later sign-ins there asked with no warning): allowed
			// that once, never remembered.
			res.note = "allowed once at a new path; a new path is never learned (only the person sets sign-in paths: credentials add --login-path)"
			return nil, errUnchanged
		case len(known) > 0:
			res.note = "the credential has known sign-in paths; only its first sign-in learns one"
			return nil, errUnchanged
		}
		e.Learned = append(slices.Clone(e.Learned), path)
		if i >= 0 {
			es[i] = e
		} else {
			es = append(es, e)
		}
		res.paths, res.added = e.known(), true
		return es, nil
	})
	if err != nil {
		return learned{}, err
	}
	return res, nil
}

// signCount is the sign count the book holds for (o, alias) (0: none).
func signCount(b pathBook, o, alias string) (uint32, error) {
	es, err := b.entries(func(e pathEntry) bool { return e.names(o, alias) })
	if err != nil || len(es) == 0 {
		return 0, err
	}
	return es[0].SignCount, nil
}

// raiseSignCount keeps count for (o, alias) when it is higher than the one the book holds:
// a sign count never goes back.
func raiseSignCount(b pathBook, o, alias, account string, count uint32) error {
	return b.update(func(es []pathEntry) ([]pathEntry, error) {
		i := slices.IndexFunc(es, func(e pathEntry) bool { return e.names(o, alias) })
		if i < 0 {
			es = append(es, pathEntry{Origin: o, Alias: alias, Account: account})
			i = len(es) - 1
		}
		if count <= es[i].SignCount {
			return nil, errUnchanged
		}
		es[i].SignCount = count
		return es, nil
	})
}

// errPathChanged refuses a form sign-in at a path that is not one of the credential's known
// sign-in paths.
func errPathChanged(path, alias string, known []string) error {
	return wire.Errorf(wire.CodeLoginPathChanged, "the sign-in form is at %q, not where alias %q signed in before (%s); nothing was asked or released",
		procstat.Clean(path, 128), alias, shownPaths(known))
}

// shownPaths lists paths for a message or an audit record, bounded: four at most, each cut to
// 128 bytes.
func shownPaths(paths []string) string {
	const most = 4
	shown := make([]string, 0, most)
	for _, p := range paths[:min(len(paths), most)] {
		shown = append(shown, procstat.Clean(p, 128))
	}
	s := presence.QuoteList(shown)
	if len(paths) > most {
		s += fmt.Sprintf(" and %d more", len(paths)-most)
	}
	return s
}
