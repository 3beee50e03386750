package cli

import (
	"context"
	"crypto/subtle"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/headless-dev/headless/host"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/wire"
)

func (c *cmd) credInit(ctx context.Context, fs *flag.FlagSet, args []string) (any, func(io.Writer), error) {
	if err := parse(fs, args, nil); err != nil {
		return nil, nil, err
	}
	b, err := c.env.Broker(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer b.Close()
	if !c.json {
		fmt.Fprintln(c.env.Stderr, "headless: the keyring will ask you for the new 'headless' keyring's password (leave 'automatically unlock' unticked)")
	}
	r, err := b.Init(ctx)
	if err != nil {
		return nil, nil, err
	}
	return r, func(w io.Writer) {
		if r.Created {
			fmt.Fprintln(w, "created the 'headless' keyring; it stays locked except while you approve a release")
		} else {
			fmt.Fprintln(w, "the 'headless' keyring already exists")
		}
	}, nil
}

// listIn lists the vault (asking brokerd) or an isolated session's store (asking the host: the
// store answers only the host's own broker connection).
func (c *cmd) listIn(ctx context.Context, session, o string) ([]brokerapi.Credential, error) {
	if session != "" {
		var r brokerapi.ListResult
		err := c.call(ctx, control.MethodCredentialsList, host.CredentialsListParams{Session: session, Origin: o}, &r)
		return r.Credentials, err
	}
	b, err := c.env.Broker(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return b.List(ctx, o)
}

// storeFlag is --session of the credentials commands: an isolated session's in-memory store in
// brokerd (reached through the host) instead of the vault.
func storeFlag(fs *flag.FlagSet) *string {
	return fs.String("session", "", "an isolated session's store instead of the vault")
}

func storeName(session string) string {
	if session == "" {
		return "the vault"
	}
	return "isolated session " + session + "'s store"
}

func (c *cmd) credList(ctx context.Context, fs *flag.FlagSet, args []string) (any, func(io.Writer), error) {
	o := fs.String("origin", "", "only this origin")
	session := storeFlag(fs)
	if err := parse(fs, args, nil); err != nil {
		return nil, nil, err
	}
	if *o != "" {
		co, err := origin.Canonical(*o)
		if err != nil {
			return nil, nil, err
		}
		*o = co
	}
	creds, err := c.listIn(ctx, *session, *o)
	if err != nil {
		return nil, nil, err
	}
	res := brokerapi.ListResult{Credentials: creds}
	return res, func(w io.Writer) {
		if len(creds) == 0 {
			fmt.Fprintf(w, "no saved credentials in %s\n", storeName(*session))
			return
		}
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "ORIGIN\tALIAS\tACCOUNT\tCREATED")
		for _, r := range creds {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Origin, r.Alias, r.Account, r.Created.Local().Format(time.DateTime))
		}
		tw.Flush()
	}, nil
}

func (c *cmd) credAdd(ctx context.Context, fs *flag.FlagSet, args []string) (any, func(io.Writer), error) {
	o := fs.String("origin", "", "exact origin the credential is for")
	account := fs.String("account", "", "account (user name or e-mail)")
	alias := fs.String("alias", "", "alias agents will use")
	session := storeFlag(fs)
	if err := parse(fs, args, map[string]*string{"origin": o, "account": account, "alias": alias}); err != nil {
		return nil, nil, err
	}
	co, err := origin.Canonical(*o)
	if err != nil {
		return nil, nil, err
	}
	if err := credential.ValidAlias(*alias); err != nil {
		return nil, nil, err
	}
	if err := credential.ValidAccount(*account); err != nil {
		return nil, nil, err
	}
	tty, err := c.env.OpenTTY()
	if err != nil {
		return nil, nil, wire.Errorf(wire.CodeNoTTY, "no controlling terminal to read the password from (%v)", err)
	}
	defer tty.Close()
	pw, err := tty.Secret(fmt.Sprintf("Password for %s at %s (alias %s): ", *account, co, *alias), credential.MaxSecretLen)
	if err != nil {
		return nil, nil, err
	}
	defer credential.Zero(pw)
	again, err := tty.Secret("Repeat the password: ", credential.MaxSecretLen)
	if err != nil {
		return nil, nil, err
	}
	same := subtle.ConstantTimeCompare(pw, again) == 1
	credential.Zero(again)
	if !same {
		return nil, nil, wire.Errorf(wire.CodeInvalidArgument, "the two passwords differ; nothing was saved")
	}
	if err := credential.ValidSecret(pw); err != nil {
		return nil, nil, err
	}
	var cred brokerapi.Credential
	if *session != "" {
		cred, err = c.addThroughHost(ctx, *session, co, *account, *alias, pw)
	} else {
		var b *brokerapi.Client
		if b, err = c.env.Broker(ctx); err != nil {
			return nil, nil, err
		}
		defer b.Close()
		cred, err = b.Add(ctx, co, *account, *alias, pw)
	}
	if err != nil {
		return nil, nil, err
	}
	return cred, func(w io.Writer) {
		fmt.Fprintf(w, "saved alias %s for %s at %s in %s\n", cred.Alias, cred.Account, cred.Origin, storeName(*session))
	}, nil
}

// addThroughHost sends the person's password to the host in one hand-built frame (never a
// JSON encoder buffer; zeroed after writing), for an isolated session's store.
func (c *cmd) addThroughHost(ctx context.Context, session, o, account, alias string, pw []byte) (brokerapi.Credential, error) {
	cl, err := c.control(ctx)
	if err != nil {
		return brokerapi.Credential{}, err
	}
	defer cl.Close()
	id, unlock := cl.Lock()
	defer unlock()
	frame, err := brokerapi.SecretRequestFrame(id, control.MethodCredentialsAdd, struct {
		Session string `json:"session"`
		Origin  string `json:"origin"`
		Account string `json:"account"`
		Alias   string `json:"alias"`
	}{session, o, account, alias}, pw)
	if err != nil {
		return brokerapi.Credential{}, err
	}
	resp, err := cl.RoundTrip(ctx, id, frame)
	clear(frame)
	if err != nil {
		return brokerapi.Credential{}, hostErr(err)
	}
	var r struct {
		ID     uint64                `json:"id"`
		Result *brokerapi.Credential `json:"result"`
		Error  *wire.Error           `json:"error"`
	}
	if err := wire.DecodeStrict(resp, &r); err != nil {
		return brokerapi.Credential{}, wire.Errorf(wire.CodeHostUnavail, "malformed reply from the host: %v", err)
	}
	if r.Error != nil {
		return brokerapi.Credential{}, r.Error
	}
	if r.Result == nil {
		return brokerapi.Credential{}, wire.Errorf(wire.CodeHostUnavail, "empty reply from the host")
	}
	return *r.Result, nil
}

// originAlias parses the --origin and --alias of a credential command and canonicalises the
// origin.
func (c *cmd) originAlias(fs *flag.FlagSet, args []string, verb string) (string, *string, error) {
	o := fs.String("origin", "", "origin of the credential")
	alias := fs.String("alias", "", "alias to "+verb)
	if err := parse(fs, args, map[string]*string{"origin": o, "alias": alias}); err != nil {
		return "", nil, err
	}
	co, err := origin.Canonical(*o)
	if err != nil {
		return "", nil, err
	}
	return co, alias, nil
}

func (c *cmd) credRemove(ctx context.Context, fs *flag.FlagSet, args []string) (any, func(io.Writer), error) {
	session := storeFlag(fs)
	co, alias, err := c.originAlias(fs, args, "remove")
	if err != nil {
		return nil, nil, err
	}
	creds, err := c.listIn(ctx, *session, co)
	if err != nil {
		return nil, nil, err
	}
	var found *brokerapi.Credential
	for i := range creds {
		if strings.EqualFold(creds[i].Alias, *alias) {
			found = &creds[i]
		}
	}
	if found == nil {
		return nil, nil, wire.Errorf(wire.CodeAliasUnknown, "no alias %q at %s", *alias, co)
	}
	ok, err := c.confirm(fmt.Sprintf("Remove alias %s (%s) at %s from %s? [y/N] ", found.Alias, found.Account, co, storeName(*session)),
		wire.Errorf(wire.CodeNoTTY, "removing a credential needs confirmation on the controlling terminal"))
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, wire.Errorf(wire.CodeCancelled, "not removed")
	}
	if *session != "" {
		err = c.call(ctx, control.MethodCredentialsRemove, host.CredentialsRemoveParams{Session: *session, Origin: co, Alias: found.Alias}, nil)
	} else {
		var b *brokerapi.Client
		if b, err = c.env.Broker(ctx); err == nil {
			err = b.Remove(ctx, co, found.Alias)
			b.Close()
		}
	}
	if err != nil {
		return nil, nil, err
	}
	res := struct {
		Removed brokerapi.Credential `json:"removed"`
	}{*found}
	return res, func(w io.Writer) { fmt.Fprintf(w, "removed alias %s at %s\n", found.Alias, co) }, nil
}

// credVerify has the browser host take the credential through the full gate (challenge,
// presence — the prompt says it is a verification — and vault) and zero it unseen: no release
// ever reaches this process. Without a running host it is HOST_UNAVAILABLE.
func (c *cmd) credVerify(ctx context.Context, fs *flag.FlagSet, args []string) (any, func(io.Writer), error) {
	co, alias, err := c.originAlias(fs, args, "verify")
	if err != nil {
		return nil, nil, err
	}
	cl, err := c.control(ctx)
	if err != nil {
		return nil, nil, wire.Errorf(wire.CodeHostUnavail, "credentials verify goes through the browser host, which is not running").
			WithHint("start it with 'headless start', then verify again (the host receives the password and zeroes it; nothing is typed)")
	}
	defer cl.Close()
	if !c.json {
		fmt.Fprintf(c.env.Stderr, "waiting for approval at the presence prompt (a verification: nothing will be typed)…\n")
	}
	var res host.VerifyResult
	if err := hostErr(cl.Call(ctx, control.MethodCredentialsVerify, host.VerifyParams{Origin: co, Alias: *alias}, &res)); err != nil {
		return nil, nil, err
	}
	return res, func(w io.Writer) {
		fmt.Fprintf(w, "released: alias %s (%s) at %s — received by the browser host and zeroed, never shown or typed\n", res.Alias, res.Account, res.Origin)
	}, nil
}
