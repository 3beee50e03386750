package auditwriter

// A keyed log: every record carries its MAC under the user's audit key, and the log's ends are
// anchored in brokerd's state directory (anchor.go). Before every append, under the writers'
// lock, the log must be as brokerd left it: its last record the one anchored and its oldest the
// one anchored (reconcile: a look at both ends; a full check with package audit's Check at Open
// and whenever the look fails). A log brokerd finds otherwise is never continued, which would
// make what was done to it look whole: its files are moved aside (audit.jsonl*.tampered-NANO,
// the newest four sets kept) and the chain starts again from the anchor, with a first record
// (op "tamper", AUDIT_TAMPERED) saying what was found, which 'audit verify' reports while it is
// kept. A log written before records were keyed is checked as the plain chain it is, anchored,
// and continued with a keyed record saying so (op "migrate").

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/wire"
)

// maxTampered bounds the sets of files moved aside as tampered: the oldest beyond it are
// removed (each move is in the chain, naming its set).
const maxTampered = 4

// reconcile sets Seq and Prev from the log as it is now, under the writers' lock: Open's and
// every Append's first step. It leaves the live file closed.
func (l *Log) reconcile() error {
	if l.key == nil {
		return l.resume()
	}
	anchors, err := l.loadAnchors()
	if err != nil {
		return err
	}
	if l.atAnchor(anchors) {
		return nil
	}
	// A torn end of a log not yet keyed is recovered as it was written, then the log keyed.
	for range 2 {
		rep, err := audit.Check(l.path, l.key, anchors)
		var fe *audit.FindingError
		var te *audit.TornError
		var ve *audit.VerifyError
		switch {
		case err == nil || errors.As(err, &fe):
			return l.settle(rep, anchors)
		case errors.As(err, &te):
			l.keyed = len(anchors) > 0
			if l.keyed {
				l.first = anchors[0].First
			}
			if err := l.resume(); err != nil { // recovers the torn end
				return err
			}
			if l.keyed {
				return l.anchorTo(l.seq, l.prev)
			}
		case errors.As(err, &ve):
			return l.quarantine(ve, anchors)
		default:
			return fmt.Errorf("audit: check the log: %w", err)
		}
	}
	return errors.New("audit: the log's torn end is still there after its recovery")
}

// loadAnchors reads the anchors of the log: of its real path, then of the path it was opened
// by when that differs and has one (a directory replaced by a symlink shows).
func (l *Log) loadAnchors() ([]audit.Anchor, error) {
	if len(l.afs) == 0 {
		paths := []string{l.path}
		if l.given != l.path {
			paths = append(paths, l.given)
		}
		for _, p := range paths {
			af, err := l.anchors.openFile(p)
			if err != nil {
				return nil, err
			}
			if af != nil {
				l.afs = append(l.afs, af)
			}
		}
	}
	var out []audit.Anchor
	for _, af := range l.afs {
		a, err := af.load()
		if err != nil {
			return nil, err
		}
		if a.Finding != nil && (l.finding == nil || a.Finding.Seq > l.finding.Seq) {
			l.finding = a.Finding
		}
		if len(out) == 0 {
			l.recent = a.Recent
		}
		out = append(out, a)
	}
	return out, nil
}

// atAnchor reports whether the log ends at the record every anchor names and starts at the
// oldest they name, and sets Seq, Prev and the oldest from them: what every append expects.
func (l *Log) atAnchor(anchors []audit.Anchor) bool {
	if !l.keyed || len(anchors) == 0 || len(l.afs) == 0 || l.afs[0].path != l.path {
		return false
	}
	line, err := lastLine(l.path, -1)
	if err != nil || line == nil {
		return false
	}
	h := audit.Hash(line)
	for _, a := range anchors {
		if a.Seq == 0 || a.Hash != h || a.Seq != anchors[0].Seq || a.First != anchors[0].First {
			return false
		}
	}
	if first, err := l.oldestSeq(); err != nil || first != anchors[0].First {
		return false
	}
	l.seq, l.prev, l.first = anchors[0].Seq, h, anchors[0].First
	return true
}

// settle continues a log that verifies: a new log (or one brokerd started again) gets its
// anchor, a log written unkeyed is anchored and keyed, and a log a brokerd killed between
// writing and anchoring left ahead of its anchor is anchored at its end.
func (l *Log) settle(rep audit.Report, anchors []audit.Anchor) error {
	if err := l.resume(); err != nil {
		return err
	}
	if len(anchors) == 0 {
		if err := l.makeAnchor(audit.Anchor{First: max(rep.First, 1), Seq: l.seq, Hash: l.prev}); err != nil {
			return err
		}
		l.keyed = true
		if rep.Records == 0 {
			return nil
		}
		return l.migrate(rep)
	}
	l.keyed = true
	if l.afs[0].path != l.path {
		if err := l.makeAnchor(anchors[0]); err != nil {
			return err
		}
	}
	// The files may hold older records than the anchor names (a rotation killed between
	// anchoring its new oldest and removing the generation): they verified, so they are kept.
	l.first = anchors[0].First
	if rep.First > 0 && rep.First < l.first {
		l.first = rep.First
	}
	if l.seq != anchors[0].Seq || l.first != anchors[0].First {
		if err := l.anchorTo(l.seq, l.prev); err != nil {
			return err
		}
	}
	if rep.Records > 0 && rep.Legacy == rep.Records {
		return l.migrate(rep) // anchored unkeyed, then stopped before its first keyed record
	}
	return nil
}

// migrate writes the first keyed record of a log written unkeyed (anchored at its last
// record already), saying what the check of the unkeyed records found.
func (l *Log) migrate(rep audit.Report) error {
	detail := fmt.Sprintf("keyed from here: records %d-%d before this one were written unkeyed (before brokerd keyed its records); their chain verified", rep.First, rep.Last)
	if err := l.openFile(); err != nil {
		return err
	}
	err := l.write(Record{Op: "migrate", Decision: "ok", Detail: detail})
	l.f.Close()
	l.f = nil
	return err
}

// quarantine moves the files of a log that is not as brokerd left it aside, and starts the
// chain again after the newest anchor with the record of what was found.
func (l *Log) quarantine(found *audit.VerifyError, anchors []audit.Anchor) error {
	var base audit.Anchor
	for _, a := range anchors {
		if a.Seq >= base.Seq {
			base = a
		}
	}
	stamp := strconv.FormatInt(l.now().UnixNano(), 10)
	kept, moved, err := l.moveAside(stamp)
	if err != nil {
		return fmt.Errorf("audit: move aside the log found %s: %w", found.Kind, err)
	}
	if len(l.afs) == 0 || l.afs[0].path != l.path {
		// Until the record of the finding is anchored, the anchor names what went missing.
		if err := l.makeAnchor(audit.Anchor{First: max(base.First, 1), Seq: base.Seq, Hash: base.Hash}); err != nil {
			return err
		}
	}
	l.keyed = true
	l.seq, l.prev, l.first = base.Seq, base.Hash, base.Seq+1
	// The finding stays in the anchors, whatever becomes of its record.
	l.finding = &audit.Finding{Seq: base.Seq + 1, Kind: found.Kind, Time: l.now().UTC().Round(0)}
	detail := fmt.Sprintf("%s: %s; record %d: %s", found.Kind, kept, found.Seq, found.Reason)
	if err := l.openFile(); err != nil {
		return err
	}
	defer func() { l.f.Close(); l.f = nil }()
	if err := l.writeOne(Record{Op: "tamper", Decision: "error", Code: string(wire.CodeAuditTampered), Detail: clip.Text(detail, audit.MaxField)}); err != nil {
		return err
	}
	// What brokerd wrote that matters, wherever the change left it in those files (its MAC
	// says it is brokerd's), and what its anchors keep of the newest such records (a cut or a
	// deletion took them from the files), goes on in the chain.
	for _, k := range keepers(audit.Keepers(moved, l.key), audit.Recent(l.key, anchors)) {
		if err := l.writeOne(audit.Kept(k)); err != nil {
			return err
		}
	}
	return nil
}

// keepers is both lists of records, each seq once, the newest audit.MaxKept, oldest first.
func keepers(a, b []Record) []Record {
	bySeq := map[uint64]Record{}
	for _, r := range append(slices.Clone(a), b...) {
		bySeq[r.Seq] = r
	}
	seqs := slices.Sorted(maps.Keys(bySeq))
	var out []Record
	for _, s := range seqs[max(len(seqs)-audit.MaxKept, 0):] {
		out = append(out, bySeq[s])
	}
	return out
}

// moveAside renames every file of the log (the live file and its generations) to
// NAME.tampered-STAMP, removes the oldest such sets beyond maxTampered, and says what it kept
// and where.
func (l *Log) moveAside(stamp string) (string, []string, error) {
	gens, err := audit.Generations(l.path)
	if err != nil {
		return "", nil, err
	}
	names := []string{l.path}
	for _, n := range gens {
		names = append(names, l.path+"."+strconv.Itoa(n))
	}
	var moved []string
	for _, p := range names {
		err := os.Rename(p, p+".tampered-"+stamp)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		moved = append(moved, p+".tampered-"+stamp)
	}
	if err := atomicfile.SyncDir(l.dir); err != nil {
		return "", nil, err
	}
	l.pruneTampered()
	if len(moved) == 0 {
		return "no file of the log was left to keep", nil, nil
	}
	return fmt.Sprintf("the %d file(s) found are kept as %s*.tampered-%s", len(moved), filepath.Base(l.path), stamp), moved, nil
}

// keepersOfDropped returns the important records of the generations the next rotation removes
// (audit.Keepers); none for an unkeyed log.
func (l *Log) keepersOfDropped() []Record {
	if !l.keyed {
		return nil
	}
	gens, err := audit.Generations(l.path)
	if err != nil {
		return nil
	}
	var paths []string
	for _, n := range gens {
		if n >= l.keep {
			paths = append(paths, l.path+"."+strconv.Itoa(n))
		}
	}
	if len(paths) == 0 {
		return nil
	}
	return audit.Keepers(paths, l.key)
}

// pruneTampered removes the files of the oldest sets moved aside beyond maxTampered.
func (l *Log) pruneTampered() {
	des, err := os.ReadDir(l.dir)
	if err != nil {
		return
	}
	base := filepath.Base(l.path)
	var stamps []int64
	byStamp := map[int64][]string{}
	for _, de := range des {
		name := de.Name()
		i := strings.LastIndex(name, ".tampered-")
		if i < 0 || !strings.HasPrefix(name, base) {
			continue
		}
		n, err := strconv.ParseInt(name[i+len(".tampered-"):], 10, 64)
		if err != nil {
			continue
		}
		if _, ok := byStamp[n]; !ok {
			stamps = append(stamps, n)
		}
		byStamp[n] = append(byStamp[n], name)
	}
	slices.Sort(stamps)
	for _, n := range stamps[:max(len(stamps)-maxTampered, 0)] {
		for _, name := range byStamp[n] {
			os.Remove(filepath.Join(l.dir, name))
		}
	}
}

// makeAnchor makes the anchor of the log's real path and puts it first.
func (l *Log) makeAnchor(a audit.Anchor) error {
	af, err := l.anchors.create(l.path, a)
	if err != nil {
		return err
	}
	l.afs = append([]*anchorFile{af}, l.afs...)
	l.first = a.First
	return nil
}

// anchorTo records seq (whose line hashes to hash) as the newest record in every anchor of
// the log, with the oldest kept. Nothing to do for an unkeyed log.
func (l *Log) anchorTo(seq uint64, hash string) error {
	for _, af := range l.afs {
		if err := af.store(audit.Anchor{First: l.first, Seq: seq, Hash: hash, Finding: l.finding, Recent: l.recent}); err != nil {
			return err
		}
	}
	return nil
}

// anchorOldest names, before a rotation removes generations (those ≥ keep), the first record
// of the one that will then be the oldest.
func (l *Log) anchorOldest(gens []int) error {
	if len(l.afs) == 0 || !slices.ContainsFunc(gens, func(n int) bool { return n >= l.keep }) {
		return nil
	}
	oldest := l.path
	if kept := slices.DeleteFunc(slices.Clone(gens), func(n int) bool { return n >= l.keep }); len(kept) > 0 {
		oldest = l.path + "." + strconv.Itoa(slices.Max(kept))
	}
	seq, err := firstSeq(oldest)
	if err != nil {
		return err
	}
	l.first = seq
	return l.anchorTo(l.seq, l.prev)
}

// oldestSeq is the seq of the first record of the oldest generation (of the live file when
// there is none).
func (l *Log) oldestSeq() (uint64, error) {
	gens, err := audit.Generations(l.path)
	if err != nil {
		return 0, err
	}
	if len(gens) > 0 {
		return firstSeq(l.path + "." + strconv.Itoa(gens[len(gens)-1]))
	}
	return firstSeq(l.path)
}

// firstSeq reads the seq of the first record of the file at path.
func firstSeq(path string) (uint64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("audit: %s is not a regular file", filepath.Base(path))
	}
	line, err := bufio.NewReaderSize(f, maxLine).ReadSlice('\n')
	if err != nil {
		return 0, fmt.Errorf("audit: the first record of %s: %w", filepath.Base(path), err)
	}
	r, err := audit.Parse(line[:len(line)-1])
	if err != nil {
		return 0, fmt.Errorf("audit: the first record of %s: %w", filepath.Base(path), err)
	}
	return r.Seq, nil
}

func (l *Log) closeAnchors() {
	for _, af := range l.afs {
		af.close()
	}
	l.afs = nil
}
