package host

import (
	"sync/atomic"

	"github.com/headless-dev/headless/internal/wire"
)

// The sign-in path the person's prompt names and brokerd checks against the credential's known
// ones is the path of the document as it loaded, never the URL the page shows now: a page's
// script rewrites that at will (history.replaceState('/login') on a page the agent published
// at /u/agent/…), without a navigation. Red-team round 13 signed in that way on a published
// look-alike, past LOGIN_PATH_CHANGED, under a prompt naming "/login". A single-page app that
// routes to /login with pushState signs in at the path it loaded from, every time.

// loadedDoc is a main frame's committed document: its id ("frame/loader", as documentID) and
// its URL then.
type loadedDoc struct {
	document string
	url      string
	origin   string      // its security origin as it committed (openers.go)
	tainted  atomic.Bool // another window could script it at some moment of its life (openers.go)
}

// loadedPath is the path the document of id loaded at. A document the host did not see commit
// (its event not read yet, or another document) is DOCUMENT_CHANGED: nothing is asked.
func (s *session) loadedPath(document string) (string, error) {
	d := s.loaded.Load()
	if d == nil || d.document != document {
		return "", wire.Errorf(wire.CodeDocumentChanged, "the page's document is not the one the host saw load; nothing was asked or released")
	}
	if d.tainted.Load() {
		return "", errReachable
	}
	return pagePath(d.url), nil
}
