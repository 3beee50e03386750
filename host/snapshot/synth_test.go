package snapshot

import (
	"encoding/json"
	"testing"
)

// tdoc builds small synthetic snapshots for the cases a real page cannot produce (cycles,
// malformed indexes) or where a hand-made tree is clearer than a capture.
type tdoc struct {
	url, base, title, frame string
	nodes                   []tnode
}

type tnode struct {
	parent      int
	name, value string
	attrs       []string
	display     string // "" for no layout object
	visibility  string
	inputValue  *string
	clickable   bool
	contentDoc  int
}

func newTDoc(url string) *tdoc {
	d := &tdoc{url: url, base: url, frame: "F-" + url}
	d.nodes = append(d.nodes, tnode{parent: -1, name: "#document", contentDoc: -1})
	html := d.el(0, "HTML")
	d.el(html, "BODY")
	return d
}

const body = 2 // the BODY of a newTDoc

func (d *tdoc) el(parent int, name string, attrs ...string) int {
	d.nodes = append(d.nodes, tnode{parent: parent, name: name, attrs: attrs, display: "block", visibility: "visible", contentDoc: -1})
	return len(d.nodes) - 1
}

func (d *tdoc) text(parent int, s string) int {
	d.nodes = append(d.nodes, tnode{parent: parent, name: "#text", value: s, display: "inline", visibility: "visible", contentDoc: -1})
	return len(d.nodes) - 1
}

func (d *tdoc) input(parent int, value string, attrs ...string) int {
	i := d.el(parent, "INPUT", attrs...)
	d.nodes[i].display = "inline-block"
	d.nodes[i].inputValue = &value
	return i
}

// synth encodes docs as a captureSnapshot result; docs[0] is the top document.
func synth(t testing.TB, docs ...*tdoc) []byte {
	t.Helper()
	var strs []string
	index := map[string]int{}
	str := func(s string) int {
		if s == "" {
			return -1
		}
		if k, ok := index[s]; ok {
			return k
		}
		index[s] = len(strs)
		strs = append(strs, s)
		return len(strs) - 1
	}
	type rare struct {
		Index []int `json:"index"`
		Value []int `json:"value,omitempty"`
	}
	var out struct {
		Documents []map[string]any `json:"documents"`
		Strings   []string         `json:"strings"`
	}
	for k, d := range docs {
		var (
			parent, typ, name, value []int
			backend                  []int64
			attrs                    = [][]int{}
			inputValue, contentDoc   rare
			clickable                rare
			layoutNode               = []int{}
			styles                   = [][]int{}
			bounds                   = [][]float64{}
		)
		for i, n := range d.nodes {
			parent = append(parent, n.parent)
			switch n.name {
			case "#document":
				typ = append(typ, 9)
			case "#text":
				typ = append(typ, 3)
			default:
				typ = append(typ, 1)
			}
			name = append(name, str(n.name))
			value = append(value, str(n.value))
			backend = append(backend, int64(1000*k+i+1))
			a := []int{}
			for j := 0; j+1 < len(n.attrs); j += 2 {
				a = append(a, str(n.attrs[j]), str(n.attrs[j+1]))
			}
			attrs = append(attrs, a)
			if n.inputValue != nil {
				inputValue.Index = append(inputValue.Index, i)
				inputValue.Value = append(inputValue.Value, str(*n.inputValue))
			}
			if n.contentDoc >= 0 {
				contentDoc.Index = append(contentDoc.Index, i)
				contentDoc.Value = append(contentDoc.Value, n.contentDoc)
			}
			if n.clickable {
				clickable.Index = append(clickable.Index, i)
			}
			if n.display != "" {
				layoutNode = append(layoutNode, i)
				styles = append(styles, []int{str(n.display), str(n.visibility)})
				bounds = append(bounds, []float64{float64(10 * i), float64(20 * i), 100, 20})
			}
		}
		out.Documents = append(out.Documents, map[string]any{
			"documentURL": str(d.url), "title": str(d.title), "baseURL": str(d.base), "frameId": str(d.frame),
			"nodes": map[string]any{
				"parentIndex": parent, "nodeType": typ, "nodeName": name, "nodeValue": value,
				"backendNodeId": backend, "attributes": attrs, "inputValue": inputValue,
				"contentDocumentIndex": contentDoc, "isClickable": clickable,
			},
			"layout": map[string]any{"nodeIndex": layoutNode, "styles": styles, "bounds": bounds},
		})
	}
	out.Strings = strs
	if out.Strings == nil {
		out.Strings = []string{}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
