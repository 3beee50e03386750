package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/wire"
)

// authLogin signs a session in by alias, or with --interactive by an account and password the
// person types at the terminal. With an alias the password never passes through this process.
func (c *cmd) authLogin(fs *flag.FlagSet) run {
	s := sessionFlag(fs)
	alias := fs.String("alias", "", "the saved credential's `ALIAS`")
	challenge := fs.String("challenge", "", "the challenge `ID` from a page result's auth_required")
	codeOnly := fs.Bool("code-only", false, "step-up: type only the alias's one-time code into this page's code field (its own approval)")
	newPath := fs.Bool("new-login-path", false, "the sign-in form is not where the credential was used before: ask the person (the prompt says so) instead of refusing LOGIN_PATH_CHANGED; allowed for this one sign-in, the page is not remembered")
	interactive := fs.Bool("interactive", false, "type the account and password at the terminal; offer to save them afterwards")
	pwField := fs.String("password-field", "", "the password field's `REF` (from the last snapshot), when the host's guess of the form is wrong")
	accField := fs.String("account-field", "", "the account field's `REF` (from the last snapshot), with --password-field")
	submit := fs.String("submit", "", "the `REF` of the control that submits the sign-in (from the last snapshot), with --password-field; without it the host's guess, else Enter")
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		if *interactive {
			if *alias != "" || *challenge != "" {
				return nil, nil, usagef("--interactive takes no --alias or --challenge")
			}
			return c.authInteractive(ctx, *s)
		}
		if *alias == "" {
			return nil, nil, usagef("--alias is required (or --interactive)")
		}
		if *pwField == "" && (*accField != "" || *submit != "") {
			return nil, nil, usagef("--account-field and --submit go with --password-field")
		}
		stop := c.waitPresence("waiting for approval at the presence prompt")
		r, err := withHost(ctx, c, func(cl *control.Client) (control.AuthResult, error) {
			return cl.AuthLogin(ctx, control.AuthParams{Session: *s, Alias: *alias, Challenge: *challenge, CodeOnly: *codeOnly, NewLoginPath: *newPath,
				PasswordField: *pwField, AccountField: *accField, Submit: *submit})
		})
		stop()
		if err != nil {
			return nil, nil, err
		}
		return r, func(w io.Writer) {
			fmt.Fprintf(w, "%s: %s as alias %s at %s\n", r.Session, r.Status, r.Alias, r.Origin)
			fmt.Fprintf(w, "evidence: navigated=%v login_form_present=%v url=%s\n", r.Evidence.Navigated, r.Evidence.LoginFormPresent, r.Evidence.URLAfter)
			pageGone(w, r.Evidence)
		}, nil
	}
}

// pageGone tells the person at the terminal that the session no longer shows the page the
// sign-in ended on (the JSON has it as page_discarded and page_lost).
func pageGone(w io.Writer, ev control.Evidence) {
	switch {
	case ev.PageDiscarded:
		fmt.Fprintln(w, "the page would not let the typed password be cleared in time, so it was discarded: the session shows a blank page (run headless visit URL)")
	case ev.PageLost:
		fmt.Fprintln(w, "the page's renderer crashed before the answer: the session shows a blank page; what the site set stays (run headless visit URL)")
	}
}

// interactiveResult is the output of 'auth login --interactive'.
type interactiveResult struct {
	Status   string           `json:"status"`
	Origin   string           `json:"origin"`
	Session  string           `json:"session"`
	Evidence control.Evidence `json:"evidence"`
	Saved    string           `json:"saved"` // the alias, or "" when nothing was saved
}

// authInteractive reads the account and password from the controlling terminal only, sends
// them to the host in one hand-built frame (the trusted terminal side → host), and, only after
// an authenticated outcome, asks on the terminal whether to save them as an alias. The save
// request names the host's one-time token, never the password again.
func (c *cmd) authInteractive(ctx context.Context, session string) (any, func(io.Writer), error) {
	tty, err := c.env.OpenTTY()
	if err != nil {
		return nil, nil, wire.Errorf(wire.CodeNoTTY, "an interactive login reads the account and password from the controlling terminal only (%w)", err)
	}
	defer tty.Close()
	// Where the password would go, for the person to check before typing it. (A connection
	// of its own: the host closes a connection that stays idle while the person types.)
	si, err := withHost(ctx, c, func(cl *control.Client) (control.SessionInfo, error) { return cl.Session(ctx, session) })
	if err != nil {
		return nil, nil, err
	}
	where := si.URL + " (session " + si.Name + ")"
	if si.Isolated {
		where = si.URL + " (isolated session " + si.Name + ")"
	}
	account, err := tty.Line(fmt.Sprintf("Sign in on %s\nAccount: ", where), credential.MaxAccountLen)
	if err != nil {
		return nil, nil, err
	}
	account = strings.TrimSpace(account)
	if account == "" {
		return nil, nil, wire.Errorf(wire.CodeInvalidArgument, "the account is empty; nothing was typed")
	}
	if err := credential.ValidAccount(account); err != nil {
		return nil, nil, err
	}
	pw, err := tty.Secret("Password (not shown): ", credential.MaxSecretLen)
	if err != nil {
		return nil, nil, err
	}
	defer credential.Zero(pw)
	if err := credential.ValidSecret(pw); err != nil {
		return nil, nil, err
	}
	cl, err := c.control(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer cl.Close()
	r, err := cl.Enroll(ctx, session, account, pw)
	credential.Zero(pw)
	if err != nil {
		return nil, nil, err
	}
	out := interactiveResult{Status: r.Status, Origin: r.Origin, Session: r.Session, Evidence: r.Evidence}
	human := func(w io.Writer) {
		fmt.Fprintf(w, "%s: %s at %s\n", out.Session, out.Status, out.Origin)
		fmt.Fprintf(w, "evidence: navigated=%v login_form_present=%v url=%s\n", out.Evidence.Navigated, out.Evidence.LoginFormPresent, out.Evidence.URLAfter)
		if out.Saved != "" {
			fmt.Fprintf(w, "saved as alias %s\n", out.Saved)
		} else if out.Status == "authenticated" {
			fmt.Fprintln(w, "not saved")
		}
	}
	if r.Status != "authenticated" || r.Token == "" {
		return out, human, nil // failed or unknown: no save is offered
	}
	discard := func() { cl.EnrollDiscard(ctx, r.Token) }
	ans, err := tty.Line(fmt.Sprintf("Signed in on %s as %s.\nSave as alias? [y/N] ", r.Origin, account), 16)
	if a := strings.ToLower(strings.TrimSpace(ans)); err != nil || a != "y" && a != "yes" {
		discard()
		return out, human, nil
	}
	prompt := "Alias: "
	for try := 0; ; try++ {
		alias, err := tty.Line(prompt, credential.MaxAliasLen)
		if err != nil {
			discard()
			return nil, nil, err
		}
		alias = strings.TrimSpace(alias)
		err = credential.ValidAlias(alias)
		if err == nil {
			var saved control.EnrollSaved
			saved, err = cl.EnrollSave(ctx, control.EnrollSaveParams{Token: r.Token, Alias: alias})
			if err == nil {
				out.Saved = saved.Saved
				return out, human, nil
			}
		}
		code := wire.CodeOf(err)
		if try >= 2 || code != wire.CodeAliasExists && code != wire.CodeInvalidArgument {
			discard()
			return nil, nil, err
		}
		prompt = err.Error() + "; choose another.\nAlias: "
	}
}
