package snapshot

import (
	"encoding/json"
	"fmt"
	"math"
)

// Node is what the host may learn of one DOM node for a journey's checks (package
// internal/journey): by the outline's own rules, from the same captureSnapshot data, so that a
// check is never an oracle for what the outline hides.
type Node struct {
	Found bool // the node is in the snapshot
	Top   bool // in the top document (not a frame)
	// Visible: rendered (a layout object, display not none, visibility neither hidden nor
	// collapse) and not inside an inert element (a script, a template, a form control's
	// internals).
	Visible bool
	Kind    string // the outline's kind (heading, link, button, input, …), "" for other elements
	Type    string // inputs and buttons: normalised type
	// Name is the element's label or accessible name as the outline shows it (never a field's
	// value, never a tainted node's value attribute).
	Name string
	// Text is the visible text inside the element, bounded (never a field's value: form
	// controls' internals are never read, so it is "" for them).
	Text string
	// Value is a field's value (input, textarea: the typed value; select: its selected
	// options' labels), never for a secret field or a tainted node: Secret is set instead.
	Value string
	// Secret: a password or secret-looking field (by the outline's rules), or a node the
	// host typed a secret into (Options.Tainted), whatever it has become.
	Secret    bool
	Checked   bool
	Disabled  bool
	Rect      *Rect // the layout box, CSS pixels of its document; nil when it has none
	Truncated bool  // a bound cut Text or Name
}

// Rect is a layout box in CSS pixels, in the coordinates of its document.
type Rect struct {
	X, Y, Width, Height float64
}

// Describe returns, for each of ids (backend node ids), what [Node] says of it in raw, a
// DOMSnapshot.captureSnapshot result captured with [CaptureParams]; ids not in the snapshot
// are absent from the map. o bounds the strings and names the tainted nodes, as for [Build].
func Describe(raw []byte, ids []int64, o Options) (map[int64]Node, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	s, err := decode(raw)
	if err != nil {
		return nil, err
	}
	want := make(map[int64]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	out := make(map[int64]Node, len(ids))
	b := &builder{o: o, frames: map[frameKey]*snap{}, visited: map[*document]bool{}}
	for k, d := range s.docs {
		bounds := []([]float64)(nil)
		for i := 0; i < d.n && len(out) < len(want); i++ {
			id := int64(d.backend[i])
			if !want[id] {
				continue
			}
			if _, dup := out[id]; dup {
				continue
			}
			if bounds == nil {
				if bounds, err = d.bounds(); err != nil {
					return nil, fmt.Errorf("%w: document %d: %w", ErrMalformed, k, err)
				}
			}
			out[id] = b.describe(d, i, k == 0, bounds)
		}
	}
	return out, nil
}

func (b *builder) describe(d *document, i int, top bool, bounds [][]float64) Node {
	a := b.analyze(d)
	n := Node{Found: true, Top: top, Visible: d.nodeType[i] == nodeElement && d.visible(i) && !a.inert[i] && !d.pseudo[i]}
	if d.nodeType[i] != nodeElement || d.pseudo[i] {
		return n
	}
	t := d.tag(i)
	k := a.kind[i]
	if k == kindNone {
		// Not listed as such (hidden, or a plain container): still described as the kind it
		// would have, so that a check on a hidden field still knows it is a field.
		k = d.classify(i, t)
	}
	// The outline's own element, built on a scratch builder (its bounds are b's).
	sb := &builder{o: b.o, frames: b.frames, visited: b.visited}
	sb.add(d, i, k, "")
	if len(sb.items) == 1 {
		el := sb.items[0].el
		n.Kind, n.Type, n.Name, n.Checked, n.Disabled = el.Kind, el.Type, el.Text, el.Checked, el.Disabled
		if k.control() {
			n.Value = el.Value
		}
	}
	if t == tagInput || t == tagTextarea {
		n.Secret = secretField(d, i) || b.tainted(d, i)
		if n.Secret {
			n.Value = ""
		}
	} else if b.tainted(d, i) {
		n.Secret = true // a tainted node that is no field any more
		n.Value = ""
	}
	if t == tagInput && (n.Type == "checkbox" || n.Type == "radio") {
		n.Checked = d.checked[i]
	}
	if !t.inert() {
		n.Text = sb.clip(sb.subtreeText(d, i), b.o.MaxText)
	}
	n.Truncated = sb.truncated
	if l := d.layout[i]; l >= 0 && int(l) < len(bounds) {
		if r := bounds[l]; len(r) == 4 && finite(r) && r[2] >= 0 && r[3] >= 0 {
			n.Rect = &Rect{X: r[0], Y: r[1], Width: r[2], Height: r[3]}
		}
	}
	return n
}

func finite(r []float64) bool {
	for _, v := range r {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e7 {
			return false
		}
	}
	return true
}

// bounds decodes the layout boxes of d (one per layout object: x, y, width, height); an
// absent list reads as no boxes.
func (d *document) bounds() ([][]float64, error) {
	if len(d.rawBounds) == 0 || string(d.rawBounds) == "null" {
		return [][]float64{}, nil
	}
	var out [][]float64
	if err := json.Unmarshal(d.rawBounds, &out); err != nil {
		return nil, fmt.Errorf("layout bounds: %w", err)
	}
	if len(out) != len(d.styles) {
		return nil, fmt.Errorf("layout bounds: %d boxes for %d layout objects", len(out), len(d.styles))
	}
	return out, nil
}
