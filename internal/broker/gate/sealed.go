package gate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/broker/seal"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

// sealer is a presence provider whose grant is the person's passphrase (presence.Passphrase):
// every credential is saved sealed with it and the seal key (package internal/broker/seal), so what
// the vault hands out is useless without brokerd and the person, and a release is the person
// opening one. Under every other provider a credential is sealed with the seal key alone.
type sealer interface {
	Ask(ctx context.Context, r presence.Request, repeat bool, check func(pass []byte) error) error
}

// MinPassphrase is the shortest passphrase, in characters, that may seal the first credential
// (later ones are sealed with the same passphrase, checked against a saved credential).
const MinPassphrase = 12

// openSealed reads the sealed secret of alias at origin o from store — useless without the
// passphrase, so it is read before anyone is asked — and has the person open it by typing the
// passphrase at the prompt about req. The caller zeroes the secret.
func (s *Server) openSealed(ctx context.Context, sp sealer, store vault.Store, req presence.Request, o, alias string) (vault.Record, []byte, error) {
	vctx, cancel := context.WithTimeout(ctx, VaultTimeout)
	got, text, err := store.Secret(vctx, o, alias)
	cancel()
	if err != nil {
		return got, nil, err
	}
	defer credential.Zero(text)
	if !credential.IsSealed(text) || !seal.NeedsPassphrase(text) && seal.Valid(text) == nil {
		return got, nil, wire.Errorf(wire.CodeNotSealed, "alias %q was saved without the passphrase (in plain text, or under another presence provider), and the passphrase provider releases only credentials sealed with it; nothing was asked or released", alias)
	}
	kind, err := credential.SavedKind(text)
	if err != nil {
		return got, nil, wire.Errorf(wire.CodeAliasUnknown, "the saved record of alias %q is not a well-formed sealed credential; nothing was asked or released", alias)
	}
	b := binding(got, kind)
	var (
		secret []byte
		again  []byte     // a v1 seal sealed again with the seal key, for the store
		ref    *sealedRef // another saved credential, read at the first wrong try
	)
	defer func() { credential.Zero(again) }()
	defer func() {
		if ref != nil {
			credential.Zero(ref.text)
		}
	}()
	err = sp.Ask(ctx, req, false, func(pass []byte) error {
		pt, err := seal.Open(text, s.Key, pass, b)
		if errors.Is(err, seal.ErrWrongPassphrase) {
			// A passphrase that opens another saved credential is the right one: this record
			// was altered or copied from another one, and asking again would only have the
			// person try their other passwords (red-team round 6b).
			if ref == nil {
				r, rerr := s.sealRef(ctx, got.Origin, got.Alias)
				if rerr != nil {
					return rerr
				}
				ref = &r
			}
			if ref.text != nil {
				if pt, rerr := seal.Open(ref.text, s.Key, pass, ref.b); rerr == nil {
					credential.Zero(pt)
					return wire.Errorf(wire.CodeAliasUnknown, "the passphrase is right, but the saved record of alias %q does not open with it: it was altered, or copied from another record; nothing was released", alias).
						WithHint("remove the alias and add it again (headless credentials remove …; headless credentials add …)")
				}
			}
			return fmt.Errorf("%w: %w", presence.ErrTryAgain, err)
		}
		if err != nil {
			return wire.Errorf(wire.CodeAliasUnknown, "the saved record of alias %q: %w; nothing was released", alias, err)
		}
		if !seal.Current(text) {
			// Sealed before the seal key existed: sealed again, now, with it.
			if again, err = seal.Seal(pt, s.Key, pass, b); err != nil {
				credential.Zero(pt)
				return err
			}
		}
		secret = pt
		return nil
	})
	if err != nil {
		credential.Zero(secret)
		return got, nil, err
	}
	if again != nil {
		s.sealAgain(ctx, store, got, again)
	}
	if secret == nil {
		// A provider that returned without a granted check: never an empty password.
		return got, nil, wire.Errorf(wire.CodePresenceDenied, "the passphrase prompt ended without opening alias %q; nothing was released", alias)
	}
	return got, secret, nil
}

// trusted refuses (BROKER_UNTRUSTED) what needs the seal key and the known sign-in paths
// when this brokerd lacks either.
func (s *Server) trusted(what string) error {
	if why := s.untrusted(); why != "" {
		return wire.Errorf(wire.CodeBrokerUntrusted, "%s: %s", what, why)
	}
	return nil
}

// untrusted is why this brokerd may release and save nothing ("" when it may).
func (s *Server) untrusted() string {
	switch {
	case s.Key != nil && s.Paths != nil:
		return ""
	case s.Untrusted != "":
		return s.Untrusted
	case s.Key == nil:
		return "this brokerd has no seal key"
	default:
		return "this brokerd has nowhere to keep the credentials' sign-in paths (no state directory)"
	}
}

// openKeyOnly opens text, the saved secret of rec read inside a presence grant of a provider
// without a passphrase, with the seal key, and zeroes text. A credential of the vault saved in
// plain text before the seal key existed is returned as it is and sealed in the store, now (an
// isolated session's store, brokerd's memory, holds plain secrets); one sealed with a
// passphrase is refused (its sealed text would otherwise be typed into the page).
func (s *Server) openKeyOnly(ctx context.Context, store vault.Store, rec vault.Record, text []byte) ([]byte, error) {
	if !credential.IsSealed(text) && store != s.Vault {
		return text, nil
	}
	if !credential.IsSealed(text) {
		again, err := s.sealKeyOnly(rec, text)
		if err != nil {
			credential.Zero(text)
			return nil, err
		}
		s.sealAgain(ctx, store, rec, again)
		credential.Zero(again)
		return text, nil
	}
	defer credential.Zero(text)
	if seal.NeedsPassphrase(text) {
		return nil, wire.Errorf(wire.CodeSealed, "alias %q is sealed with a passphrase, and this brokerd's presence provider cannot open it; nothing was released", rec.Alias)
	}
	kind, err := credential.SavedKind(text)
	if err != nil {
		return nil, wire.Errorf(wire.CodeAliasUnknown, "the saved record of alias %q is not a well-formed sealed credential; nothing was released", rec.Alias)
	}
	pt, err := seal.Open(text, s.Key, nil, binding(rec, kind))
	if err != nil {
		return nil, wire.Errorf(wire.CodeAliasUnknown, "the saved record of alias %q does not open with this machine's seal key (it was altered, copied from another record, or sealed on another machine); nothing was released", rec.Alias).
			WithHint("remove the alias and add it again (headless credentials remove …; headless credentials add …)")
	}
	return pt, nil
}

// sealKeyOnly seals secret (a stored secret, as the CLI sent it) for rec with the seal key.
func (s *Server) sealKeyOnly(rec vault.Record, secret []byte) ([]byte, error) {
	kind, err := credential.StoredKind(secret)
	if err != nil {
		return nil, err
	}
	if credential.IsSealed(secret) {
		return nil, wire.Errorf(wire.CodeInvalidArgument, "a password may not start with %q, the mark of a sealed credential; nothing was saved", credential.SealedPrefix)
	}
	return seal.Seal(secret, s.Key, nil, binding(rec, kind))
}

// binding is what a secret of kind saved for rec is sealed to.
func binding(rec vault.Record, kind credential.Kind) seal.Binding {
	return seal.Binding{Origin: rec.Origin, Account: rec.Account, Alias: rec.Alias,
		TOTP: kind == credential.KindTOTP, Passkey: kind == credential.KindPasskey}
}

// sealAgain replaces the saved secret of rec with again, its new seal. A failure costs
// nothing but the next use's try: the old record is still whole (Replace is one step).
func (s *Server) sealAgain(ctx context.Context, store vault.Store, rec vault.Record, again []byte) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), VaultTimeout)
	defer cancel()
	if err := store.Replace(ctx, rec.Origin, rec.Alias, again); err != nil {
		s.log().Warn("could not seal a credential again with the seal key", "origin", rec.Origin, "alias", rec.Alias, "err", err)
		return
	}
	s.log().Info("sealed a credential again with the seal key", "origin", rec.Origin, "alias", rec.Alias)
}

// sealNew asks the person to seal secret (a stored secret, as the CLI sent it) for rec with the
// passphrase, and returns the sealed text. When the vault holds a sealed credential already,
// the passphrase must open the oldest of them (so that every credential shares the one
// passphrase the person knows, and a typo is caught now rather than at the first sign-in);
// when it holds none, this passphrase is chosen now: asked twice, at least MinPassphrase
// characters.
func (s *Server) sealNew(ctx context.Context, sp sealer, peer Peer, session string, rec vault.Record, secret []byte) ([]byte, error) {
	kind, err := credential.StoredKind(secret)
	if err != nil {
		return nil, err
	}
	if credential.IsSealed(secret) {
		return nil, wire.Errorf(wire.CodeInvalidArgument, "a password may not start with %q, the mark of a sealed credential; nothing was saved", credential.SealedPrefix)
	}
	ref, err := s.sealRef(ctx, "", "")
	if err != nil {
		return nil, err
	}
	defer credential.Zero(ref.text)
	req := presence.Request{Save: true, Passkey: kind == credential.KindPasskey, Origin: rec.Origin, Account: rec.Account, Alias: rec.Alias, Session: session, PID: peer.PID}
	if chain := s.chainOf(peer); len(chain) > 0 {
		req.Exe = chain[0].Exe
		if req.Exe == "" && chain[0].Comm != "" {
			// The CLI is undumpable and of another gid: the kernel shows brokerd its name, not
			// its executable. Say so rather than "unknown".
			req.Exe = chain[0].Comm + " (its name; the executable cannot be read)"
		}
	}
	b := binding(rec, kind)
	var sealed []byte
	err = sp.Ask(ctx, req, ref.text == nil, func(pass []byte) error {
		if ref.text == nil && utf8.RuneCount(pass) < MinPassphrase {
			return fmt.Errorf("%w: choose a passphrase of at least %d characters", presence.ErrTryAgain, MinPassphrase)
		}
		if ref.text != nil {
			pt, err := seal.Open(ref.text, s.Key, pass, ref.b)
			credential.Zero(pt)
			if errors.Is(err, seal.ErrWrongPassphrase) {
				return fmt.Errorf("%w: that is not the passphrase your saved credentials are sealed with", presence.ErrTryAgain)
			}
			if err != nil {
				return err
			}
		}
		var err error
		sealed, err = seal.Seal(secret, s.Key, pass, b)
		return err
	})
	if err != nil {
		return nil, err
	}
	return sealed, nil
}

// sealedRef is a saved sealed credential that a new passphrase is checked against.
type sealedRef struct {
	text []byte // nil: the vault holds none
	b    seal.Binding
}

// maxRefTries bounds the sealed-looking records read and found malformed while looking for a
// sealed credential to check against (plain records, saved under another provider, are
// skipped without counting: any number of them may be older than the first sealed one).
const maxRefTries = 8

// sealRef returns the oldest sealed credential of the vault (its creation time is the
// keyring's, which no caller sets) other than alias at origin o, or none.
func (s *Server) sealRef(ctx context.Context, o, alias string) (sealedRef, error) {
	ctx, cancel := context.WithTimeout(ctx, VaultTimeout)
	defer cancel()
	recs, err := s.Vault.List(ctx, "")
	if err != nil {
		return sealedRef{}, err
	}
	slices.SortStableFunc(recs, func(a, b vault.Record) int { return a.Created.Compare(b.Created) })
	recs = slices.DeleteFunc(recs, func(r vault.Record) bool { return r.Origin == o && strings.EqualFold(r.Alias, alias) })
	bad := 0
	for _, r := range recs {
		if bad == maxRefTries {
			break
		}
		got, text, err := s.Vault.Secret(ctx, r.Origin, r.Alias)
		if err != nil {
			if errors.Is(err, vault.ErrAliasUnknown) {
				continue // removed meanwhile
			}
			return sealedRef{}, err
		}
		if !credential.IsSealed(text) || !seal.NeedsPassphrase(text) && seal.Valid(text) == nil {
			credential.Zero(text) // plain, or sealed without a passphrase: nothing to check against
			continue
		}
		kind, verr := credential.SavedKind(text)
		if verr != nil || seal.Valid(text) != nil {
			// Not one to check a passphrase against (an altered record, say): the next.
			credential.Zero(text)
			bad++
			continue
		}
		return sealedRef{text: text, b: binding(got, kind)}, nil
	}
	return sealedRef{}, nil
}
