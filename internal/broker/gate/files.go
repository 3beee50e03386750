package gate

// Files a person chose for uploads (issue 44). 'headless files add PATH' (the CLI the person
// runs) copies the file into the store of its runtime dir (package filestore), hashes what it
// wrote, and asks brokerd to approve that name, size and SHA-256 (files.approve): the person
// is asked at the presence prompt, as for a release, and the approval is audited ("file_add").
// brokerd keeps what the person approved in files.json of its per-user state directory, which
// no process of the user can reach; the host attaches a file of the store to a page only when
// its bytes have the SHA-256 recorded here under its name (host/upload.go). So no agent without
// a shell — over MCP, or allowed only 'headless' commands — can send a file the person did not
// choose: its files.approve is a prompt the agent cannot answer, and a file put in the store
// another way has no record.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/broker/seal"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/filestore"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/lockfile"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/wire"
)

// Bounds of files.json.
const (
	filesName       = "files.json"
	filesLock       = "files.lock"
	maxFilesFile    = 1 << 20
	maxFileRecords  = 1024 // every store's together; those of stores that are gone are dropped
	filesFileFormat = 1
)

// fileRecord is one approved file of one store (the store's directory: a runtime dir's).
type fileRecord struct {
	Store string `json:"store"`
	brokerapi.FileEntry
}

// errFilesUnusable: files.json is not as brokerd writes it.
var errFilesUnusable = wire.SentinelHint(wire.CodeBrokerUntrusted, "brokerd's record of the files you approved for uploads is unusable",
	"it is brokerd's own file in "+hardening.StateDir+"/UID, which no program of yours can write: as root, move it away (every file must then be added again) and restart brokerd")

// fileBook reads and changes files.json in the state directory of lp (the known sign-in
// paths' directory: the same checks).
func (s *Server) fileBook() (*LoginPaths, string, error) {
	if err := s.trusted("no file was approved"); err != nil {
		return nil, "", err
	}
	if s.FileStore == "" {
		return nil, "", wire.Errorf(wire.CodeInternal, "this brokerd has no file store")
	}
	return s.Paths, s.FileStore, nil
}

// files is every record of files.json (lp.mu held).
func loadFiles(lp *LoginPaths) ([]fileRecord, error) {
	if err := lp.checkDir(); err != nil {
		return nil, err
	}
	path := filepath.Join(lp.dir, filesName)
	b, _, ok, err := readStateFile(path, lp.uid, maxFilesFile, errFilesUnusable)
	if err != nil || !ok {
		return nil, err
	}
	var file struct {
		Version int          `json:"version"`
		Files   []fileRecord `json:"files"`
	}
	if err := wire.DecodeStrict(bytes.TrimSpace(b), &file); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errFilesUnusable, path, err)
	}
	if file.Version != filesFileFormat || len(file.Files) > maxFileRecords {
		return nil, fmt.Errorf("%w: %s: version %d, %d records", errFilesUnusable, path, file.Version, len(file.Files))
	}
	for _, r := range file.Files {
		if filestore.ValidName(r.Name) != nil || validDigest(r.SHA256) != nil || r.Size < 0 || r.Size > filestore.MaxFileSize || !filepath.IsAbs(r.Store) {
			return nil, fmt.Errorf("%w: %s: a record that brokerd would not write", errFilesUnusable, path)
		}
	}
	return file.Files, nil
}

// updateFiles changes files.json under its lock (another brokerd of the user may change it
// too), dropping the records of stores that are gone (a runtime dir removed at logout, or a
// test's).
func updateFiles(lp *LoginPaths, fn func([]fileRecord) ([]fileRecord, error)) error {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if err := lp.checkDir(); err != nil {
		return err
	}
	unlock, err := lockfile.Wait(filepath.Join(lp.dir, filesLock), pathsLockWait)
	if err != nil {
		return fmt.Errorf("%w: %w", errFilesUnusable, err)
	}
	defer unlock()
	atomicfile.RemoveLeftovers(filepath.Join(lp.dir, filesName)) // a killed write's, as the paths file's
	rs, err := loadFiles(lp)
	if err != nil {
		return err
	}
	rs = slices.DeleteFunc(rs, func(r fileRecord) bool {
		var gone bool
		hardening.AsUser(func() {
			_, err := os.Lstat(r.Store)
			gone = errors.Is(err, fs.ErrNotExist)
		})
		return gone
	})
	if rs, err = fn(rs); err != nil {
		return err
	}
	if len(rs) > maxFileRecords {
		return wire.Errorf(wire.CodeFilesFull, "brokerd keeps at most %d approved files, every runtime dir's together", maxFileRecords)
	}
	b, err := json.Marshal(struct {
		Version int          `json:"version"`
		Files   []fileRecord `json:"files"`
	}{filesFileFormat, rs})
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(lp.dir, filesName), b)
}

// storeFiles is the approved files of store, oldest first.
func storeFiles(lp *LoginPaths, store string) ([]brokerapi.FileEntry, error) {
	lp.mu.Lock()
	rs, err := loadFiles(lp)
	lp.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := []brokerapi.FileEntry{}
	for _, r := range rs {
		if r.Store == store {
			out = append(out, r.FileEntry)
		}
	}
	return out, nil
}

func validDigest(h string) error {
	if b, err := hex.DecodeString(h); err != nil || len(b) != 32 || hex.EncodeToString(b) != h {
		return wire.Errorf(wire.CodeInvalidArgument, "sha256 must be 64 lower-case hex digits")
	}
	return nil
}

// approveFile asks the person to approve a staged file (files.approve) and records it.
func (s *Server) approveFile(ctx context.Context, peer Peer, p brokerapi.FileApproveParams) (e brokerapi.FileEntry, err error) {
	ar := auditwriter.Record{Detail: fileDetail(p.Name, p.Size, p.SHA256)}
	defer func() { s.record("file_add", err, peer, ar) }()
	lp, store, err := s.fileBook()
	if err != nil {
		return e, err
	}
	if err := filestore.ValidName(p.Name); err != nil {
		return e, err
	}
	if err := validDigest(p.SHA256); err != nil {
		return e, err
	}
	if p.Size < 0 || p.Size > filestore.MaxFileSize {
		return e, wire.Errorf(wire.CodeInvalidArgument, "a file of the store is at most %d bytes", filestore.MaxFileSize)
	}
	// Room first, before anyone is asked: the other files of the store (one of this name is
	// replaced).
	have, err := storeFiles(lp, store)
	if err != nil {
		return e, err
	}
	if err := roomFor(have, p.Name, p.Size); err != nil {
		return e, err
	}
	if err := s.reserve("no file was approved"); err != nil {
		return e, err
	}
	req := presence.Request{File: &presence.File{Name: p.Name, Size: p.Size, SHA256: p.SHA256,
		Source: procstat.Clean(p.Source, brokerapi.MaxFileSource)}, PID: peer.PID}
	if chain := s.chainOf(peer); len(chain) > 0 {
		req.Exe, req.Agent = cmp.Or(chain[0].Exe, chain[0].Comm), chain[1:]
	}
	e = brokerapi.FileEntry{Name: p.Name, Size: p.Size, SHA256: p.SHA256, Added: s.now().UTC()}
	keep := func(context.Context) error {
		return updateFiles(lp, func(rs []fileRecord) ([]fileRecord, error) {
			rs = slices.DeleteFunc(rs, func(r fileRecord) bool { return r.Store == store && r.Name == p.Name })
			var mine []brokerapi.FileEntry
			for _, r := range rs {
				if r.Store == store {
					mine = append(mine, r.FileEntry)
				}
			}
			if err := roomFor(mine, p.Name, p.Size); err != nil {
				return nil, err
			}
			return append(rs, fileRecord{Store: store, FileEntry: e}), nil
		})
	}
	if sp, ok := s.Presence.(sealer); ok {
		err = s.passphraseApproves(ctx, sp, req, keep)
	} else {
		err = s.Presence.Do(ctx, req, keep)
	}
	if ctx.Err() != nil {
		return e, wire.Errorf(wire.CodeCancelled, "the requester withdrew while the person was asked; no file was approved")
	}
	if errors.Is(err, presence.ErrDenied) {
		return e, wire.Errorf(wire.CodePresenceDenied, "the person did not approve the file at the prompt; nothing was added")
	}
	return e, err
}

// passphraseApproves is the passphrase provider's approval: the person types the passphrase
// their credentials are sealed with (checked by opening the oldest of them), then keep runs.
// With no sealed credential there is no passphrase to check: nobody can approve, so nothing is.
func (s *Server) passphraseApproves(ctx context.Context, sp sealer, req presence.Request, keep func(context.Context) error) error {
	ref, err := s.sealRef(ctx, "", "")
	if err != nil {
		return err
	}
	defer credential.Zero(ref.text)
	if ref.text == nil {
		return wire.Errorf(wire.CodePresenceUnavail, "with the passphrase provider a file is approved with your passphrase, and no credential sealed with one is saved yet to check it against; nothing was added").
			WithHint("save a credential first (headless credentials add …), which chooses the passphrase")
	}
	err = sp.Ask(ctx, req, false, func(pass []byte) error {
		pt, err := seal.Open(ref.text, s.Key, pass, ref.b)
		credential.Zero(pt)
		if errors.Is(err, seal.ErrWrongPassphrase) {
			return fmt.Errorf("%w: that is not the passphrase your saved credentials are sealed with", presence.ErrTryAgain)
		}
		return err
	})
	if err != nil {
		return err
	}
	return keep(ctx)
}

// roomFor refuses a file of size named name (replacing one of that name) that would take the
// store over its bounds.
func roomFor(have []brokerapi.FileEntry, name string, size int64) error {
	n, total := 1, size
	for _, f := range have {
		if f.Name != name {
			n, total = n+1, total+f.Size
		}
	}
	switch {
	case n > filestore.MaxFiles:
		return wire.Errorf(wire.CodeFilesFull, "the store holds %d files, the most it may; no one was asked", filestore.MaxFiles)
	case total > filestore.MaxStoreBytes:
		return wire.Errorf(wire.CodeFilesFull, "the store's files would take %d bytes, over the %d MiB it may hold; no one was asked", total, filestore.MaxStoreBytes>>20)
	}
	return nil
}

// listFiles answers files.list.
func (s *Server) listFiles() (brokerapi.FileList, error) {
	lp, store, err := s.fileBook()
	if err != nil {
		return brokerapi.FileList{}, err
	}
	files, err := storeFiles(lp, store)
	return brokerapi.FileList{Files: files}, err
}

// removeFile answers files.remove: brokerd forgets the approval (audited); the caller removes
// the file from the store.
func (s *Server) removeFile(peer Peer, p brokerapi.FileRemoveParams) (e brokerapi.FileEntry, err error) {
	defer func() {
		s.record("file_remove", err, peer, auditwriter.Record{Detail: fileDetail(p.Name, e.Size, e.SHA256)})
	}()
	lp, store, err := s.fileBook()
	if err != nil {
		return e, err
	}
	if err := filestore.ValidName(p.Name); err != nil {
		return e, err
	}
	found := false
	err = updateFiles(lp, func(rs []fileRecord) ([]fileRecord, error) {
		i := slices.IndexFunc(rs, func(r fileRecord) bool { return r.Store == store && r.Name == p.Name })
		if i < 0 {
			return rs, nil
		}
		e, found = rs[i].FileEntry, true
		return slices.Delete(rs, i, i+1), nil
	})
	if err == nil && !found {
		err = wire.Errorf(wire.CodeFileUnknown, "no file %q was approved for this store", p.Name)
	}
	return e, err
}

// fileDetail is an audit record's account of a file: name, size, digest.
func fileDetail(name string, size int64, sum string) string {
	return fmt.Sprintf("file %q, %d bytes, sha256 %s", procstat.Clean(name, filestore.MaxName), size, procstat.Clean(sum, 64))
}
