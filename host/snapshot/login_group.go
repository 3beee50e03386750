package snapshot

import (
	"slices"
	"sort"
)

// Where a sign-in's fields and controls are: the form of the password field (or of a first
// step's field), or, for fields outside any form, the nearest container that holds the
// field, the account field and a control to submit with. A container is found from the
// elements' ancestors (Element.Anc): the outline lists no container of its own.

// index is what the grouping needs about an outline, computed once.
type index struct {
	els     []Element // the outline's, a field without a label of its own given its visual one
	byRef   map[string]int
	members map[ancKey][]int // the elements (indexes, in order) under each ancestor node
	forms   map[string][]int // the elements of each form ref, in order
	// notPassword marks the password-typed inputs that are not a password of their own: a
	// one-time-code field (codeFieldWords), the twin a show-password toggle swaps in, or a
	// decoy no person types into (Element.Decoy).
	notPassword []bool
}

type ancKey struct {
	frame string
	node  int64
}

func newIndex(o Outline) *index {
	ix := &index{els: append([]Element(nil), o.Elements...), byRef: make(map[string]int, len(o.Elements)),
		members: map[ancKey][]int{}, forms: map[string][]int{}, notPassword: make([]bool, len(o.Elements))}
	for i, e := range ix.els {
		ix.byRef[e.Ref] = i
		for _, a := range e.Anc {
			k := ancKey{e.Frame, a}
			ix.members[k] = append(ix.members[k], i)
		}
		if e.Kind == "text" && e.Node != 0 {
			// A text is listed as its block: a container holding text of its own
			// ("Email <input>") holds that text.
			k := ancKey{e.Frame, e.Node}
			ix.members[k] = append(ix.members[k], i)
		}
		if e.Form != "" {
			ix.forms[e.Form] = append(ix.forms[e.Form], i)
		}
		if e.Kind == "input" && e.Text == "" && e.Placeholder == "" && i > 0 {
			ix.els[i].Text = ix.visualLabel(i)
		}
	}
	for i, e := range ix.els {
		ix.notPassword[i] = isPassword(e) && (codeField(e) || ix.twin(i) || e.Decoy)
	}
	return ix
}

// labelLevels is how near (in ancestors of the field) the text just before a field without a
// label must be to be read as its label.
const labelLevels = 3

// visualLabel is the text just before input i, when it sits within the field's nearest
// ancestors: the label a person reads above or beside a field that has none of its own
// (<div>Email or mobile number</div><input>), "" when there is none.
func (ix *index) visualLabel(i int) string {
	e, x := ix.els[i], ix.els[i-1]
	if x.Kind != "text" || x.Frame != e.Frame {
		return ""
	}
	for _, a := range e.Anc[:min(len(e.Anc), labelLevels)] {
		if x.Node == a || slices.Contains(x.Anc, a) {
			return x.Text
		}
	}
	return ""
}

// twin reports whether password field i repeats the password field just before it: in the
// same parent, with the same label, nothing typed between them: the copy a show-password
// toggle swaps in (one hidden by the page's script on the real site), not a confirmation,
// which sits in a parent of its own or says so.
func (ix *index) twin(i int) bool {
	e := ix.els[i]
	if len(e.Anc) == 0 || e.Text == "" && e.Placeholder == "" || newPasswordWords.matchAny(e.Name, e.ID, e.Text, e.Placeholder) {
		return false // (two bare password fields side by side tell nothing of each other)
	}
	for j := i - 1; j >= 0 && i-j < 4; j-- {
		x := ix.els[j]
		switch {
		case x.Decoy:
			continue // no one types into it: it is no field's twin
		case isPassword(x):
			return x.Frame == e.Frame && len(x.Anc) > 0 && x.Anc[0] == e.Anc[0] && x.Form == e.Form &&
				x.Text == e.Text && x.Placeholder == e.Placeholder && !newPasswordWords.matchAny(x.Name, x.ID, x.Text, x.Placeholder)
		case x.Kind == "input" || x.Kind == "textarea" || x.Kind == "select":
			return false
		}
	}
	return false
}

// password reports whether element k is a password field of its own (not a one-time-code
// field, not a toggle's twin).
func (ix *index) password(k int) bool { return isPassword(ix.els[k]) && !ix.notPassword[k] }

// group is the fields and controls of one candidate sign-in.
type group struct {
	members   []int // element indexes, in document order
	form      string
	container int64 // the container's backend node id; 0 for a whole form
	level     int   // how many ancestors up from the field the container is
	// crowded: the next container up takes in another password field (or, from a text
	// field, another field): the field sits beside another form's, or its own form's, fields.
	crowded bool
}

// maxLevels bounds how far up a container is looked for.
const maxLevels = 12

// formFieldsMax is the most text fields a form may hold and still be one group: a form
// around a whole page (ASP.NET's) holds a search box, a newsletter and a sign-in, which are
// told apart by container instead.
const formFieldsMax = 6

// groupOf is field i's group: its form when the form holds one group, else the nearest
// container within the form (or, outside forms, within the form-less elements).
func (ix *index) groupOf(i int) group {
	e := ix.els[i]
	if e.Form != "" {
		all := ix.forms[e.Form]
		pw, texts := 0, 0
		for _, j := range all {
			switch x := ix.els[j]; {
			case ix.password(j):
				pw++
			case isPassword(x):
			case textLike(x):
				texts++
			}
		}
		whole := group{members: ix.formMembers(e.Form), form: e.Form}
		if pw <= 1 && texts <= formFieldsMax || pw > 0 && !isPassword(e) {
			return whole // a text field of a form with a password field is that form's
		}
		if t := ix.container(i); !t.crowded || ix.selfContained(t, i) {
			return t
		}
		return whole // another password field of the same sign-up or change form
	}
	return ix.container(i)
}

// formMembers are the elements under form ref (texts and headings too) and the controls
// associated with it from elsewhere (form=), in document order.
func (ix *index) formMembers(ref string) []int {
	fi, ok := ix.byRef[ref]
	if !ok {
		return ix.forms[ref]
	}
	f := ix.els[fi]
	in := map[int]bool{}
	for _, j := range ix.members[ancKey{f.Frame, f.Node}] {
		in[j] = true
	}
	for _, j := range ix.forms[ref] {
		in[j] = true
	}
	out := make([]int, 0, len(in))
	for j := range in {
		out = append(out, j)
	}
	sort.Ints(out)
	return out
}

// selfContained reports whether group g of password field i holds, besides it, a field
// before it that may take the account and a control: a sign-in of its own beside another
// form's password fields (a sign-in and a sign-up in one form).
func (ix *index) selfContained(g group, i int) bool {
	account, control := false, false
	for _, k := range g.members {
		x := ix.els[k]
		account = account || k < i && accountCandidate(x)
		control = control || controlLike(x)
	}
	return account && control
}

// container walks up field i's ancestors to the smallest one that holds a control to submit
// with and (when there is one near) a text field beside a password, without taking in a
// second password field (or, for a text field, a second text field): the fields of one
// sign-in sit together; another password is another form's. A control that only may submit
// (a button without words, a forgot-password or help button: weakControl) does not end the
// walk: the sign-in's own button may sit further up, past a show-password toggle.
func (ix *index) container(i int) group {
	e := ix.els[i]
	start := isPassword(e)
	best := group{members: []int{i}, form: e.Form}
	// The smallest containers with a strong control, with the account field and any
	// control, and with any control: what is used when the walk ends without both.
	var strong, withAccount, anyControl *group
	strongAt := -1
	for k, a := range e.Anc {
		if k >= maxLevels {
			break
		}
		var mem []int
		pw, texts, strongs, weaks := 0, 0, 0, 0
		for _, j := range ix.members[ancKey{e.Frame, a}] {
			x := ix.els[j]
			if x.Form != e.Form && !(x.Form == "" && (x.Kind == "text" || x.Kind == "heading")) {
				continue
			}
			mem = append(mem, j)
			switch {
			case ix.password(j):
				pw++
			case isPassword(x):
			case accountCandidate(x):
				texts++
			case strongControl(x):
				strongs++
			case controlLike(x):
				weaks++
			}
		}
		if start && pw > 1 || !start && (pw > 0 || texts > 1) {
			best.crowded = true
			for _, g := range []*group{strong, withAccount, anyControl} {
				if g != nil {
					g.crowded = true
				}
			}
			break // another form's fields
		}
		best = group{members: mem, form: e.Form, container: a, level: k + 1}
		if strongs > 0 && strong == nil {
			strongAt, strong = k, &group{members: mem, form: e.Form, container: a, level: k + 1}
		}
		if strongs+weaks > 0 && anyControl == nil {
			anyControl = &group{members: mem, form: e.Form, container: a, level: k + 1}
		}
		if strongs+weaks > 0 && texts > 0 && withAccount == nil {
			withAccount = &group{members: mem, form: e.Form, container: a, level: k + 1}
		}
		if strongAt >= 0 && (!start || texts > 0) {
			return best
		}
		if strongAt >= 0 && k >= strongAt+2 {
			break
		}
	}
	for _, g := range []*group{strong, withAccount, anyControl} {
		if g != nil {
			return *g // a password alone with its control: no account field near
		}
	}
	return best
}

// controlLike reports whether x may submit a sign-in: a button that is not a show-password
// toggle, another provider's sign-in or a way back, or a link that says sign in or go on.
func controlLike(x Element) bool {
	return x.Kind == "button" && !notSubmitWords.matchAny(x.Text) || x.Kind == "link" && linkSubmits(x)
}

// strongControl reports whether control x says what it does: words of a purpose (but a
// forgotten password's) or of going on, or a submit button with a label; a container that
// holds one holds a form's action.
func strongControl(x Element) bool {
	if !controlLike(x) {
		return false
	}
	t := prepare(x.Text)
	if purposeWords[forgotPassword].match(t) {
		return false
	}
	if nextWords.match(t) || (x.Type == "submit" || x.Type == "image") && x.Text != "" {
		return true
	}
	for p := purpose(0); p < nPurposes; p++ {
		if purposeWords[p].match(t) {
			return true
		}
	}
	return false
}

// linkSubmits reports whether link x says it signs in or goes on: some sites' submit
// control is a link their script follows.
func linkSubmits(x Element) bool {
	t := prepare(x.Text)
	return (purposeWords[signIn].match(t) || nextWords.match(t)) && !notSubmitWords.match(t) &&
		!purposeWords[forgotPassword].match(t) && !purposeWords[signUp].match(t)
}

// around lists the form-less controls near the form of field i: the buttons and links under
// the form's nearest ancestors (up to levels up), for a form whose submit control sits
// outside it.
func (ix *index) around(g group, levels int) []int {
	if g.form == "" {
		return nil
	}
	fi, ok := ix.byRef[g.form]
	if !ok {
		return nil
	}
	f := ix.els[fi]
	var out []int
	seen := map[int]bool{}
	for k, a := range f.Anc {
		if k >= levels {
			break
		}
		for _, j := range ix.members[ancKey{f.Frame, a}] {
			x := ix.els[j]
			if seen[j] || x.Form != "" || x.Kind != "button" && x.Kind != "link" {
				continue
			}
			seen[j] = true
			out = append(out, j)
		}
	}
	return out
}

// headingBefore is the text of the last heading before element i in its frame, or "".
func (ix *index) headingBefore(i int) string {
	fr := ix.els[i].Frame
	for j := i - 1; j >= 0 && i-j < 200; j-- {
		if x := ix.els[j]; x.Frame == fr && x.Kind == "heading" {
			return x.Text
		}
	}
	return ""
}
