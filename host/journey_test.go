package host

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/journey"
	"github.com/headless-dev/headless/internal/wire"
)

// TestOnlyFixedScript: the host runs no JavaScript but its own fixed functions. In the host's
// source, no method that evaluates a script (Runtime.evaluate and friends) is named at all,
// every Runtime.callFunctionOn's functionDeclaration is a fixed function (a package constant
// named fn…, or the fn parameter of a helper whose every caller passes one), and the
// helpers are called with nothing else. A journey's plan (or any caller's input) can only
// ever reach a fixed function as a call argument.
func TestOnlyFixedScript(t *testing.T) {
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	consts := map[string]bool{}
	var parsed []*ast.File
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"Runtime.evaluate", "Runtime.compileScript", "Runtime.runScript", "addScriptToEvaluateOnNewDocument",
			"Debugger.", "Runtime.addBinding"} {
			if strings.Contains(string(src), bad) {
				t.Errorf("%s names %s", f, bad)
			}
		}
		af, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, af)
		for _, d := range af.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, sp := range g.Specs {
					for _, n := range sp.(*ast.ValueSpec).Names {
						if strings.HasPrefix(n.Name, "fn") {
							consts[n.Name] = true
						}
					}
				}
			}
		}
	}
	if !consts["fnFocused"] || !consts["fnEmpty"] || !consts["fnZoom"] || !consts["fnActive"] {
		t.Fatalf("the fixed functions were not found: %v", consts)
	}
	// helpers: functions with a parameter named fn that reach functionDeclaration.
	helpers := map[string]bool{}
	calls := 0
	for _, af := range parsed {
		ast.Inspect(af, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			if k, ok := kv.Key.(*ast.BasicLit); !ok || k.Value != strconv.Quote("functionDeclaration") {
				return true
			}
			calls++
			id, ok := kv.Value.(*ast.Ident)
			switch {
			case !ok:
				t.Errorf("%s: functionDeclaration is not a fixed function", fset.Position(kv.Pos()))
			case consts[id.Name]:
			case id.Name == "fn":
				helpers[enclosing(af, kv.Pos())] = true
			default:
				t.Errorf("%s: functionDeclaration is %s, not a fixed function", fset.Position(kv.Pos()), id.Name)
			}
			return true
		})
	}
	if calls < 2 || len(helpers) == 0 {
		t.Fatalf("found %d functionDeclarations and helpers %v: the test looks at nothing", calls, helpers)
	}
	// A function that hands its own fn parameter to a helper is a helper too (callFixed
	// calls callFixedWith), until nothing changes; then every call of a helper passes a fixed
	// function, or is a helper passing its own fn on.
	passesFn := func(c *ast.CallExpr) bool {
		for _, a := range c.Args {
			if id, ok := a.(*ast.Ident); ok && id.Name == "fn" {
				return true
			}
		}
		return false
	}
	for changed := true; changed; {
		changed = false
		for _, af := range parsed {
			ast.Inspect(af, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if sel, ok := c.Fun.(*ast.SelectorExpr); ok && helpers[sel.Sel.Name] && passesFn(c) {
						if f := enclosing(af, c.Pos()); !helpers[f] {
							helpers[f], changed = true, true
						}
					}
				}
				return true
			})
		}
	}
	checked := 0
	for _, af := range parsed {
		ast.Inspect(af, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := c.Fun.(*ast.SelectorExpr)
			if !ok || !helpers[sel.Sel.Name] {
				return true
			}
			checked++
			fixed := false
			for _, a := range c.Args {
				if id, ok := a.(*ast.Ident); ok && consts[id.Name] {
					fixed = true
				}
			}
			if !fixed && !(passesFn(c) && helpers[enclosing(af, c.Pos())]) {
				t.Errorf("%s: %s is called without a fixed function", fset.Position(c.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked < 5 {
		t.Errorf("only %d calls of the helpers %v were checked: the test looks at little", checked, helpers)
	}
}

// enclosing names the function declaration of af that contains pos.
func enclosing(af *ast.File, pos token.Pos) string {
	for _, d := range af.Decls {
		if f, ok := d.(*ast.FuncDecl); ok && f.Pos() <= pos && pos < f.End() {
			return f.Name.Name
		}
	}
	return ""
}

func TestFreshNameIsASessionName(t *testing.T) {
	for _, id := range []string{"j", "reserve-stock", strings.Repeat("a", journey.MaxIDLen), strings.Repeat("a.", journey.MaxIDLen/2-1) + "b"} {
		n := freshName(id, "k3x9q2wa7b1c")
		if err := credential.ValidSession(n); err != nil || !strings.HasPrefix(n, "journey.") {
			t.Errorf("freshName(%q) = %q: %v", id, n, err)
		}
	}
}

func TestKeysAreJourneyKeys(t *testing.T) {
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	if !slices.Equal(names, journey.KeyNames()) {
		t.Errorf("press takes %v, a journey's press %v: the same set, always", names, journey.KeyNames())
	}
}

func TestRank(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		exact     bool
		rank      int
	}{
		{"Reserve", "Reserve", false, 0},
		{"reserve", "Reserve", false, 0},
		{"  Reserve \n now", "Reserve now", false, 0},
		{"Reserve now", "Reserve", false, 1},
		{"Reserve now", "Reserve", true, -1},
		{"reserve", "Reserve", true, -1},
		{"Reserve", "Reserve", true, 0},
		{"Cancel", "Reserve", false, -1},
	} {
		if r := rank(tc.got, tc.want, tc.exact); r != tc.rank {
			t.Errorf("rank(%q, %q, %v) = %d, want %d", tc.got, tc.want, tc.exact, r, tc.rank)
		}
	}
	if got := best([]int64{1, 2, 3, 4}, []int{1, 0, 1, 0}); !slices.Equal(got, []int64{2, 4}) {
		t.Errorf("best keeps %v, want the whole matches in page order", got)
	}
	if got := best([]int64{1, 2}, []int{1, 1}); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("best keeps %v", got)
	}
}

func TestPick(t *testing.T) {
	ms := []match{{id: 7}, {id: 8}}
	one, two, nine := 1, 2, 9
	for _, tc := range []struct {
		ms   []match
		nth  *int
		id   int64
		code wire.Code
	}{
		{ms[:1], nil, 7, ""},
		{ms, nil, 0, wire.CodeTargetAmbiguous},
		{nil, nil, 0, wire.CodeTargetNotFound},
		{ms, &one, 8, ""},
		{ms, &two, 0, wire.CodeTargetNotFound},
		{ms, &nine, 0, wire.CodeTargetNotFound},
	} {
		m, err := pick(tc.ms, journey.Action{Text: "x", Nth: tc.nth})
		if wire.CodeOf(err) != tc.code || m.id != tc.id {
			t.Errorf("pick(%d matches, nth %v) = %d, %v; want %d, %s", len(tc.ms), tc.nth, m.id, err, tc.id, tc.code)
		}
	}
}

func TestRouteNeverCarriesAQuery(t *testing.T) {
	r := &jrun{plan: journey.Plan{Origin: "http://127.0.0.1:8080"}}
	for _, tc := range []struct{ url, origin, want string }{
		{"http://127.0.0.1:8080/home", "http://127.0.0.1:8080", "/home"},
		{"http://127.0.0.1:8080/list?page=1&token=s3cret#x", "http://127.0.0.1:8080", "/list"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", "/"},
		{"https://elsewhere.test/a?b=c", "https://elsewhere.test", "https://elsewhere.test/a"},
		{"about:blank", "null", "about:blank"},
	} {
		if got := r.route(tc.url, tc.origin); got != tc.want {
			t.Errorf("route(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

func TestCompare(t *testing.T) {
	if !compare(" Stock:  8 ", "Stock: 8", "") || compare("Stock: 80", "Stock: 8", "") || !compare("Stock: 80", "Stock: 8", "contains") ||
		compare("reserved", "Reserved", "") {
		t.Error("compare: exact is whole text with case, white space runs as one; contains a part")
	}
}

// TestWhy: when the run's context ended, an error that only says so becomes why it ended; a
// definite answer keeps its code.
func TestWhy(t *testing.T) {
	caller, cancelCaller := context.WithCancel(context.Background())
	defer cancelCaller()
	expired, cancel := context.WithTimeout(caller, time.Nanosecond)
	defer cancel()
	<-expired.Done()
	r := &jrun{caller: caller, budget: expired, plan: journey.Plan{BudgetSeconds: 2}}
	for _, tc := range []struct {
		err  error
		want wire.Code
	}{
		{context.DeadlineExceeded, wire.CodeBudgetExceeded},
		{wire.Errorf(wire.CodeTimeout, "the page did not answer: %w", context.DeadlineExceeded), wire.CodeBudgetExceeded},
		{errWithdrawn, wire.CodeBudgetExceeded},
		{wire.Errorf(wire.CodePresenceDenied, "no"), wire.CodePresenceDenied},
		{journey.Failed(wire.Errorf(wire.CodeTimeout, "not visible")), wire.CodeBudgetExceeded},
	} {
		if got := wire.CodeOf(r.why(tc.err)); got != tc.want {
			t.Errorf("why(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
	stopped, stop := context.WithCancel(caller)
	stop()
	r.budget = stopped
	if got := wire.CodeOf(r.why(context.Canceled)); got != wire.CodeCancelled {
		t.Errorf("a run whose session was closed: %s", got)
	}
	cancelCaller()
	if got := r.why(context.Canceled); wire.CodeOf(got) != wire.CodeCancelled || !strings.Contains(got.Error(), "caller") {
		t.Errorf("a run whose caller went away: %v", got)
	}
	r = &jrun{caller: context.Background(), budget: context.Background()}
	if err := errors.New("x"); r.why(err) != err {
		t.Error("a run whose context is alive: why changes the error")
	}
}

func TestRectHidesSecretFields(t *testing.T) {
	n := snapshot.Node{Rect: &snapshot.Rect{X: 1.4, Y: 2.6, Width: 100, Height: 20}}
	if r := rect(n); r == nil || r.X != 1 || r.Y != 3 || r.Width != 100 {
		t.Errorf("rect %+v", r)
	}
	n.Secret = true
	if rect(n) != nil {
		t.Error("a secret field's box is reported")
	}
}
