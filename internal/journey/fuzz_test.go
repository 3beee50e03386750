package journey

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/wire"
)

// FuzzDecode: Decode never panics; every error is PLAN_INVALID or UNSAFE_SELECTOR; an accepted
// plan keeps every bound, and its re-encoding is accepted again as the same plan.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(issueExample))
	f.Add([]byte(plan(`{"kind":"assert","state_id":"a","selector":"li:nth-child(2)","assertion":"count","count":3}`)))
	f.Add([]byte(plan(`{"kind":"select","state_id":"a","selector":"#tags","values":["a","b"]}`, `{"kind":"press","state_id":"b","key":"Enter"}`)))
	f.Add([]byte(plan(`{"kind":"click","state_id":"a","selector":"input[value^=a]"}`)))
	f.Add([]byte(`{"journey_id":"j","journey_id":"k"}`))
	f.Add([]byte(`{"a":[[[[[[[[1]]]]]]]]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := Decode(raw)
		if err != nil {
			if c := wire.CodeOf(err); c != wire.CodePlanInvalid && c != wire.CodeUnsafeSelector {
				t.Fatalf("error of code %q: %v", c, err)
			}
			return
		}
		if len(p.Actions) == 0 || len(p.Actions) > MaxActions || len(p.ExpectedStates) > MaxExpected || p.Budget() > MaxBudget {
			t.Fatalf("bounds not kept: %+v", p)
		}
		for _, a := range p.Actions {
			if a.Selector != "" && CheckSelector(a.Selector) != nil {
				t.Fatalf("unsafe selector accepted: %q", a.Selector)
			}
			if strings.Contains(strings.ToLower(a.Selector), "javascript:") {
				t.Fatalf("script selector accepted: %q", a.Selector)
			}
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Decode(b)
		if err != nil {
			t.Fatalf("re-encoded plan refused: %v\n%s", err, b)
		}
		c, _ := json.Marshal(q)
		if string(b) != string(c) {
			t.Fatalf("round trip differs:\n%s\n%s", b, c)
		}
	})
}
