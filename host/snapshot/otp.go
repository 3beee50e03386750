package snapshot

import "strings"

// CodeForms lists the one-time-code steps of o in document order, each as a LoginForm whose
// Password is the code field (the field a one-time code is typed into) and Username is "".
// A code field is an enabled text, tel or number input, in a group with no password field,
// that is
//
//   - marked autocomplete=one-time-code; or
//   - inputmode=numeric with a code-like name, id, label or placeholder (code, OTP, TOTP, 2FA,
//     MFA, verification, authenticator, one-time); or
//   - the only text-like input of its group, short (maxlength 4–10, or a code-like name or
//     label), on a page whose title or headings speak of verification or a code.
//
// SignIn is true (the caller still applies every check of a sign-in form: frame, action and
// every submitter on the credential's origin by POST). CodeForms reads only the outline.
func CodeForms(o Outline) []LoginForm {
	ix := newIndex(o)
	els := ix.els
	verifyPage := codeWords(o.Title)
	for _, e := range els {
		if e.Kind == "heading" && codeWords(e.Text) {
			verifyPage = true
		}
	}
	var out []LoginForm
	for i, e := range els {
		if e.Kind != "input" || e.Disabled || !(textLike(e) || e.Type == "number") {
			continue
		}
		g := ix.groupOf(i)
		inputs, passwords := 0, 0
		for _, j := range g.members {
			switch {
			case isPassword(els[j]):
				passwords++
			case els[j].Kind == "input" && (textLike(els[j]) || els[j].Type == "number") && !els[j].Disabled:
				inputs++
			}
		}
		if passwords > 0 {
			continue
		}
		named := codeWords(e.Name) || codeWords(e.ID) || codeWords(e.Text) || codeWords(e.Placeholder)
		short := e.MaxLength >= 4 && e.MaxLength <= 10
		ok := hasToken(e.Autocomplete, "one-time-code") ||
			e.InputMode == "numeric" && named ||
			inputs == 1 && verifyPage && (short || named)
		if !ok {
			continue
		}
		lf := ix.loginForm(g, judgment{account: -1, submit: ix.pickSubmit(g, i)})
		lf.Password = e.Ref
		lf.Label = e.Text
		lf.SignIn = true
		out = append(out, lf)
	}
	return out
}

// codeWords reports whether s speaks of a one-time code or a verification step.
func codeWords(s string) bool {
	s = strings.ToLower(s)
	for _, w := range []string{"code", "otp", "2fa", "mfa", "verification", "verify", "authenticator", "one-time", "one time", "two-factor", "two factor"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
