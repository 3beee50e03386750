package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/headless-dev/headless/host/snapshot"
)

// signInLike are corpus pages not named *login* that hold a sign-in form all the same (an
// unlock screen, a login box beside a sign-up one, a re-authentication): offering them as a
// sign-in is not judged a fault, but the password field offered must be a labelled one.
var signInLike = map[string]bool{
	"bitwarden_com_account-locked.html": true, "expensify.html": true, "craigslist_account.html": true,
	"schwab.html": true, "news_ycombinator_com.html": true, "tigerglobal_com-investors.html": true,
	"distrokid_payout.html": true, "duckduckgo_cloudsave-passphrase.html": true,
	// Sign-up pages that also show a separate sign-in form (three password fields: one to sign
	// in, two to sign up).
	"www_eporner_com_signup.html": true, "www_dianxiaomi_com_signup.html": true,
	"librarything_com_signup.html": true, "ipv6_he_net_signup.html": true,
}

// result is one page's score.
type result struct {
	file    string
	login   bool   // a *login* page
	judged  bool   // a non-login page that must not be offered as a sign-in
	fault   string // "" when right; else the class of the fault
	detail  string
	heldOut bool // in the half of the corpus kept out of tuning
	offered bool // a sign-in was offered (whether right or wrong)
	scripts bool // captured with the page's scripts on
}

// heldOut puts a page in the held-out half by a hash of its site (the file name up to its
// last '_'), so that a site's login and sign-up pages land in the same half.
func heldOut(file string) bool {
	site := file
	if i := strings.LastIndexByte(file, '_'); i > 0 {
		site = file[:i]
	}
	h := fnv.New32a()
	h.Write([]byte(site))
	return h.Sum32()%2 == 1
}

// score judges every captured page of dir, built with o.
func score(dir, only string, o snapshot.Options) ([]result, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []result
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json.gz") || !strings.Contains(e.Name(), only) {
			continue
		}
		p, err := readPage(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		if p.Params != nil && !bytes.Equal(p.Params, snapshot.CaptureParams()) {
			return nil, fmt.Errorf("%s was captured with parameters %s, not this code's %s: capture again", e.Name(), p.Params, snapshot.CaptureParams())
		}
		r, err := judge(p, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no captured pages in %s: run the capture first", dir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].file < out[j].file })
	return out, nil
}

func readPage(path string) (page, error) {
	f, err := os.Open(path)
	if err != nil {
		return page{}, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return page{}, err
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return page{}, err
	}
	var p page
	err = json.NewDecoder(bytes.NewReader(data)).Decode(&p)
	return p, err
}

// judge scores one page: what the host would use (the first sign-in candidate of the top
// document) against the labels.
func judge(p page, opts snapshot.Options) (result, error) {
	r := result{file: p.File, login: strings.Contains(p.File, "login"), heldOut: heldOut(p.File)}
	r.judged = !r.login && !signInLike[p.File]
	o, targets, err := snapshot.Build(p.Raw, opts)
	if err != nil {
		return r, err
	}
	listed := make(map[int64]bool, len(targets))
	node := func(ref string) int64 {
		if ref == "" {
			return 0
		}
		return targets[ref].BackendNodeID
	}
	for _, t := range targets {
		listed[t.BackendNodeID] = true
	}
	l, err := readLabels(p.Raw, listed)
	if err != nil {
		return r, err
	}
	f, ok := pick(o)
	r.offered, r.scripts = ok, p.Scripts
	desc := func() string {
		return fmt.Sprintf("password=%s account=%s submit=%s form=%s {%s}", show(o, f.Password), show(o, f.Username), show(o, f.Submit), f.Form, f.Scores)
	}
	if !r.login {
		if ok && r.judged && !besideOthers(o, f, l, targets) {
			r.fault, r.detail = "offered", desc()
		} else if ok && f.Password != "" && !isPasswordLabel(l.scoring[node(f.Password)]) {
			r.fault, r.detail = "wrong-password", desc()
		}
		return r, nil
	}
	var pw, acct, sub int
	for _, s := range l.scoring {
		switch {
		case isPasswordLabel(s):
			pw++
		case isAccountLabel(s):
			acct++
		}
	}
	sub = len(l.submit)
	switch {
	case !ok:
		r.fault = "not-found"
		r.detail = why(o)
	case pw > 0 && !isPasswordLabel(l.scoring[node(f.Password)]):
		r.fault, r.detail = "wrong-password", desc()
	case pw == 0 && f.Password != "":
		r.fault, r.detail = "password-on-first-step", desc()
	case f.Username == "" && acct > 0 && pw == 0:
		r.fault, r.detail = "no-account", desc()
	case f.Username == "" && acct > 0 && accountInGroup(o, l, targets, f):
		r.fault, r.detail = "no-account", desc()
	case f.Username != "" && !isAccountLabel(l.scoring[node(f.Username)]):
		r.fault, r.detail = "wrong-account", desc()
	case sub > 0 && f.Submit != "" && !l.submit[node(f.Submit)] && !submitLike(o, f):
		r.fault, r.detail = "wrong-submit", desc()
	case sub > 0 && f.Submit == "":
		r.fault, r.detail = "no-submit", desc()
	}
	return r, nil
}

// accountInGroup reports whether a labelled account field shares the offered password's form
// (or, outside forms, whether any labelled account field is listed at all).
func accountInGroup(o snapshot.Outline, l labels, targets map[string]snapshot.Target, f snapshot.LoginForm) bool {
	for _, e := range o.Elements {
		// A disabled account field (the account already given, shown on the password page)
		// takes nothing: none is right there.
		if isAccountLabel(l.scoring[targets[e.Ref].BackendNodeID]) && e.Frame == "" && !e.Disabled && (f.Form == "" || e.Form == f.Form) {
			return true
		}
	}
	return false
}

// besideOthers reports whether the offered password field of a page that is not a sign-in
// page is a labelled one (password, password.current) in a form of its own, apart from the
// page's other password fields: the sign-in box many sign-up pages show beside their form.
func besideOthers(o snapshot.Outline, f snapshot.LoginForm, l labels, targets map[string]snapshot.Target) bool {
	if f.Password == "" || f.Form == "" || !isPasswordLabel(l.scoring[targets[f.Password].BackendNodeID]) {
		return false
	}
	for _, e := range o.Elements {
		if e.Kind == "input" && e.Type == "password" && e.Form != f.Form && e.Frame == "" {
			return true
		}
	}
	return false
}

// submitLike accepts an offered submit control the labels did not mark when it is a submit
// button of the offered form: a person pressing it submits the same form (the label sits on
// another of its buttons, or on a wrapper the outline does not list). A submit button outside
// the form submits nothing.
func submitLike(o snapshot.Outline, f snapshot.LoginForm) bool {
	for _, e := range o.Elements {
		if e.Ref == f.Submit {
			return e.Kind == "button" && (e.Type == "submit" || e.Type == "image") && f.Form != "" && e.Form == f.Form
		}
	}
	return false
}

func show(o snapshot.Outline, ref string) string {
	if ref == "" {
		return "-"
	}
	for _, e := range o.Elements {
		if e.Ref == ref {
			s := fmt.Sprintf("%s(%s %s", ref, e.Kind, e.Type)
			if e.Name != "" {
				s += " name=" + e.Name
			}
			if e.Text != "" {
				s += fmt.Sprintf(" %q", trim(e.Text, 30))
			}
			return s + ")"
		}
	}
	return ref + "(?)"
}

func trim(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// report prints the summary and the failures.
func report(w io.Writer, rs []result, verbose bool) {
	type tally struct{ login, loginOK, judged, offered, other int }
	var all, tune, held tally
	classes := map[string]int{}
	for _, r := range rs {
		for _, t := range []*tally{&all, map[bool]*tally{false: &tune, true: &held}[r.heldOut]} {
			switch {
			case r.login:
				t.login++
				if r.fault == "" {
					t.loginOK++
				}
			case r.judged:
				t.judged++
				if r.fault != "" {
					t.offered++
				}
			default:
				t.other++
			}
		}
		if r.fault != "" {
			classes[r.fault]++
		}
	}
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	for _, x := range []struct {
		name string
		t    tally
	}{{"all", all}, {"tuning half", tune}, {"held-out half", held}} {
		fmt.Fprintf(w, "%-14s login pages right: %d/%d (%.1f%%)   non-login pages offered as a sign-in: %d/%d\n",
			x.name, x.t.loginOK, x.t.login, pct(x.t.loginOK, x.t.login), x.t.offered, x.t.judged)
	}
	// The end-to-end corpus test counts every page not named *login* that is offered a
	// sign-in as a defect, the signInLike ones too (they do hold a sign-in form).
	var like []string
	scripts := 0
	for _, r := range rs {
		if !r.login && !r.judged && r.offered {
			like = append(like, r.file)
		}
		if r.scripts {
			scripts++
		}
	}
	fmt.Fprintf(w, "pages not named *login* that hold a sign-in form, offered: %d %v\n", len(like), like)
	fmt.Fprintf(w, "captured with the pages' scripts on: %d/%d\n", scripts, len(rs))
	var names []string
	for c := range classes {
		names = append(names, c)
	}
	sort.Strings(names)
	fmt.Fprint(w, "faults:")
	for _, c := range names {
		fmt.Fprintf(w, " %s=%d", c, classes[c])
	}
	fmt.Fprintln(w)
	if !verbose {
		return
	}
	for _, r := range rs {
		if r.fault != "" {
			half := "tune"
			if r.heldOut {
				half = "held"
			}
			fmt.Fprintf(w, "%s %-16s %-45s %s\n", half, r.fault, r.file, r.detail)
		}
	}
}
