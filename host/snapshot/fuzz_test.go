package snapshot

import (
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
	})
}
