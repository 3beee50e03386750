package archtest

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/headless-dev/headless"

// graph is one build's import graph: package → its imports (module, std and third-party).
type graph map[string][]string

// load runs `go list -deps` for the patterns under goos and returns the graph of every
// package they depend on, themselves included.
func load(t *testing.T, goos string, patterns ...string) graph {
	t.Helper()
	// The toolchain that runs this test: never skipped, a check that does not run proves nothing.
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if p, err := exec.LookPath("go"); err == nil {
		goBin = p
	}
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, patterns...)
	cmd := exec.Command(goBin, args...)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s (GOOS=%s): %v\n%s", strings.Join(args, " "), goos, err, stderr.Bytes())
	}
	g := graph{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 {
			g[f[0]] = f[1:]
		}
	}
	if len(g) < 20 {
		t.Fatalf("go list printed %d packages (GOOS=%s); the check would prove nothing", len(g), goos)
	}
	return g
}

// chain returns the shortest import chain from root to a package matching bad, through
// packages matching via (nil: any); nil when there is none.
func (g graph) chain(root string, bad func(string) bool, via func(string) bool) []string {
	prev := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range g[p] {
			if _, seen := prev[q]; seen {
				continue
			}
			if via != nil && !via(p) && p != root {
				continue
			}
			prev[q] = p
			if bad(q) {
				var c []string
				for x := q; x != ""; x = prev[x] {
					c = append(c, x)
				}
				slices.Reverse(c)
				return c
			}
			queue = append(queue, q)
		}
	}
	return nil
}

// importers returns the packages of g that import pkg directly.
func (g graph) importers(pkg string) []string {
	var out []string
	for p, imps := range g {
		if slices.Contains(imps, pkg) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func short(c []string) string {
	for i := range c {
		c[i] = strings.TrimPrefix(c[i], mod+"/")
	}
	return strings.Join(c, "\n\t  → ")
}

func is(pkgs ...string) func(string) bool {
	return func(p string) bool {
		for _, q := range pkgs {
			if p == mod+"/"+q || strings.HasPrefix(p, mod+"/"+q+"/") {
				return true
			}
		}
		return false
	}
}

func godbus(p string) bool { return strings.HasPrefix(p, "github.com/godbus/") }

var goosList = []string{"linux", "darwin"}

// TestAgentBinaryLinksNoGate: cmd/headless never depends on the vault, the challenge registry or
// anything of brokerd's side (internal/broker/...: the gate, the prompts, the audit writer, the
// host supervisor, the sealing).
func TestAgentBinaryLinksNoGate(t *testing.T) {
	for _, goos := range goosList {
		g := load(t, goos, mod+"/cmd/headless")
		for _, forbidden := range []string{"vault", "challenge", "internal/broker"} {
			bad := func(p string) bool { return p == mod+"/"+forbidden || strings.HasPrefix(p, mod+"/"+forbidden+"/") }
			if c := g.chain(mod+"/cmd/headless", bad, nil); c != nil {
				t.Errorf("GOOS=%s: cmd/headless depends on %s:\n\t  %s", goos, forbidden, short(c))
			}
		}
	}
}

// TestDBusOnlyThroughKeyprobe: the one way D-Bus code reaches cmd/headless is internal/keyprobe.
func TestDBusOnlyThroughKeyprobe(t *testing.T) {
	for _, goos := range goosList {
		g := load(t, goos, mod+"/cmd/headless")
		notProbe := func(p string) bool { return p != mod+"/internal/keyprobe" }
		if c := g.chain(mod+"/cmd/headless", godbus, notProbe); c != nil {
			t.Errorf("GOOS=%s: godbus reaches cmd/headless other than through internal/keyprobe:\n\t  %s", goos, short(c))
		}
	}
}

// TestVaultAndChallengeKnowNoBrowser: vault and challenge never depend on the browser side.
func TestVaultAndChallengeKnowNoBrowser(t *testing.T) {
	browser := is("host", "profile", "internal/surface", "cmd/headless")
	for _, goos := range goosList {
		for _, root := range []string{"vault", "challenge"} {
			g := load(t, goos, mod+"/"+root)
			if c := g.chain(mod+"/"+root, browser, nil); c != nil {
				t.Errorf("GOOS=%s: %s depends on the browser side:\n\t  %s", goos, root, short(c))
			}
		}
	}
}

// TestControlIsProtocolOnly: host/control (control.sock's protocol and typed client, what the
// CLI and the MCP server are built on) links no browser engine, no profile and nothing of
// brokerd's side: a client of the host is not the host.
func TestControlIsProtocolOnly(t *testing.T) {
	engine := func(p string) bool {
		return p == mod+"/host" || is("host/cdp", "profile", "vault", "challenge", "internal/broker", "internal/keyprobe")(p)
	}
	for _, goos := range goosList {
		g := load(t, goos, mod+"/host/control")
		if c := g.chain(mod+"/host/control", engine, nil); c != nil {
			t.Errorf("GOOS=%s: host/control depends on the engine or brokerd's side:\n\t  %s", goos, short(c))
		}
		if c := g.chain(mod+"/host/control", godbus, nil); c != nil {
			t.Errorf("GOOS=%s: host/control links D-Bus:\n\t  %s", goos, short(c))
		}
	}
}

// TestFrontLinksNoHostEngine: the agent-facing surface (the CLI, the MCP server, the doctor)
// talks to the host over control.sock (host/control) and links none of its engine: not the
// host, the CDP pipe, the echo scan or the profile. (cmd/headless links the engine for
// 'headless host', the host process itself.)
func TestFrontLinksNoHostEngine(t *testing.T) {
	engine := func(p string) bool { return p == mod+"/host" || is("host/cdp", "host/echo", "profile")(p) }
	for _, goos := range goosList {
		for _, front := range []string{"internal/surface/cli", "internal/surface/mcpserver", "internal/surface/doctor"} {
			g := load(t, goos, mod+"/"+front)
			if c := g.chain(mod+"/"+front, engine, nil); c != nil {
				t.Errorf("GOOS=%s: %s links the host engine:\n\t  %s", goos, front, short(c))
			}
		}
	}
}

// TestWhoImports: the gate only in brokerd, the profile only in the host, and the leaves
// stay leaves. Test files are not production importers and are not listed by go list -deps.
func TestWhoImports(t *testing.T) {
	for _, goos := range goosList {
		g := load(t, goos, mod+"/...")
		for pkg, allowed := range map[string][]string{
			"internal/broker/gate": {"cmd/brokerd"},
			"profile":              {"host"},
		} {
			for _, p := range g.importers(mod + "/" + pkg) {
				if !slices.Contains(allowed, strings.TrimPrefix(p, mod+"/")) {
					t.Errorf("GOOS=%s: %s imports %s; only %v may", goos, strings.TrimPrefix(p, mod+"/"), pkg, allowed)
				}
			}
		}
		// internal/wire (codes and framing, the vocabulary every error's code comes from)
		// is a leaf itself; the other leaves may import it and nothing else of headless.
		for leaf, allowed := range map[string][]string{
			"internal/wire":       nil,
			"internal/clip":       nil,
			"internal/credential": {"internal/wire"},
			"internal/keyprobe":   {"internal/wire"},
		} {
			for _, imp := range g[mod+"/"+leaf] {
				if strings.HasPrefix(imp, mod+"/") && !slices.Contains(allowed, strings.TrimPrefix(imp, mod+"/")) {
					t.Errorf("GOOS=%s: %s imports %s; it must import nothing of headless but %v", goos, leaf, strings.TrimPrefix(imp, mod+"/"), allowed)
				}
			}
		}
	}
}

// TestNoStandInsInProduction: the scripted presence stand-ins and the real-component harness
// are test-only packages; no production binary links them.
func TestNoStandInsInProduction(t *testing.T) {
	standIn := func(p string) bool {
		return strings.Contains(p, "presencetest") || strings.Contains(p, "realtest") || strings.Contains(p, "fakepinentry")
	}
	for _, goos := range goosList {
		for _, bin := range []string{"cmd/brokerd", "cmd/headless"} {
			g := load(t, goos, mod+"/"+bin)
			if c := g.chain(mod+"/"+bin, standIn, nil); c != nil {
				t.Errorf("GOOS=%s: %s links a test stand-in:\n\t  %s", goos, bin, short(c))
			}
		}
	}
}

// TestChain: the chain finder names the path, and honours via.
func TestChain(t *testing.T) {
	g := graph{"a": {"b", "c"}, "b": {"d"}, "c": {"x"}, "d": {"x"}}
	x := func(p string) bool { return p == "x" }
	if c := g.chain("a", x, nil); fmt.Sprint(c) != "[a c x]" {
		t.Fatalf("chain = %v", c)
	}
	if c := g.chain("a", x, func(p string) bool { return p != "c" }); fmt.Sprint(c) != "[a b d x]" {
		t.Fatalf("chain avoiding c = %v", c)
	}
	if c := g.chain("a", x, func(p string) bool { return p == "a" }); c != nil {
		t.Fatalf("chain through nothing = %v", c)
	}
}

// rootSkips lists the if statements of a test file that skip when the test is not root (a
// uid compared with 0, a Skip in the body): such a test must call realtest.NeedRoot, which
// fails instead in an opted-in run.
func rootSkips(name string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		return nil, err
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		is, ok := n.(*ast.IfStmt)
		if !ok {
			return true
		}
		cond := string(src[fset.Position(is.Cond.Pos()).Offset:fset.Position(is.Cond.End()).Offset])
		if !strings.Contains(strings.ToLower(cond), "uid") || !strings.Contains(cond, "0") {
			return true
		}
		skips := false
		ast.Inspect(is.Body, func(n ast.Node) bool {
			if s, ok := n.(*ast.SelectorExpr); ok && strings.HasPrefix(s.Sel.Name, "Skip") {
				skips = true
			}
			return !skips
		})
		if skips {
			found = append(found, fmt.Sprintf("%s: if %s { ... Skip ... }", fset.Position(is.Pos()), cond))
		}
		return true
	})
	return found, nil
}

// TestNoRootSkips: no test skips itself for not being root; realtest.NeedRoot does, and fails
// in the official run (HEADLESS_REAL=1) where a skip would hide a guarantee untested.
func TestNoRootSkips(t *testing.T) {
	bad, err := rootSkips("x_test.go", []byte("package x\nfunc T(t *testing.T) {\n\tif os.Geteuid() != 0 {\n\t\tt.Skip(\"root\")\n\t}\n}\n"))
	if err != nil || len(bad) != 1 {
		t.Fatalf("the scan misses a root skip: %v %v", bad, err)
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	n := 0
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		bad, err := rootSkips(p, src)
		for _, b := range bad {
			t.Errorf("%s: call realtest.NeedRoot instead", b)
		}
		return err
	})
	if err != nil || n < 50 {
		t.Fatalf("walked %d test files: %v", n, err)
	}
}

// webauthnCall is a WebAuthn method or event name in Go source.
var webauthnCall = regexp.MustCompile(`"WebAuthn\.[a-z]`)

// TestWebAuthnOnlyInCDP: the DevTools WebAuthn domain, whose calls and events carry a
// passkey's private key, is spoken in one file, host/cdp/webauthn.go; and nothing anywhere
// reads credentials back out of an authenticator (WebAuthn.getCredential, getCredentials):
// no verb, however it is reached, can list or export a passkey.
func TestWebAuthnOnlyInCDP(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if bytes.Contains(src, []byte("WebAuthn.getCredential")) {
			t.Errorf("%s reads credentials out of a virtual authenticator", rel)
		}
		if webauthnCall.Match(src) {
			if rel != filepath.Join("host", "cdp", "webauthn.go") {
				t.Errorf("%s speaks the WebAuthn domain; only host/cdp/webauthn.go may", rel)
			}
			seen++
		}
		return nil
	})
	if err != nil || seen != 1 {
		t.Fatalf("found the WebAuthn domain in %d files (want host/cdp/webauthn.go): %v", seen, err)
	}
}
