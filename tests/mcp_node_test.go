//go:build linux

package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/surface/mcpserver"
	"github.com/headless-dev/headless/internal/test/realtest"
)

// nodePackage returns the path of node and of dir (relative to the repository root) once dir's
// node_modules holds every module named. A missing node or module fails t: the test only runs
// in an opted-in run (newEnv skips otherwise), where a missing component is a failure, never a
// skip. scripts/test.sh runs `npm ci` in tests/mcpclient, scripts/bench.sh in scripts/bench.
func nodePackage(t testing.TB, dir string, modules ...string) (node, abs string) {
	t.Helper()
	node = realtest.Binary(t, "node")
	abs = filepath.Join(realtest.Root(t), dir)
	for _, m := range modules {
		if _, err := os.Stat(filepath.Join(abs, "node_modules", m, "package.json")); err != nil {
			t.Fatalf("node module %s is not installed in %s: run npm ci --prefix %s (scripts/test.sh and scripts/bench.sh do)", m, dir, dir)
		}
	}
	return node, abs
}

// mcpClientOutput is the JSON line tests/mcpclient/client.mjs prints.
type mcpClientOutput struct {
	OK          bool                       `json:"ok"`
	Mismatches  []string                   `json:"mismatches"`
	Tools       []string                   `json:"tools"`
	Annotations map[string]map[string]bool `json:"annotations"`
	Visit       *struct {
		URL          string `json:"url"`
		AuthRequired *struct {
			Origin    string   `json:"origin"`
			Aliases   []string `json:"aliases"`
			Challenge bool     `json:"challenge"`
		} `json:"auth_required"`
	} `json:"visit"`
	Snapshot *struct {
		Elements int `json:"elements"`
	} `json:"snapshot"`
	Auth *struct {
		Status string `json:"status"`
		Origin string `json:"origin"`
		Alias  string `json:"alias"`
	} `json:"auth"`
	Error *struct {
		IsError bool   `json:"isError"`
		Code    string `json:"code"`
	} `json:"error"`
}

// runClientMJS runs the independent TypeScript client (tests/mcpclient/client.mjs) with args in
// env e's world, in a session of its own, for 3 minutes at most; what it printed is recorded
// for the leak sweeps.
func runClientMJS(e *env, node, dir string, args ...string) (stdout, stderr *bytes.Buffer, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "client.mjs")}, args...)...)
	cmd.Env = append([]string(nil), e.vars...)
	cmd.Dir = e.root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err = cmd.Run()
	e.record(so.String(), se.String())
	return &so, &se, err
}

// TestMCPTypeScriptClient is issue 13's independent client: the TypeScript SDK's own Client
// (tests/mcpclient/client.mjs, pinned by its lockfile) spawns the built `headless mcp` over
// stdio, checks tools/list (the exact names, every annotation a boolean, an outputSchema on
// every tool), signs in with an alias on the local login site (brokerd with the scripted
// pinentry approving; the host is started by `headless mcp` itself), and checks an error
// result's shape. The password is a canary: it must reach the site and appear in nothing the
// client printed (its stdout, and its stderr, which carries every result the server sent and
// the server's own stderr).
func TestMCPTypeScriptClient(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	node, dir := nodePackage(t, filepath.Join("tests", "mcpclient"), "@modelcontextprotocol/sdk")
	ls := newLoginSite(t)
	const account, alias = "ts-client@example.test", "ts"
	canary := newCanary()
	ls.SetAccount(account, canary)
	approve, approveLog := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 30)
	e.startBrokerd()
	c, err := brokerapi.Dial(context.Background(), e.sockPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Add(context.Background(), ls.Origin(), account, alias, []byte(canary)); err != nil {
		t.Fatal(err)
	}
	c.Close()

	so, se, runErr := runClientMJS(e, node, dir, "--headless", filepath.Join(binDir, "headless"), "--login-url", ls.URL("/login"), "--alias", alias)
	for _, n := range lsNeedles("canary", canary) {
		if bytes.Contains(so.Bytes(), n.b) || bytes.Contains(se.Bytes(), n.b) {
			t.Errorf("LEAK: %s in the TypeScript client's output", n.name)
		}
	}
	if runErr != nil {
		t.Fatalf("client.mjs: %v\nstdout %s\nstderr %s", runErr, so.String(), se.String())
	}
	var out mcpClientOutput
	if err := json.Unmarshal(bytes.TrimSpace(so.Bytes()), &out); err != nil {
		t.Fatalf("client.mjs stdout is not one JSON line: %q (%v)\nstderr %s", so.String(), err, se.String())
	}
	t.Logf("client.mjs: %s", strings.TrimSpace(so.String()))
	if !out.OK || len(out.Mismatches) > 0 {
		t.Fatalf("client.mjs saw mismatches: %q\nstderr %s", out.Mismatches, se.String())
	}
	if len(out.Tools) != len(mcpserver.ToolNames) || len(out.Annotations) != len(out.Tools) {
		t.Errorf("tools %q, annotations for %d", out.Tools, len(out.Annotations))
	}
	if out.Visit == nil || out.Visit.AuthRequired == nil || !out.Visit.AuthRequired.Challenge ||
		out.Visit.AuthRequired.Origin != ls.Origin() || len(out.Visit.AuthRequired.Aliases) != 1 || out.Visit.AuthRequired.Aliases[0] != alias {
		t.Errorf("visit of the login page: %+v", out.Visit)
	}
	if out.Snapshot == nil || out.Snapshot.Elements == 0 {
		t.Errorf("snapshot: %+v", out.Snapshot)
	}
	if out.Auth == nil || out.Auth.Status != "authenticated" || out.Auth.Origin != ls.Origin() || out.Auth.Alias != alias {
		t.Errorf("auth_login: %+v", out.Auth)
	}
	if out.Error == nil || !out.Error.IsError || out.Error.Code != "REF_UNKNOWN" {
		t.Errorf("error result: %+v", out.Error)
	}
	// The site got the password once, from the login form, and the person was asked once.
	var got []loginPost
	for _, p := range ls.Posts() {
		if p.Password != "" {
			got = append(got, p)
		}
	}
	if len(got) != 1 || got[0].Server != "main" || got[0].Path != "/login" || got[0].Username != account || got[0].Password != canary {
		t.Errorf("credential submissions the site received: %v", got)
	}
	if p := presencetest.Prompts(t, approveLog); len(p) != 1 {
		t.Errorf("presence prompts: %d (%q), want 1", len(p), p)
	}
}

// TestMCPSlowPerson: with the presence timeout at its default, a person who never answers
// ends an auth_login with the typed PRESENCE_TIMEOUT before the TypeScript SDK's own default
// request timeout (60 s) ends the call with "Request timed out", which says nothing of the
// person (issue 28: the default was 60 s, and the agent got -32001 at 64 s). The client sets
// no timeout of its own. About 45 s.
func TestMCPSlowPerson(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	node, dir := nodePackage(t, filepath.Join("tests", "mcpclient"), "@modelcontextprotocol/sdk")
	ls := newLoginSite(t)
	const account, alias = "slow@example.test", "slow"
	ls.SetAccount(account, newCanary())
	hang, _ := presencetest.FakePinentry(t, "hang")
	// No timeout_seconds: the default.
	e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"pinentry","program":%q}}`, hang))
	e.startBrokerd()
	c, err := brokerapi.Dial(context.Background(), e.sockPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Add(context.Background(), ls.Origin(), account, alias, []byte(newCanary())); err != nil {
		t.Fatal(err)
	}
	c.Close()

	so, se, runErr := runClientMJS(e, node, dir, "--slow-person", "--headless", filepath.Join(binDir, "headless"), "--login-url", ls.URL("/login"), "--alias", alias)
	t.Logf("client.mjs --slow-person: %s", strings.TrimSpace(so.String()))
	if runErr != nil {
		t.Fatalf("client.mjs --slow-person: %v\nstdout %s\nstderr %s", runErr, so.String(), se.String())
	}
	var out struct {
		Slow struct {
			Seconds int    `json:"seconds"`
			Code    string `json:"code"`
		} `json:"slow"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(so.Bytes()), &out); err != nil || out.Slow.Code != "PRESENCE_TIMEOUT" || out.Slow.Seconds >= 60 {
		t.Fatalf("auth_login with a person who never answers: %s (%v)", so.String(), err)
	}
}
