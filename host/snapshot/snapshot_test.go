package snapshot

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// fixtures are real captures from Debian Chromium 156 of the pages described in
// testdata/README.md.
var fixtures = []string{"basic", "login", "step1", "step2", "frames", "tricky", "large"}

// secrets are values present in the fixtures' raw data (value attributes, typed values,
// inputValue) that must never reach an outline.
var secrets = []string{
	"CANARY-attr-Pa55w0rd",    // login: value attribute of the password input
	"CANARY-typed-Pa55w0rd",   // login: value typed into it (inputValue)
	"EVIL-FRAME-SECRET",       // frames: password in the cross-origin frame
	"CANARY-form-attr-secret", // tricky: type=PassWord associated with form=
	"CANARY-shown-password",   // tricky: text input named "password" (a show-password toggle)
	"123456",                  // tricky: autocomplete=one-time-code
	"LARGE-SECRET",            // large: password after the cut
	"HIDDEN-TOKEN",            // login: hidden input
	"HIDDEN-CSRF-TOKEN",       // basic: hidden input
}

func build(t testing.TB, name string, o Options) (Outline, map[string]Target) {
	t.Helper()
	raw, frames := loadFixture(t, name)
	out, targets, err := Build(raw, o, frames...)
	if err != nil {
		t.Fatalf("Build(%s): %v", name, err)
	}
	checkInvariants(t, out, targets, o)
	return out, targets
}

// checkInvariants holds for every outline Build returns.
func checkInvariants(t testing.TB, out Outline, targets map[string]Target, o Options) {
	t.Helper()
	o, _ = o.withDefaults()
	if out.Untrusted != UntrustedNotice {
		t.Errorf("Untrusted = %q", out.Untrusted)
	}
	if out.Elements == nil {
		t.Errorf("Elements is nil (marshals as null)")
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > o.MaxBytes {
		t.Errorf("outline JSON is %d bytes, more than MaxBytes %d", len(b), o.MaxBytes)
	}
	if len(out.Elements) > o.MaxElements {
		t.Errorf("%d elements, more than MaxElements %d", len(out.Elements), o.MaxElements)
	}
	if len(targets) != len(out.Elements) {
		t.Errorf("%d targets for %d elements", len(targets), len(out.Elements))
	}
	kinds := map[string]string{}
	for k, e := range out.Elements {
		if want := "e" + strconv.Itoa(k+1); e.Ref != want {
			t.Errorf("element %d has ref %q, want %q", k, e.Ref, want)
		}
		kinds[e.Ref] = e.Kind
		tg, ok := targets[e.Ref]
		if !ok || tg.Kind != e.Kind || tg.Type != e.Type {
			t.Errorf("target of %s = %+v, element kind %q type %q", e.Ref, tg, e.Kind, e.Type)
		}
		for _, s := range []string{e.Text, e.Name, e.ID, e.Placeholder, e.Autocomplete, e.Value} {
			if utf8.RuneCountInString(s) > o.MaxText {
				t.Errorf("%s: string of %d characters, more than MaxText %d", e.Ref, utf8.RuneCountInString(s), o.MaxText)
			}
			if strings.ContainsAny(s, "\n\t\u202e") || strings.Contains(s, "  ") {
				t.Errorf("%s: string %q is not collapsed and cleaned", e.Ref, s)
			}
		}
		for _, s := range []string{e.Href, e.Action, e.ActionOrigin, e.Frame} {
			if len(s) > maxURL {
				t.Errorf("%s: URL of %d bytes", e.Ref, len(s))
			}
		}
		if e.Type == "password" && e.Value != "" {
			t.Errorf("%s: password input with a value", e.Ref)
		}
	}
	for _, e := range out.Elements {
		if e.Form != "" && kinds[e.Form] != "form" {
			t.Errorf("%s: form ref %q is not a listed form", e.Ref, e.Form)
		}
	}
}

func find(t testing.TB, out Outline, kind, text string) Element {
	t.Helper()
	for _, e := range out.Elements {
		if e.Kind == kind && e.Text == text {
			return e
		}
	}
	t.Fatalf("no %s %q in the outline:\n%s", kind, text, dump(out))
	return Element{}
}

func dump(out Outline) string {
	var sb strings.Builder
	for _, e := range out.Elements {
		b, _ := json.Marshal(e)
		sb.Write(b)
		sb.WriteByte('\n')
	}
	return sb.String()
}

func TestPasswordValuesNeverInOutline(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			raw, frames := loadFixture(t, name)
			all := append([]byte(nil), raw...)
			for _, f := range frames {
				all = append(all, f.Raw...)
			}
			for _, o := range []Options{{}, {MaxElements: 100000, MaxText: 10000, MaxBytes: 64 << 20}} {
				out, targets, err := Build(raw, o, frames...)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(out)
				b = append(b, fmt.Sprintf("%+v %+v", out, targets)...)
				b = append(b, fmt.Sprint(LoginForms(out))...)
				for _, s := range secrets {
					for _, enc := range []string{s, base64.StdEncoding.EncodeToString([]byte(s)), hex.EncodeToString([]byte(s)), url.QueryEscape(s)} {
						if bytes.Contains(b, []byte(enc)) {
							t.Errorf("secret %q (as %q) is in the outline", s, enc)
						}
					}
				}
			}
			// The sweep is not vacuous: the secrets really are in the captured data.
			switch name {
			case "login":
				for _, s := range []string{"CANARY-attr-Pa55w0rd", "CANARY-typed-Pa55w0rd"} {
					if !bytes.Contains(all, []byte(s)) {
						t.Errorf("fixture lacks %q", s)
					}
				}
			case "frames":
				if !bytes.Contains(all, []byte("EVIL-FRAME-SECRET")) {
					t.Error("fixture lacks the frame's password")
				}
			case "tricky":
				if !bytes.Contains(all, []byte("CANARY-shown-password")) {
					t.Error("fixture lacks the shown password")
				}
			}
		})
	}
}

// A password value planted in every string slot a synthetic page offers never reaches the
// outline either, whatever the letter case of the type or where the field sits.
func TestPasswordValueSynthetic(t *testing.T) {
	const secret = "s3cr3t-VALUE-xyz"
	d := newTDoc("https://a.example/login")
	form := d.el(body, "FORM", "action", "/s")
	d.input(form, secret, "type", "PASSWORD", "name", "p1", "value", secret)
	d.input(form, secret, "type", " password", "name", "p2")
	d.input(form, secret, "type", "text", "name", "user_passwd")
	d.input(form, secret, "type", "text", "id", "pwd")
	d.input(form, secret, "type", "text", "autocomplete", "section-a NEW-PASSWORD")
	d.input(form, secret, "type", "hidden", "name", "h")
	ta := d.el(form, "TEXTAREA", "name", "passcode")
	d.text(ta, secret)
	out, targets, err := Build(synth(t, d), Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, out, targets, Options{})
	b, _ := json.Marshal(out)
	if bytes.Contains(b, []byte(secret)) {
		t.Fatalf("secret in outline:\n%s", dump(out))
	}
	if n := len(LoginForms(out)); n != 1 {
		t.Errorf("LoginForms found %d, want 1 (only the PASSWORD-typed input is a password field)", n)
	}
}

func TestBasic(t *testing.T) {
	out, _ := build(t, "basic", Options{})
	if out.URL != "http://127.0.0.1:47801/basic.html" || out.Origin != "http://127.0.0.1:47801" || out.Title != "Basic page & title" || out.Truncated {
		t.Errorf("header = %q %q %q truncated=%v", out.URL, out.Origin, out.Title, out.Truncated)
	}
	for level, text := range []string{"Welcome to the test site", "Section two", "Buttons", "Hidden things", "Controls", "Small heading"} {
		if e := find(t, out, "heading", text); e.Level != level+1 {
			t.Errorf("heading %q level %d, want %d", text, e.Level, level+1)
		}
	}
	for _, c := range []struct{ text, href string }{
		{"a relative link", "http://127.0.0.1:47801/docs/start?x=1#top"},
		{"Absolute link", "https://example.org/abs"},
		{"Script link", "javascript:"},
		{"Labelled link", "http://127.0.0.1:47801/other.html"}, // aria-label wins over content
		{"Image alt", "http://127.0.0.1:47801/img.html"},
	} {
		if e := find(t, out, "link", c.text); e.Href != c.href {
			t.Errorf("link %q href %q, want %q", c.text, e.Href, c.href)
		}
	}
	for _, c := range []struct {
		text, typ string
		disabled  bool
	}{
		{"Plain button", "button", false},
		{"Disabled button", "submit", true},
		{"Submit input", "submit", false},
		{"Reset", "reset", false},
		{"Image button", "image", false},
		{"Role button", "", false},
		{"Clickable div", "", false}, // a click listener, nothing clickable inside
	} {
		if e := find(t, out, "button", c.text); e.Type != c.typ || e.Disabled != c.disabled {
			t.Errorf("button %q: type %q disabled %v, want %q %v", c.text, e.Type, e.Disabled, c.typ, c.disabled)
		}
	}
	if e := find(t, out, "input", "Search"); e.Value != "prefilled query" || e.Type != "search" || e.Name != "q" {
		t.Errorf("wrapped-label search input = %+v", e)
	}
	if e := find(t, out, "input", "Remember me"); !e.Checked || e.Type != "checkbox" || e.Value != "" {
		t.Errorf("label[for] checkbox = %+v", e)
	}
	// A select lists its options' labels (what a person sees on opening it, and what select
	// takes), beside the selected one; never as text of the page.
	if e := find(t, out, "select", "Colour"); e.Value != "Green" || strings.Join(e.Options, "|") != "Red|Green" || e.Multiple {
		t.Errorf("select = %+v", e)
	}
	for _, e := range out.Elements {
		if e.Kind != "select" && strings.Contains(e.Text, "Red") {
			t.Errorf("an option's label listed as page text: %+v", e)
		}
	}
	if e := find(t, out, "textarea", "Your message"); e.Value != "Hello textarea" || e.Placeholder != "Your message" {
		t.Errorf("textarea = %+v", e)
	}
	if e := find(t, out, "input", "Inside disabled fieldset"); !e.Disabled {
		t.Errorf("input in a disabled fieldset is not disabled: %+v", e)
	}
	find(t, out, "text", "Intro paragraph with a relative link inside it.")
	find(t, out, "text", "Not a link (no href)")
	find(t, out, "text", "Visible child of ghost") // visibility:visible inside visibility:hidden
	find(t, out, "text", "Text with weird spacing, tabs and a bidioverride char.")

	b, _ := json.Marshal(out)
	for _, s := range []string{"Hidden link", "hidden-link", "Hidden heading", "Ghost button", "ghost link", "IGNORE ALL",
		"SCRIPT-TEXT", "Template link", "display:none", "R0lGOD"} {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("outline holds %q, which is not visible", s)
		}
	}
}

func TestLoginPage(t *testing.T) {
	out, targets := build(t, "login", Options{})
	form := find(t, out, "form", "")
	if form.Action != "http://127.0.0.1:47801/session" || form.ActionOrigin != "http://127.0.0.1:47801" || form.Method != "post" || form.ID != "login" {
		t.Errorf("form = %+v", form)
	}
	user := find(t, out, "input", "Email or username")
	if user.Value != "alice@example.test" || user.Autocomplete != "username" || user.Form != form.Ref {
		t.Errorf("username input = %+v", user)
	}
	pw := find(t, out, "input", "Password")
	if pw.Type != "password" || pw.Value != "" || pw.Form != form.Ref || pw.Autocomplete != "current-password" {
		t.Errorf("password input = %+v", pw)
	}
	if tg := targets[pw.Ref]; tg.BackendNodeID == 0 || tg.FrameID == "" || tg.DocumentURL != out.URL || tg.Type != "password" {
		t.Errorf("password target = %+v", tg)
	}
	if e := find(t, out, "button", "Sign in"); e.Form != form.Ref || e.Type != "submit" {
		t.Errorf("submit = %+v", e)
	}
	search := find(t, out, "form", "")
	for _, e := range out.Elements {
		if e.Kind == "form" && e.Ref != form.Ref {
			search = e
		}
	}
	if search.ActionOrigin != "https://search.example.net" || search.Method != "get" {
		t.Errorf("search form = %+v", search)
	}
}

func TestFrames(t *testing.T) {
	out, targets := build(t, "frames", Options{})
	const top, cross = "http://127.0.0.1:47801", "http://localhost:47802"
	var forms []Element
	for _, e := range out.Elements {
		if e.Kind == "form" {
			forms = append(forms, e)
		}
	}
	if len(forms) != 2 {
		t.Fatalf("%d forms, want 2 (the display:none frame is not listed):\n%s", len(forms), dump(out))
	}
	if forms[0].Frame != top || forms[0].ActionOrigin != top {
		t.Errorf("same-origin frame form = %+v", forms[0])
	}
	if forms[1].Frame != cross || forms[1].ActionOrigin != cross {
		t.Errorf("cross-origin frame form = %+v", forms[1])
	}
	h := find(t, out, "heading", "Please re-enter your password")
	if h.Frame != cross {
		t.Errorf("heading in the cross-origin frame has frame %q", h.Frame)
	}
	if tg := targets[h.Ref]; tg.DocumentURL != cross+"/evil-login.html" || tg.FrameID == targets["e1"].FrameID {
		t.Errorf("cross-origin target = %+v", tg)
	}
	if e := find(t, out, "text", "srcdoc text"); e.Frame != "null" {
		t.Errorf("sandboxed srcdoc frame marker %q, want null", e.Frame)
	}
	if e := find(t, out, "iframe", "Cross-origin login"); e.Frame != "" || e.Href != cross+"/evil-login.html" {
		t.Errorf("iframe element = %+v", e)
	}
	if e := find(t, out, "text", "After frames"); e.Frame != "" {
		t.Errorf("top text after frames has frame %q", e.Frame)
	}

	// Without the out-of-process frames' snapshots their content is simply absent.
	raw, _ := loadFixture(t, "frames")
	alone, _, err := Build(raw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range alone.Elements {
		if e.Frame == cross || e.Frame == "null" {
			t.Errorf("content of an out-of-process frame without its snapshot: %+v", e)
		}
	}
}

func TestTricky(t *testing.T) {
	out, _ := build(t, "tricky", Options{})
	if e := find(t, out, "link", "Base-relative link"); e.Href != "https://cdn.example.com/base/rel/path" {
		t.Errorf("<base> not honoured: %q", e.Href)
	}
	f1 := find(t, out, "form", "")
	if f1.ID != "f1" || f1.Action != "http://127.0.0.1:47801/tricky.html" || f1.Method != "get" {
		t.Errorf("form with empty action and bogus method = %+v", f1)
	}
	if e := find(t, out, "input", "Outside user"); e.Form != f1.Ref || e.Value != "bob" {
		t.Errorf("form= attribute input = %+v", e)
	}
	if e := find(t, out, "input", "Password (shown)"); e.Value != "" || e.Type != "text" {
		t.Errorf("text input named password = %+v", e)
	}
	if e := find(t, out, "input", "Code"); e.Value != "" {
		t.Errorf("one-time-code input = %+v", e)
	}
	if e := find(t, out, "input", "Labelled by span"); e.Form == "" {
		t.Errorf("aria-labelledby input = %+v", e)
	}
	if e := find(t, out, "button", "Sneaky submit"); e.ActionOrigin != "https://evil.example" || e.Method != "post" {
		t.Errorf("formaction button = %+v", e)
	}
	find(t, out, "button", "Shadow button")
	find(t, out, "link", "Shadow link")
	if e := find(t, out, "input", "In display contents form"); e.Form == "" {
		t.Errorf("input in a display:contents form has no form: %+v", e)
	}
	n := 0
	for _, e := range out.Elements {
		if e.Kind == "input" && e.Type == "password" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d password inputs, want 2", n)
	}
}

func TestTruncation(t *testing.T) {
	out, targets := build(t, "large", Options{})
	if !out.Truncated || len(out.Elements) != DefaultMaxElements || len(targets) != DefaultMaxElements {
		t.Errorf("large page: truncated=%v, %d elements", out.Truncated, len(out.Elements))
	}
	for _, o := range []Options{
		{MaxBytes: MinMaxBytes},
		{MaxElements: 10},
		{MaxText: 5},
	} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			out, _ := build(t, "large", o)
			if !out.Truncated {
				t.Errorf("not truncated")
			}
			if o.MaxText == 5 {
				if e := out.Elements[1]; e.Text != "Item…" {
					t.Errorf("clipped text %q", e.Text)
				}
			}
		})
	}
	// Without limits the whole page is listed, the password field after the cut included.
	all, _ := build(t, "large", Options{MaxElements: 100000, MaxText: 100000, MaxBytes: 1 << 30})
	if all.Truncated || len(all.Elements) != 604 {
		t.Errorf("unlimited: truncated=%v, %d elements", all.Truncated, len(all.Elements))
	}
	if lf := LoginForms(all); len(lf) != 1 || lf[0].Username == "" || lf[0].ActionOrigin != "http://127.0.0.1:47801" {
		t.Errorf("LoginForms on the whole large page = %+v", lf)
	}
	// Small pages are not truncated.
	for _, name := range []string{"basic", "login", "frames", "tricky"} {
		if out, _ := build(t, name, Options{}); out.Truncated {
			t.Errorf("%s: truncated", name)
		}
	}
}

// A control whose form (reached through form=) comes after it keeps its ref only while the
// form is listed.
func TestFormCut(t *testing.T) {
	d := newTDoc("https://a.example/")
	d.input(body, "x", "form", "late", "name", "user")
	for i := 0; i < 5; i++ {
		d.text(d.el(body, "P"), "filler "+strconv.Itoa(i))
	}
	d.el(body, "FORM", "id", "late", "action", "/go")
	raw := synth(t, d)
	out, targets, err := Build(raw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, out, targets, Options{})
	if out.Elements[0].Form != "e7" {
		t.Fatalf("forward form ref = %q:\n%s", out.Elements[0].Form, dump(out))
	}
	out, targets, err = Build(raw, Options{MaxElements: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, out, targets, Options{MaxElements: 3})
	if out.Elements[0].Form != "" || !out.Truncated {
		t.Errorf("cut form still referenced: %+v", out.Elements[0])
	}
}

func TestFrameCycleAndDepth(t *testing.T) {
	d := newTDoc("https://a.example/")
	f := d.el(body, "IFRAME")
	d.nodes[f].contentDoc = 0 // the frame shows its own document
	d.text(d.el(body, "P"), "once")
	out, targets, err := Build(synth(t, d), Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, out, targets, Options{})
	if n := strings.Count(dump(out), "once"); n != 1 {
		t.Errorf("text listed %d times", n)
	}

	// A chain of nested frames deeper than maxFrameDepth is cut.
	var docs []*tdoc
	for k := 0; k <= maxFrameDepth+2; k++ {
		d := newTDoc("https://a.example/" + strconv.Itoa(k))
		d.text(d.el(body, "P"), "level "+strconv.Itoa(k))
		if k <= maxFrameDepth+1 {
			d.nodes[d.el(body, "IFRAME")].contentDoc = k + 1
		}
		docs = append(docs, d)
	}
	out, _, err = Build(synth(t, docs...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Truncated || strings.Contains(dump(out), "level "+strconv.Itoa(maxFrameDepth+1)) || !strings.Contains(dump(out), "level "+strconv.Itoa(maxFrameDepth)) {
		t.Errorf("frame depth not cut at %d:\n%s", maxFrameDepth, dump(out))
	}
}

func TestSandboxAndOpaqueFrames(t *testing.T) {
	for _, c := range []struct {
		url     string
		sandbox []string
		want    string
	}{
		{"https://b.example/x", nil, "https://b.example"},
		{"https://b.example/x", []string{"sandbox", ""}, "null"},
		{"https://b.example/x", []string{"sandbox", "allow-scripts allow-forms"}, "null"},
		{"https://b.example/x", []string{"sandbox", "allow-scripts ALLOW-SAME-ORIGIN"}, "https://b.example"},
		{"about:blank", nil, "null"},
		{"data:text/html,hi", nil, "null"},
		{"http://evil.example:80/", nil, "http://evil.example"},
	} {
		top := newTDoc("https://a.example/")
		f := top.el(body, "IFRAME", c.sandbox...)
		top.nodes[f].contentDoc = 1
		child := newTDoc(c.url)
		child.input(body, "", "name", "q", "aria-label", "field")
		out, _, err := Build(synth(t, top, child), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if e := find(t, out, "input", "field"); e.Frame != c.want {
			t.Errorf("%s %v: frame %q, want %q", c.url, c.sandbox, e.Frame, c.want)
		}
	}
}

// A frame whose parent is sandboxed stays opaque even if its own element allows same-origin.
func TestSandboxInherited(t *testing.T) {
	top := newTDoc("https://a.example/")
	top.nodes[top.el(body, "IFRAME", "sandbox", "")].contentDoc = 1
	mid := newTDoc("https://a.example/mid")
	mid.nodes[mid.el(body, "IFRAME", "sandbox", "allow-same-origin")].contentDoc = 2
	leaf := newTDoc("https://a.example/leaf")
	leaf.input(body, "", "aria-label", "deep")
	out, _, err := Build(synth(t, top, mid, leaf), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e := find(t, out, "input", "deep"); e.Frame != "null" {
		t.Errorf("frame %q, want null", e.Frame)
	}
}

func TestClickableContainers(t *testing.T) {
	d := newTDoc("https://a.example/")
	root := d.el(body, "DIV", "id", "root") // a framework's delegated listener
	d.nodes[root].clickable = true
	card := d.el(root, "DIV")
	d.nodes[card].clickable = true
	d.text(card, "Card")
	wrap := d.el(root, "DIV")
	d.nodes[wrap].clickable = true
	d.text(d.el(wrap, "A", "href", "/x"), "Inner link")
	out, _, err := Build(synth(t, d), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buttons []string
	for _, e := range out.Elements {
		if e.Kind == "button" {
			buttons = append(buttons, e.Text)
		}
	}
	if fmt.Sprint(buttons) != "[Card]" {
		t.Errorf("clickable buttons %q, want [Card]:\n%s", buttons, dump(out))
	}
}

func TestOptionsErrors(t *testing.T) {
	raw, _ := loadFixture(t, "login")
	for _, o := range []Options{{MaxElements: -1}, {MaxText: -1}, {MaxBytes: -1}, {MaxBytes: MinMaxBytes - 1}} {
		if _, _, err := Build(raw, o); err == nil || errors.Is(err, ErrMalformed) {
			t.Errorf("Build with %+v: %v, want an options error", o, err)
		}
	}
}

func TestMalformed(t *testing.T) {
	good := synth(t, newTDoc("https://a.example/"))
	mutate := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	doc := func(m map[string]any) map[string]any { return m["documents"].([]any)[0].(map[string]any) }
	nodes := func(m map[string]any) map[string]any { return doc(m)["nodes"].(map[string]any) }
	for name, raw := range map[string][]byte{
		"empty":           nil,
		"null":            []byte("null"),
		"array":           []byte("[]"),
		"no documents":    []byte(`{"documents":[],"strings":[]}`),
		"trailing":        append(append([]byte(nil), good...), "{}"...),
		"too large":       bytes.Repeat([]byte(" "), MaxRaw+1),
		"wrong type":      []byte(`{"documents":[{"nodes":{"parentIndex":"x"}}],"strings":[]}`),
		"no nodes":        []byte(`{"documents":[{"nodes":{}}],"strings":[]}`),
		"bad url index":   mutate(func(m map[string]any) { doc(m)["documentURL"] = 99 }),
		"bad name index":  mutate(func(m map[string]any) { nodes(m)["nodeName"].([]any)[1] = -7 }),
		"short types":     mutate(func(m map[string]any) { nodes(m)["nodeType"] = []int{9} }),
		"parent forward":  mutate(func(m map[string]any) { nodes(m)["parentIndex"].([]any)[1] = 2 }),
		"parent not open": mutate(func(m map[string]any) { nodes(m)["parentIndex"] = []int{-1, 0, 0, 1} }),
		"odd attributes":  mutate(func(m map[string]any) { nodes(m)["attributes"].([]any)[1] = []int{0} }),
		"layout node":     mutate(func(m map[string]any) { doc(m)["layout"].(map[string]any)["nodeIndex"].([]any)[0] = 50 }),
		"layout styles":   mutate(func(m map[string]any) { doc(m)["layout"].(map[string]any)["styles"] = []any{} }),
		"style index":     mutate(func(m map[string]any) { doc(m)["layout"].(map[string]any)["styles"].([]any)[0] = []int{0, 1e6} }),
		"content document": mutate(func(m map[string]any) {
			nodes(m)["contentDocumentIndex"] = map[string]any{"index": []int{1}, "value": []int{5}}
		}),
		"rare mismatch": mutate(func(m map[string]any) { nodes(m)["inputValue"] = map[string]any{"index": []int{1}, "value": []int{}} }),
		"rare index":    mutate(func(m map[string]any) { nodes(m)["isClickable"] = map[string]any{"index": []int{-1}} }),
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := Build(raw, Options{}); !errors.Is(err, ErrMalformed) {
				t.Errorf("Build: %v, want ErrMalformed", err)
			}
		})
	}
	if _, _, err := Build(good, Options{}, Frame{ParentFrameID: "x", OwnerNodeID: 1, Raw: []byte("{")}); !errors.Is(err, ErrMalformed) {
		t.Errorf("malformed frame: %v", err)
	}
	f := Frame{ParentFrameID: "x", OwnerNodeID: 1, Raw: good}
	if _, _, err := Build(good, Options{}, f, f); !errors.Is(err, ErrMalformed) {
		t.Errorf("duplicate frame: %v", err)
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
		cut  bool
	}{
		{"  a \n\t b  ", 10, "a b", false},
		{"abcdef", 6, "abcdef", false},
		{"abcdefg", 6, "abcde…", true},
		{"abc def", 4, "abc…", true},
		{"abc   ", 3, "abc", false},
		{"a\u202eb\u200bc\u00ad", 10, "abc", false},
		{"a\x00b\x1bc", 10, "a b c", false},
		{"ok\xffbad", 10, "ok\uFFFDbad", false},
		{"日本語テキスト", 3, "日本…", true},
		{"x", 0, "", false},
		{"👩\u200d💻", 5, "👩\u200d💻", false},
	} {
		b := &builder{}
		if got := b.clip(c.in, c.max); got != c.want || b.truncated != c.cut {
			t.Errorf("clip(%q, %d) = %q (cut %v), want %q (cut %v)", c.in, c.max, got, b.truncated, c.want, c.cut)
		}
	}
	b := &builder{}
	if got := b.clipBytes(strings.Repeat("é", 10), 9); got != "ééé…" || !b.truncated {
		t.Errorf("clipBytes = %q", got)
	}
}

func TestResolveAndOrigin(t *testing.T) {
	base, _ := url.Parse("https://a.example/dir/page?q#f")
	for _, c := range []struct{ ref, origin string }{
		{"", "https://a.example"},
		{"/x", "https://a.example"},
		{"//B.Example:443/x", "https://b.example"},
		{"https://b.example:8443", "https://b.example:8443"},
		{`\\evil.example\x`, "https://evil.example"},
		{`/\evil.example`, "https://evil.example"},
		{"https://ev\til.exa\nmple/", "https://evil.example"},
		{"  https://b.example/  ", "https://b.example"},
		{"\x01https://b.example/", "https://b.example"},
		{"https://good.example@evil.example/", "https://evil.example"},
		{"https://xn--bcher-kva.example/", "https://xn--bcher-kva.example"},
		{"https://BÜCHER.example/", "https://xn--bcher-kva.example"},
		{"http://example.com/", "http://example.com"},
		{"http://Example.COM:80/", "http://example.com"},
		{"http://localhost:3000/", "http://localhost:3000"},
		{"HTTP://127.0.0.1:80/", "http://127.0.0.1"},
		{"https://[::1]:443/", "https://[::1]"},
		{"wss://a.example:443/", "wss://a.example"},
		{"javascript:alert(1)", "null"},
		{"data:text/html,x", "null"},
		{"about:blank", "null"},
		{"file:///etc/passwd", "null"},
		{"blob:https://c.example/uuid", "https://c.example"},
		{"blob:null/uuid", "null"},
		{"https://a b.example/", "null"},
		{"https://[zz]/", "null"},
		{"https:evil.example", "null"},
	} {
		if got := originOf(resolve(base, c.ref)); got != c.origin {
			t.Errorf("origin of %q = %q, want %q", c.ref, got, c.origin)
		}
	}
	if u := resolve(nil, "/x"); u != nil {
		t.Errorf("relative against no base = %v", u)
	}
	opaque, _ := url.Parse("data:text/html,x")
	if u := resolve(opaque, "/x"); u != nil {
		t.Errorf("relative against an opaque base = %v", u)
	}
}

func BenchmarkBuild(b *testing.B) {
	raw, _ := loadFixture(b, "large")
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Build(raw, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestURLCredentialsNotShown(t *testing.T) {
	d := newTDoc("https://user:topsecret@a.example/page")
	d.text(d.el(body, "A", "href", "https://bob:hunter2@b.example/x"), "creds")
	form := d.el(body, "FORM", "action", "https://carol:pw3@c.example/login")
	d.input(form, "", "name", "q")
	out, _, err := Build(synth(t, d), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	for _, s := range []string{"topsecret", "hunter2", "pw3", "bob", "carol"} {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("URL credential %q shown: %s", s, b)
		}
	}
	if e := find(t, out, "link", "creds"); e.Href != "https://b.example/x" {
		t.Errorf("href %q", e.Href)
	}
	if out.URL != "https://a.example/page" {
		t.Errorf("URL %q", out.URL)
	}
}

// Naming elements is bounded work however the page nests and cross-references its nodes.
func TestNamingWorkBounded(t *testing.T) {
	d := newTDoc("https://a.example/")
	big := d.el(body, "DIV", "id", "big")
	for i := 0; i < 30000; i++ {
		d.el(big, "SPAN")
	}
	ids := strings.Repeat("big ", 16)
	for i := 0; i < 300; i++ {
		d.input(body, "", "aria-labelledby", ids)
	}
	out, _, err := Build(synth(t, d), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Truncated {
		t.Error("walk budget not reported as truncation")
	}
}

// TestSelectOptions: a select lists its options' labels (the label attribute, else the text,
// in optgroups too, without hidden ones), bounded in number and length, and says whether it
// takes several.
func TestSelectOptions(t *testing.T) {
	d := newTDoc("https://a.example/")
	sel := d.el(body, "SELECT", "aria-label", "Size", "multiple", "")
	for _, o := range []struct{ label, text string }{{"", "  Small\n size "}, {"Medium", "M"}, {"", "Large"}} {
		op := d.el(sel, "OPTION", "label", o.label)
		d.text(op, o.text)
	}
	hidden := d.el(sel, "OPTION", "hidden", "")
	d.text(hidden, "Hidden choice")
	grp := d.el(sel, "OPTGROUP", "label", "More")
	d.text(d.el(grp, "OPTION"), strings.Repeat("x", 100))
	one := d.el(body, "SELECT", "aria-label", "One")
	d.text(d.el(one, "OPTION"), "Only")
	many := d.el(body, "SELECT", "aria-label", "Many")
	for i := 0; i < maxOptions+1; i++ {
		d.text(d.el(many, "OPTION"), "o")
	}
	out, targets, err := Build(synth(t, d), Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, out, targets, Options{})
	e := find(t, out, "select", "Size")
	want := []string{"Small size", "Medium", "Large", strings.Repeat("x", maxOptionText-1) + "…"}
	if !e.Multiple || strings.Join(e.Options, "|") != strings.Join(want, "|") {
		t.Errorf("select Size = %+v, want options %q and multiple", e, want)
	}
	if e := find(t, out, "select", "One"); e.Multiple || len(e.Options) != 1 || e.Options[0] != "Only" {
		t.Errorf("select One = %+v", e)
	}
	if e := find(t, out, "select", "Many"); len(e.Options) != maxOptions || !out.Truncated {
		t.Errorf("select Many lists %d options (truncated %v), want %d and truncated", len(e.Options), out.Truncated, maxOptions)
	}
}
