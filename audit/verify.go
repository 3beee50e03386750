package audit

import (
	"fmt"
	"strings"
	"time"

	"github.com/headless-dev/headless/internal/wire"
)

// Kind names what is wrong with a log: the word after the record in every [*VerifyError],
// and the first word of a "tamper" record's Detail. Kinds never change meaning.
type Kind string

const (
	KindMalformed  Kind = "malformed"  // a line that is not a record as the writer writes it
	KindDropped    Kind = "dropped"    // records missing from inside the chain, or its oldest records
	KindEdited     Kind = "edited"     // a record changed in place
	KindReordered  Kind = "reordered"  // records out of order
	KindInserted   Kind = "inserted"   // a record (or a file) brokerd did not write
	KindReplayed   Kind = "replayed"   // a record repeated
	KindRechained  Kind = "rechained"  // the chain rebuilt (seq and prev rewritten) after a change
	KindTruncated  Kind = "truncated"  // records cut from the end
	KindReplaced   Kind = "replaced"   // the log is not the one brokerd anchored
	KindDeleted    Kind = "deleted"    // the whole log is gone
	KindUnanchored Kind = "unanchored" // a keyed log brokerd holds no anchor for
)

// VerifyError reports the first bad record: AUDIT_TAMPERED.
type VerifyError struct {
	File   string // path of the file holding (or that should hold) the record
	Line   int    // 1-based line in File (0: the file as a whole)
	Seq    uint64 // sequence number of the bad (or first missing) record; 0 when unknown
	Kind   Kind
	Reason string
}

func (e *VerifyError) Error() string {
	switch {
	case e.Seq == 0 && e.Line == 0: // the file as a whole
		return fmt.Sprintf("audit: %s: %s: %s", e.File, e.Kind, e.Reason)
	case e.Line == 0: // records the file should hold
		return fmt.Sprintf("audit: %s: record %d: %s: %s", e.File, e.Seq, e.Kind, e.Reason)
	}
	return fmt.Sprintf("audit: %s:%d: record %d: %s: %s", e.File, e.Line, e.Seq, e.Kind, e.Reason)
}

// WireCode is AUDIT_TAMPERED: the log is not as brokerd wrote it, at the record named.
func (e *VerifyError) WireCode() wire.Code { return wire.CodeAuditTampered }

// TornError reports a live file whose chain holds up to a last line with no final newline:
// a record cut short as it was written, not an edit (see the package doc).
type TornError struct {
	File   string // path of the live file
	Line   int    // 1-based line of the cut bytes in File
	Seq    uint64 // the record the cut bytes would have been
	Offset int64  // where the cut bytes start in File
	Bytes  int    // how many there are
}

func (e *TornError) Error() string {
	return fmt.Sprintf("audit: %s:%d: record %d: torn end: the last record was cut short as it was written (%d bytes at offset %d, no final newline)",
		e.File, e.Line, e.Seq, e.Bytes, e.Offset)
}

// WireCode is AUDIT_TORN: the records before the cut bytes verify.
func (e *TornError) WireCode() wire.Code { return wire.CodeAuditTorn }

// FindingError reports a log that verifies but holds brokerd's record (op "tamper") of
// having found it tampered with: the files it found were moved aside and the chain started
// again from its anchor. It stays AUDIT_TAMPERED as long as that record is kept.
type FindingError struct {
	Seq    uint64 // the "tamper" record (the newest, when there are several)
	Time   time.Time
	Kind   Kind   // what brokerd found
	Detail string // the record's Detail
	Count  int    // how many "tamper" records the log holds
}

func (e *FindingError) Error() string {
	more := ""
	if e.Count > 1 {
		more = fmt.Sprintf(" (the newest of %d such records)", e.Count)
	}
	return fmt.Sprintf("audit: record %d: %s: brokerd found the log tampered with at %s%s: %s",
		e.Seq, e.Kind, e.Time.UTC().Format(time.RFC3339), more, e.Detail)
}

// WireCode is AUDIT_TAMPERED.
func (e *FindingError) WireCode() wire.Code { return wire.CodeAuditTampered }

// entry is one line read back from the log.
type entry struct {
	file string
	line int
	off  int64  // where the line starts in file
	size int    // its length, without the newline
	text []byte // the line, without the newline
	torn bool   // the file's last line, with no final newline
	rec  Record
	hash string
	err  error // parse error
}

// Verify reads the generations of the log at path (path.N … path.1, then path) oldest to newest
// and checks every line and the chain, without a key: what any program of the user could
// rewrite consistently (see [Check]). It returns the number of records checked, and a
// *VerifyError for the first bad record, a *TornError when every record verifies but the live
// file's last line, which has no final newline, or a *FindingError for a log that holds
// brokerd's record of a tampering. An empty or missing log verifies with 0 records. The first
// record of the oldest file present is accepted as the chain start when rotated generations
// exist, because older generations are removed on purpose; when the live file is the only one
// it must start at Seq 1 with an empty Prev.
func Verify(path string) (records int, err error) {
	es, _, err := walk(path, nil, nil)
	if err != nil {
		return len(es), err
	}
	return len(es), finding(es, nil)
}

// walk reads the log at path and checks every line and the chain, and, with a key, every
// record's MAC (a keyed record after another keyed one, the first keyed one after unkeyed
// ones brokerd's "migrate"). It returns the entries that verify (all of them, or those
// before the first problem), how many of them are unkeyed, and the first problem. The
// anchors (keyed only) decide where the chain may start, and whether a torn end was a
// whole record once.
func walk(path string, key []byte, anchors []Anchor) (es []entry, legacy int, err error) {
	es, rotated, err := load(path)
	if err != nil {
		return nil, 0, err
	}
	anchored := newest(anchors)
	keyedAt := -1
	for i, e := range es {
		if e.torn && e.file == path && i == len(es)-1 {
			var seq uint64 = 1
			if i > 0 {
				seq = es[i-1].rec.Seq + 1
			} else if rotated {
				seq = 0 // the chain start of the kept window is not known from the files
			} else if len(anchors) > 0 {
				seq = anchored + 1
			}
			if key != nil && anchored > 0 && anchored >= seq && !newlineOnly(e, seq, anchors) {
				return es[:i], legacy, vErr(e, seq, KindTruncated, fmt.Sprintf(
					"the last line is cut short, but brokerd anchored record %d, so it was whole once: records were cut from the end", anchored))
			}
			return es[:i], legacy, &TornError{File: e.file, Line: e.line, Seq: seq, Offset: e.off, Bytes: e.size}
		}
		if e.err != nil {
			var seq uint64
			if i > 0 && es[i-1].err == nil {
				seq = es[i-1].rec.Seq + 1
			} else if i == 0 && !rotated && len(anchors) == 0 {
				seq = 1
			}
			return es[:i], legacy, vErr(e, seq, KindMalformed, e.err.Error())
		}
		switch {
		case i == 0 && e.rec.Seq == 0:
			return nil, 0, vErr(e, 0, KindMalformed, "seq 0 is invalid")
		case i == 0 && !rotated && len(anchors) == 0 && (e.rec.Seq != 1 || e.rec.Prev != ""):
			kind := KindDropped
			if e.rec.Seq == 1 {
				kind = KindEdited
			}
			return nil, 0, vErr(e, 1, kind, "chain does not start with seq 1 and empty prev: first record edited or deleted")
		case i > 0 && !chains(es[i-1], e):
			return es[:i], legacy, diagnose(es, i)
		}
		if key == nil {
			continue
		}
		if e.rec.MAC == "" {
			if keyedAt >= 0 {
				return es[:i], legacy, vErr(e, e.rec.Seq, KindInserted, "the record carries no MAC, after records brokerd keyed: brokerd did not write it")
			}
			legacy++
			continue
		}
		if keyedAt < 0 {
			keyedAt = i
			if i > 0 && e.rec.Op != "migrate" {
				return es[:i], legacy, vErr(e, e.rec.Seq, KindInserted, "the first keyed record after unkeyed ones is not brokerd's record of keying the log (op migrate)")
			}
		}
		if !lineMAC(key, e.text, e.rec.MAC) {
			return es[:i], legacy, macFailure(es, i, keyedAt, key, anchored)
		}
	}
	return es, legacy, nil
}

// newlineOnly reports whether the torn last line e (record seq) is the newest record brokerd
// anchored, whole but for its final newline: nothing of it is lost, and brokerd puts the
// newline back.
func newlineOnly(e entry, seq uint64, anchors []Anchor) bool {
	for _, a := range anchors {
		if a.Seq > seq || a.Seq == seq && a.Hash != e.hash {
			return false
		}
	}
	return true
}

func vErr(e entry, seq uint64, kind Kind, reason string) *VerifyError {
	return &VerifyError{File: e.file, Line: e.line, Seq: seq, Kind: kind, Reason: reason}
}

// chains reports whether b directly follows a.
func chains(a, b entry) bool {
	return a.err == nil && b.err == nil && b.rec.Seq == a.rec.Seq+1 && b.rec.Prev == a.hash
}

// macFailure names what happened to es[i], whose chain link holds but whose MAC does not
// verify: one record brokerd did not write (the chain goes on without it), one record
// edited, or the chain rebuilt from it (every later record fails too, or records brokerd
// anchored are missing after it) — or, when no keyed record verifies at all, another log in
// its place.
func macFailure(es []entry, i, keyedAt int, key []byte, anchored uint64) *VerifyError {
	e := es[i]
	if i > 0 && i+1 < len(es) && chains(es[i-1], es[i+1]) {
		return vErr(e, e.rec.Seq, KindInserted, "a record brokerd did not write (its MAC does not verify, and the chain continues without it)")
	}
	for _, n := range es[i+1:] {
		if n.err == nil && lineMAC(key, n.text, n.rec.MAC) {
			return vErr(e, e.rec.Seq, KindEdited, "the record does not verify with brokerd's key: it was edited")
		}
	}
	last := es[len(es)-1]
	if i == len(es)-1 && (last.err != nil || anchored <= last.rec.Seq) {
		return vErr(e, e.rec.Seq, KindEdited, "the newest record does not verify with brokerd's key: it was edited")
	}
	if i == keyedAt {
		return vErr(e, e.rec.Seq, KindReplaced, "no keyed record verifies with brokerd's key: the log was replaced, or written under another machine's key")
	}
	missing := ""
	if last.err == nil && anchored > last.rec.Seq {
		missing = fmt.Sprintf("; the log ends at record %d, but brokerd anchored record %d", last.rec.Seq, anchored)
	}
	return vErr(e, e.rec.Seq, KindRechained, fmt.Sprintf(
		"record %d and every later one fail brokerd's MAC while their chain holds: the chain was rebuilt from here (records dropped, edited or reordered, then re-chained)%s", e.rec.Seq, missing))
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
			return vErr(e, e.rec.Seq, KindInserted, "inserted record (the chain continues without it)")
		}
		return vErr(p, p.rec.Seq, KindInserted, "inserted record (the chain continues without it)")
	}
	// es[i] belongs later and the record expected here appears further on.
	if e.rec.Seq != want && count(es, e.rec.Seq) == 1 && count(es[i+1:], want) > 0 {
		return vErr(e, e.rec.Seq, KindReordered, fmt.Sprintf("out of order (record %d comes later)", want))
	}
	// es[i+1] continues from es[i-1]: es[i] was inserted.
	if n, ok := next(i + 1); ok && chains(p, n) {
		return vErr(e, e.rec.Seq, KindInserted, "inserted record (the chain continues without it)")
	}
	if e.rec.Seq == want { // only Prev is wrong
		if n, ok := next(i + 1); ok && n.err == nil && n.rec.Prev != e.hash {
			return vErr(e, e.rec.Seq, KindEdited, "edited record (prev does not match the previous line)")
		}
		return vErr(p, p.rec.Seq, KindEdited, "edited record (its hash does not match the next record's prev)")
	}
	if e.rec.Prev == p.hash {
		return vErr(e, e.rec.Seq, KindEdited, fmt.Sprintf("edited record (seq %d, want %d)", e.rec.Seq, want))
	}
	if e.rec.Seq > want {
		reason := fmt.Sprintf("record %d deleted", want)
		if e.rec.Seq > want+1 {
			reason = fmt.Sprintf("records %d-%d deleted", want, e.rec.Seq-1)
		}
		return vErr(e, want, KindDropped, reason)
	}
	return vErr(e, e.rec.Seq, KindReplayed, fmt.Sprintf("duplicate or replayed record (seq %d, want %d)", e.rec.Seq, want))
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

// finding is a *FindingError for the newest "tamper" record of es, or of the anchors'
// newest finding when its record is no longer in es; nil when there is none.
func finding(es []entry, anchors []Anchor) error {
	var f *FindingError
	n := 0
	for _, e := range es {
		if e.err != nil || e.rec.Op != "tamper" {
			continue
		}
		n++
		kind, _, _ := strings.Cut(e.rec.Detail, ":")
		f = &FindingError{Seq: e.rec.Seq, Time: e.rec.Time, Kind: Kind(kind), Detail: e.rec.Detail}
	}
	for _, a := range anchors {
		if a.Finding != nil && (f == nil || a.Finding.Seq > f.Seq) {
			f = &FindingError{Seq: a.Finding.Seq, Time: a.Finding.Time, Kind: a.Finding.Kind,
				Detail: "that record is no longer in the log (rotated out, or moved aside with the log), but brokerd's anchor keeps the finding"}
			n++
		}
	}
	if f == nil {
		return nil
	}
	f.Count = n
	return f
}
