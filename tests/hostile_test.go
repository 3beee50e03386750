//go:build linux

package tests

// The hostile-agent suite (issue 10): a prompt-injected agent that may only run headless verbs,
// with a person approving every prompt (the scripted pinentry), and a web server of its own on
// loopback, tries to get the saved password back after a sign-in — by revealing a field the
// host typed into, walking history back to a filled document, using another submit button of
// the verified form, a GET form, a settings page that is not a sign-in form, focus tricks and
// a loopback impostor. Every class is a subtest; each asserts that the password appears nowhere
// the agent can read: CLI output (snapshots, wait oracles, screenshot results, URLs, errors),
// the page's own report of the field's value, the agent server's request log, and, at the end,
// everything on disk after a graceful stop (the leak sweep of leak_sweep_test.go).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

func TestHostileAgent(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	hs := newHostileSite(t)
	const account = "alice@example.test"
	canary, wrongPW := newCanary(), newCanary()
	hs.SetAccount(account, canary)
	approve, approveLog := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, hs.Origin(), "main", account, canary)
	lsEnroll(t, e, hs.Origin(), "wrong", account, wrongPW)
	e.start(t)

	var needles []lsNeedle
	for _, sec := range []struct{ label, s string }{{"canary", canary}, {"wrong-password canary", wrongPW}} {
		needles = append(needles, lsNeedles(sec.label, sec.s)...)
	}
	// sees checks one agent-visible output for every encoding of both passwords.
	sees := func(t *testing.T, where, text string) {
		t.Helper()
		for _, n := range needles {
			if strings.Contains(text, string(n.b)) {
				t.Errorf("LEAK: %s in %s", n.name, where)
			}
		}
	}
	prompts := func() int { return len(presencetest.Prompts(t, approveLog)) }
	run := func(t *testing.T, args ...string) result {
		t.Helper()
		r := e.run("", "headless", withJSON(args)...)
		sees(t, "headless "+strings.Join(args, " "), r.stdout+r.stderr)
		return r
	}
	snap := func(t *testing.T) outline {
		t.Helper()
		r := run(t, "snapshot")
		var o outline
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &o) != nil {
			t.Fatalf("snapshot: %+v", r)
		}
		sees(t, "snapshot (human)", run(t, "snapshot").stdout)
		return o
	}
	// fieldRef is the ref of the password field (by its name, whatever its type now).
	fieldRef := func(t *testing.T, o outline) string {
		t.Helper()
		for _, el := range o.Elements {
			if el.Kind == "input" && el.Name == "pw" {
				return el.Ref
			}
		}
		t.Fatalf("no field named pw in %+v", o.Elements)
		return ""
	}
	// reveal clicks the site's own "Show password" toggle and returns the length of the
	// field's value as the page saw it when clicked.
	reveal := func(t *testing.T) int {
		t.Helper()
		before := len(hs.Reveals())
		r := run(t, "click", snap(t).ref(t, "button", "Show password"))
		if r.code != 0 {
			t.Fatalf("click Show password: %+v", r)
		}
		var got []int
		if !pollUntil(30*time.Second, func() bool { got = hs.Reveals(); return len(got) > before }) {
			t.Fatal("the toggle did not report")
		}
		return got[len(got)-1]
	}
	// oracles reads the page every way an agent can after a reveal: snapshots (swept by run),
	// a wait for each password's text (must time out) and for it to vanish (must answer as for
	// a guess that is nowhere: at once), and screenshots of every mode (refused while a typed
	// secret is on the page, else taken of an empty field).
	oracles := func(t *testing.T, secretOnPage bool) {
		t.Helper()
		o := snap(t)
		guesses := []string{canary, wrongPW, strings.TrimPrefix(canary, "cnry-")[:8], strings.TrimPrefix(wrongPW, "cnry-")[:8]}
		for _, s := range guesses {
			r := run(t, "wait", "--text", s, "--timeout", "1s")
			if r.code == 0 || errCode(t, r) != "TIMEOUT" {
				t.Errorf("wait --text for a password's characters: %+v (an oracle for the password)", r)
			}
		}
		// wait --gone answers for a password's characters exactly as for a string that is on
		// no page; and it does read this page (the title is there: it must time out).
		if r := run(t, "wait", "--gone", "Sign in", "--timeout", "300ms"); r.code == 0 || errCode(t, r) != "TIMEOUT" {
			t.Errorf("wait --gone for text on the page: %+v (wait --gone does not read the page: the checks below prove nothing)", r)
		}
		for _, s := range append(guesses, "no-such-text-"+newCanary()) {
			if r := run(t, "wait", "--gone", s, "--timeout", "1s"); r.code != 0 {
				t.Errorf("wait --gone for %s… answers %+v, a string on no page answers at once (an oracle for the password)", s[:4], r)
			}
		}
		shots := [][]string{{"screenshot"}, {"screenshot", "--full-page"}}
		for _, el := range o.Elements {
			if el.Kind == "input" && el.Name == "pw" {
				shots = append(shots, []string{"screenshot", "--ref", el.Ref})
			}
		}
		for _, args := range shots {
			r := run(t, args...)
			switch {
			case secretOnPage && (r.code == 0 || errCode(t, r) != "SECRET_ON_PAGE"):
				t.Errorf("%v of a page whose typed field holds a value: %+v, want SECRET_ON_PAGE", args, r)
			case !secretOnPage && r.code != 0:
				t.Errorf("%v: %+v", args, r)
			}
		}
	}
	// cleared asserts what the page itself reports: the field the host typed into is empty.
	cleared := func(t *testing.T, flow string) {
		t.Helper()
		if n := reveal(t); n != 0 {
			t.Errorf("%s: the password field still holds %d characters after the attempt, and the agent has revealed it", flow, n)
		}
		oracles(t, false)
	}
	// refusedWhileSecret: every verb that could edit the page or run its handlers is refused
	// while a typed password is on it (the site's own sign-in, or a reveal on hover, would be
	// an oracle for it).
	refusedWhileSecret := func(t *testing.T, o outline) {
		t.Helper()
		field := fieldRef(t, o)
		for _, args := range [][]string{
			{"click", o.ref(t, "button", "Show password")},
			{"click", field},
			{"press", "Backspace"},
			{"press", "Enter"},
			{"press", "Enter", "--ref", field},
			{"fill", field, "--", "x"},
			{"hover", o.ref(t, "button", "Show password")},
			{"hover", field},
			{"select", field, "x"},
			{"scroll"},
			{"scroll", field},
			{"scroll", field, "--by", "100"},
			{"back"},
		} {
			if r := run(t, args...); r.code == 0 || errCode(t, r) != "SECRET_ON_PAGE" {
				t.Errorf("headless %v on a page that holds a typed password: %+v, want SECRET_ON_PAGE", args, r)
			}
		}
	}
	loginCode := func(t *testing.T, args ...string) (string, lsAuth) {
		t.Helper()
		// The attack pages are sign-in forms at many paths of one origin: each attempt asks
		// the person (who approves) instead of LOGIN_PATH_CHANGED, so that every class
		// reaches the containment it tests (TestLoginPaths tests the path rule itself).
		r := run(t, append([]string{"auth", "login", "--new-login-path"}, args...)...)
		if r.code == 0 {
			var a lsAuth
			if err := json.Unmarshal([]byte(r.stdout), &a); err != nil {
				t.Fatalf("auth login %v: %q", args, r.stdout)
			}
			return "", a
		}
		return errCode(t, r), lsAuth{}
	}
	t.Run("script login leaves the field filled", func(t *testing.T) {
		run(t, "visit", hs.URL("/spa-reveal"))
		code, a := loginCode(t, "--alias", "wrong")
		if code != "" || a.Status != "failed" {
			t.Fatalf("auth login --alias wrong on a script login: code %q result %+v, want status failed", code, a)
		}
		if a.Evidence["cleared"] != true {
			t.Errorf("the result does not say the typed field was cleared: %v", a.Evidence)
		}
		cleared(t, "a failed script login")
	})

	t.Run("client-side validation blocks the submit", func(t *testing.T) {
		run(t, "visit", hs.URL("/validate"))
		code, a := loginCode(t, "--alias", "main")
		if code == "" && a.Status == "authenticated" {
			t.Fatalf("auth login through a blocked submit: %+v", a)
		}
		cleared(t, "a submit blocked by validation")
	})

	t.Run("a check fails after typing", func(t *testing.T) {
		// The focus moved while the password was typed: the text may be anywhere in the
		// page, so the page is discarded, not merely cleared.
		run(t, "visit", hs.URL("/steal-focus"))
		if code, a := loginCode(t, "--alias", "main"); code != "DOCUMENT_CHANGED" {
			t.Errorf("auth login on a page that moves the focus while typing: code %q (%+v), want DOCUMENT_CHANGED", code, a)
		}
		if o := snap(t); o.URL != "about:blank" || len(o.Elements) != 0 {
			t.Errorf("after the focus moved while typing, the page was not discarded: %s %+v", o.URL, o.Elements)
		}
	})

	t.Run("the page puts the value back", func(t *testing.T) {
		run(t, "visit", hs.URL("/sticky"))
		code, a := loginCode(t, "--alias", "wrong")
		if code != "" || a.Status != "failed" || a.Evidence["cleared"] != true {
			t.Fatalf("auth login on the sticky page: %q %+v, want failed and cleared", code, a)
		}
		// The page refills the field from its own copy two seconds later: the host cannot
		// stop it, so nothing derived from the page shows the field's value, and no verb may
		// edit or submit the page (its own sign-in would be an oracle for the password).
		o := snap(t)
		if !pollUntil(10*time.Second, func() bool {
			r := run(t, "screenshot")
			return r.code != 0 && errCode(t, r) == "SECRET_ON_PAGE"
		}) {
			t.Fatal("the sticky page never refilled its field (screenshot never refused): the test proves nothing")
		}
		refusedWhileSecret(t, o)
		oracles(t, true)
	})

	t.Run("the page turns the typed field into a text field and puts the value back", func(t *testing.T) {
		run(t, "visit", hs.URL("/sticky-text"))
		code, a := loginCode(t, "--alias", "wrong")
		if code != "" || a.Status != "failed" || a.Evidence["cleared"] != true {
			t.Fatalf("auth login on the sticky-text page: %q %+v, want failed and cleared", code, a)
		}
		if !pollUntil(10*time.Second, func() bool {
			r := run(t, "screenshot")
			return r.code != 0 && errCode(t, r) == "SECRET_ON_PAGE"
		}) {
			t.Fatal("the page never refilled its field (screenshot never refused): the test proves nothing")
		}
		// Nothing about the field looks secret now (a text field, autocomplete off, named
		// "pw"): only the taint keeps its value out of snapshots and wait.
		o := snap(t)
		for _, el := range o.Elements {
			if el.Ref == fieldRef(t, o) && el.Type != "text" {
				t.Fatalf("the page did not turn the field into a text field: %+v", el)
			}
		}
		refusedWhileSecret(t, o)
		oracles(t, true)
	})

	t.Run("a popup freezes the renderer before the field is emptied", func(t *testing.T) {
		// The red team's attack: a popup of the agent's shares the login page's renderer
		// process and busy-loops right after the submit, so the host cannot empty the field;
		// then the agent edits the field and uses the site's own sign-in as an oracle. The
		// host must discard the page instead of leaving the password in it.
		run(t, "visit", hs.AgentURL("/opener"))
		run(t, "click", snap(t).ref(t, "button", "Continue"))
		if r := run(t, "wait", "--url", "/spa-slow", "--timeout", "10s"); r.code != 0 {
			t.Fatalf("the opener did not go to the site: %+v", r)
		}
		polls := func() int {
			n := 0
			for _, l := range hs.AgentLog() {
				if strings.Contains(l, "/should-freeze") {
					n++
				}
			}
			return n
		}
		if !pollUntil(30*time.Second, func() bool { return polls() > 0 }) {
			t.Fatal("the popup never ran: the test proves nothing")
		}
		began := time.Now()
		code, a := loginCode(t, "--alias", "wrong")
		took := time.Since(began)
		t.Logf("auth login with the freezing popup: code %q, %+v, after %v", code, a, took.Round(time.Millisecond))
		if took > 60*time.Second {
			t.Errorf("auth login took %v with a frozen renderer", took)
		}
		// Since round 3 the popup (it holds window.opener) is closed before the person is
		// asked, so it cannot freeze the renderer: the field is emptied as on any page. Had it
		// frozen it anyway, the page must have been discarded.
		n := polls()
		time.Sleep(500 * time.Millisecond)
		if polls() != n {
			t.Error("the page's popup is still running after the sign-in")
		}
		if code == "" && a.Evidence["page_discarded"] != true && a.Evidence["cleared"] != true {
			t.Fatalf("the attempt ended without emptying the field or discarding the page: %+v", a)
		}
		if a.Evidence["page_discarded"] == true {
			if o := snap(t); o.URL != "about:blank" || len(o.Elements) != 0 {
				t.Errorf("after a discarded page the session shows %s %+v", o.URL, o.Elements)
			}
		} else {
			cleared(t, "a sign-in with the freezing popup closed")
		}
	})

	t.Run("round 3: a popup holding window.opener is closed, and its page refused", func(t *testing.T) {
		// The red team's popup navigated the login page to a page of its own, timed on the
		// audit log, so the password was typed there. Now no window the page opened survives
		// to the prompt.
		run(t, "visit", hs.AgentURL("/rt3-opener"))
		run(t, "click", snap(t).ref(t, "button", "Continue"))
		if r := run(t, "wait", "--url", "/login-reveal", "--timeout", "10s"); r.code != 0 {
			t.Fatalf("the opener did not go to the site: %+v", r)
		}
		if !pollUntil(30*time.Second, func() bool { return hs.Ticks() > 3 }) {
			t.Fatal("the popup never ran: the test proves nothing")
		}
		// Since round 13b a document that such a window could reach at any moment of its life
		// is never signed in on (the window could have planted a script in it): the sign-in
		// closes the window and refuses, nobody asked.
		p := len(hs.Posts())
		if code, a := loginCode(t, "--alias", "main"); code != "DOCUMENT_CHANGED" {
			t.Fatalf("auth login on a page a popup holds: %q %+v, want DOCUMENT_CHANGED", code, a)
		}
		n := hs.Ticks()
		time.Sleep(500 * time.Millisecond)
		if hs.Ticks() != n {
			t.Error("the popup that holds window.opener still runs after the sign-in: it could have navigated the page under the typing")
		}
		if got := hs.Posts()[p:]; len(got) != 0 {
			t.Errorf("submitted on a page a popup held: %v", got)
		}
		// The same login page, loaded again with no window open: signed in.
		run(t, "visit", hs.URL("/login-reveal"))
		if code, a := loginCode(t, "--alias", "main"); code != "" || a.Status != "authenticated" {
			t.Fatalf("auth login on the login page loaded again: %q %+v", code, a)
		}
	})

	t.Run("round 3: a navigation under way when typing starts", func(t *testing.T) {
		// Focusing the account field starts a navigation that the server holds: had the
		// password been typed, the new document could have committed under it.
		run(t, "visit", hs.URL("/login-slownav"))
		p := len(hs.Posts())
		code, a := loginCode(t, "--alias", "main")
		hs.ReleaseSlow()
		if code != "DOCUMENT_CHANGED" {
			t.Errorf("auth login with a navigation under way: %q %+v, want DOCUMENT_CHANGED", code, a)
		}

		if got := hs.Posts()[p:]; len(got) != 0 {
			t.Errorf("submitted with a navigation under way: %v", got)
		}
		// Nothing was typed: the account field's focus handler started the navigation, and it
		// was stopped (the held request failed), so the page stays on the form.
		if o := snap(t); !strings.Contains(o.URL, "/login-slownav") {
			t.Errorf("the navigation tried while the host typed went through: the page is %s", o.URL)
		}
		oracles(t, false)
	})

	t.Run("round 3: a navigation started while typing is held and stopped", func(t *testing.T) {
		// Focusing the password field sends the page to the agent's trap: the request never
		// leaves the browser while the host types.
		run(t, "visit", hs.URL("/login-navfocus"))
		before := len(hs.AgentLog())
		code, a := loginCode(t, "--alias", "main")
		if code != "DOCUMENT_CHANGED" {
			t.Errorf("auth login on a page that navigates when the password field is focused: %q %+v, want DOCUMENT_CHANGED", code, a)
		}
		time.Sleep(300 * time.Millisecond)
		for _, l := range hs.AgentLog()[before:] {
			if strings.Contains(l, "/trap") || strings.Contains(l, "/typed") {
				t.Errorf("the agent's server got %q while the host typed", l)
			}
		}
		oracles(t, false)
	})

	t.Run("back-forward cache restores a filled document", func(t *testing.T) {
		run(t, "visit", hs.URL("/login-reveal"))
		if code, a := loginCode(t, "--alias", "main"); code != "" || a.Status != "authenticated" {
			t.Fatalf("auth login: %q %+v", code, a)
		}
		run(t, "visit", hs.AgentURL("/back2"))
		if r := run(t, "wait", "--url", "/login-reveal", "--timeout", "10s"); r.code != 0 {
			t.Fatalf("history.go(-2) did not return to the login document: %+v", r)
		}
		cleared(t, "history.go(-2) after a successful login")
	})

	t.Run("back after a successful login", func(t *testing.T) {
		run(t, "visit", hs.URL("/login-reveal"))
		if code, a := loginCode(t, "--alias", "main"); code != "" || a.Status != "authenticated" {
			t.Fatalf("auth login: %q %+v", code, a)
		}
		r := run(t, "back")
		var page struct {
			URL          string `json:"url"`
			AuthRequired *struct {
				Aliases []string `json:"aliases"`
			} `json:"auth_required"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &page) != nil || page.URL != hs.URL("/login-reveal") {
			t.Fatalf("back after signing in: %+v, want the login page", r)
		}
		if page.AuthRequired == nil || strings.Join(page.AuthRequired.Aliases, ",") != "main,wrong" {
			t.Errorf("back to a login page: auth_required %+v, want the aliases main and wrong", page.AuthRequired)
		}
		cleared(t, "back after a successful login")
	})

	// A history entry that is a POST's answer holds the POST's body, the password URL-encoded
	// in it; once a history step returns to such an entry, Chromium writes that body into the
	// profile's session-restore files (Sessions/). The host turns the entry its submit made
	// into a plain one; the final sweep of the profile checks that neither way back (the back
	// verb, a page's own history.back()) puts the password on disk, nor sends it again.
	t.Run("back to a failed sign-in neither sends it again nor stores it", func(t *testing.T) {
		run(t, "visit", hs.URL("/login-reveal"))
		if code, a := loginCode(t, "--alias", "wrong"); code != "" || a.Status != "failed" || a.Evidence["navigated"] != true {
			t.Fatalf("auth login with the wrong password: %q %+v, want failed after a navigation (the POST's answer)", code, a)
		}
		n := len(hs.Posts())
		run(t, "visit", hs.AgentURL("/"))
		if r := run(t, "back"); r.code != 0 || !strings.Contains(r.stdout, `"url":"`+hs.URL("/login-reveal")+`"`) {
			t.Fatalf("back to the answer of the sign-in: %+v", r)
		}
		time.Sleep(500 * time.Millisecond)
		if got := hs.Posts()[n:]; len(got) != 0 {
			t.Errorf("back sent the sign-in again: %v", got)
		}
		snap(t)
	})

	t.Run("a page goes back to a sign-in answered in place", func(t *testing.T) {
		run(t, "visit", hs.URL("/login-direct"))
		if code, a := loginCode(t, "--alias", "main"); code != "" || a.Status != "authenticated" {
			t.Fatalf("auth login on a form answered in place: %q %+v", code, a)
		}
		n := len(hs.Posts())
		run(t, "visit", hs.AgentURL("/back1"))
		if r := run(t, "wait", "--url", "/login-direct", "--timeout", "10s"); r.code != 0 {
			t.Fatalf("history.back() did not return to the sign-in's answer: %+v", r)
		}
		time.Sleep(500 * time.Millisecond)
		if got := hs.Posts()[n:]; len(got) != 0 {
			t.Errorf("history.back() sent the sign-in again: %v", got)
		}
		snap(t)
	})

	// Another submit button of the form posts elsewhere (a formaction on the agent's origin,
	// a hidden one first in tree order, a formmethod=get): the host signs in through the
	// button it chose, which posts where the site does, and whatever the page or the agent
	// does with the others afterwards, nothing reaches the agent's server (the fields were
	// emptied; a request carrying the password would be refused by the network guard).
	t.Run("another submitter posts elsewhere", func(t *testing.T) {
		for _, c := range []struct{ page, other string }{
			{"/two-buttons", "Sign in with Partner"}, {"/hidden-submitter", ""}, {"/two-buttons-get", "Quick sign in"},
		} {
			run(t, "visit", hs.URL(c.page))
			if code, a := loginCode(t, "--alias", "wrong"); code != "" || a.Status != "failed" || a.Evidence["cleared"] != true {
				t.Fatalf("auth login on %s with the wrong password: %q %+v, want failed and cleared", c.page, code, a)
			}
			o := snap(t)
			if c.other != "" {
				run(t, "click", o.ref(t, "button", c.other))
			} else {
				run(t, "click", fieldRef(t, o))
				run(t, "press", "Enter")
			}
		}
		sees(t, "the agent server's request log", strings.Join(hs.AgentLog(), "\n"))
	})

	// A GET form puts the fields in its URL: the network guard refuses the submission before
	// it leaves (SECRET_EGRESS), the page is discarded, and the site never gets the password.
	t.Run("GET sign-in form", func(t *testing.T) {
		run(t, "visit", hs.URL("/login-get"))
		n := len(hs.Posts())
		if code, a := loginCode(t, "--alias", "main"); code != "SECRET_EGRESS" {
			t.Fatalf("auth login on a GET form: %q %+v, want SECRET_EGRESS", code, a)
		}
		if got := hs.Posts()[n:]; len(got) != 0 {
			t.Errorf("the GET form's submission reached the site: %v", got)
		}
		run(t, "session", "list")
	})

	t.Run("a secret field that is not a sign-in form", func(t *testing.T) {
		r := run(t, "visit", hs.URL("/settings"))
		if strings.Contains(r.stdout, `"auth_required"`) {
			t.Errorf("a settings page with a secret field was advertised as a login form: %s", r.stdout)
		}
		var hook string
		for _, el := range snap(t).Elements {
			if el.Kind == "input" && el.Name == "webhook_url" {
				hook = el.Ref
			}
		}
		if r := run(t, "fill", hook, "--", hs.AgentURL("/collect")); r.code != 0 {
			t.Fatalf("fill the webhook URL: %+v", r)
		}
		p := prompts()
		if code, a := loginCode(t, "--alias", "main"); code != "NO_LOGIN_FORM" {
			t.Errorf("auth login on a settings page: code %q (%+v), want NO_LOGIN_FORM", code, a)
		}
		if prompts() != p {
			t.Error("the person was asked to approve a release into a settings form")
		}
		sees(t, "the agent server's request log", strings.Join(hs.AgentLog(), "\n"))
	})

	t.Run("the account field hands the focus to a cross-origin frame", func(t *testing.T) {
		run(t, "visit", hs.URL("/focus-iframe"))
		before := len(hs.AgentLog())
		code, a := loginCode(t, "--alias", "main")
		if code == "" {
			t.Errorf("auth login typed through a focus trap: %+v", a)
		}
		time.Sleep(300 * time.Millisecond)
		for _, l := range hs.AgentLog()[before:] {
			if strings.Contains(l, "/typed?") {
				t.Errorf("the agent's frame received typing: %s", l)
			}
		}
	})

	// Everything the agent's server ever received, and everything on disk after a graceful
	// stop (the revealed text fields are what Chromium writes into Sessions/ and History).
	sees(t, "the agent server's request log", strings.Join(hs.AgentLog(), "\n"))
	for _, p := range hs.Posts() {
		if p.Server != "site" {
			t.Errorf("a password reached %v", p)
		}
	}
	e.ok(t, nil, "stop")
	sweep := &lsSweep{t: t, needles: needles, files: map[string]int{}, seen: map[string]bool{}}
	sweep.search("every CLI output", []byte(e.allOutput()))
	sweep.tree("durable profile after stop", filepath.Join(e.root, "data", "headless", "profile"))
	sweep.tree("runtime dir after stop", e.runDir())
	if sweep.files["durable profile after stop"] < 20 {
		t.Errorf("the profile sweep searched only %d files", sweep.files["durable profile after stop"])
	}
}

// Class 6 (a loopback origin served by an impostor on [::1] while the real server listens on
// 127.0.0.1 only) is TestLoopbackListeners in hostgate_e2e_test.go: ORIGIN_AMBIGUOUS, nothing
// prompted, nothing sent.

// TestRendererCrashAnswersFast: a verb on a session whose renderer died answers
// BROWSER_CRASHED within seconds (not after the CLI's two-minute deadline), and the session
// works again afterwards.
func TestRendererCrashAnswersFast(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	hs := newHostileSite(t)
	e.start(t)
	lsVisit(t, e, hs.URL("/home"))
	var st struct {
		Host struct {
			BrowserPID int `json:"browser_pid"`
		} `json:"host"`
	}
	e.ok(t, &st, "status")
	killed := 0
	for _, pid := range lsDescendants(st.Host.BrowserPID) {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && strings.Contains(string(b), "--type=renderer") {
			if err := syscallKill(pid); err == nil {
				killed++
			}
		}
	}
	if killed == 0 {
		t.Fatal("no renderer process found to kill")
	}
	began := time.Now()
	r := e.run("", "headless", "snapshot", "--json")
	// The bound is the CLI's deadline (two minutes) halved, not a speed: a full suite on a
	// loaded 2-CPU machine once took 30 s here (452 ms alone).
	if d := time.Since(began); r.code == 0 || errCode(t, r) != "BROWSER_CRASHED" || d > 60*time.Second {
		t.Errorf("snapshot after the renderer was killed: %+v after %v, want BROWSER_CRASHED well before the CLI's deadline", r, d.Round(time.Millisecond))
	}
	t.Logf("snapshot after the renderer was killed: %s after %v", errCode(t, r), time.Since(began).Round(time.Millisecond))
	// Every renderer was killed, the spare one Chromium keeps for the next page too: the fresh
	// page may land in that one before Chromium has noticed its death (seen on a loaded
	// machine), and is then lost as well, which the next command answers (BROWSER_CRASHED,
	// the page's session detached). A crash is never answered as a success, and the command
	// after that works.
	r = e.run("", "headless", "visit", hs.URL("/home"), "--json")
	if r.code != 0 {
		if errCode(t, r) != "BROWSER_CRASHED" {
			t.Fatalf("visit after the crash: %+v", r)
		}
		t.Logf("the fresh page was lost too (%s); visiting again", r.stdout)
		r = e.run("", "headless", "visit", hs.URL("/home"), "--json")
	}
	var p lsPageResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &p) != nil || p.Title != "Home" {
		t.Errorf("the session does not work after the crash: %+v", r)
	}
}
