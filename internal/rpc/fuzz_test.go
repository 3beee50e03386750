package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/headless-dev/headless/internal/wire"
)

// fuzzConn is a connection whose peer sent in and then half-closed; what the server writes
// is kept.
type fuzzConn struct {
	r   *bytes.Reader
	mu  sync.Mutex
	out bytes.Buffer
}

func (c *fuzzConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c *fuzzConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}
func (c *fuzzConn) Close() error { return nil }

// FuzzServeConn is both sockets' request path (control.sock serves a Methods table through
// Server; broker.sock's own target is internal/broker/gate's): whatever the peer sends, the server
// returns when it stops sending, and every reply is one strict frame carrying the request's
// result or a typed error, never more replies than frames sent, never a request's secret field.
func FuzzServeConn(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"method":"echo","params":{"name":"x"}}` + "\n",
		`{"id":2,"method":"echo","params":{"name":"x","secret":"U0VDUkVU"}}` + "\n",
		`{"id":3,"method":"echo","params":{"name":"x","extra":1,"secret":"U0VDUkVU"}}` + "\n",
		`{"id":4,"method":"frame"}` + "\n" + `{"id":5,"method":"bug"}` + "\n" + `{"id":6,"method":"nope"}` + "\n",
		`{"id":7,"method":"echo","params":[1,2]}` + "\n" + `{"id":8}` + "\n" + "\n\n",
		`{"id":9,"method":"echo","params":{"name":"\xff\xfe"}}` + "\n",
		`{"id":10,"method":"echo","params":{"name":"x"},"params":{}}` + "\n",
		`{"id":-1,"method":"echo"}` + "\n" + `{"id":1e3,"method":"echo"}` + "\n" + `[[[[[[[[]]]]]]]]` + "\n",
		`{"id":11,"method":"echo","params":{"name":"x"}}`, // no newline: truncated
	} {
		f.Add([]byte(s))
	}
	m := &Methods{Internal: func(error) string { return "internal error" }}
	Handle(m, "echo", func(ctx context.Context, p echoParams) (echoParams, error) {
		clear(p.Secret)
		return echoParams{Name: p.Name}, nil
	})
	Handle(m, "bug", func(ctx context.Context, _ struct{}) (struct{}, error) {
		return struct{}{}, errors.New("a bug")
	})
	HandleFrame(m, "frame", func(ctx context.Context, id uint64, _ struct{}) ([]byte, error) {
		return wire.ResultFrame(id, map[string]string{"name": "by hand"})
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		c := &fuzzConn{r: bytes.NewReader(in)}
		(&Server{Handler: m.Serve}).ServeConn(context.Background(), c, Peer{PID: 7})
		// echo answers only the name: a secret field in a reply came from the server.
		if bytes.Contains(c.out.Bytes(), []byte(`"secret":`)) {
			t.Fatalf("a secret came back: %q", c.out.Bytes())
		}
		sent := bytes.Count(in, []byte("\n")) + 1
		replies := 0
		sc := bufio.NewScanner(&c.out)
		sc.Buffer(nil, 2*wire.MaxFrame)
		for sc.Scan() {
			replies++
			var r struct {
				ID     uint64          `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *wire.Error     `json:"error"`
			}
			if err := wire.DecodeStrict(sc.Bytes(), &r); err != nil {
				t.Fatalf("reply %q: %v", sc.Bytes(), err)
			}
			if (r.Result == nil) == (r.Error == nil) {
				t.Fatalf("reply %q: want exactly one of result and error", sc.Bytes())
			}
			if r.Error != nil && (r.Error.Code == "" || r.Error.Hint == "" || strings.Contains(r.Error.Message, "a bug")) {
				t.Fatalf("reply %q: an untyped or leaking error", sc.Bytes())
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		if replies > sent {
			t.Fatalf("%d replies to %d frames", replies, sent)
		}
	})
}
