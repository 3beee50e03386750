package host

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/wire"
)

// Downloads are denied, and say so (issue 44). Every browser context of the host (the durable
// profile's and each isolated session's or journey's) has Chromium deny every download
// (Browser.setDownloadBehavior "deny": nothing is written anywhere, whatever the profile's
// preferences say). A page that starts one makes the verb that caused it answer
// DOWNLOAD_DENIED, naming the file and its origin: a visit of a download's URL at once, and a
// click, a key, a select or a step back whose page began one while it ran (what the verb did
// besides was done).

// denyDownloads has Chromium deny every download of the browser context id ("": the default
// one), with events, so that a page's try is seen.
func denyDownloads(ctx context.Context, b *cdp.Browser, id string) error {
	p := map[string]any{"behavior": "deny", "eventsEnabled": true}
	if id != "" {
		p["browserContextId"] = id
	}
	if err := b.Call(ctx, "", "Browser.setDownloadBehavior", p, nil); err != nil {
		return fmt.Errorf("deny downloads: %w", err)
	}
	return nil
}

// downloadDenied records a download a page of session s began (Page.downloadWillBegin; the
// browser denies it): called on the event reader.
func (h *Host) downloadDenied(s *session, ev cdp.Event) {
	var p struct {
		URL  string `json:"url"`
		Name string `json:"suggestedFilename"`
	}
	json.Unmarshal(ev.Params, &p)
	what := fmt.Sprintf("%q from %s", clip.Text(p.Name, 128), downloadOrigin(p.URL))
	s.lists.lastDown.Store(&what)
	s.lists.downloads.Add(1)
	h.o.Log.Info("a page began a download: denied", "session", s.name)
}

// downloadOrigin is where a download came from, for its message: an http(s) URL's origin, else
// its scheme.
func downloadOrigin(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "an unreadable URL"
	case u.Scheme == "http" || u.Scheme == "https":
		return clip.Text(u.Scheme+"://"+u.Host, 256)
	}
	return clip.Text(u.Scheme+":", 32) + " URL"
}

// errDownload answers a verb during which a page of s began a download.
func errDownload(s *session, verb string) error {
	what := "a file"
	// A visit learns of the download from its navigation's end, which may come before the
	// browser's report of the download names it: that report is waited for, briefly.
	for deadline := time.Now().Add(time.Second); s.lists.lastDown.Load() == nil && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if w := s.lists.lastDown.Load(); w != nil {
		what = *w
	}
	return wire.Errorf(wire.CodeDownloadDenied, "the page began a download of %s, which headless denies: nothing was saved (the %s itself was done)", what, verb)
}

// downloadVerbs are the methods that answer DOWNLOAD_DENIED when their session's page began a
// download while they ran (visit answers it from the navigation itself).
var downloadVerbs = map[string]string{control.MethodClick: "click", control.MethodPress: "key press",
	control.MethodSelect: "selection", control.MethodBack: "step back", control.MethodUpload: "upload",
	control.MethodForward: "step forward", control.MethodReload: "reload", control.MethodDialog: "dialog's answer",
	control.MethodPageSelect: "page selection"}

// downloadMark is how many downloads the session a request names had begun before it ran
// (-1: not a verb that answers them).
func (h *Host) downloadMark(method string, p any) int64 {
	if _, ok := downloadVerbs[method]; !ok {
		return -1
	}
	s := h.namedSession(p)
	if s == nil {
		return -1
	}
	return s.lists.downloads.Load()
}

// downloadAnswer is err, or DOWNLOAD_DENIED when the request's session began a download since
// mark.
func (h *Host) downloadAnswer(method string, p any, mark int64, err error) error {
	if err != nil || mark < 0 {
		return err
	}
	if s := h.namedSession(p); s != nil && s.lists.downloads.Load() > mark {
		return errDownload(s, downloadVerbs[method])
	}
	return nil
}

// namedSession is the session a request's params name ("" is the default one), or nil.
func (h *Host) namedSession(p any) *session {
	name, ok := sessionOf(p)
	if !ok {
		return nil
	}
	if name == "" {
		name = control.DefaultSession
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[name]
}
