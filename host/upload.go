package host

import (
	"context"
	"strings"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/filestore"
	"github.com/headless-dev/headless/internal/wire"
)

// Upload attaches a file a person added ('headless files add', approved at brokerd's prompt)
// to the file input of ref (issue 44). The agent names a file of the store, never a path
// (filestore.ValidName); the host sends it only when brokerd holds the person's approval of
// that name and the store's file has exactly the approved bytes (size and SHA-256, read
// without following a link: filestore.Store.Open), and only into an <input type=file> of the
// session's last snapshot, through DOM.setFileInputFiles (no script of the page or of the
// host's). Refused like every verb that runs a page's handlers while a typed password may be
// on it (SECRET_ON_PAGE).
func (h *Host) Upload(ctx context.Context, p control.UploadParams) (control.UploadResult, error) {
	if err := filestore.ValidName(p.Name); err != nil {
		return control.UploadResult{}, err
	}
	r := control.UploadResult{Ref: p.Ref, Name: p.Name}
	err := h.onElement(ctx, p.Session, p.Ref, func(b *cdp.Browser, s *session, t snapshot.Target) error {
		r.Session = s.name
		if t.Kind != "input" || !strings.EqualFold(t.Type, "file") {
			return wire.Errorf(wire.CodeNotAFileInput, "ref %s is a %s, not a file input", p.Ref, clip.Text(strings.TrimSpace(t.Kind+" "+t.Type), 64))
		}
		approved, err := h.approvedFile(ctx, p.Name)
		if err != nil {
			return err
		}
		f, err := filestore.Store{Runtime: h.o.Layout.Runtime}.Open(p.Name)
		if err != nil {
			return err
		}
		if f.Size != approved.Size || f.SHA256 != approved.SHA256 {
			return wire.Errorf(wire.CodeFileChanged, "file %q of the store is not the one the person approved (%d bytes, SHA-256 %s; the store's has %d bytes, SHA-256 %s): nothing was sent",
				p.Name, approved.Size, approved.SHA256, f.Size, f.SHA256)
		}
		s.drain()
		if err := b.Call(ctx, s.sid, "DOM.setFileInputFiles", map[string]any{"files": []string{f.Path}, "backendNodeId": t.BackendNodeID}, nil); err != nil {
			return h.nodeErr(err)
		}
		// The input's change handler may send it at once (an upload on selection).
		s.settle(ctx)
		r.Bytes, r.SHA256, r.Uploaded = f.Size, f.SHA256, true
		return nil
	})
	if err != nil {
		return control.UploadResult{}, err
	}
	return r, nil
}

// approvedFile is brokerd's record of the person's approval of name, for this host's store.
func (h *Host) approvedFile(ctx context.Context, name string) (brokerapi.FileEntry, error) {
	var l brokerapi.FileList
	if err := h.withBroker(ctx, func(c *brokerapi.Client) (err error) {
		l, err = c.Files(ctx)
		return err
	}); err != nil {
		return brokerapi.FileEntry{}, err
	}
	var names []string
	for _, f := range l.Files {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	have := "none"
	if len(names) > 0 {
		have = strings.Join(names, ", ")
	}
	return brokerapi.FileEntry{}, wire.Errorf(wire.CodeFileUnknown, "no file %q was added by the person (the files they added: %s)", name, clip.Text(have, 2048))
}
