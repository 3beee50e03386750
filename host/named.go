package host

import (
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/wire"
)

// When the host's guess of a sign-in form is wrong, the agent names the fields
// (auth login --password-field REF [--account-field REF] [--submit REF]): refs of the
// session's last snapshot, taken as the DOM nodes they point at. Naming a field changes which
// nodes are typed into and clicked, nothing else: the password field must be an input of type
// password in the top document, the account field a text-like input, the submit control a
// button, link or input; every other check of a sign-in (the credential's origin and known
// sign-in paths, frames, windows, the document, the focus) applies as to a guessed form, and
// the network guard decides where the values may go.

// namedFields are the DOM nodes the agent named for a sign-in (0: not named).
type namedFields struct {
	password, account, submit int64
}

// namedFieldsOf resolves the refs of p against the session's last snapshot (before a sign-in
// clears it); nil when p names none.
func (s *session) namedFieldsOf(p control.AuthParams) (*namedFields, error) {
	if p.PasswordField == "" {
		if p.AccountField != "" || p.Submit != "" {
			return nil, wire.Errorf(wire.CodeInvalidArgument, "an account field or submit control is named only with the password field")
		}
		return nil, nil
	}
	n := &namedFields{}
	for _, f := range []struct {
		ref string
		id  *int64
	}{{p.PasswordField, &n.password}, {p.AccountField, &n.account}, {p.Submit, &n.submit}} {
		if f.ref == "" {
			continue
		}
		t, err := s.target(f.ref)
		if err != nil {
			return nil, err
		}
		*f.id = t.BackendNodeID
	}
	return n, nil
}

// form builds, from a look at the page, the sign-in form of the named fields, or says why
// they cannot be one.
func (n *namedFields) form(st pageState) (snapshot.LoginForm, error) {
	var f snapshot.LoginForm
	find := func(id int64) (snapshot.Element, bool) {
		if id == 0 {
			return snapshot.Element{}, false
		}
		for ref, t := range st.refs {
			if t.BackendNodeID == id {
				if e, ok := elementOf(st.outline, ref); ok {
					return e, true
				}
			}
		}
		return snapshot.Element{}, false
	}
	pw, ok := find(n.password)
	switch {
	case !ok:
		return f, wire.Errorf(wire.CodeRefStale, "the named password field is no longer in the page").
			WithHint("take a fresh snapshot and name the fields from it")
	case pw.Kind != "input" || pw.Type != "password":
		return f, errNamed("the named password field is not an input of type password")
	case pw.Frame != "":
		return f, errFramedForm
	}
	f.Password, f.Form, f.Label = pw.Ref, pw.Form, pw.Text
	if n.account != 0 {
		acc, ok := find(n.account)
		switch {
		case !ok:
			return f, wire.Errorf(wire.CodeRefStale, "the named account field is no longer in the page")
		case acc.Kind != "input" || !textEntry(acc.Type):
			return f, errNamed("the named account field is not a text input (text, e-mail, telephone or number)")
		case acc.Frame != "":
			return f, errFramedForm
		}
		f.Username = acc.Ref
	}
	if n.submit != 0 {
		sub, ok := find(n.submit)
		switch {
		case !ok:
			return f, wire.Errorf(wire.CodeRefStale, "the named submit control is no longer in the page")
		case sub.Kind != "button" && sub.Kind != "link" && !(sub.Kind == "input" && (sub.Type == "submit" || sub.Type == "button" || sub.Type == "image")):
			return f, errNamed("the named submit control is not a button, a link or an input button")
		case sub.Frame != "":
			return f, errFramedForm
		}
		f.Submit = sub.Ref
	}
	// What the outline knows of the password's form (its action, its submitters).
	for _, g := range st.forms {
		if g.Password == f.Password {
			f.ActionOrigin, f.Method, f.Submitters = g.ActionOrigin, g.Method, g.Submitters
			if n.submit == 0 {
				f.Submit = g.Submit
			}
			break
		}
	}
	f.SignIn = true // the agent says so; every other check still applies
	return f, nil
}

// textEntry reports whether an input of type t takes an account name.
func textEntry(t string) bool {
	switch t {
	case "", "text", "email", "tel", "number":
		return true
	}
	return false
}

func errNamed(msg string) error {
	return wire.Errorf(wire.CodeInvalidArgument, "%s; nothing was asked for or released", msg).
		WithHint("take the refs from the last snapshot: headless auth login --password-field REF (an input of type password) --account-field REF (a text input) --submit REF (a button or link)")
}
