package host

import (
	"encoding/json"
	"testing"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// FuzzControlParams decodes the fuzzer's params into every control.sock method's params type,
// as the host's method table does before any handler runs: each decodes or is BAD_REQUEST
// with a bounded message, and a decoded value encodes into params that decode again. (The
// frame and request path is internal/rpc's FuzzServeConn.)
func FuzzControlParams(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `{"session":"default"}`, `{"name":"s1","isolated":true}`,
		`{"url":"https://a.example/login","session":"s"}`, `{"ref":"e3","session":"default"}`,
		`{"ref":"e1","text":"hi"}`, `{"key":"Enter"}`, `{"text":"Welcome","timeout_ms":100}`,
		`{"alias":"main","challenge":"c","session":"iso"}`, `{"origin":"https://a.example","account":"a","alias":"b","secret":"cHc="}`,
		`{"token":"t","alias":"a"}`, `{"ref":"e2","values":["a"]}`, `{"client":"x","version":"1"}`,
		`{"session":"\ud800"}`, `{"session":"a","session":"b"}`, `{"nosuch":true}`, `{"ref":1}`, `{} []`,
		`{"secret":"not base64!"}`, `{"timeout_ms":-1e308}`,
	} {
		f.Add(uint8(0), []byte(s))
	}
	types := []func() any{
		func() any { return new(struct{}) }, func() any { return new(control.ClientHelloParams) },
		func() any { return new(control.CreateParams) }, func() any { return new(control.CloseParams) }, func() any { return new(control.VisitParams) },
		func() any { return new(control.SessionParams) }, func() any { return new(control.RefParams) }, func() any { return new(control.FillParams) },
		func() any { return new(control.PressParams) }, func() any { return new(control.WaitParams) }, func() any { return new(control.ScreenshotParams) },
		func() any { return new(control.SelectParams) }, func() any { return new(control.ScrollParams) }, func() any { return new(control.AuthParams) },
		func() any { return new(control.EnrollParams) }, func() any { return new(control.EnrollSaveParams) }, func() any { return new(control.EnrollTokenParams) },
		func() any { return new(control.CredentialsListParams) }, func() any { return new(control.CredentialsAddParams) },
		func() any { return new(control.CredentialsRemoveParams) }, func() any { return new(control.VerifyParams) },
	}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		for k, mk := range types {
			if which != 0 && int(which)%len(types) != k {
				continue
			}
			v := mk()
			if err := rpc.DecodeParams(raw, v); err != nil {
				we, ok := err.(*wire.Error)
				if !ok || we.Code != wire.CodeBadRequest {
					t.Fatalf("%T: %v is not BAD_REQUEST", v, err)
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
			if err := rpc.DecodeParams(again, mk()); err != nil {
				t.Fatalf("%T: %s decoded, its encoding %s does not: %v", v, raw, again, err)
			}
		}
	})
}
