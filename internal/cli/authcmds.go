package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/headless-dev/headless/host"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// authLogin signs a session in by alias, or with --interactive by an account and password the
// person types at the terminal. With an alias the password never passes through this process.
func (c *cmd) authLogin(ctx context.Context, fs *flag.FlagSet, args []string) (any, func(io.Writer), error) {
	s := sessionFlag(fs)
	alias := fs.String("alias", "", "saved credential alias")
	challenge := fs.String("challenge", "", "challenge id from a page result's auth_required")
	interactive := fs.Bool("interactive", false, "type the account and password at the terminal; offer to save them afterwards")
	if err := parse(fs, args, nil); err != nil {
		return nil, nil, err
	}
	if *interactive {
		if *alias != "" || *challenge != "" {
			return nil, nil, &usageError{"--interactive takes no --alias or --challenge"}
		}
		return c.authInteractive(ctx, *s)
	}
	if *alias == "" {
		return nil, nil, &usageError{"--alias is required (or --interactive)"}
	}
	if !c.json && stderrIsTerminal() {
		fmt.Fprintln(c.env.Stderr, "waiting for approval at the presence prompt…")
	}
	var r host.AuthResult
	if err := c.call(ctx, control.MethodAuthLogin, host.AuthParams{Session: *s, Alias: *alias, Challenge: *challenge}, &r); err != nil {
		return nil, nil, err
	}
	return r, func(w io.Writer) {
		fmt.Fprintf(w, "%s: %s as alias %s at %s\n", r.Session, r.Status, r.Alias, r.Origin)
		fmt.Fprintf(w, "evidence: navigated=%v login_form_present=%v url=%s\n", r.Evidence.Navigated, r.Evidence.LoginFormPresent, r.Evidence.URLAfter)
	}, nil
}

// interactiveResult is the output of 'auth login --interactive'.
type interactiveResult struct {
	Status   string        `json:"status"`
	Origin   string        `json:"origin"`
	Session  string        `json:"session"`
	Evidence host.Evidence `json:"evidence"`
	Saved    string        `json:"saved"` // the alias, or "" when nothing was saved
}

// authInteractive reads the account and password from the controlling terminal only, sends
// them to the host in one hand-built frame (the trusted terminal side → host), and, only after
// an authenticated outcome, asks on the terminal whether to save them as an alias. The save
// request names the host's one-time token, never the password again.
func (c *cmd) authInteractive(ctx context.Context, session string) (any, func(io.Writer), error) {
	tty, err := c.env.OpenTTY()
	if err != nil {
		return nil, nil, wire.Errorf(wire.CodeNoTTY, "an interactive login reads the account and password from the controlling terminal only (%v)", err)
	}
	defer tty.Close()
	// Where the password would go, for the person to check before typing it.
	var l host.SessionList
	if err := c.call(ctx, control.MethodSessionList, nil, &l); err != nil {
		return nil, nil, err
	}
	where := ""
	for _, si := range l.Sessions {
		if si.Name == session {
			where = si.URL
			if si.Isolated {
				where += " (isolated session " + si.Name + ")"
			} else {
				where += " (session " + si.Name + ")"
			}
		}
	}
	if where == "" {
		return nil, nil, wire.Errorf(wire.CodeSessionUnknown, "no session %q", session)
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
	r, err := enroll(ctx, cl, session, account, pw)
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
	discard := func() {
		cl.Call(ctx, control.MethodAuthEnrollDiscard, host.EnrollTokenParams{Token: r.Token}, nil)
	}
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
			var saved host.EnrollSaved
			err = cl.Call(ctx, control.MethodAuthEnrollSave, host.EnrollSaveParams{Token: r.Token, Alias: alias}, &saved)
			if err == nil {
				out.Saved = saved.Saved
				return out, human, nil
			}
		}
		code := toWire(err).Code
		if try >= 2 || code != wire.CodeAliasExists && code != wire.CodeInvalidArgument {
			discard()
			return nil, nil, err
		}
		prompt = toWire(err).Message + "; choose another.\nAlias: "
	}
}

// enroll sends auth.enroll as one hand-built frame, so that no encoder buffer holds the
// password; the frame is zeroed after writing.
func enroll(ctx context.Context, cl *rpc.Client, session, account string, pw []byte) (host.EnrollResult, error) {
	id, unlock := cl.Lock()
	defer unlock()
	frame, err := brokerapi.SecretRequestFrame(id, control.MethodAuthEnroll, struct {
		Session string `json:"session"`
		Account string `json:"account"`
	}{session, account}, pw)
	if err != nil {
		return host.EnrollResult{}, err
	}
	resp, err := cl.RoundTrip(ctx, id, frame)
	clear(frame)
	if err != nil {
		if errors.Is(err, rpc.ErrUnreachable) {
			return host.EnrollResult{}, wire.Errorf(wire.CodeHostUnavail, "the browser host went away: %v", err)
		}
		return host.EnrollResult{}, err
	}
	var r struct {
		ID     uint64             `json:"id"`
		Result *host.EnrollResult `json:"result"`
		Error  *wire.Error        `json:"error"`
	}
	if err := wire.DecodeStrict(resp, &r); err != nil {
		return host.EnrollResult{}, wire.Errorf(wire.CodeHostUnavail, "malformed reply from the host: %v", err)
	}
	if r.Error != nil {
		return host.EnrollResult{}, r.Error
	}
	if r.Result == nil {
		return host.EnrollResult{}, wire.Errorf(wire.CodeHostUnavail, "empty reply from the host")
	}
	return *r.Result, nil
}
