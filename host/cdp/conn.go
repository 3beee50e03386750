package cdp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
)

// Browser is one running Chromium.
type Browser struct {
	cmd     *exec.Cmd
	product string // set once by Launch, before b is returned
	w       *os.File
	r       *os.File
	wmu     sync.Mutex
	next    atomic.Int64

	mu       sync.Mutex
	pending  map[int64]chan reply
	psess    map[int64]string         // session of each pending call
	gone     map[string]error         // sessions that crashed or were detached, and why
	goneCh   map[string]chan struct{} // closed when a live session goes (SessionDone)
	stopping map[string]chan struct{} // StopSession's crashes, until done
	crashed  map[string]chan struct{} // closed when a page StopSession stopped has crashed or gone
	subs     map[int]func(Event)
	auths    authenticators // virtual authenticators (webauthn.go): their events reach no subscriber
	nextSub  int
	closing  bool
	err      error
	done     chan struct{} // reader finished
	exited   chan struct{} // process reaped
	exitOnce sync.Once
}

type reply struct {
	result json.RawMessage
	err    error
}

// Done is closed when the connection to the browser is gone.
func (b *Browser) Done() <-chan struct{} { return b.done }

// Err is why the browser is gone: ErrClosed, ErrCrashed (possibly wrapped), or nil while alive.
func (b *Browser) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func (b *Browser) fail(err error) {
	b.mu.Lock()
	if b.err == nil {
		if b.closing {
			b.err = ErrClosed
		} else {
			b.err = fmt.Errorf("%w: %w", ErrCrashed, err)
		}
	}
	pend := b.pending
	b.pending = map[int64]chan reply{}
	b.psess = map[int64]string{}
	for sid, ch := range b.goneCh {
		close(ch)
		delete(b.goneCh, sid)
	}
	ferr := b.err
	b.mu.Unlock()
	for _, ch := range pend {
		ch <- reply{err: ferr}
	}
}

type message struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *Error          `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

func (b *Browser) read() {
	defer close(b.done)
	br := bufio.NewReaderSize(b.r, 64<<10)
	var buf bytes.Buffer
	for {
		buf.Reset()
		skipped := ""
		for {
			chunk, err := br.ReadSlice(0)
			if buf.Len()+len(chunk) > MaxMessage {
				b.fail(errors.New("message from browser exceeds the size limit"))
				b.kill()
				return
			}
			buf.Write(chunk)
			if err == nil {
				break
			}
			if err != bufio.ErrBufferFull {
				b.fail(fmt.Errorf("pipe: %w", err))
				return
			}
			// A console message or a request event is bounded (pageevents.go): one larger
			// is read to its end without being kept.
			if method, ok := boundedPrefix(buf.Bytes()); ok && buf.Len() > MaxEvent {
				tail, err := skipMessage(br)
				if err != nil {
					b.fail(fmt.Errorf("pipe: %w", err))
					return
				}
				clear(buf.Bytes())
				if ev, ok := droppedEvent(method, tail); ok {
					b.publish(ev)
				}
				skipped = method
				break
			}
		}
		if skipped != "" {
			continue
		}
		data := bytes.TrimSuffix(buf.Bytes(), []byte{0})
		var m message
		if err := json.Unmarshal(data, &m); err != nil {
			b.fail(fmt.Errorf("malformed message from browser: %w", err))
			b.kill()
			return
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.pending[m.ID]
			delete(b.pending, m.ID)
			delete(b.psess, m.ID)
			b.mu.Unlock()
			if ch != nil {
				if m.Error != nil {
					ch <- reply{err: m.Error}
				} else {
					ch <- reply{result: bytes.Clone(m.Result)}
				}
			}
			continue
		}
		if strings.HasPrefix(m.Method, "Network.") {
			// Enabled for its service-worker bypass (host/sessions.go). A request's event can
			// carry what a page sent: only the start and end of each request, by its opaque
			// id (an action settles on the requests it started), and what 'network list'
			// shows of it (pageevents.go: method, URL, type, status, size, times; never a
			// header, a body or post data) reach the host; nothing else of the event is kept.
			if ev, ok := requestEvent(m); ok {
				b.publish(ev)
			}
			if ev, ok := networkEvent(m); ok {
				b.publish(ev) // what 'network list' shows: no header, body or post data
			}
			clear(buf.Bytes())
			clear(m.Params)
			continue
		}
		if m.Method == "Runtime.consoleAPICalled" || m.Method == "Runtime.exceptionThrown" {
			// What 'console list' shows: a level and a bounded text (pageevents.go).
			if ev, ok := consoleEvent(m); ok {
				b.publish(ev)
			}
			clear(buf.Bytes())
			clear(m.Params)
			continue
		}
		if strings.HasPrefix(m.Method, "WebAuthn.") {
			// A credential event carries the private key: only its authenticator sees it.
			b.webauthnEvent(m.Method, m.Params)
			clear(buf.Bytes())
			clear(m.Params)
			continue
		}
		if m.Method != "" {
			switch m.Method {
			case "Inspector.targetCrashed":
				b.sessionGone(m.SessionID, ErrTargetCrashed)
				b.crashDone(m.SessionID)
			case "Target.detachedFromTarget":
				var p struct {
					SessionID string `json:"sessionId"`
				}
				if json.Unmarshal(m.Params, &p) == nil {
					b.sessionGone(p.SessionID, ErrDetached)
					b.crashDone(p.SessionID)
				}
			}
			b.publish(Event{SessionID: m.SessionID, Method: m.Method, Params: bytes.Clone(m.Params)})
		}
	}
}

// publish hands ev to every subscriber, on the reader (a subscriber must not block).
func (b *Browser) publish(ev Event) {
	b.mu.Lock()
	subs := make([]func(Event), 0, len(b.subs))
	for _, f := range b.subs {
		subs = append(subs, f)
	}
	b.mu.Unlock()
	for _, f := range subs {
		f(ev)
	}
}

// The request events that reach the host: a request of a page started, or ended (finished or
// failed). Their Params hold the request's id alone.
const (
	RequestStarted = "Network.requestWillBeSent"
	RequestEnded   = "Network.loadingFinished"
	RequestFailed  = "Network.loadingFailed"
)

// RequestID is the id of a RequestStarted, RequestEnded or RequestFailed event.
func RequestID(ev Event) string {
	var id string
	json.Unmarshal(ev.Params, &id)
	return id
}

// requestEvent is m as the host sees it when m starts or ends a page's request: its method,
// session and the request's id (at most 64 bytes, as a JSON string), nothing else. A stream
// (EventSource) is not a request in flight: an action does not wait for it, and a page whose
// only requests are streams is idle (a WebSocket is no request event at all).
func requestEvent(m message) (Event, bool) {
	switch m.Method {
	case RequestStarted, RequestEnded, RequestFailed:
	default:
		return Event{}, false
	}
	var p struct {
		RequestID string `json:"requestId"`
		Type      string `json:"type"`
	}
	if m.SessionID == "" || json.Unmarshal(m.Params, &p) != nil || p.RequestID == "" || len(p.RequestID) > 64 {
		return Event{}, false
	}
	if m.Method == RequestStarted && p.Type == "EventSource" {
		return Event{}, false
	}
	id, _ := json.Marshal(p.RequestID)
	return Event{SessionID: m.SessionID, Method: m.Method, Params: id}, true
}

// Subscribe calls fn for every event, on the reader goroutine: fn must not block.
func (b *Browser) Subscribe(fn func(Event)) (cancel func()) {
	b.mu.Lock()
	id := b.nextSub
	b.nextSub++
	b.subs[id] = fn
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.subs, id)
		b.mu.Unlock()
	}
}

// Call sends method with params to the browser (sessionID "") or to an attached session, and
// decodes the result into result (which may be nil).
func (b *Browser) Call(ctx context.Context, sessionID, method string, params, result any) error {
	id := b.next.Add(1)
	m := message{ID: id, Method: method, SessionID: sessionID}
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("encode %s: %w", method, err)
		}
		m.Params = p
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return b.send(ctx, id, sessionID, method, append(data, 0), result)
}

// Ask sends method with params as Call does, and returns once the message is written: wait
// waits for its reply. Messages asked in turn reach the target in that order (a window held
// before it runs is asked what it must do first, then let run).
func (b *Browser) Ask(ctx context.Context, sessionID, method string, params any) (wait func() error) {
	id := b.next.Add(1)
	m := message{ID: id, Method: method, SessionID: sessionID}
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return func() error { return fmt.Errorf("encode %s: %w", method, err) }
		}
		m.Params = p
	}
	data, err := json.Marshal(m)
	if err != nil {
		return func() error { return err }
	}
	ch, err := b.write(id, sessionID, method, append(data, 0))
	return func() error {
		if err != nil {
			return err
		}
		return b.await(ctx, id, method, ch, nil)
	}
}

// send writes one complete message (NUL included) for request id and waits for its reply.
func (b *Browser) send(ctx context.Context, id int64, sessionID, method string, msg []byte, result any) error {
	ch, err := b.write(id, sessionID, method, msg)
	if err != nil {
		return err
	}
	return b.await(ctx, id, method, ch, result)
}

// write registers request id and writes its message; the reply comes on the channel.
func (b *Browser) write(id int64, sessionID, method string, msg []byte) (chan reply, error) {
	ch := make(chan reply, 1)
	b.mu.Lock()
	if b.err != nil {
		err := b.err
		b.mu.Unlock()
		return nil, err
	}
	if err := b.gone[sessionID]; err != nil && sessionID != "" {
		b.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	b.pending[id] = ch
	b.psess[id] = sessionID
	b.mu.Unlock()

	b.wmu.Lock()
	_, werr := b.w.Write(msg)
	b.wmu.Unlock()
	if werr != nil {
		b.mu.Lock()
		delete(b.pending, id)
		delete(b.psess, id)
		b.mu.Unlock()
		b.fail(werr)
		return nil, b.Err()
	}
	return ch, nil
}

// await waits for the reply of request id (ch) and decodes its result into result.
func (b *Browser) await(ctx context.Context, id int64, method string, ch chan reply, result any) error {
	select {
	case r := <-ch:
		if r.err != nil {
			return fmt.Errorf("%s: %w", method, r.err)
		}
		if result != nil {
			if err := json.Unmarshal(r.result, result); err != nil {
				return fmt.Errorf("decode %s: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, id)
		delete(b.psess, id)
		b.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// skipMessage reads the rest of a message, up to and including its NUL, keeping only its last
// bytes (where the browser writes an event's session id).
func skipMessage(br *bufio.Reader) ([]byte, error) {
	var tail []byte
	for {
		chunk, err := br.ReadSlice(0)
		tail = append(tail, chunk...)
		if len(tail) > 512 {
			tail = append(tail[:0], tail[len(tail)-256:]...)
		}
		if err == nil {
			return tail, nil
		}
		if err != bufio.ErrBufferFull {
			return nil, err
		}
	}
}
