package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/headless-dev/headless/internal/wire"
)

// callErr calls tool with raw arguments and returns its error result's body.
func callErr(t *testing.T, cs *mcp.ClientSession, tool string, args any) (ErrorBody, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var got ErrorResult
	if err := json.Unmarshal(b, &got); err != nil || !res.IsError {
		t.Fatalf("%s %v: not an error result: %s", tool, args, b)
	}
	text := ""
	if len(res.Content) > 0 {
		text = res.Content[0].(*mcp.TextContent).Text
	}
	return got.Error, text
}

// TestArgumentsCheckedAgainstSchema: every call is checked against the input schema the tool
// publishes before anything is decoded or sent to the host (which is unreachable here: a call
// that got through would be HOST_UNAVAILABLE). The message names the parameter and what it
// takes, in the schema's terms, never Go's.
func TestArgumentsCheckedAgainstSchema(t *testing.T) {
	cs := connect(t, Options{Dial: unreachable})
	for _, tc := range []struct {
		tool string
		args any
		code wire.Code
		msg  string
	}{
		{"visit", map[string]any{}, wire.CodeInvalidArgument, `parameter url is required: http or https`},
		{"visit", map[string]any{"url": 5}, wire.CodeInvalidArgument, `parameter url must be a string (http or https), not an integer`},
		{"visit", map[string]any{"url": nil}, wire.CodeInvalidArgument, `parameter url must be a string (http or https), not null`},
		{"visit", map[string]any{"url": "https://x.test", "session": true}, wire.CodeInvalidArgument, `parameter session must be a string (see the tool's input schema), not a boolean`},
		{"visit", map[string]any{"url": "https://x.test", "unknown": 1}, wire.CodeInvalidArgument, `the tool has no parameter "unknown"; it takes session, timeout_ms, url`},
		{"select", map[string]any{"ref": "e1", "values": "a"}, wire.CodeInvalidArgument, `parameter values must be an array (labels or values; several for a multiple one), not a string`},
		{"select", map[string]any{"ref": "e1", "values": []any{"a", 2}}, wire.CodeInvalidArgument, `parameter values[1] must be a string (see the tool's input schema), not an integer`},
		{"select", map[string]any{"ref": "e1"}, wire.CodeInvalidArgument, `parameter values is required: labels or values; several for a multiple one`},
		{"wait", map[string]any{"timeout_ms": 1.5}, wire.CodeInvalidArgument, `parameter timeout_ms must be an integer (default 10000, at most 300000), not a number`},
		{"journey_run", map[string]any{"plan": map[string]any{"journey_id": "j", "origin": "https://x.test",
			"actions": []any{map[string]any{"kind": "tap", "state_id": "a"}}}}, wire.CodePlanInvalid, `parameter plan.actions[0].kind must be one of [navigate click fill select press hover scroll wait assert login]`},
		{"journey_run", map[string]any{"plan": map[string]any{"journey_id": "j", "origin": "https://x.test", "evaluate": "1",
			"actions": []any{}}}, wire.CodePlanInvalid, `parameter plan has no field "evaluate"; it takes actions, budget_seconds, expected_states, height, journey_id, name, origin, path, session, theme, width, zoom`},
	} {
		e, text := callErr(t, cs, tc.tool, tc.args)
		if e.Code != string(tc.code) || e.Message != tc.msg {
			t.Errorf("%s %v: %s %q, want %s %q", tc.tool, tc.args, e.Code, e.Message, tc.code, tc.msg)
		}
		if !strings.HasPrefix(text, tc.tool+": "+string(tc.code)+": ") {
			t.Errorf("%s: text %q does not name the tool and the code", tc.tool, text)
		}
		if strings.Contains(e.Message+e.Hint, "Go struct") || speaksCLI(e.Hint) || speaksCLI(e.Message) {
			t.Errorf("%s: speaks Go or the CLI: %+v", tc.tool, e)
		}
	}
}

// TestSchemasHaveNoNullTypes: no published schema says "null or X" (a client that converts
// arguments by the schema's type sent select's values as a string when it said
// ["null","array"]).
func TestSchemasHaveNoNullTypes(t *testing.T) {
	cs := connect(t, Options{Dial: unreachable})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		for what, s := range map[string]any{"input": tl.InputSchema, "output": tl.OutputSchema} {
			b, _ := json.Marshal(s)
			if strings.Contains(string(b), `"null"`) || strings.Contains(string(b), `"type":[`) {
				t.Errorf("%s's %s schema has a null or multiple type: %s", tl.Name, what, b)
			}
		}
	}
}

// TestHintsInToolTerms: the hint an MCP client gets for every code of the error table, and
// the messages and hints the host's errors carry, name tools and parameters: no CLI command
// (but the person's, quoted as a command to run in a terminal), no flag, no "JSON object per
// line".
func TestHintsInToolTerms(t *testing.T) {
	for _, c := range wire.Codes() {
		e := toolError(&wire.Error{Code: c, Message: "m", Hint: wire.Hint(c)})
		if speaksCLI(e.Hint) || e.Hint == "" {
			t.Errorf("%s: hint over MCP %q", c, e.Hint)
		}
	}
	for _, tc := range []struct{ in, hint, want string }{
		// Particular hints of host errors, rewritten.
		{"", "this host was started with a navigation allowlist ('headless status' shows it); only those hosts can be visited",
			"this host was started with a navigation allowlist (the status tool shows it); only those hosts can be visited"},
		{"", "--session names an isolated session of the running host ('headless session create NAME --isolated'); normal sessions use the vault: omit --session",
			"session names an isolated session of the running host (session_create with isolated: true); normal sessions use the vault: omit session"},
		{"", "increase --timeout or check the condition", "increase timeout_ms (milliseconds) or check the condition"},
	} {
		e := toolError(&wire.Error{Code: wire.CodeSessionUnknown, Message: "m", Hint: tc.hint})
		if e.Hint != tc.want {
			t.Errorf("hint %q over MCP: %q, want %q", tc.hint, e.Hint, tc.want)
		}
	}
	// LOGIN_PATH_CHANGED names the parameter, and the person's command stays theirs.
	e := toolError(&wire.Error{Code: wire.CodeLoginPathChanged, Message: "m", Hint: wire.Hint(wire.CodeLoginPathChanged)})
	if !strings.Contains(e.Hint, "new_login_path: true") || !strings.Contains(e.Hint, "ask the person to run `headless credentials add --login-path PATH` in a terminal") {
		t.Errorf("LOGIN_PATH_CHANGED over MCP: %q", e.Hint)
	}
}

// TestToolTermsOnePass: a rewritten verb is never rewritten again, and the person's commands
// stay theirs.
func TestToolTermsOnePass(t *testing.T) {
	for in, want := range map[string]string{
		"sign in again with 'headless auth login --interactive'":       "sign in again with the person's `headless auth login --interactive` in a terminal",
		"run headless auth login --alias NAME, then headless snapshot": "run auth_login with an alias, then snapshot",
		"increase --timeout": "increase timeout_ms (milliseconds)",
		"ask the person to run `headless credentials add --login-path PATH`": "ask the person to run `headless credentials add --login-path PATH`",
	} {
		if got := toolTerms(in); got != want {
			t.Errorf("toolTerms(%q) = %q, want %q", in, got, want)
		}
	}
}
