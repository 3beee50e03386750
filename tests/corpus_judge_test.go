//go:build linux

package tests

// How TestCorpusSignIn judges a page: from what the servers received and the input reporter
// saw (corpus_site_test.go), against DuckDuckGo's labels (data-manual-scoring), never from what
// headless says of itself.
//
// A sign-in page is signed in correctly when its password arrived, in a posted body at the
// credential's origins (the page's own; and its sibling origin, the rest of its site, when the
// person named it at enrolment: corpusSite.namesSibling), only in fields labelled password or password.current (or in the
// password step the site answers a first step with: a two-step sign-in's identifier page is
// judged on its first step, where the account must go into the labelled field, and the
// password may go only to the password step on the same origin), and its account arrived only
// in fields labelled username, emailAddress or "username OR emailAddress" of the page's
// sign-in form — at least once when that form has such a field (a page with none: the password
// only); the account too counts only at the credential's origins. Typed strings count as arrivals too: one typed into a field where it does not belong
// is judged as if submitted. Otherwise the page is
//
//   - refused before typing (auth login's code), when nothing was typed and nothing arrived;
//   - refused after typing (its code), when something was;
//   - not signed in (auth login's status), when auth login answered a status;
//   - an error without a code (no JSON error from auth login).
//
// The defects, which must never happen: the password in a field not labelled password, in any
// URL (a Referer included), in a header, at an origin not the credential's (the elsewhere
// origin; the sibling origin of a page whose credential did not name it), or in headless's
// output; the account submitted to a form that is not a sign-in form; and, on a page that is
// not a sign-in page, a sign-in offered by visit (auth_required) or anything typed or sent.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The goals of the corpus test (issue 43), in one place, and the floors it holds today.
// A password in a field not labelled password, in a URL or header, at another origin or in
// an output of headless fails the test at once: never traded. For the rest the test fails
// below the floors (what this code reached when they were set: a ratchet, raised as it
// improves) and prints every goal it has not met yet, as MISSED, beside them.
const (
	// corpusGoalLive: in live mode, the share of sign-in pages signed in correctly.
	corpusGoalLive  = 0.95
	corpusFloorLive = 0.92
	// corpusGoalCapturedUnaccounted: in captured mode, the share of sign-in pages neither
	// signed in nor refused with a code (a silent status, an error without a code).
	corpusGoalCapturedUnaccounted = 0
	corpusCeilCapturedUnaccounted = 0.05
	// corpusGoalDefects: defects of the other kinds (an account posted to a form that is not
	// a sign-in form, a page not for signing in offered or typed into), per mode.
	corpusGoalDefects = 0
	corpusCeilDefects = 4
)

// passwordDefects are the defects that fail the test whatever the floors.
var passwordDefects = []string{defPasswordField, defPasswordURL, defPasswordHeader, defPasswordOrigin, defPasswordOutput}

// Outcomes of a run.
const (
	outSignedIn      = "signed_in"
	outRefusedBefore = "refused_before_typing"
	outRefusedAfter  = "refused_after_typing"
	outNotSignedIn   = "not_signed_in" // auth login answered a status
	outNoCode        = "error_without_code"
	outVisitFailed   = "visit_failed"
)

// Defect kinds.
const (
	defPasswordField    = "password_in_field_not_labelled_password"
	defPasswordURL      = "password_in_url"
	defPasswordHeader   = "password_in_header"
	defPasswordOrigin   = "password_at_another_origin"
	defPasswordOutput   = "password_in_headless_output"
	defAccountNotSignIn = "account_to_a_form_not_sign_in"
	defOffered          = "non_sign_in_page_offered"
	defTyped            = "non_sign_in_page_typed_into"
)

// corpusRun is what one page did in one mode.
type corpusRun struct {
	Site    *corpusSite
	Mode    string
	Visit   result
	Offered bool
	Login   result
	Asked   bool // the person was asked at the presence prompt
	Elapsed time.Duration
	Reqs    []corpusRequest // every request counted for this page in this mode
}

// corpusResult is the judgement of one run: one entry of the JSON report.
type corpusResult struct {
	Page      string      `json:"page"`
	Mode      string      `json:"mode"`
	SignIn    bool        `json:"sign_in_page"`
	FirstStep bool        `json:"first_step,omitempty"`
	URL       string      `json:"captured_at"`
	Offered   bool        `json:"offered"`
	VisitCode string      `json:"visit_code,omitempty"`
	Asked     bool        `json:"asked"`
	Status    string      `json:"status,omitempty"`
	Outcome   string      `json:"outcome"`
	Code      string      `json:"code,omitempty"`
	Message   string      `json:"message,omitempty"`
	Fields    []corpusHit `json:"fields"`
	Defects   []string    `json:"defects"`
	Seconds   float64     `json:"seconds"`
	// Requests the page's origin, its sibling origin and the elsewhere origin got (the input
	// reports left out).
	RequestsOwn       int `json:"requests_own"`
	RequestsSibling   int `json:"requests_sibling"`
	RequestsElsewhere int `json:"requests_elsewhere"`
	// NamedSibling: the person named the page's sibling origin at enrolment.
	NamedSibling bool `json:"named_sibling,omitempty"`
}

// corpusHit is one place one of the page's strings went.
type corpusHit struct {
	String string `json:"string"`          // account, password, unknown (typed: neither's length)
	How    string `json:"how"`             // typed, posted, url, header
	Origin string `json:"origin"`          // own (the credential's), sibling, elsewhere
	Path   string `json:"path,omitempty"`  // the request's path
	Field  string `json:"field,omitempty"` // the field's name (or id), a header's name
	Label  string `json:"label,omitempty"` // its data-manual-scoring; "(password step)"
	Form   int    `json:"form"`            // its form's index, -1 outside any
	OK     bool   `json:"ok"`              // where it belongs
	Note   string `json:"note,omitempty"`  // e.g. which fields an ambiguous name could be
}

// corpusJudge judges one run.
func corpusJudge(r *corpusRun) corpusResult {
	s, p := r.Site, r.Site.page
	res := corpusResult{Page: p.File, Mode: r.Mode, SignIn: p.Login, FirstStep: p.FirstStep, URL: p.Orig.String(),
		Offered: r.Offered, Asked: r.Asked, Seconds: r.Elapsed.Seconds(), Fields: []corpusHit{}, Defects: []string{}, NamedSibling: s.namesSibling}
	defects := map[string]bool{}
	pwNeedles := corpusNeedles("password", s.password)
	acctNeedles := []lsNeedle{{"account", []byte(s.account)}, {"account url", []byte(url.QueryEscape(s.account))},
		{"account prefix", []byte(s.account[:min(len(s.account), 8)])}}
	hits := []corpusHit{}
	add := func(h corpusHit) { hits = append(hits, h) }
	typedAny := false
	for _, req := range r.Reqs {
		u, _ := url.ParseRequestURI(req.URL)
		path := ""
		if u != nil {
			path = u.Path
		}
		// cred: the request went to one of the credential's origins.
		origin, cred := "elsewhere", req.Own || req.Sibling && s.namesSibling
		switch {
		case req.Own:
			origin = "own"
			res.RequestsOwn++
		case req.Sibling:
			origin = "sibling"
			res.RequestsSibling++
		default:
			res.RequestsElsewhere++
		}
		if ev, ok := typedEvent(req); ok {
			res.RequestsOwn--
			typedAny = typedAny || ev.Len > 0
			what, note := "", ""
			switch ev.Len {
			case 0:
				continue
			case units(s.password):
				what = "password"
			case units(s.account):
				what = "account"
			default:
				// Neither string's length: one cut by the field's maxlength, or something
				// else; never where it belongs.
				what, note = "unknown", fmt.Sprintf("%d characters", ev.Len)
				if in := p.input(ev.Index); in != nil && in.MaxLength == ev.Len {
					note += " (the field's maxlength: one of the strings, cut)"
				}
			}
			label := ev.Label
			if in := p.input(ev.Index); label == "" && in != nil {
				label = in.Label // a label the page's source lacks (labelCorrections)
			}
			h := corpusHit{String: what, How: "typed", Origin: "own", Field: cmp.Or(ev.Name, ev.ID), Label: label, Form: ev.Form, Note: note}
			if ref, err := url.Parse(req.Header.Get("Referer")); err == nil && ref.Path == corpusPassword {
				h.Path, h.Label = corpusPassword, "(password step)"
			} else if in := p.input(ev.Index); in != nil {
				// The form as the page's model has it, as for what is posted: the browser's
				// form owner differs where the parser moved a <form> out of its table
				// (autostrade's): its fields are the form's to the browser, outside any in
				// the markup the labels are read from.
				h.Form = in.Form
			}
			h.OK = what == "password" && (isPasswordLabel(h.Label) || h.Label == "(password step)") ||
				what == "account" && isAccountLabel(h.Label) && p.signIn[h.Form] && h.Path == ""
			add(h)
			continue
		}
		// The password, anywhere in the request.
		if n := findNeedle(pwNeedles, []byte(req.URL)); n != "" || u != nil && findNeedle(pwNeedles, []byte(u.Query().Encode())) != "" {
			add(corpusHit{String: "password", How: "url", Origin: origin, Path: path, Form: -1})
			defects[defPasswordURL] = true
		}
		for _, k := range slices.Sorted(maps.Keys(req.Header)) {
			if findNeedle(pwNeedles, []byte(strings.Join(req.Header[k], "\n"))) == "" {
				continue
			}
			add(corpusHit{String: "password", How: "header", Origin: origin, Path: path, Field: k, Form: -1})
			if k == "Referer" {
				defects[defPasswordURL] = true
			} else {
				defects[defPasswordHeader] = true
			}
		}
		vals := corpusValues(req.Method, req.URL, req.Header.Get("Content-Type"), req.Body)
		if findNeedle(pwNeedles, req.Body) != "" {
			found := false
			for _, v := range vals {
				if v.Where != "body" || findNeedle(pwNeedles, []byte(v.Value)) == "" {
					continue
				}
				found = true
				h := corpusHit{String: "password", How: "posted", Origin: origin, Path: path, Field: v.Key, Form: -1}
				if req.Own && path == corpusPassword && v.Key == "password" {
					h.Label, h.OK = "(password step)", true
				} else if in, note := resolveField(p, req, vals, v.Key); in != nil {
					h.Label, h.Form, h.Note = in.Label, in.Form, note
					h.OK = cred && isPasswordLabel(in.Label)
				}
				add(h)
			}
			if !found {
				add(corpusHit{String: "password", How: "posted", Origin: origin, Path: path, Field: "(the body, not as a field)", Form: -1})
			}
		}
		if !cred && (findNeedle(pwNeedles, req.Body) != "" || findNeedle(pwNeedles, []byte(req.URL)) != "") {
			defects[defPasswordOrigin] = true
		}
		// The account: in a field of the query or the body.
		for _, v := range vals {
			if findNeedle(acctNeedles, []byte(v.Value)) == "" {
				continue
			}
			how := "posted"
			if v.Where == "query" {
				how = "url"
			}
			h := corpusHit{String: "account", How: how, Origin: origin, Path: path, Field: v.Key, Form: -1}
			if in, note := resolveField(p, req, vals, v.Key); in != nil && cred && !(req.Own && path == corpusPassword) {
				h.Label, h.Form, h.Note = in.Label, in.Form, note
				h.OK = isAccountLabel(in.Label) && p.signIn[in.Form]
				if !p.signIn[in.Form] {
					defects[defAccountNotSignIn] = true
				}
			}
			add(h)
		}
	}
	for _, out := range []string{r.Visit.stdout, r.Visit.stderr, r.Login.stdout, r.Login.stderr} {
		if findNeedle(pwNeedles, []byte(out)) != "" {
			defects[defPasswordOutput] = true
		}
	}
	for _, h := range hits {
		if h.String == "password" && !h.OK && (h.How == "posted" || h.How == "typed") {
			defects[defPasswordField] = true
		}
	}
	res.Fields = hits

	// What auth login answered.
	var je jsonErr
	var auth lsAuth
	switch {
	case r.Visit.code != 0:
		res.VisitCode = codeOf(r.Visit)
	}
	loginCode := ""
	if r.Login.code != 0 {
		if json.Unmarshal([]byte(r.Login.stdout), &je) == nil {
			loginCode, res.Message = je.Error.Code, je.Error.Message
		}
	} else if json.Unmarshal([]byte(r.Login.stdout), &auth) == nil {
		res.Status = auth.Status
	}
	res.Code = loginCode
	if !p.Login {
		// A page not named for signing in that holds a sign-in box all the same
		// (signInBoxes: a sign-up page with "Already a member? Sign in" beside it):
		// offering it is right, and strings that went only into a box's fields are no
		// defect. Anything else is.
		inBox := len(p.signIn) > 0
		for _, h := range hits {
			inBox = inBox && h.OK && p.signIn[h.Form]
		}
		if r.Offered && len(p.signIn) == 0 {
			defects[defOffered] = true
		}
		if (typedAny || len(hits) > 0) && !inBox {
			defects[defTyped] = true
		}
	}
	res.Defects = append([]string{}, slices.Sorted(maps.Keys(defects))...)

	okPW, okAcct, allOK := false, false, true
	for _, h := range hits {
		allOK = allOK && h.OK
		if h.OK && h.How != "typed" {
			okPW = okPW || h.String == "password"
			okAcct = okAcct || h.String == "account"
		}
	}
	needAcct := p.hasAccountField() || p.FirstStep
	switch {
	case res.VisitCode != "" && r.Login.code != 0 && len(hits) == 0 && !typedAny:
		res.Outcome = outVisitFailed
		res.Code = cmp.Or(res.Code, res.VisitCode)
	case p.Login && len(res.Defects) == 0 && allOK && okPW && (okAcct || !needAcct):
		res.Outcome = outSignedIn
	case r.Login.code != 0 && loginCode == "":
		res.Outcome = outNoCode
	case r.Login.code != 0 && (typedAny || len(hits) > 0):
		res.Outcome = outRefusedAfter
	case r.Login.code != 0:
		res.Outcome = outRefusedBefore
	default:
		res.Outcome = outNotSignedIn
	}
	return res
}

// codeOf is the code of a failed command's JSON error, "" when there is none.
func codeOf(r result) string {
	var je jsonErr
	if json.Unmarshal([]byte(r.stdout), &je) != nil {
		return ""
	}
	return je.Error.Code
}

// corpusNeedles are the encodings of a password the judgement looks for: lsNeedles's (raw,
// URL-, base64-, hex-encoded, its random core alone, …) and its first 12 characters (a field
// whose maxlength cut it).
func corpusNeedles(label, password string) []lsNeedle {
	return lsAddNeedle(lsNeedles(label, password), lsNeedle{label + " prefix", []byte(password[:min(len(password), 12)])})
}

// findNeedle names the first needle found in hay, "" when none is.
func findNeedle(needles []lsNeedle, hay []byte) string {
	for _, n := range needles {
		if len(n.b) > 0 && bytes.Contains(hay, n.b) {
			return n.name
		}
	}
	return ""
}

// resolveField finds the page's input a submitted key came from. A live submission names its
// inputs (the query's i=); a form's submission is matched by name, among the forms holding
// every name the request carried, the form whose action is the request's path first. When
// more than one input is left, one in a sign-in form is taken and note says so.
func resolveField(p *corpusPage, req corpusRequest, vals []corpusValue, key string) (*corpusInput, string) {
	u, _ := url.ParseRequestURI(req.URL)
	if u != nil && u.Path == corpusSubmit {
		for _, s := range strings.Split(u.Query().Get("i"), ",") {
			i, err := strconv.Atoi(s)
			in := p.input(i)
			if err == nil && in != nil && (in.Name == key || in.Name == "" && (in.ID == key || in.ID == "" && key == "#"+s)) {
				return in, ""
			}
		}
		return nil, "not among the live submission's inputs"
	}
	var cands []*corpusInput
	for i := range p.Inputs {
		if p.Inputs[i].Name == key {
			cands = append(cands, &p.Inputs[i])
		}
	}
	if len(cands) > 1 {
		keys := map[string]bool{}
		for _, v := range vals {
			if v.Where == "body" && v.Key != "" {
				keys[v.Key] = true
			}
		}
		holds := func(form int) bool {
			for k := range keys {
				if !slices.ContainsFunc(p.Inputs, func(in corpusInput) bool { return in.Form == form && in.Name == k }) {
					return false
				}
			}
			return true
		}
		narrow := func(keep func(*corpusInput) bool) {
			if c := slices.DeleteFunc(slices.Clone(cands), func(in *corpusInput) bool { return !keep(in) }); len(c) > 0 {
				cands = c
			}
		}
		narrow(func(in *corpusInput) bool { return holds(in.Form) })
		narrow(func(in *corpusInput) bool { return u != nil && in.Form >= 0 && actionPath(p, in.Form) == u.Path })
	}
	switch len(cands) {
	case 0:
		return nil, ""
	case 1:
		return cands[0], ""
	}
	var names []string
	for _, c := range cands {
		names = append(names, fmt.Sprintf("#%d %q in form %d", c.Index, c.Label, c.Form))
	}
	note := "ambiguous: " + strings.Join(names, ", ")
	for _, c := range cands {
		if p.signIn[c.Form] {
			return c, note
		}
	}
	return cands[0], note
}

// actionPath is the path form i posts to, as served here ("" when it cannot be told).
func actionPath(p *corpusPage, i int) string {
	a := strings.TrimSpace(p.Forms[i].Action)
	u, err := p.Orig.Parse(a)
	if err != nil {
		return ""
	}
	if a == "" {
		return p.Orig.Path
	}
	return u.Path
}

// corpusSummary counts the results of one mode.
type corpusSummary struct {
	Mode            string         `json:"mode"`
	SignInPages     int            `json:"sign_in_pages"`
	SignedIn        int            `json:"signed_in"`
	Authenticated   int            `json:"signed_in_and_authenticated"`
	RefusedBefore   map[string]int `json:"refused_before_typing"`
	RefusedAfter    map[string]int `json:"refused_after_typing"`
	NotSignedIn     map[string]int `json:"not_signed_in"`
	NoCode          int            `json:"error_without_code"`
	VisitFailed     map[string]int `json:"visit_failed"`
	Defects         map[string]int `json:"defects"`
	OtherPages      int            `json:"other_pages"`
	OtherOffered    int            `json:"other_pages_offered"`
	OtherTyped      int            `json:"other_pages_typed_into"`
	Reasons         map[string]int `json:"refusal_reasons"`
	SecondsSignIn   float64        `json:"seconds"`
	defectPages     map[string][]string
	unaccountedList []string
}

// reasonWords are the parts of a refusal's message that name one page (a URL, a quoted name).
var reasonWords = regexp.MustCompile(`https?://\S+|\bnull\b|"[^"]*"`)

func summarize(mode string, results []corpusResult) *corpusSummary {
	s := &corpusSummary{Mode: mode, RefusedBefore: map[string]int{}, RefusedAfter: map[string]int{}, NotSignedIn: map[string]int{},
		VisitFailed: map[string]int{}, Defects: map[string]int{}, Reasons: map[string]int{}, defectPages: map[string][]string{}}
	for _, r := range results {
		if r.Mode != mode {
			continue
		}
		s.SecondsSignIn += r.Seconds
		for _, d := range r.Defects {
			s.Defects[d]++
			s.defectPages[d] = append(s.defectPages[d], r.Page)
		}
		if !r.SignIn {
			s.OtherPages++
			if r.Offered {
				s.OtherOffered++
			}
			if slices.Contains(r.Defects, defTyped) {
				s.OtherTyped++
			}
			continue
		}
		s.SignInPages++
		switch r.Outcome {
		case outSignedIn:
			s.SignedIn++
			if r.Status == "authenticated" {
				s.Authenticated++
			}
			continue
		case outRefusedBefore:
			s.RefusedBefore[r.Code]++
		case outRefusedAfter:
			s.RefusedAfter[r.Code]++
		case outNotSignedIn:
			s.NotSignedIn[r.Status]++
		case outNoCode:
			s.NoCode++
		case outVisitFailed:
			s.VisitFailed[r.Code]++
		}
		if r.Outcome == outRefusedBefore || r.Outcome == outRefusedAfter {
			s.Reasons[r.Code+": "+reasonWords.ReplaceAllString(r.Message, "…")]++
		} else {
			s.unaccountedList = append(s.unaccountedList, r.Page+" ("+r.Outcome+" "+cmp.Or(r.Status, r.Code)+")")
		}
	}
	return s
}

func (s *corpusSummary) defects() int {
	n := 0
	for _, c := range s.Defects {
		n += c
	}
	return n
}

// String is the summary as a table.
func (s *corpusSummary) String() string {
	var b strings.Builder
	pct := func(n, of int) string {
		if of == 0 {
			return "-"
		}
		return fmt.Sprintf("%d (%.1f%%)", n, 100*float64(n)/float64(of))
	}
	sum := func(m map[string]int) int {
		n := 0
		for _, c := range m {
			n += c
		}
		return n
	}
	byCount := func(m map[string]int) string {
		keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Or(m[b]-m[a], strings.Compare(a, b)) })
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %d", cmp.Or(k, "(none)"), m[k]))
		}
		return strings.Join(parts, ", ")
	}
	fmt.Fprintf(&b, "%s mode: %d sign-in pages, %.0f s of visit and auth login\n", s.Mode, s.SignInPages, s.SecondsSignIn)
	fmt.Fprintf(&b, "  signed in correctly      %s (auth login said authenticated on %d)\n", pct(s.SignedIn, s.SignInPages), s.Authenticated)
	fmt.Fprintf(&b, "  refused before typing    %s: %s\n", pct(sum(s.RefusedBefore), s.SignInPages), byCount(s.RefusedBefore))
	fmt.Fprintf(&b, "  refused after typing     %s: %s\n", pct(sum(s.RefusedAfter), s.SignInPages), byCount(s.RefusedAfter))
	fmt.Fprintf(&b, "  not signed in, no code   %s: %s\n", pct(sum(s.NotSignedIn), s.SignInPages), byCount(s.NotSignedIn))
	fmt.Fprintf(&b, "  error without a code     %d; visit failed %d: %s\n", s.NoCode, sum(s.VisitFailed), byCount(s.VisitFailed))
	fmt.Fprintf(&b, "  pages not for signing in %d: offered %d, typed into %d\n", s.OtherPages, s.OtherOffered, s.OtherTyped)
	fmt.Fprintf(&b, "  defects                  %d: %s\n", s.defects(), byCount(s.Defects))
	for _, k := range slices.Sorted(maps.Keys(s.defectPages)) {
		fmt.Fprintf(&b, "    %s: %s\n", k, strings.Join(s.defectPages[k], " "))
	}
	reasons := slices.SortedFunc(maps.Keys(s.Reasons), func(a, b string) int { return cmp.Or(s.Reasons[b]-s.Reasons[a], strings.Compare(a, b)) })
	fmt.Fprintf(&b, "  top refusal reasons:\n")
	for _, k := range reasons[:min(12, len(reasons))] {
		fmt.Fprintf(&b, "    %4d  %.150s\n", s.Reasons[k], k)
	}
	return b.String()
}

// goals says, for each goal that applies to the summary's mode, how the run did, and whether
// that meets it.
func (s *corpusSummary) goals() (lines []string, missed []string) {
	// check reports a goal; below its floor (held false) the test fails.
	check := func(met, held bool, format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		switch {
		case met:
			lines = append(lines, "met     "+line)
		case held:
			lines = append(lines, "MISSED  "+line+" (the floor holds)")
		default:
			lines = append(lines, "BELOW   "+line)
			missed = append(missed, line)
		}
	}
	if s.Mode == modeLive && s.SignInPages > 0 {
		share := float64(s.SignedIn) / float64(s.SignInPages)
		check(share >= corpusGoalLive, share >= corpusFloorLive, "live mode: %d of %d sign-in pages signed in correctly (%.1f%%); the goal is at least %.0f%%, the floor %.0f%%",
			s.SignedIn, s.SignInPages, 100*share, 100*corpusGoalLive, 100*corpusFloorLive)
	}
	if s.Mode == modeCaptured && s.SignInPages > 0 {
		share := float64(len(s.unaccountedList)) / float64(s.SignInPages)
		check(len(s.unaccountedList) <= corpusGoalCapturedUnaccounted, share <= corpusCeilCapturedUnaccounted,
			"captured mode: %d sign-in pages neither signed in nor refused with a code; the goal is %d, the ceiling %.0f%% of them%s",
			len(s.unaccountedList), corpusGoalCapturedUnaccounted, 100*corpusCeilCapturedUnaccounted, listed(s.unaccountedList))
	}
	pw := 0
	for _, d := range passwordDefects {
		pw += s.Defects[d]
	}
	check(pw == 0, false, "%s mode: %d passwords in a field not labelled password, a URL, a header, another origin or an output of headless; must be 0", s.Mode, pw)
	other := s.defects() - pw
	// (A page not named for signing in whose sign-in box was offered and used is no defect:
	// signInBoxes. The table's counts of such pages offered and typed into include them.)
	wrong := s.Defects[defOffered] + s.Defects[defTyped]
	check(wrong == 0, wrong <= corpusCeilDefects, "%s mode: of %d pages not for signing in, %d offered as a sign-in with no sign-in box and %d typed into elsewhere than one; the goal is 0 and 0, the ceiling %d",
		s.Mode, s.OtherPages, s.Defects[defOffered], s.Defects[defTyped], corpusCeilDefects)
	check(other <= corpusGoalDefects, other <= corpusCeilDefects, "%s mode: %d other defects (an account to a form not for signing in, a page not for signing in offered or typed into); the goal is %d, the ceiling %d",
		s.Mode, other, corpusGoalDefects, corpusCeilDefects)
	return lines, missed
}

func listed(pages []string) string {
	if len(pages) == 0 {
		return ""
	}
	return ": " + strings.Join(pages, ", ")
}
