//go:build linux

package tests

// Issue 44 against real Chromium: dialogs held for the agent (dialog accept/dismiss, the hold,
// beforeunload, a loop stopped, a secret never answered or handed back), the windows a page
// opens (session pages, page select, back to the opener, an identity provider's pop-up signed
// in on by alias, and the pop-ups that must not be), and the small verbs (reload, forward,
// key chords, double and right clicks, network idle).

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

type dialogResult struct {
	Type, Message, Default, Dismissed string
	Open                              bool
}

type browsePage struct {
	Session, URL, Title string
	AuthRequired        *struct {
		Challenge string   `json:"challenge"`
		Aliases   []string `json:"aliases"`
	} `json:"auth_required"`
	Dialog *dialogResult `json:"dialog"`
	Pages  int           `json:"pages"`
}

type browseSnap struct {
	outline
	Title  string        `json:"title"`
	Dialog *dialogResult `json:"dialog"`
	Pages  int           `json:"pages"`
}

type pageList struct {
	Session string `json:"session"`
	Pages   []struct {
		Index      int
		URL, Title string
		Opener     int
		Current    bool
		Closed     bool
		Dialog     *dialogResult
	} `json:"pages"`
}

// page runs a verb that answers a page result (decoded afresh: a reused value would keep the
// fields a later answer leaves out).
func (e *env) page(t *testing.T, args ...string) browsePage {
	t.Helper()
	var p browsePage
	e.ok(t, &p, args...)
	return p
}

func (e *env) bsnap(t *testing.T, args ...string) browseSnap {
	t.Helper()
	var o browseSnap
	e.ok(t, &o, append([]string{"snapshot"}, args...)...)
	return o
}

// untilSnap takes snapshots until ok says one is what the test waits for (60 s at most: the
// machine may be loaded; the test measures nothing).
func (e *env) untilSnap(t *testing.T, what string, ok func(browseSnap) bool, args ...string) browseSnap {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		o := e.bsnap(t, args...)
		if ok(o) {
			return o
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: never seen; last snapshot %+v", what, o)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func TestDialogsHeldAndAnswered(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	s := newBrowseSite(t)
	e.start(t)
	e.ok(t, nil, "visit", s.App()+"/dialogs")
	o := e.snap(t)
	del, rename, note := o.ref(t, "button", "Delete"), o.ref(t, "button", "Rename"), o.ref(t, "input", "Note")

	// A confirm is held, and the click that opened it says so.
	p := e.page(t, "click", del)
	if d := p.Dialog; d == nil || d.Type != "confirm" || d.Message != "Delete item 7?" || !d.Open || !strings.HasSuffix(p.URL, "/dialogs") {
		t.Fatalf("click Delete: %+v %+v", p, p.Dialog)
	}
	// snapshot shows it instead of the page; the verbs that need the page are refused.
	if sn := e.bsnap(t); sn.Dialog == nil || !sn.Dialog.Open || sn.Dialog.Message != "Delete item 7?" || len(sn.Elements) != 0 || sn.Title != "Dialogs" {
		t.Fatalf("snapshot with a confirm open: %+v", sn)
	}
	if m := e.errMessage(t, "DIALOG_OPEN", "fill", note, "--", "x"); !strings.Contains(m, `confirm dialog`) || !strings.Contains(m, "Delete item 7?") {
		t.Errorf("DIALOG_OPEN message %q", m)
	}
	e.fails(t, "DIALOG_OPEN", "wait", "--text", "deleted", "--timeout", "2s")
	e.fails(t, "DIALOG_OPEN", "screenshot")
	e.fails(t, "INVALID_ARGUMENT", "dialog", "accept", "--text", "x") // a confirm takes no text
	p = e.page(t, "dialog", "accept")
	if p.Dialog != nil {
		t.Errorf("dialog accept left a dialog: %+v", p.Dialog)
	}
	if got := e.snap(t).texts(); !strings.Contains(got, "deleted") {
		t.Fatalf("after accepting the confirm: %s", got)
	}
	e.fails(t, "NO_DIALOG", "dialog", "dismiss")

	// Dismissed: the page's script sees Cancel.
	o = e.snap(t)
	p = e.page(t, "click", o.ref(t, "button", "Delete"))
	e.ok(t, nil, "dialog", "dismiss")
	if got := e.snap(t).texts(); !strings.Contains(got, "kept") {
		t.Fatalf("after dismissing the confirm: %s", got)
	}
	// A prompt is answered with the agent's text, and shows its default.
	o = e.snap(t)
	rename = o.ref(t, "button", "Rename")
	p = e.page(t, "click", rename)
	if d := p.Dialog; d == nil || d.Type != "prompt" || d.Default != "old name" || d.Message != "New name?" {
		t.Fatalf("click Rename: %+v", p.Dialog)
	}
	e.fails(t, "INVALID_ARGUMENT", "dialog", "accept", "--text", strings.Repeat("x", 1025))
	e.ok(t, nil, "dialog", "accept", "--text", "new name")
	if got := e.snap(t).texts(); !strings.Contains(got, "renamed to new name") {
		t.Fatalf("after answering the prompt: %s", got)
	}

	// beforeunload: leaving is held until answered; dismissing stays, accepting leaves.
	o = e.snap(t)
	e.ok(t, nil, "click", o.ref(t, "button", "Arm")) // a click: the page has the activation beforeunload needs
	p = e.page(t, "visit", s.App()+"/a")
	if d := p.Dialog; d == nil || d.Type != "beforeunload" || !d.Open || !strings.HasSuffix(p.URL, "/dialogs") {
		t.Fatalf("visit away from a page with a beforeunload handler: %+v %+v", p, p.Dialog)
	}
	p = e.page(t, "dialog", "dismiss")
	if !strings.HasSuffix(p.URL, "/dialogs") {
		t.Fatalf("dismissing beforeunload left the page: %+v", p)
	}
	p = e.page(t, "visit", s.App()+"/a")
	if p.Dialog == nil || p.Dialog.Type != "beforeunload" {
		t.Fatalf("second visit away: %+v", p)
	}
	p = e.page(t, "dialog", "accept")
	if !strings.HasSuffix(p.URL, "/a") || p.Title != "Page A" {
		t.Fatalf("accepting beforeunload did not leave: %+v", p)
	}
}

// TestDialogUnansweredAndLooping: a dialog nobody answers is dismissed after the hold and the
// next verb says so; a page that opens one again right away is stopped; and meanwhile another
// session works as usual (its dialog holds no other session).
func TestDialogUnansweredAndLooping(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	s := newBrowseSite(t)
	e.start(t)
	for _, name := range []string{"once", "loop", "other"} {
		e.ok(t, nil, "session", "create", name)
	}
	p := e.page(t, "visit", s.App()+"/alert-once", "--session", "once")
	e.ok(t, nil, "visit", s.App()+"/alert-loop", "--session", "loop")
	sn := e.untilSnap(t, "the alert", func(o browseSnap) bool { return o.Dialog != nil && o.Dialog.Open }, "--session", "once")
	if sn.Dialog.Type != "alert" || sn.Dialog.Message != "Hold me" {
		t.Fatalf("alert: %+v", sn.Dialog)
	}
	// Another session is not held by it.
	p = e.page(t, "visit", s.App()+"/b", "--session", "other")
	if p.Title != "Page B" || !strings.Contains(e.snap(t, "--session", "other").texts(), "Page B") {
		t.Errorf("the other session beside a held dialog: %+v", p)
	}
	// Unanswered: dismissed by the host, and the next verb says so (once).
	sn = e.untilSnap(t, "the dismissal", func(o browseSnap) bool { return o.Dialog == nil || !o.Dialog.Open }, "--session", "once")
	if sn.Dialog == nil || sn.Dialog.Dismissed != "unanswered" || sn.Dialog.Message != "Hold me" {
		t.Fatalf("after the hold: %+v", sn.Dialog)
	}
	if sn = e.bsnap(t, "--session", "once"); sn.Dialog != nil || !strings.Contains(sn.texts(), "Alert once") {
		t.Errorf("the dismissal is reported twice, or the page is not back: %+v", sn)
	}
	// A page that opens one again right after the host dismissed one unanswered is stopped.
	deadline := time.Now().Add(90 * time.Second)
	for {
		r := e.run("", "headless", "snapshot", "--session", "loop", "--json")
		if r.code != 0 {
			if c := errCode(t, r); c != "PAGE_STOPPED" {
				t.Fatalf("the dialog loop's snapshot: %s", r.stdout)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a page of dialog loops was never stopped: %s", r.stdout)
		}
		time.Sleep(time.Second)
	}
	p = e.page(t, "visit", s.App()+"/a", "--session", "loop")
	if p.Title != "Page A" {
		t.Errorf("the stopped session's next visit: %+v", p)
	}
}

// TestDialogHostile: a dialog never hands a released secret back (a page that shows it in an
// alert is discarded, SECRET_ON_PAGE, as for every output), and is never accepted while the
// document a password was typed into is shown.
func TestDialogHostile(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	s := newBrowseSite(t)
	const account = "alice@example.test"
	canary := newCanary()
	s.idpBook.SetAccount(account, canary)
	s.echo = canary
	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 10)
	lsEnroll(t, e, s.IdP(), "idp", account, canary)
	e.start(t)

	// A failed script sign-in leaves its document shown (the field emptied); a confirm there
	// may be dismissed, never accepted.
	e.ok(t, nil, "visit", s.IdP()+"/spa")
	var a struct {
		Status   string
		Evidence struct{ Cleared bool } `json:"evidence"`
	}
	e.ok(t, &a, "auth", "login", "--alias", "idp")
	if a.Status != "failed" {
		t.Fatalf("the failing script sign-in: %+v", a)
	}
	o := e.snap(t)
	p := e.page(t, "click", o.ref(t, "button", "Confirm"))
	if p.Dialog == nil || p.Dialog.Type != "confirm" {
		t.Fatalf("click Confirm: %+v", p)
	}
	e.fails(t, "SECRET_ON_PAGE", "dialog", "accept")
	e.ok(t, nil, "dialog", "dismiss")
	if got := e.snap(t).texts(); !strings.Contains(got, "staying") {
		t.Errorf("after the dismissal: %s", got)
	}

	// A page that says the password back in an alert: the answer is refused and the page
	// discarded; nothing shows it.
	r := e.run("", "headless", "visit", s.IdP()+"/echo", "--json")
	for deadline := time.Now().Add(60 * time.Second); r.code == 0 && time.Now().Before(deadline); {
		time.Sleep(300 * time.Millisecond) // the alert comes a moment after the load
		r = e.run("", "headless", "snapshot", "--json")
	}
	if r.code == 0 || errCode(t, r) != "SECRET_ON_PAGE" {
		t.Fatalf("a page that shows the password in a dialog: %+v", r)
	}
	if sn := e.bsnap(t); sn.URL != "about:blank" || sn.Dialog != nil {
		t.Errorf("the page that showed it was not discarded: %+v", sn)
	}
	e.ok(t, nil, "stop")
	assertNoCanary(t, "every output", e.allOutput(), canary)
}

func (e *env) pages(t *testing.T, args ...string) pageList {
	t.Helper()
	var l pageList
	e.ok(t, &l, append([]string{"session", "pages"}, args...)...)
	return l
}

// untilPages lists the session's pages until there are n, each with its URL (a window opens,
// loads, or goes, a moment after the verb that caused it).
func (e *env) untilPages(t *testing.T, n int, args ...string) pageList {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		l := e.pages(t, args...)
		loaded := true
		for _, p := range l.Pages {
			loaded = loaded && p.URL != "" && p.URL != "about:blank"
		}
		if len(l.Pages) == n && loaded {
			return l
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(e.runDir(), "host.log"))
			var keep []string
			for _, line := range strings.Split(string(b), "\n") {
				if !strings.Contains(line, "method=session.pages") {
					keep = append(keep, line)
				}
			}
			t.Logf("host.log without the listings:\n%s", strings.Join(keep[max(0, len(keep)-40):], "\n"))
			t.Fatalf("the session never had %d pages: %+v", n, l)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// TestWindowsOfASession: a window a page opens is a page of its session; page select drives
// it; when it closes, the session is back on its opener; a window's dialog is listed; at most
// 16 pages.
func TestWindowsOfASession(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	s := newBrowseSite(t)
	e.start(t)
	e.ok(t, nil, "visit", s.App()+"/agent/opens")
	p := e.page(t, "click", e.snap(t).ref(t, "link", "New tab"))
	if !strings.HasSuffix(p.URL, "/agent/opens") {
		t.Fatalf("the click that opened a tab: %+v", p)
	}
	l := e.untilPages(t, 2)
	if w := l.Pages[1]; w.Index != 2 || w.Opener != 1 || w.Current || !strings.HasSuffix(w.URL, "/agent/closer") || !l.Pages[0].Current {
		t.Fatalf("session pages: %+v", l)
	}
	e.fails(t, "PAGE_UNKNOWN", "page", "select", "3")
	p = e.page(t, "page", "select", "2")
	if !strings.HasSuffix(p.URL, "/agent/closer") || p.Title != "Closer" || p.Pages != 2 {
		t.Fatalf("page select 2: %+v", p)
	}
	// Every verb drives it now; its dialog is its own.
	o := e.snap(t)
	if !strings.Contains(o.texts(), "Close me") {
		t.Fatalf("snapshot of the selected window: %s", o.texts())
	}
	p = e.page(t, "click", o.ref(t, "button", "Say"))
	if p.Dialog == nil || p.Dialog.Message != "from the pop-up" {
		t.Fatalf("the window's alert: %+v", p)
	}
	if l = e.pages(t); l.Pages[1].Dialog == nil || !l.Pages[1].Dialog.Open || l.Pages[0].Dialog != nil || !l.Pages[1].Current {
		t.Fatalf("session pages with the window's alert: %+v", l)
	}
	e.ok(t, nil, "dialog", "accept")
	// The window closes itself: the session is back on the page that opened it.
	p = e.page(t, "click", e.snap(t).ref(t, "button", "Close me"))
	if !strings.HasSuffix(p.URL, "/agent/opens") || p.Pages != 0 {
		t.Fatalf("the window closed itself; the session answered %+v", p)
	}
	if l = e.pages(t); len(l.Pages) != 1 || !l.Pages[0].Current {
		t.Fatalf("session pages after the window closed: %+v", l)
	}
	// A window whose close comes late (its renderer busy right after window.close(), as on a
	// busy machine: CI's TestMCPDialogsAndWindows was answered with the closing window).
	e.ok(t, nil, "click", e.snap(t).ref(t, "link", "New tab"))
	e.untilPages(t, 2)
	e.ok(t, nil, "page", "select", "2")
	p = e.page(t, "click", e.snap(t).ref(t, "button", "Close slowly"))
	if !strings.HasSuffix(p.URL, "/agent/opens") || p.Pages != 0 {
		t.Fatalf("the window closed itself late; the session answered %+v", p)
	}
	// At most 16 pages: a window the session's pages open beyond is closed as it opens.
	e.ok(t, nil, "visit", s.App()+"/agent/many")
	for i := 2; i <= 17; i++ {
		e.ok(t, nil, "click", e.snap(t).ref(t, "button", "Open")) // one window a click (the pop-up blocker's rule)
		if i <= 16 {
			e.untilPages(t, i)
		}
	}
	time.Sleep(2 * time.Second) // the 17th had its moment to open (what is checked is the bound)
	if l = e.pages(t); len(l.Pages) != 16 {
		t.Fatalf("pages after 17 windows: %d", len(l.Pages))
	}
	// Closing the session closes its windows.
	e.ok(t, nil, "session", "create", "x")
	e.ok(t, nil, "visit", s.App()+"/agent/opens", "--session", "x")
	e.ok(t, nil, "click", e.snap(t, "--session", "x").ref(t, "link", "New tab"), "--session", "x")
	e.untilPages(t, 2, "--session", "x")
	e.ok(t, nil, "session", "close", "x")
}

// TestPopupSignInOAuth: the identity provider's sign-in in a pop-up of the app's page (another
// origin), signed in on by alias there; the pop-up posts the code back and closes; the app is
// signed in; the session is back on the app.
func TestPopupSignInOAuth(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	s := newBrowseSite(t)
	const account = "alice@example.test"
	canary := newCanary()
	s.idpBook.SetAccount(account, canary)
	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 10)
	lsEnroll(t, e, s.IdP(), "idp", account, canary)
	e.start(t)

	e.ok(t, nil, "visit", s.App()+"/app")
	e.ok(t, nil, "click", e.snap(t).ref(t, "button", "Sign in with IdP"))
	l := e.untilPages(t, 2)
	if !strings.HasPrefix(l.Pages[1].URL, s.IdP()+"/authorize") || l.Pages[1].Opener != 1 {
		t.Fatalf("the pop-up: %+v", l)
	}
	p := e.page(t, "page", "select", "2")
	if p.AuthRequired == nil || len(p.AuthRequired.Aliases) != 1 || p.AuthRequired.Aliases[0] != "idp" {
		t.Fatalf("page select 2 on the idp's sign-in: %+v", p)
	}
	var a struct {
		Status, Origin string
		Evidence       map[string]any
	}
	e.ok(t, &a, "auth", "login", "--alias", "idp")
	// The outcome is the idp's: it may have gone back to the app before the host looked. A
	// pop-up that closed itself is no page lost: the session is back on the app.
	if a.Origin != s.IdP() || (a.Status != "authenticated" && a.Status != "unknown") || a.Evidence["page_lost"] != nil {
		t.Fatalf("auth login in the pop-up: %+v", a)
	}
	t.Logf("auth login in the pop-up: %s", a.Status)
	posts := s.idpBook.Posts()
	if len(posts) != 1 || posts[0].Username != account || posts[0].Password != canary {
		t.Fatalf("what the idp received: %v", posts)
	}
	// The pop-up returned the code and closed: the session is back on the app, signed in.
	var pg browsePage
	e.ok(t, &pg, "wait", "--text", "Signed in to the app as "+account, "--timeout", "60s")
	if !strings.HasPrefix(pg.URL, s.App()+"/app") {
		t.Fatalf("after the pop-up closed: %+v", pg)
	}
	if l = e.untilPages(t, 1); !l.Pages[0].Current {
		t.Fatalf("pages after the pop-up closed: %+v", l)
	}
	e.ok(t, nil, "stop")
	assertNoCanary(t, "every output", e.allOutput(), canary)
}

// TestPopupSignInRefused: a pop-up on the credential's origin is not signed in on when a page
// of the same session could script it: its opener on that origin (a page the agent published
// on the site), a frame of that origin in its opener, a sibling window on that origin, an
// opener that moved to that origin. Nobody is asked and nothing is typed.
func TestPopupSignInRefused(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	s := newBrowseSite(t)
	const account = "alice@example.test"
	canary := newCanary()
	s.idpBook.SetAccount(account, canary)
	approve, plog := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 10)
	lsEnroll(t, e, s.IdP(), "idp", account, canary)
	e.start(t)
	asked := len(presencetest.Prompts(t, plog))

	cases := []struct {
		name, page string
		before     func(t *testing.T, session string)
	}{
		{"same-origin opener", s.IdP() + "/u/agent/opener", nil},
		{"a frame of the origin in the opener", s.App() + "/agent/framed", nil},
		{"a sibling window on the origin", s.App() + "/agent/siblings", func(t *testing.T, session string) {
			e.ok(t, nil, "click", e.snap(t, "--session", session).ref(t, "button", "Other"), "--session", session)
			e.untilPages(t, 3, "--session", session)
		}},
		{"an opener that moved to the origin", s.App() + "/agent/moves", func(t *testing.T, session string) {
			e.ok(t, nil, "page", "select", "1", "--session", session)
			e.ok(t, nil, "click", e.snap(t, "--session", session).ref(t, "button", "Move"), "--session", session)
		}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "h" + strings.Repeat("x", i)
			e.ok(t, nil, "session", "create", name)
			e.ok(t, nil, "visit", c.page, "--session", name)
			e.ok(t, nil, "click", e.snap(t, "--session", name).ref(t, "button", "Open"), "--session", name)
			e.untilPages(t, 2, "--session", name)
			if c.before != nil {
				c.before(t, name)
			}
			l := e.pages(t, "--session", name)
			idx := "2"
			for _, pg := range l.Pages {
				if strings.HasPrefix(pg.URL, s.IdP()+"/authorize") {
					idx = strconv.Itoa(pg.Index)
				}
			}
			e.ok(t, nil, "page", "select", idx, "--session", name)
			e.fails(t, "DOCUMENT_CHANGED", "auth", "login", "--alias", "idp", "--session", name)
			if n := len(s.idpBook.Posts()); n != 0 {
				t.Fatalf("the idp received %d sign-ins", n)
			}
			e.ok(t, nil, "session", "close", name)
		})
	}
	if n := len(presencetest.Prompts(t, plog)) - asked; n != 0 {
		t.Errorf("the person was asked %d times", n)
	}
	e.ok(t, nil, "stop")
	assertNoCanary(t, "every output", e.allOutput(), canary)
}

// TestSmallVerbs: reload, forward, key chords, double and right clicks, network idle.
func TestSmallVerbs(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	s := newBrowseSite(t)
	e.start(t)

	// A page that leaves itself before its load is followed to where it goes, over three
	// such pages (the load of the page visited never fires: visit answered TIMEOUT after its
	// 30 s).
	if p := e.page(t, "visit", s.App()+"/bounce?n=2", "--timeout", "20s"); !strings.HasSuffix(p.URL, "/bounced") || p.Title != "Bounced" {
		t.Errorf("visit of a page that bounces: %+v", p)
	}

	// reload loads the page again.
	e.ok(t, nil, "visit", s.App()+"/count")
	if got := e.snap(t).texts(); !strings.Contains(got, "loaded 1 times") {
		t.Fatalf("first load: %s", got)
	}
	p := e.page(t, "reload")
	if !strings.HasSuffix(p.URL, "/count") || !strings.Contains(e.snap(t).texts(), "loaded 2 times") {
		t.Fatalf("reload: %+v %s", p, e.snap(t).texts())
	}
	// forward: after back, and NO_HISTORY at the last entry.
	e.ok(t, nil, "visit", s.App()+"/a")
	e.ok(t, nil, "visit", s.App()+"/b")
	e.fails(t, "NO_HISTORY", "forward")
	if p = e.page(t, "back"); p.Title != "Page A" {
		t.Fatalf("back: %+v", p)
	}
	if p = e.page(t, "forward"); p.Title != "Page B" || !strings.HasSuffix(p.URL, "/b") {
		t.Fatalf("forward: %+v", p)
	}
	if m := e.errMessage(t, "NO_HISTORY", "forward"); m != `session "default" has no later page` {
		t.Errorf("NO_HISTORY message %q", m)
	}

	// Chords: Control+A selects what a field holds (Delete then empties it), Shift+Tab moves
	// the focus back, Meta+Enter reaches the page with its modifier.
	e.ok(t, nil, "visit", s.App()+"/keys")
	o := e.snap(t)
	e.ok(t, nil, "click", o.ref(t, "input", "Second")) // a person's click: the window has the focus
	o = e.snap(t)
	e.ok(t, nil, "press", "Control+A", "--ref", o.ref(t, "input", "Second"))
	e.ok(t, nil, "press", "Delete")
	o = e.snap(t)
	if v := o.el(t, o.ref(t, "input", "Second")).Value; v != "" {
		t.Errorf("after Control+A and Delete the field holds %q", v)
	}
	e.ok(t, nil, "press", "Shift+Tab", "--ref", o.ref(t, "input", "Second"))
	if got := e.snap(t).texts(); !strings.Contains(got, "first focused") {
		t.Errorf("Shift+Tab did not move the focus back: %s", got)
	}
	o = e.snap(t)
	e.ok(t, nil, "press", "Meta+Enter", "--ref", o.ref(t, "textarea", "Message"))
	if got := e.snap(t).texts(); !strings.Contains(got, "meta-enter sent") {
		t.Errorf("Meta+Enter: %s", got)
	}
	e.fails(t, "INVALID_ARGUMENT", "press", "Hyper+A")
	e.fails(t, "INVALID_ARGUMENT", "press", "Control+Control+A")

	// Double and right clicks.
	e.ok(t, nil, "visit", s.App()+"/clicks")
	e.ok(t, nil, "click", e.snap(t).ref(t, "button", "Twice"), "--double")
	if got := e.snap(t).texts(); !strings.Contains(got, "double clicked") {
		t.Errorf("click --double: %s", got)
	}
	e.ok(t, nil, "click", e.snap(t).ref(t, "button", "Menu"), "--right")
	if got := e.snap(t).texts(); !strings.Contains(got, "context menu") {
		t.Errorf("click --right: %s", got)
	}
	e.fails(t, "USAGE", "click", e.snap(t).ref(t, "button", "Menu"), "--right", "--double")

	// Network idle: it waits for the page's request (answered 1.5 s later), while an
	// EventSource stream and a WebSocket stay open for good.
	e.ok(t, nil, "visit", s.App()+"/net")
	e.ok(t, nil, "wait", "--text", "idle page")
	o = e.snap(t)
	e.ok(t, nil, "click", o.ref(t, "button", "Load"))
	e.ok(t, nil, "wait", "--network-idle", "--timeout", "60s")
	if got := e.snap(t).texts(); !strings.Contains(got, "slow answer arrived") {
		t.Errorf("network idle before the page's request ended: %s", got)
	}
	// A request that never ends keeps the page busy.
	e.ok(t, nil, "visit", s.App()+"/longpoll")
	e.fails(t, "TIMEOUT", "wait", "--network-idle", "--timeout", "2s")
	// More requests in flight at once than the host follows: it cannot be told.
	e.ok(t, nil, "visit", s.App()+"/swarm")
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := e.run("", "headless", "wait", "--network-idle", "--timeout", "1s", "--json")
		if c := errCode(t, r); c == "NETWORK_UNTRACKED" {
			break
		} else if c != "TIMEOUT" || time.Now().After(deadline) {
			t.Fatalf("wait --network-idle on a page with 1100 requests in flight: %s", r.stdout)
		}
	}
	// Its next document is followed afresh.
	e.ok(t, nil, "visit", s.App()+"/a")
	e.ok(t, nil, "wait", "--network-idle", "--timeout", "60s")
}

// TestMCPDialogsAndWindows: the dialog and pages tools, and the page tools' new parameters,
// over MCP, with errors in the tools' terms.
func TestMCPDialogsAndWindows(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	s := newBrowseSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := e.mcpConnect(t, "e2e-browse")
	c.call(t, ctx, "session_create", map[string]any{"name": "w"}, nil)
	c.call(t, ctx, "visit", map[string]any{"session": "w", "url": s.App() + "/dialogs"}, nil)
	var snap struct{ Count int }
	sres := c.call(t, ctx, "snapshot", map[string]any{"session": "w"}, &snap)
	del := refIn(t, text(sres), "button", "Delete")
	var p browsePage
	res := c.call(t, ctx, "click", map[string]any{"session": "w", "ref": del}, &p)
	if p.Dialog == nil || !p.Dialog.Open || !strings.Contains(text(res), `a confirm dialog is open (untrusted page text: "Delete item 7?"): answer it with dialog`) {
		t.Fatalf("click that opens a confirm: %+v %q", p, text(res))
	}
	if got := c.callErr(t, ctx, "wait", map[string]any{"session": "w", "text": "deleted", "timeout_ms": 2000}, "DIALOG_OPEN"); !strings.Contains(got["hint"], "dialog tool") {
		t.Errorf("DIALOG_OPEN hint over MCP: %v", got)
	}
	c.call(t, ctx, "dialog", map[string]any{"session": "w", "accept": true}, nil)
	c.callErr(t, ctx, "dialog", map[string]any{"session": "w"}, "NO_DIALOG")
	c.call(t, ctx, "wait", map[string]any{"session": "w", "text": "deleted", "network_idle": true}, nil)

	// Windows: a link with target=_blank, listed and selected by the pages tool.
	c.call(t, ctx, "visit", map[string]any{"session": "w", "url": s.App() + "/agent/opens"}, nil)
	sres = c.call(t, ctx, "snapshot", map[string]any{"session": "w"}, nil)
	c.call(t, ctx, "click", map[string]any{"session": "w", "ref": refIn(t, text(sres), "link", "New tab")}, nil)
	var l pageList
	for deadline := time.Now().Add(60 * time.Second); len(l.Pages) != 2 || l.Pages[1].URL == "" || l.Pages[1].URL == "about:blank"; {
		if time.Now().After(deadline) {
			t.Fatalf("the new tab never showed in pages: %+v", l)
		}
		time.Sleep(300 * time.Millisecond)
		l = pageList{}
		res = c.call(t, ctx, "pages", map[string]any{"session": "w"}, &l)
	}
	if !strings.Contains(text(res), "untrusted") || !strings.Contains(text(res), "1 (current) ") {
		t.Errorf("pages text: %q", text(res))
	}
	l = pageList{}
	c.call(t, ctx, "pages", map[string]any{"session": "w", "select": 2}, &l)
	if !l.Pages[1].Current || l.Pages[0].Current {
		t.Fatalf("pages select 2: %+v", l)
	}
	c.callErr(t, ctx, "pages", map[string]any{"session": "w", "select": 5}, "PAGE_UNKNOWN")
	c.callErr(t, ctx, "back", map[string]any{"session": "w", "forward": true}, "NO_HISTORY")
	p = browsePage{}
	c.call(t, ctx, "back", map[string]any{"session": "w", "reload": true}, &p)
	if !strings.HasSuffix(p.URL, "/agent/closer") {
		t.Fatalf("reload of the selected window: %+v", p)
	}
	sres = c.call(t, ctx, "snapshot", map[string]any{"session": "w"}, nil)
	c.call(t, ctx, "click", map[string]any{"session": "w", "ref": refIn(t, text(sres), "button", "Close me"), "double": false}, &p)
	if !strings.HasSuffix(p.URL, "/agent/opens") {
		t.Fatalf("the window closed: the session answered %+v", p)
	}
	c.callErr(t, ctx, "click", map[string]any{"session": "w", "ref": "e1", "double": true, "right": true}, "INVALID_ARGUMENT")
	c.callErr(t, ctx, "press", map[string]any{"session": "w", "key": "Hyper+A"}, "INVALID_ARGUMENT")
}

// refIn is the ref of the first element of kind whose text contains name in a snapshot
// tool's text content (one element a line: ref, kind, quoted text).
func refIn(t *testing.T, outline, kind, name string) string {
	t.Helper()
	for _, line := range strings.Split(outline, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && strings.HasPrefix(f[1], kind) && strings.Contains(line, name) {
			return f[0]
		}
	}
	t.Fatalf("no %s %q in the outline:\n%s", kind, name, outline)
	return ""
}
