package journey

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/wire"
)

// Bounds of a plan.
const (
	MaxPlanBytes    = 64 << 10 // of the plan's JSON
	MaxActions      = 20
	MaxExpected     = 20
	MaxIDLen        = 48   // journey_id and every state id: [A-Za-z0-9._-], no ".."
	MaxNameLen      = 200  // the journey's name
	MaxExpectedLen  = 500  // what an expected state expects, in words
	MaxPathLen      = 1024 // a path on the plan's origin
	MaxTargetLen    = 200  // a role's name, a text
	MaxRoleLen      = 32
	MaxSelectorLen  = 256
	MaxValueLen     = 1024 // what fill types, what an assertion compares, one select value
	MaxSelectValues = 32
	MaxNth          = 99
	MaxCount        = 1000
	MaxScrollBy     = 100_000 // CSS pixels
	MinViewport     = 100     // CSS pixels, each way
	MaxViewport     = 4096
	MinZoom         = 25 // percent
	MaxZoom         = 500

	DefaultBudget      = 120 * time.Second
	MaxBudget          = 300 * time.Second
	DefaultTimeout     = 5 * time.Second  // an assertion's or a target's wait
	DefaultWaitTimeout = 10 * time.Second // a wait action's
	MaxTimeout         = 60 * time.Second
)

// Action kinds.
const (
	KindNavigate = "navigate"
	KindClick    = "click"
	KindFill     = "fill"
	KindSelect   = "select"
	KindPress    = "press"
	KindHover    = "hover"
	KindScroll   = "scroll"
	KindWait     = "wait"
	KindAssert   = "assert"
	KindLogin    = "login"
)

// Assertions.
const (
	AssertVisible = "visible" // a match is visible
	AssertHidden  = "hidden"  // no match is visible
	AssertText    = "text"    // the target's visible text is (or contains) value
	AssertValue   = "value"   // the target field's value is (or contains) value; never a secret field
	AssertEnabled = "enabled" // the target is enabled (not: disabled)
	AssertChecked = "checked" // the target is checked (not: unchecked)
	AssertCount   = "count"   // exactly count matches are visible
	AssertRoute   = "route"   // the page is on the plan's origin at exactly path
)

// Themes (prefers-color-scheme).
const (
	ThemeLight = "light"
	ThemeDark  = "dark"
)

// Plan is one journey: where it starts, how the page is emulated, what it does and which of
// the states it reaches are the ones to review.
type Plan struct {
	JourneyID string `json:"journey_id" jsonschema:"1-48 of letters, digits, '.', '_', '-'"`
	Name      string `json:"name,omitempty" jsonschema:"what it checks"`
	Origin    string `json:"origin" jsonschema:"such as https://staging.example.com"`
	Path      string `json:"path,omitempty" jsonschema:"the start page on origin (default /, or the session's)"`
	Session   string `json:"session,omitempty" jsonschema:"run in this session"`
	Width     int    `json:"width,omitempty" jsonschema:"viewport width, 100-4096 CSS px (with height)"`
	Height    int    `json:"height,omitempty" jsonschema:"viewport height, 100-4096 CSS px"`
	Theme     string `json:"theme,omitempty" jsonschema:"prefers-color-scheme"`
	Zoom      int    `json:"zoom,omitempty" jsonschema:"percent, 25-500 (CSS zoom)"`
	// BudgetSeconds bounds the whole run, a person's approval of a login included.
	BudgetSeconds  int             `json:"budget_seconds,omitempty" jsonschema:"1-300 (default 120)"`
	ExpectedStates []ExpectedState `json:"expected_states,omitempty" jsonschema:"at most 20 states to review"`
	Actions        []Action        `json:"actions" jsonschema:"1-20, in order"`
}

// ExpectedState is a state the plan wants reviewed: the state an action with this StateID
// reaches.
type ExpectedState struct {
	ID       string `json:"id" jsonschema:"an action's state_id"`
	Expected string `json:"expected" jsonschema:"what it should show"`
}

// Action is one step. Which fields apply depends on Kind (see [Decode]); the target is either
// Role (with Name), Text or Selector.
type Action struct {
	Kind    string `json:"kind"`
	StateID string `json:"state_id" jsonschema:"the state it reaches, unique"`

	Role     string `json:"role,omitempty" jsonschema:"target: ARIA role (button, link, textbox, …), with name"`
	Name     string `json:"name,omitempty" jsonschema:"target: the accessible name, with role"`
	Text     string `json:"text,omitempty" jsonschema:"target: visible text"`
	Selector string `json:"selector,omitempty" jsonschema:"target: CSS (a DOM query)"`
	Exact    bool   `json:"exact,omitempty" jsonschema:"name or text exactly (default: ignoring case, or a part)"`
	Nth      *int   `json:"nth,omitempty" jsonschema:"pick this visible match, 0 first"`

	Value     string   `json:"value,omitempty" jsonschema:"fill: the text; select: an option; assert: the expected text"`
	Values    []string `json:"values,omitempty" jsonschema:"select: several options"`
	Key       string   `json:"key,omitempty" jsonschema:"press: a character or a key name, as the press tool"`
	Path      string   `json:"path,omitempty" jsonschema:"navigate: a path on origin; assert/wait route: the exact path"`
	Alias     string   `json:"alias,omitempty" jsonschema:"login: a saved alias"`
	Assertion string   `json:"assertion,omitempty"`
	Match     string   `json:"match,omitempty"`
	Not       bool     `json:"not,omitempty" jsonschema:"assert enabled/checked: the opposite; wait: until none is visible"`
	Count     *int     `json:"count,omitempty" jsonschema:"assert count: visible matches"`
	By        int      `json:"by,omitempty" jsonschema:"scroll: wheel CSS px (negative: up)"`

	TimeoutMS  int  `json:"timeout_ms,omitempty" jsonschema:"at most 60000"`
	Screenshot bool `json:"screenshot,omitempty" jsonschema:"keep a screenshot of the state"`
}

// Budget is the plan's time budget.
func (p Plan) Budget() time.Duration {
	if p.BudgetSeconds == 0 {
		return DefaultBudget
	}
	return time.Duration(p.BudgetSeconds) * time.Second
}

// ZoomPercent is the plan's zoom (100 when unset).
func (p Plan) ZoomPercent() int {
	if p.Zoom == 0 {
		return 100
	}
	return p.Zoom
}

// StartPath is the path a fresh context's journey starts on ("/" when unset; a journey in an
// existing session without a path starts where the session is).
func (p Plan) StartPath() string {
	if p.Path == "" {
		return "/"
	}
	return p.Path
}

// HasTarget reports whether the action names an element.
func (a Action) HasTarget() bool { return a.Role != "" || a.Text != "" || a.Selector != "" }

// Timeout is how long the action waits for its target or its condition.
func (a Action) Timeout() time.Duration {
	switch {
	case a.TimeoutMS > 0:
		return time.Duration(a.TimeoutMS) * time.Millisecond
	case a.Kind == KindWait:
		return DefaultWaitTimeout
	}
	return DefaultTimeout
}

// SelectValues is what a select action selects: Values, or Value alone.
func (a Action) SelectValues() []string {
	if len(a.Values) > 0 {
		return a.Values
	}
	return []string{a.Value}
}

// Decode decodes and validates a plan: one JSON object, strictly (see the package doc). Every
// error is PLAN_INVALID or UNSAFE_SELECTOR and names the field.
func Decode(raw []byte) (Plan, error) {
	var p Plan
	if len(raw) > MaxPlanBytes {
		return p, invalid("the plan is %d bytes, more than %d", len(raw), MaxPlanBytes)
	}
	if !utf8.Valid(raw) {
		return p, invalid("the plan is not valid UTF-8")
	}
	if err := wire.DecodeStrict(raw, &p); err != nil {
		return Plan{}, invalid("%s", clip.Text(strings.TrimPrefix(err.Error(), "json: "), 200))
	}
	if err := p.Validate(); err != nil {
		return Plan{}, err
	}
	return p, nil
}

func invalid(format string, args ...any) error {
	return wire.Errorf(wire.CodePlanInvalid, "journey plan: "+format, args...)
}

// Validate checks every bound and rule of a decoded plan (Decode calls it).
func (p Plan) Validate() error {
	if err := validID("journey_id", p.JourneyID); err != nil {
		return err
	}
	if err := text("name", p.Name, MaxNameLen); err != nil {
		return err
	}
	if p.Origin == "" {
		return invalid("origin is required")
	}
	c, err := origin.Canonical(p.Origin)
	if err != nil {
		return invalid("origin: %v", err)
	}
	if c != p.Origin {
		return invalid("origin %q is not in canonical form; write %q", clip.Text(p.Origin, 100), c)
	}
	if p.Path != "" {
		if err := validPath("path", p.Path); err != nil {
			return err
		}
	}
	if p.Session != "" && credential.ValidSession(p.Session) != nil {
		return invalid("session: %s", credential.SessionRule)
	}
	if (p.Width == 0) != (p.Height == 0) {
		return invalid("width and height go together")
	}
	if p.Width != 0 && (p.Width < MinViewport || p.Width > MaxViewport || p.Height < MinViewport || p.Height > MaxViewport) {
		return invalid("width and height are %d to %d CSS pixels", MinViewport, MaxViewport)
	}
	switch p.Theme {
	case "", ThemeLight, ThemeDark:
	default:
		return invalid("theme is light or dark, not %q", clip.Text(p.Theme, 20))
	}
	if p.Zoom != 0 && (p.Zoom < MinZoom || p.Zoom > MaxZoom) {
		return invalid("zoom is %d to %d (percent)", MinZoom, MaxZoom)
	}
	if p.BudgetSeconds < 0 || time.Duration(p.BudgetSeconds)*time.Second > MaxBudget {
		return invalid("budget_seconds is 1 to %d", int(MaxBudget/time.Second))
	}
	if len(p.Actions) == 0 {
		return invalid("actions: at least one")
	}
	if len(p.Actions) > MaxActions {
		return invalid("actions: at most %d, not %d", MaxActions, len(p.Actions))
	}
	if len(p.ExpectedStates) > MaxExpected {
		return invalid("expected_states: at most %d", MaxExpected)
	}
	states := map[string]bool{}
	for i, a := range p.Actions {
		if err := a.validate(); err != nil {
			return fmt.Errorf("action %d (%s): %w", i+1, clip.Text(a.Kind, 16), err)
		}
		if states[a.StateID] {
			return invalid("action %d: state_id %q is used twice", i+1, a.StateID)
		}
		states[a.StateID] = true
	}
	seen := map[string]bool{}
	for i, e := range p.ExpectedStates {
		if err := validID(fmt.Sprintf("expected_states[%d].id", i), e.ID); err != nil {
			return err
		}
		if !states[e.ID] {
			return invalid("expected state %q is the state_id of no action: it could never be reviewed", e.ID)
		}
		if seen[e.ID] {
			return invalid("expected state %q is listed twice", e.ID)
		}
		seen[e.ID] = true
		if e.Expected == "" {
			return invalid("expected_states[%d].expected: say what the state should show", i)
		}
		if err := text(fmt.Sprintf("expected_states[%d].expected", i), e.Expected, MaxExpectedLen); err != nil {
			return err
		}
	}
	return nil
}

// fields of an action that a kind may take (kind and state_id always).
type field uint16

const (
	fTarget field = 1 << iota // role/name/text/selector, exact, nth
	fValue
	fValues
	fKey
	fPath
	fAlias
	fAssertion // assertion, match, not, count
	fNot
	fBy
	fTimeout
)

var kindFields = map[string]field{
	KindNavigate: fPath,
	KindClick:    fTarget | fTimeout,
	KindFill:     fTarget | fValue | fTimeout,
	KindSelect:   fTarget | fValue | fValues | fTimeout,
	KindPress:    fTarget | fKey | fTimeout,
	KindHover:    fTarget | fTimeout,
	KindScroll:   fTarget | fBy | fTimeout,
	KindWait:     fTarget | fPath | fNot | fTimeout,
	KindAssert:   fTarget | fValue | fPath | fAssertion | fNot | fTimeout,
	KindLogin:    fAlias,
}

// present lists the fields a is given (beyond kind, state_id and screenshot).
func (a Action) present() field {
	var f field
	if a.HasTarget() || a.Name != "" || a.Exact || a.Nth != nil {
		f |= fTarget
	}
	if a.Value != "" {
		f |= fValue
	}
	if a.Values != nil {
		f |= fValues
	}
	if a.Key != "" {
		f |= fKey
	}
	if a.Path != "" {
		f |= fPath
	}
	if a.Alias != "" {
		f |= fAlias
	}
	if a.Assertion != "" || a.Match != "" || a.Count != nil {
		f |= fAssertion
	}
	if a.Not {
		f |= fNot
	}
	if a.By != 0 {
		f |= fBy
	}
	if a.TimeoutMS != 0 {
		f |= fTimeout
	}
	return f
}

var fieldNames = []struct {
	f    field
	name string
}{{fTarget, "a target (role, name, text, selector, exact, nth)"}, {fValue, "value"}, {fValues, "values"}, {fKey, "key"},
	{fPath, "path"}, {fAlias, "alias"}, {fAssertion, "assertion, match or count"}, {fNot, "not"}, {fBy, "by"}, {fTimeout, "timeout_ms"}}

func (a Action) validate() error {
	allowed, ok := kindFields[a.Kind]
	if !ok {
		return invalid("kind is one of navigate, click, fill, select, press, hover, scroll, wait, assert, login; not %q", clip.Text(a.Kind, 20))
	}
	if err := validID("state_id", a.StateID); err != nil {
		return err
	}
	if extra := a.present() &^ allowed; extra != 0 {
		for _, fn := range fieldNames {
			if extra&fn.f != 0 {
				return invalid("%s does not apply to %s", fn.name, a.Kind)
			}
		}
	}
	if err := a.validTarget(); err != nil {
		return err
	}
	if a.TimeoutMS < 0 || time.Duration(a.TimeoutMS)*time.Millisecond > MaxTimeout {
		return invalid("timeout_ms is 1 to %d", int(MaxTimeout/time.Millisecond))
	}
	if err := text("value", a.Value, MaxValueLen); err != nil {
		return err
	}
	switch a.Kind {
	case KindNavigate:
		return validPath("path", a.Path)
	case KindClick, KindHover:
		return needTarget(a)
	case KindFill:
		return needTarget(a) // an empty value empties the field
	case KindSelect:
		if err := needTarget(a); err != nil {
			return err
		}
		if a.Values != nil && a.Value != "" {
			return invalid("select takes value or values, not both")
		}
		if a.Values == nil && a.Value == "" {
			return invalid("select needs value (an option's label or value) or values")
		}
		if a.Values != nil && (len(a.Values) == 0 || len(a.Values) > MaxSelectValues) {
			return invalid("values: 1 to %d", MaxSelectValues)
		}
		for i, v := range a.Values {
			if err := text(fmt.Sprintf("values[%d]", i), v, MaxValueLen); err != nil {
				return err
			}
		}
	case KindPress:
		if a.Key == "" {
			return invalid("press needs key")
		}
		if !ValidKey(a.Key) {
			return invalid("key %q: one printable character or one of %s, after modifiers joined by + (%s)", clip.Text(a.Key, 20), strings.Join(KeyNames(), ", "), strings.Join(modifiers, ", "))
		}
	case KindScroll:
		if !a.HasTarget() && a.By == 0 {
			return invalid("scroll needs a target (scrolled into view) or by")
		}
		if a.By < -MaxScrollBy || a.By > MaxScrollBy {
			return invalid("by is at most %d either way", MaxScrollBy)
		}
	case KindWait:
		if a.HasTarget() == (a.Path != "") {
			return invalid("wait needs a target (until it is visible, or with not until it is not) or path (until the page is there), not both")
		}
		if a.Path != "" {
			if a.Not {
				return invalid("not does not apply to a wait for a path")
			}
			return validPath("path", a.Path)
		}
	case KindAssert:
		return a.validAssertion()
	case KindLogin:
		if a.Alias == "" {
			return invalid("login needs alias")
		}
		if err := credential.ValidAlias(a.Alias); err != nil {
			return invalid("alias: %v", err)
		}
	}
	return nil
}

func (a Action) validAssertion() error {
	if a.Match != "" && a.Match != "exact" && a.Match != "contains" {
		return invalid("match is exact or contains")
	}
	if a.Match != "" && a.Assertion != AssertText && a.Assertion != AssertValue {
		return invalid("match applies to text and value assertions")
	}
	if a.Not && a.Assertion != AssertEnabled && a.Assertion != AssertChecked {
		return invalid("not applies to enabled and checked assertions (visible has hidden)")
	}
	if a.Count != nil && a.Assertion != AssertCount {
		return invalid("count applies to the count assertion")
	}
	if a.Path != "" && a.Assertion != AssertRoute {
		return invalid("path applies to the route assertion")
	}
	if a.Value != "" && a.Assertion != AssertText && a.Assertion != AssertValue {
		return invalid("value applies to text and value assertions")
	}
	switch a.Assertion {
	case AssertVisible, AssertHidden, AssertEnabled, AssertChecked:
		return needTarget(a)
	case AssertText, AssertValue:
		// An empty expected value is allowed for exact ("the field is empty"); contains "" is
		// always true and says nothing.
		if a.Value == "" && a.Match == "contains" {
			return invalid("contains needs a value")
		}
		return needTarget(a)
	case AssertCount:
		if a.Count == nil || *a.Count < 0 || *a.Count > MaxCount {
			return invalid("count assertion needs count, 0 to %d", MaxCount)
		}
		return needTarget(a)
	case AssertRoute:
		if a.HasTarget() {
			return invalid("a route assertion takes no target")
		}
		return validPath("path", a.Path)
	case "":
		return invalid("assert needs assertion: visible, hidden, text, value, enabled, checked, count or route")
	}
	return invalid("assertion is one of visible, hidden, text, value, enabled, checked, count, route; not %q", clip.Text(a.Assertion, 20))
}

func needTarget(a Action) error {
	if !a.HasTarget() {
		return invalid("%s needs a target: role (with name), text or selector", a.Kind)
	}
	return nil
}

func (a Action) validTarget() error {
	n := 0
	for _, s := range []string{a.Role, a.Text, a.Selector} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return invalid("a target is role (with name), text or selector: one of them")
	}
	if a.Name != "" && a.Role == "" {
		return invalid("name goes with role")
	}
	if a.Exact && a.Role == "" && a.Text == "" {
		return invalid("exact applies to role names and texts")
	}
	if a.Nth != nil && (*a.Nth < 0 || *a.Nth > MaxNth) {
		return invalid("nth is 0 to %d", MaxNth)
	}
	if a.Role != "" {
		if len(a.Role) > MaxRoleLen || strings.TrimLeft(a.Role, "abcdefghijklmnopqrstuvwxyz") != "" {
			return invalid("role is an ARIA role in lower-case letters (button, link, textbox, …), not %q", clip.Text(a.Role, 40))
		}
	}
	if err := text("name", a.Name, MaxTargetLen); err != nil {
		return err
	}
	if err := text("text", a.Text, MaxTargetLen); err != nil {
		return err
	}
	if a.Selector != "" {
		return CheckSelector(a.Selector)
	}
	return nil
}

// validID is the rule of journey ids and state ids: they name files.
func validID(what, id string) error {
	if id == "" {
		return invalid("%s is required", what)
	}
	if len(id) > MaxIDLen || strings.Contains(id, "..") || !isWordStart(id[0]) {
		return invalid("%s %q: 1-%d letters, digits, '.', '_' or '-', starting with a letter or digit, without '..'", what, clip.Text(id, 60), MaxIDLen)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isWordStart(c) && c != '.' && c != '_' && c != '-' {
			return invalid("%s %q: 1-%d letters, digits, '.', '_' or '-', starting with a letter or digit, without '..'", what, clip.Text(id, 60), MaxIDLen)
		}
	}
	return nil
}

func isWordStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// text bounds a string field and refuses control characters (a name or a value is one line).
func text(what, s string, max int) error {
	if len(s) > max {
		return invalid("%s is longer than %d bytes", what, max)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\t' {
			return invalid("%s holds a control character", what)
		}
	}
	return nil
}

// validPath accepts a path on the plan's origin: it starts with one "/", has no backslash, no
// control or space characters and no fragment. A query is allowed (navigate only matters).
func validPath(what, p string) error {
	switch {
	case p == "":
		return invalid("%s is required", what)
	case len(p) > MaxPathLen:
		return invalid("%s is longer than %d bytes", what, MaxPathLen)
	case p[0] != '/' || strings.HasPrefix(p, "//"):
		return invalid("%s %q is a path on the plan's origin: it starts with one '/'", what, clip.Text(p, 60))
	case strings.ContainsAny(p, "\\#"):
		return invalid("%s %q: no backslash or fragment", what, clip.Text(p, 60))
	}
	for _, r := range p {
		if r <= ' ' || r == 0x7f || unicode.IsSpace(r) {
			return invalid("%s %q: no spaces or control characters (percent-encode them)", what, clip.Text(p, 60))
		}
	}
	return nil
}

// The named keys press takes (host/keys.go has one entry for each; a test keeps them equal).
var keyNames = []string{"ArrowDown", "ArrowLeft", "ArrowRight", "ArrowUp", "Backspace", "Delete", "End", "Enter",
	"Escape", "Home", "PageDown", "PageUp", "Space", "Tab"}

// KeyNames lists the named keys, sorted.
func KeyNames() []string { return slices.Clone(keyNames) }

// Modifiers are the modifier keys a key press may hold, written before the key with "+"
// (Control+A, Shift+Tab, Meta+Enter), in any order, each at most once.
var modifiers = []string{"Alt", "Control", "Meta", "Shift"}

// Modifiers lists the modifier names, sorted.
func Modifiers() []string { return slices.Clone(modifiers) }

// MaxKeyLen bounds a key press as written (modifiers included).
const MaxKeyLen = 64

// ValidKey reports whether k is a named key or one printable character, after modifiers.
func ValidKey(k string) bool {
	_, key, ok := SplitChord(k)
	return ok && validKeyName(key)
}

func validKeyName(k string) bool {
	if slices.Contains(keyNames, k) {
		return true
	}
	r := []rune(k)
	return len(r) == 1 && r[0] >= 0x20 && r[0] != 0x7f && r[0] != utf8.RuneError && unicode.IsPrint(r[0])
}

// SplitChord splits a key press into its modifiers and its key ("Control+Shift+Z": Control,
// Shift and Z; "Control++": Control and "+"; "+": the key "+"). ok is false for an unknown or
// repeated modifier, an empty key, or more than MaxKeyLen bytes; the key itself is not checked.
func SplitChord(k string) (mods []string, key string, ok bool) {
	if len(k) > MaxKeyLen || k == "" {
		return nil, "", false
	}
	rest := ""
	switch i := strings.LastIndex(k, "+"); {
	case i < 0 || k == "+":
		key = k
	case i == len(k)-1: // the key is "+" itself: "Control++"
		rest, key = strings.TrimSuffix(k[:i], "+"), "+"
		if rest == k[:i] || rest == "" { // "A+", "++": a "+" that joins nothing
			return nil, "", false
		}
	default:
		rest, key = k[:i], k[i+1:]
	}
	if rest != "" {
		for _, m := range strings.Split(rest, "+") {
			if !slices.Contains(modifiers, m) || slices.Contains(mods, m) {
				return nil, "", false
			}
			mods = append(mods, m)
		}
	}
	return mods, key, key != ""
}
