package snapshot

import (
	"net/url"
	"strconv"
	"strings"
)

// Judging a group: what it is for (a score per purpose from the signals below), which field
// takes the account and which control submits it. The weights are data, measured on
// DuckDuckGo's labelled corpus (host/snapshot/internal/ddgeval).

// source is where a purpose's words were read.
type source uint8

const (
	srcSubmit  source = iota // the group's submit control
	srcButton                // its other buttons
	srcHeading               // a heading inside the group, else the last one before it
	srcTitle                 // the page's title
	srcAttr                  // the form's or submit control's id, name, class and action path
	srcURL                   // the page's path
	nSources
)

// wordWeight[s][p] is what words of purpose p read at source s add to p's score.
var wordWeight = [nSources][nPurposes]int{
	//          sign-in sign-up change forgot newsletter checkout search
	srcSubmit:  {6, 6, 6, 6, 6, 5, 6},
	srcButton:  {1, 1, 1, 0, 1, 1, 1},
	srcHeading: {4, 4, 5, 5, 3, 3, 2},
	srcTitle:   {2, 2, 2, 2, 1, 1, 0},
	srcAttr:    {3, 3, 3, 4, 3, 3, 4},
	srcURL:     {2, 2, 2, 2, 1, 1, 1},
}

// Structural signals and their weights.
const (
	wOnePassword       = 2 // signIn: one password field in the group
	wTwoPasswords      = 6 // signUp (and change): a password and its confirmation
	wThreePasswords    = 8 // change: current, new, confirmation
	wCurrentPassword   = 5 // signIn: autocomplete=current-password
	wNewPassword       = 2 // signUp: autocomplete=new-password on the one password field
	wNewPasswordWords  = 4 // signUp: the password field says new, confirm, repeat…
	wUsernameAuto      = 2 // signIn: autocomplete=username on the account field
	wPersonField       = 3 // signUp, per name, birth or address field (at most wPersonMax)
	wPersonMax         = 9
	wCardField         = 8 // checkout: a card number or security code
	wRemember          = 3 // signIn: a remember-me checkbox
	wTerms             = 2 // signUp: a terms or consent checkbox
	wForgotLink        = 3 // signIn: a forgot-password link in the group
	wSearchField       = 5 // search: a search box as the lone field
	wSecretField       = 6 // not a sign-in: the password field is an API key, a token…
	wHaveAccount       = 3 // signUp: "already have an account?" in or just around the group
	wNoAccount         = 3 // signIn: "don't have an account?"
	wPasswordRules     = 4 // signUp: a new password's rules beside the field
	wExtraField        = 1 // signUp, per text field besides the account field (at most wPersonMax)
	firstStepMin       = 2 // the sign-in score a first step needs from its own group
	wNextStep          = 2 // signIn: a lone field whose control says next or continue (stepWords)
	passwordOnlyMin    = 4 // the sign-in score a password field with no account field needs from its group
	accountMin         = 3 // the score a field needs to be taken as the account field
	submitMin          = 4 // the score a control needs to be taken as the submit control
	submitMinLink      = 4
	accountBefore      = 3
	accountNearest     = 1
	accountAfter       = -2
	accountAuto        = 6
	accountEmail       = 4
	accountTel         = 2
	accountNamed       = 4
	submitFormButton   = 5 // a submit button of the form
	submitOtherButton  = 1
	submitPurposeWords = 6
	submitNextWords    = 4
	submitAfter        = 1
	submitFirstAfter   = 3 // the first control after the field
	submitBefore       = -2
	submitLink         = -2 // a link says sign in less surely than a button: often it leads to the sign-in
)

// judgment is what a group was found to be.
type judgment struct {
	score   [nPurposes]int
	purpose purpose // the highest score (signIn on a tie with it: a sign-in's own words win)
	account int     // element index of the account field, -1 for none
	submit  int     // element index of the submit control, -1 for none (Enter)
	why     string  // why the group is not a sign-in, "" when it is
}

// page is what the judging reads of the whole page.
type page struct {
	title, path text
	rawPath     string // the path's words as actionPath gives them
}

func pageOf(o Outline) page {
	p := page{title: prepare(o.Title), rawPath: actionPath(o.URL)}
	p.path = prepare(p.rawPath)
	return p
}

// judge scores group g of the field at i (a password field, or a first step's field).
func (ix *index) judge(pg page, g group, i int) judgment {
	j := judgment{account: -1, submit: -1}
	pw := isPassword(ix.els[i])
	pageWide := 0 // the sign-in score read from the title and the address, not the group
	read := func(s source, t text, ofPage bool) {
		for p := purpose(0); p < nPurposes; p++ {
			if purposeWords[p].match(t) {
				j.score[p] += wordWeight[s][p]
				if p == signIn && ofPage {
					pageWide += wordWeight[s][p]
				}
			}
		}
	}
	add := func(s source, t text) { read(s, t, s == srcTitle || s == srcURL) }
	j.account = i
	if pw {
		j.account = ix.pickAccount(g, i)
	}
	j.submit = ix.pickSubmit(g, i)
	if j.submit >= 0 {
		s := ix.els[j.submit]
		add(srcSubmit, prepare(s.Text))
		add(srcAttr, prepare(s.Name+" "+s.ID+" "+s.Class))
	}
	if g.form != "" {
		if fi, ok := ix.byRef[g.form]; ok {
			f := ix.els[fi]
			// A form posting to the page's own address (one without an action) says no more
			// of itself than the address does: the page's evidence, not the group's.
			a := actionPath(f.Action)
			if a == pg.rawPath {
				read(srcAttr, prepare(a), true)
				a = ""
			}
			add(srcAttr, prepare(f.Name+" "+f.ID+" "+f.Class+" "+a+" "+f.Text))
		}
	}
	heading := ""
	var passwords, persons, texts int
	var haveAccount, noAccount, rules, forgot bool
	for _, k := range g.members {
		x := ix.els[k]
		switch {
		case k == j.submit:
		case x.Kind == "heading":
			if heading == "" {
				heading = x.Text
			}
		case (x.Kind == "link" || x.Kind == "button" || pw && x.Kind == "text") && purposeWords[forgotPassword].matchAny(x.Text):
			// "Forgot your password?" beside the fields is a sign-in's (a forgot-password
			// form's own button is its submit, read above).
			forgot = true
		case x.Kind == "button":
			if !notSubmitWords.matchAny(x.Text) {
				add(srcButton, prepare(x.Text))
			}
		case x.Kind == "text" || x.Kind == "link":
			t := prepare(x.Text)
			switch { // "Don't have an account?" before "have an account"
			case noAccountWords.match(t):
				noAccount = true
			case haveAccountWords.match(t):
				haveAccount = true
			case passwordRuleWords.match(t) && pw:
				rules = true
			}
		case ix.notPassword[k]:
		case isPassword(x):
			passwords++
			if x.Ref != ix.els[i].Ref && hasToken(x.Autocomplete, "new-password") || newPasswordWords.matchAny(x.Name, x.ID, x.Text, x.Placeholder) {
				j.score[signUp] += wNewPasswordWords
			}
			if hasToken(x.Autocomplete, "current-password") {
				j.score[signIn] += wCurrentPassword
			}
		case x.Kind == "input" && (x.Type == "checkbox" || x.Type == "radio"):
			switch {
			case rememberWords.matchAny(x.Text, x.Name, x.ID):
				j.score[signIn] += wRemember
			case termsWords.matchAny(x.Text, x.Name, x.ID):
				j.score[signUp] += wTerms
			}
		case x.Kind == "input" || x.Kind == "select":
			// A field with a value already (a default the page set: a server's path, a
			// namespace) or one asking for a web address is a setting, not a new account's
			// personal field: a sign-up's extra fields start empty.
			if textLike(x) && !x.Disabled && accountCandidate(x) && (k == j.account || x.Value == "" && !addressField(x)) {
				texts++
			}
			// The account field is the account's, whatever else its label says ("WWU ID or
			// given name and surname"); a field called just "name" elsewhere is a person's.
			if cardField(x) {
				j.score[checkout] += wCardField
			} else if k != j.account && (personField(x) || textLike(x) && namedOnlyWords.matchAny(x.Name, x.ID, x.Text, x.Placeholder)) && persons < wPersonMax/wPersonField {
				persons++
				j.score[signUp] += wPersonField
				j.score[checkout] += wPersonField / 2
			}
		}
	}
	if haveAccount {
		j.score[signUp] += wHaveAccount
	}
	if forgot {
		j.score[signIn] += wForgotLink
	}
	if noAccount {
		j.score[signIn] += wNoAccount
	}
	if rules {
		j.score[signUp] += wPasswordRules
	}
	if texts > 1 {
		j.score[signUp] += min(texts-1, wPersonMax) * wExtraField
	}
	if heading == "" && len(g.members) > 0 {
		heading = ix.headingBefore(g.members[0])
	}
	add(srcHeading, prepare(heading))
	add(srcTitle, pg.title)
	add(srcURL, pg.path)
	switch {
	case passwords == 1:
		j.score[signIn] += wOnePassword
	case passwords == 2:
		j.score[signUp] += wTwoPasswords
		j.score[changePassword] += wTwoPasswords / 2
	case passwords >= 3:
		j.score[changePassword] += wThreePasswords
	}
	if pw {
		e := ix.els[i]
		if hasToken(e.Autocomplete, "new-password") {
			j.score[signUp] += wNewPassword
		}
		if notPasswordSecret(e) {
			j.score[signUp] += wSecretField // scored as "not a sign-in"; the reason says what
		}
		// A group with a password field is no forgot-password, newsletter or search form,
		// whatever a button of it says ("Forgot password?", "Find account").
		j.score[forgotPassword], j.score[newsletter], j.score[search] = 0, 0, 0
	} else {
		e := ix.els[i]
		if searchField(e) {
			j.score[search] += wSearchField
		}
		if j.submit >= 0 && stepWords.matchAny(ix.els[j.submit].Text) {
			j.score[signIn] += wNextStep
		}
	}
	if j.account >= 0 && hasToken(ix.els[j.account].Autocomplete, "username") {
		j.score[signIn] += wUsernameAuto
	}
	// A sign-in needs the highest score of all, strictly: on a tie the group is the other.
	j.purpose = signIn
	for p := purpose(1); p < nPurposes; p++ {
		if j.score[p] >= j.score[j.purpose] && j.score[p] > 0 {
			j.purpose = p
		}
	}
	if pw && g.crowded && !ix.selfContained(g, i) {
		passwords++ // the other password field next to it is this form's
		j.score[signUp] += wTwoPasswords
	}
	other := ""
	for _, k := range g.members {
		x := ix.els[k]
		if k == i || x.Kind != "input" && x.Kind != "textarea" || isPassword(x) && !ix.notPassword[k] {
			continue
		}
		// (A one-time-code field beside the password is a sign-in's optional second factor.)
		switch {
		case x.Type != "checkbox" && x.Type != "radio" && notPasswordSecret(x):
			other = "an API key, token or other secret"
		}
	}
	switch {
	case other != "":
		j.why = "the form asks for " + other + " beside the field: not a sign-in form"
	case passwords > 1:
		j.why = "the form has more than one password field (a sign-up or change-password form)"
	case pw && notPasswordSecret(ix.els[i]):
		j.why = "the password field is labelled as an API key, token or other secret, not a sign-in password"
	case j.purpose != signIn:
		j.why = "the form looks like a " + j.purpose.String() + " form, not a sign-in form"
	case !pw && !accountLooking(ix.els[i]):
		j.why = "a lone field that does not look like an account field (user name, e-mail, phone) is not a first step"
	case !pw && (j.score[signIn]-pageWide < firstStepMin || j.submit < 0 && !hasToken(ix.els[i].Autocomplete, "username")):
		j.why = "a lone field with no sign-in words around it (button, heading, autocomplete) is not a first step"
	case pw && j.account < 0 && j.score[signIn]-pageWide-wOnePassword < passwordOnlyMin:
		j.why = "a password field alone, with no account field and no sign-in words around it (button, heading, autocomplete)"
	}
	return j
}

func (j judgment) scores() string {
	var parts []string
	for p := purpose(0); p < nPurposes; p++ {
		if j.score[p] != 0 {
			parts = append(parts, p.String()+"="+strconv.Itoa(j.score[p]))
		}
	}
	return strings.Join(parts, " ")
}

// actionPath is the path of a form's action URL, for its words.
func actionPath(action string) string {
	u, err := url.Parse(action)
	if err != nil {
		return ""
	}
	return strings.ReplaceAll(u.Path, "/", " ")
}

// addressField is a field asking for a web address (a server to connect to), not a person's.
func addressField(x Element) bool {
	return x.Type == "url" || strings.HasPrefix(x.Placeholder, "https://") || strings.HasPrefix(x.Placeholder, "http://")
}
