package cdp

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// sessionGone fails the pending calls of session sid with why, and every later call to it.
func (b *Browser) sessionGone(sid string, why error) {
	if sid == "" {
		return
	}
	b.mu.Lock()
	if len(b.gone) >= maxGone {
		for k := range b.gone {
			delete(b.gone, k)
			break
		}
	}
	if _, ok := b.gone[sid]; !ok {
		b.gone[sid] = why
	}
	if ch := b.goneCh[sid]; ch != nil {
		close(ch)
		delete(b.goneCh, sid)
	}
	var fail []chan reply
	for id, s := range b.psess {
		if s == sid {
			fail = append(fail, b.pending[id])
			delete(b.pending, id)
			delete(b.psess, id)
		}
	}
	b.mu.Unlock()
	for _, ch := range fail {
		ch <- reply{err: why}
	}
}

// StopSession ends session sid's page at once, without waiting for it: every pending and
// later call to it fails with why (unless it was already gone), and its renderer is crashed
// (Page.crash is served off the page's main thread, so a page whose script never yields, or
// that floods the browser, still dies). StopWait waits for the crash to be done.
func (b *Browser) StopSession(sid string, why error) {
	if sid == "" {
		return
	}
	id := b.next.Add(1)
	msg, err := json.Marshal(message{ID: id, Method: "Page.crash", SessionID: sid})
	if err != nil {
		return
	}
	ch := make(chan reply, 1)
	b.mu.Lock()
	if _, ok := b.stopping[sid]; ok || b.err != nil {
		b.mu.Unlock()
		return
	}
	done, crashed := make(chan struct{}), make(chan struct{})
	b.stopping[sid] = done
	b.crashed[sid] = crashed
	b.pending[id] = ch // not counted as the session's: its failing must not answer the crash
	b.mu.Unlock()
	b.sessionGone(sid, why)
	go func() {
		defer close(done)
		b.quiet(sid)
		b.wmu.Lock()
		_, werr := b.w.Write(append(msg, 0))
		b.wmu.Unlock()
		if werr == nil {
			t := time.NewTimer(stopWait)
			select {
			case <-ch: // answered by the crash itself
			case <-crashed: // Chromium seldom answers a Page.crash: the crash is the answer
			case <-t.C:
			case <-b.done:
			}
			t.Stop()
		}
		b.mu.Lock()
		delete(b.stopping, sid)
		delete(b.crashed, sid)
		delete(b.pending, id)
		b.mu.Unlock()
	}()
}

// crashDone tells StopSession's wait that session sid's page has crashed or gone (on the
// reader).
func (b *Browser) crashDone(sid string) {
	b.mu.Lock()
	if ch := b.crashed[sid]; ch != nil {
		close(ch)
		delete(b.crashed, sid)
	}
	b.mu.Unlock()
}

// Quiet stops the scripts of session sid's page and dismisses the dialogs it has open, so
// that the page can be closed (or crashed) safely: Chromium 156 ends the whole browser
// (SIGSEGV) when a page goes while a dialog of it waits for a DevTools answer, and a page
// can keep one open at all times (alert, confirm, prompt in a loop). Its scripts are stopped
// first (Emulation.setScriptExecutionDisabled and Runtime.terminateExecution take effect as
// soon as the script resumes, even one that never yields), then each open dialog is
// dismissed until none is showing. It works on a session already gone (StopSession) and
// takes about a second at most.
func (b *Browser) Quiet(sid string) {
	if sid != "" {
		b.quiet(sid)
	}
}

func (b *Browser) quiet(sid string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	stopped := make(chan struct{}) // both calls answered: no script of the page runs again
	go func() {
		defer close(stopped)
		var wg sync.WaitGroup
		for _, m := range []struct {
			method string
			params any
		}{{"Emulation.setScriptExecutionDisabled", map[string]any{"value": true}}, {"Runtime.terminateExecution", nil}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.callAnyway(ctx, sid, m.method, m.params)
			}()
		}
		wg.Wait()
	}()
	dismiss := func() error {
		return b.callAnyway(ctx, sid, "Page.handleJavaScriptDialog", map[string]any{"accept": false})
	}
	for ctx.Err() == nil {
		select {
		case <-stopped:
			// What opened before the scripts stopped is dismissed; then nothing opens.
			for range 8 {
				if dismiss() != nil {
					break
				}
			}
			return
		default:
		}
		if dismiss() != nil { // none showing (or no such session): wait for the scripts to stop
			t := time.NewTimer(5 * time.Millisecond)
			select {
			case <-stopped:
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
	}
}

// ClosePage closes page target targetID, attached as session sid ("" when it is not), quieting
// it first (Quiet): the one way a page is closed.
func (b *Browser) ClosePage(ctx context.Context, sid, targetID string) error {
	b.Quiet(sid)
	return b.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": targetID}, nil)
}

// callAnyway is Call for a session that may be gone (its calls refused): not counted as the
// session's, so that its going does not answer it.
func (b *Browser) callAnyway(ctx context.Context, sessionID, method string, params any) error {
	id := b.next.Add(1)
	m := message{ID: id, Method: method, SessionID: sessionID}
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return err
		}
		m.Params = p
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return b.send(ctx, id, "", method, append(data, 0), nil)
}

// stopWait bounds the wait for a stopped page's crash.
const stopWait = 3 * time.Second

// StopWait waits until the crash of a page StopSession stopped is done (at most a few
// seconds), or ctx ends. A window opened while Chromium still crashes a page that had a dialog
// open ended the whole browser: nothing new is opened before.
func (b *Browser) StopWait(ctx context.Context, sid string) {
	b.mu.Lock()
	done := b.stopping[sid]
	b.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// SessionDone is closed when session sid can no longer be used (SessionErr says why), or when
// the browser is gone (Done).
func (b *Browser) SessionDone(sid string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, gone := b.gone[sid]; gone || sid == "" || b.err != nil {
		return closedCh
	}
	ch := b.goneCh[sid]
	if ch == nil {
		ch = make(chan struct{})
		b.goneCh[sid] = ch
	}
	return ch
}

var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// SessionErr is why session sid can no longer be used (ErrTargetCrashed, ErrDetached), or nil.
func (b *Browser) SessionErr(sid string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gone[sid]
}
