package snapshot

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/headless-dev/headless/internal/clip"
)

type builder struct {
	o         Options
	frames    map[frameKey]*snap
	visited   map[*document]bool
	items     []item
	formItem  map[formNode]int // listed forms: node → index in items
	walked    int              // nodes visited gathering names, against maxWalkTotal
	truncated bool
	stop      bool
}

type item struct {
	el   Element
	d    *document
	node int
	form int // index in items of the control's form, -1 for none
}

type formNode struct {
	d    *document
	node int
}

// textBytes bounds the raw text gathered for one string before it is clipped to MaxText
// characters (UTF-8 is at most 4 bytes a character; the slack absorbs collapsed whitespace).
func (b *builder) textBytes() int { return 8*b.o.MaxText + 64 }

// walk lists the visible elements of d in document order, descending into frames.
func (b *builder) walk(d *document, frame string, sandboxed bool, depth int) {
	if b.visited[d] {
		return
	}
	b.visited[d] = true
	a := b.analyze(d)
	for i := 0; i < d.n && !b.stop; i++ {
		k := a.kind[i]
		if k == kindNone && a.wantForm[i] {
			k = kindForm // a hidden form whose visible controls point at it with form=
		}
		if k != kindNone {
			b.add(d, i, k, frame)
		}
		if tb := a.textOwner[i]; tb != nil && tb.own && !b.stop {
			if tb.cut {
				b.truncated = true
			}
			if t := b.clip(string(tb.b), b.o.MaxText); t != "" {
				el := Element{Kind: kindText.String(), Text: t, Frame: frame, Anc: ancestors(d, i), Node: int64(d.backend[i])}
				b.push(item{el: el, d: d, node: i, form: -1})
			}
		}
		if k == kindIframe && !b.stop {
			child := b.childDocument(d, i)
			if child == nil {
				continue
			}
			if depth+1 > maxFrameDepth {
				b.truncated = true
				continue
			}
			sb := sandboxed || sandboxedFrame(d, i)
			b.walk(child, frameOrigin(child, sb), sb, depth+1)
		}
	}
}

func (b *builder) push(it item) {
	if len(b.items) >= b.o.MaxElements {
		b.truncated = true
		b.stop = true
		return
	}
	b.items = append(b.items, it)
}

// ancestors are the backend node ids of node i's ancestors, nearest first, at most
// maxAncestors (Element.Anc).
func ancestors(d *document, i int) []int64 {
	var out []int64
	for p, n := d.parent[i], 0; p >= 0 && n < maxAncestors; p, n = d.parent[p], n+1 {
		out = append(out, int64(d.backend[p]))
	}
	return out
}

// childDocument is the document shown by the frame element i: in the same snapshot for an
// in-process frame, else one of the out-of-process frames Build was given.
func (b *builder) childDocument(d *document, i int) *document {
	if k, ok := d.contentDoc[i]; ok {
		return d.s.docs[k]
	}
	if s := b.frames[frameKey{d.frameID, d.backend[i]}]; s != nil {
		return s.docs[0]
	}
	return nil
}

// sandboxedFrame reports whether frame element i has a sandbox attribute without
// allow-same-origin, which gives its document an opaque origin whatever its URL.
func sandboxedFrame(d *document, i int) bool {
	v, ok := d.attr(i, "sandbox")
	if !ok {
		return false
	}
	for _, tok := range strings.Fields(v) {
		if asciiLower(tok) == "allow-same-origin" {
			return false
		}
	}
	return true
}

func (b *builder) add(d *document, i int, k kind, frame string) {
	a := d.a
	t := d.tag(i)
	el := Element{Kind: k.String(), Frame: frame}
	switch k {
	case kindHeading:
		el.Text = b.name(d, i, true)
		el.Level = 2
		if t >= tagH1 && t <= tagH6 {
			el.Level = int(t-tagH1) + 1
		}
		if lv, err := strconv.Atoi(strings.TrimSpace(d.attrVal(i, "aria-level"))); err == nil && lv >= 1 && lv <= 6 && role(d.attrVal(i, "role")) == "heading" {
			el.Level = lv
		}
	case kindLink:
		el.Text = b.name(d, i, true)
		if h, ok := d.attr(i, "href"); ok {
			u := resolve(d.baseURL, h)
			el.Href = b.urlText(u, h)
		}
	case kindButton:
		b.button(&el, d, i, t)
	case kindInput, kindTextarea, kindSelect:
		b.control(&el, d, i, t)
	case kindForm:
		el.Text = b.ariaName(d, i)
		el.Name = b.clip(d.attrVal(i, "name"), b.o.MaxText)
		el.ID = b.clip(d.attrVal(i, "id"), b.o.MaxText)
		b.action(&el, d, d.attrVal(i, "action"), d.hasAttr(i, "action"))
		el.Method = method(d.attrVal(i, "method"))
	case kindIframe:
		el.Text = b.name(d, i, false) // aria, else title
		if el.Text == "" {
			el.Text = b.clip(d.attrVal(i, "name"), b.o.MaxText)
		}
		switch child := b.childDocument(d, i); {
		case child != nil:
			el.Href = b.urlText(child.docURL, child.url)
		case d.hasAttr(i, "srcdoc"):
			el.Href = "about:srcdoc"
		case d.hasAttr(i, "src"):
			src := d.attrVal(i, "src")
			el.Href = b.urlText(resolve(d.baseURL, src), src)
		}
	}
	if k == kindButton || k.control() {
		el.Inert = (d.hasAttr(i, "disabled") || a.fsDisabled[i]) && (t == tagButton || t == tagInput || t == tagSelect || t == tagTextarea)
		el.Disabled = el.Inert || asciiLower(strings.TrimSpace(d.attrVal(i, "aria-disabled"))) == "true"
	}
	switch k {
	case kindForm, kindButton, kindInput, kindTextarea, kindSelect:
		el.Class = b.clip(d.attrVal(i, "class"), b.o.MaxText)
	}
	el.Anc, el.Node = ancestors(d, i), int64(d.backend[i])
	it := item{el: el, d: d, node: i, form: -1}
	if f := a.formOf[i]; f >= 0 {
		if idx, ok := b.formItem[formNode{d, int(f)}]; ok {
			it.form = idx
		} else {
			it.form = -2 - int(f) // resolved in finish: the form comes later (form= attribute)
		}
	}
	if k == kindForm {
		if b.formItem == nil {
			b.formItem = map[formNode]int{}
		}
		b.formItem[formNode{d, i}] = len(b.items)
	}
	b.push(it)
}

func (b *builder) button(el *Element, d *document, i int, t tag) {
	switch t {
	case tagInput:
		typ := inputType(d.attrVal(i, "type"))
		el.Type = typ
		el.InputMode = b.clip(asciiLower(strings.TrimSpace(d.attrVal(i, "inputmode"))), 16)
		if n, err := strconv.Atoi(strings.TrimSpace(d.attrVal(i, "maxlength"))); err == nil && n > 0 && n < 1<<20 {
			el.MaxLength = n
		}
		el.Name = b.clip(d.attrVal(i, "name"), b.o.MaxText)
		el.ID = b.clip(d.attrVal(i, "id"), b.o.MaxText)
		el.Text = b.ariaName(d, i)
		if el.Text == "" && typ != "image" && !b.tainted(d, i) {
			// The value attribute is the label of submit, reset and button inputs, never of a
			// field. A field turned into a button carries its value there (HTML copies a
			// dirty value into the attribute on that change): a tainted node's is never read.
			el.Text = b.clip(d.attrVal(i, "value"), b.o.MaxText)
		}
		if el.Text == "" && typ == "image" {
			el.Text = b.clip(d.attrVal(i, "alt"), b.o.MaxText)
		}
		if el.Text == "" {
			switch typ {
			case "submit", "image":
				el.Text = b.clip("Submit", b.o.MaxText)
			case "reset":
				el.Text = b.clip("Reset", b.o.MaxText)
			}
		}
		if typ == "submit" || typ == "image" {
			b.formAction(el, d, i)
		}
	case tagButton:
		typ := asciiLower(d.attrVal(i, "type"))
		if typ != "reset" && typ != "button" {
			typ = "submit"
		}
		el.Type = typ
		el.Name = b.clip(d.attrVal(i, "name"), b.o.MaxText)
		el.ID = b.clip(d.attrVal(i, "id"), b.o.MaxText)
		el.Text = b.name(d, i, true)
		if typ == "submit" {
			b.formAction(el, d, i)
		}
	default:
		el.Text = b.name(d, i, true)
	}
}

// formAction records a submit button's own formaction and formmethod, which override its
// form's when it submits.
func (b *builder) formAction(el *Element, d *document, i int) {
	if v, ok := d.attr(i, "formaction"); ok {
		b.action(el, d, v, true)
	}
	if v, ok := d.attr(i, "formmethod"); ok {
		el.Method = method(v)
	}
}

func (b *builder) action(el *Element, d *document, v string, set bool) {
	u := d.docURL // HTML: an absent or empty action submits to the document's URL
	if set && v != "" {
		u = resolve(d.baseURL, v)
	}
	el.Action = b.urlText(u, v)
	el.ActionOrigin = boundedOrigin(u)
}

func method(v string) string {
	switch v = asciiLower(strings.TrimSpace(v)); v {
	case "post", "dialog":
		return v
	}
	return "get"
}

func (b *builder) control(el *Element, d *document, i int, t tag) {
	el.Name = b.clip(d.attrVal(i, "name"), b.o.MaxText)
	el.ID = b.clip(d.attrVal(i, "id"), b.o.MaxText)
	el.Placeholder = b.clip(d.attrVal(i, "placeholder"), b.o.MaxText)
	el.Autocomplete = b.clip(asciiLower(d.attrVal(i, "autocomplete")), b.o.MaxText)
	el.Text = b.label(d, i)
	if el.Text == "" {
		el.Text = el.Placeholder
	}
	switch t {
	case tagInput:
		typ := inputType(d.attrVal(i, "type"))
		el.Type = typ
		el.InputMode = b.clip(asciiLower(strings.TrimSpace(d.attrVal(i, "inputmode"))), 16)
		if n, err := strconv.Atoi(strings.TrimSpace(d.attrVal(i, "maxlength"))); err == nil && n > 0 && n < 1<<20 {
			el.MaxLength = n
		}
		if typ == "password" && d.hasAttr(i, "readonly") {
			tab, err := strconv.Atoi(strings.TrimSpace(d.attrVal(i, "tabindex")))
			el.Decoy = asciiLower(strings.TrimSpace(d.attrVal(i, "aria-hidden"))) == "true" || err == nil && tab < 0
		}
		switch {
		case typ == "checkbox" || typ == "radio":
			el.Checked = d.checked[i]
		case typ == "file" || secretField(d, i) || b.tainted(d, i):
		default:
			if v, ok := d.inputValue[i]; ok {
				el.Value = b.clip(d.s.str(v), b.o.MaxText)
			}
		}
	case tagTextarea:
		if !secretField(d, i) && !b.tainted(d, i) {
			if v, ok := d.textValue[i]; ok {
				el.Value = b.clip(d.s.str(v), b.o.MaxText)
			}
		}
	case tagSelect:
		el.Value = b.selected(d, i)
		el.Options = b.options(d, i)
		el.Multiple = d.hasAttr(i, "multiple")
	}
}

// tainted reports whether node i is one the host typed a secret into.
func (b *builder) tainted(d *document, i int) bool {
	return len(b.o.Tainted) > 0 && b.o.Tainted[int64(d.backend[i])]
}

// secretField reports whether the value of field i must never be listed.
func secretField(d *document, i int) bool {
	if strings.Contains(asciiLower(d.attrVal(i, "type")), "pass") {
		return true
	}
	for _, tok := range strings.Fields(asciiLower(d.attrVal(i, "autocomplete"))) {
		switch tok {
		case "current-password", "new-password", "one-time-code", "cc-number", "cc-csc":
			return true
		}
	}
	for _, attr := range []string{"name", "id"} {
		v := asciiLower(d.attrVal(i, attr))
		if strings.Contains(v, "passw") || strings.Contains(v, "pwd") || strings.Contains(v, "passcode") {
			return true
		}
	}
	return false
}

// submitters lists every submit button whose form owner is form node f (rendered or not), with
// where it sends the form: its own formaction and formmethod when set, else the form's.
func (b *builder) submitters(d *document, f int, form Element, listed map[formNode]string) []Submitter {
	var out []Submitter
	for k, j := range d.a.submitters[f] {
		if k == maxSubmitters {
			out = append(out, Submitter{ActionOrigin: "null", Method: "get"})
			break
		}
		s := Submitter{Ref: listed[formNode{d, j}], ActionOrigin: form.ActionOrigin, Method: form.Method,
			Rendered: d.visible(j) && !d.a.inert[j]}
		if v, ok := d.attr(j, "formaction"); ok {
			var el Element
			b.action(&el, d, v, true)
			s.ActionOrigin = el.ActionOrigin
		}
		if v, ok := d.attr(j, "formmethod"); ok {
			s.Method = method(v)
		}
		out = append(out, s)
	}
	return out
}

// selected is the text of a select's selected options.
func (b *builder) selected(d *document, i int) string {
	var parts []string
	for j := i + 1; j < d.end[i] && len(parts) < 8; j++ {
		if b.walked++; b.walked > maxWalkTotal {
			b.truncated = true
			break
		}
		if d.tag(j) != tagOption || !d.selected[j] {
			continue
		}
		parts = append(parts, b.optionLabel(d, j))
	}
	return b.clip(strings.Join(parts, ", "), b.o.MaxText)
}

// options lists the labels of a select's options (in optgroups too), without the hidden ones
// (a person does not see them in the list either).
func (b *builder) options(d *document, i int) []string {
	var out []string
	for j := i + 1; j < d.end[i]; j++ {
		if b.walked++; b.walked > maxWalkTotal {
			b.truncated = true
			break
		}
		if d.tag(j) != tagOption || d.hasAttr(j, "hidden") {
			continue
		}
		if len(out) == maxOptions {
			b.truncated = true
			break
		}
		out = append(out, b.clip(b.optionLabel(d, j), min(b.o.MaxText, maxOptionText)))
	}
	return out
}

// optionLabel is what an option shows: its label attribute, else its text.
func (b *builder) optionLabel(d *document, j int) string {
	if text := d.attrVal(j, "label"); text != "" {
		return text
	}
	var sb strings.Builder
	for k := j + 1; k < d.end[j] && sb.Len() < b.textBytes(); k++ {
		if d.nodeType[k] == nodeText {
			sb.WriteString(d.s.str(d.nodeValue[k]))
		}
	}
	return sb.String()
}

// label is a form control's name: aria-labelledby, aria-label, a label for its id, a label
// around it, its title.
func (b *builder) label(d *document, i int) string {
	if s := b.ariaName(d, i); s != "" {
		return s
	}
	id := d.attrVal(i, "id")
	if id != "" {
		if l, ok := d.a.labelFor[id]; ok {
			if s := b.clip(b.subtreeText(d, l), b.o.MaxText); s != "" {
				return s
			}
		}
	}
	if l := d.a.labelAnc[i]; l >= 0 {
		if f, ok := d.attr(int(l), "for"); !ok || f == id {
			if s := b.clip(b.subtreeText(d, int(l)), b.o.MaxText); s != "" {
				return s
			}
		}
	}
	return b.clip(d.attrVal(i, "title"), b.o.MaxText)
}

// ariaName is aria-labelledby's text, else aria-label.
func (b *builder) ariaName(d *document, i int) string {
	if ids, ok := d.attr(i, "aria-labelledby"); ok {
		var parts []string
		for k, id := range strings.Fields(ids) {
			if k == 16 {
				break
			}
			if j, ok := d.a.ids[id]; ok {
				parts = append(parts, b.subtreeText(d, j))
			}
		}
		if s := b.clip(strings.Join(parts, " "), b.o.MaxText); s != "" {
			return s
		}
	}
	return b.clip(d.attrVal(i, "aria-label"), b.o.MaxText)
}

// name is an element's accessible name from aria, else its visible content, else its title.
func (b *builder) name(d *document, i int, content bool) string {
	if s := b.ariaName(d, i); s != "" {
		return s
	}
	if content {
		if s := b.clip(b.subtreeText(d, i), b.o.MaxText); s != "" {
			return s
		}
	}
	return b.clip(d.attrVal(i, "title"), b.o.MaxText)
}

// subtreeText gathers the visible text inside node i (and image alt texts), bounded.
func (b *builder) subtreeText(d *document, i int) string {
	var buf []byte
	brk := false
	limit := b.textBytes()
	add := func(s string) {
		if brk && len(buf) > 0 {
			buf = append(buf, ' ')
		}
		brk = false
		if len(s) > limit-len(buf) {
			s = s[:max(0, limit-len(buf))]
			b.truncated = true
		}
		buf = append(buf, s...)
	}
	steps := 0
	for j := i + 1; j < d.end[i] && len(buf) < limit; {
		if steps++; steps > maxWalk || b.walked >= maxWalkTotal {
			b.truncated = true
			break
		}
		b.walked++
		switch d.nodeType[j] {
		case nodeElement:
			t := d.tag(j)
			if d.pseudo[j] || t.inert() {
				j = d.end[j]
				continue
			}
			if d.blockLevel(j) || t == tagBR {
				brk = true
			}
			if t == tagImg && d.visible(j) {
				if alt := d.attrVal(j, "alt"); strings.TrimSpace(alt) != "" {
					brk = true
					add(alt)
					brk = true
				}
			}
		case nodeText:
			if d.visible(j) {
				add(d.s.str(d.nodeValue[j]))
			}
		}
		j++
	}
	return string(buf)
}

// clip collapses white space, drops control and invisible formatting characters, replaces
// invalid UTF-8, and cuts s to at most max characters (the last one "…" when cut).
func (b *builder) clip(s string, max int) string {
	if max <= 0 {
		return ""
	}
	var out []byte
	n, lastLen := 0, 0
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = n > 0
			continue
		case unicode.IsControl(r):
			space = n > 0
			continue
		case unicode.Is(unicode.Cf, r) && r != '\u200c' && r != '\u200d':
			continue // bidi overrides, zero-width spaces, soft hyphens, tags
		}
		if space {
			if n == max {
				return b.ellipsis(out, lastLen)
			}
			out = append(out, ' ')
			n++
			lastLen = 1
			space = false
		}
		if n == max {
			return b.ellipsis(out, lastLen)
		}
		lastLen = utf8.RuneLen(r)
		out = utf8.AppendRune(out, r)
		n++
	}
	return string(out)
}

func (b *builder) ellipsis(out []byte, lastLen int) string {
	b.truncated = true
	out = out[:len(out)-lastLen]
	return strings.TrimRight(string(out), " ") + "…"
}

// clipBytes cuts s to at most max bytes (clip.Text), noting the cut.
func (b *builder) clipBytes(s string, max int) string {
	c := clip.Text(s, max)
	if c != s && c != strings.ToValidUTF8(s, "\uFFFD") {
		b.truncated = true
	}
	return c
}

// finish numbers the items, links controls to their forms and cuts the list to MaxBytes.
func (b *builder) finish(out *Outline) ([]Element, map[string]Target) {
	for k := range b.items {
		it := &b.items[k]
		it.el.Ref = "e" + strconv.Itoa(k+1)
		if it.form <= -2 {
			node := -2 - it.form
			it.form = -1
			if idx, ok := b.formItem[formNode{it.d, node}]; ok {
				it.form = idx
			}
		}
	}
	for k := range b.items {
		if f := b.items[k].form; f >= 0 {
			b.items[k].el.Form = b.items[f].el.Ref
		}
	}

	head := *out
	head.Elements = []Element{}
	hb, _ := json.Marshal(head)
	size := len(hb)
	kept := len(b.items)
	for k := range b.items {
		eb, _ := json.Marshal(b.items[k].el)
		add := len(eb)
		if k > 0 {
			add++ // comma
		}
		if size+add > b.o.MaxBytes {
			kept = k
			b.truncated = true
			break
		}
		size += add
	}

	els := make([]Element, kept)
	targets := make(map[string]Target, kept)
	listed := make(map[formNode]string, kept) // kept items by node, for submitter refs
	for k := 0; k < kept; k++ {
		listed[formNode{b.items[k].d, b.items[k].node}] = b.items[k].el.Ref
	}
	for k := 0; k < kept; k++ {
		it := &b.items[k]
		if it.form >= kept {
			it.el.Form = "" // the form was cut
		}
		if it.el.Kind == kindForm.String() {
			it.el.Submitters = b.submitters(it.d, it.node, it.el, listed)
		}
		els[k] = it.el
		t := it.d.tag(it.node)
		targets[it.el.Ref] = Target{
			BackendNodeID: int64(it.d.backend[it.node]),
			FrameID:       it.d.frameID,
			DocumentURL:   it.d.url,
			Kind:          it.el.Kind,
			Type:          it.el.Type,
			Secret:        (t == tagInput || t == tagTextarea) && secretField(it.d, it.node) || b.tainted(it.d, it.node),
		}
	}
	return els, targets
}
