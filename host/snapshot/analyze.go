package snapshot

import "strings"

type tag uint8

const (
	tagUnknown tag = iota // not looked up yet
	tagNone               // not an element (or a pseudo-element)
	tagOther
	tagA
	tagArea
	tagBody
	tagBR
	tagButton
	tagFieldset
	tagForm
	tagFrame
	tagHead
	tagHTML
	tagIframe
	tagImg
	tagInput
	tagLabel
	tagNoscript
	tagOption
	tagScript
	tagSelect
	tagStyle
	tagSummary
	tagTemplate
	tagTextarea
	tagTitle
	tagH1
	tagH2
	tagH3
	tagH4
	tagH5
	tagH6
)

var tagNames = map[string]tag{
	"A": tagA, "AREA": tagArea, "BODY": tagBody, "BR": tagBR, "BUTTON": tagButton,
	"FIELDSET": tagFieldset, "FORM": tagForm, "FRAME": tagFrame, "HEAD": tagHead, "HTML": tagHTML,
	"IFRAME": tagIframe, "IMG": tagImg, "INPUT": tagInput, "LABEL": tagLabel,
	"NOSCRIPT": tagNoscript, "OPTION": tagOption, "SCRIPT": tagScript, "SELECT": tagSelect,
	"STYLE": tagStyle, "SUMMARY": tagSummary, "TEMPLATE": tagTemplate, "TEXTAREA": tagTextarea,
	"TITLE": tagTitle, "H1": tagH1, "H2": tagH2, "H3": tagH3, "H4": tagH4, "H5": tagH5, "H6": tagH6,
}

func lookupTag(name string) tag {
	if len(name) > 8 {
		return tagOther
	}
	if t, ok := tagNames[strings.ToUpper(name)]; ok {
		return t
	}
	return tagOther
}

// inert reports whether nothing inside an element of tag t is page text: scripts, styles,
// templates, the document head, and the internals of form controls and frames.
func (t tag) inert() bool {
	switch t {
	case tagScript, tagStyle, tagTemplate, tagNoscript, tagHead, tagTitle,
		tagInput, tagTextarea, tagSelect, tagIframe, tagFrame:
		return true
	}
	return false
}

type kind uint8

const (
	kindNone kind = iota
	kindHeading
	kindLink
	kindButton
	kindInput
	kindTextarea
	kindSelect
	kindForm
	kindIframe
	kindText
)

var kindNames = [...]string{"", "heading", "link", "button", "input", "textarea", "select", "form", "iframe", "text"}

func (k kind) String() string { return kindNames[k] }

// interactive kinds stop an enclosing clickable element from being listed as a button.
func (k kind) interactive() bool {
	switch k {
	case kindLink, kindButton, kindInput, kindTextarea, kindSelect, kindIframe:
		return true
	}
	return false
}

// consumes reports whether the text inside an element of kind k is its name rather than a text
// block of its own.
func (k kind) consumes() bool {
	switch k {
	case kindHeading, kindLink, kindButton, kindSelect, kindTextarea, kindIframe:
		return true
	}
	return false
}

// control kinds belong to a form.
func (k kind) control() bool {
	switch k {
	case kindInput, kindTextarea, kindSelect:
		return true
	}
	return false
}

// analysis is what one pass over a document learns about every node.
type analysis struct {
	kind       []kind
	inert      []bool  // inside an inert element
	formOf     []int32 // controls and buttons: their form node, -1 for none
	wantForm   map[int]bool
	fsDisabled []bool  // inside a disabled fieldset
	labelAnc   []int32 // nearest ancestor label, -1 for none
	ids        map[string]int
	labelFor   map[string]int
	textOwner  map[int]*textBuf
	// submitters maps a form node to its submit buttons (rendered or not, in tree order).
	submitters map[int][]int
}

type textBuf struct {
	b    []byte
	last int  // node index of the last text appended
	own  bool // holds text that no listed element names
	cut  bool // text was dropped
}

// analyze classifies every node of d once.
func (b *builder) analyze(d *document) *analysis {
	if d.a != nil {
		return d.a
	}
	n := d.n
	a := &analysis{
		kind:       make([]kind, n),
		inert:      make([]bool, n),
		formOf:     make([]int32, n),
		wantForm:   map[int]bool{},
		fsDisabled: make([]bool, n),
		labelAnc:   make([]int32, n),
		ids:        map[string]int{},
		labelFor:   map[string]int{},
		textOwner:  map[int]*textBuf{},
		submitters: map[int][]int{},
	}
	formAnc := make([]int32, n) // nearest form that is the node or an ancestor
	blockOwner := make([]int32, n)
	fsHere := make([]bool, n) // a disabled fieldset

	// Pass 1, document order: inherited state and the kinds that need only the node itself.
	for i := 0; i < n; i++ {
		p := d.parent[i]
		t := d.tag(i)
		formAnc[i], a.labelAnc[i], blockOwner[i] = -1, -1, -1
		a.formOf[i] = -1
		if p >= 0 {
			formAnc[i], a.labelAnc[i], blockOwner[i] = formAnc[p], a.labelAnc[p], blockOwner[p]
			a.inert[i] = a.inert[p] || d.tag(p).inert()
			a.fsDisabled[i] = a.fsDisabled[p] || fsHere[p]
		}
		if d.pseudo[i] {
			a.inert[i] = true
		}
		if d.nodeType[i] != nodeElement || d.pseudo[i] {
			continue
		}
		switch t {
		case tagForm:
			formAnc[i] = int32(i)
		case tagFieldset:
			fsHere[i] = d.hasAttr(i, "disabled")
		case tagLabel:
			a.labelAnc[i] = int32(i)
			if f, ok := d.attr(i, "for"); ok {
				if _, seen := a.labelFor[f]; !seen {
					a.labelFor[f] = i
				}
			}
		}
		if d.blockLevel(i) {
			blockOwner[i] = int32(i)
		}
		if id, ok := d.attr(i, "id"); ok && id != "" {
			if _, seen := a.ids[id]; !seen {
				a.ids[id] = i
			}
		}
		if !a.inert[i] && d.visible(i) {
			a.kind[i] = d.classify(i, t)
		}
	}

	// Pass 2, reverse: which nodes hold something interactive.
	inner := make([]bool, n)
	for i := n - 1; i > 0; i-- {
		p := d.parent[i]
		if p < 0 {
			continue
		}
		if inner[i] || a.kind[i].interactive() || d.clickable[i] && d.visible(i) {
			inner[p] = true
		}
	}

	// Pass 3, document order: clickable elements, form owners and text blocks.
	consumed := make([]bool, n)
	lastBreak := -1
	for i := 0; i < n; i++ {
		p := d.parent[i]
		if p >= 0 {
			consumed[i] = consumed[p] || a.kind[p].consumes() || d.tag(p) == tagLabel
		}
		switch d.nodeType[i] {
		case nodeElement:
			if d.pseudo[i] {
				continue
			}
			t := d.tag(i)
			if d.blockLevel(i) || t == tagBR {
				lastBreak = i
			}
			k := a.kind[i]
			if k == kindNone && d.clickable[i] && !inner[i] && !consumed[i] && !a.inert[i] && d.visible(i) {
				switch t {
				case tagHTML, tagBody, tagLabel, tagForm, tagOption, tagFieldset:
				default:
					a.kind[i] = kindButton // an element with a click listener and nothing clickable inside
				}
				k = a.kind[i]
			}
			if k.control() || k == kindButton && (t == tagButton || t == tagInput) {
				f := int32(-1)
				if id, ok := d.attr(i, "form"); ok {
					if j, found := a.ids[id]; found && d.tag(j) == tagForm {
						f = int32(j)
					}
				} else {
					f = formAnc[i]
				}
				a.formOf[i] = f
				if f >= 0 {
					a.wantForm[int(f)] = true
				}
			}
		case nodeText:
			// Every visible text goes to its block; a block becomes a text element when some
			// of its text is not already the name of a listed element (a paragraph around a
			// link keeps the link's words, a list item holding only a link is not repeated).
			if a.inert[i] || !d.visible(i) {
				continue
			}
			v := d.s.str(d.nodeValue[i])
			if strings.TrimSpace(v) == "" {
				continue
			}
			owner := p
			if p >= 0 && blockOwner[p] >= 0 {
				owner = int(blockOwner[p])
			}
			if owner < 0 {
				continue
			}
			tb := a.textOwner[owner]
			if tb == nil {
				tb = &textBuf{}
				a.textOwner[owner] = tb
			}
			if !consumed[i] {
				tb.own = true
			}
			limit := b.textBytes()
			if len(tb.b) >= limit {
				tb.cut = true
				continue
			}
			if len(tb.b) > 0 && lastBreak > tb.last {
				tb.b = append(tb.b, ' ')
			}
			if len(v) > limit-len(tb.b) {
				v = v[:max(0, limit-len(tb.b))]
				tb.cut = true
			}
			tb.b = append(tb.b, v...)
			tb.last = i
		}
	}
	// Pass 4: every submit button's form owner, rendered or not: a hidden submitter still
	// submits its form (Enter picks the first in tree order, scripts can pick any).
	for i := 0; i < n; i++ {
		if d.nodeType[i] != nodeElement || d.pseudo[i] || a.inert[i] || !d.submitButton(i) {
			continue
		}
		f := int32(-1)
		if id, ok := d.attr(i, "form"); ok {
			if j, found := a.ids[id]; found && d.tag(j) == tagForm {
				f = int32(j)
			}
		} else {
			f = formAnc[i]
		}
		if f >= 0 && len(a.submitters[int(f)]) <= maxSubmitters {
			a.submitters[int(f)] = append(a.submitters[int(f)], i)
		}
	}
	d.a = a
	return a
}

// maxSubmitters bounds the submit buttons recorded for one form. A form with more is given one
// more submitter that goes nowhere known (origin "null"), so that a check of every submitter
// refuses it rather than judging it on the first ones only.
const maxSubmitters = 64

// submitButton reports whether element i is a submit button: a button whose type is not
// reset or button, or an input of type submit or image.
func (d *document) submitButton(i int) bool {
	switch d.tag(i) {
	case tagButton:
		typ := asciiLower(d.attrVal(i, "type"))
		return typ != "reset" && typ != "button"
	case tagInput:
		typ := inputType(d.attrVal(i, "type"))
		return typ == "submit" || typ == "image"
	}
	return false
}

// classify gives the kind of a visible, non-inert element from the element alone.
func (d *document) classify(i int, t tag) kind {
	switch t {
	case tagInput:
		switch inputType(d.attrVal(i, "type")) {
		case "hidden":
			return kindNone
		case "submit", "reset", "button", "image":
			return kindButton
		}
		return kindInput
	case tagTextarea:
		return kindTextarea
	case tagSelect:
		return kindSelect
	case tagButton, tagSummary:
		return kindButton
	case tagForm:
		return kindForm
	case tagIframe, tagFrame:
		return kindIframe
	}
	switch role(d.attrVal(i, "role")) {
	case "button":
		return kindButton
	case "link":
		return kindLink
	case "heading":
		return kindHeading
	}
	switch t {
	case tagA, tagArea:
		if d.hasAttr(i, "href") {
			return kindLink
		}
	case tagH1, tagH2, tagH3, tagH4, tagH5, tagH6:
		return kindHeading
	}
	return kindNone
}

// role returns the first role token Build knows, lower-case.
func role(v string) string {
	for _, r := range strings.Fields(v) {
		switch r = asciiLower(r); r {
		case "button", "link", "heading":
			return r
		}
	}
	return ""
}

var inputTypes = map[string]bool{
	"text": true, "search": true, "tel": true, "url": true, "email": true, "password": true,
	"date": true, "month": true, "week": true, "time": true, "datetime-local": true,
	"number": true, "range": true, "color": true, "checkbox": true, "radio": true, "file": true,
	"submit": true, "image": true, "reset": true, "button": true, "hidden": true,
}

// inputType is the state of an input's type attribute: a known keyword (ASCII
// case-insensitive), else "text".
func inputType(v string) string {
	v = asciiLower(v)
	if inputTypes[v] {
		return v
	}
	return "text"
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
