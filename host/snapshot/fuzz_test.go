package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func FuzzBuild(f *testing.F) {
	// Small seeds: the fuzzer minimizes every new interesting input, which is slow on
	// the larger captures (TestPasswordValuesNeverInOutline and the table tests cover those).
	for _, name := range []string{"step1", "step2"} {
		raw, _ := loadFixture(f, name)
		f.Add(raw, uint16(0))
		f.Add(raw, uint16(3))
	}
	f.Add(synth(f, newTDoc("https://a.example/")), uint16(1))
	login := newTDoc("https://a.example/")
	form := login.el(body, "FORM", "action", "/s", "id", "f")
	login.input(form, "u", "name", "user", "aria-label", "User")
	login.input(form, "secret", "type", "password", "id", "pw")
	login.text(login.el(form, "LABEL", "for", "pw"), "Password")
	login.nodes[login.el(body, "IFRAME", "sandbox", "")].contentDoc = 1
	child := newTDoc("https://b.example/")
	child.text(child.el(body, "H2"), "Frame")
	f.Add(synth(f, login, child), uint16(4))
	f.Add([]byte(`{"documents":[{"nodes":{"parentIndex":[-1],"nodeType":[9],"nodeName":[0],"backendNodeId":[1]}}],"strings":["#document"]}`), uint16(0))
	f.Add([]byte(`{"documents":[{"documentURL":0,"nodes":{"parentIndex":[-1,0],"nodeType":[9,1],"nodeName":[0,1],"backendNodeId":[1,2],`+
		`"contentDocumentIndex":{"index":[1],"value":[0]}},"layout":{"nodeIndex":[1],"styles":[[2,3]]}}],"strings":["#document","IFRAME","block","visible"]}`), uint16(2))
	f.Fuzz(func(t *testing.T, raw []byte, limits uint16) {
		o := Options{MaxElements: int(limits % 50), MaxText: int(limits/50%40) + 1, MaxBytes: MinMaxBytes + int(limits)}
		// The same bytes also serve as an out-of-process frame of themselves.
		var frames []Frame
		if limits%3 == 0 {
			frames = []Frame{{ParentFrameID: "", OwnerNodeID: 2, Raw: raw}}
		}
		out, targets, err := Build(raw, o, frames...)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			return
		}
		checkInvariants(t, out, targets, o)
		if _, err := json.Marshal(LoginForms(out)); err != nil {
			t.Fatal(err)
		}
		// Describe reads the same bytes (and the layout boxes Build skips): never a panic,
		// and a malformed box is ErrMalformed.
		var ids []int64
		for _, tg := range targets {
			ids = append(ids, tg.BackendNodeID)
		}
		ids = append(ids, int64(limits))
		if _, err := Describe(raw, ids, Options{MaxText: o.MaxText}); err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("Describe: error does not wrap ErrMalformed: %v", err)
		}
	})
}

// FuzzOutline builds page trees from the fuzzer's bytes (tags, attributes, styles, frames)
// and checks that a password value planted in every password field never reaches the outline.
func FuzzOutline(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte("login form with a password field and a label for it"))
	f.Add([]byte{9, 0, 3, 1, 9, 2, 0, 5, 9, 7, 1, 1, 4, 4, 4, 4, 2, 2, 8, 8})
	const canary = "PW-CANARY-7f3a"
	tags := []string{"DIV", "FORM", "INPUT", "LABEL", "A", "BUTTON", "H2", "IFRAME", "TEXTAREA", "SELECT", "OPTION", "SPAN", "FIELDSET", "SCRIPT", "P", "#text"}
	attrs := [][]string{
		{"type", "password"}, {"type", "text"}, {"type", "hidden"}, {"type", "submit"}, {"type", "email"},
		{"name", "user"}, {"id", "a"}, {"for", "a"}, {"form", "a"}, {"href", "/x"}, {"role", "button"},
		{"aria-labelledby", "a"}, {"aria-label", "L"}, {"autocomplete", "current-password"},
		{"action", "https://b.example/"}, {"sandbox", ""}, {"disabled", ""}, {"placeholder", "P"},
		{"formaction", `\\c.example`}, {"value", canary},
	}
	displays := []string{"block", "inline", "none", "inline-block", "", "contents"}
	// A second canary is typed into tainted fields of any type (the host's "typed a secret
	// here" nodes): it must never show either, whatever the field's type or name.
	const typedCanary = "TYPED-CANARY-9c1e"
	f.Fuzz(func(t *testing.T, data []byte) {
		docs := []*tdoc{newTDoc("https://a.example/"), newTDoc("https://b.example/")}
		tainted := map[int64]bool{}
		for k := 0; k+3 < len(data) && k < 4*400; k += 4 {
			d := docs[int(data[k]>>7)]
			// Keep document order: the parent is the last node or one of its ancestors.
			var open []int
			for p := len(d.nodes) - 1; p > body; p = d.nodes[p].parent {
				if d.nodes[p].name != "#text" {
					open = append(open, p)
				}
			}
			parent := body
			if len(open) > 0 && data[k+1]%4 != 0 {
				parent = open[int(data[k+1])%len(open)]
			}
			tg := tags[int(data[k])%len(tags)]
			if tg == "#text" {
				d.text(parent, "word"+string(rune('a'+data[k+2]%26))+" ")
				continue
			}
			a := attrs[int(data[k+2])%len(attrs)]
			i := d.el(parent, tg, a[0], a[1])
			if tg == "INPUT" || tg == "TEXTAREA" {
				d.nodes[i].attrs = append(d.nodes[i].attrs, "value", canary)
				v := canary
				d.nodes[i].inputValue = &v
				if a[1] != "password" && a[1] != "current-password" {
					// Only secret fields hold the canary: a plain field may show its value.
					d.nodes[i].attrs = d.nodes[i].attrs[:len(d.nodes[i].attrs)-2]
					v = "plain"
				}
			}
			if (tg == "INPUT" || tg == "TEXTAREA") && data[k+3]&0x20 != 0 {
				v := typedCanary
				d.nodes[i].inputValue = &v
				d.nodes[i].attrs = append(d.nodes[i].attrs, "value", typedCanary)
				tainted[int64(1000*int(data[k]>>7)+i+1)] = true // synth's backend node ids
			}
			d.nodes[i].display = displays[int(data[k+3])%len(displays)]
			if data[k+3]&0x40 != 0 {
				d.nodes[i].visibility = "hidden"
			}
			d.nodes[i].clickable = data[k+3]&0x80 != 0
			if tg == "IFRAME" && d == docs[0] {
				d.nodes[i].contentDoc = 1
			}
		}
		raw := synth(t, docs...)
		o := Options{MaxText: 12, Tainted: tainted}
		out, targets, err := Build(raw, o)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, out, targets, o)
		b, _ := json.Marshal(out)
		lf, _ := json.Marshal(LoginForms(out))
		if bytes.Contains(append(b, lf...), []byte(canary[:8])) {
			t.Fatalf("password value in outline:\n%s", dump(out))
		}
		if bytes.Contains(append(b, lf...), []byte(typedCanary[:8])) {
			t.Fatalf("a tainted field's value in the outline:\n%s", dump(out))
		}
		if held, err := HoldsValue(raw, tainted); err != nil || held != (len(tainted) > 0) {
			t.Fatalf("HoldsValue = %v, %v with %d tainted nodes holding the canary", held, err, len(tainted))
		}
	})
}
