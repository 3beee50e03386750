package snapshot

import (
	"slices"
	"strings"
)

// Which field of a group takes the account and which control submits it, and what a field
// is (an account, a person's details, a card, a search box, a secret). Weights are with the
// others in login_judge.go.

// pickAccount is the account field of the password at p in group g, or -1.
func (ix *index) pickAccount(g group, p int) int {
	best, bestScore := -1, accountMin-1
	nearest := -1
	for _, k := range g.members {
		if k < p && accountCandidate(ix.els[k]) {
			nearest = k
		}
	}
	for _, k := range g.members {
		x := ix.els[k]
		if k == p || !accountCandidate(x) {
			continue
		}
		s := 0
		switch {
		case hasToken(x.Autocomplete, "username") || hasToken(x.Autocomplete, "email"):
			s += accountAuto
		case hasToken(x.Autocomplete, "tel"):
			s += accountTel
		}
		switch x.Type {
		case "email":
			s += accountEmail
		case "tel":
			s += accountTel
		}
		if accountWords.matchAny(x.Name, x.ID, x.Text, x.Placeholder) {
			s += accountNamed
		}
		switch {
		case k < p:
			s += accountBefore
			if k == nearest {
				s += accountNearest
			}
		default:
			s += accountAfter
		}
		if s > bestScore {
			best, bestScore = k, s
		}
	}
	return best
}

// accountCandidate reports whether x could take the account: an enabled text-like input that
// is not clearly something else (a search box, a captcha, a code, a confirmation, a
// person's details not named as the account).
func accountCandidate(x Element) bool {
	if x.Disabled || x.Kind != "input" {
		return false
	}
	if (textLike(x) || x.Type == "search") && (hasToken(x.Autocomplete, "username") || hasToken(x.Autocomplete, "email")) {
		return true // a search-typed field marked as the account (some sites' way to stop autofill)
	}
	if !textLike(x) {
		return false
	}
	if searchField(x) || hardOtherWords.matchAny(x.Name, x.ID, x.Text, x.Placeholder) || hasToken(x.Autocomplete, "one-time-code") {
		return false
	}
	return !personField(x) || accountWords.matchAny(x.Name, x.ID, x.Text, x.Placeholder)
}

// accountLooking reports whether x says it takes an account: by autocomplete, type or words.
func accountLooking(x Element) bool {
	return hasToken(x.Autocomplete, "username") || hasToken(x.Autocomplete, "email") || hasToken(x.Autocomplete, "tel") ||
		x.Type == "email" || x.Type == "tel" || accountWords.matchAny(x.Name, x.ID, x.Text, x.Placeholder)
}

// hardOtherWords are text fields that never take the account, whatever else they say.
var hardOtherWords = newPhrases("captcha", "recaptcha", "security code", "verification code", "otp",
	"one time code", "one time", "token", "twofactor", "two factor", "2fa", "mfa", "totp",
	"confirm", "confirmation", "repeat", "retype", "re enter", "coupon", "promo", "search", "query", "keyword")

func searchField(x Element) bool {
	if x.Type == "search" {
		return true
	}
	n := strings.ToLower(x.Name)
	return n == "q" || n == "s" || n == "query" || purposeWords[search].matchAny(x.Name, x.ID, x.Placeholder, x.Text)
}

func personField(x Element) bool {
	for _, tok := range strings.Fields(x.Autocomplete) {
		switch tok {
		case "name", "given-name", "family-name", "additional-name", "bday", "street-address", "address-line1",
			"postal-code", "country", "country-name", "address-level1", "address-level2", "organization":
			return true
		}
	}
	return personWords.matchAny(x.Name, x.ID, x.Text, x.Placeholder)
}

// notPasswordSecret reports whether x is named as a secret that is no account's password: an API
// key, a token, a webhook's secret; or just "secret" without a label saying password.
func notPasswordSecret(x Element) bool {
	return secretFieldWords.matchAny(x.Name, x.ID, x.Text, x.Placeholder) ||
		weakSecretWords.matchAny(x.Name, x.ID, x.Text, x.Placeholder) && !passwordWords.matchAny(x.Text, x.Placeholder)
}

// codeField reports whether password field x takes a one-time code (an MFA code beside the
// password), not a password: said so, and not named a password ("Password/OTP" is one).
func codeField(x Element) bool {
	return codeFieldWords.matchAny(x.Name, x.ID, x.Text, x.Placeholder) && !passwordWords.matchAny(x.Name, x.ID)
}

func cardField(x Element) bool {
	for _, tok := range strings.Fields(x.Autocomplete) {
		if strings.HasPrefix(tok, "cc-") {
			return true
		}
	}
	return cardWords.matchAny(x.Name, x.ID, x.Text, x.Placeholder)
}

var cardWords = newPhrases("card number", "cardnumber", "cc number", "ccnumber", "credit card", "cvv", "cvc",
	"expiry", "expiration", "kartennummer", "numéro de carte", "número de tarjeta", "numero carta", "número do cartão")

// inField reports whether element k sits in field i's own box: under the field's parent
// or grandparent, one or two levels down.
func (ix *index) inField(k, i int) bool {
	e, x := ix.els[i], ix.els[k]
	if x.Frame != e.Frame {
		return false
	}
	for _, a := range e.Anc[:min(len(e.Anc), 2)] {
		if slices.Contains(x.Anc[:min(len(x.Anc), 2)], a) {
			return true
		}
	}
	return false
}

// pickSubmit is the control that submits group g of the field at i: a submit button of the
// form, else a button or a link whose words say sign in or go on, in the group or (for a
// form) just around it; -1 for none (Enter in the field).
func (ix *index) pickSubmit(g group, i int) int {
	best, bestScore := -1, 0
	pw := isPassword(ix.els[i])
	firstAfter := true // the next control after the field is the first one (its primary action)
	consider := func(k int, near bool) {
		x := ix.els[k]
		if x.Kind != "button" && x.Kind != "link" || x.Frame != ix.els[i].Frame {
			return
		}
		t := prepare(x.Text)
		if notSubmitWords.match(t) || x.Type == "reset" {
			return
		}
		if pw && purposeWords[forgotPassword].match(t) {
			return // beside a password field: the way to reset it, never its submit
		}
		if x.Text == "" && ix.inField(k, i) {
			return // an icon in the field's own box: a show-password toggle, a clear button
		}
		for _, p := range []purpose{signUp, forgotPassword, search, newsletter, checkout} {
			if x.Kind == "link" && purposeWords[p].match(t) {
				return // a link elsewhere
			}
		}
		s := 0
		if x.Kind == "link" {
			s += submitLink
		}
		if x.Kind == "button" {
			if (x.Type == "submit" || x.Type == "image") && x.Form == g.form {
				s += submitFormButton // the form's, or outside forms the container's own submit button
			} else {
				s += submitOtherButton
			}
		}
		worded := true
		switch {
		case purposeWords[signIn].match(t):
			s += submitPurposeWords
		case nextWords.match(t):
			s += submitNextWords
		default:
			worded = false
			for p := purpose(1); p < nPurposes; p++ {
				if purposeWords[p].match(t) && x.Kind == "button" {
					s += submitPurposeWords // a sign-up's or a reset's own button: it says what the group is
					worded = true
					break
				}
			}
		}
		if k > i {
			s += submitAfter
			if firstAfter && (worded || (x.Type == "submit" || x.Type == "image") && x.Form == g.form) {
				// A group's primary action follows its fields; "Create account" or "Sign
				// in with a code" come after it.
				s += submitFirstAfter
				firstAfter = false
			}
		} else {
			s += submitBefore
		}
		if !near {
			s--
		}
		min := submitMin
		if x.Kind == "link" {
			min = submitMinLink
		}
		if s >= min && s > bestScore {
			best, bestScore = k, s
		}
	}
	for _, k := range g.members {
		consider(k, true)
	}
	if best < 0 {
		firstAfter = true
		for _, k := range ix.around(g, 3) {
			consider(k, false)
		}
	}
	return best
}
