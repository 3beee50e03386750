package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/journey"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

const cliPlan = `{"journey_id":"j","origin":"https://a.example","expected_states":[{"id":"a","expected":"A"}],
 "actions":[{"kind":"assert","state_id":"a","text":"Hello","assertion":"visible","screenshot":true}]}`

// journeyHost answers journey.run with rep (after checking that the plan arrived as written).
func journeyHost(t *testing.T, rep journey.Report) *rpc.Methods {
	m := &rpc.Methods{}
	rpc.Handle(m, control.MethodJourneyRun, func(ctx context.Context, p control.JourneyRunParams) (journey.Report, error) {
		if _, err := journey.Decode(p.Plan); err != nil {
			t.Errorf("the host got a plan that does not decode: %v", err)
		}
		return rep, nil
	})
	return m
}

func TestJourneyRun(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	os.WriteFile(plan, []byte(cliPlan), 0o600)
	png := []byte("\x89PNG\r\n\x1a\nfake")
	sum := sha256.Sum256(png)
	art := filepath.Join(dir, "store", "journey-r1-j--a--800x600--default--z100.png")
	os.MkdirAll(filepath.Dir(art), 0o700)
	os.WriteFile(art, png, 0o600)
	p, _ := journey.Decode([]byte(cliPlan))
	report := func(status string) journey.Report {
		r := journey.NewReport(p, "r1", journey.ContextFresh, "journey.j.r1")
		r.Evidence = []journey.Evidence{{ID: "ev-1", Step: 1, StateID: "a", Action: "assert", OK: status == journey.StatusPassed, Text: []string{}, Elements: []journey.Element{}}}
		r.Artifacts = []journey.Artifact{{Name: "j--a--800x600--default--z100.png", Path: art, SHA256: hex.EncodeToString(sum[:]), Bytes: len(png), Evidence: "ev-1", StateID: "a"}}
		switch status {
		case journey.StatusFailed:
			r.StopAt(1, "a", wire.Errorf(wire.CodeAssertionFailed, "no"))
		case journey.StatusCouldNotLook:
			r.StopAt(1, "a", wire.Errorf(wire.CodePresenceDenied, "no"))
		}
		r.ActionsRun = 1
		r.Finish(p)
		return r
	}
	for _, tc := range []struct {
		status string
		exit   int
	}{{journey.StatusPassed, 0}, {journey.StatusFailed, 3}, {journey.StatusCouldNotLook, 4}} {
		w := newWorld(t)
		w.host = journeyHost(t, report(tc.status))
		if code := w.run("journey", "run", plan, "--json"); code != tc.exit {
			t.Errorf("%s: exit %d, want %d: %s %s", tc.status, code, tc.exit, w.stdout.String(), w.stderr.String())
		}
		var got journey.Report
		if json.Unmarshal(w.stdout.Bytes(), &got) != nil || got.Status != tc.status {
			t.Errorf("%s: printed %s", tc.status, w.stdout.String())
		}
		if code := w.run("journey", "run", plan); code != tc.exit || !strings.Contains(w.stdout.String(), tc.status) {
			t.Errorf("%s (human): exit %d: %s", tc.status, code, w.stdout.String())
		}
	}

	// "-": the plan from standard input.
	{
		w := newWorld(t)
		w.host = journeyHost(t, report(journey.StatusPassed))
		env := w.env()
		env.Stdin = strings.NewReader(cliPlan)
		if code := Run(context.Background(), []string{"journey", "run", "-", "--json"}, env); code != 0 {
			t.Fatalf("journey run -: exit %d: %s %s", code, w.stdout.String(), w.stderr.String())
		}
		var got journey.Report
		if json.Unmarshal(w.stdout.Bytes(), &got) != nil || got.Status != journey.StatusPassed {
			t.Errorf("journey run -: printed %s", w.stdout.String())
		}
		env.Stdin = strings.NewReader("{")
		w.stdout.Reset()
		if code := Run(context.Background(), []string{"journey", "run", "-", "--json"}, env); code == 0 || !strings.Contains(w.stdout.String(), "PLAN_INVALID") {
			t.Errorf("journey run - with a broken plan: exit %d: %s", code, w.stdout.String())
		}
	}

	// --out: the report as JSON and Markdown and the screenshot, 0600 in a 0700 directory; a
	// screenshot whose bytes are not the reported ones is refused.
	w := newWorld(t)
	w.host = journeyHost(t, report(journey.StatusPassed))
	read := func(path string) ([]byte, error) { return os.ReadFile(path) }
	env := w.env()
	env.ReadArtifact = read
	out := filepath.Join(dir, "out")
	if code := Run(context.Background(), []string{"journey", "run", plan, "--out", out, "--json"}, env); code != 0 {
		t.Fatalf("--out: exit %d: %s", code, w.stdout.String())
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("--out dir %v %v", fi, err)
	}
	for _, f := range []string{"report.json", "report.md", "j--a--800x600--default--z100.png"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, fi, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "j--a--800x600--default--z100.png")); string(b) != string(png) {
		t.Error("the screenshot copy differs")
	}
	os.WriteFile(art, []byte("\x89PNG\r\n\x1a\nother"), 0o600)
	w.stdout.Reset()
	if code := Run(context.Background(), []string{"journey", "run", plan, "--out", filepath.Join(dir, "out2"), "--json"}, env); code != 1 ||
		!strings.Contains(w.stdout.String(), "SHA-256") {
		t.Errorf("a screenshot that is not the one hashed: exit %d: %s", code, w.stdout.String())
	}

	// A plan that does not decode never reaches the host.
	w = newWorld(t)
	w.host = journeyHost(t, report(journey.StatusPassed))
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(strings.Replace(cliPlan, `"text":"Hello"`, `"selector":"javascript:alert(1)"`, 1)), 0o600)
	if code := w.run("journey", "run", bad, "--json"); code != 1 || !strings.Contains(w.stdout.String(), "UNSAFE_SELECTOR") || w.hostDial != 0 {
		t.Errorf("a script selector: exit %d, host dialled %d times: %s", code, w.hostDial, w.stdout.String())
	}
	if code := w.run("journey", "run", filepath.Join(dir, "missing.json"), "--json"); code != 1 || !strings.Contains(w.stdout.String(), "PLAN_INVALID") {
		t.Errorf("a missing plan: exit %d: %s", code, w.stdout.String())
	}
}
