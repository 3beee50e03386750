// Package audit is the audit log of what brokerd decided: the record format, and the
// read-only walks that verify and list it. The CLI links it to list the log; verifying it
// with brokerd's key ([Check]) is brokerd's ('brokerd audit verify', which the CLI runs and
// whose answer it takes only with the kernel's word that brokerd has its group). The writer,
// its lock, its anchors and its rotation are brokerd's (internal/broker/auditwriter).
//
// # Security contract
//
// The log is a JSON Lines file (audit.jsonl in the data dir), each line the canonical JSON of one
// [Record], which never holds a secret. Records are numbered 1, 2, 3 … (Seq) and each carries
// Prev, the hex SHA-256 ([Hash]) of the previous record's line without its newline ("" for the
// very first record), and MAC, the HMAC-SHA256 of its own line without MAC under the user's
// audit key, which only brokerd can derive (from the seal key only its group reads). Rotated
// generations sit beside it as audit.jsonl.1, .2 …, the largest the oldest; the chain continues
// across them. A program of the user can edit, cut, reorder or delete the files, but cannot make
// a MAC: [Check] finds every record it changed, wrote or re-chained ([Kind] says which). What
// the MAC cannot show — records cut from the end, a file replaced by an older copy, the oldest
// generation removed, the whole log deleted — the [Anchor] shows: brokerd keeps, where only its
// group can reach (its state directory), the newest record it wrote (seq and hash) and the
// oldest it keeps, and updates it before it acts on a decision.
//
// Records written before records were keyed (legacy) are checked as the plain chain they are:
// brokerd's first keyed record after them (op "migrate") commits to their last one, so nothing
// done to them after that goes unseen; what was done to them before cannot be told, and
// [Report.Legacy] counts them. When brokerd finds the log tampered with, it moves the files
// aside and starts the chain again from its anchor with a record of what it found (op
// "tamper"), which [Check] reports ([*FindingError], AUDIT_TAMPERED) as long as it is kept.
// Nothing here opens a file for writing; no file is opened through a symlink, nor a FIFO
// waited on; every read is bounded ([MaxFileBytes] a file, [MaxGenerations] files).
//
// # A torn end
//
// A live file whose chain holds up to a last line with no final newline ends in a record cut
// short as it was written (brokerd killed, or the power lost, in the middle of an append; or a
// write still under way): [Verify] and [Check] report it as a [*TornError] (AUDIT_TORN), naming
// the offset and length of the cut bytes, after checking every whole record before them; it is
// not called an edit — unless brokerd's anchor says that record was whole (then it was cut
// afterwards: [KindTruncated]). brokerd sets such bytes aside when it next opens the log and
// records the cut in the chain as a record with op "recover", which [Recoveries] lists. A torn
// line anywhere else (a rotated generation, or followed by more lines) is a [*VerifyError].
//
// # Not guaranteed
//
// [Verify] (no key) checks the chain only: any process of the same user can rewrite it
// consistently. [Check] cannot say what a removed record held, only that it was removed
// (and which seqs). Root, and anyone in brokerd's group, can rewrite everything. Records a
// brokerd killed between writing and anchoring leaves are authenticated by their MAC but
// could be cut unseen: brokerd acts on no decision before its record is anchored.
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

	// MaxFileBytes bounds one file of the log when it is read back: the writer rotates long
	// before (1 MiB by default, and never more than this), so a longer file is not its work.
	MaxFileBytes = 4 << 20
	// MaxGenerations bounds the rotated generations read back (the writer keeps 4 by default,
	// never more than this).
	MaxGenerations = 16
)

// Record is one audit entry. Never holds a secret.
type Record struct {
	Seq      uint64    `json:"seq"` // 1, 2, 3 … across rotated files
	Time     time.Time `json:"time"`
	Op       string    `json:"op"`             // "release", "add", "remove", "clear", "init", "repair", "recover", "lock", "learn_path", "echo", "passkey_overused", "migrate", "tamper", "file_add", "file_remove"
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
	// had a passkey answer more than the one approved ceremony), how many times; for
	// "migrate" (the first keyed record after unkeyed ones), what the check of those found;
	// for "tamper", what brokerd found wrong with the log (its kind first: "truncated: …") and
	// where it moved the files it found; for "file_add" and "file_remove" (a file approved
	// for uploads, or forgotten), its name, size and SHA-256.
	Detail string `json:"detail,omitempty"`
	Prev   string `json:"prev"` // hex SHA-256 of the previous record's line; "" for the first
	// MAC is the hex HMAC-SHA256, under the user's audit key, of the record's line without
	// MAC ([Sign]); "" on a record written before records were keyed.
	MAC string `json:"mac,omitempty"`
}

// MaxChain bounds Record.Chain and Record.Agent.
const MaxChain = 4

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
			return nil, vErr(e, 0, KindMalformed, e.err.Error())
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
// More than MaxGenerations generations, or a file over MaxFileBytes, is a *VerifyError: not
// what the writer leaves.
func load(path string) (es []entry, rotated bool, err error) {
	gens, err := Generations(path)
	if err != nil {
		return nil, false, fmt.Errorf("audit: read %s: %w", filepath.Dir(path), err)
	}
	if len(gens) > MaxGenerations {
		return nil, false, &VerifyError{File: path, Kind: KindInserted,
			Reason: fmt.Sprintf("%d or more rotated generations beside the log; brokerd keeps at most %d", len(gens), MaxGenerations)}
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
		if errors.Is(err, errTooLarge) {
			return nil, false, &VerifyError{File: name, Kind: KindInserted, Reason: fmt.Sprintf("the file is over %d bytes: not one brokerd wrote", MaxFileBytes)}
		}
		if errors.Is(err, errNotRegular) || errors.Is(err, syscall.ELOOP) || errors.Is(err, os.ErrPermission) {
			// brokerd writes a regular file the user may read: a symlink, a FIFO, a directory
			// or a file made unreadable is someone else's doing.
			return nil, false, &VerifyError{File: name, Kind: KindReplaced, Reason: fmt.Sprintf("not a regular file of the user's that can be read (%v)", err)}
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
			e.size, e.text, e.hash = len(line), line, Hash(line)
			off += int64(len(line)) + 1
			es = append(es, e)
		}
	}
	return es, len(gens) > 0, nil
}

var (
	errTooLarge   = errors.New("file too large")     // a file over MaxFileBytes
	errNotRegular = errors.New("not a regular file") // a FIFO, a directory, a device
)

// readFile reads a regular file of at most MaxFileBytes, never through a symlink and never
// waiting on a FIFO.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), errNotRegular)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err == nil && len(b) > MaxFileBytes {
		return nil, errTooLarge
	}
	return b, err
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
		if len(gens) > MaxGenerations {
			break // load refuses so many; no need to count them all
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
