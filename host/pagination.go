package host

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/wire"
)

// One pagination for every list of the host (console.list, network.list). A cursor is an
// opaque random name (never derived from what it points at) for where a page of a list ended:
// the session, the list, the filters, and the fingerprint of the collection it was made on
// (its document's generation). It lives control.CursorTTL, and at most control.MaxCursors
// live at once (the oldest goes first). A cursor of another session, list or filters, an
// expired or unknown one, is PAGINATION_CURSOR_INVALID; one whose collection changed since —
// the page loaded another document, or entries it had not reached were dropped — is
// PAGINATION_CURSOR_STALE. Entries added after it are not a change: the next page has them.

// cursorTable holds the live cursors. The zero value is ready.
type cursorTable struct {
	mu  sync.Mutex
	m   map[string]*cursor
	now func() time.Time // nil: time.Now
}

type cursor struct {
	session, list, filter string
	gen                   uint64 // the collection's generation
	after                 uint64 // the seq of the last entry given
	made                  time.Time
}

func (t *cursorTable) clock() time.Time {
	if t.now != nil {
		return t.now()
	}
	return time.Now()
}

// issue makes a cursor for the page of list (with filter) of session that ended at after.
func (t *cursorTable) issue(session, list, filter string, gen, after uint64) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock()
	if t.m == nil {
		t.m = map[string]*cursor{}
	}
	for id, c := range t.m {
		if now.Sub(c.made) > control.CursorTTL {
			delete(t.m, id)
		}
	}
	for len(t.m) >= control.MaxCursors {
		oldest := ""
		for id, c := range t.m {
			if oldest == "" || c.made.Before(t.m[oldest].made) {
				oldest = id
			}
		}
		delete(t.m, oldest)
	}
	id := "c" + rand.Text()
	t.m[id] = &cursor{session: session, list: list, filter: filter, gen: gen, after: after, made: now}
	return id
}

// resume is where the cursor id says a page of list (with filter) of session starts: after
// the entry of seq after. gen is the collection's generation now; dropped the seq of the
// newest entry it dropped. No cursor ("") starts at the beginning.
func (t *cursorTable) resume(id, session, list, filter string, gen, dropped uint64) (uint64, error) {
	if id == "" {
		return 0, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.m[id]
	switch {
	case c == nil:
		return 0, wire.Errorf(wire.CodeCursorInvalid, "cursor %q is not a live cursor (unknown, expired after %s, or one of the oldest when more than %d were live)",
			clip.Text(id, 40), control.CursorTTL, control.MaxCursors)
	case t.clock().Sub(c.made) > control.CursorTTL:
		delete(t.m, id)
		return 0, wire.Errorf(wire.CodeCursorInvalid, "cursor %q expired (a cursor lives %s)", clip.Text(id, 40), control.CursorTTL)
	case c.session != session || c.list != list || c.filter != filter:
		return 0, wire.Errorf(wire.CodeCursorInvalid, "cursor %q was given for another session, list or filters (%s of session %q, %s)",
			clip.Text(id, 40), c.list, c.session, filterText(c.filter))
	case c.gen != gen:
		return 0, wire.Errorf(wire.CodeCursorStale, "the %s of session %q changed since the cursor was given: the page loaded another document", list, session)
	case dropped > c.after:
		return 0, wire.Errorf(wire.CodeCursorStale, "the %s of session %q changed since the cursor was given: entries it had not reached were dropped (the list keeps the newest %d)", list, session, control.MaxLogEntries)
	}
	return c.after, nil
}

func filterText(f string) string {
	if f == "" {
		return "no filter"
	}
	return "filter " + f
}
