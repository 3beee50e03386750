package journey

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/wire"
)

// issueExample is the plan of issue 14, verbatim.
const issueExample = `{"journey_id": "reserve-stock", "name": "Reserve two units", "path": "/",
 "origin": "https://staging.example.com", "width": 390, "height": 844, "theme": "dark", "zoom": 100,
 "expected_states": [{"id": "reserved", "expected": "Reservation succeeds and stock decreases"}],
 "actions": [
   {"kind": "login", "state_id": "signed-in", "alias": "staging-admin"},
   {"kind": "fill", "state_id": "quantity-entered", "role": "textbox", "name": "Quantity", "value": "2"},
   {"kind": "click", "state_id": "submitted", "role": "button", "name": "Reserve"},
   {"kind": "assert", "state_id": "reserved", "selector": "#status", "assertion": "text", "value": "Reserved",
    "screenshot": true}]}`

func TestDecodeIssueExample(t *testing.T) {
	p, err := Decode([]byte(issueExample))
	if err != nil {
		t.Fatal(err)
	}
	if p.JourneyID != "reserve-stock" || len(p.Actions) != 4 || p.Actions[3].Assertion != AssertText || !p.Actions[3].Screenshot ||
		p.Width != 390 || p.Theme != ThemeDark || p.Budget() != DefaultBudget || p.ZoomPercent() != 100 {
		t.Errorf("decoded %+v", p)
	}
}

// plan builds a plan around actions (JSON objects) with one expected state per action.
func plan(actions ...string) string {
	return `{"journey_id":"j","origin":"https://x.test","actions":[` + strings.Join(actions, ",") + `]}`
}

func TestDecodeRefuses(t *testing.T) {
	long := strings.Repeat("a", 300)
	many := make([]string, MaxActions+1)
	for i := range many {
		many[i] = `{"kind":"click","state_id":"s` + strings.Repeat("x", i) + `","text":"Go"}`
	}
	for _, tc := range []struct {
		name, plan string
		code       wire.Code
		msg        string
	}{
		{"unknown top-level field", `{"journey_id":"j","origin":"https://x.test","actions":[{"kind":"click","state_id":"a","text":"x"}],"script":"alert(1)"}`, wire.CodePlanInvalid, "unknown key"},
		{"unknown action field", plan(`{"kind":"click","state_id":"a","text":"x","evaluate":"1"}`), wire.CodePlanInvalid, "unknown key"},
		{"case variant of a field", `{"Journey_ID":"j","origin":"https://x.test","actions":[{"kind":"click","state_id":"a","text":"x"}]}`, wire.CodePlanInvalid, "unknown key"},
		{"duplicate key", plan(`{"kind":"click","kind":"login","state_id":"a","text":"x"}`), wire.CodePlanInvalid, "actions[0].kind: duplicate key"},
		{"trailing data", plan(`{"kind":"click","state_id":"a","text":"x"}`) + ` {}`, wire.CodePlanInvalid, "trailing"},
		{"trailing garbage", plan(`{"kind":"click","state_id":"a","text":"x"}`) + `x`, wire.CodePlanInvalid, ""},
		{"not an object", `[1,2]`, wire.CodePlanInvalid, ""},
		{"too deep", `{"journey_id":"j","origin":"https://x.test","actions":[{"kind":"select","state_id":"a","text":"x","values":[[[[["a"]]]]]}]}`, wire.CodePlanInvalid, "actions[0].values[0]: want a string, got an array"},
		{"too large", `{"name":"` + strings.Repeat("a", MaxPlanBytes) + `"}`, wire.CodePlanInvalid, "bytes"},
		{"no actions", `{"journey_id":"j","origin":"https://x.test","actions":[]}`, wire.CodePlanInvalid, "at least one"},
		{"21 actions", plan(many...), wire.CodePlanInvalid, "at most 20"},
		{"budget over 300 s", `{"journey_id":"j","origin":"https://x.test","budget_seconds":301,"actions":[{"kind":"click","state_id":"a","text":"x"}]}`, wire.CodePlanInvalid, "budget"},
		{"negative budget", `{"journey_id":"j","origin":"https://x.test","budget_seconds":-1,"actions":[{"kind":"click","state_id":"a","text":"x"}]}`, wire.CodePlanInvalid, "budget"},
		{"wrong type", `{"journey_id":"j","origin":"https://x.test","width":"390","actions":[{"kind":"click","state_id":"a","text":"x"}]}`, wire.CodePlanInvalid, "width"},
		{"plain http origin", `{"journey_id":"j","origin":"http://example.com","actions":[{"kind":"click","state_id":"a","text":"x"}]}`, wire.CodePlanInvalid, "origin"},
		{"origin with a path", `{"journey_id":"j","origin":"https://x.test/login","actions":[{"kind":"click","state_id":"a","text":"x"}]}`, wire.CodePlanInvalid, "origin"},
		{"journey id with a slash", `{"journey_id":"../x","origin":"https://x.test","actions":[{"kind":"click","state_id":"a","text":"x"}]}`, wire.CodePlanInvalid, "journey_id"},
		{"state id with dots", plan(`{"kind":"click","state_id":"a..b","text":"x"}`), wire.CodePlanInvalid, "state_id"},
		{"state id twice", plan(`{"kind":"click","state_id":"a","text":"x"}`, `{"kind":"click","state_id":"a","text":"y"}`), wire.CodePlanInvalid, "twice"},
		{"expected state of no action", `{"journey_id":"j","origin":"https://x.test","expected_states":[{"id":"b","expected":"x"}],"actions":[{"kind":"click","state_id":"a","text":"x"}]}`, wire.CodePlanInvalid, "no action"},
		{"width without height", `{"journey_id":"j","origin":"https://x.test","width":390,"actions":[{"kind":"click","state_id":"a","text":"x"}]}`, wire.CodePlanInvalid, "together"},
		{"zoom out of range", `{"journey_id":"j","origin":"https://x.test","zoom":1000,"actions":[{"kind":"click","state_id":"a","text":"x"}]}`, wire.CodePlanInvalid, "zoom"},
		{"unknown theme", `{"journey_id":"j","origin":"https://x.test","theme":"sepia","actions":[{"kind":"click","state_id":"a","text":"x"}]}`, wire.CodePlanInvalid, "theme"},
		{"unknown kind", plan(`{"kind":"evaluate","state_id":"a"}`), wire.CodePlanInvalid, "kind"},
		{"field of another kind", plan(`{"kind":"click","state_id":"a","text":"x","alias":"admin"}`), wire.CodePlanInvalid, "alias does not apply"},
		{"login with a target", plan(`{"kind":"login","state_id":"a","alias":"admin","selector":"#pw"}`), wire.CodePlanInvalid, "target"},
		{"two targets", plan(`{"kind":"click","state_id":"a","text":"x","selector":"#x"}`), wire.CodePlanInvalid, "one of them"},
		{"name without role", plan(`{"kind":"click","state_id":"a","name":"x"}`), wire.CodePlanInvalid, "name goes with role"},
		{"click without target", plan(`{"kind":"click","state_id":"a"}`), wire.CodePlanInvalid, "needs a target"},
		{"long text", plan(`{"kind":"click","state_id":"a","text":"` + long + `"}`), wire.CodePlanInvalid, "longer"},
		{"control character", plan(`{"kind":"fill","state_id":"a","text":"x","value":"a\u0000b"}`), wire.CodePlanInvalid, "control"},
		{"unknown key", plan(`{"kind":"press","state_id":"a","key":"Hyper+a"}`), wire.CodePlanInvalid, "key"},
		{"navigate elsewhere", plan(`{"kind":"navigate","state_id":"a","path":"https://evil.test/"}`), wire.CodePlanInvalid, "path"},
		{"navigate scheme-relative", plan(`{"kind":"navigate","state_id":"a","path":"//evil.test/"}`), wire.CodePlanInvalid, "path"},
		{"navigate javascript", plan(`{"kind":"navigate","state_id":"a","path":"javascript:alert(1)"}`), wire.CodePlanInvalid, "path"},
		{"assert without assertion", plan(`{"kind":"assert","state_id":"a","text":"x"}`), wire.CodePlanInvalid, "assertion"},
		{"count without count", plan(`{"kind":"assert","state_id":"a","selector":"li","assertion":"count"}`), wire.CodePlanInvalid, "count"},
		{"not on visible", plan(`{"kind":"assert","state_id":"a","text":"x","assertion":"visible","not":true}`), wire.CodePlanInvalid, "not applies"},
		{"timeout over a minute", plan(`{"kind":"assert","state_id":"a","text":"x","assertion":"visible","timeout_ms":60001}`), wire.CodePlanInvalid, "timeout_ms"},
		{"nth out of range", plan(`{"kind":"click","state_id":"a","text":"x","nth":100}`), wire.CodePlanInvalid, "nth"},
		{"select without value", plan(`{"kind":"select","state_id":"a","text":"x"}`), wire.CodePlanInvalid, "select needs"},
		{"role with capitals", plan(`{"kind":"click","state_id":"a","role":"Button","name":"x"}`), wire.CodePlanInvalid, "role"},
		{"login with a bad alias", plan(`{"kind":"login","state_id":"a","alias":"a b"}`), wire.CodePlanInvalid, "alias"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.plan))
			if err == nil {
				t.Fatal("accepted")
			}
			we := wire.From(err)
			if we.Code != tc.code || !strings.Contains(we.Message, tc.msg) || we.Hint == "" {
				t.Errorf("got %s %q (hint %q), want %s containing %q", we.Code, we.Message, we.Hint, tc.code, tc.msg)
			}
		})
	}
}

func TestSelectors(t *testing.T) {
	for _, ok := range []string{"#status", "button.primary", "form > input[name=quantity]", "li:nth-child(2)", "a[href^='/items']",
		"input[type=password]", "[data-test=\"reserve\"]", "ul li:not(.done)", "[title='[value']", "input[valuex]",
		"[aria-label|=en]", "select[name=color] option:checked"} {
		if err := CheckSelector(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"javascript:alert(1)", "a[href=javascript:x]", "() => document.cookie", "a;b", "a{color:red}", "`x`", "eval(x)",
		"document.querySelector('a')", "window.x", "JavaScript:alert(1)", "a[x=\"\\61\"]", "a/**/b", "in\\70ut",
		"input[value^='a']", "input[ value^='a']", "input[VALUE^=a]", "input[*|value^=a]", "input[|value=a]", "input[svg|value=a]",
		"input:not([value=''])", "form:has(input[value^=s])", "input:placeholder-shown", "input[type=password]:invalid",
		"input:-webkit-autofill", "a\u0000b", "ä", "function(){}", "url(x)",
	} {
		err := CheckSelector(bad)
		if wire.CodeOf(err) != wire.CodeUnsafeSelector {
			t.Errorf("%q: got %v, want UNSAFE_SELECTOR", bad, err)
		}
	}
	// In a plan, at decode time.
	_, err := Decode([]byte(plan(`{"kind":"click","state_id":"a","selector":"javascript:alert(document.cookie)"}`)))
	if wire.CodeOf(err) != wire.CodeUnsafeSelector {
		t.Errorf("a plan with a script selector: %v", err)
	}
}

func TestKinds(t *testing.T) {
	for _, a := range []string{
		`{"kind":"navigate","state_id":"a","path":"/items?page=2"}`,
		`{"kind":"click","state_id":"a","role":"button","name":"Reserve","exact":true}`,
		`{"kind":"click","state_id":"a","role":"button"}`,
		`{"kind":"fill","state_id":"a","selector":"#q","value":""}`,
		`{"kind":"select","state_id":"a","role":"combobox","name":"Colour","value":"Blue"}`,
		`{"kind":"select","state_id":"a","selector":"#tags","values":["a","b"]}`,
		`{"kind":"press","state_id":"a","key":"Enter"}`,
		`{"kind":"press","state_id":"a","key":"x","text":"Search"}`,
		`{"kind":"hover","state_id":"a","text":"Help","nth":0}`,
		`{"kind":"scroll","state_id":"a","by":-400}`,
		`{"kind":"scroll","state_id":"a","text":"Footer"}`,
		`{"kind":"wait","state_id":"a","text":"Done","timeout_ms":2000}`,
		`{"kind":"wait","state_id":"a","text":"Loading","not":true}`,
		`{"kind":"wait","state_id":"a","path":"/home"}`,
		`{"kind":"assert","state_id":"a","selector":"#s","assertion":"text","value":"Res","match":"contains"}`,
		`{"kind":"assert","state_id":"a","selector":"#q","assertion":"value","value":"2"}`,
		`{"kind":"assert","state_id":"a","role":"button","name":"Go","assertion":"enabled","not":true}`,
		`{"kind":"assert","state_id":"a","role":"checkbox","name":"Agree","assertion":"checked"}`,
		`{"kind":"assert","state_id":"a","selector":"li","assertion":"count","count":0}`,
		`{"kind":"assert","state_id":"a","assertion":"route","path":"/home"}`,
		`{"kind":"assert","state_id":"a","text":"Oops","assertion":"hidden","screenshot":true}`,
		`{"kind":"login","state_id":"a","alias":"staging-admin"}`,
	} {
		if _, err := Decode([]byte(plan(a))); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}

func TestKeysAreValid(t *testing.T) {
	for _, k := range append(KeyNames(), "a", "Z", "1", " ", "é", "+", "Control+a", "Shift+Tab", "Meta+Enter",
		"Control+Shift+Z", "Alt+Shift+ArrowDown", "Control++") {
		if !ValidKey(k) {
			t.Errorf("key %q refused", k)
		}
	}
	for _, k := range []string{"", "ab", "\n", "\x7f", "Ctrl", "enter", "Ctrl+a", "Hyper+a", "Control+Control+a",
		"Control+", "A+", "++", "Control+ab", "Shift+\n", strings.Repeat("Shift+", 11) + "a"} {
		if ValidKey(k) {
			t.Errorf("key %q accepted", k)
		}
	}
	for k, want := range map[string]string{"Control+Shift+Z": "Control Shift|Z", "Control++": "Control|+", "+": "|+", "Meta+Enter": "Meta|Enter"} {
		mods, key, ok := SplitChord(k)
		if got := strings.Join(mods, " ") + "|" + key; !ok || got != want {
			t.Errorf("SplitChord(%q) = %q %v, want %q", k, got, ok, want)
		}
	}
}

// TestRoundTrip: a decoded plan encodes to a plan that decodes to the same plan.
func TestRoundTrip(t *testing.T) {
	p, err := Decode([]byte(issueExample))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p)
	q, err := Decode(b)
	if err != nil {
		t.Fatalf("re-encoded plan refused: %v\n%s", err, b)
	}
	c, _ := json.Marshal(q)
	if string(b) != string(c) {
		t.Errorf("round trip differs:\n%s\n%s", b, c)
	}
}
