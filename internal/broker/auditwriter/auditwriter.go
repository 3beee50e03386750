// Package auditwriter appends to the audit log of what the broker decided, keys every record
// and anchors the log's ends. The record format, the chain and the read-only checks
// ([audit.Check], [audit.List]) are package audit, which the CLI links; this writer, and the
// anchors, only brokerd links.
//
// # Security contract
//
// The log is a JSON Lines file at Options.Path (audit.jsonl in the data dir), created 0600 in a
// directory created 0700, and opened O_APPEND|O_NOFOLLOW (never a FIFO waited on). This process
// only ever appends to it: one [Record] per line, written with a single write and fsynced
// before [Log.Append] returns; a write that fails part-way (a full disk) is cut back, so the
// file ends with a whole record. [Log.Reserve] sets aside the space of the next record
// beforehand (brokerd calls it before a presence prompt), so a full disk refuses a release
// before anyone is asked. A record never holds a secret; every string field is cut to
// [audit.MaxField] bytes of valid UTF-8, so a line stays small. Every append holds a flock on
// the sibling audit.lock and continues from the file as it is, so several writers (two
// brokerds sharing a data dir) extend one chain and never fork it.
//
// Records are numbered 1, 2, 3 … (Seq) and each carries Prev, the hex SHA-256 of the previous
// record's line without its newline ("" for the very first record); see package audit. With
// Options.Key (brokerd's: the user's audit key, from the seal key) every record also carries its
// MAC, and the log's ends are anchored in brokerd's state directory (anchor.go), updated after
// the record is on disk and before Append returns (before brokerd acts on the decision): a
// record cut after that shows. Before every append the log must be as this writer (or another
// brokerd of the user) left it; a log that is not is moved aside, never continued, and the
// chain starts again from the anchor with a record of what was found (keyed.go).
//
// # A torn last record
//
// A record is one write, fsynced and anchored before Append returns and before brokerd acts on
// the decision it records, so a record a power loss cut short is the record of a decision that
// did not take effect. When the live file does not end in a newline, Open (and Append, under the
// writers' lock) continues the chain past it instead of refusing to start: a last line that is
// the chain's next record whole but for its newline (with its MAC, when the log is keyed) gets
// its newline back; any other is kept in a file of its own, audit.jsonl.torn-UNIXNANO (0600, the
// newest 4 kept), and overwritten. Either way a record with op "recover" saying what was done
// (for a cut, the offset and length of the cut bytes and the file that keeps them) takes the
// torn bytes' place in the same fsynced step, so no whole record before them is lost and
// 'headless audit verify' and 'headless audit list' show every recovery ([audit.Recoveries]).
// Until then, the checks report the torn end as such (AUDIT_TORN), not as an edit — unless the
// anchor says the record was whole (a cut afterwards: truncated). A last line that is whole but
// not a record, or a torn rotated generation, is not a crash's work: a keyed log is moved aside
// (above); an unkeyed one is refused (AUDIT_TAMPERED). A file that cannot be read is its I/O
// error.
//
// # Rotation
//
// Before a write would make the log larger than Options.MaxBytes, the files shift: audit.jsonl →
// audit.jsonl.1 → audit.jsonl.2 … up to Options.Keep; the oldest generation is removed, after
// the anchor names the new oldest record. The chain continues across files, so the checks cover
// the whole kept window.
//
// # The person's decisions
//
// What only the person's answer makes ([audit.DecidedKind]: a release or a file approval
// answered or left to time out at the prompt, a hand-over's answer) is also kept, in brief,
// beside the log's anchor (decided.go): the newest audit.MaxDecided (64) of each of its eight
// kinds, apart from every record an agent can make without the person (adds, removes,
// refusals), so that none of those displaces them. [Check] names those the log no longer holds
// (rotated out) and those of the user's other logs; the anchor of a log that keeps one is never
// pruned.
//
// # Not guaranteed
//
// Without a key the chain is not a signature: any process of the same user can rewrite it
// consistently. With one, a removed record's content is gone (that it went shows), and root or
// a member of brokerd's group can rewrite everything. Keep a copy elsewhere (or forward the
// records) if you need the records themselves kept from root.
package auditwriter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/lockfile"
	"github.com/headless-dev/headless/internal/procstat"
)

const (
	// lockName is the writers' lock beside the log.
	lockName = "audit.lock"

	// MaxField bounds every string field of a Record, in bytes.
	MaxField = audit.MaxField

	// DefaultMaxBytes is the default size of one file before rotation.
	DefaultMaxBytes = 1 << 20
	// DefaultKeep is the default number of rotated generations kept.
	DefaultKeep = 4

	// maxLine bounds the last line read back to resume; a well-formed line is far smaller.
	maxLine = 64 << 10

	// lockWait bounds the wait for the writers' lock: an append holds it for one write and
	// fsync, so a process that holds it longer is stuck or hostile, and the record (and so the
	// release) is refused rather than the broker blocked with it.
	lockWait = 10 * time.Second
)

// Record is one audit entry ([audit.Record]). Never holds a secret.
type Record = audit.Record

// MaxChain bounds Record.Chain and Record.Agent.
const MaxChain = audit.MaxChain

// Options configures [Open].
type Options struct {
	Path     string           // the log file (audit.jsonl); its directory is created 0700 if missing
	MaxBytes int64            // per file before rotation; ≤ 0 means DefaultMaxBytes
	Keep     int              // rotated generations kept; ≤ 0 means DefaultKeep
	Now      func() time.Time // clock; nil means time.Now
	// Key is the user's audit key (seal.AuditKey): every record gets its MAC, and the log is
	// checked against, and anchored in, Anchors (required with a key). nil: records are
	// unkeyed, as before records were keyed (tests).
	Key     []byte
	Anchors *Anchors
}

// Log appends records to the audit log. It is safe for concurrent use.
type Log struct {
	path     string // with a key, in its directory's real path (symlinks resolved at Open)
	given    string // Options.Path
	dir      string
	maxBytes int64
	keep     int
	now      func() time.Time
	unlock   func()
	key      []byte
	anchors  *Anchors

	mu     sync.Mutex
	f      *os.File
	size   int64
	seq    uint64
	prev   string
	broken error // sticky: set when a write or rotation failed half-way
	// With a key: the anchor files of path and (when it has one) of given, and the oldest
	// record kept. keyed: the log is keyed (anchored) now, so records get their MAC; before
	// (a log written unkeyed, not yet migrated) a torn end is recovered as it was written.
	afs     []*anchorFile
	first   uint64
	keyed   bool
	finding *audit.Finding // the newest finding any anchor keeps
	recent  []Record       // the newest important records written (audit.Anchor.Recent)
}

// Open opens (creating if needed) the log at o.Path and resumes Seq and Prev from the last
// record of the newest non-empty generation. A torn last record of the live file is recovered
// and the recovery recorded (see the package doc); a whole last line that is not a record, or
// a torn rotated generation, is an error (AUDIT_TAMPERED): the chain cannot be continued safely.
func Open(o Options) (*Log, error) {
	if o.Path == "" || !filepath.IsAbs(o.Path) {
		return nil, fmt.Errorf("audit: open: %q is not an absolute path", o.Path)
	}
	if (o.Key == nil) != (o.Anchors == nil) {
		return nil, errors.New("audit: open: a key needs its anchors, and anchors a key")
	}
	l := &Log{path: o.Path, given: o.Path, dir: filepath.Dir(o.Path), maxBytes: o.MaxBytes, keep: o.Keep, now: o.Now,
		key: bytes.Clone(o.Key), anchors: o.Anchors}
	if l.maxBytes <= 0 {
		l.maxBytes = DefaultMaxBytes
	}
	// What package audit reads back is bounded: never write more than it reads.
	l.maxBytes = min(l.maxBytes, audit.MaxFileBytes/2)
	if l.keep <= 0 {
		l.keep = DefaultKeep
	}
	l.keep = min(l.keep, audit.MaxGenerations)
	if l.now == nil {
		l.now = time.Now
	}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit: create directory: %w", err)
	}
	if l.key != nil {
		// One log, one anchor, however it is named: the directory's real path. A brokerd
		// started with another path to the same directory (a symlink) anchors the same log.
		real, err := filepath.EvalSymlinks(l.dir)
		if err != nil {
			return nil, fmt.Errorf("audit: resolve the log's directory: %w", err)
		}
		l.dir, l.path = real, filepath.Join(real, filepath.Base(o.Path))
	}
	unlock, err := l.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := l.reconcile(); err != nil {
		l.closeAnchors()
		return nil, err
	}
	if err := l.openFile(); err != nil {
		l.closeAnchors()
		return nil, err
	}
	// Once per Open, whoever created the file: its directory entry is durable.
	if err := atomicfile.SyncDir(l.dir); err != nil {
		l.f.Close()
		return nil, fmt.Errorf("audit: %w", err)
	}
	l.unlock = func() {}
	return l, nil
}

// lock takes the writers' lock beside the log (blocking): every Append holds it, so several
// processes (two brokerds sharing a data dir) extend one chain without forking it.
func (l *Log) lock() (func(), error) {
	unlock, err := lockfile.Wait(filepath.Join(l.dir, lockName), lockWait)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return unlock, nil
}

func (l *Log) openFile() error {
	name := filepath.Base(l.path)
	// Only a file this call creates (the first, or the live file after a rotation) needs the
	// directory made durable: an fsync of the directory on every append doubled its cost.
	_, serr := os.Lstat(l.path)
	created := errors.Is(serr, os.ErrNotExist)
	// O_NONBLOCK: a FIFO planted at the path is refused below, not waited on.
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("audit: open %s: %w", name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit: stat %s: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("audit: %s is not a regular file", name)
	}
	if fi.Mode().Perm() != 0o600 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return fmt.Errorf("audit: chmod %s: %w", name, err)
		}
	}
	l.f, l.size = f, fi.Size()
	if created {
		if err := atomicfile.SyncDir(l.dir); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
	}
	return nil
}

// Append fills r.Seq, r.Prev and (if zero) r.Time, bounds every string field to MaxField
// bytes, and writes r as one fsynced line, rotating first if the file would exceed MaxBytes.
// A failed write is cut back to the last whole record and the Log stays usable (the next append,
// once the disk has space, continues the chain); after a failed rotation, or a partial record
// that could not be cut, the Log refuses further appends.
func (l *Log) Append(r Record) error {
	if r.Op == "" || r.Decision == "" {
		return errors.New("audit: append: empty op or decision")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("audit: append: %w", os.ErrClosed)
	}
	if l.broken != nil {
		return fmt.Errorf("audit: append: log unusable after earlier failure: %w", l.broken)
	}
	// Another writer may have appended or rotated since: under the lock, continue from the
	// file as it is now.
	unlock, err := l.lock()
	if err != nil {
		return err
	}
	defer unlock()
	l.f.Close()
	l.f = nil
	if err := l.reconcile(); err != nil {
		l.broken = err
		return err
	}
	if err := l.openFile(); err != nil {
		l.broken = err
		return err
	}
	return l.write(r)
}

// encode fills r.Seq, r.Prev and (if zero) r.Time, bounds its fields, and returns its line
// (without the newline) and the record as written.
func (l *Log) encode(r Record) ([]byte, Record, error) {
	if r.Time.IsZero() {
		r.Time = l.now()
	}
	r.Time = r.Time.UTC().Round(0)
	for _, p := range []*string{&r.Op, &r.Decision, &r.Code, &r.Origin, &r.Account, &r.Alias, &r.Session, &r.Exe, &r.Provider,
		&r.Purpose, &r.Path, &r.Field, &r.Listener, &r.Client, &r.Detail} {
		*p = clip.Text(*p, audit.MaxField)
	}
	r.Chain, r.Agent = boundChain(r.Chain), boundChain(r.Agent)
	r.Seq, r.Prev, r.MAC = l.seq+1, l.prev, ""
	if l.keyed {
		return audit.Sign(l.key, r)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return nil, r, fmt.Errorf("audit: encode record: %w", err)
	}
	return line, r, nil
}

// write encodes r and appends it: Append's work once the file is current. Called with l.mu
// and the writers' lock held.
func (l *Log) write(r Record) error {
	if r.Time.IsZero() {
		r.Time = l.now() // once: it is encoded again after a rotation
	}
	line, _, err := l.encode(r)
	if err != nil {
		return err
	}
	if l.size > 0 && l.size+int64(len(line))+1 > l.maxBytes {
		// The important records of the generation about to go are copied first (the newest
		// audit.MaxKept, which an agent's adds can displace); the person's decisions are kept
		// apart beside the anchor (decided.go), which nothing an agent makes displaces.
		for _, k := range l.keepersOfDropped() {
			if err := l.writeOne(audit.Kept(k)); err != nil {
				return err
			}
		}
		if err := l.rotate(); err != nil {
			l.broken = err
			return fmt.Errorf("audit: rotate: %w", err)
		}
	}
	return l.writeOne(r)
}

// writeOne encodes r and appends it, fsynced and anchored: write's work once the file is
// current and has room.
func (l *Log) writeOne(r Record) error {
	line, r, err := l.encode(r)
	if err != nil {
		return err
	}
	// A full disk can take part of the line (tmpfs fills the file's last page, then fails):
	// cut the file back to its last whole record, so the log stays a chain of complete lines
	// and the next append, with space again, continues it. Only a failed cut leaves the log
	// unusable.
	before := l.size
	_, err = l.f.Write(append(line, '\n'))
	if err == nil {
		err = l.f.Sync()
	}
	if err == nil {
		// The decision is acted on only once its record is anchored: a record cut after
		// this shows, and an important one is kept with the anchor too.
		recent := l.recent
		if l.keyed && audit.Important(r) {
			l.recent = append(slices.Clone(l.recent[max(len(l.recent)-audit.MaxRecent+1, 0):]), r)
		}
		if l.keyed && audit.DecidedKind(r) != "" {
			err = l.anchors.decide(l.path, r)
		}
		if err == nil {
			err = l.anchorTo(r.Seq, audit.Hash(line))
		}
		if err != nil {
			l.recent = recent
		}
	}
	if err != nil {
		if terr := l.cut(before); terr != nil {
			l.broken = fmt.Errorf("%w (and cutting the partial record failed: %w)", err, terr)
		}
		return fmt.Errorf("audit: write record: %w", err)
	}
	l.size = before + int64(len(line)) + 1
	l.seq, l.prev = r.Seq, audit.Hash(line)
	return nil
}

// reserveBytes is what [Log.Reserve] sets aside: more than any one record (every string field
// at MaxField, both process chains full).
const reserveBytes = 16 << 10

// Reserve makes sure, before anyone is asked, that the record of the decision can be written
// afterwards: it preallocates space past the end of the file (Linux fallocate, keeping the
// file's size), so a full disk is found now, and an allow that follows cannot find it full. An
// error is the reason the log cannot take a record. Nothing is reserved where the filesystem
// cannot preallocate, nor for a record that will start a new file (rotation): then a full disk
// is still refused, at the append after the prompt.
func (l *Log) Reserve() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("audit: reserve: %w", os.ErrClosed)
	}
	if l.broken != nil {
		return fmt.Errorf("audit: reserve: log unusable after earlier failure: %w", l.broken)
	}
	unlock, err := l.lock()
	if err != nil {
		return err
	}
	defer unlock()
	fi, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("audit: reserve: %w", err)
	}
	if fi.Size()+reserveBytes > l.maxBytes {
		return nil
	}
	if err := preallocate(l.f, fi.Size(), reserveBytes); err != nil {
		return fmt.Errorf("audit: reserve space for a record: %w", err)
	}
	return nil
}

// cut truncates the file back to size bytes (the end of its last whole record) and makes
// that durable.
func (l *Log) cut(size int64) error {
	if err := l.f.Truncate(size); err != nil {
		return err
	}
	if err := l.f.Sync(); err != nil {
		return err
	}
	l.size = size
	return nil
}

// rotate shifts audit.jsonl → .1 → .2 … and drops generations ≥ Keep. Called with l.mu held.
func (l *Log) rotate() error {
	if err := l.f.Close(); err != nil {
		return err
	}
	l.f = nil
	gens, err := audit.Generations(l.path)
	if err != nil {
		return err
	}
	// The anchor names the new oldest record before the oldest generation goes, so that a
	// check in between sees nothing missing.
	if err := l.anchorOldest(gens); err != nil {
		return err
	}
	slices.Reverse(gens) // oldest (largest n) first, so a rename never overwrites
	for _, n := range gens {
		old := l.path + "." + strconv.Itoa(n)
		if n >= l.keep {
			if err := os.Remove(old); err != nil {
				return err
			}
			continue
		}
		if err := os.Rename(old, l.path+"."+strconv.Itoa(n+1)); err != nil {
			return err
		}
	}
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		return err
	}
	return l.openFile()
}

// Close closes the file and releases the lock. It is safe to call more than once.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unlock == nil {
		return nil
	}
	var err error
	if l.f != nil {
		err = l.f.Close()
		l.f = nil
	}
	l.closeAnchors()
	clear(l.key)
	l.unlock()
	l.unlock = nil
	if err != nil {
		return fmt.Errorf("audit: close: %w", err)
	}
	return nil
}

// boundChain keeps at most MaxChain processes, each with bounded, printable strings.
func boundChain(c []procstat.Proc) []procstat.Proc {
	if len(c) == 0 {
		return nil
	}
	out := make([]procstat.Proc, 0, min(len(c), MaxChain))
	for _, p := range c[:min(len(c), MaxChain)] {
		out = append(out, procstat.Proc{PID: p.PID, Exe: procstat.Clean(p.Exe, procstat.MaxExe), Comm: procstat.Clean(p.Comm, procstat.MaxComm)})
	}
	return out
}
