package host

import (
	"encoding/json"
	"sync"

	"github.com/headless-dev/headless/host/cdp"
)

// A request the browser holds (Fetch.requestPaused on the browser target) names the frame
// that made it: the session's main frame (whose id is its page's target id), a frame inside
// it, or a worker of it (which names the page's frame). frameSet follows the frames of a
// session's page from its Page events, so that a held request can be told to be the
// session's (the Basic answer goes only with a session's own requests: basicauth.go).

// maxPageFrames bounds the frames followed per page; past it the oldest are forgotten (their
// requests are then no session's: they get no Basic answer, nothing more).
const maxPageFrames = 512

// frameSet is the frames attached under a session's page. Written by the event reader.
type frameSet struct {
	mu    sync.Mutex
	ids   map[string]bool
	order []string
}

// event follows Page.frameAttached and Page.frameDetached.
func (f *frameSet) event(ev cdp.Event) {
	var p struct {
		FrameID string `json:"frameId"`
	}
	if json.Unmarshal(ev.Params, &p) != nil || p.FrameID == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if ev.Method == "Page.frameDetached" {
		delete(f.ids, p.FrameID)
		return
	}
	if f.ids == nil {
		f.ids = map[string]bool{}
	}
	if !f.ids[p.FrameID] {
		f.ids[p.FrameID] = true
		f.order = append(f.order, p.FrameID)
	}
	for len(f.order) > maxPageFrames {
		delete(f.ids, f.order[0])
		f.order = f.order[1:]
	}
}

func (f *frameSet) has(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ids[id]
}

func (f *frameSet) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids, f.order = nil, nil
}

// sessionOfFrame is the session whose page made a request of frame id: its main frame, a
// frame inside it, or one of its workers (nil: none). Like sessionOfTarget, never s.mu.
func (h *Host) sessionOfFrame(id string) *session {
	if s := h.sessionOfTarget(id); s != nil || id == "" {
		return s
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.sessions {
		s.pagesMu.Lock()
		has := s.cur != nil && s.cur.frames.has(id)
		s.pagesMu.Unlock()
		if has {
			return s
		}
	}
	return nil
}
