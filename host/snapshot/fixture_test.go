package snapshot

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A fixture is a real capture from Debian Chromium: the page target's captureSnapshot result
// and, for out-of-process iframes, each frame target's result with its parent frame id and
// the owner element's backendNodeId (DOM.getFrameOwner).
type fixture struct {
	Main   json.RawMessage `json:"main"`
	Frames []struct {
		Parent   string          `json:"parent"`
		Owner    int64           `json:"owner"`
		Snapshot json.RawMessage `json:"snapshot"`
	} `json:"frames"`
}

func loadFixture(t testing.TB, name string) ([]byte, []Frame) {
	t.Helper()
	path := filepath.Join("testdata", name+".json")
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		f, err2 := os.Open(path + ".gz")
		if err2 != nil {
			t.Fatal(err2)
		}
		defer f.Close()
		zr, err2 := gzip.NewReader(f)
		if err2 != nil {
			t.Fatal(err2)
		}
		data, err = io.ReadAll(zr)
	}
	if err != nil {
		t.Fatal(err)
	}
	var fx fixture
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fx); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var frames []Frame
	for _, f := range fx.Frames {
		frames = append(frames, Frame{ParentFrameID: f.Parent, OwnerNodeID: f.Owner, Raw: f.Snapshot})
	}
	return fx.Main, frames
}
