package snapshot

import (
	"strings"
	"unicode"
)

// LoginForm is one place to sign in found in an outline: a visible password field and the field
// most likely to take the account name, or, with Password "", the first step of a two-step
// login (a lone username field and no password field). Only one with SignIn set is a sign-in
// form; the others are listed so that a caller can say why a page's form was not used.
type LoginForm struct {
	Password string `json:"password,omitempty"` // ref of the password input
	Username string `json:"username,omitempty"` // ref of the likely username field, "" if none
	Submit   string `json:"submit,omitempty"`   // ref of the form's default (first) submit button
	Form     string `json:"form,omitempty"`     // ref of the form, "" for fields outside any form
	// ActionOrigin is where submitting sends the fields: the default button's formaction
	// origin when it has one, else the form's action origin; "" without a form (or when the
	// form was cut from a truncated outline). "null" for an opaque or unparsable action.
	ActionOrigin string `json:"action_origin,omitempty"`
	Frame        string `json:"frame,omitempty"` // "" for the top document, else the frame's origin

	// Method is the form's own method (get, post or dialog; "" without a form).
	Method string `json:"method,omitempty"`
	// Submitters are all of the form's submit buttons, rendered or not (see Element).
	Submitters []Submitter `json:"-"`
	// SignIn says the fields are a sign-in form and not merely a form with a secret in it:
	// see LoginForms. NotSignIn says why not, when SignIn is false.
	SignIn    bool   `json:"sign_in"`
	NotSignIn string `json:"not_sign_in,omitempty"`
	// Label is the password field's label (or placeholder), for the person's prompt.
	Label string `json:"label,omitempty"`
}

// LoginForms lists the login forms of o in document order: one entry for each visible password
// input, and one for each username-only step of a two-step login.
//
// The username field is, among the enabled text, email and tel inputs of the same form (or,
// outside forms, of the same document run), the first match of: autocomplete containing
// username or email; type email; a name or id containing user, login or email; else the nearest
// text input before the password. Matches before the password are preferred to those after.
//
// A username-only step is an enabled input with autocomplete username, or the only text-like
// input of its group when it is of type email or named like a user name, in a group with no
// password field.
//
// A password form is a sign-in form (SignIn) only with evidence that it is one: exactly one
// password field in its group; no new-password or one-time-code autocomplete on it and no
// secret-looking name or label (secret, token, key, PIN, webhook, …); no other secret-looking
// field in the group (those words, or autocomplete new-password, one-time-code, cc-number,
// cc-csc); and an account field that looks like one (autocomplete username or email, type
// email, or a name, id, label or placeholder naming a user, login, e-mail or account), or
// autocomplete current-password on the password field. A settings page with a secret and a
// URL field is not a sign-in form. A username-only step is a sign-in form when its group holds
// no secret-looking field.
//
// LoginForms reads only the outline: a truncated outline may hide fields, and Frame,
// ActionOrigin, Method and every Submitter are what the caller must compare with a saved
// origin before typing anything.
func LoginForms(o Outline) []LoginForm {
	els := o.Elements
	byRef := make(map[string]int, len(els))
	for i, e := range els {
		byRef[e.Ref] = i
	}
	var out []LoginForm
	seen := map[string]bool{} // groups already given a username-only step
	for i, e := range els {
		switch {
		case isPassword(e):
			g := group(els, i)
			lf := loginForm(els, byRef, e)
			lf.Password = e.Ref
			lf.Label = e.Text
			u := pickUsername(els, g, i)
			if u >= 0 {
				lf.Username = els[u].Ref
			}
			lf.NotSignIn = signInEvidence(els, g, i, u)
			lf.SignIn = lf.NotSignIn == ""
			out = append(out, lf)
		case textLike(e) && !e.Disabled:
			g := group(els, i)
			key := groupKey(els, g, e)
			if seen[key] || !usernameStep(els, g, e) {
				continue
			}
			seen[key] = true
			lf := loginForm(els, byRef, e)
			lf.Username = e.Ref
			lf.NotSignIn = otherSecrets(els, g, -1)
			lf.SignIn = lf.NotSignIn == ""
			out = append(out, lf)
		}
	}
	return out
}

func isPassword(e Element) bool { return e.Kind == "input" && e.Type == "password" }

func textLike(e Element) bool {
	return e.Kind == "input" && (e.Type == "text" || e.Type == "email" || e.Type == "tel")
}

// loginForm fills the form, submit button, action origin and frame for field e.
func loginForm(els []Element, byRef map[string]int, e Element) LoginForm {
	lf := LoginForm{Form: e.Form, Frame: e.Frame}
	if e.Form == "" {
		return lf
	}
	fi, ok := byRef[e.Form]
	if !ok {
		return lf
	}
	lf.ActionOrigin = els[fi].ActionOrigin
	lf.Method = els[fi].Method
	lf.Submitters = els[fi].Submitters
	for _, b := range els {
		if b.Kind == "button" && b.Form == e.Form && (b.Type == "submit" || b.Type == "image") {
			lf.Submit = b.Ref
			if b.ActionOrigin != "" {
				lf.ActionOrigin = b.ActionOrigin
			}
			break
		}
	}
	return lf
}

// group returns the indexes of the elements that share field i's form, or, for a field
// outside any form, the run of form-less elements of its document around it (a run ends at an
// iframe element or an element of another frame).
func group(els []Element, i int) []int {
	e := els[i]
	var g []int
	if e.Form != "" {
		for j, x := range els {
			if x.Form == e.Form {
				g = append(g, j)
			}
		}
		return g
	}
	lo := i
	for lo > 0 && els[lo-1].Kind != "iframe" && els[lo-1].Frame == e.Frame {
		lo--
	}
	hi := i
	for hi+1 < len(els) && els[hi+1].Kind != "iframe" && els[hi+1].Frame == e.Frame {
		hi++
	}
	for j := lo; j <= hi; j++ {
		if els[j].Form == "" {
			g = append(g, j)
		}
	}
	return g
}

func groupKey(els []Element, g []int, e Element) string {
	if e.Form != "" {
		return e.Form
	}
	return "run:" + els[g[0]].Ref
}

func namedLikeUser(e Element) bool {
	for _, s := range []string{strings.ToLower(e.Name), strings.ToLower(e.ID)} {
		if strings.Contains(s, "user") || strings.Contains(s, "login") || strings.Contains(s, "email") {
			return true
		}
	}
	return false
}

func hasToken(list, tok string) bool {
	for _, t := range strings.Fields(list) {
		if t == tok {
			return true
		}
	}
	return false
}

// pickUsername returns the index of the likely username field for the password at p, or -1.
func pickUsername(els []Element, g []int, p int) int {
	var cands []int
	for _, j := range g {
		if j != p && textLike(els[j]) && !els[j].Disabled {
			cands = append(cands, j)
		}
	}
	tiers := []func(Element) bool{
		func(e Element) bool { return hasToken(e.Autocomplete, "username") || hasToken(e.Autocomplete, "email") },
		func(e Element) bool { return e.Type == "email" },
		namedLikeUser,
	}
	for _, match := range tiers {
		before, after := -1, -1
		for _, j := range cands {
			if !match(els[j]) {
				continue
			}
			if j < p {
				before = j
			} else if after < 0 {
				after = j
			}
		}
		if before >= 0 {
			return before
		}
		if after >= 0 {
			return after
		}
	}
	nearest := -1
	for _, j := range cands {
		if j < p {
			nearest = j
		}
	}
	return nearest
}

// usernameStep reports whether e is the lone account field of a two-step login's first page.
func usernameStep(els []Element, g []int, e Element) bool {
	n := 0
	for _, j := range g {
		if isPassword(els[j]) {
			return false
		}
		if textLike(els[j]) && !els[j].Disabled {
			n++
		}
	}
	if hasToken(e.Autocomplete, "username") {
		return true
	}
	return n == 1 && (e.Type == "email" || namedLikeUser(e))
}

// signInEvidence returns "" when the password field p (with account field u, -1 for none) of
// group g is a sign-in form, else why it is not.
func signInEvidence(els []Element, g []int, p, u int) string {
	pw := els[p]
	n := 0
	for _, j := range g {
		if isPassword(els[j]) {
			n++
		}
	}
	if n != 1 {
		return "the form has more than one password field (a sign-up or change-password form)"
	}
	if hasToken(pw.Autocomplete, "new-password") || hasToken(pw.Autocomplete, "one-time-code") {
		return "the password field is for a new password or a one-time code"
	}
	if secretWords(pw) {
		return "the password field is labelled as a secret, key, token or PIN, not a sign-in password"
	}
	if why := otherSecrets(els, g, p); why != "" {
		return why
	}
	if u >= 0 && accountLike(els[u]) || hasToken(pw.Autocomplete, "current-password") {
		return ""
	}
	return NoAccountField
}

// NoAccountField is LoginForm.NotSignIn of a password form whose only missing evidence is the
// account field: what the second page of a two-step login looks like.
const NoAccountField = "no account field (user name or e-mail) and no autocomplete=current-password on the password field"

// otherSecrets returns why group g holds a secret-looking field other than skip, or "".
func otherSecrets(els []Element, g []int, skip int) string {
	for _, j := range g {
		e := els[j]
		if j == skip || e.Kind != "input" && e.Kind != "textarea" {
			continue
		}
		for _, tok := range []string{"new-password", "one-time-code", "cc-number", "cc-csc"} {
			if hasToken(e.Autocomplete, tok) {
				return "the form has another secret field (autocomplete " + tok + ")"
			}
		}
		if secretWords(e) {
			return "the form has another secret-looking field (a secret, key, token or PIN)"
		}
	}
	return ""
}

// accountLike reports whether e looks like the account field of a sign-in form.
func accountLike(e Element) bool {
	if hasToken(e.Autocomplete, "username") || hasToken(e.Autocomplete, "email") || e.Type == "email" {
		return true
	}
	for _, s := range []string{e.Name, e.ID, e.Text, e.Placeholder} {
		s = strings.ToLower(s)
		for _, w := range []string{"user", "login", "mail", "account"} {
			if strings.Contains(s, w) {
				return true
			}
		}
	}
	return false
}

// secretWords reports whether e's name, id, label or placeholder names a secret that is not a
// sign-in password: words are compared whole (after splitting at non-letters and between a
// lower-case letter and an upper-case one), except the compounds in secretParts.
func secretWords(e Element) bool {
	for _, s := range []string{e.Name, e.ID, e.Text, e.Placeholder} {
		low := strings.ToLower(s)
		for _, part := range secretParts {
			if strings.Contains(low, part) {
				return true
			}
		}
		for _, w := range words(s) {
			if secretWord[w] {
				return true
			}
		}
	}
	return false
}

var secretParts = []string{"secret", "token", "apikey", "webhook", "passphrase"}

var secretWord = map[string]bool{"key": true, "api": true, "pin": true, "otp": true, "totp": true, "mfa": true,
	"2fa": true, "cvc": true, "cvv": true, "signing": true}

// words splits s into lower-case words at anything but letters and digits, and where a lower-case
// letter is followed by an upper-case one ("apiKey" → api, key).
func words(s string) []string {
	var out []string
	var cur []rune
	var prevLower bool
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if prevLower && unicode.IsUpper(r) {
				flush()
			}
			cur = append(cur, r)
			prevLower = unicode.IsLower(r)
		default:
			flush()
			prevLower = false
		}
		if len(out) > 64 {
			break
		}
	}
	flush()
	return out
}
