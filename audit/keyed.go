package audit

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/headless-dev/headless/internal/wire"
)

// MAC returns the hex HMAC-SHA256 under key of r's line without its MAC: the canonical JSON
// of r with MAC empty (omitted), which is what [Parse] gives back for the line with it.
func MAC(key []byte, r Record) (string, error) {
	r.MAC = ""
	body, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("audit: encode record: %w", err)
	}
	return hmacHex(key, body), nil
}

// Sign returns r's line with its MAC, and r with MAC set: the canonical JSON of r, MAC being
// its last field (a hex string, which JSON does not escape).
func Sign(key []byte, r Record) ([]byte, Record, error) {
	r.MAC = ""
	body, err := json.Marshal(r)
	if err != nil {
		return nil, r, fmt.Errorf("audit: encode record: %w", err)
	}
	r.MAC = hmacHex(key, body)
	line := append(body[:len(body)-1:len(body)-1], macField...)
	return append(append(line, r.MAC...), `"}`...), r, nil
}

// macField is how a line's MAC begins: its last field.
const macField = `,"mac":"`

// VerifyMAC reports whether r's MAC is the one key gives it (in constant time).
func VerifyMAC(key []byte, r Record) bool {
	want, err := MAC(key, r)
	return err == nil && r.MAC != "" && hmac.Equal([]byte(want), []byte(r.MAC))
}

// lineMAC reports whether line, the canonical line of a record whose MAC is mac, carries the
// MAC key gives it: the line without its last field, hashed as it is (no encoding again).
func lineMAC(key, line []byte, mac string) bool {
	n := len(macField) + len(mac) + len(`"}`)
	if mac == "" || len(line) < n || string(line[len(line)-n:]) != macField+mac+`"}` {
		return false
	}
	m := hmac.New(sha256.New, key)
	m.Write(line[:len(line)-n])
	m.Write([]byte("}"))
	return hmac.Equal([]byte(hex.EncodeToString(m.Sum(nil))), []byte(mac))
}

func hmacHex(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Anchor is brokerd's record of how far one log went, kept where no program of the user can
// reach it (brokerd's state directory): the oldest record kept and the newest written. brokerd
// updates it after each record is on disk and before it acts on the decision recorded.
type Anchor struct {
	Path  string `json:"path"`  // the log, as brokerd opened it (its directory's real path)
	First uint64 `json:"first"` // seq of the oldest record kept (the next one, before any)
	Seq   uint64 `json:"seq"`   // seq of the newest record written; 0 before any
	Hash  string `json:"hash"`  // [Hash] of that record's line; "" before any
	// Finding is brokerd's newest record of having found the log tampered with: it stays
	// after that record is rotated out (a flood of records cannot make the log look whole
	// again); only root, moving the anchor aside, starts over.
	Finding *Finding `json:"finding,omitempty"`
	// Recent are the newest important records brokerd wrote ([Important]: a release allowed,
	// an add, a finding …), at most MaxRecent, each with its MAC: what a cut or a deletion took
	// is named, and written back into the chain (op "kept") when brokerd finds it gone.
	Recent []Record `json:"recent,omitempty"`
}

// MaxRecent bounds Anchor.Recent.
const MaxRecent = 4

// Finding is what an anchor keeps of a "tamper" record.
type Finding struct {
	Seq  uint64    `json:"seq"`
	Kind Kind      `json:"kind"`
	Time time.Time `json:"time"`
}

// newest is the highest Seq of anchors (0 for none).
func newest(anchors []Anchor) uint64 {
	var n uint64
	for _, a := range anchors {
		n = max(n, a.Seq)
	}
	return n
}

// Recovery is one torn end brokerd cut from the log and recorded (a record with op
// "recover").
type Recovery struct {
	Seq    uint64    `json:"seq"`
	Time   time.Time `json:"time"`
	Detail string    `json:"detail"`
}

// Report is what a check of the log found.
type Report struct {
	Path    string `json:"path"`    // the log checked
	Intact  bool   `json:"intact"`  // every record verifies, and the log is as brokerd anchored it
	Records int    `json:"records"` // records checked (before the first problem, when there is one)
	First   uint64 `json:"first"`   // seq of the oldest record checked (0: none)
	Last    uint64 `json:"last"`    // seq of the newest
	// Legacy counts the records written before records were keyed, checked as the plain
	// chain they are: a program of the user could have rewritten them before brokerd keyed
	// the log (after, the first keyed record commits to them).
	Legacy int `json:"legacy"`
	// Keyed: checked with brokerd's key and anchors ([Check]); false for [Verify]'s plain
	// chain.
	Keyed bool `json:"keyed"`
	// Anchored is the newest record brokerd anchored (0: none).
	Anchored uint64 `json:"anchored"`
	// Recovered lists the torn ends brokerd recovered (the newest MaxRecoveries).
	Recovered []Recovery `json:"recovered"`
	// RotatedOut is the seqs before the oldest record the log holds (rotated out, or moved
	// aside with a tampered log); nil when it holds record 1.
	RotatedOut *Span `json:"rotated_out,omitempty"`
	// Decided are the person's decisions ([DecidedKind]) brokerd keeps in its state directory
	// that the log no longer holds (rotated out, or taken from it), oldest first: at most
	// MaxDecided of each kind, which no record an agent can make displaces.
	Decided []Record `json:"decided"`
	// Elsewhere are the person's decisions that went to other logs than this one (a brokerd
	// started with another data dir), as brokerd keeps them for each log (at most MaxDecided
	// of each kind per log, which no record of this log displaces): the newest MaxElsewhere,
	// oldest first.
	Elsewhere []Placed `json:"elsewhere"`
	// ElsewhereLogs counts the other logs brokerd keeps decisions of; ElsewhereOmitted the
	// decisions of theirs beyond MaxElsewhere that Elsewhere does not list ('brokerd audit
	// verify' run with that log's XDG_DATA_HOME lists a log's own).
	ElsewhereLogs    int `json:"elsewhere_logs"`
	ElsewhereOmitted int `json:"elsewhere_omitted"`
}

// MaxElsewhere bounds the decisions of other logs a [Report] lists (the newest).
const MaxElsewhere = 64

// Placed is a person's decision and the log it was written to.
type Placed struct {
	Log    string `json:"log"`
	Record Record `json:"record"`
}

// Check verifies the log at path with the user's audit key and brokerd's anchors of it: every
// line, the chain, every keyed record's MAC, and the log's ends against each anchor. It returns
// the report, and the first problem: a *VerifyError ([Kind] says what), a *TornError, or a
// *FindingError for a log that verifies but holds brokerd's record of a tampering it found. A log
// with no anchor verifies only when no record of it is keyed (a log written before records
// were keyed, which brokerd keys and anchors when it next writes). An empty or missing log with
// no anchor (or an anchor before any record) verifies with 0 records.
func Check(path string, key []byte, anchors []Anchor) (Report, error) {
	if len(key) == 0 {
		return Report{Path: path}, errors.New("audit: check: no key")
	}
	es, legacy, err := walk(path, key, anchors)
	rep := Report{Path: path, Records: len(es), Legacy: legacy, Keyed: true, Anchored: newest(anchors), Recovered: recoveries(es)}
	if len(es) > 0 {
		rep.First, rep.Last = es[0].rec.Seq, es[len(es)-1].rec.Seq
		if rep.First > 1 {
			rep.RotatedOut = &Span{From: 1, To: rep.First - 1}
		}
	}
	if err != nil {
		return rep, withMissing(err, path, key, anchors)
	}
	if err := anchorCheck(path, es, legacy, anchors); err != nil {
		return rep, withMissing(err, path, key, anchors)
	}
	if err := finding(es, anchors); err != nil {
		return rep, err
	}
	rep.Intact = true
	return rep, nil
}

// Missing returns the records brokerd's anchors keep a copy of ([Anchor.Recent], each with a
// MAC that verifies under key) that the log at path no longer holds as written: what a cut,
// an edit or a deletion took. Unreadable files count as holding nothing.
func Missing(path string, key []byte, anchors []Anchor) []Record {
	es, _, _ := load(path)
	return missing(es, key, anchors)
}

// Recent returns the records brokerd's anchors keep a copy of ([Anchor.Recent]) whose MAC
// verifies under key, each seq once, oldest first.
func Recent(key []byte, anchors []Anchor) []Record { return missing(nil, key, anchors) }

func missing(es []entry, key []byte, anchors []Anchor) []Record {
	have := map[string]bool{}
	for _, e := range es {
		if e.err == nil {
			have[e.hash] = true
		}
	}
	seen := map[uint64]bool{}
	var out []Record
	for _, a := range anchors {
		for _, r := range a.Recent {
			line, err := json.Marshal(r)
			if err != nil || seen[r.Seq] || have[Hash(line)] || !lineMAC(key, line, r.MAC) {
				continue
			}
			seen[r.Seq] = true
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

// withMissing adds to a *VerifyError what brokerd's anchors keep of the records gone from the
// log at path.
func withMissing(err error, path string, key []byte, anchors []Anchor) error {
	var ve *VerifyError
	if !errors.As(err, &ve) {
		return err
	}
	gone := Missing(path, key, anchors)
	if len(gone) == 0 {
		return err
	}
	var b strings.Builder
	b.WriteString("; brokerd keeps a copy of what is gone:")
	for _, r := range gone {
		fmt.Fprintf(&b, " record %d (%s)", r.Seq, Summary(r))
	}
	ve.Reason += b.String()
	return ve
}

// Summary is one line of what a record says, for a message: op and decision, alias and
// origin, session, and time.
func Summary(r Record) string {
	s := r.Op + "/" + r.Decision
	if r.Alias != "" || r.Origin != "" {
		s += " " + r.Alias + " at " + r.Origin
	}
	if r.Session != "" {
		s += ", session " + r.Session
	}
	return s + ", " + r.Time.UTC().Format(time.RFC3339)
}

// Important reports whether r is a record the person would want kept when its generation is
// rotated out, or its log moved aside: a decision that released or changed something, a
// finding, or a copy of one of these. An agent can make many of them without the person (adds
// and removes): what only the person makes is [DecidedKind]'s, kept apart.
func Important(r Record) bool {
	switch {
	case r.Decision == "allow", r.Op == "tamper", r.Op == "kept", r.Op == "migrate":
		return true
	case r.Decision == "ok":
		switch r.Op {
		case "add", "remove", "init", "repair", "clear":
			return true
		}
	}
	return false
}

// MaxKept bounds the records [Keepers] returns.
const MaxKept = 16

// Keepers returns the important records among the files at paths (each read as [Check] reads
// one) that carry their MAC under key — brokerd's, wherever they are — the newest MaxKept by
// seq, oldest first, each once: what brokerd copies into the chain (op "kept") when the
// generation holding them is rotated out or their log is moved aside. Unreadable files and
// lines are skipped.
func Keepers(paths []string, key []byte) []Record {
	seen := map[uint64]Record{}
	for _, p := range paths {
		data, err := readFile(p)
		if err != nil {
			continue
		}
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			line := data[:i]
			data = data[i+1:]
			if r, err := Parse(line); err == nil && Important(r) && lineMAC(key, line, r.MAC) {
				seen[r.Seq] = r
			}
		}
	}
	seqs := slices.Sorted(maps.Keys(seen))
	var out []Record
	for _, s := range seqs[max(len(seqs)-MaxKept, 0):] {
		out = append(out, seen[s])
	}
	return out
}

// Kept is the copy of an important record r that brokerd writes into the chain (op "kept"):
// its fields, its decision, and where it came from; a copy's copy says what the first did.
func Kept(r Record) Record {
	k := r
	k.Seq, k.Prev, k.MAC, k.Time = 0, "", "", time.Time{}
	if r.Op != "kept" {
		k.Detail = fmt.Sprintf("record %d, %s at %s, kept as it left the log: %s", r.Seq, r.Op, r.Time.UTC().Format(time.RFC3339), r.Detail)
	}
	k.Op = "kept"
	return k
}

// anchorCheck checks the ends of a log whose records verify (es) against brokerd's anchors.
func anchorCheck(path string, es []entry, legacy int, anchors []Anchor) error {
	whole := &VerifyError{File: path}
	fail := func(at *VerifyError, seq uint64, kind Kind, format string, a ...any) error {
		at.Seq, at.Kind, at.Reason = seq, kind, fmt.Sprintf(format, a...)
		return at
	}
	keyed := legacy < len(es)
	if len(anchors) == 0 {
		if keyed {
			last := es[len(es)-1].rec.Seq
			return fail(whole, last+1, KindUnanchored, "its records verify with brokerd's key, but brokerd holds no anchor for this log, so records cut from its end would not show (was it moved or copied here, or brokerd's state directory cleared?)")
		}
		return nil
	}
	for _, a := range anchors {
		if len(es) == 0 {
			if a.Seq >= a.First {
				return fail(whole, a.First, KindDeleted, "the log is gone: brokerd anchored records %d-%d of it", a.First, a.Seq)
			}
			continue
		}
		first, last := es[0], es[len(es)-1]
		oldest := &VerifyError{File: first.file, Line: first.line}
		if legacy > 0 && es[legacy-1].rec.Seq > a.Seq {
			at := es[0]
			if a.Seq+1 >= first.rec.Seq {
				at = es[a.Seq+1-first.rec.Seq]
			}
			return fail(&VerifyError{File: at.file, Line: at.line}, at.rec.Seq, KindInserted,
				"the record carries no MAC but comes after record %d, which brokerd anchored: brokerd did not write it", a.Seq)
		}
		if first.rec.Seq == a.Seq+1 && first.rec.Prev == a.Hash {
			// The chain starts right after the anchored record: brokerd started it again from
			// its anchor (after moving a tampered log aside), and a record's MAC commits to
			// the anchor's hash.
			continue
		}
		if a.Seq > 0 {
			if last.rec.Seq < a.Seq {
				return fail(whole, last.rec.Seq+1, KindTruncated, "the log ends at record %d, but brokerd anchored record %d: records %d-%d were cut from its end",
					last.rec.Seq, a.Seq, last.rec.Seq+1, a.Seq)
			}
			if first.rec.Seq > a.Seq {
				return fail(oldest, first.rec.Seq, KindReplaced, "the log starts after record %d, the newest brokerd anchored: the log was replaced", a.Seq)
			}
			at := es[a.Seq-first.rec.Seq]
			if at.rec.Seq != a.Seq || at.hash != a.Hash {
				return fail(&VerifyError{File: at.file, Line: at.line}, a.Seq, KindReplaced,
					"record %d is not the one brokerd anchored: the log was replaced (by an older copy, or another log of yours)", a.Seq)
			}
		}
		if first.rec.Seq > a.First {
			return fail(oldest, a.First, KindDropped, "records %d-%d, the oldest brokerd keeps, were removed (a rotated generation deleted)", a.First, first.rec.Seq-1)
		}
	}
	return nil
}

// MaxRecoveries bounds the recoveries a [Report] lists (the newest).
const MaxRecoveries = 64

func recoveries(es []entry) []Recovery {
	out := []Recovery{}
	for _, e := range es {
		if e.err == nil && e.rec.Op == "recover" {
			out = append(out, Recovery{Seq: e.rec.Seq, Time: e.rec.Time, Detail: e.rec.Detail})
		}
	}
	return out[max(len(out)-MaxRecoveries, 0):]
}

// Outcome is the answer of 'brokerd audit verify --json': the report, and the failure when
// the log does not verify (or could not be checked).
type Outcome struct {
	Report  Report   `json:"report"`
	Failure *Failure `json:"failure,omitempty"`
}

// Failure is a check's error in its wire form, with the record and the kind when they are
// known.
type Failure struct {
	Code    wire.Code `json:"code"`
	Message string    `json:"message"`
	Hint    string    `json:"hint,omitempty"`
	Seq     uint64    `json:"seq,omitempty"`
	Kind    Kind      `json:"kind,omitempty"`
}

// Fail is err's wire form, nil for nil.
func Fail(err error) *Failure {
	if err == nil {
		return nil
	}
	we := wire.From(err)
	f := &Failure{Code: we.Code, Message: we.Message, Hint: we.Hint}
	var ve *VerifyError
	var te *TornError
	var fe *FindingError
	switch {
	case errors.As(err, &ve):
		f.Seq, f.Kind = ve.Seq, ve.Kind
	case errors.As(err, &te):
		f.Seq = te.Seq
	case errors.As(err, &fe):
		f.Seq, f.Kind = fe.Seq, fe.Kind
	}
	return f
}

// Err is f as an error to hand on (its code, message and hint).
func (f *Failure) Err() *wire.Error {
	e := wire.Errorf(f.Code, "%s", f.Message)
	if f.Hint != "" {
		e.Hint = f.Hint
	}
	return e
}
