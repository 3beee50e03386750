package mcpserver

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The spec's cancellation: "the receiver of a cancellation notification SHOULD NOT send a
// response for the cancelled request". The SDK cancels the handler's context but answers the
// request all the same; cancelTransport sits under it and drops that answer. Which requests
// were cancelled is read from the notifications/cancelled the client sent (at most
// maxCancelled remembered: each is forgotten when its answer is dropped, the oldest first
// beyond the bound).

const maxCancelled = 256

type cancelTransport struct{ mcp.Transport }

func (t cancelTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cancelConn{Connection: c, cancelled: map[jsonrpc.ID]bool{}}, nil
}

type cancelConn struct {
	mcp.Connection
	mu        sync.Mutex
	cancelled map[jsonrpc.ID]bool
	order     []jsonrpc.ID
}

func (c *cancelConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); ok && err == nil && r.Method == "notifications/cancelled" && !r.ID.IsValid() {
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(r.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil && id.IsValid() {
				c.mu.Lock()
				if !c.cancelled[id] {
					c.cancelled[id] = true
					c.order = append(c.order, id)
					if len(c.order) > maxCancelled {
						delete(c.cancelled, c.order[0])
						c.order = c.order[1:]
					}
				}
				c.mu.Unlock()
			}
		}
	}
	return m, err
}

func (c *cancelConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Response); ok {
		c.mu.Lock()
		drop := c.cancelled[r.ID]
		if drop {
			delete(c.cancelled, r.ID)
			for i, id := range c.order {
				if id == r.ID {
					c.order = append(c.order[:i], c.order[i+1:]...)
					break
				}
			}
		}
		c.mu.Unlock()
		if drop {
			return nil
		}
	}
	return c.Connection.Write(ctx, m)
}
