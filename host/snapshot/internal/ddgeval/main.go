// Command ddgeval measures sign-in form detection (snapshot.LoginForms) on DuckDuckGo's
// labelled corpus of real pages (../shared/corpora/ddg-forms), offline and in seconds.
//
// It works in two steps. capture loads every corpus page once in Debian Chromium over the
// pipe, at the page's original address (the document request answered with the file, every
// other request failed before it leaves; what is left of the page's scripts runs, as in the
// host), and keeps each DOMSnapshot.captureSnapshot result (snapshot.CaptureParams, as the
// host captures it) in a directory of its own, outside the repository (about 30 MB
// gzipped). score then runs snapshot.Build (with snapshot.SignInOptions, the bounds of the
// host's sign-in looks) and snapshot.LoginForms over the captured pages and judges what the
// host would use (the first sign-in candidate of the top document) against DuckDuckGo's
// labels (data-manual-scoring on fields, data-manual-submit on the control a person clicks):
//
//   - a *login* page is right when the offered password field is a labelled password, the
//     offered account field a labelled account (username, e-mail, phone), or none when the
//     form holds none; a first step (no password field) offers a labelled account field; the
//     offered submit control is the labelled one or a submit button of the form;
//   - any other page (sign-up, change-password, checkout, …) is right when nothing is offered,
//     but for the few that hold a sign-in form all the same (signInLike), where the offered
//     password must be a labelled one.
//
// Pages are split in two halves by a hash of the site (heldOut): tune on one, measure on the
// other, and report both.
//
// Usage (from the repository root):
//
//	go run ./host/snapshot/internal/ddgeval capture -out /tmp/ddg-snapshots
//	go run ./host/snapshot/internal/ddgeval score -in /tmp/ddg-snapshots [-v] [-only NAME]
//
// capture needs /usr/lib/chromium/chromium and takes a few minutes; score takes seconds.
// DDG_SNAPSHOTS=/tmp/ddg-snapshots go test ./host/snapshot/internal/ddgeval runs score as a
// test that fails below the figures last measured (floor in score_test.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/snapshot"
)

const usage = `usage:
  ddgeval capture [-corpus DIR] -out DIR [-only SUBSTR] [-scripts=false]
  ddgeval score -in DIR [-v] [-only SUBSTR] [-default-bounds] [-dump]`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	corpus := fs.String("corpus", "/work/shared/corpora/ddg-forms", "the corpus directory")
	out := fs.String("out", "", "capture: where to write the snapshots")
	in := fs.String("in", "", "score: the captured snapshots")
	only := fs.String("only", "", "only the files whose name contains this")
	verbose := fs.Bool("v", false, "score: list every failure")
	dumpPage := fs.Bool("dump", false, "score: print the outline and every candidate of the pages (use with -only)")
	defaultBounds := fs.Bool("default-bounds", false, "score: build outlines with the default bounds (the agent's snapshot) instead of snapshot.SignInOptions")
	scripts := fs.Bool("scripts", true, "capture: let the pages' inline scripts and handler attributes run, as the host does")
	fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "capture":
		if *out == "" {
			err = fmt.Errorf("capture needs -out")
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		err = capture(ctx, *corpus, *out, *only, *scripts)
	case "score":
		if *dumpPage {
			err = dump(os.Stdout, *in, *only)
			break
		}
		o := snapshot.SignInOptions()
		if *defaultBounds {
			o = snapshot.Options{}
		}
		var rs []result
		if rs, err = score(*in, *only, o); err == nil {
			report(os.Stdout, rs, *verbose)
		}
	default:
		err = fmt.Errorf("%s", usage)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ddgeval:", err)
		os.Exit(1)
	}
}

// pick is what the host uses: the first sign-in candidate of the top document.
func pick(o snapshot.Outline) (snapshot.LoginForm, bool) {
	for _, f := range snapshot.LoginForms(o) {
		if f.Frame == "" && f.SignIn {
			return f, true
		}
	}
	return snapshot.LoginForm{}, false
}

// why says why nothing was offered: the reasons of the candidates found.
func why(o snapshot.Outline) string {
	var rs []string
	for _, f := range snapshot.LoginForms(o) {
		rs = append(rs, fmt.Sprintf("[%s/%s %s {%s}]", f.Password, f.Username, f.NotSignIn, f.Scores))
	}
	if len(rs) == 0 {
		return "no candidate"
	}
	return strings.Join(rs, " ")
}

// dump prints, for each captured page whose name contains only, its URL and title, its
// elements (one line each) and every LoginForms candidate.
func dump(w io.Writer, dir, only string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !strings.Contains(e.Name(), only) {
			continue
		}
		p, err := readPage(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		o, _, err := snapshot.Build(p.Raw, snapshot.SignInOptions())
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "== %s %s %q\n", p.File, o.URL, o.Title)
		for _, x := range o.Elements {
			if x.Kind == "text" {
				fmt.Fprintf(w, "  %s text %q\n", x.Ref, trim(x.Text, 60))
				continue
			}
			fmt.Fprintf(w, "  %s %s type=%s name=%q id=%q form=%s text=%q ph=%q ac=%q class=%q dis=%v frame=%q\n", x.Ref, x.Kind, x.Type,
				x.Name, x.ID, x.Form, trim(x.Text, 50), trim(x.Placeholder, 30), x.Autocomplete, trim(x.Class, 30), x.Disabled, x.Frame)
		}
		for _, f := range snapshot.LoginForms(o) {
			fmt.Fprintf(w, "  => %+v\n", f)
		}
	}
	return nil
}
