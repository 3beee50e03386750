// Package audit keeps the append-only, hash-chained log of what the broker decided.
//
// # Security contract
//
// The log is a JSON Lines file, Dir/audit.jsonl, created 0600 in a directory created 0700, and
// opened O_APPEND|O_NOFOLLOW. This process only ever appends to it: one [Record] per line,
// written with a single write and fsynced before [Log.Append] returns. A record never holds a
// secret; every string field is cut to [MaxField] bytes of valid UTF-8, so a line stays small.
// Every append holds a flock on Dir/audit.lock and continues from the file as it is, so
// several writers (two brokerds sharing a data dir) extend one chain and never fork it.
//
// Records are numbered 1, 2, 3 … (Seq) and each carries Prev, the hex SHA-256 of the previous
// record's line without its newline ("" for the very first record). [Verify] walks the chain
// and reports the first edited, reordered, inserted or deleted record as a [*VerifyError].
//
// # Rotation
//
// Before a write would make audit.jsonl larger than Options.MaxBytes, the files shift:
// audit.jsonl → audit.jsonl.1 → audit.jsonl.2 … up to Options.Keep; the oldest generation is
// removed. The chain continues across files, so Verify checks the whole kept window. The first
// record of the oldest file present is accepted as the chain start, because older generations
// are removed on purpose; when audit.jsonl is the only file it must start at Seq 1 with an
// empty Prev.
//
// # Not guaranteed
//
// The chain is not a signature: it uses no key, so anyone who can write the files (any process
// of the same user) can rewrite the whole chain consistently. It detects editing, reordering,
// insertion and deletion of records inside the kept window; it does not detect truncation of
// the newest records, an edit of the newest record (no later record commits to it), removal of
// whole oldest generations, or wholesale deletion of the log by a same-user process. Keep a
// copy elsewhere (or forward the records) if you need more than tamper evidence.
package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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
	"unicode/utf8"

	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/procstat"
)

const (
	// FileName is the live log file inside Options.Dir; rotated generations are FileName.1, .2 ….
	FileName = "audit.jsonl"
	lockName = "audit.lock"

	// MaxField bounds every string field of a Record, in bytes.
	MaxField = 256

	// DefaultMaxBytes is the default size of one file before rotation.
	DefaultMaxBytes = 1 << 20
	// DefaultKeep is the default number of rotated generations kept.
	DefaultKeep = 4

	// maxLine bounds one line when reading a log back; a well-formed line is far smaller.
	maxLine = 64 << 10
)

// Record is one audit entry. Never holds a secret.
type Record struct {
	Seq      uint64    `json:"seq"` // 1, 2, 3 … across rotated files
	Time     time.Time `json:"time"`
	Op       string    `json:"op"`             // "release", "add", "remove", "clear"
	Decision string    `json:"decision"`       // "allow", "deny", "ok", "error"
	Code     string    `json:"code,omitempty"` // error code when not allowed/ok
	Origin   string    `json:"origin,omitempty"`
	Account  string    `json:"account,omitempty"`
	Alias    string    `json:"alias,omitempty"`
	Session  string    `json:"session,omitempty"`
	PID      int       `json:"pid,omitempty"` // requester, from SO_PEERCRED
	Exe      string    `json:"exe,omitempty"`
	Provider string    `json:"provider,omitempty"` // presence provider
	// Chain is the requester and its ancestors (at most MaxChain), as brokerd read them from
	// /proc when it decided; an entry with only a comm had an unreadable executable.
	Chain []procstat.Proc `json:"chain,omitempty"`
	// What the host reported about a release (not verified by brokerd): the purpose
	// ("verify" for 'credentials verify'; empty for a login), the page path without query,
	// the password field's label, and the agent behind the request (the control-socket peer
	// and its ancestors).
	Purpose string          `json:"purpose,omitempty"`
	Path    string          `json:"path,omitempty"`
	Field   string          `json:"field,omitempty"`
	Agent   []procstat.Proc `json:"agent,omitempty"`
	// Listener is the process that listened on a loopback origin's port when it was checked.
	Listener string `json:"listener,omitempty"`
	Prev     string `json:"prev"` // hex SHA-256 of the previous record's line; "" for the first
}

// MaxChain bounds Record.Chain and Record.Agent.
const MaxChain = 4

// Options configures [Open].
type Options struct {
	Dir      string           // created 0700 if missing
	MaxBytes int64            // per file before rotation; ≤ 0 means DefaultMaxBytes
	Keep     int              // rotated generations kept; ≤ 0 means DefaultKeep
	Now      func() time.Time // clock; nil means time.Now
}

// Log appends records to the audit log. It is safe for concurrent use.
type Log struct {
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

// Open opens (creating if needed) the log in o.Dir and resumes Seq and Prev from the last
// record of the newest non-empty generation. An incomplete or unparsable last record is an
// error: the chain cannot be continued safely (run Verify, move the file aside).
func Open(o Options) (*Log, error) {
	if o.Dir == "" {
		return nil, errors.New("audit: open: empty directory")
	}
	l := &Log{dir: o.Dir, maxBytes: o.MaxBytes, keep: o.Keep, now: o.Now}
	if l.maxBytes <= 0 {
		l.maxBytes = DefaultMaxBytes
	}
	if l.keep <= 0 {
		l.keep = DefaultKeep
	}
	if l.now == nil {
		l.now = time.Now
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
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
	l.unlock = func() {}
	return l, nil
}

// lock takes the directory's writer lock (blocking): every Append holds it, so several
// processes (two brokerds sharing a data dir) extend one chain without forking it.
func (l *Log) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(l.dir, lockName), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("audit: lock: %w", err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// resume reads the last line of the newest non-empty generation.
func (l *Log) resume() error {
	gens, err := generations(l.dir)
	if err != nil {
		return fmt.Errorf("audit: resume: %w", err)
	}
	names := []string{FileName}
	for _, n := range gens {
		names = append(names, FileName+"."+strconv.Itoa(n))
	}
	for _, name := range names {
		line, err := lastLine(filepath.Join(l.dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("audit: resume from %s: %w", name, err)
		}
		if line == nil {
			continue // empty file
		}
		r, err := parseLine(line)
		if err != nil {
			return fmt.Errorf("audit: resume from %s: last record: %w", name, err)
		}
		l.seq, l.prev = r.Seq, hashLine(line)
		return nil
	}
	return nil
}

// lastLine returns the last line of the file without its newline, nil for an empty file.
func lastLine(path string) ([]byte, error) {
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
	if size == 0 {
		return nil, nil
	}
	off := max(size-maxLine-1, 0)
	buf := make([]byte, size-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, err
	}
	if buf[len(buf)-1] != '\n' {
		return nil, errors.New("last record incomplete (no final newline)")
	}
	buf = buf[:len(buf)-1]
	i := bytes.LastIndexByte(buf, '\n')
	if i < 0 && off > 0 {
		return nil, errors.New("last record too long")
	}
	return buf[i+1:], nil
}

func (l *Log) openFile() error {
	path := filepath.Join(l.dir, FileName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("audit: open %s: %w", FileName, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit: stat %s: %w", FileName, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("audit: %s is not a regular file", FileName)
	}
	if fi.Mode().Perm() != 0o600 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return fmt.Errorf("audit: chmod %s: %w", FileName, err)
		}
	}
	l.f, l.size = f, fi.Size()
	if err := atomicfile.SyncDir(l.dir); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Append fills r.Seq, r.Prev and (if zero) r.Time, bounds every string field to MaxField
// bytes, and writes r as one fsynced line, rotating first if the file would exceed MaxBytes.
// After a failed write or rotation the Log refuses further appends.
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
	if r.Time.IsZero() {
		r.Time = l.now()
	}
	r.Time = r.Time.UTC().Round(0)
	for _, p := range []*string{&r.Op, &r.Decision, &r.Code, &r.Origin, &r.Account, &r.Alias, &r.Session, &r.Exe, &r.Provider,
		&r.Purpose, &r.Path, &r.Field, &r.Listener} {
		*p = bound(*p)
	}
	r.Chain, r.Agent = boundChain(r.Chain), boundChain(r.Agent)
	r.Seq, r.Prev = l.seq+1, l.prev
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("audit: encode record: %w", err)
	}
	if l.size > 0 && l.size+int64(len(line))+1 > l.maxBytes {
		if err := l.rotate(); err != nil {
			l.broken = err
			return fmt.Errorf("audit: rotate: %w", err)
		}
	}
	n, err := l.f.Write(append(line, '\n'))
	l.size += int64(n)
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		l.broken = err
		return fmt.Errorf("audit: write record: %w", err)
	}
	l.seq, l.prev = r.Seq, hashLine(line)
	return nil
}

// rotate shifts audit.jsonl → .1 → .2 … and drops generations ≥ Keep. Called with l.mu held.
func (l *Log) rotate() error {
	if err := l.f.Close(); err != nil {
		return err
	}
	l.f = nil
	gens, err := generations(l.dir)
	if err != nil {
		return err
	}
	slices.Reverse(gens) // oldest (largest n) first, so a rename never overwrites
	for _, n := range gens {
		old := filepath.Join(l.dir, FileName+"."+strconv.Itoa(n))
		if n >= l.keep {
			if err := os.Remove(old); err != nil {
				return err
			}
			continue
		}
		if err := os.Rename(old, filepath.Join(l.dir, FileName+"."+strconv.Itoa(n+1))); err != nil {
			return err
		}
	}
	if err := os.Rename(filepath.Join(l.dir, FileName), filepath.Join(l.dir, FileName+".1")); err != nil {
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

// VerifyError reports the first bad record.
type VerifyError struct {
	File   string // path of the file holding (or that should hold) the record
	Line   int    // 1-based line in File
	Seq    uint64 // sequence number of the bad (or missing) record
	Reason string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("audit: %s:%d: record %d: %s", e.File, e.Line, e.Seq, e.Reason)
}

// entry is one line read back from the log.
type entry struct {
	file string
	line int
	rec  Record
	hash string
	err  error // parse error
}

// Verify reads the generations oldest to newest and checks every line and the chain. It
// returns the number of records checked, and a *VerifyError for the first bad record. An
// empty or missing log verifies with 0 records.
func Verify(dir string) (records int, err error) {
	es, rotated, err := load(dir)
	if err != nil {
		return 0, err
	}
	for i, e := range es {
		if e.err != nil {
			var seq uint64
			if i > 0 && es[i-1].err == nil {
				seq = es[i-1].rec.Seq + 1
			} else if i == 0 && !rotated {
				seq = 1
			}
			return i, vErr(e, seq, e.err.Error())
		}
		if i == 0 {
			if e.rec.Seq == 0 {
				return 0, vErr(e, 0, "seq 0 is invalid")
			}
			if !rotated && (e.rec.Seq != 1 || e.rec.Prev != "") {
				return 0, vErr(e, 1, "chain does not start with seq 1 and empty prev: first record edited or deleted")
			}
			continue
		}
		if chains(es[i-1], e) {
			continue
		}
		return i, diagnose(es, i)
	}
	return len(es), nil
}

func vErr(e entry, seq uint64, reason string) *VerifyError {
	return &VerifyError{File: e.file, Line: e.line, Seq: seq, Reason: reason}
}

// chains reports whether b directly follows a.
func chains(a, b entry) bool {
	return a.err == nil && b.err == nil && b.rec.Seq == a.rec.Seq+1 && b.rec.Prev == a.hash
}

// diagnose names the first bad record when es[i] does not follow es[i-1], which does follow
// everything before it. Lines i-2 … i+1 are enough to tell the cases apart.
func diagnose(es []entry, i int) *VerifyError {
	p, e := es[i-1], es[i]
	want := p.rec.Seq + 1
	next := func(k int) (entry, bool) {
		if k < len(es) {
			return es[k], true
		}
		return entry{}, false
	}
	// es[i] continues from es[i-2]: one of es[i-1], es[i] was inserted.
	if i >= 2 && chains(es[i-2], e) {
		if n, ok := next(i + 1); ok && chains(p, n) {
			return vErr(e, e.rec.Seq, "inserted record (the chain continues without it)")
		}
		return vErr(p, p.rec.Seq, "inserted record (the chain continues without it)")
	}
	// es[i] belongs later and the record expected here appears further on.
	if e.rec.Seq != want && count(es, e.rec.Seq) == 1 && count(es[i+1:], want) > 0 {
		return vErr(e, e.rec.Seq, fmt.Sprintf("out of order (record %d comes later)", want))
	}
	// es[i+1] continues from es[i-1]: es[i] was inserted.
	if n, ok := next(i + 1); ok && chains(p, n) {
		return vErr(e, e.rec.Seq, "inserted record (the chain continues without it)")
	}
	if e.rec.Seq == want { // only Prev is wrong
		if n, ok := next(i + 1); ok && n.err == nil && n.rec.Prev != e.hash {
			return vErr(e, e.rec.Seq, "edited record (prev does not match the previous line)")
		}
		return vErr(p, p.rec.Seq, "edited record (its hash does not match the next record's prev)")
	}
	if e.rec.Prev == p.hash {
		return vErr(e, e.rec.Seq, fmt.Sprintf("edited record (seq %d, want %d)", e.rec.Seq, want))
	}
	if e.rec.Seq > want {
		reason := fmt.Sprintf("record %d deleted", want)
		if e.rec.Seq > want+1 {
			reason = fmt.Sprintf("records %d-%d deleted", want, e.rec.Seq-1)
		}
		return vErr(e, want, reason)
	}
	return vErr(e, e.rec.Seq, fmt.Sprintf("duplicate or replayed record (seq %d, want %d)", e.rec.Seq, want))
}

func count(es []entry, seq uint64) int {
	n := 0
	for _, e := range es {
		if e.err == nil && e.rec.Seq == seq {
			n++
		}
	}
	return n
}

// List returns the records with Time ≥ since, newest last, at most max of them (the newest);
// max ≤ 0 means no limit. It does not verify the chain, but fails on an unparsable line.
func List(dir string, since time.Time, max int) ([]Record, error) {
	es, _, err := load(dir)
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, e := range es {
		if e.err != nil {
			return nil, vErr(e, 0, e.err.Error())
		}
		if !e.rec.Time.Before(since) {
			out = append(out, e.rec)
		}
	}
	if max > 0 && len(out) > max {
		out = out[len(out)-max:]
	}
	return out, nil
}

// load reads every generation, oldest first. rotated reports whether any rotated file exists.
func load(dir string) (es []entry, rotated bool, err error) {
	gens, err := generations(dir)
	if err != nil {
		return nil, false, fmt.Errorf("audit: read %s: %w", dir, err)
	}
	var names []string
	for _, n := range slices.Backward(gens) {
		names = append(names, FileName+"."+strconv.Itoa(n))
	}
	names = append(names, FileName)
	for _, name := range names {
		path := filepath.Join(dir, name)
		data, err := readFile(path)
		if errors.Is(err, os.ErrNotExist) && name == FileName {
			continue // crashed between rotation and creating the new file
		}
		if err != nil {
			return nil, false, fmt.Errorf("audit: read %s: %w", name, err)
		}
		for n := 1; len(data) > 0; n++ {
			i := bytes.IndexByte(data, '\n')
			e := entry{file: path, line: n}
			var line []byte
			if i < 0 {
				line, data = data, nil
				e.err = errors.New("incomplete line (no final newline)")
			} else {
				line, data = data[:i], data[i+1:]
			}
			if e.err == nil {
				e.rec, e.err = parseLine(line)
			}
			e.hash = hashLine(line)
			es = append(es, e)
		}
	}
	return es, len(gens) > 0, nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// generations returns the n of every FileName.n in dir, ascending.
func generations(dir string) ([]int, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var gens []int
	for _, de := range des {
		s, ok := strings.CutPrefix(de.Name(), FileName+".")
		if !ok || s == "" || s[0] == '0' || strings.TrimLeft(s, "0123456789") != "" {
			continue
		}
		if n, err := strconv.Atoi(s); err == nil {
			gens = append(gens, n)
		}
	}
	slices.Sort(gens)
	return gens, nil
}

// parseLine decodes one line strictly: known fields only, nothing after the object, and the
// line must be exactly what Append would have written (this rejects duplicate keys,
// case-folded keys and extra whitespace).
func parseLine(line []byte) (Record, error) {
	var r Record
	if len(line) > maxLine {
		return r, errors.New("line too long")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("malformed record: %v", err)
	}
	canon, err := json.Marshal(r)
	if err != nil || !bytes.Equal(canon, line) {
		return r, errors.New("malformed record: not in canonical form")
	}
	return r, nil
}

func hashLine(line []byte) string {
	h := sha256.Sum256(line)
	return hex.EncodeToString(h[:])
}

// bound makes s valid UTF-8 of at most MaxField bytes, cutting on a rune boundary.
func bound(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxField {
		return s
	}
	i := MaxField
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
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
