package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/headless-dev/headless/internal/wire"
)

// ErrUnreachable is in the chain of every failure to reach the server at all (a refused dial, a
// connection dropped mid-call, a malformed reply), as opposed to an error the server answered
// and to the caller's own deadline or cancellation (which a Client returns as ctx.Err()).
// Those failures also carry the socket's own sentinel (see [Dial]), which gives them their
// code and their first words.
var ErrUnreachable = errors.New("unreachable")

// unreachableError is a failure to reach the server: the socket's sentinel, ErrUnreachable,
// and the cause, all in its chain.
type unreachableError struct {
	socket error // e.g. brokerapi.ErrUnreachable (BROKER_UNAVAILABLE)
	cause  error
}

func (e *unreachableError) Error() string   { return e.socket.Error() + ": " + e.cause.Error() }
func (e *unreachableError) Unwrap() []error { return []error{e.socket, ErrUnreachable, e.cause} }

// Client is a connection to a socket served by Server. Calls are serialised; use one Client
// per goroutine for concurrency.
type Client struct {
	mu     sync.Mutex
	conn   net.Conn
	r      *wire.Reader
	next   uint64
	socket error
	used   bool // a request was written: an id-0 BUSY after that is an eviction (evicted)
}

// Dial connects to the socket at path. unreachable is that socket's sentinel (with the code a
// caller answers when the server cannot be reached: BROKER_UNAVAILABLE for broker.sock,
// HOST_UNAVAILABLE for control.sock); every failure to reach the server wraps it and
// [ErrUnreachable]. nil means ErrUnreachable alone.
func Dial(ctx context.Context, path string, unreachable error) (*Client, error) {
	if unreachable == nil {
		unreachable = ErrUnreachable
	}
	c, err := (&net.Dialer{}).DialContext(ctx, "unix", path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &unreachableError{unreachable, err}
	}
	return NewClient(c, unreachable), nil
}

// NewClient wraps an established connection; unreachable is as for [Dial].
func NewClient(c net.Conn, unreachable error) *Client {
	if unreachable == nil {
		unreachable = ErrUnreachable
	}
	return &Client{conn: c, r: wire.NewReader(c), socket: unreachable}
}

// Unreachable wraps cause as a failure to reach this client's server.
func (c *Client) Unreachable(cause error) error { return &unreachableError{c.socket, cause} }

// Close closes the connection.
func (c *Client) Close() error {
	c.r.Wipe()
	return c.conn.Close()
}

// RoundTrip writes frame and reads the reply frame for id, for callers that build frames by
// hand (frames holding a secret). The caller owns (and zeroes) both; it holds no lock, so the
// caller serialises with Lock.
//
// The caller's deadline or cancellation is ctx.Err(), never ErrUnreachable: the socket's
// deadline is set only once ctx is done (never from ctx's deadline, which the socket could
// reach first and report as an i/o timeout of an unreachable server).
func (c *Client) RoundTrip(ctx context.Context, id uint64, frame []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.conn.SetDeadline(time.Time{})
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.conn.SetDeadline(time.Now())
		close(fired)
	})
	defer func() {
		if !stop() {
			<-fired // no late SetDeadline may hit the next call
		}
	}()
	used := c.used
	if _, err := c.conn.Write(frame); err != nil {
		// The broker may have refused the connection with an error frame before closing it.
		if resp, rerr := c.r.ReadFrame(); rerr == nil {
			return c.evicted(used, resp)
		}
		return nil, c.ioErr(ctx, err)
	}
	c.used = true
	for {
		resp, err := c.r.ReadFrame()
		if err != nil {
			return nil, c.ioErr(ctx, err)
		}
		var head struct {
			ID uint64 `json:"id"`
		}
		if err := json.Unmarshal(resp, &head); err != nil {
			clear(resp)
			return nil, c.Unreachable(fmt.Errorf("malformed reply: %w", err))
		}
		if head.ID == id || head.ID == 0 {
			return c.evicted(used, resp)
		}
		clear(resp) // a reply to an abandoned earlier call
	}
}

// evicted is resp, the frame read for a call, unless it is the server closing this
// connection to make room while it was idle: a BUSY with id 0 on a connection that had carried
// a request before this call (used; an id-0 frame before any is the server refusing the
// connection, the answer to this first call). That is not the answer to the call, whether it
// came before or after the call was sent: it is unreachable, so a caller that redials does.
func (c *Client) evicted(used bool, resp []byte) ([]byte, error) {
	if !used {
		return resp, nil
	}
	var head struct {
		ID    uint64      `json:"id"`
		Error *wire.Error `json:"error"`
	}
	if json.Unmarshal(resp, &head) != nil || head.ID != 0 || head.Error == nil || head.Error.Code != wire.CodeBusy {
		return resp, nil
	}
	clear(resp)
	return nil, c.Unreachable(fmt.Errorf("the server closed this connection while it was idle (%s: %s)", head.Error.Code, head.Error.Message))
}

func (c *Client) ioErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return c.Unreachable(err)
}

// Lock serialises a hand-built call with every other call and returns the request id to use.
func (c *Client) Lock() (id uint64, unlock func()) {
	c.mu.Lock()
	c.next++
	return c.next, c.mu.Unlock
}

// Call invokes method with params and decodes the result into result (which may be nil).
// Errors the server answered are *wire.Error; a failure to reach it wraps [ErrUnreachable]
// and the socket's sentinel; the caller's deadline is ctx.Err().
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	id := c.next
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("encode params: %w", err)
		}
		raw = b
	}
	frame, err := wire.Encode(wire.Request{ID: id, Method: method, Params: raw})
	if err != nil {
		return err
	}
	resp, err := c.RoundTrip(ctx, id, frame)
	if err != nil {
		return err
	}
	var r wire.Response
	if err := wire.DecodeStrict(resp, &r); err != nil {
		return c.Unreachable(fmt.Errorf("malformed reply: %w", err))
	}
	if r.Error != nil {
		return r.Error
	}
	if result != nil {
		if err := json.Unmarshal(r.Result, result); err != nil {
			return fmt.Errorf("decode %s result: %w", method, err)
		}
	}
	return nil
}
