package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

// ErrUnreachable wraps failures to reach brokerd at all (as opposed to errors it returned).
var ErrUnreachable = errors.New("broker unreachable")

// Client is a connection to brokerd. Calls are serialised; use one Client per goroutine for
// concurrency.
type Client struct {
	mu   sync.Mutex
	conn net.Conn
	r    *wire.Reader
	next uint64
}

// Dial connects to the broker socket at path.
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

// roundTrip writes frame and reads the reply frame for id. The caller owns (and zeroes) both.
func (c *Client) roundTrip(ctx context.Context, id uint64, frame []byte) ([]byte, error) {
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
	resp, err := c.roundTrip(ctx, id, frame)
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

// Version asks for brokerd's version.
func (c *Client) Version(ctx context.Context) (VersionResult, error) {
	var v VersionResult
	err := c.Call(ctx, MethodVersion, nil, &v)
	return v, err
}

// List lists credential metadata, filtered by origin when origin != "".
func (c *Client) List(ctx context.Context, origin string) ([]Credential, error) {
	var r ListResult
	if err := c.Call(ctx, MethodCredentialsList, ListParams{Origin: origin}, &r); err != nil {
		return nil, err
	}
	return r.Credentials, nil
}

// Remove removes a credential.
func (c *Client) Remove(ctx context.Context, origin, alias string) error {
	return c.Call(ctx, MethodCredentialsRm, RemoveParams{Origin: origin, Alias: alias}, nil)
}

// Challenge asks for a release challenge.
func (c *Client) Challenge(ctx context.Context, p ChallengeParams) (ChallengeResult, error) {
	var r ChallengeResult
	err := c.Call(ctx, MethodChallengeIssue, p, &r)
	return r, err
}

// Add saves a credential. secret stays owned by the caller; Add zeroes its own copies.
func (c *Client) Add(ctx context.Context, origin, account, alias string, secret []byte) (Credential, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	id := c.next
	meta, err := json.Marshal(struct {
		Origin  string `json:"origin"`
		Account string `json:"account"`
		Alias   string `json:"alias"`
	}{origin, account, alias})
	if err != nil {
		return Credential{}, err
	}
	frame, err := secretFrame(fmt.Appendf(nil, `{"id":%d,"method":%q,"params":`, id, MethodCredentialsAdd), meta, secret, "}}\n")
	if err != nil {
		return Credential{}, err
	}
	resp, err := c.roundTrip(ctx, id, frame)
	clear(frame)
	if err != nil {
		return Credential{}, err
	}
	var r struct {
		ID     uint64      `json:"id"`
		Result *Credential `json:"result"`
		Error  *wire.Error `json:"error"`
	}
	if err := wire.DecodeStrict(resp, &r); err != nil {
		return Credential{}, fmt.Errorf("%w: malformed reply: %v", ErrUnreachable, err)
	}
	if r.Error != nil {
		return Credential{}, r.Error
	}
	if r.Result == nil {
		return Credential{}, fmt.Errorf("%w: empty reply", ErrUnreachable)
	}
	return *r.Result, nil
}

// Release asks brokerd to release the secret for p. The returned secret is the caller's to
// use once and zero with vault.Zero.
func (c *Client) Release(ctx context.Context, p ReleaseParams) (Released, []byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	id := c.next
	params, err := json.Marshal(p)
	if err != nil {
		return Released{}, nil, err
	}
	frame, err := wire.Encode(wire.Request{ID: id, Method: MethodRelease, Params: params})
	if err != nil {
		return Released{}, nil, err
	}
	resp, err := c.roundTrip(ctx, id, frame)
	if err != nil {
		return Released{}, nil, err
	}
	defer clear(resp)
	var r struct {
		ID     uint64 `json:"id"`
		Result *struct {
			Released
			Secret []byte `json:"secret"`
		} `json:"result"`
		Error *wire.Error `json:"error"`
	}
	if err := wire.DecodeStrict(resp, &r); err != nil {
		if r.Result != nil {
			vault.Zero(r.Result.Secret)
		}
		return Released{}, nil, fmt.Errorf("%w: malformed reply", ErrUnreachable)
	}
	if r.Error != nil {
		return Released{}, nil, r.Error
	}
	if r.Result == nil || len(r.Result.Secret) == 0 {
		return Released{}, nil, fmt.Errorf("%w: release reply without a secret", ErrUnreachable)
	}
	return r.Result.Released, r.Result.Secret, nil
}
