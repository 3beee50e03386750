package snapshot

import (
	"slices"
	"testing"
)

// The fields a person's typing is contained in after a hand-over: passwords and one-time
// codes by type, autocomplete or name, in every same-process document, only when they hold a value.
func TestSecretFields(t *testing.T) {
	top := newTDoc("https://a.example/login")
	form := top.el(body, "FORM")
	top.input(form, "alice@example.com", "type", "email", "autocomplete", "username")
	top.input(form, "hunter2-typed", "type", "Password")
	top.input(form, "", "type", "password", "name", "empty")
	top.input(form, "483920", "type", "text", "autocomplete", "section-x ONE-TIME-CODE")
	top.input(form, "shown-now", "type", "text", "autocomplete", "current-password")
	top.input(form, "not a secret", "type", "text", "name", "nickname")
	shown := top.input(form, "shown in clear", "type", "text", "name", "k")
	frame := newTDoc("https://a.example/frame")
	frame.input(body, "in-a-frame", "type", "password")
	got, err := SecretFields(synth(t, top, frame), map[int64]bool{int64(shown + 1): true})
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, f := range got {
		values = append(values, f.Value)
		if f.BackendNodeID == 0 || f.FrameID == "" {
			t.Errorf("field %+v has no node or frame", f)
		}
	}
	if want := []string{"hunter2-typed", "483920", "shown-now", "shown in clear", "in-a-frame"}; !slices.Equal(values, want) {
		t.Fatalf("SecretFields = %q, want %q", values, want)
	}
}
