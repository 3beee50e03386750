package brokerapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/wire"
)

func TestSecretRequestFrame(t *testing.T) {
	secret := []byte("pä\"ss\\\n")
	frame, err := SecretRequestFrame(7, MethodCredentialsAdd, struct {
		Origin string `json:"origin"`
	}{"https://a.example"}, secret)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(frame, []byte("}}\n")) {
		t.Fatalf("frame %q does not end one line", frame)
	}
	var req struct {
		ID     uint64 `json:"id"`
		Method string `json:"method"`
		Params struct {
			Origin string `json:"origin"`
			Secret []byte `json:"secret"`
		} `json:"params"`
	}
	if err := wire.DecodeStrict(frame, &req); err != nil {
		t.Fatalf("frame %s: %v", frame, err)
	}
	if req.ID != 7 || req.Method != MethodCredentialsAdd || req.Params.Origin != "https://a.example" || !bytes.Equal(req.Params.Secret, secret) {
		t.Fatalf("decoded %+v", req)
	}
	if bytes.Contains(frame, secret) {
		t.Fatal("the secret is in the frame unencoded")
	}
	for _, meta := range []any{struct{}{}, []int{1}, "x", nil} {
		if _, err := SecretRequestFrame(1, "m", meta, secret); err == nil {
			t.Errorf("meta %#v accepted", meta)
		}
	}
	if _, err := SecretRequestFrame(1, "m", struct {
		A string `json:"a"`
	}{"x"}, make([]byte, wire.MaxFrame)); !errors.Is(err, wire.ErrFrameTooLarge) {
		t.Fatalf("oversize secret: %v", err)
	}
}

// serveOne answers the client's first request with reply (the request id substituted for ID).
func serveOne(t *testing.T, reply func(id uint64) string) *Client {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	go func() {
		line, err := bufio.NewReader(b).ReadBytes('\n')
		if err != nil {
			return
		}
		var req wire.Request
		json.Unmarshal(line, &req)
		b.Write([]byte(reply(req.ID)))
	}()
	return NewClient(a)
}

func TestClientRelease(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	secret := []byte("c4nary")
	t.Run("released", func(t *testing.T) {
		c := serveOne(t, func(id uint64) string {
			f, err := ReleaseFrame(id, Released{Origin: "https://a.example", Account: "u", Alias: "a"}, secret)
			if err != nil {
				t.Error(err)
			}
			return string(f)
		})
		rel, got, err := c.Release(ctx, ReleaseParams{Challenge: "c", Alias: "a", Session: "s", Document: "d"})
		if err != nil || !bytes.Equal(got, secret) || rel.Origin != "https://a.example" || rel.Alias != "a" {
			t.Fatalf("Release = %+v, %q, %v", rel, got, err)
		}
	})
	for name, reply := range map[string]func(id uint64) string{
		"an error": func(id uint64) string { return string(wire.ErrorFrame(id, wire.Errorf(wire.CodePresenceDenied, "no"))) },
		"no secret": func(id uint64) string {
			return `{"id":` + itoa(id) + `,"result":{"origin":"https://a.example","account":"u","alias":"a"}}` + "\n"
		},
		"an unknown field": func(id uint64) string {
			return `{"id":` + itoa(id) + `,"result":{"alias":"a","secret":"YQ==","x":1}}` + "\n"
		},
		"not JSON": func(id uint64) string { return "nonsense\n" },
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			c := serveOne(t, reply)
			_, got, err := c.Release(ctx, ReleaseParams{Challenge: "c", Alias: "a", Session: "s", Document: "d"})
			if err == nil || got != nil {
				t.Fatalf("a reply with %s: %q, %v", name, got, err)
			}
			if name == "an error" && wire.CodeOf(err) != wire.CodePresenceDenied {
				t.Fatalf("the broker's error was lost: %v", err)
			}
			if name != "an error" && !errors.Is(err, ErrUnreachable) {
				t.Fatalf("a malformed reply is not ErrUnreachable: %v", err)
			}
		})
	}
}

// TestClientIgnoresOtherIDs: a reply for another id (an abandoned earlier call) is not taken
// for this call's: the call waits for its own and fails with the context's error when its
// deadline passes (never ErrUnreachable: the broker did not go away).
func TestClientIgnoresOtherIDs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	c := serveOne(t, func(id uint64) string {
		return `{"id":` + itoa(id+1) + `,"result":{"alias":"a","secret":"YQ=="}}` + "\n"
	})
	_, got, err := c.Release(ctx, ReleaseParams{Challenge: "c", Alias: "a", Session: "s", Document: "d"})
	if got != nil || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrUnreachable) {
		t.Fatalf("Release with only another id's reply = %q, %v", got, err)
	}
}

func TestReleaseFrameEncodesSecret(t *testing.T) {
	f, err := ReleaseFrame(3, Released{Alias: "a"}, []byte("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(f), `"secret":"`+base64.StdEncoding.EncodeToString([]byte("s3cret"))+`"`) || bytes.Contains(f, []byte("s3cret")) {
		t.Fatalf("frame %s", f)
	}
}

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }
