// Package audit is the hash-chained audit log of what brokerd decided: the record format, and
// the read-only walks that verify and list it. It is what the CLI's 'audit verify' and 'audit
// list' link; the writer, its lock and its rotation are brokerd's (internal/broker/auditwriter).
//
// # Security contract
//
// The log is a JSON Lines file (audit.jsonl in the data dir), each line the canonical JSON of one
// [Record], which never holds a secret. Records are numbered 1, 2, 3 … (Seq) and each carries
// Prev, the hex SHA-256 ([Hash]) of the previous record's line without its newline ("" for the
// very first record). Rotated generations sit beside it as audit.jsonl.1, .2 …, the largest the
// oldest; the chain continues across them. [Verify] walks the chain and reports the first edited,
// reordered, inserted or deleted record as a [*VerifyError]; the first record of the oldest file
// present is accepted as the chain start, because older generations are removed on purpose;
// when the live file is the only one it must start at Seq 1 with an empty Prev. Nothing here
// opens a file for writing, and no file is opened through a symlink.
//
// # A torn end
//
// A live file whose chain holds up to a last line with no final newline ends in a record cut
// short as it was written (brokerd killed, or the power lost, in the middle of an append; or a
// write still under way): [Verify] reports it as a [*TornError] (AUDIT_TORN), naming the
// offset and length of the cut bytes, after checking every whole record before them; it is
// not called an edit. brokerd sets such bytes aside when it next opens the log and records
// the cut in the chain as a record with op "recover", which [Recoveries] lists. A torn line
// anywhere else (a rotated generation, or followed by more lines) is a [*VerifyError].
//
// # Not guaranteed
//
// The chain is not a signature: it uses no key, so anyone who can write the files (any process
// of the same user) can rewrite the whole chain consistently. It detects editing, reordering,
// insertion and deletion of records inside the kept window; it does not detect truncation of
// the newest records, an edit of the newest record (no later record commits to it), removal of
// whole oldest generations, or wholesale deletion of the log by a same-user process.
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
	"syscall"
	"time"

	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/wire"
)

const (
	// MaxField bounds every string field of a Record, in bytes (the writer cuts them).
	MaxField = 256

	// maxLine bounds one line when reading a log back; a well-formed line is far smaller.
	maxLine = 64 << 10
)

// Record is one audit entry. Never holds a secret.
type Record struct {
	Seq      uint64    `json:"seq"` // 1, 2, 3 … across rotated files
	Time     time.Time `json:"time"`
	Op       string    `json:"op"`             // "release", "add", "remove", "clear", "init", "repair", "recover", "lock", "learn_path", "echo", "passkey_overused"
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
	// ("verify" for 'credentials verify'; empty for a login), the page path without query
	// (for "basic", the path and query of the one request the header went to; for
	// "learn_path", the sign-in's path), the password field's label, and the agent behind
	// the request (the control-socket peer and its ancestors).
	Purpose string          `json:"purpose,omitempty"`
	Path    string          `json:"path,omitempty"`
	Field   string          `json:"field,omitempty"`
	Agent   []procstat.Proc `json:"agent,omitempty"`
	// Client is what the agent's client said it is (an MCP client's clientInfo): self-reported.
	Client string `json:"client,omitempty"`
	// Listener is the process that listened on a loopback origin's port when it was checked.
	Listener string `json:"listener,omitempty"`
	// Released is what an allowed release sent to the host, by kind, never by value:
	// "password" and "totp" (the current one-time code of the alias's seed), in that order.
	Released []string `json:"released,omitempty"`
	// Detail is what a record of the log's own upkeep says: for op "recover", the torn record
	// that was cut from the end of the log and where its bytes were kept. For a form sign-in
	// at a path that is not one of the credential's known ones (a release refused
	// LOGIN_PATH_CHANGED, or allowed by the person at the new path), the known paths; for
	// "learn_path", why nothing was learned (or which learned path a full credential
	// dropped); for "echo" (the host reporting that a page showed a released secret), the
	// name of the output that was refused ("snapshot", …); for "passkey_overused" (the page
	// had a passkey answer more than the one approved ceremony), how many times.
	Detail string `json:"detail,omitempty"`
	Prev   string `json:"prev"` // hex SHA-256 of the previous record's line; "" for the first
}

// MaxChain bounds Record.Chain and Record.Agent.
const MaxChain = 4

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

// WireCode is AUDIT_TAMPERED: the chain is broken at the record named.
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

// entry is one line read back from the log.
type entry struct {
	file string
	line int
	off  int64 // where the line starts in file
	size int   // its length, without the newline
	torn bool  // the file's last line, with no final newline
	rec  Record
	hash string
	err  error // parse error
}

// Verify reads the generations of the log at path (path.N … path.1, then path) oldest to newest
// and checks every line and the chain. It returns the number of records checked, and a
// *VerifyError for the first bad record, or a *TornError when every record verifies but the
// live file's last line, which has no final newline. An empty or missing log verifies with 0
// records.
func Verify(path string) (records int, err error) {
	es, rotated, err := load(path)
	if err != nil {
		return 0, err
	}
	for i, e := range es {
		if e.torn && e.file == path && i == len(es)-1 {
			var seq uint64 = 1
			if i > 0 {
				seq = es[i-1].rec.Seq + 1
			} else if rotated {
				seq = 0 // the chain start of the kept window is not known
			}
			return i, &TornError{File: e.file, Line: e.line, Seq: seq, Offset: e.off, Bytes: e.size}
		}
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

// List returns the records of the log at path with Time ≥ since, newest last, at most max of them (the newest);
// max ≤ 0 means no limit. It does not verify the chain, but fails on an unparsable line.
func List(path string, since time.Time, max int) ([]Record, error) {
	es, _, err := load(path)
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

// Recoveries returns the records with op "recover" of the log at path, oldest first: each an
// end of the log that brokerd found torn when it opened the log (or appended), and what it did
// with the cut bytes (their offset and length, and the file that keeps them). It does not verify
// the chain, and skips lines that are not records ([Verify] reports them).
func Recoveries(path string) ([]Record, error) {
	es, _, err := load(path)
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, e := range es {
		if e.err == nil && e.rec.Op == "recover" {
			out = append(out, e.rec)
		}
	}
	return out, nil
}

// load reads every generation, oldest first. rotated reports whether any rotated file exists.
func load(path string) (es []entry, rotated bool, err error) {
	gens, err := Generations(path)
	if err != nil {
		return nil, false, fmt.Errorf("audit: read %s: %w", filepath.Dir(path), err)
	}
	var names []string
	for _, n := range slices.Backward(gens) {
		names = append(names, path+"."+strconv.Itoa(n))
	}
	names = append(names, path)
	for _, name := range names {
		data, err := readFile(name)
		if errors.Is(err, os.ErrNotExist) && name == path {
			continue // crashed between rotation and creating the new file
		}
		if err != nil {
			return nil, false, fmt.Errorf("audit: read %s: %w", filepath.Base(name), err)
		}
		var off int64
		for n := 1; len(data) > 0; n++ {
			i := bytes.IndexByte(data, '\n')
			e := entry{file: name, line: n, off: off}
			var line []byte
			if i < 0 {
				line, data = data, nil
				e.torn, e.err = true, errors.New("incomplete line (no final newline)")
			} else {
				line, data = data[:i], data[i+1:]
			}
			if e.err == nil {
				e.rec, e.err = Parse(line)
			}
			e.size, e.hash = len(line), Hash(line)
			off += int64(len(line)) + 1
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

// Generations returns the n of every rotated generation path.n beside the log at path,
// ascending.
func Generations(path string) ([]int, error) {
	des, err := os.ReadDir(filepath.Dir(path))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	var gens []int
	for _, de := range des {
		s, ok := strings.CutPrefix(de.Name(), base+".")
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

// Parse decodes one line (without its newline) strictly: known fields only, nothing after the
// object, and the line must be exactly what the writer (package audit) would have written: the
// canonical json.Marshal of the Record (this rejects duplicate keys, case-folded keys and extra
// whitespace).
func Parse(line []byte) (Record, error) {
	var r Record
	if len(line) > maxLine {
		return r, errors.New("line too long")
	}
	if err := wire.DecodeStrict(line, &r); err != nil {
		return r, fmt.Errorf("malformed record: %w", err)
	}
	canon, err := json.Marshal(r)
	if err != nil || !bytes.Equal(canon, line) {
		return r, errors.New("malformed record: not in canonical form")
	}
	return r, nil
}

// Hash is the hex SHA-256 of a line without its newline: the next record's Prev.
func Hash(line []byte) string {
	h := sha256.Sum256(line)
	return hex.EncodeToString(h[:])
}
