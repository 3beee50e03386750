//go:build linux

package tests

// Issue 14: journeys, end to end: the built headless and brokerd binaries, a real
// gnome-keyring on a private bus, real Chromium, the local login site (loginsite_test.go,
// journeysite_test.go); the only stand-in is the person at the presence prompt (the scripted
// pinentry, here in its "switch" mode: approve, or deny while a file exists).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/journey"
)

// jPlan is a plan as the tests write it: a map, marshalled to the file.
type jPlan map[string]any

func jAction(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// runJourney writes plan to a file of its own and runs 'headless journey run FILE --json'
// with extra flags; the report is decoded when the run printed one.
func (e *env) runJourney(t *testing.T, plan any, extra ...string) (journey.Report, result) {
	t.Helper()
	var raw []byte
	switch p := plan.(type) {
	case string:
		raw = []byte(p)
	default:
		var err error
		if raw, err = json.Marshal(p); err != nil {
			t.Fatal(err)
		}
	}
	f := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(f, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.run("", "headless", append([]string{"journey", "run", f, "--json"}, extra...)...)
	var rep journey.Report
	json.Unmarshal([]byte(r.stdout), &rep)
	return rep, r
}

// wantStatus checks the report's status and the CLI's exit status for it.
func wantStatus(t *testing.T, rep journey.Report, r result, status string) {
	t.Helper()
	code := map[string]int{journey.StatusPassed: 0, journey.StatusNothingToReport: 0, journey.StatusFailed: 3, journey.StatusCouldNotLook: 4}[status]
	if rep.Status != status || r.code != code {
		b, _ := json.MarshalIndent(rep, "", " ")
		t.Fatalf("journey: status %q exit %d, want %q exit %d\nstderr %s\nreport %s", rep.Status, r.code, status, code, r.stderr, b)
	}
	t.Logf("journey %s: %s (%d ms)", rep.JourneyID, rep.Summary, rep.ElapsedMS)
}

func stateIDs(rs []journey.ReviewedState) []string {
	var out []string
	for _, s := range rs {
		out = append(out, s.ID)
	}
	return out
}

func expectedIDs(es []journey.ExpectedState) []string {
	var out []string
	for _, s := range es {
		out = append(out, s.ID)
	}
	return out
}

func evidenceOf(rep journey.Report, state string) journey.Evidence {
	for _, e := range rep.Evidence {
		if e.StateID == state {
			return e
		}
	}
	return journey.Evidence{}
}

// reservePlan is the journey against the local site: sign in, reserve two units,
// see the status and the stock.
func reservePlan(ls *loginSite, id string) jPlan {
	return jPlan{
		"journey_id": id, "name": "Reserve two units", "origin": ls.Origin(), "path": "/login",
		"width": 390, "height": 844, "theme": "dark", "zoom": 100,
		"expected_states": []any{
			map[string]any{"id": "signed-in", "expected": "The account's home page"},
			map[string]any{"id": "reserved", "expected": "Reservation succeeds"},
			map[string]any{"id": "stock-decreased", "expected": "Stock goes from 10 to 8"},
		},
		"actions": []any{
			jAction("kind", "login", "state_id", "signed-in", "alias", "main"),
			jAction("kind", "navigate", "state_id", "shop", "path", "/shop"),
			jAction("kind", "fill", "state_id", "quantity-entered", "role", "spinbutton", "name", "Quantity", "value", "2"),
			jAction("kind", "click", "state_id", "submitted", "role", "button", "name", "Reserve"),
			jAction("kind", "assert", "state_id", "reserved", "selector", "#status", "assertion", "text", "value", "Reserved", "screenshot", true),
			jAction("kind", "assert", "state_id", "stock-decreased", "text", "Stock:", "assertion", "text", "value", "Stock: 8"),
		},
	}
}

func TestJourney(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	const account = "alice@example.test"
	canary := newCanary()
	ls.SetAccount(account, canary)
	person, personLog := presencetest.FakePinentry(t, "switch")
	deny := func(on bool) {
		if on {
			os.WriteFile(personLog+".deny", nil, 0o600)
		} else {
			os.Remove(personLog + ".deny")
		}
	}
	lsPresence(e, person, 10)
	lsEnroll(t, e, ls.Origin(), "main", account, canary)
	wrongPW := newCanary() // alias "wrong": the same account, a password the site refuses
	lsEnroll(t, e, ls.Origin(), "wrong", account, wrongPW)
	e.start(t)

	// The durable profile's own sign-in: the default session is signed in before any journey,
	// which must not see it.
	lsVisit(t, e, ls.URL("/login"))
	lsLoginOK(t, e, "authenticated", "--alias", "main")

	var reports []string // every report, for the canary sweep
	keep := func(r result) { reports = append(reports, r.stdout, r.stderr) }
	// contexts counts the browser's contexts besides the durable profile's (status).
	contexts := func(t *testing.T) int {
		t.Helper()
		return e.hostStatus(t).BrowserContexts
	}
	if n := contexts(t); n != 0 {
		t.Fatalf("%d browser contexts before any journey", n)
	}

	t.Run("passes", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		posts := len(ls.Posts())
		rep, r := e.runJourney(t, reservePlan(ls, "reserve-stock"), "--out", out)
		keep(r)
		wantStatus(t, rep, r, journey.StatusPassed)
		if got := stateIDs(rep.Reviewed); !slices.Equal(got, []string{"signed-in", "reserved", "stock-decreased"}) || len(rep.NotReviewed) != 0 {
			t.Errorf("reviewed %v, not reviewed %v", got, rep.NotReviewed)
		}
		if rep.Context != journey.ContextFresh || !strings.HasPrefix(rep.Session, "journey.reserve-stock.") {
			t.Errorf("context %s session %s, want a fresh one", rep.Context, rep.Session)
		}
		if n := len(ls.Posts()) - posts; n != 1 {
			t.Errorf("the site received %d sign-ins, want 1", n)
		}
		login := evidenceOf(rep, "signed-in")
		if login.Login == nil || login.Login.Status != "authenticated" || login.Login.Alias != "main" || login.Route != "/home" {
			t.Errorf("login evidence %+v (login %+v)", login, login.Login)
		}
		shop := evidenceOf(rep, "shop")
		if !slices.Contains(shop.Text, "theme dark") || !slices.Contains(shop.Text, "width 390") {
			t.Errorf("the page did not see the emulated theme and width: %q", shop.Text)
		}
		if rep.Emulation.ViewportWidth != 390 || rep.Emulation.ViewportHeight != 844 || rep.Emulation.ZoomMethod != "css_zoom" {
			t.Errorf("emulation %+v", rep.Emulation)
		}
		filled := evidenceOf(rep, "quantity-entered")
		if filled.Target == nil || filled.Target.Kind != "input" || filled.Focused == nil || filled.Focused.Name != "Quantity" {
			t.Errorf("fill evidence: target %+v focused %+v", filled.Target, filled.Focused)
		}
		// One screenshot, named by journey, state, viewport, theme and zoom; the bytes on disk
		// (the host's store and the --out copy) are the ones hashed.
		if len(rep.Artifacts) != 1 {
			t.Fatalf("artifacts %+v", rep.Artifacts)
		}
		a := rep.Artifacts[0]
		if a.Name != "reserve-stock--reserved--390x844--dark--z100.png" || evidenceOf(rep, "reserved").Screenshot != a.Name {
			t.Errorf("artifact %+v", a)
		}
		for _, p := range []string{a.Path, filepath.Join(out, a.Name)} {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != a.SHA256 || len(b) != a.Bytes || !bytes.HasPrefix(b, []byte("\x89PNG")) {
				t.Errorf("%s: sha256 %x (%d bytes), reported %s (%d)", p, sum, len(b), a.SHA256, a.Bytes)
			}
		}
		// --out: the report as JSON and Markdown, every file 0600 in a 0700 directory.
		fi, err := os.Stat(out)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("--out dir: %v %v", fi, err)
		}
		for _, f := range []string{"report.json", "report.md", a.Name} {
			fi, err := os.Stat(filepath.Join(out, f))
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("--out %s: %v %v", f, fi, err)
			}
		}
		md, _ := os.ReadFile(filepath.Join(out, "report.md"))
		if !bytes.Contains(md, []byte("**Status: passed**")) || !bytes.Contains(md, []byte("CSS zoom")) {
			t.Errorf("report.md:\n%s", md)
		}
		var onDisk journey.Report
		if b, _ := os.ReadFile(filepath.Join(out, "report.json")); json.Unmarshal(b, &onDisk) != nil || onDisk.RunID != rep.RunID {
			t.Errorf("report.json is not the report")
		}
		reports = append(reports, string(md))
		// The fresh context is gone (from the browser too), the durable profile's session
		// untouched.
		if n := contexts(t); n != 0 {
			t.Errorf("%d browser contexts left after the journey", n)
		}
		var list struct {
			Sessions []struct{ Name string } `json:"sessions"`
		}
		e.ok(t, &list, "session", "list")
		for _, s := range list.Sessions {
			if strings.HasPrefix(s.Name, "journey.") {
				t.Errorf("the journey's session %s is still open", s.Name)
			}
		}
	})

	t.Run("fresh context sees no profile cookies", func(t *testing.T) {
		rep, r := e.runJourney(t, jPlan{"journey_id": "fresh", "origin": ls.Origin(), "path": "/home",
			"expected_states": []any{map[string]any{"id": "signed-out", "expected": "not signed in"}},
			"actions":         []any{jAction("kind", "assert", "state_id", "signed-out", "role", "heading", "name", "Not signed in", "assertion", "visible")}})
		keep(r)
		wantStatus(t, rep, r, journey.StatusPassed)
		// While the durable profile's default session is still signed in.
		snap := e.run("", "headless", "visit", ls.URL("/home"), "--json")
		if !strings.Contains(e.run("", "headless", "snapshot", "--json").stdout, "Welcome "+account) {
			t.Errorf("the default session lost its sign-in: %s", snap.stdout)
		}
		// In the default session instead, the journey sees it.
		rep, r = e.runJourney(t, jPlan{"journey_id": "durable", "origin": ls.Origin(), "path": "/home", "session": "default",
			"expected_states": []any{map[string]any{"id": "signed-in", "expected": "welcome"}},
			"actions":         []any{jAction("kind", "assert", "state_id", "signed-in", "role", "heading", "name", "Welcome", "assertion", "visible")}})
		keep(r)
		wantStatus(t, rep, r, journey.StatusPassed)
		if rep.Context != journey.ContextNormal || rep.Session != "default" {
			t.Errorf("context %s session %s", rep.Context, rep.Session)
		}
	})

	t.Run("denied sign-in could not look", func(t *testing.T) {
		deny(true)
		defer deny(false)
		posts, typed := len(ls.Posts()), len(ls.Typed())
		rep, r := e.runJourney(t, reservePlan(ls, "reserve-denied"))
		keep(r)
		wantStatus(t, rep, r, journey.StatusCouldNotLook)
		c := rep.CouldNotLook
		if c == nil || c.Reason != "PRESENCE_DENIED" || c.Step != 1 || c.StateID != "signed-in" || c.Hint == "" || rep.Failure != nil {
			t.Errorf("could_not_look %+v, failure %+v", c, rep.Failure)
		}
		if len(rep.Reviewed) != 0 || !slices.Equal(expectedIDs(rep.NotReviewed), []string{"signed-in", "reserved", "stock-decreased"}) {
			t.Errorf("reviewed %v, not reviewed %v: every expected state should be not reviewed", rep.Reviewed, rep.NotReviewed)
		}
		if rep.ActionsRun != 1 || len(rep.Evidence) != 1 || rep.Evidence[0].OK {
			t.Errorf("ran %d actions, evidence %+v", rep.ActionsRun, rep.Evidence)
		}
		lsNothingTyped(t, ls, posts, typed)
	})

	t.Run("a refused credential could not look", func(t *testing.T) {
		for _, path := range []string{"/login", "/spa"} { // a form post, and a script login that leaves the field filled
			rep, r := e.runJourney(t, jPlan{"journey_id": "refused", "origin": ls.Origin(), "path": path,
				"expected_states": []any{map[string]any{"id": "home", "expected": "signed in"}},
				"actions": []any{
					jAction("kind", "login", "state_id", "signed-in", "alias", "wrong", "screenshot", true),
					jAction("kind", "assert", "state_id", "home", "role", "heading", "name", "Welcome", "assertion", "visible"),
				}})
			keep(r)
			wantStatus(t, rep, r, journey.StatusCouldNotLook)
			ev := rep.Evidence[0]
			if c := rep.CouldNotLook; c == nil || c.Reason != "LOGIN_FAILED" || ev.Login == nil || ev.Login.Status != "failed" {
				t.Errorf("%s: could_not_look %+v, login %+v", path, c, ev.Login)
			}
			if path == "/spa" && !ev.Login.Cleared {
				t.Errorf("the script login left the typed field as it was: %+v", ev.Login)
			}
			if ev.Screenshot == "" || len(rep.Artifacts) != 1 {
				t.Errorf("%s: the failed sign-in's state has no screenshot: %+v", path, ev)
			}
		}
	})

	t.Run("failing assertion", func(t *testing.T) {
		p := reservePlan(ls, "reserve-failing")
		acts := p["actions"].([]any)
		// Reserve more than is left: the status says so, and the assertion fails.
		acts[2] = jAction("kind", "fill", "state_id", "quantity-entered", "role", "spinbutton", "name", "Quantity", "value", "50")
		acts[4] = jAction("kind", "assert", "state_id", "reserved", "selector", "#status", "assertion", "text", "value", "Reserved", "timeout_ms", 2000)
		rep, r := e.runJourney(t, p)
		keep(r)
		wantStatus(t, rep, r, journey.StatusFailed)
		f := rep.Failure
		if f == nil || f.Reason != "ASSERTION_FAILED" || f.Step != 5 || f.StateID != "reserved" || rep.CouldNotLook != nil {
			t.Fatalf("failure %+v could_not_look %+v", f, rep.CouldNotLook)
		}
		ev := evidenceOf(rep, "reserved")
		if ev.OK || !strings.Contains(ev.Observed, "Not enough stock") {
			t.Errorf("the failed state's evidence does not show what the page showed: %+v", ev)
		}
		if !slices.Equal(stateIDs(rep.Reviewed), []string{"signed-in"}) || !slices.Equal(expectedIDs(rep.NotReviewed), []string{"reserved", "stock-decreased"}) {
			t.Errorf("reviewed %v not reviewed %v", stateIDs(rep.Reviewed), expectedIDs(rep.NotReviewed))
		}
		if rep.ActionsRun != 5 || len(rep.Evidence) != 5 {
			t.Errorf("the run went on after the failure: %d actions, %d evidence", rep.ActionsRun, len(rep.Evidence))
		}
	})

	t.Run("budget overrun", func(t *testing.T) {
		// The budget bounds the whole run: here it cuts a wait at step 1 far longer than it.
		// Where it runs out depends on the machine's speed only through step 0 (the fresh
		// context and its first page), which a loaded machine can spend a short budget on
		// (issue 46): then the run is tried again with a budget twice as long, always shorter
		// than the wait, until step 0 fits in it. What each run must say is the same.
		for budget := 2; ; budget *= 2 {
			rep, r := e.runJourney(t, jPlan{"journey_id": "slow", "origin": ls.Origin(), "path": "/list", "budget_seconds": budget,
				"expected_states": []any{map[string]any{"id": "never", "expected": "text that never shows"}, map[string]any{"id": "after", "expected": "x"}},
				"actions": []any{
					jAction("kind", "wait", "state_id", "never", "text", "This never appears", "timeout_ms", 60000),
					jAction("kind", "assert", "state_id", "after", "role", "heading", "name", "List", "assertion", "visible"),
				}})
			keep(r)
			wantStatus(t, rep, r, journey.StatusCouldNotLook)
			c := rep.CouldNotLook
			if c == nil || c.Reason != "BUDGET_EXCEEDED" || c.Step > 1 {
				t.Fatalf("budget %d s: could_not_look %+v", budget, c)
			}
			// It ran out, not less: the budget is what stopped it.
			if rep.BudgetMS != int64(budget)*1000 || rep.ElapsedMS < rep.BudgetMS {
				t.Errorf("budget %d ms, stopped after %d ms", rep.BudgetMS, rep.ElapsedMS)
			}
			if len(rep.Reviewed) != 0 || len(rep.NotReviewed) != 2 {
				t.Errorf("reviewed %v not reviewed %v", rep.Reviewed, rep.NotReviewed)
			}
			if c.Step == 1 {
				if c.StateID != "never" || rep.ActionsRun != 1 {
					t.Errorf("the budget ran out in the wait: could_not_look %+v after %d actions", c, rep.ActionsRun)
				}
				break
			}
			if rep.ActionsRun != 0 || budget >= 32 {
				t.Fatalf("budget %d s ran out at step 0 (%d actions run): the fresh context and its page did not open in %d s", budget, rep.ActionsRun, budget)
			}
			t.Logf("a %d s budget ran out at step 0 (a loaded machine): again with %d s", budget, 2*budget)
		}
	})

	t.Run("refused plans", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			plan string
			code string
		}{
			{"script selector", fmt.Sprintf(`{"journey_id":"x","origin":%q,"actions":[{"kind":"click","state_id":"a","selector":"javascript:alert(document.cookie)"}]}`, ls.Origin()), "UNSAFE_SELECTOR"},
			{"value selector", fmt.Sprintf(`{"journey_id":"x","origin":%q,"actions":[{"kind":"assert","state_id":"a","selector":"input[type=password][value^=c]","assertion":"count","count":1}]}`, ls.Origin()), "UNSAFE_SELECTOR"},
			{"unknown field", fmt.Sprintf(`{"journey_id":"x","origin":%q,"evaluate":"1","actions":[{"kind":"click","state_id":"a","text":"x"}]}`, ls.Origin()), "PLAN_INVALID"},
			{"21 actions", fmt.Sprintf(`{"journey_id":"x","origin":%q,"actions":[%s]}`, ls.Origin(), strings.TrimSuffix(strings.Repeat(`{"kind":"click","state_id":"a","text":"x"},`, 21), ",")), "PLAN_INVALID"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, r := e.runJourney(t, tc.plan)
				keep(r)
				if r.code != 1 || errCode(t, r) != tc.code {
					t.Errorf("exit %d, %s; want exit 1 and %s", r.code, r.stdout, tc.code)
				}
			})
		}
		// The host refuses them too, whoever asks (not only the CLI's own check).
		// (Covered at the control socket by TestJourneyControlSocketRefusesBadPlans.)
	})

	t.Run("secret fields are never filled", func(t *testing.T) {
		for _, target := range []string{"#signing", "#code", "#door"} {
			rep, r := e.runJourney(t, jPlan{"journey_id": "secret", "origin": ls.Origin(), "path": "/secret-fields",
				"actions": []any{
					jAction("kind", "fill", "state_id", "name", "selector", "#display", "value", "Alice"),
					jAction("kind", "fill", "state_id", "secret", "selector", target, "value", "guess"),
				}})
			keep(r)
			wantStatus(t, rep, r, journey.StatusCouldNotLook)
			if c := rep.CouldNotLook; c == nil || c.Reason != "DIRECT_FILL_DISABLED" || c.Step != 2 {
				t.Errorf("%s: could_not_look %+v", target, c)
			}
		}
	})

	t.Run("four at once", func(t *testing.T) {
		var wg sync.WaitGroup
		reps := make([]journey.Report, 4)
		rs := make([]result, 4)
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := reservePlan(ls, fmt.Sprintf("parallel-%d", i))
				acts := p["actions"].([]any)
				acts[5] = jAction("kind", "assert", "state_id", "stock-decreased", "text", "Stock:", "assertion", "text", "value", "Stock:", "match", "contains")
				reps[i], rs[i] = e.runJourney(t, p)
			}()
		}
		wg.Wait()
		seen := map[string]bool{}
		for i := range 4 {
			keep(rs[i])
			wantStatus(t, reps[i], rs[i], journey.StatusPassed)
			if seen[reps[i].Session] || seen[reps[i].RunID] {
				t.Errorf("two journeys shared session %s / run %s", reps[i].Session, reps[i].RunID)
			}
			seen[reps[i].Session], seen[reps[i].RunID] = true, true
			if len(reps[i].Artifacts) != 1 {
				t.Errorf("journey %d: artifacts %+v", i, reps[i].Artifacts)
				continue
			}
			b, err := os.ReadFile(reps[i].Artifacts[0].Path)
			if sum := sha256.Sum256(b); err != nil || hex.EncodeToString(sum[:]) != reps[i].Artifacts[0].SHA256 {
				t.Errorf("journey %d: screenshot on disk differs from the report (%v)", i, err)
			}
		}
		if n := contexts(t); n != 0 {
			t.Errorf("%d browser contexts left after four journeys", n)
		}
		// Each signed in and reserved on its own: the account's 8 units left are gone.
		ls.mu.Lock()
		left := ls.stock[account]
		ls.mu.Unlock()
		if left != 0 {
			t.Errorf("stock left %d after four journeys of 2 units each from 8, want 0", left)
		}
	})

	t.Run("every kind of action", func(t *testing.T) {
		rep, r := e.runJourney(t, jPlan{"journey_id": "kinds", "origin": ls.Origin(), "path": "/login",
			"expected_states": []any{
				map[string]any{"id": "tooltip", "expected": "the tooltip shows on hover"},
				map[string]any{"id": "gift-checked", "expected": "gift wrap ticked"},
				map[string]any{"id": "typed-more", "expected": "34 in the field"},
				map[string]any{"id": "done-count", "expected": "two done items"},
			},
			"actions": []any{
				jAction("kind", "login", "state_id", "signed-in", "alias", "main"),
				jAction("kind", "navigate", "state_id", "shop", "path", "/shop"),
				jAction("kind", "hover", "state_id", "hovered", "text", "Help", "exact", true),
				jAction("kind", "assert", "state_id", "tooltip", "text", "Reservations hold", "assertion", "visible"),
				jAction("kind", "click", "state_id", "gift", "role", "checkbox", "name", "Gift wrap"),
				jAction("kind", "assert", "state_id", "gift-checked", "role", "checkbox", "name", "Gift wrap", "assertion", "checked"),
				jAction("kind", "assert", "state_id", "cancel-disabled", "role", "button", "name", "Cancel", "assertion", "enabled", "not", true),
				jAction("kind", "fill", "state_id", "typed", "role", "spinbutton", "name", "Quantity", "value", "3"),
				jAction("kind", "press", "state_id", "pressed", "selector", "#quantity", "key", "4"),
				jAction("kind", "assert", "state_id", "typed-more", "selector", "#quantity", "assertion", "value", "value", "34"),
				jAction("kind", "scroll", "state_id", "footer", "text", "Footer"),
				jAction("kind", "scroll", "state_id", "up", "by", -5000),
				jAction("kind", "click", "state_id", "list", "role", "link", "name", "All lists"),
				jAction("kind", "wait", "state_id", "listed", "text", "Five"),
				jAction("kind", "assert", "state_id", "route", "assertion", "route", "path", "/list"),
				jAction("kind", "assert", "state_id", "done-count", "selector", "li.done", "assertion", "count", "count", 2),
				jAction("kind", "assert", "state_id", "second", "selector", "li", "nth", 1, "assertion", "text", "value", "Two"),
				jAction("kind", "assert", "state_id", "no-six", "text", "Six", "assertion", "hidden"),
				jAction("kind", "wait", "state_id", "gone", "text", "Six", "not", true),
			}})
		keep(r)
		wantStatus(t, rep, r, journey.StatusPassed)
		if ev := evidenceOf(rep, "footer"); ev.Target == nil || ev.Target.Rect == nil || ev.Target.Rect.Y < 3000 {
			t.Errorf("scroll target evidence %+v", ev.Target)
		}
		if ev := evidenceOf(rep, "pressed"); ev.Focused == nil || ev.Focused.Name != "Quantity" {
			t.Errorf("press evidence: focused %+v", ev.Focused)
		}
		if ev := evidenceOf(rep, "list"); ev.Route != "/list" {
			t.Errorf("the route of /list?page=1 is %q, want /list (never a query)", ev.Route)
		}
	})

	t.Run("select", func(t *testing.T) {
		rep, r := e.runJourney(t, jPlan{"journey_id": "select", "origin": ls.Origin(), "path": "/login",
			"expected_states": []any{map[string]any{"id": "blue", "expected": "Blue chosen"}},
			"actions": []any{
				jAction("kind", "login", "state_id", "signed-in", "alias", "main"),
				jAction("kind", "navigate", "state_id", "shop", "path", "/shop"),
				jAction("kind", "select", "state_id", "colour", "role", "combobox", "name", "Colour", "value", "Blue"),
				jAction("kind", "assert", "state_id", "blue", "selector", "#colour", "assertion", "value", "value", "Blue"),
				jAction("kind", "select", "state_id", "red-by-value", "selector", "#colour", "value", "Red"),
				jAction("kind", "select", "state_id", "blue-by-value", "selector", "#colour", "value", "b"),
				jAction("kind", "assert", "state_id", "blue-again", "selector", "#colour", "assertion", "value", "value", "Blue"),
				jAction("kind", "select", "state_id", "no-such", "selector", "#colour", "value", "Green"),
			}})
		keep(r)
		wantStatus(t, rep, r, journey.StatusFailed)
		if f := rep.Failure; f == nil || f.Reason != "OPTION_UNKNOWN" || f.Step != 8 || len(rep.Reviewed) != 1 {
			t.Errorf("failure %+v, reviewed %v", f, rep.Reviewed)
		}
		// A select is not a text field, a text field is not a select.
		rep, r = e.runJourney(t, jPlan{"journey_id": "select2", "origin": ls.Origin(), "path": "/secret-fields",
			"actions": []any{jAction("kind", "select", "state_id", "a", "selector", "#display", "value", "x")}})
		keep(r)
		wantStatus(t, rep, r, journey.StatusFailed)
		if f := rep.Failure; f == nil || f.Reason != "NOT_A_SELECT" {
			t.Errorf("failure %+v", f)
		}
	})

	t.Run("zoom is CSS zoom, viewport and theme emulated", func(t *testing.T) {
		rep, r := e.runJourney(t, jPlan{"journey_id": "zoomed", "origin": ls.Origin(), "path": "/login",
			"width": 800, "height": 600, "theme": "light", "zoom": 200,
			"expected_states": []any{map[string]any{"id": "shop", "expected": "the shop, twice the size"}},
			"actions": []any{
				jAction("kind", "login", "state_id", "signed-in", "alias", "main"),
				jAction("kind", "navigate", "state_id", "shop", "path", "/shop", "screenshot", true),
			}})
		keep(r)
		wantStatus(t, rep, r, journey.StatusPassed)
		ev := evidenceOf(rep, "shop")
		var box *journey.Element
		for i, el := range ev.Elements {
			if el.Name == "Box" {
				box = &ev.Elements[i]
			}
		}
		if box == nil || box.Rect == nil || box.Rect.Width != 200 || box.Rect.Height != 80 {
			t.Errorf("the 100x40 box at zoom 200: %+v", box)
		}
		if !slices.Contains(ev.Text, "theme light") || !slices.Contains(ev.Text, "width 800") {
			t.Errorf("texts %q", ev.Text)
		}
		if len(rep.Artifacts) != 1 || rep.Artifacts[0].Name != "zoomed--shop--800x600--light--z200.png" {
			t.Errorf("artifacts %+v", rep.Artifacts)
		}
	})

	t.Run("value of a secret field is never read", func(t *testing.T) {
		rep, r := e.runJourney(t, jPlan{"journey_id": "secret-value", "origin": ls.Origin(), "path": "/secret-fields",
			"actions": []any{jAction("kind", "assert", "state_id", "a", "selector", "#door", "assertion", "value", "value", "")}})
		keep(r)
		wantStatus(t, rep, r, journey.StatusCouldNotLook)
		if c := rep.CouldNotLook; c == nil || c.Reason != "SECRET_FIELD" {
			t.Errorf("could_not_look %+v", c)
		}
		for _, el := range rep.Evidence[0].Elements {
			if el.Name == "Door" && el.Rect != nil {
				t.Errorf("a secret field's box is in the evidence: %+v", el)
			}
		}
	})

	t.Run("an isolated session signs in from its own store only", func(t *testing.T) {
		e.ok(t, nil, "session", "create", "iso", "--isolated")
		rep, r := e.runJourney(t, jPlan{"journey_id": "iso", "origin": ls.Origin(), "path": "/login", "session": "iso",
			"actions": []any{jAction("kind", "login", "state_id", "signed-in", "alias", "main")}})
		keep(r)
		wantStatus(t, rep, r, journey.StatusCouldNotLook)
		if c := rep.CouldNotLook; c == nil || c.Reason != "ALIAS_UNKNOWN" || rep.Context != journey.ContextIsolated {
			t.Errorf("context %s, could_not_look %+v", rep.Context, c)
		}
		// A journey's fresh context is no session any verb can drive, nor one that exists
		// for longer than its run: a name that looks like one is just unknown.
		e.fails(t, "SESSION_UNKNOWN", "snapshot", "--session", "journey.kinds.00000000")
		e.ok(t, nil, "session", "close", "iso")
	})

	t.Run("a caller who hangs up withdraws the sign-in and the context", func(t *testing.T) {
		hold := personLog + ".hold"
		os.WriteFile(hold, nil, 0o600)
		defer os.Remove(hold)
		posts, typed := len(ls.Posts()), len(ls.Typed())
		_, confirms := pinentryRuns(t, personLog)
		raw, _ := json.Marshal(reservePlan(ls, "hangup"))
		f := filepath.Join(t.TempDir(), "plan.json")
		os.WriteFile(f, raw, 0o600)
		cmd := e.command("headless", "journey", "run", f, "--json")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var pids []int
		for deadline := time.Now().Add(30 * time.Second); ; {
			var n int
			if pids, n = pinentryRuns(t, personLog); n > confirms {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatal("the journey's sign-in prompt never appeared")
			}
			time.Sleep(20 * time.Millisecond)
		}
		prompt := pids[len(pids)-1]
		if n := contexts(t); n != 1 {
			t.Errorf("%d browser contexts while the journey runs, want its own", n)
		}
		// While it runs its fresh context is listed, and no verb can drive it.
		var running struct {
			Sessions []struct {
				Name  string `json:"name"`
				Fresh bool   `json:"fresh"`
			} `json:"sessions"`
		}
		e.ok(t, &running, "session", "list")
		fresh := ""
		for _, s := range running.Sessions {
			if strings.HasPrefix(s.Name, "journey.hangup.") && s.Fresh {
				fresh = s.Name
			}
		}
		if fresh == "" {
			t.Errorf("the running journey's fresh context is not listed: %+v", running)
		} else {
			e.fails(t, "SESSION_UNKNOWN", "snapshot", "--session", fresh)
			e.fails(t, "SESSION_UNKNOWN", "visit", ls.URL("/home"), "--session", fresh)
		}
		cmd.Process.Kill() // the caller goes away while the person is asked
		cmd.Wait()
		// The run is withdrawn when its caller hangs up: the prompt goes. (At once, not after
		// the control socket's 2 s drain grace, since journey.run is CancelOnHangup: host's
		// TestHangupCancelsAtOnce; how soon is the machine's speed, not asserted here.)
		hungUp := time.Now()
		for syscall.Kill(prompt, 0) == nil && !isZombie(prompt) {
			if time.Since(hungUp) > 30*time.Second {
				t.Fatalf("the prompt (pid %d) is still up %v after the caller hung up", prompt, time.Since(hungUp).Round(time.Millisecond))
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("the prompt went %v after the caller hung up", time.Since(hungUp).Round(time.Millisecond))
		os.Remove(hold) // a late approval changes nothing
		var list struct {
			Sessions []struct{ Name string } `json:"sessions"`
		}
		for deadline := time.Now().Add(30 * time.Second); ; {
			e.ok(t, &list, "session", "list")
			left := false
			for _, s := range list.Sessions {
				left = left || strings.HasPrefix(s.Name, "journey.hangup.")
			}
			if !left && contexts(t) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the journey's context outlived its caller: %+v, %d browser contexts", list, contexts(t))
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(time.Second)
		if len(ls.Posts()) != posts || len(ls.Typed()) != typed {
			t.Errorf("something reached the site after the caller hung up: %v %v", ls.Posts()[posts:], ls.Typed()[typed:])
		}
		b, _ := os.ReadFile(filepath.Join(e.runDir(), "host.log"))
		if !bytes.Contains(b, []byte(`journey ended`)) || !bytes.Contains(b, []byte(`hangup`)) {
			t.Errorf("host.log does not record the journey's end")
		}
	})

	t.Run("no canary", func(t *testing.T) {
		var all []string
		all = append(all, reports...)
		all = append(all, e.allOutput())
		for _, f := range []string{"host.log", "brokerd.log"} {
			b, _ := os.ReadFile(filepath.Join(e.runDir(), f))
			if !bytes.Contains(b, []byte("journey.run")) && f == "host.log" {
				t.Errorf("host.log records no journey.run: the sweep of it proves little")
			}
			all = append(all, string(b))
		}
		sweep := strings.Join(all, "\n")
		if !strings.Contains(sweep, `"status":"passed"`) {
			t.Error("no passed report in the sweep: it proves little")
		}
		needles := append(lsNeedles("canary", canary), lsNeedles("wrong-password canary", wrongPW)...)
		for _, n := range needles {
			if bytes.Contains([]byte(sweep), n.b) {
				t.Errorf("LEAK: %s in a report, the CLI's output or a log", n.name)
			}
		}
		// Every artifact the journeys wrote.
		arts, _ := filepath.Glob(filepath.Join(e.runDir(), "artifacts", "journey-*"))
		if len(arts) < 5 {
			t.Errorf("only %d journey artifacts: the sweep proves little", len(arts))
		}
		for _, p := range arts {
			b, _ := os.ReadFile(p)
			for _, n := range needles {
				if bytes.Contains(b, n.b) {
					t.Errorf("LEAK: %s in %s", n.name, p)
				}
			}
		}
	})
}

// TestJourneySecretOnPage: a journey run in a session whose page holds a password the host
// typed (a failed script login on a page that puts the value back), where the session is now
// (no path: no navigation), looks at nothing: no text, no screenshot, no assertion;
// could_not_look SECRET_ON_PAGE.
func TestJourneySecretOnPage(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	hs := newHostileSite(t)
	const account = "alice@example.test"
	canary, wrongPW := newCanary(), newCanary()
	hs.SetAccount(account, canary)
	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, hs.Origin(), "wrong", account, wrongPW)
	e.start(t)
	e.ok(t, nil, "session", "create", "s")
	e.ok(t, nil, "visit", hs.URL("/sticky"), "--session", "s")
	a := lsLoginOK(t, e, "failed", "--session", "s", "--alias", "wrong")
	if a.Evidence["cleared"] != true {
		t.Fatalf("the failed login did not clear the field: %+v", a)
	}
	// The page refills the field from its own copy a moment later.
	if !pollUntil(10*time.Second, func() bool {
		r := e.run("", "headless", "screenshot", "--session", "s", "--json")
		return r.code != 0 && errCode(t, r) == "SECRET_ON_PAGE"
	}) {
		t.Fatal("the sticky page never refilled its field: the test proves nothing")
	}
	plan := jPlan{"journey_id": "sticky", "origin": hs.Origin(), "session": "s",
		"expected_states": []any{map[string]any{"id": "form", "expected": "the sign-in form"}},
		"actions": []any{
			jAction("kind", "assert", "state_id", "form", "role", "button", "name", "Sign in", "assertion", "visible", "screenshot", true),
		}}
	rep, r := e.runJourney(t, plan)
	wantStatus(t, rep, r, journey.StatusCouldNotLook)
	if c := rep.CouldNotLook; c == nil || c.Reason != "SECRET_ON_PAGE" || c.Step != 1 {
		t.Errorf("could_not_look %+v", c)
	}
	ev := rep.Evidence[0]
	if ev.OK || ev.ScreenshotRefused != "SECRET_ON_PAGE" || len(ev.Text) != 0 || len(ev.Elements) != 0 || len(rep.Artifacts) != 0 {
		t.Errorf("the evidence of a state with a typed password on the page: %+v, artifacts %+v", ev, rep.Artifacts)
	}
	for _, n := range append(lsNeedles("canary", canary), lsNeedles("wrong-password canary", wrongPW)...) {
		if strings.Contains(r.stdout+r.stderr, string(n.b)) {
			t.Errorf("LEAK: %s in the report", n.name)
		}
	}
	// A path navigates first: the filled document is gone, the journey looks as usual.
	plan["path"] = "/sticky"
	rep, r = e.runJourney(t, plan)
	wantStatus(t, rep, r, journey.StatusPassed)
}
