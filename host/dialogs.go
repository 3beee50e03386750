package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/wire"
)

// Dialogs (issue 44): alert, confirm, prompt and beforeunload are held, not dismissed.
//
//   - A dialog that opens on a session's page is held for the agent and reported by the verb
//     that caused it (its page result), by snapshot (which shows it instead of the page: a
//     dialog blocks the page's renderer, so nothing else can be read) and by wait and every
//     verb that needs the page (DIALOG_OPEN): its type and message (and a prompt's default),
//     the page's words, bounded (control.MaxDialogText) and untrusted, in answers the echo
//     scan reads as every answer (a page that shows a released secret in a dialog is
//     discarded: SECRET_ON_PAGE).
//   - 'dialog accept [--text T]' and 'dialog dismiss' answer it; visit, back, forward and
//     reload dismiss it (the session leaves the page). One left unanswered for DialogHold is
//     dismissed by the host, and the next verb on that page says so ("dismissed":
//     "unanswered"). A page that opens another dialog within DialogHold of one the host
//     dismissed unanswered is stopped (a page of dialog loops would hold its renderer, and a
//     neighbour sharing it, for ever); each dialog also spends DialogCost of the page's
//     budget (pageguard.go).
//   - While a sign-in or a journey holds the session, its pages' dialogs are dismissed as
//     they open (nobody could answer them).
//   - Accepting is refused while the document a secret was typed into is shown (SECRET_ON_PAGE):
//     a dialog holds the renderer, so the host cannot look whether the field holds the
//     password again, and an accept (with the agent's text, into a prompt) hands the page's
//     script the go-ahead that the edit-and-resubmit oracle of taint.go needs. Dismissing is
//     what the host itself does: allowed.
//   - A prompt's answer is the agent's own text, as fill's is: not a secret (the agent never
//     has one), bounded, never logged; whatever the page sends with it passes the network
//     guard as every request does (wayout.go).

// DialogHold is how long a dialog waits for an answer before the host dismisses it.
const DialogHold = 20 * time.Second

// dialogState is a window's dialog; guarded by the session's pagesMu.
type dialogState struct {
	open    *control.Dialog
	seq     uint64        // counts the dialogs opened: the hold's timer and the watchers name one
	wake    chan struct{} // closed when the next dialog opens
	missed  *control.Dialog
	expired time.Time // when the host last dismissed one unanswered
	stop    func() bool
}

func (d *dialogState) stopTimer() {
	if d.stop != nil {
		d.stop()
		d.stop = nil
	}
}

// report is the dialog to show: the open one, else the last one the host dismissed
// unanswered (forgotten once reported when consume).
func (d *dialogState) report(consume bool) *control.Dialog {
	if d.open != nil {
		c := *d.open
		return &c
	}
	if d.missed == nil {
		return nil
	}
	c := *d.missed
	if consume {
		d.missed = nil
	}
	return &c
}

// errDialogOpened is the cause of a verb's context ended by a dialog opening (untilDialog).
var errDialogOpened = errors.New("a dialog opened on the page")

// dialogOpened holds a dialog of window t of session s (on the reader, pagesMu held).
func (h *Host) dialogOpened(b *cdp.Browser, s *session, t *tab, ev cdp.Event) {
	var p struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Default string `json:"defaultPrompt"`
	}
	json.Unmarshal(ev.Params, &p)
	d := &t.dialog
	d.stopTimer()
	d.seq++
	seq := d.seq
	dl := &control.Dialog{Type: clip.Text(p.Type, 16), Message: clip.Text(p.Message, control.MaxDialogText), Open: true}
	if p.Type == "prompt" {
		dl.Default = clip.Text(p.Default, control.MaxDialogText)
	}
	d.open = dl
	if d.wake != nil {
		close(d.wake)
		d.wake = nil
	}
	answer := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Call(ctx, t.sid, "Page.handleJavaScriptDialog", map[string]any{"accept": false}, nil)
	}
	switch {
	case s.dialogsNow.Load():
		// A sign-in or a journey holds the session: nobody could answer.
		d.open = nil
		go answer()
	case !d.expired.IsZero() && time.Since(d.expired) < DialogHold:
		d.open = nil
		h.o.Log.Warn("a page opened a dialog again right after one was dismissed unanswered: stopping it", "session", s.name)
		b.StopSession(t.sid, &pageStoppedError{why: fmt.Sprintf("it opened a dialog again within %v of one the host dismissed unanswered", DialogHold)})
	default:
		d.stop = h.o.AfterFunc(DialogHold, func() { h.expireDialog(b, s, t, seq) })
	}
}

// dialogClosed notes that window t's dialog went (answered, or its page left it).
func dialogClosed(t *tab) {
	t.dialog.stopTimer()
	t.dialog.open = nil
}

// expireDialog dismisses dialog seq of window t if it still waits.
func (h *Host) expireDialog(b *cdp.Browser, s *session, t *tab, seq uint64) {
	s.pagesMu.Lock()
	d := &t.dialog
	if d.open == nil || d.seq != seq {
		s.pagesMu.Unlock()
		return
	}
	missed := *d.open
	missed.Open, missed.Dismissed = false, "unanswered"
	d.missed, d.open, d.expired, d.stop = &missed, nil, time.Now(), nil
	s.pagesMu.Unlock()
	h.o.Log.Info("a dialog was dismissed unanswered", "session", s.name, "after", DialogHold)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b.Call(ctx, t.sid, "Page.handleJavaScriptDialog", map[string]any{"accept": false}, nil)
}

// openDialog is the dialog open on the session's current page (nil: none), and its number.
func (s *session) openDialog() (*control.Dialog, uint64) {
	s.pagesMu.Lock()
	defer s.pagesMu.Unlock()
	if s.cur == nil || s.cur.dialog.open == nil {
		return nil, 0
	}
	c := *s.cur.dialog.open
	return &c, s.cur.dialog.seq
}

// untilDialog is ctx ended (cause errDialogOpened) when a dialog after number after opens on
// the session's current page: a verb's calls into the page would wait on it (the dialog holds
// the renderer), so they stop, and the verb answers with the dialog.
func (s *session) untilDialog(ctx context.Context, after uint64) (context.Context, context.CancelFunc) {
	s.pagesMu.Lock()
	t := s.cur
	var ch <-chan struct{}
	switch d := &t.dialog; {
	case d.open != nil && d.seq > after:
		ch = closedCh
	default:
		if d.wake == nil {
			d.wake = make(chan struct{})
		}
		ch = d.wake
	}
	s.pagesMu.Unlock()
	dctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-ch:
			cancel(errDialogOpened)
		case <-dctx.Done():
		}
	}()
	return dctx, func() { cancel(nil) }
}

var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// dialogOpen is DIALOG_OPEN for a verb that needs the page while d holds it.
func dialogOpen(d *control.Dialog) error {
	return wire.Errorf(wire.CodeDialogOpen, "a %s dialog is open on the page (its words, untrusted: %q); the page cannot be used until it is answered", d.Type, d.Message)
}

// refuseDialog is DIALOG_OPEN when a dialog holds the session's current page.
func (s *session) refuseDialog() error {
	if d, _ := s.openDialog(); d != nil {
		return dialogOpen(d)
	}
	return nil
}

// dismissForNavigation dismisses a dialog of the current page before a navigation the agent
// asked for (the session leaves the page); the result reports it.
func (h *Host) dismissForNavigation(ctx context.Context, b *cdp.Browser, s *session) *control.Dialog {
	d, _ := s.openDialog()
	if d == nil {
		return nil
	}
	b.Call(ctx, s.sid, "Page.handleJavaScriptDialog", map[string]any{"accept": false}, nil)
	s.pagesMu.Lock()
	dialogClosed(s.cur)
	s.pagesMu.Unlock()
	d.Open, d.Dismissed = false, "navigation"
	return d
}

// Dialog answers the dialog open on the session's current page: accept (with p.Text for a
// prompt) or dismiss, then answers where the session is (a confirm's page may navigate, an
// accepted beforeunload lets the navigation it held go on).
func (h *Host) Dialog(ctx context.Context, p control.DialogParams) (control.PageResult, error) {
	if len(p.Text) > control.MaxDialogText {
		return control.PageResult{}, wire.Errorf(wire.CodeInvalidArgument, "a prompt's answer is longer than %d bytes", control.MaxDialogText)
	}
	if p.Text != "" && !p.Accept {
		return control.PageResult{}, wire.Errorf(wire.CodeInvalidArgument, "only accepting a dialog takes a text (a prompt's answer)")
	}
	b, s, unlock, err := h.lockSession(ctx, p.Session)
	if err != nil {
		return control.PageResult{}, err
	}
	defer unlock()
	d, seq := s.openDialog()
	if d == nil {
		return control.PageResult{}, wire.Errorf(wire.CodeNoDialog, "no dialog is open on the page of session %q", s.name)
	}
	if p.Text != "" && d.Type != "prompt" {
		return control.PageResult{}, wire.Errorf(wire.CodeInvalidArgument, "the open dialog is a %s: only a prompt takes a text", d.Type)
	}
	if p.Accept && s.typedShown() {
		return control.PageResult{}, wire.Errorf(wire.CodeSecretOnPage,
			"the page shows the document a password was typed into: a dialog on it can only be dismissed (the host cannot look at the typed field while the dialog holds the page)")
	}
	s.drain()
	t0 := time.Now()
	args := map[string]any{"accept": p.Accept}
	if p.Accept && d.Type == "prompt" {
		args["promptText"] = p.Text
	}
	if err := b.Call(ctx, s.sid, "Page.handleJavaScriptDialog", args, nil); err != nil {
		return control.PageResult{}, h.browserErr(err)
	}
	s.pagesMu.Lock()
	if s.cur.dialog.seq == seq {
		dialogClosed(s.cur)
	}
	s.pagesMu.Unlock()
	dctx, cancel := s.untilDialog(ctx, seq)
	defer cancel()
	s.settle(dctx)
	if err := h.navErr(s, t0); err != nil {
		return control.PageResult{}, err
	}
	clear(s.refs)
	h.awaitClosing(dctx, b, s) // a beforeunload the close asked, accepted: the window goes now
	return h.pageResult(ctx, b, s)
}

// typedShown reports whether the document shown is one the host typed a secret into (s.mu
// held): the taint's document is the one the page committed last.
func (s *session) typedShown() bool {
	if len(s.taint) == 0 {
		return false
	}
	d := s.loaded.Load()
	return d == nil || d.document == s.taintDoc
}

// dialogsNowKey marks a verb's context: while it holds the session, its pages' dialogs are
// dismissed as they open (a sign-in, a journey: nobody could answer them).
type dialogsNowKey struct{}

// withDialogsNow is ctx for such a verb (the method table's).
func withDialogsNow(ctx context.Context) context.Context {
	return context.WithValue(ctx, dialogsNowKey{}, true)
}

func dialogsNow(ctx context.Context) bool {
	v, _ := ctx.Value(dialogsNowKey{}).(bool)
	return v
}

// dialogHeld reports whether a dialog holds the session's current page.
func (s *session) dialogHeld() bool {
	d, _ := s.openDialog()
	return d != nil
}

// reportDialog is the dialog a verb's result shows for the current page: the open one, else
// the last one the host dismissed unanswered (once).
func (s *session) reportDialog() *control.Dialog {
	s.pagesMu.Lock()
	defer s.pagesMu.Unlock()
	if s.cur == nil {
		return nil
	}
	return s.cur.dialog.report(true)
}

// heldResult is where the session is while a dialog holds its page: the committed history
// entry (the browser's own record: a navigation a beforeunload dialog holds has not
// committed, and the tab's URL would already name its target).
func (h *Host) heldResult(ctx context.Context, b *cdp.Browser, s *session) (control.PageResult, error) {
	var hist struct {
		Current int `json:"currentIndex"`
		Entries []struct {
			URL   string `json:"url"`
			Title string `json:"title"`
		} `json:"entries"`
	}
	if err := b.Call(ctx, s.sid, "Page.getNavigationHistory", nil, &hist); err != nil || hist.Current < 0 || hist.Current >= len(hist.Entries) {
		return h.result(ctx, b, s)
	}
	e := hist.Entries[hist.Current]
	return control.PageResult{Session: s.name, URL: clip.Text(e.URL, 2048), Title: clip.Text(e.Title, 256)}, nil
}
