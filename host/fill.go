package host

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/loopback"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/wire"
)

// fillVerified types account and secret into form (found in st) and submits it. Before typing,
// after a fresh look at the page: the same document, the same field nodes still a sign-in form
// (page says which page of a sign-in it is), its frame, its action and every submitter on
// si.origin by POST, the fields visible, and the focus on exactly the field being typed into,
// right before and after typing (the account too). After typing and right before the submit,
// all of it once more, and the password field still a password field. The secret goes only
// through the hand-built Input.insertText; the caller still zeroes it. typed says whether the
// secret was (or may have been) typed: the caller then ends the attempt with endAttempt.
//
// For a loopback origin the process listening there is looked up once more right before
// typing: si.listener is the key brokerd saw when it released the secret ("" when the secret
// came from the person's terminal); another listener now, or an origin served by more than
// one process, is ORIGIN_AMBIGUOUS and nothing is typed.
func (si *signIn) fillVerified(ctx context.Context, st pageState, form snapshot.LoginForm, account string, secret []byte, page int) (typed bool, err error) {
	h, b, s := si.h, si.b, si.s
	fresh, form, err := si.recheck(ctx, st, form, page, "after the challenge was issued; nothing was typed")
	if err != nil {
		return false, err
	}
	// The browser is looked at again right before typing, not only before the release: the
	// person may take up to the presence timeout to answer, and a password typed by the person
	// (--interactive) had no look at all.
	if err := h.browserIntact("nothing was typed", false); err != nil {
		return false, err
	}
	s.markHistory(ctx, h, b)
	for _, ref := range []string{form.Username, form.Password} {
		if ref == "" {
			continue
		}
		if err := h.visible(ctx, b, s, fresh.refs[ref]); err != nil {
			return false, err
		}
	}
	// From before the first field is focused (a focus handler may navigate) until the submit,
	// no navigation of the page can start (navguard.go).
	gate, err := h.holdNavigations(ctx, b, s)
	if err != nil {
		return false, h.browserErr(err)
	}
	defer gate.end(ctx)
	// A credential saved without an account (a sign-in with a password alone) types none,
	// whatever field the page has for one.
	if form.Username != "" && account != "" {
		if err := si.typeAccount(ctx, fresh.refs[form.Username], st.document, account); err != nil {
			return false, err
		}
	}
	pw := fresh.refs[form.Password]
	// The last checks, as close to typing as the protocol allows: the same document (no
	// navigation slipped in) and the focus on exactly the verified password field. And
	// before anything is typed into it: Chromium must never save what the field will hold
	// with the history entry (Blink's form state, which a back step restores into a document
	// the taint does not know, and which goes into the profile's Sessions/ files); a
	// one-time code field is a text field, so that would be the code.
	if err := si.readyToType(ctx, pw, st.document, "password", true); err != nil {
		return false, err
	}
	if err := h.sameListener(si.origin, si.listener); err != nil {
		return false, err
	}
	if n, err := h.closeOpened(ctx, b, s); err != nil || n > 0 {
		if err == nil {
			err = wire.Errorf(wire.CodeDocumentChanged, "the login page opened a window since the person was asked (it could navigate the page); it was closed, and nothing was typed")
		}
		return false, err
	}
	if s.navPending.Load() || gate.tried(ctx) {
		return false, wire.Errorf(wire.CodeDocumentChanged, "a navigation of the page was under way when the password was to be typed; nothing was typed")
	}
	// And no window could have scripted the document since it loaded (openers.go).
	if d := s.loaded.Load(); d == nil || d.document != st.document {
		return false, wire.Errorf(wire.CodeDocumentChanged, "the page's document is not the one the host saw load; nothing was typed")
	} else if d.tainted.Load() {
		return false, errReachable
	}
	// Before the first character, too: from now on every request of the browser is held and
	// checked for it, and the page's other channels are shut (wayout.go).
	if err := si.guardSecret(ctx, st.document, account, secret, page == codePage); err != nil {
		return false, err
	}
	s.addTaint(st.document, pw) // before the first character: every later path clears it
	if err := b.InsertSecret(ctx, s.sid, secret); err != nil {
		return true, h.browserErr(err)
	}
	if gate.tried(ctx) {
		h.discardPage(ctx, b, s)
		si.ev.PageDiscarded = true
		return true, errNavDuringTyping
	}
	if err := si.focusedOn(ctx, pw, st.document, "password"); err != nil {
		// Focus or document moved while typing: the text may have gone anywhere in the
		// page, so the page goes, and nothing is submitted.
		h.discardPage(ctx, b, s)
		si.ev.PageDiscarded = true
		return true, err
	}
	// Right before the submit, after typing: the page had a moment with the password in it.
	after, form, err := si.recheck(ctx, st, form, page, "while the password was typed; nothing was submitted")
	if err != nil {
		return true, err
	}
	if gate.tried(ctx) {
		h.discardPage(ctx, b, s)
		si.ev.PageDiscarded = true
		return true, errNavDuringTyping
	}
	gate.end(ctx) // the host's own submit navigates
	s.drain()
	if err := si.submit(ctx, after, form); err != nil {
		return true, err
	}
	si.ev.Steps++
	return true, nil
}

// sameListener checks, for a loopback origin, that one process serves it and that it is the
// one brokerd saw at the release (want; "" to check only that one process serves it).
func (h *Host) sameListener(o, want string) error {
	if !loopback.IsLoopback(o) {
		return nil
	}
	var l loopback.Listener
	var err error
	// The sockets only: their key and whether they are one listener decide; who holds them
	// is looked up only to name them in the error.
	hardening.AsUser(func() { l, err = h.o.Loopback.Sockets(o) }) // the user's processes, as the user sees them
	switch {
	case errors.Is(err, loopback.ErrAmbiguous):
		return wire.Errorf(wire.CodeOriginAmbiguous, "%w; nothing was typed", err)
	case err != nil:
		return wire.Errorf(wire.CodeOriginUnverified, "%w; nothing was typed", err)
	case want != "" && l.Key() != want:
		if named, ferr := h.findAsUser(o); ferr == nil || errors.Is(ferr, loopback.ErrAmbiguous) {
			l = named
		}
		return wire.Errorf(wire.CodeOriginAmbiguous, "the process listening on %s changed since the release (now: %s); nothing was typed", o, l)
	}
	return nil
}

// findAsUser names the listener of o with its holders, as the user sees them.
func (h *Host) findAsUser(o string) (l loopback.Listener, err error) {
	hardening.AsUser(func() { l, err = h.o.Loopback.Find(o) })
	return l, err
}

// recheck takes a fresh look at the page and checks that it still shows st's document, that
// form's field nodes still form a sign-in form (and the password field is still of type
// password), and that checkForm still passes on si.origin. It returns the fresh look and the
// form as found in it; when says when a change happened, for the error.
func (si *signIn) recheck(ctx context.Context, st pageState, form snapshot.LoginForm, page int, when string) (pageState, snapshot.LoginForm, error) {
	fresh, err := si.h.look(ctx, si.b, si.s)
	if err != nil {
		return fresh, form, err
	}
	// The host marks the fields it types into autocomplete=off (readyToType): read them with
	// the autocomplete they showed before, or the mark would undo the evidence it was chosen on
	// (a password field whose autocomplete=current-password was the evidence, then typed
	// into, then thrown away as "no longer a sign-in form").
	if unmarked(st, form, &fresh) && page != codePage {
		fresh.forms = snapshot.LoginForms(fresh.outline)
	}
	if page == codePage {
		fresh.forms = snapshot.CodeForms(fresh.outline)
	}
	if fresh.document != st.document {
		return fresh, form, wire.Errorf(wire.CodeDocumentChanged, "the page changed %s", when)
	}
	var g snapshot.LoginForm
	if si.named != nil && page != codePage {
		// The fields the agent named: the same nodes, still of their kinds (named.go).
		if g, err = si.named.form(fresh); err != nil {
			return fresh, form, wire.Errorf(wire.CodeDocumentChanged, "the named fields changed %s: %v", when, err)
		}
	} else {
		var ok bool
		if g, ok = sameForm(st, form, fresh); !ok {
			return fresh, form, wire.Errorf(wire.CodeDocumentChanged, "the login form changed %s", when)
		}
		if page != codePage && g.Password != "" && fresh.refs[g.Password].Type != "password" {
			return fresh, form, wire.Errorf(wire.CodeDocumentChanged, "the password field is no longer a password field %s", when)
		}
		if !g.SignIn && !(page == secondPage && secondStep(g)) {
			return fresh, form, wire.Errorf(wire.CodeNoLoginForm, "the form is no longer a sign-in form %s: %s", when, g.NotSignIn)
		}
	}
	if err := checkForm(fresh, g, si.origin, si.also...); err != nil {
		return fresh, form, err
	}
	return fresh, g, nil
}

// unmarked gives the fields of form, in a fresh look at the page, the autocomplete they had in
// the look st they were chosen in, where the host's own autocomplete=off mark replaced it. It
// reports whether it changed one.
func unmarked(st pageState, form snapshot.LoginForm, fresh *pageState) bool {
	before := map[int64]string{}
	for _, ref := range []string{form.Username, form.Password} {
		if t, ok := st.refs[ref]; ok {
			if e, ok := elementOf(st.outline, ref); ok {
				before[t.BackendNodeID] = e.Autocomplete
			}
		}
	}
	changed := false
	for i, e := range fresh.outline.Elements {
		t, ok := fresh.refs[e.Ref]
		if !ok {
			continue
		}
		if ac, ok := before[t.BackendNodeID]; ok && e.Autocomplete == "off" && ac != "off" {
			fresh.outline.Elements[i].Autocomplete = ac
			changed = true
		}
	}
	return changed
}

// checkForm verifies, before anything is typed (and again right before the submit), what the
// network guard (wayout.go) cannot: that the fields' frame is on want, the credential's origin
// (the page around a frame can read what is typed into it). And, before anyone is asked, what
// can be seen from the form for certain: a form whose action, or a submit control the host
// would click whose formaction, is another origin than want and the also origins the person
// named would send the password there (FORM_ACTION_CROSS_ORIGIN). Where the fields go when a
// script sends them, with what method, through which control, is the guard's to check on
// every request; so fields outside a form, forms without a method or with GET, and links and
// plain buttons as the submit control are all used.
func checkForm(st pageState, f snapshot.LoginForm, want string, also ...string) error {
	for _, ref := range []string{f.Username, f.Password} {
		if ref == "" {
			continue
		}
		t, ok := st.refs[ref]
		if !ok {
			return wire.Errorf(wire.CodeNoLoginForm, "the login field is gone")
		}
		fo, err := origin.Canonical(originOf(t.DocumentURL))
		if err != nil || fo != want {
			return wire.Errorf(wire.CodeOriginMismatch, "the login field's frame is not on %s", want)
		}
	}
	allowed := func(o string) bool {
		c, err := origin.Canonical(o)
		return err == nil && (c == want || slices.Contains(also, c))
	}
	fe, inForm := formElement(st, f.Form)
	// An action with no origin ("null": javascript:, data:, about:) sends nothing by itself:
	// what its script sends is the guard's.
	if inForm && fe.ActionOrigin != "" && fe.ActionOrigin != "null" && !allowed(fe.ActionOrigin) {
		return wire.Errorf(wire.CodeFormCrossOrigin, "the login form submits to %s, not %s", clip.Text(fe.ActionOrigin, 200), want)
	}
	for _, sub := range f.Submitters {
		if sub.Ref != "" && sub.Ref == f.Submit && sub.ActionOrigin != "null" && !allowed(sub.ActionOrigin) {
			return wire.Errorf(wire.CodeFormCrossOrigin, "the login form's %s submit button submits to %s, not %s",
				shown(sub), clip.Text(sub.ActionOrigin, 200), want)
		}
	}
	return nil
}

func shown(s snapshot.Submitter) string {
	if s.Rendered {
		return "visible"
	}
	return "hidden"
}

// formElement finds the form of ref in st's outline.
func formElement(st pageState, ref string) (snapshot.Element, bool) {
	e, ok := elementOf(st.outline, ref)
	return e, ok && e.Kind == "form"
}

// sameForm finds, in a fresh look at the page, the login form whose fields are the same DOM
// nodes as f's in the earlier look.
func sameForm(old pageState, f snapshot.LoginForm, fresh pageState) (snapshot.LoginForm, bool) {
	node := func(st pageState, ref string) int64 {
		if ref == "" {
			return 0
		}
		return st.refs[ref].BackendNodeID
	}
	for _, g := range fresh.forms {
		if node(fresh, g.Password) == node(old, f.Password) && node(fresh, g.Username) == node(old, f.Username) {
			return g, true
		}
	}
	return snapshot.LoginForm{}, false
}

// focusedOn checks, from an isolated JavaScript world the page's scripts cannot reach (fixed
// host code, never the caller's), that the document still has focus and its focused element
// is exactly t, and that the main frame still shows document. what names the field.
func (si *signIn) focusedOn(ctx context.Context, t snapshot.Target, document, what string) error {
	h, b, s := si.h, si.b, si.s
	// Bounded: a page with a navigation under way answers no fixed function until it ends.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := h.sameDocument(ctx, b, s, document, what); err != nil {
		return err
	}
	focused, err := h.callFixed(ctx, b, s, t.BackendNodeID, t.FrameID, fnFocused)
	if err != nil {
		if nerr := navUnderWay(s, what); nerr != nil {
			return nerr
		}
		return err
	}
	if !focused {
		return errNotFocused(what)
	}
	return nil
}

// readyToType gives the page and the field t the focus, then checks, as focusedOn does, the document and
// that the field has the focus, and selects its content, so that what is typed replaces it:
// one fixed function (fnTypeReady), which with noSave first marks the field
// autocomplete=off. what names the field.
func (si *signIn) readyToType(ctx context.Context, t snapshot.Target, document, what string, noSave bool) error {
	h, b, s := si.h, si.b, si.s
	// The page's window must have the focus for its document to have it: a page the browser
	// opened at launch starts without it (input events, such as a select-all, would give it).
	if err := b.Call(ctx, s.sid, "Page.bringToFront", nil, nil); err != nil {
		return h.browserErr(err)
	}
	if err := b.Call(ctx, s.sid, "DOM.focus", map[string]any{"backendNodeId": t.BackendNodeID}, nil); err != nil {
		return h.nodeErr(err)
	}
	if err := navUnderWay(s, what); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := h.sameDocument(ctx, b, s, document, what); err != nil {
		return err
	}
	var status string
	for try := 0; ; try++ {
		if err := h.callFixedWith(ctx, b, s, t.BackendNodeID, t.FrameID, fnTypeReady, []any{noSave}, &status); err != nil {
			if nerr := navUnderWay(s, what); nerr != nil {
				return nerr
			}
			return err
		}
		if status != "no_page_focus" || try > 0 {
			break
		}
		// The window's focus (Page.bringToFront) had not reached the page yet: an input event
		// gives it in order (the browser focuses the page before it delivers the event).
		if err := selectAll(ctx, b, s); err != nil {
			return h.browserErr(err)
		}
	}
	switch status {
	case "ok":
		return nil
	case "no_save":
		return wire.Errorf(wire.CodeDocumentChanged, "the field did not take autocomplete=off; nothing was typed")
	default:
		return errNotFocused(what)
	}
}

func errNotFocused(what string) error {
	return wire.Errorf(wire.CodeDocumentChanged, "the focus is not on the verified %s field; nothing more was typed or submitted", what)
}

// sameDocument checks that the main frame still shows document (DOCUMENT_CHANGED when it
// navigated; a navigation under way is said so). what names the field being typed.
func (h *Host) sameDocument(ctx context.Context, b *cdp.Browser, s *session, document, what string) error {
	now, err := h.documentID(ctx, b, s)
	if err != nil {
		if nerr := navUnderWay(s, what); nerr != nil {
			return nerr
		}
		return err
	}
	if now != document {
		return wire.Errorf(wire.CodeDocumentChanged, "the page navigated while the %s was being typed", what)
	}
	return nil
}

func originOf(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	host, _, _ := strings.Cut(rest, "/")
	host, _, _ = strings.Cut(host, "?")
	host, _, _ = strings.Cut(host, "#")
	return scheme + "://" + host
}

// enabled waits, a moment at most (EnableWait), for the submit control ref of st to be enabled:
// pages keep their sign-in button disabled until the fields are filled, and enable it from
// their input events, which the typing just fired.
func (si *signIn) enabled(ctx context.Context, st pageState, ref string) {
	disabled := func(st pageState, ref string) bool {
		e, _ := elementOf(st.outline, ref)
		return e.Disabled
	}
	if !disabled(st, ref) {
		return
	}
	node := st.refs[ref].BackendNodeID
	deadline := time.Now().Add(EnableWait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		fresh, err := si.h.look(ctx, si.b, si.s)
		if err != nil {
			return
		}
		for r, t := range fresh.refs {
			if t.BackendNodeID == node && !disabled(fresh, r) {
				return
			}
		}
	}
}

// typable refuses, before anyone is asked, a form whose fields cannot take what would be typed
// into them, and returns the look it judged (a fresher one when it waited):
//   - a disabled account or password field takes no focus (a page may enable its fields a
//     moment after it loads, or once a script of its own has run: waited for, EnableWait at
//     most, on the same document);
//   - an account longer than its field's maxlength would be cut by the browser as it is
//     typed, and another account than the person's sent (the field is most likely not the
//     account's: a branch or sub-account number beside it, a card number).
//
// The password's length is never compared with its field: it is not known before the release,
// and a refusal after it would tell a page's author how long the password is.
func (si *signIn) typable(ctx context.Context, st pageState, form snapshot.LoginForm, account string) (pageState, snapshot.LoginForm, error) {
	deadline := time.Now().Add(EnableWait)
	for {
		what := disabledField(st, form)
		if what == "" {
			break
		}
		if !time.Now().Before(deadline) {
			return st, form, wire.Errorf(wire.CodeNotInteractable,
				"the sign-in form's %s field is disabled: the page has not enabled it within %v; nothing was asked for or released", what, EnableWait).
				WithHint("the page enables its sign-in fields itself (after a script, a choice or a checkbox of its own: 'headless snapshot' shows what it asks for); sign in again once they are enabled")
		}
		select {
		case <-ctx.Done():
			return st, form, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		fresh, err := si.h.look(ctx, si.b, si.s)
		if err != nil {
			return st, form, err
		}
		if fresh.document != st.document {
			return st, form, wire.Errorf(wire.CodeDocumentChanged,
				"the page changed while the sign-in waited for its %s field to be enabled; nothing was asked for or released", what)
		}
		var f snapshot.LoginForm
		var ok bool
		if si.named != nil {
			if f, err = si.named.form(fresh); err != nil {
				return st, form, err
			}
		} else if f, ok = enabledForm(st, form, fresh); !ok {
			return st, form, wire.Errorf(wire.CodeNoLoginForm,
				"the sign-in form left the page while the sign-in waited for its %s field to be enabled; nothing was asked for or released", what)
		}
		st, form = fresh, f
	}
	if acc, ok := elementOf(st.outline, form.Username); ok && account != "" && acc.MaxLength > 0 && units(account) > acc.MaxLength {
		err := wire.Errorf(wire.CodeNoLoginForm,
			"the field taken for the account holds at most %d characters and the credential's account has %d: typed there, it would be cut; nothing was asked for or released",
			acc.MaxLength, units(account))
		if form.Password == "" {
			// A first step's fields cannot be named (a named sign-in starts at its password).
			return st, form, err.WithHint("that field is most likely not the account's (a branch or sub-account number, a card number): 'headless snapshot' shows the page's fields; sign in where the site asks for the account and the password together")
		}
		return st, form, err.WithHint("that field is most likely not the account's (a branch or sub-account number, a card number): name the fields from a fresh 'headless snapshot' with 'headless auth login --alias ALIAS --password-field REF --account-field REF'")
	}
	return st, form, nil
}

// enabledForm finds, in a fresh look at the page, the sign-in form of form's password field
// (of its account field for a first step), as the detection judges it now: an account field
// it left out while it was disabled may be in it.
func enabledForm(old pageState, form snapshot.LoginForm, fresh pageState) (snapshot.LoginForm, bool) {
	ref := cmp.Or(form.Password, form.Username)
	node := old.refs[ref].BackendNodeID
	for _, g := range fresh.forms {
		r := g.Username
		if form.Password != "" {
			r = g.Password
		}
		// Still what the sign-in took it for: a sign-in form, or a password step's.
		if r != "" && fresh.refs[r].BackendNodeID == node && (g.SignIn || !form.SignIn && secondStep(g)) {
			return g, true
		}
	}
	return snapshot.LoginForm{}, false
}

// disabledField names the field of form that the browser keeps disabled in st ("account",
// "password"), or "" (aria-disabled alone keeps nothing from the typing).
func disabledField(st pageState, form snapshot.LoginForm) string {
	for _, f := range []struct{ ref, what string }{{form.Username, "account"}, {form.Password, "password"}} {
		if e, ok := elementOf(st.outline, f.ref); ok && e.Inert {
			return f.what
		}
	}
	return ""
}

// elementOf finds the element of ref in o.
func elementOf(o snapshot.Outline, ref string) (snapshot.Element, bool) {
	if ref == "" {
		return snapshot.Element{}, false
	}
	for _, e := range o.Elements {
		if e.Ref == ref {
			return e, true
		}
	}
	return snapshot.Element{}, false
}

// units is the length of s as a page counts it (maxlength counts UTF-16 code units).
func units(s string) int {
	n := 0
	for _, r := range s {
		n += max(1, utf16.RuneLen(r))
	}
	return n
}

// EnableWait bounds how long a sign-in waits for a disabled submit control to be enabled.
const EnableWait = 2 * time.Second

func (h *Host) documentID(ctx context.Context, b *cdp.Browser, s *session) (string, error) {
	var tree struct {
		FrameTree struct {
			Frame struct {
				ID       string `json:"id"`
				LoaderID string `json:"loaderId"`
			} `json:"frame"`
		} `json:"frameTree"`
	}
	if err := b.Call(ctx, s.sid, "Page.getFrameTree", nil, &tree); err != nil {
		return "", h.browserErr(err)
	}
	return tree.FrameTree.Frame.ID + "/" + tree.FrameTree.Frame.LoaderID, nil
}

// visible checks that the element is still connected and has a box.
func (h *Host) visible(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target) error {
	var q struct {
		Quads [][]float64 `json:"quads"`
	}
	if err := b.Call(ctx, s.sid, "DOM.getContentQuads", map[string]any{"backendNodeId": t.BackendNodeID}, &q); err != nil || len(q.Quads) == 0 {
		return wire.Errorf(wire.CodeNoLoginForm, "the login field is no longer visible; nothing was typed")
	}
	return nil
}

func selectAll(ctx context.Context, b *cdp.Browser, s *session) error {
	for _, typ := range []string{"keyDown", "keyUp"} {
		ev := map[string]any{"type": typ, "key": "a", "code": "KeyA", "modifiers": 2, "windowsVirtualKeyCode": 65}
		if typ == "keyDown" {
			ev["commands"] = []string{"selectAll"}
		}
		if err := b.Call(ctx, s.sid, "Input.dispatchKeyEvent", ev, nil); err != nil {
			return err
		}
	}
	return nil
}

// typeAccount replaces the content of the account field t with account, with the same focus
// checks as the password: the focus on exactly t (not a frame that took it) right before and
// after typing.
func (si *signIn) typeAccount(ctx context.Context, t snapshot.Target, document, account string) error {
	h, b, s := si.h, si.b, si.s
	if err := si.readyToType(ctx, t, document, "account", false); err != nil {
		return err
	}
	if err := b.Call(ctx, s.sid, "Input.insertText", map[string]any{"text": account}, nil); err != nil {
		return h.browserErr(err)
	}
	return si.focusedOn(ctx, t, document, "account")
}

// submit clicks the form's submit control (a submit button, a plain button or a link the
// page's script answers), whose formaction checkForm verified; without one it presses Enter
// in the last field typed into (the password, or the account of a first step), which has
// the focus. Wherever the page then sends the fields, the network guard checks it.
func (si *signIn) submit(ctx context.Context, st pageState, f snapshot.LoginForm) error {
	if t, ok := st.refs[f.Submit]; f.Submit != "" && ok {
		si.enabled(ctx, st, f.Submit)
		return si.h.clickNode(ctx, si.b, si.s, t)
	}
	if f.Submit != "" {
		return wire.Errorf(wire.CodeNoLoginForm, "the login form's submit control is gone")
	}
	return pressKey(ctx, si.b, si.s, "Enter")
}
