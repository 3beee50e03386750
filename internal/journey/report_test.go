package journey

import (
	"regexp"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/wire"
)

func mustPlan(t *testing.T, s string) Plan {
	t.Helper()
	p, err := Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ran gives the report evidence for the first n actions of p, the last one failing with
// code when code is set.
func ran(p Plan, n int, code wire.Code) Report {
	r := NewReport(p, "run1", ContextFresh, "journey.j.x")
	for i := 0; i < n; i++ {
		ev := Evidence{ID: "ev-" + string(rune('1'+i)), Step: i + 1, StateID: p.Actions[i].StateID, Action: p.Actions[i].Kind, OK: true}
		if code != "" && i == n-1 {
			ev.OK, ev.Code = false, code
			r.StopAt(i+1, ev.StateID, wire.Errorf(code, "step %d", i+1))
		}
		r.Evidence = append(r.Evidence, ev)
	}
	r.ActionsRun = n
	r.Finish(p)
	return r
}

func TestFinish(t *testing.T) {
	p := mustPlan(t, issueExample) // expects "reserved", the 4th action's state
	two := mustPlan(t, `{"journey_id":"j","origin":"https://x.test","expected_states":[{"id":"a","expected":"A"},{"id":"c","expected":"C"}],
		"actions":[{"kind":"click","state_id":"a","text":"x"},{"kind":"click","state_id":"b","text":"y"},{"kind":"click","state_id":"c","text":"z"}]}`)
	none := mustPlan(t, `{"journey_id":"j","origin":"https://x.test","actions":[{"kind":"click","state_id":"a","text":"x"}]}`)
	noneTwo := mustPlan(t, `{"journey_id":"j","origin":"https://x.test","actions":[{"kind":"click","state_id":"a","text":"x"},{"kind":"click","state_id":"b","text":"y"}]}`)
	for _, tc := range []struct {
		name        string
		r           Report
		status      string
		reviewed    []string
		notReviewed []string
		reason      wire.Code
	}{
		{"all ran", ran(p, 4, ""), StatusPassed, []string{"reserved"}, nil, ""},
		{"denied sign-in", ran(p, 1, wire.CodePresenceDenied), StatusCouldNotLook, nil, []string{"reserved"}, wire.CodePresenceDenied},
		{"failed assertion", ran(p, 4, wire.CodeAssertionFailed), StatusFailed, nil, []string{"reserved"}, wire.CodeAssertionFailed},
		{"failed after a reviewed state", ran(two, 2, wire.CodeTargetNotFound), StatusFailed, []string{"a"}, []string{"c"}, wire.CodeTargetNotFound},
		{"budget", ran(two, 3, wire.CodeBudgetExceeded), StatusCouldNotLook, []string{"a"}, []string{"c"}, wire.CodeBudgetExceeded},
		{"crash", ran(two, 1, wire.CodeBrowserCrashed), StatusCouldNotLook, nil, []string{"a", "c"}, wire.CodeBrowserCrashed},
		{"nothing expected", ran(none, 1, ""), StatusNothingToReport, nil, nil, ""},
		{"nothing expected, but failed", ran(none, 1, wire.CodeAssertionFailed), StatusFailed, nil, nil, wire.CodeAssertionFailed},
		// Defensive: no stop recorded, yet not every action has evidence: never passed.
		{"stopped silently", ran(p, 2, ""), StatusCouldNotLook, nil, []string{"reserved"}, wire.CodeInternal},
		{"looked at nothing", ran(p, 0, ""), StatusCouldNotLook, nil, []string{"reserved"}, wire.CodeInternal},
		{"stopped silently, nothing expected", ran(noneTwo, 1, ""), StatusCouldNotLook, nil, nil, wire.CodeInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			if r.Status != tc.status {
				t.Errorf("status %s, want %s (%s)", r.Status, tc.status, r.Summary)
			}
			var rev, not []string
			for _, s := range r.Reviewed {
				rev = append(rev, s.ID)
				if len(s.Evidence) == 0 {
					t.Errorf("reviewed %s without evidence", s.ID)
				}
			}
			for _, s := range r.NotReviewed {
				not = append(not, s.ID)
			}
			if strings.Join(rev, ",") != strings.Join(tc.reviewed, ",") || strings.Join(not, ",") != strings.Join(tc.notReviewed, ",") {
				t.Errorf("reviewed %v not reviewed %v, want %v and %v", rev, not, tc.reviewed, tc.notReviewed)
			}
			var got wire.Code
			switch {
			case r.CouldNotLook != nil:
				got = r.CouldNotLook.Reason
				if r.Failure != nil {
					t.Error("both a failure and could_not_look")
				}
				if r.CouldNotLook.Hint == "" {
					t.Error("could_not_look without a hint")
				}
			case r.Failure != nil:
				got = r.Failure.Reason
			}
			if got != tc.reason {
				t.Errorf("reason %s, want %s", got, tc.reason)
			}
			if r.Status == StatusPassed && (len(r.NotReviewed) > 0 || len(r.Reviewed) == 0 || len(r.Evidence) == 0) {
				t.Error("passed without reviewing everything")
			}
		})
	}
}

func TestFailedMarker(t *testing.T) {
	p := mustPlan(t, issueExample)
	r := NewReport(p, "r", ContextFresh, "s")
	r.StopAt(2, "x", wire.Errorf(wire.CodeTimeout, "the page did not answer"))
	if r.CouldNotLook == nil || r.Failure != nil {
		t.Errorf("a host TIMEOUT is could not look: %+v %+v", r.CouldNotLook, r.Failure)
	}
	r = NewReport(p, "r", ContextFresh, "s")
	r.StopAt(2, "x", Failed(wire.Errorf(wire.CodeTimeout, "not visible within 10s")))
	if r.Failure == nil || r.Failure.Reason != wire.CodeTimeout {
		t.Errorf("a wait that timed out is a failure: %+v %+v", r.CouldNotLook, r.Failure)
	}
}

func TestMarkdownEscapesThePage(t *testing.T) {
	p := mustPlan(t, issueExample)
	r := ran(p, 4, "")
	r.Evidence[3].Title = "<img src=x onerror=alert(1)> [click](https://evil.test) **bold**"
	r.Evidence[3].Text = []string{"| a | b |", "`code`", "line\nbreak"}
	m := r.Markdown()
	// What is left once every backslash escape is removed must hold none of the page's markup.
	bare := regexp.MustCompile(`\\.`).ReplaceAllString(m, "")
	for _, bad := range []string{"<img", "[click](", "**bold**", "| a | b |", "`code`", "line\nbreak", "https://evil"} {
		if strings.Contains(bare, bad) {
			t.Errorf("the page's %q reached the Markdown unescaped:\n%s", bad, m)
		}
	}
	for _, want := range []string{"**Status: passed**", "CSS zoom", "reserved", "yes"} {
		if !strings.Contains(m, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, m)
		}
	}
}

func TestArtifactName(t *testing.T) {
	if got := ArtifactName("reserve-stock", "reserved", 390, 844, "dark", 100); got != "reserve-stock--reserved--390x844--dark--z100.png" {
		t.Errorf("got %s", got)
	}
	if got := ArtifactName("j", "s", 800, 600, "", 150); got != "j--s--800x600--default--z150.png" {
		t.Errorf("got %s", got)
	}
}
