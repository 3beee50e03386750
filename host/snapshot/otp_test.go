package snapshot

import "testing"

func TestCodeForms(t *testing.T) {
	form := Element{Ref: "f", Kind: "form", ActionOrigin: "https://a.example", Method: "post"}
	submit := Element{Ref: "b", Kind: "button", Type: "submit", Form: "f", Text: "Verify"}
	in := func(ref, typ string, f func(*Element)) Element {
		e := Element{Ref: ref, Kind: "input", Type: typ, Form: "f"}
		if f != nil {
			f(&e)
		}
		return e
	}
	heading := func(s string) Element { return Element{Ref: "h", Kind: "heading", Text: s} }
	for _, c := range []struct {
		name string
		o    Outline
		want string
	}{
		{"one-time-code", Outline{Elements: []Element{form, in("c", "text", func(e *Element) { e.Autocomplete = "one-time-code" }), submit}}, "c"},
		{"numeric, named", Outline{Elements: []Element{form, in("c", "tel", func(e *Element) { e.InputMode = "numeric"; e.Name = "otp" }), submit}}, "c"},
		{"numeric, unnamed", Outline{Elements: []Element{form, in("c", "tel", func(e *Element) { e.InputMode = "numeric"; e.Name = "amount" }), submit}}, ""},
		{"single short input on a verification page", Outline{Title: "Verify it's you", Elements: []Element{heading("Check your phone"), form, in("c", "text", func(e *Element) { e.MaxLength = 6 }), submit}}, "c"},
		{"single short input elsewhere", Outline{Title: "Search", Elements: []Element{form, in("c", "text", func(e *Element) { e.MaxLength = 6 }), submit}}, ""},
		{"two inputs on a verification page", Outline{Title: "Verification", Elements: []Element{form, in("c", "text", func(e *Element) { e.MaxLength = 6 }), in("d", "text", nil), submit}}, ""},
		{"beside a password", Outline{Elements: []Element{form, in("pw", "password", nil), in("c", "text", func(e *Element) { e.Autocomplete = "one-time-code" }), submit}}, ""},
		{"disabled", Outline{Elements: []Element{form, in("c", "text", func(e *Element) { e.Autocomplete = "one-time-code"; e.Disabled = true }), submit}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := CodeForms(c.o)
			switch {
			case c.want == "" && len(got) > 0:
				t.Fatalf("found %+v", got)
			case c.want != "" && (len(got) != 1 || got[0].Password != c.want || got[0].Submit != "b" || got[0].Form != "f" || got[0].Username != ""):
				t.Fatalf("got %+v, want field %s", got, c.want)
			}
		})
	}
}
