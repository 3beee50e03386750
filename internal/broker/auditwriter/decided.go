package auditwriter

// The person's decisions. What only the person's answer makes ([audit.DecidedKind]: a release
// or a file approval answered or left to time out at the prompt, a hand-over's answer) brokerd
// keeps apart from every other record, in a file of its own beside the log's anchor
// (log-HASH.decided: the newest audit.MaxDecided of each kind, rewritten atomically after the
// record is on disk and before the anchor moves on, so before brokerd acts on the decision).
// No record an agent can make at will (an add or a remove on broker.sock, an isolated session's
// add, a flood of refusals) is kept there, so none displaces them: when the generation holding
// a release rotates out, 'audit verify' still names it; and the check of any log names the
// decisions of every other log of the user's (a brokerd started with another data dir), each
// log's under its own bound, which no record of the log checked displaces. A log's decisions
// go only with its anchor, which is never pruned while it keeps one (anchor.go).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/wire"
)

const (
	decidedSuffix = ".decided"
	decidedFormat = 1
	// maxDecidedBytes bounds a decided file: eight kinds of audit.MaxDecided briefs, each of
	// at most ten fields of 128 bytes, fit well within it.
	maxDecidedBytes = 1 << 20
)

// decidedFile is the content of a log's decided file.
type decidedFile struct {
	Format  int            `json:"format"`
	Log     string         `json:"log"`
	Records []audit.Record `json:"records"` // briefs (audit.Brief), oldest first
}

// decidedOf is the decided file of the log at path.
func (a *Anchors) decidedOf(path string) string {
	return strings.TrimSuffix(a.fileOf(path), anchorSuffix) + decidedSuffix
}

// readDecided reads a decided file (none: nothing kept), which must be the log's at path (any
// log's when path is "").
func (a *Anchors) readDecided(name, path string) (decidedFile, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return decidedFile{Format: decidedFormat, Log: path}, nil
	}
	if err != nil {
		return decidedFile{}, fmt.Errorf("%w: %w", errAnchorUnusable, err)
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return decidedFile{}, fmt.Errorf("%w: %w", errAnchorUnusable, err)
	}
	if uint32(st.Mode)&syscall.S_IFMT != syscall.S_IFREG || int(st.Uid) != a.uid || uint32(st.Mode)&0o077 != 0 || st.Size > maxDecidedBytes {
		return decidedFile{}, fmt.Errorf("%w: %s is not a regular file of uid %d, 0600, at most %d bytes", errAnchorUnusable, filepath.Base(name), a.uid, maxDecidedBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxDecidedBytes+1))
	if err != nil {
		return decidedFile{}, fmt.Errorf("%w: %w", errAnchorUnusable, err)
	}
	var d decidedFile
	if err := wire.DecodeStrict(b, &d); err != nil || d.Format != decidedFormat || !filepath.IsAbs(d.Log) || path != "" && d.Log != path {
		return decidedFile{}, fmt.Errorf("%w: %s is not a decided file of this log", errAnchorUnusable, filepath.Base(name))
	}
	return d, nil
}

// decide keeps the brief of r, a person's decision just written to the log at path. Called
// with the log's writers' lock held, which every writer of that log takes.
func (a *Anchors) decide(path string, r audit.Record) error {
	name := a.decidedOf(path)
	d, err := a.readDecided(name, path)
	if err != nil {
		return err
	}
	d.Records = audit.KeepDecided(d.Records, r)
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if len(b) > maxDecidedBytes {
		return fmt.Errorf("%w: the person's decisions do not fit their file", errAnchorUnusable)
	}
	if err := atomicfile.Write(name, b); err != nil {
		return fmt.Errorf("audit: keep the person's decision: %w", err)
	}
	return nil
}

// Decided returns the person's decisions brokerd keeps of the log at path (briefs, oldest
// first).
func (a *Anchors) Decided(path string) ([]audit.Record, error) {
	d, err := a.readDecided(a.decidedOf(path), path)
	return d.Records, err
}

// holdsDecided reports whether the anchor file named (in a.dir) has a decided file beside it
// that keeps any decision (or cannot be read: kept, to be safe).
func (a *Anchors) holdsDecided(anchorName string) bool {
	d, err := a.readDecided(filepath.Join(a.dir, strings.TrimSuffix(anchorName, anchorSuffix)+decidedSuffix), "")
	return err != nil || len(d.Records) > 0
}

// elsewhere returns the person's decisions kept for other logs than the one at paths: at most
// audit.MaxElsewhere, the newest allowed ones before the newest others, oldest first, the number of those logs and the number of
// decisions left out.
func (a *Anchors) elsewhere(paths ...string) (out []audit.Placed, logs, omitted int, err error) {
	names, err := a.names()
	if err != nil {
		return nil, 0, 0, err
	}
	out = []audit.Placed{}
	for _, n := range names {
		d, err := a.readDecided(filepath.Join(a.dir, strings.TrimSuffix(n, anchorSuffix)+decidedSuffix), "")
		if err != nil {
			return nil, 0, 0, err
		}
		if len(d.Records) == 0 || slices.Contains(paths, d.Log) {
			continue
		}
		logs++
		for _, r := range d.Records {
			out = append(out, audit.Placed{Log: d.Log, Record: r})
		}
	}
	// Past the bound, what was allowed before what was refused or timed out: an agent can
	// cause timeouts (a prompt left unanswered) in a log of its own, never an allow.
	if len(out) > audit.MaxElsewhere {
		slices.SortStableFunc(out, func(x, y audit.Placed) int {
			if ax, ay := allowed(x.Record), allowed(y.Record); ax != ay {
				return map[bool]int{true: 1, false: -1}[ax]
			}
			return x.Record.Time.Compare(y.Record.Time)
		})
		omitted = len(out) - audit.MaxElsewhere
		out = slices.Delete(out, 0, omitted)
	}
	slices.SortStableFunc(out, func(x, y audit.Placed) int { return x.Record.Time.Compare(y.Record.Time) })
	return out, logs, omitted, nil
}

// allowed reports whether r is a decision that let something happen (a release or a file
// allowed, a handover done).
func allowed(r audit.Record) bool {
	return r.Decision == "allow" || r.Decision == "done"
}
