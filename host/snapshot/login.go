package snapshot

import (
	"sort"
	"strings"
)

// LoginForm is one place to sign in found in an outline: a visible password field and the
// field most likely to take the account, or, with Password "", the first step of a two-step
// sign-in (a lone account field and no password field). Only one with SignIn set is a sign-in
// form; the others are listed so that a caller can say why a page's form was not used.
type LoginForm struct {
	Password string `json:"password,omitempty"` // ref of the password input
	Username string `json:"username,omitempty"` // ref of the account field, "" if none
	// Submit is the ref of the control to click: a submit button of the form, else a button,
	// link or role=button control whose words say sign in or go on (it may be disabled: pages
	// enable it as the fields fill); "" for none: press Enter in the last field. SubmitBy
	// says which: "button" (a submit button of Form), "control" (any other) or "enter".
	Submit   string `json:"submit,omitempty"`
	SubmitBy string `json:"submit_by,omitempty"`
	Form     string `json:"form,omitempty"` // ref of the form, "" for fields outside any form
	// Container is, for fields outside a form (or a group within a form around a whole
	// page), the backend node id of the nearest element holding the fields and the submit
	// control; 0 for a whole form. Host only.
	Container int64 `json:"-"`
	// ActionOrigin is where submitting the form sends the fields: the form's submit button's
	// formaction origin when it has one, else the form's action origin; "" without a form (or
	// when the form was cut from a truncated outline). "null" for an opaque or unparsable
	// action.
	ActionOrigin string `json:"action_origin,omitempty"`
	Frame        string `json:"frame,omitempty"` // "" for the top document, else the frame's origin

	// Method is the form's own method (get, post or dialog; "" without a form).
	Method string `json:"method,omitempty"`
	// Submitters are all of the form's submit buttons, rendered or not (see Element).
	Submitters []Submitter `json:"-"`
	// SignIn says the fields are a sign-in form, by the signals of login_judge.go. NotSignIn
	// says why not, when SignIn is false. Purpose is what the group was judged to be:
	// sign-in, sign-up, change-password, forgot-password, newsletter, checkout or search.
	SignIn    bool   `json:"sign_in"`
	NotSignIn string `json:"not_sign_in,omitempty"`
	Purpose   string `json:"purpose,omitempty"`
	// PasswordOnly is a sign-in with a password field and no account field at all (an
	// application's own password or token; also the password page of a two-step sign-in).
	PasswordOnly bool `json:"password_only,omitempty"`
	// Label is the password field's label (or placeholder), for the person's prompt.
	Label string `json:"label,omitempty"`
	// Scores are the group's score per purpose ("sign-in=8 sign-up=2"), for logs and for
	// measuring the detection. Host only.
	Scores string `json:"-"`
}

// LoginForms lists the candidate sign-ins of o, best first: the sign-in forms with a
// password field (highest sign-in score first), then the first steps of two-step sign-ins,
// then every other candidate in document order (SignIn false, NotSignIn saying why).
//
// A candidate is made for each visible password field, and for each enabled text-like field
// that is the only one of its group in a group without a password field. Its group is its
// form, or a part of it, or for fields outside forms their nearest container
// (login_group.go); the group is judged by weighted signals (login_judge.go, words in
// login_words.go): it is a sign-in when its sign-in score is the highest of all purposes,
// it has one password field (a one-time-code field, a show-password twin or an autofill
// decoy beside it is none: ix.notPassword), and that field is not named as an API key or
// token. A first step also needs sign-in words around it (firstStepMin), and none is
// offered on a page that has a sign-in form with a password field: an account is only
// ever typed into a sign-in's first step, never a forgot-password, newsletter, checkout or
// search form.
//
// LoginForms reads only the outline: a truncated outline may hide fields (the host builds
// its sign-in looks with SignInOptions); and it is a guess.
// Frame, ActionOrigin, Method and every Submitter are what the caller compares with a saved
// origin; where the password may go is the network guard's to enforce.
func LoginForms(o Outline) []LoginForm {
	ix := newIndex(o)
	pg := pageOf(o)
	type cand struct {
		lf    LoginForm
		score int
		step  bool
		at    int
	}
	var cands []cand
	seen := map[string]bool{} // first-step groups already listed
	for i, e := range ix.els {
		switch {
		case ix.notPassword[i]: // a code field, a toggle's twin, a decoy: its form's password field is the candidate
		case isPassword(e):
			g := ix.groupOf(i)
			j := ix.judge(pg, g, i)
			lf := ix.loginForm(g, j)
			lf.Password, lf.Label = e.Ref, e.Text
			lf.PasswordOnly = lf.SignIn && lf.Username == ""
			cands = append(cands, cand{lf: lf, score: j.score[signIn], at: i})
		case accountCandidate(e):
			g := ix.groupOf(i)
			key := groupKey(ix, g)
			if seen[key] || !loneField(ix, g, i) {
				continue
			}
			seen[key] = true
			j := ix.judge(pg, g, i)
			lf := ix.loginForm(g, j)
			cands = append(cands, cand{lf: lf, score: j.score[signIn], step: true, at: i})
		}
	}
	havePassword := false
	for _, c := range cands {
		if c.lf.SignIn && !c.step && c.lf.Frame == "" {
			havePassword = true
		}
	}
	for k := range cands {
		if c := &cands[k]; c.step && c.lf.SignIn && havePassword {
			c.lf.SignIn, c.lf.NotSignIn = false, "the page has a sign-in form with a password field"
		}
	}
	rank := func(c cand) int {
		switch {
		case c.lf.SignIn && !c.step:
			return 0
		case c.lf.SignIn:
			return 1
		}
		return 2
	}
	sort.SliceStable(cands, func(a, b int) bool {
		ra, rb := rank(cands[a]), rank(cands[b])
		if ra != rb {
			return ra < rb
		}
		if ra < 2 && cands[a].score != cands[b].score {
			return cands[a].score > cands[b].score
		}
		// Alike otherwise, a form with a submit button of its own is likelier a person's
		// than one a control elsewhere submits (goethe-campus' mobile form, whose fields a
		// "Zur Anmeldung" outside it was taken to submit, before the desktop form and its
		// Anmelden), and one with a control likelier than one without (a SecurID box
		// beside the password's).
		if oa, ob := cands[a].lf.SubmitBy == "button", cands[b].lf.SubmitBy == "button"; ra < 2 && oa != ob {
			return oa
		}
		if sa, sb := cands[a].lf.Submit != "", cands[b].lf.Submit != ""; ra < 2 && sa != sb {
			return sa
		}
		return cands[a].at < cands[b].at
	})
	out := make([]LoginForm, len(cands))
	for k, c := range cands {
		out[k] = c.lf
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// loginForm fills a candidate's fields, form, submit control, action and frame from its
// group and judgment.
func (ix *index) loginForm(g group, j judgment) LoginForm {
	lf := LoginForm{Form: g.form, Container: g.container, SignIn: j.why == "", NotSignIn: j.why,
		Purpose: j.purpose.String(), SubmitBy: "enter", Scores: j.scores()}
	if j.account >= 0 {
		lf.Username = ix.els[j.account].Ref
	}
	if len(g.members) > 0 {
		lf.Frame = ix.els[g.members[0]].Frame
	}
	if j.submit >= 0 {
		s := ix.els[j.submit]
		lf.Submit, lf.SubmitBy = s.Ref, "control"
		if s.Kind == "button" && (s.Type == "submit" || s.Type == "image") && s.Form != "" && s.Form == g.form {
			lf.SubmitBy = "button"
		}
	}
	if g.form == "" {
		return lf
	}
	fi, ok := ix.byRef[g.form]
	if !ok {
		return lf
	}
	f := ix.els[fi]
	lf.ActionOrigin, lf.Method, lf.Submitters = f.ActionOrigin, f.Method, f.Submitters
	// The button Enter or a click submits with decides where the fields go: its formaction
	// when it has one (the clicked one's, else the form's first submit button's).
	for _, k := range ix.forms[g.form] {
		b := ix.els[k]
		if b.Kind == "button" && (b.Type == "submit" || b.Type == "image") && (lf.SubmitBy != "button" || b.Ref == lf.Submit) {
			if b.ActionOrigin != "" {
				lf.ActionOrigin = b.ActionOrigin
			}
			break
		}
	}
	return lf
}

// loneField reports whether field i is the only field of group g a person fills in: no
// password field, no other enabled text-like field.
func loneField(ix *index, g group, i int) bool {
	for _, k := range g.members {
		x := ix.els[k]
		if isPassword(x) && !x.Decoy || k != i && textLike(x) && !x.Disabled || x.Kind == "textarea" {
			return false
		}
	}
	return !g.crowded
}

func groupKey(ix *index, g group) string {
	if g.container == 0 && g.form != "" {
		return g.form
	}
	if len(g.members) == 0 {
		return ""
	}
	return "c:" + ix.els[g.members[0]].Ref
}

func isPassword(e Element) bool { return e.Kind == "input" && e.Type == "password" }

// textLike is an input a person types an account into: text (also any unknown type), e-mail,
// tel or number.
func textLike(e Element) bool {
	return e.Kind == "input" && (e.Type == "text" || e.Type == "email" || e.Type == "tel" || e.Type == "number")
}

func hasToken(list, tok string) bool {
	for _, t := range strings.Fields(list) {
		if t == tok {
			return true
		}
	}
	return false
}
