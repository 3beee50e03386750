package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/headless-dev/headless/internal/wire"
)

// FuzzDecodeStrict feeds every tool's input type the fuzzer's arguments (what an MCP client
// sends in tools/call): each decodes or is INVALID_ARGUMENT with a bounded message, and a decoded
// value encodes back into arguments that decode again.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"session":"default"}`, `{"session":"s","isolated":true,"keep":true}`,
		`{"url":"https://a.example/","session":"default"}`, `{"ref":"e12"}`, `{"ref":"e1","text":"hello"}`,
		`{"key":"Enter","ref":"e3"}`, `{"text":"Welcome","gone":"Loading","url":"/home","timeout_ms":2000}`,
		`{"full_page":true}`, `{"alias":"main","challenge":"abc"}`, `{"origin":"https://a.example"}`,
		`{"ref":"e4","values":["a","b"]}`, `{"dy":400}`, `{"session":1}`, `{"nosuch":1}`, `{} {}`,
		`{"session":"\u0000\ud800"}`, `{"ref":"e1","ref":"e2"}`, `{"timeout_ms":1e400}`, `{"values":[[[[[]]]]]}`,
	} {
		f.Add(uint8(0), []byte(s))
	}
	types := []func() any{
		func() any { return new(struct{}) }, func() any { return new(createIn) }, func() any { return new(closeIn) },
		func() any { return new(visitIn) }, func() any { return new(sessionIn) }, func() any { return new(refIn) },
		func() any { return new(fillIn) }, func() any { return new(pressIn) }, func() any { return new(waitIn) },
		func() any { return new(screenshotIn) }, func() any { return new(authIn) }, func() any { return new(credsIn) },
		func() any { return new(selectIn) }, func() any { return new(scrollIn) },
	}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		for k, mk := range types {
			if which != 0 && int(which)%len(types) != k {
				continue
			}
			v := mk()
			err := decodeStrict(json.RawMessage(raw), v)
			if err != nil {
				we, ok := err.(*wire.Error)
				if !ok || we.Code != wire.CodeInvalidArgument {
					t.Fatalf("%T: %v is not INVALID_ARGUMENT", v, err)
				}
				if len(we.Message) > 300 {
					t.Fatalf("%T: unbounded message (%d bytes)", v, len(we.Message))
				}
				continue
			}
			again, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%T: %v", v, err)
			}
			if err := decodeStrict(again, mk()); err != nil {
				t.Fatalf("%T: %s decoded, its encoding %s does not: %v", v, raw, again, err)
			}
		}
	})
}
