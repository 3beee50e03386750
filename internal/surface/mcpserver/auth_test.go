package mcpserver

import (
	"context"
	"encoding/json"
	"net"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// fakeHost serves auth.login over net.Pipe and records the params each call sent.
func fakeHost(t *testing.T) (func(context.Context) (*control.Client, error), func() []control.AuthParams) {
	var mu sync.Mutex
	var got []control.AuthParams
	m := &rpc.Methods{}
	rpc.Handle(m, control.MethodAuthLogin, func(ctx context.Context, p control.AuthParams) (control.AuthResult, error) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
		return control.AuthResult{Status: "authenticated", Alias: p.Alias, Origin: "https://a.test"}, nil
	})
	rpc.Handle(m, control.MethodClientHello, func(ctx context.Context, p control.ClientHelloParams) (struct{}, error) { return struct{}{}, nil })
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	dial := func(context.Context) (*control.Client, error) {
		a, b := net.Pipe()
		wg.Add(1)
		go func() { defer wg.Done(); (&rpc.Server{Handler: m.Serve}).ServeConn(ctx, b, rpc.Peer{PID: 1}) }()
		return control.NewClient(a), nil
	}
	return dial, func() []control.AuthParams {
		mu.Lock()
		defer mu.Unlock()
		return append([]control.AuthParams(nil), got...)
	}
}

// TestAuthLoginCodeOnly: auth_login's input schema has code_only (a boolean), the tool passes
// it to the host as AuthParams.CodeOnly (and false when absent), and a code_only that is not a
// boolean is refused by the strict decode before the host is called.
func TestAuthLoginCodeOnly(t *testing.T) {
	dial, got := fakeHost(t)
	cs := connect(t, Options{Dial: dial})
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	for _, tl := range tools.Tools {
		if tl.Name == "auth_login" {
			b, _ := json.Marshal(tl.InputSchema)
			json.Unmarshal(b, &schema)
		}
	}
	if p, ok := schema.Properties["code_only"]; !ok || p.Type != "boolean" {
		t.Fatalf("auth_login input schema: code_only %+v (properties %v)", p, schema.Properties)
	}
	for _, tc := range []struct {
		args map[string]any
		want bool
	}{
		{map[string]any{"alias": "main", "code_only": true}, true},
		{map[string]any{"alias": "main"}, false},
		{map[string]any{"alias": "main", "code_only": false}, false},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "auth_login", Arguments: tc.args})
		if err != nil || res.IsError {
			t.Fatalf("%v: %v %+v", tc.args, err, res)
		}
		g := got()
		if len(g) == 0 || g[len(g)-1].CodeOnly != tc.want || g[len(g)-1].Alias != "main" {
			t.Fatalf("%v: the host got %+v, want CodeOnly %v", tc.args, g, tc.want)
		}
	}
	n := len(got())
	for _, bad := range []any{"true", 1} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "auth_login", Arguments: map[string]any{"alias": "main", "code_only": bad}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var e ErrorResult
		json.Unmarshal(b, &e)
		if !res.IsError || (e.Error.Code != string(wire.CodeBadRequest) && e.Error.Code != string(wire.CodeInvalidArgument)) {
			t.Fatalf("code_only %v: %s", bad, b)
		}
	}
	if len(got()) != n {
		t.Fatalf("the host was called with a malformed code_only")
	}
}
