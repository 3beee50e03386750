package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/wire"
)

// connect serves a Server with o on an in-memory transport and returns a client session.
func connect(t *testing.T, o Options) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	s := New(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, st) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "unit", Version: "1"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	return cs
}

func unreachable(ctx context.Context) (*control.Client, error) {
	return nil, control.ErrUnavailable
}

func TestToolsAreExactlyTheList(t *testing.T) {
	cs := connect(t, Options{Dial: unreachable})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		a := tl.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations not all set: %+v", tl.Name, a)
		}
		if a != nil && a.ReadOnlyHint && a.DestructiveHint != nil && *a.DestructiveHint {
			t.Errorf("%s: read-only and destructive", tl.Name)
		}
		for _, bad := range []string{"eval", "script", "cookie", "storage", "header", "trace", "heap", "selector", "path", "file", "xpath"} {
			if strings.Contains(tl.Name, bad) {
				t.Errorf("tool %s is of a forbidden kind", tl.Name)
			}
		}
		in, _ := json.Marshal(tl.InputSchema)
		for _, bad := range []string{`"selector"`, `"script"`, `"expression"`, `"x"`, `"y"`, `"file"`, `"path"`} {
			// journey_run's plan is the one exception, by issue 14: a CSS selector resolved
			// with a DOM query (script-like ones refused at decode time), and a path on the
			// plan's origin (a URL's, not a file's).
			if tl.Name == "journey_run" && (bad == `"selector"` || bad == `"path"`) {
				continue
			}
			if strings.Contains(string(in), bad) {
				t.Errorf("%s: an input named %s: %s", tl.Name, bad, in)
			}
		}
	}
	sort.Strings(names)
	want := slices.Clone(ToolNames)
	sort.Strings(want)
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func TestErrorsAreTyped(t *testing.T) {
	cs := connect(t, Options{Dial: unreachable})
	ctx := context.Background()
	for _, tc := range []struct {
		tool string
		args map[string]any
		code wire.Code
	}{
		{"snapshot", map[string]any{}, wire.CodeHostUnavail},
		{"visit", map[string]any{"url": "https://x.test", "unknown": 1}, wire.CodeInvalidArgument},
		{"click", map[string]any{"ref": 12}, wire.CodeInvalidArgument},
		{"status", map[string]any{}, wire.CodeInternal}, // no status source in this world
		{"journey_run", map[string]any{"plan": map[string]any{"journey_id": "j", "origin": "https://x.test",
			"actions": []any{map[string]any{"kind": "click", "state_id": "a", "text": "Go"}}}}, wire.CodeHostUnavail},
		{"journey_run", map[string]any{"plan": map[string]any{"journey_id": "j", "origin": "https://x.test", "evaluate": "1",
			"actions": []any{map[string]any{"kind": "click", "state_id": "a", "text": "Go"}}}}, wire.CodePlanInvalid},
		{"journey_run", map[string]any{}, wire.CodePlanInvalid},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var got ErrorResult
		if err := json.Unmarshal(b, &got); err != nil || got.Error.Code == "" {
			t.Fatalf("%s: structured content %s", tc.tool, b)
		}
		if !res.IsError || got.Error.Code != string(tc.code) || got.Error.Message == "" || got.Error.Hint == "" {
			t.Errorf("%s %v: isError=%v %s, want code %s with message and hint", tc.tool, tc.args, res.IsError, b, tc.code)
		}
		// An error result is valid against the tool's output schema (clients check it).
		valid(t, tc.tool, res.StructuredContent)
	}
}

// valid checks v against the output schema of tool, as a client would.
func valid(t *testing.T, tool string, v any) {
	t.Helper()
	s := New(Options{})
	var schema *jsonschema.Schema
	for _, tl := range s.registered {
		if tl.Name == tool {
			schema = tl.OutputSchema.(*jsonschema.Schema)
		}
	}
	rs, err := schema.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: output schema: %v", tool, err)
	}
	b, _ := json.Marshal(v)
	var m any
	json.Unmarshal(b, &m)
	if err := rs.Validate(m); err != nil {
		t.Errorf("%s: %s does not validate against the output schema: %v", tool, b, err)
	}
}

func TestOutputsValidate(t *testing.T) {
	r := control.SnapshotResult{Session: "default"}
	r.URL, r.Origin, r.Title = "https://app.test/login?next=%2F", "https://app.test", "Sign in"
	r.Elements = []snapshot.Element{
		{Ref: "e1", Kind: "heading", Level: 1, Text: "Sign in"},
		{Ref: "e2", Kind: "form", ID: "f", Method: "POST", Action: "https://app.test/login", ActionOrigin: "https://app.test"},
		{Ref: "e3", Kind: "input", Type: "email", Text: "Email", Name: "username", Autocomplete: "username", Form: "e2"},
		{Ref: "e4", Kind: "input", Type: "password", Text: "Password", Name: "pw", Form: "e2"},
		{Ref: "e5", Kind: "button", Type: "submit", Text: "Sign in", Form: "e2"},
		{Ref: "e6", Kind: "link", Text: "Partner \"sign\" in", Href: "https://partner.test/x y"},
		{Ref: "e7", Kind: "link", Text: "Help", Href: "https://app.test/help#top"},
	}
	r.Elements = append(r.Elements[:6], snapshot.Element{Ref: "e7", Kind: "text", Text: "Help · Terms"}, snapshot.Element{Ref: "e8", Kind: "link", Text: "Help", Href: "https://app.test/help#top"},
		snapshot.Element{Ref: "e9", Kind: "link", Text: "Terms", Href: "https://app.test/terms"}, snapshot.Element{Ref: "e10", Kind: "input", Name: "q", Placeholder: "Search"},
		snapshot.Element{Ref: "e11", Kind: "form", Method: "GET", Action: "https://search.test/", ActionOrigin: "https://search.test"})
	want := `e1 heading[h1] "Sign in"
e2 form
e3 input[email] "Email"
e4 input[password] "Password"
e5 button[submit] "Sign in"
e6 link "Partner \"sign\" in" href="https://partner.test/x y"
e8 link "Help" href=/help#top
e9 link "Terms" href=/terms
e10 input name=q placeholder=Search
e11 form method=get action=https://search.test/
`
	out := compact(r)
	if out.Outline != want || out.Count != 11 {
		t.Errorf("compact outline:\n%s\nwant:\n%s", out.Outline, want)
	}
	valid(t, "snapshot", out)
	valid(t, "visit", control.PageResult{Session: "default", URL: r.URL, AuthRequired: &control.AuthRequired{Challenge: "c", Origin: r.Origin, Aliases: []string{"a"}}})
	valid(t, "auth_login", control.AuthResult{Status: "authenticated"})
}

func TestPNGSize(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x01\x86\x00\x00\x03\x4c\x08\x06\x00\x00\x00")
	if w, h, ok := pngSize(png); !ok || w != 390 || h != 844 {
		t.Errorf("pngSize = %d, %d, %v", w, h, ok)
	}
	if _, _, ok := pngSize([]byte("GIF89a....................")); ok {
		t.Error("a GIF read as a PNG")
	}
}

// MaxToolsBytes is the JSON of tools/list's tools as Playwright MCP 0.0.86 publishes its
// default tools (issue 44's measure; 0.0.83's, the bench's earlier baseline, was 20286): the
// goal is to be no larger, whatever is added. The bench measures
// both through one client; this keeps a regression from waiting for the bench.
const MaxToolsBytes = 21199 // Playwright MCP 0.0.86's default tools/list (issue 44)

func TestToolsListSize(t *testing.T) {
	cs := connect(t, Options{Dial: unreachable})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Tools)
	t.Logf("tools/list: %d tools, %d bytes", len(res.Tools), len(b))
	if len(b) > MaxToolsBytes {
		t.Errorf("tools/list is %d bytes, more than Playwright MCP's %d", len(b), MaxToolsBytes)
	}
}
