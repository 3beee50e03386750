package cli

import (
	"context"
	"crypto/subtle"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/totp"
	"github.com/headless-dev/headless/internal/wire"
)

func (c *cmd) credInit(fs *flag.FlagSet) run {
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
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
}

// credRepair is the way out of PRESENCE_AUTO_UNLOCK.
func (c *cmd) credRepair(fs *flag.FlagSet) run {
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		b, err := c.env.Broker(ctx)
		if err != nil {
			return nil, nil, err
		}
		defer b.Close()
		if !c.json {
			fmt.Fprintln(c.env.Stderr, "headless: if the keyring stores the 'headless' keyring's password, it will ask you first to change it (the old password, then a new one),\n"+
				"then to unlock it once with the new one: leave 'Automatically unlock' unticked")
		}
		r, err := b.Repair(ctx)
		if err != nil {
			return nil, nil, err
		}
		return r, func(w io.Writer) {
			if r.Repaired {
				fmt.Fprintln(w, "repaired: the 'headless' keyring has a new password, none is stored for automatic unlock, and it is locked")
			} else {
				fmt.Fprintln(w, "nothing to repair: no automatic-unlock password is stored for the 'headless' keyring")
			}
		}, nil
	}
}

// storeFlag is --session of the credentials commands: the session S, whose credentials are
// the ones it signs in with.
func storeFlag(fs *flag.FlagSet) *string {
	return fs.String("session", "", "the store session `NAME` signs in with (default: the vault)")
}

// store is where a credentials command reads and writes: the vault (isolated == ""), or the
// in-memory store of an isolated session, which brokerd keeps and which answers only the
// host's own broker connection (so the CLI reaches it through the host).
type store struct {
	isolated string
}

// storeOf resolves --session S to the store S signs in with: the vault for a normal session
// (default included) and without --session; the session's own store for an isolated one.
// Only the running host knows S: without one, a session other than default is
// HOST_UNAVAILABLE (could not look), and one the host does not have is SESSION_UNKNOWN.
func (c *cmd) storeOf(ctx context.Context, session string) (store, error) {
	if session == "" || session == control.DefaultSession {
		return store{}, nil
	}
	if err := credential.ValidSession(session); err != nil {
		return store{}, err
	}
	info, err := withHost(ctx, c, func(cl *control.Client) (control.SessionInfo, error) { return cl.Session(ctx, session) })
	if err != nil {
		if wire.CodeOf(err) == wire.CodeHostUnavail {
			return store{}, wire.Errorf(wire.CodeHostUnavail, "session %q lives in the browser host, which is not running (%w)", session, err).
				WithHint("start it with 'headless start'. Without a host, only the vault is there (no --session, or --session default)")
		}
		return store{}, err
	}
	if info.Isolated {
		return store{isolated: session}, nil
	}
	return store{}, nil
}

func (st store) String() string {
	if st.isolated == "" {
		return "the vault"
	}
	return "isolated session " + st.isolated + "'s store"
}

// list lists the store's credentials at origin o ("" = all).
func (c *cmd) list(ctx context.Context, st store, o string) ([]brokerapi.Credential, error) {
	if st.isolated != "" {
		r, err := withHost(ctx, c, func(cl *control.Client) (control.CredentialList, error) {
			return cl.CredentialsList(ctx, control.CredentialsListParams{Session: st.isolated, Origin: o})
		})
		return r.Credentials, err
	}
	b, err := c.env.Broker(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return b.List(ctx, o)
}

func (c *cmd) credList(fs *flag.FlagSet) run {
	o := fs.String("origin", "", "only this `ORIGIN`")
	session := storeFlag(fs)
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		if *o != "" {
			co, err := origin.Canonical(*o)
			if err != nil {
				return nil, nil, err
			}
			*o = co
		}
		st, err := c.storeOf(ctx, *session)
		if err != nil {
			return nil, nil, err
		}
		creds, err := c.list(ctx, st, *o)
		if err != nil {
			return nil, nil, err
		}
		if creds == nil {
			creds = []brokerapi.Credential{}
		}
		res := brokerapi.ListResult{Credentials: creds}
		return res, func(w io.Writer) {
			if len(creds) == 0 {
				fmt.Fprintf(w, "no saved credentials in %s\n", st)
				return
			}
			tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "ORIGIN\tALIAS\tACCOUNT\tKIND\tCREATED")
			for _, r := range creds {
				factor := "password"
				switch {
				case r.Passkey:
					factor = "passkey"
				case r.TOTP:
					factor = "password+totp"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Origin, r.Alias, r.Account, factor, r.Created.Local().Format(time.DateTime))
			}
			tw.Flush()
		}, nil
	}
}

// required is a usage error for the first of flags left empty.
func required(flags ...[2]string) error {
	for _, f := range flags {
		if f[1] == "" {
			return usagef("--%s is required", f[0])
		}
	}
	return nil
}

func (c *cmd) credAdd(fs *flag.FlagSet) run {
	o := fs.String("origin", "", "the exact `ORIGIN` the credential is for")
	account := fs.String("account", "", "the `ACCOUNT` (user name or e-mail); leave it out for a site that signs in with a password alone")
	alias := fs.String("alias", "", "the `ALIAS` agents will use")
	withTOTP := fs.Bool("totp", false, "after the password, read a TOTP seed (otpauth://totp/ URI or base32) from the terminal")
	passkey := fs.Bool("passkey", false, "save the passkey the site registers in session --session (default: default) while this waits, instead of a password")
	wait := fs.Duration("wait", control.PasskeyAddWait, "with --passkey, how long to wait for the site's registration (at most 10m)")
	var loginPaths []string
	fs.Func("login-path", "a `PATH` of the origin where its sign-in form is (repeatable); without one, the page of the first sign-in you approve is remembered (its prompt warns); a page allowed later with auth login --new-login-path is never remembered", func(v string) error {
		if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, "?#") {
			return fmt.Errorf("%q is not an absolute path without query or fragment (for example /login)", v)
		}
		loginPaths = append(loginPaths, v)
		return nil
	})
	var also []string
	fs.Func("also-origin", "another `ORIGIN` the site's sign-in sends the password to (repeatable; at most 8): a sibling origin of the same site, such as https://www.example.com for a sign-in page at https://signin.example.com; shown in every prompt", func(v string) error {
		c, err := origin.Canonical(v)
		if err != nil {
			return err
		}
		also = append(also, c)
		return nil
	})
	session := storeFlag(fs)
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		if err := required([2]string{"origin", *o}, [2]string{"alias", *alias}); err != nil {
			return nil, nil, err
		}
		co, err := origin.Canonical(*o)
		if err != nil {
			return nil, nil, err
		}
		if slices.Contains(also, co) {
			return nil, nil, usagef("--also-origin %s is the credential's own origin", co)
		}
		if len(also) > brokerapi.MaxAlsoOrigins {
			return nil, nil, usagef("at most %d --also-origin", brokerapi.MaxAlsoOrigins)
		}
		if err := credential.ValidAlias(*alias); err != nil {
			return nil, nil, err
		}
		if err := credential.ValidAccount(*account); err != nil {
			return nil, nil, err
		}
		if *passkey {
			return c.credAddPasskey(ctx, control.PasskeyAddParams{Session: *session, Origin: co, Account: *account, Alias: *alias,
				LoginPaths: loginPaths, WaitMS: int(min(*wait, control.MaxPasskeyAddWait) / time.Millisecond)}, *withTOTP)
		}
		st, err := c.storeOf(ctx, *session)
		if err != nil {
			return nil, nil, err
		}
		tty, err := c.env.OpenTTY()
		if err != nil {
			return nil, nil, wire.Errorf(wire.CodeNoTTY, "no controlling terminal to read the password from (%w)", err)
		}
		defer tty.Close()
		who := *account
		if who == "" {
			who = "no account"
		}
		pw, err := tty.Secret(fmt.Sprintf("Password for %s at %s (alias %s): ", who, co, *alias), credential.MaxSecretLen)
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
			return nil, nil, wire.Errorf(wire.CodeInvalidArgument, "the two passwords differ; nothing was saved").
				WithHint("type the same password twice")
		}
		if err := credential.ValidSecret(pw); err != nil {
			return nil, nil, err
		}
		if *withTOTP {
			// The seed, like the password, only from the terminal with echo off; it travels
			// with the password as one stored secret (credential.JoinFactor).
			stored, err := readTOTP(tty, pw)
			if err != nil {
				return nil, nil, err
			}
			credential.Zero(pw)
			pw = stored
			defer credential.Zero(stored)
		}
		var cred brokerapi.Credential
		if st.isolated != "" {
			// One hand-built frame to the host (never a JSON encoder buffer; zeroed after
			// writing), which passes it on to the isolated session's store.
			cred, err = withHost(ctx, c, func(cl *control.Client) (control.Credential, error) {
				return cl.CredentialsAdd(ctx, st.isolated, co, *account, *alias, loginPaths, also, pw)
			})
		} else {
			var b *brokerapi.Client
			if b, err = c.env.Broker(ctx); err != nil {
				return nil, nil, err
			}
			defer b.Close()
			if v, verr := b.Version(ctx); verr == nil && v.Presence == "passphrase" && !c.json {
				fmt.Fprintln(c.env.Stderr, "headless: brokerd's pinentry now asks for your headless passphrase, to seal the password with it\n"+
					"(the first time you choose it: at least 12 characters, asked twice)")
			}
			cred, err = b.AddCredential(ctx, brokerapi.AddParams{Origin: co, Account: *account, Alias: *alias, LoginPaths: loginPaths, AlsoOrigins: also, Secret: pw})
		}
		if err != nil {
			return nil, nil, err
		}
		return cred, func(w io.Writer) {
			who := cred.Account
			if who == "" {
				who = "no account (a sign-in with a password only)"
			}
			fmt.Fprintf(w, "saved alias %s for %s at %s in %s\n", cred.Alias, who, cred.Origin, st)
			if len(loginPaths) == 0 {
				fmt.Fprintf(w, "no sign-in page set: the page of the first sign-in you approve is remembered (to set it: add again with --login-path PATH)\n")
			}
		}, nil
	}
}

// credAddPasskey is 'credentials add --passkey': the host waits for the site's registration in
// the session and hands the new passkey to brokerd; nothing of it reaches this process.
func (c *cmd) credAddPasskey(ctx context.Context, p control.PasskeyAddParams, withTOTP bool) (any, func(io.Writer), error) {
	if withTOTP {
		return nil, nil, usagef("--totp and --passkey do not go together: a passkey has no second factor")
	}
	if p.WaitMS <= 0 {
		return nil, nil, usagef("--wait must be positive")
	}
	if p.Session == "" {
		p.Session = control.DefaultSession
	}
	if !c.json {
		fmt.Fprintf(c.env.Stderr, "headless: waiting up to %v for %s to register a passkey in session %s: start the site's passkey registration on that page now\n",
			time.Duration(p.WaitMS)*time.Millisecond, p.Origin, p.Session)
	}
	cred, err := withHost(ctx, c, func(cl *control.Client) (control.Credential, error) { return cl.CredentialsAddPasskey(ctx, p) })
	if err != nil {
		return nil, nil, err
	}
	return cred, func(w io.Writer) {
		fmt.Fprintf(w, "saved passkey alias %s for %s at %s\n", cred.Alias, cred.Account, cred.Origin)
	}, nil
}

// readTOTP reads a TOTP seed (an otpauth://totp/ URI or a base32 seed) from the terminal with
// echo off and returns a fresh stored secret holding pw and the seed. Nothing it prints or
// answers quotes the seed.
func readTOTP(tty TTY, pw []byte) ([]byte, error) {
	in, err := tty.Secret("TOTP seed (otpauth://totp/... URI or base32 seed; not echoed): ", totp.MaxURILen)
	if err != nil {
		return nil, err
	}
	defer credential.Zero(in)
	k, err := totp.Parse(in)
	if err != nil {
		return nil, wire.Errorf(wire.CodeInvalidArgument, "%w; nothing was saved", err).
			WithHint("paste the otpauth://totp/ URI or the base32 seed the site showed (SHA1/SHA256/SHA512, 6-8 digits)")
	}
	defer k.Zero()
	factor := k.Marshal(nil)
	defer credential.Zero(factor)
	return credential.JoinFactor(pw, factor), nil
}

// originAlias declares --origin and --alias of a credential command; its check returns the
// canonical origin.
func originAlias(fs *flag.FlagSet, verb string) (o, alias *string, check func() (string, error)) {
	o = fs.String("origin", "", "the `ORIGIN` of the credential")
	alias = fs.String("alias", "", "the `ALIAS` to "+verb)
	return o, alias, func() (string, error) {
		if err := required([2]string{"origin", *o}, [2]string{"alias", *alias}); err != nil {
			return "", err
		}
		return origin.Canonical(*o)
	}
}

func (c *cmd) credRemove(fs *flag.FlagSet) run {
	_, alias, check := originAlias(fs, "remove")
	session := storeFlag(fs)
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		co, err := check()
		if err != nil {
			return nil, nil, err
		}
		st, err := c.storeOf(ctx, *session)
		if err != nil {
			return nil, nil, err
		}
		creds, err := c.list(ctx, st, co)
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
			return nil, nil, wire.Errorf(wire.CodeAliasUnknown, "no alias %q at %s in %s", *alias, co, st)
		}
		ok, err := c.confirm(fmt.Sprintf("Remove alias %s (%s) at %s from %s? [y/N] ", found.Alias, found.Account, co, st),
			wire.Errorf(wire.CodeNoTTY, "removing a credential needs confirmation on the controlling terminal"))
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, wire.Errorf(wire.CodeCancelled, "not removed")
		}
		if st.isolated != "" {
			_, err = withHost(ctx, c, func(cl *control.Client) (struct{}, error) {
				return struct{}{}, cl.CredentialsRemove(ctx, control.CredentialsRemoveParams{Session: st.isolated, Origin: co, Alias: found.Alias})
			})
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
		return res, func(w io.Writer) { fmt.Fprintf(w, "removed alias %s at %s from %s\n", found.Alias, co, st) }, nil
	}
}

// credVerify has the browser host take the credential through the full gate (challenge,
// presence — the prompt says it is a verification — and vault) and zero it unseen: no release
// ever reaches this process. Without a running host it is HOST_UNAVAILABLE.
func (c *cmd) credVerify(fs *flag.FlagSet) run {
	_, alias, check := originAlias(fs, "verify")
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		co, err := check()
		if err != nil {
			return nil, nil, err
		}
		cl, err := c.control(ctx)
		if err != nil {
			return nil, nil, wire.Errorf(wire.CodeHostUnavail, "credentials verify goes through the browser host, which is not running (%w)", err).
				WithHint("start it with 'headless start', then verify again (the host receives the password and zeroes it; nothing is typed)")
		}
		defer cl.Close()
		if !c.json {
			fmt.Fprintf(c.env.Stderr, "waiting for approval at the presence prompt (a verification: nothing will be typed)…\n")
		}
		res, err := cl.CredentialsVerify(ctx, control.VerifyParams{Origin: co, Alias: *alias})
		if err != nil {
			return nil, nil, err
		}
		return res, func(w io.Writer) {
			fmt.Fprintf(w, "released: alias %s (%s) at %s — received by the browser host and zeroed, never shown or typed\n", res.Alias, res.Account, res.Origin)
		}, nil
	}
}
