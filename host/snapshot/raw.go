package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// The wire shape of DOMSnapshot.captureSnapshot's result. Only the fields Build reads are
// declared; Chromium adds fields between versions, so unknown ones are ignored (this is a
// browser's answer, not a peer's request).
type rawSnapshot struct {
	Documents []rawDocument `json:"documents"`
	Strings   []string      `json:"strings"`
}

type rawDocument struct {
	DocumentURL int       `json:"documentURL"`
	Title       int       `json:"title"`
	BaseURL     int       `json:"baseURL"`
	FrameID     int       `json:"frameId"`
	Nodes       rawNodes  `json:"nodes"`
	Layout      rawLayout `json:"layout"`
}

type rawNodes struct {
	ParentIndex          ints       `json:"parentIndex"`
	NodeType             ints       `json:"nodeType"`
	NodeName             ints       `json:"nodeName"`
	NodeValue            ints       `json:"nodeValue"`
	BackendNodeID        ints       `json:"backendNodeId"`
	Attributes           intLists   `json:"attributes"`
	TextValue            rareString `json:"textValue"`
	InputValue           rareString `json:"inputValue"`
	InputChecked         rareBool   `json:"inputChecked"`
	OptionSelected       rareBool   `json:"optionSelected"`
	ContentDocumentIndex rareString `json:"contentDocumentIndex"` // values are document indexes, not strings
	PseudoType           rareString `json:"pseudoType"`
	IsClickable          rareBool   `json:"isClickable"`
}

type rawLayout struct {
	NodeIndex ints     `json:"nodeIndex"`
	Styles    intLists `json:"styles"`
	// Bounds are kept undecoded: only Describe reads them (document.bounds).
	Bounds json.RawMessage `json:"bounds"`
}

type rareString struct {
	Index ints `json:"index"`
	Value ints `json:"value"`
}

type rareBool struct {
	Index ints `json:"index"`
}

// Node types (DOM Node.nodeType).
const (
	nodeElement = 1
	nodeText    = 3
)

// snap is one decoded and validated captureSnapshot result.
type snap struct {
	strings []string
	docs    []*document
	tags    []tag // by string index, lazily filled; tagUnknown until looked at
}

// document is one validated DocumentSnapshot. Every index it holds has been checked, so the
// code that walks it indexes without further checks.
type document struct {
	s       *snap
	index   int
	url     string
	title   string
	frameID string
	docURL  *url.URL // nil when the URL does not parse
	baseURL *url.URL // nil when the URL does not parse

	n          int
	parent     []int
	nodeType   []int
	nodeName   []int
	nodeValue  []int
	backend    []int
	attrs      [][]int
	layout     []int32 // layout index per node, -1 for none
	styles     [][]int // per layout index: display, visibility (string indexes)
	rawBounds  json.RawMessage
	end        []int // end[i]: one past the last node of i's subtree
	inputValue map[int]int
	textValue  map[int]int
	contentDoc map[int]int
	checked    map[int]bool
	selected   map[int]bool
	clickable  map[int]bool
	pseudo     map[int]bool

	a *analysis // filled by analyze
}

// decode parses and validates raw. Nothing it returns can make later indexing go out of range.
func decode(raw []byte) (*snap, error) {
	if len(raw) > MaxRaw {
		return nil, fmt.Errorf("%w: snapshot is %d bytes, more than %d", ErrMalformed, len(raw), MaxRaw)
	}
	var r rawSnapshot
	if err := json.Unmarshal(raw, &r); err != nil { // also refuses trailing data
		return nil, fmt.Errorf("%w: decode: %w", ErrMalformed, err)
	}
	if len(r.Documents) == 0 {
		return nil, fmt.Errorf("%w: no documents", ErrMalformed)
	}
	if len(r.Documents) > maxDocuments {
		return nil, fmt.Errorf("%w: %d documents, more than %d", ErrMalformed, len(r.Documents), maxDocuments)
	}
	s := &snap{strings: r.Strings, tags: make([]tag, len(r.Strings))}
	for i := range r.Documents {
		d, err := s.newDocument(i, &r.Documents[i], len(r.Documents))
		if err != nil {
			return nil, fmt.Errorf("%w: document %d: %w", ErrMalformed, i, err)
		}
		s.docs = append(s.docs, d)
	}
	return s, nil
}

// str returns the string at a validated index; -1 is the protocol's "absent" and reads "".
func (s *snap) str(i int) string {
	if i < 0 {
		return ""
	}
	return s.strings[i]
}

func (s *snap) checkStr(i int) bool { return i >= -1 && i < len(s.strings) }

func (s *snap) newDocument(index int, r *rawDocument, ndocs int) (*document, error) {
	for _, i := range []int{r.DocumentURL, r.Title, r.BaseURL, r.FrameID} {
		if !s.checkStr(i) {
			return nil, fmt.Errorf("string index %d out of range", i)
		}
	}
	nd := &r.Nodes
	n := len(nd.ParentIndex)
	if n == 0 {
		return nil, fmt.Errorf("no nodes")
	}
	if len(nd.NodeType) != n || len(nd.NodeName) != n || len(nd.BackendNodeID) != n {
		return nil, fmt.Errorf("node arrays differ in length")
	}
	if nd.NodeValue != nil && len(nd.NodeValue) != n {
		return nil, fmt.Errorf("nodeValue length %d, want %d", len(nd.NodeValue), n)
	}
	if nd.Attributes != nil && len(nd.Attributes) != n {
		return nil, fmt.Errorf("attributes length %d, want %d", len(nd.Attributes), n)
	}
	d := &document{
		s: s, index: index, n: n,
		url: s.str(r.DocumentURL), title: s.str(r.Title), frameID: s.str(r.FrameID),
		parent: nd.ParentIndex, nodeType: nd.NodeType, nodeName: nd.NodeName,
		nodeValue: nd.NodeValue, backend: nd.BackendNodeID, attrs: nd.Attributes,
	}
	if d.nodeValue == nil {
		d.nodeValue = make([]int, n)
		for i := range d.nodeValue {
			d.nodeValue[i] = -1
		}
	}
	if d.attrs == nil {
		d.attrs = make([][]int, n)
	}
	d.docURL, _ = url.Parse(d.url)
	d.baseURL, _ = url.Parse(s.str(r.BaseURL))
	if d.baseURL == nil || s.str(r.BaseURL) == "" {
		d.baseURL = d.docURL
	}

	// Tree shape: strict pre-order, so a subtree is the contiguous range [i, end[i]).
	d.end = make([]int, n)
	stack := make([]int, 0, 64)
	for i, p := range nd.ParentIndex {
		d.end[i] = i + 1
		for len(stack) > 0 && stack[len(stack)-1] != p {
			stack = stack[:len(stack)-1]
		}
		if p != -1 && len(stack) == 0 {
			return nil, fmt.Errorf("node %d: parent %d is not an open ancestor (nodes not in document order)", i, p)
		}
		stack = append(stack, i)
	}
	for i := n - 1; i > 0; i-- {
		if p := d.parent[i]; p >= 0 && d.end[i] > d.end[p] {
			d.end[p] = d.end[i]
		}
	}
	for i := 0; i < n; i++ {
		if !s.checkStr(d.nodeName[i]) || !s.checkStr(d.nodeValue[i]) {
			return nil, fmt.Errorf("node %d: string index out of range", i)
		}
		a := d.attrs[i]
		if len(a)%2 != 0 {
			return nil, fmt.Errorf("node %d: odd attribute array", i)
		}
		for _, k := range a {
			if !s.checkStr(k) {
				return nil, fmt.Errorf("node %d: attribute string index out of range", i)
			}
		}
	}

	var err error
	if d.inputValue, err = s.rareStrings(nd.InputValue, n, "inputValue"); err != nil {
		return nil, err
	}
	if d.textValue, err = s.rareStrings(nd.TextValue, n, "textValue"); err != nil {
		return nil, err
	}
	if d.pseudo, err = rareFlags(rareBool{nd.PseudoType.Index}, n, "pseudoType"); err != nil {
		return nil, err
	}
	if d.checked, err = rareFlags(nd.InputChecked, n, "inputChecked"); err != nil {
		return nil, err
	}
	if d.selected, err = rareFlags(nd.OptionSelected, n, "optionSelected"); err != nil {
		return nil, err
	}
	if d.clickable, err = rareFlags(nd.IsClickable, n, "isClickable"); err != nil {
		return nil, err
	}
	cd := nd.ContentDocumentIndex
	if len(cd.Index) != len(cd.Value) {
		return nil, fmt.Errorf("contentDocumentIndex: index and value differ in length")
	}
	d.contentDoc = make(map[int]int, len(cd.Index))
	for k, i := range cd.Index {
		if i < 0 || i >= n || cd.Value[k] < 0 || cd.Value[k] >= ndocs {
			return nil, fmt.Errorf("contentDocumentIndex entry %d out of range", k)
		}
		d.contentDoc[i] = cd.Value[k]
	}

	ly := &r.Layout
	if len(ly.Styles) != len(ly.NodeIndex) {
		return nil, fmt.Errorf("layout: nodeIndex and styles differ in length")
	}
	d.layout = make([]int32, n)
	for i := range d.layout {
		d.layout[i] = -1
	}
	for l, i := range ly.NodeIndex {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("layout %d: node index %d out of range", l, i)
		}
		st := ly.Styles[l]
		// The document's own layout object (the view) has no styles; anything else with
		// fewer than the two requested is treated as not rendered.
		for _, k := range st {
			if !s.checkStr(k) {
				return nil, fmt.Errorf("layout %d: style string index out of range", l)
			}
		}
		d.layout[i] = int32(l)
	}
	d.styles = ly.Styles
	d.rawBounds = ly.Bounds
	return d, nil
}

func (s *snap) rareStrings(r rareString, n int, name string) (map[int]int, error) {
	if len(r.Index) != len(r.Value) {
		return nil, fmt.Errorf("%s: index and value differ in length", name)
	}
	m := make(map[int]int, len(r.Index))
	for k, i := range r.Index {
		if i < 0 || i >= n || !s.checkStr(r.Value[k]) {
			return nil, fmt.Errorf("%s entry %d out of range", name, k)
		}
		m[i] = r.Value[k]
	}
	return m, nil
}

func rareFlags(r rareBool, n int, name string) (map[int]bool, error) {
	m := make(map[int]bool, len(r.Index))
	for k, i := range r.Index {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("%s entry %d out of range", name, k)
		}
		m[i] = true
	}
	return m, nil
}

// attr returns the value of the attribute name (ASCII case-insensitive) and whether it is set.
func (d *document) attr(i int, name string) (string, bool) {
	a := d.attrs[i]
	for k := 0; k+1 < len(a); k += 2 {
		if strings.EqualFold(d.s.str(a[k]), name) {
			return d.s.str(a[k+1]), true
		}
	}
	return "", false
}

func (d *document) attrVal(i int, name string) string {
	v, _ := d.attr(i, name)
	return v
}

func (d *document) hasAttr(i int, name string) bool {
	_, ok := d.attr(i, name)
	return ok
}

func (d *document) tag(i int) tag {
	if d.nodeType[i] != nodeElement || d.pseudo[i] {
		return tagNone
	}
	k := d.nodeName[i]
	if k < 0 {
		return tagOther
	}
	t := d.s.tags[k]
	if t == tagUnknown {
		t = lookupTag(d.s.strings[k])
		d.s.tags[k] = t
	}
	return t
}

// visible reports whether node i is rendered: it has a layout object, its display is not
// none and its visibility is neither hidden nor collapse.
func (d *document) visible(i int) bool {
	l := d.layout[i]
	if l < 0 || len(d.styles[l]) < 2 {
		return false
	}
	st := d.styles[l]
	if d.s.str(st[0]) == "none" {
		return false
	}
	switch d.s.str(st[1]) {
	case "hidden", "collapse":
		return false
	}
	return true
}

// blockLevel reports whether node i lays out as a block of its own (text inside it is not
// run together with text outside it).
func (d *document) blockLevel(i int) bool {
	l := d.layout[i]
	if l < 0 || d.nodeType[i] != nodeElement || len(d.styles[l]) < 2 {
		return false
	}
	switch disp := d.s.str(d.styles[l][0]); {
	case disp == "inline", disp == "contents", disp == "none":
		return false
	case strings.HasPrefix(disp, "inline-"), strings.HasPrefix(disp, "ruby"):
		// inline-block and friends are boxes, but they flow in a line: a button in a
		// sentence stays in the sentence.
		return false
	}
	return true
}

// ints and intLists are JSON arrays of integers and of arrays of integers, decoded without
// reflection: they are nearly all of a snapshot's bytes. encoding/json has already checked
// the syntax when it calls UnmarshalJSON; these refuse anything but integers.
type (
	ints     []int
	intLists [][]int
)

var errNotInts = errors.New("want an array of integers")

func (v *ints) UnmarshalJSON(b []byte) error {
	p := intParser{b: b}
	if p.null() {
		*v = nil
		return nil
	}
	list, err := p.list()
	if err == nil && !p.end() {
		err = errNotInts
	}
	*v = list
	return err
}

func (v *intLists) UnmarshalJSON(b []byte) error {
	p := intParser{b: b}
	if p.null() {
		*v = nil
		return nil
	}
	if !p.byte('[') {
		return errNotInts
	}
	out := [][]int{}
	if !p.byte(']') {
		for {
			list, err := p.list()
			if err != nil {
				return err
			}
			out = append(out, list)
			if p.byte(']') {
				break
			}
			if !p.byte(',') {
				return errNotInts
			}
		}
	}
	if !p.end() {
		return errNotInts
	}
	*v = out
	return nil
}

type intParser struct {
	b []byte
	i int
}

func (p *intParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte consumes c (after white space) if it is next.
func (p *intParser) byte(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *intParser) null() bool {
	p.ws()
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return p.end()
	}
	return false
}

func (p *intParser) end() bool {
	p.ws()
	return p.i == len(p.b)
}

func (p *intParser) list() ([]int, error) {
	if !p.byte('[') {
		return nil, errNotInts
	}
	out := []int{}
	if p.byte(']') {
		return out, nil
	}
	for {
		p.ws()
		neg := p.i < len(p.b) && p.b[p.i] == '-'
		if neg {
			p.i++
		}
		start, n := p.i, 0
		for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
			if p.i-start >= 15 { // beyond any index or node id, and far from overflow
				return nil, errNotInts
			}
			n = n*10 + int(p.b[p.i]-'0')
			p.i++
		}
		if p.i == start {
			return nil, errNotInts
		}
		if neg {
			n = -n
		}
		out = append(out, n)
		if p.byte(']') {
			return out, nil
		}
		if !p.byte(',') {
			return nil, errNotInts
		}
	}
}
