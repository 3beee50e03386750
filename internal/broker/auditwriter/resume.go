package auditwriter

// Resuming the chain: the last record of the newest non-empty generation, and a torn last
// record of the live file recovered (see the package doc).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/wire"
)

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
	f, err := os.OpenFile(l.path, os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("audit: recover the torn end of %s: %w", name, err)
	}
	defer f.Close()
	at := t.Off
	var detail string
	// Whole but for its newline, and brokerd's: the next record of the chain, with its MAC
	// when the log is keyed (none when it is not yet).
	if r, err := audit.Parse(t.Tail); err == nil && r.Seq == l.seq+1 && r.Prev == l.prev &&
		(l.keyed && audit.VerifyMAC(l.key, r) || !l.keyed && r.MAC == "") {
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
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
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
