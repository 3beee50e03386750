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

// ErrUnreachable wraps failures to reach the server at all (as opposed to errors it returned).
var ErrUnreachable = errors.New("broker unreachable")

// Client is a connection to a socket served by Server. Calls are serialised; use one Client
// per goroutine for concurrency.
type Client struct {
	mu   sync.Mutex
	conn net.Conn
	r    *wire.Reader
	next uint64
}

// Dial connects to the socket at path.
func Dial(ctx context.Context, path string) (*Client, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	return NewClient(c), nil
}

// NewClient wraps an established connection.
func NewClient(c net.Conn) *Client {
	return &Client{conn: c, r: wire.NewReader(c)}
}

// Close closes the connection.
func (c *Client) Close() error {
	c.r.Wipe()
	return c.conn.Close()
}

// RoundTrip writes frame and reads the reply frame for id, for callers that build frames by
// hand (frames holding a secret). The caller owns (and zeroes) both; it holds no lock, so the
// caller serialises with Lock.
func (c *Client) RoundTrip(ctx context.Context, id uint64, frame []byte) ([]byte, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Time{}
	}
	c.conn.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Now()) })
	defer stop()
	if _, err := c.conn.Write(frame); err != nil {
		// The broker may have refused the connection with an error frame before closing it.
		if resp, rerr := c.r.ReadFrame(); rerr == nil {
			return resp, nil
		}
		return nil, c.ioErr(ctx, err)
	}
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
			return nil, fmt.Errorf("%w: malformed reply: %v", ErrUnreachable, err)
		}
		if head.ID == id || head.ID == 0 {
			return resp, nil
		}
		clear(resp) // a reply to an abandoned earlier call
	}
}

func (c *Client) ioErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%w: %v", ErrUnreachable, err)
}

// Lock serialises a hand-built call with every other call and returns the request id to use.
func (c *Client) Lock() (id uint64, unlock func()) {
	c.mu.Lock()
	c.next++
	return c.next, c.mu.Unlock
}

// Call invokes method with params and decodes the result into result (which may be nil).
// Errors returned by brokerd are *wire.Error.
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
		return fmt.Errorf("%w: malformed reply: %v", ErrUnreachable, err)
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
