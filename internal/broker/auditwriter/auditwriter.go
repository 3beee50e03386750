// Package auditwriter appends to the hash-chained audit log of what the broker decided. The
// record format, the chain and the read-only checks ([audit.Verify], [audit.List]) are package
// audit, which the CLI links; this writer only brokerd links.
//
// # Security contract
//
// The log is a JSON Lines file at Options.Path (audit.jsonl in the data dir), created 0600 in a
// directory created 0700, and opened O_APPEND|O_NOFOLLOW. This process only ever appends to it:
// one [Record] per line, written with a single write and fsynced before [Log.Append] returns;
// a write that fails part-way (a full disk) is cut back, so the file ends with a whole record.
// [Log.Reserve] sets aside the space of the next record beforehand (brokerd calls it before a
// presence prompt), so a full disk refuses a release before anyone is asked. A
// record never holds a secret; every string field is cut to [audit.MaxField] bytes of valid
// UTF-8, so a line stays small. Every append holds a flock on the sibling audit.lock and
// continues from the file as it is, so several writers (two brokerds sharing a data dir) extend
// one chain and never fork it.
//
// Records are numbered 1, 2, 3 … (Seq) and each carries Prev, the hex SHA-256 of the previous
// record's line without its newline ("" for the very first record); see package audit.
//
// # A torn last record
//
// A record is one write, fsynced before Append returns and before brokerd acts on the decision
// it records, so a record a power loss cut short is the record of a decision that did not take
// effect (a same-user process can make such an end too: the chain is not a signature). When the
// live file does not end in a newline, Open (and Append, under the writers' lock) continues the
// chain past it instead of refusing to start: a last line that is the chain's next record whole
// but for its newline gets its newline back; any other is kept in a file of its own,
// audit.jsonl.torn-UNIXNANO (0600, the newest 4 kept), and overwritten. Either way a record
// with op "recover" saying what was done (for a cut, the offset and length of the cut bytes
// and the file that keeps them) takes the torn bytes' place in the same fsynced step, so no
// whole record before them is lost and 'headless audit verify' and 'headless audit list' show
// every recovery ([audit.Recoveries]). Until then, [audit.Verify] reports the torn end as
// such (AUDIT_TORN), not as an edit; an edit of any record a later one commits to stays
// AUDIT_TAMPERED, before the recovery and after it. A last line that is whole but not a record,
// or a torn rotated generation, is not a crash's work: Open refuses it (AUDIT_TAMPERED). A file
// that cannot be read is its I/O error.
//
// # Rotation
//
// Before a write would make the log larger than Options.MaxBytes, the files shift: audit.jsonl →
// audit.jsonl.1 → audit.jsonl.2 … up to Options.Keep; the oldest generation is removed. The chain
// continues across files, so audit.Verify checks the whole kept window.
//
// # Not guaranteed
//
// The chain is not a signature (see package audit): any process of the same user can
// rewrite the whole chain consistently, truncate the newest records or delete the log. Keep a
// copy elsewhere (or forward the records) if you need more than tamper evidence.
package auditwriter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/lockfile"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/wire"
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
}

// Log appends records to the audit log. It is safe for concurrent use.
type Log struct {
	path     string
	dir      string
	maxBytes int64
	keep     int
	now      func() time.Time
	unlock   func()

	mu     sync.Mutex
	f      *os.File
	size   int64
	seq    uint64
	prev   string
	broken error // sticky: set when a write or rotation failed half-way
}

// Open opens (creating if needed) the log at o.Path and resumes Seq and Prev from the last
// record of the newest non-empty generation. A torn last record of the live file is recovered
// and the recovery recorded (see the package doc); a whole last line that is not a record, or
// a torn rotated generation, is an error (AUDIT_TAMPERED): the chain cannot be continued safely.
func Open(o Options) (*Log, error) {
	if o.Path == "" || !filepath.IsAbs(o.Path) {
		return nil, fmt.Errorf("audit: open: %q is not an absolute path", o.Path)
	}
	l := &Log{path: o.Path, dir: filepath.Dir(o.Path), maxBytes: o.MaxBytes, keep: o.Keep, now: o.Now}
	if l.maxBytes <= 0 {
		l.maxBytes = DefaultMaxBytes
	}
	if l.keep <= 0 {
		l.keep = DefaultKeep
	}
	if l.now == nil {
		l.now = time.Now
	}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit: create directory: %w", err)
	}
	unlock, err := l.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := l.resume(); err != nil {
		return nil, err
	}
	if err := l.openFile(); err != nil {
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

// resume reads the last line of the newest non-empty generation. A torn last record of the
// live file is recovered first (recoverTorn).
func (l *Log) resume() error {
	gens, err := audit.Generations(l.path)
	if err != nil {
		return fmt.Errorf("audit: resume: %w", err)
	}
	names := []string{l.path}
	for _, n := range gens {
		names = append(names, l.path+"."+strconv.Itoa(n))
	}
	_, err = lastLine(l.path, -1)
	var torn *tornError
	if errors.As(err, &torn) {
		return l.recoverTorn(names, torn)
	}
	return l.resumeFrom(names, -1)
}

// resumeFrom sets Seq and Prev from the last record of the newest non-empty file of names,
// reading the live file (names[0]) only up to limit bytes when limit ≥ 0.
func (l *Log) resumeFrom(names []string, limit int64) error {
	l.seq, l.prev = 0, ""
	for i, path := range names {
		name := filepath.Base(path)
		lim := int64(-1)
		if i == 0 {
			lim = limit
		}
		line, err := lastLine(path, lim)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		var torn *tornError
		if errors.As(err, &torn) || errors.Is(err, errTooLong) {
			// Rotation renames a file only after its last record was fsynced: a torn or
			// overlong last line there is not a crash's work.
			return wire.Errorf(wire.CodeAuditTampered, "audit: resume from %s: %w", name, err).WithHint(tamperedHint(name))
		}
		if err != nil {
			return fmt.Errorf("audit: resume from %s: %w", name, err)
		}
		if line == nil {
			continue // empty file
		}
		r, err := audit.Parse(line)
		if err != nil {
			return wire.Errorf(wire.CodeAuditTampered, "audit: resume from %s: last record: %w", name, err).WithHint(tamperedHint(name))
		}
		l.seq, l.prev = r.Seq, audit.Hash(line)
		return nil
	}
	return nil
}

func tamperedHint(name string) string {
	return fmt.Sprintf("the last record of %s cannot be read, so the chain cannot be continued: run 'headless audit verify'; "+
		"to start a new log, move the audit.jsonl files aside (keep them) and start brokerd again", name)
}

// errTooLong is a last line longer than any record.
var errTooLong = errors.New("last line longer than any record")

// tornError is a file whose last line has no final newline: the bytes from Off to the end.
type tornError struct {
	Off  int64
	Tail []byte
}

func (e *tornError) Error() string {
	return fmt.Sprintf("last record incomplete (%d bytes with no final newline)", len(e.Tail))
}

// maxTorn bounds the kept torn-record files: the oldest beyond it are removed (each recovery
// is in the chain, naming its file).
const maxTorn = 4

// recoverTorn continues the chain past the torn last line of the live file (see the package
// doc): a line that is the next record of the chain whole but for its newline gets the newline
// back; any other is kept in a file of its own and overwritten by the "recover" record. The
// recover record goes where the torn bytes were, in the same fsynced step, so there is never a
// cut the chain does not tell. Called with the writers' lock held, before openFile.
func (l *Log) recoverTorn(names []string, t *tornError) error {
	name := filepath.Base(l.path)
	if err := l.resumeFrom(names, t.Off); err != nil {
		return err
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("audit: recover the torn end of %s: %w", name, err)
	}
	defer f.Close()
	at := t.Off
	var detail string
	if r, err := audit.Parse(t.Tail); err == nil && r.Seq == l.seq+1 && r.Prev == l.prev {
		if _, err := f.WriteAt([]byte{'\n'}, t.Off+int64(len(t.Tail))); err != nil {
			return fmt.Errorf("audit: restore the final newline of %s: %w", name, err)
		}
		at = t.Off + int64(len(t.Tail)) + 1
		l.seq, l.prev = r.Seq, audit.Hash(t.Tail)
		detail = fmt.Sprintf("restored the final newline of record %d (%s/%s), whole but for it", r.Seq, r.Op, r.Decision)
	} else {
		kept, err := l.keepTorn(t.Tail)
		if err != nil {
			return fmt.Errorf("audit: keep the torn end of %s: %w", name, err)
		}
		detail = fmt.Sprintf("cut a torn last record (%d bytes at offset %d, no final newline) from %s; its bytes are in %s", len(t.Tail), t.Off, name, kept)
	}
	line, r, err := l.encode(Record{Op: "recover", Decision: "ok", Detail: detail})
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if _, err := f.WriteAt(line, at); err != nil {
		return fmt.Errorf("audit: record the recovery of %s: %w", name, err)
	}
	if err := f.Truncate(at + int64(len(line))); err != nil {
		return fmt.Errorf("audit: record the recovery of %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("audit: record the recovery of %s: %w", name, err)
	}
	l.seq, l.prev = r.Seq, audit.Hash(line[:len(line)-1])
	return nil
}

// keepTorn writes a torn line's bytes to a file of their own beside the log (0600) and removes
// the oldest such files beyond maxTorn. It returns the new file's name.
func (l *Log) keepTorn(tail []byte) (string, error) {
	base := filepath.Base(l.path) + ".torn-"
	kept := base + strconv.FormatInt(l.now().UnixNano(), 10)
	if err := atomicfile.Write(filepath.Join(l.dir, kept), tail); err != nil {
		return "", err
	}
	des, err := os.ReadDir(l.dir)
	if err != nil {
		return kept, nil // kept; pruning waits for the next recovery
	}
	var olds []int64
	for _, de := range des {
		if n, err := strconv.ParseInt(strings.TrimPrefix(de.Name(), base), 10, 64); err == nil && strings.HasPrefix(de.Name(), base) {
			olds = append(olds, n)
		}
	}
	slices.Sort(olds)
	for _, n := range olds[:max(len(olds)-maxTorn, 0)] {
		os.Remove(filepath.Join(l.dir, base+strconv.FormatInt(n, 10)))
	}
	return kept, nil
}

// lastLine returns the last line of the file without its newline, nil for an empty file,
// reading it only up to limit bytes when limit ≥ 0; a *tornError when that part does not end
// in a newline, errTooLong for a last line longer than any record.
func lastLine(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if limit >= 0 {
		size = min(size, limit)
	}
	if size == 0 {
		return nil, nil
	}
	off := max(size-maxLine-1, 0)
	buf := make([]byte, size-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, err
	}
	if buf[len(buf)-1] != '\n' {
		i := bytes.LastIndexByte(buf, '\n')
		if i < 0 && off > 0 {
			return nil, fmt.Errorf("%w (and no final newline)", errTooLong)
		}
		return nil, &tornError{Off: off + int64(i) + 1, Tail: buf[i+1:]}
	}
	buf = buf[:len(buf)-1]
	i := bytes.LastIndexByte(buf, '\n')
	if i < 0 && off > 0 {
		return nil, errTooLong
	}
	return buf[i+1:], nil
}

func (l *Log) openFile() error {
	name := filepath.Base(l.path)
	// Only a file this call creates (the first, or the live file after a rotation) needs the
	// directory made durable: an fsync of the directory on every append doubled its cost.
	_, serr := os.Lstat(l.path)
	created := errors.Is(serr, os.ErrNotExist)
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
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
	if err := l.resume(); err != nil {
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
	r.Seq, r.Prev = l.seq+1, l.prev
	line, err := json.Marshal(r)
	if err != nil {
		return nil, r, fmt.Errorf("audit: encode record: %w", err)
	}
	return line, r, nil
}

// write encodes r and appends it: Append's work once the file is current. Called with l.mu
// and the writers' lock held.
func (l *Log) write(r Record) error {
	line, r, err := l.encode(r)
	if err != nil {
		return err
	}
	if l.size > 0 && l.size+int64(len(line))+1 > l.maxBytes {
		if err := l.rotate(); err != nil {
			l.broken = err
			return fmt.Errorf("audit: rotate: %w", err)
		}
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
