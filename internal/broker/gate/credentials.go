package gate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/origin"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

func (s *Server) list(ctx context.Context, conn *rpc.Conn, p brokerapi.ListParams) (brokerapi.ListResult, error) {
	o := ""
	if p.Origin != "" {
		var err error
		if o, err = origin.Canonical(p.Origin); err != nil {
			return brokerapi.ListResult{}, err
		}
	}
	store, err := s.storeFor(conn, p.Session)
	if err != nil {
		return brokerapi.ListResult{}, err
	}
	recs, err := store.List(ctx, o)
	if err != nil {
		return brokerapi.ListResult{}, err
	}
	var paths []pathEntry
	if book := s.bookFor(p.Session); book != nil {
		// The records by origin: the match runs under the book's lock, once per entry.
		byOrigin := map[string][]vault.Record{}
		for _, r := range recs {
			byOrigin[r.Origin] = append(byOrigin[r.Origin], r)
		}
		paths, err = book.entries(func(e pathEntry) bool {
			return slices.ContainsFunc(byOrigin[e.Origin], func(r vault.Record) bool { return e.names(r.Origin, r.Alias) })
		})
		if err != nil {
			return brokerapi.ListResult{}, err
		}
	}
	out := brokerapi.ListResult{Credentials: make([]brokerapi.Credential, 0, len(recs))}
	for _, r := range recs {
		c := listed(r)
		if i := slices.IndexFunc(paths, func(e pathEntry) bool { return e.names(r.Origin, r.Alias) }); i >= 0 {
			c.LoginPaths, c.AlsoOrigins = paths[i].known(), slices.Clone(paths[i].Also)
		}
		out.Credentials = append(out.Credentials, c)
	}
	return out, nil
}

// bookFor is the known sign-in paths of the store session names ("": the vault), once
// storeFor has checked the session is the caller's.
func (s *Server) bookFor(session string) pathBook {
	if session == "" {
		return s.bookOf(nil)
	}
	return s.bookOf(s.isolated(session))
}

func (s *Server) add(ctx context.Context, conn *rpc.Conn, p brokerapi.AddParams) (brokerapi.Credential, error) {
	if err := s.trusted("nothing was saved"); err != nil {
		return brokerapi.Credential{}, err
	}
	o, err := origin.Canonical(p.Origin)
	if err != nil {
		return brokerapi.Credential{}, err
	}
	paths, err := cleanLoginPaths(p.LoginPaths)
	if err != nil {
		return brokerapi.Credential{}, err
	}
	also, err := cleanAlso(p.AlsoOrigins, o)
	if err != nil {
		return brokerapi.Credential{}, err
	}
	store, err := s.storeFor(conn, p.Session)
	if err != nil {
		return brokerapi.Credential{}, err
	}
	book := s.bookFor(p.Session)
	if book == nil {
		return brokerapi.Credential{}, s.trusted("nothing was saved")
	}
	rec := vault.Record{Origin: o, Account: p.Account, Alias: p.Alias}
	var saved []byte
	if sp, ok := s.Presence.(sealer); ok {
		// Sealed with the seal key and the person's passphrase, asked for now, in the vault
		// and in an isolated session's store alike: a release opens it the same way.
		saved, err = s.sealNew(ctx, sp, conn.Peer, p.Session, rec, p.Secret)
	} else if store == s.Vault {
		// Sealed with the seal key alone: what the keyring hands any program of the user
		// opens nothing without brokerd. (An isolated session's store is brokerd's memory.)
		saved, err = s.sealKeyOnly(rec, p.Secret)
	} else {
		saved = append([]byte(nil), p.Secret...)
	}
	if err != nil {
		return brokerapi.Credential{}, err
	}
	defer credential.Zero(saved)
	// The new credential's sign-in paths are the person's (none: learned at its first sign-in),
	// whatever an earlier credential of that alias had; a credential whose paths cannot be
	// kept is taken out again.
	entry := pathEntry{Origin: o, Alias: p.Alias, Account: p.Account, Set: paths, Also: also}
	err = s.write(ctx, p.Session, true, func(ctx context.Context) error {
		if err := store.Add(ctx, rec, saved); err != nil {
			return err
		}
		err := setPaths(book, entry)
		if errors.Is(err, errPathsFull) {
			err = s.prune(ctx, store, book, entry)
		}
		if err != nil {
			if rerr := store.Remove(ctx, o, p.Alias); rerr != nil {
				return fmt.Errorf("%w (taking the new credential out again failed: %v)", err, rerr)
			}
			return err
		}
		return nil
	})
	if err != nil {
		return brokerapi.Credential{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, VaultTimeout)
	defer cancel()
	// Report what the store recorded (its creation time).
	out := listed(rec)
	if recs, err := store.List(ctx, o); err == nil {
		for _, r := range recs {
			if strings.EqualFold(r.Alias, p.Alias) {
				out = listed(r)
			}
		}
	}
	out.LoginPaths, out.AlsoOrigins = paths, also
	return out, nil
}

// prune makes room for entry by dropping the entries of credentials no longer in store
// (removed by another program than brokerd), then sets it.
func (s *Server) prune(ctx context.Context, store vault.Store, book pathBook, entry pathEntry) error {
	recs, err := store.List(ctx, "")
	if err != nil {
		return err
	}
	if err := prunePaths(book, func(o, alias string) bool {
		return slices.ContainsFunc(recs, func(r vault.Record) bool { return r.Origin == o && strings.EqualFold(r.Alias, alias) })
	}); err != nil {
		return err
	}
	return setPaths(book, entry)
}

func (s *Server) remove(ctx context.Context, conn *rpc.Conn, p brokerapi.RemoveParams) (struct{}, error) {
	o, err := origin.Canonical(p.Origin)
	if err != nil {
		return struct{}{}, err
	}
	store, err := s.storeFor(conn, p.Session)
	if err != nil {
		return struct{}{}, err
	}
	book := s.bookFor(p.Session)
	return struct{}{}, s.write(ctx, p.Session, false, func(ctx context.Context) error {
		if err := store.Remove(ctx, o, p.Alias); err != nil {
			return err
		}
		// Its sign-in paths go with it. The removal stands if they cannot be dropped: an add
		// of the alias replaces them anyway.
		if book != nil {
			if err := dropPaths(book, o, p.Alias); err != nil {
				s.log().Warn("the sign-in paths of a removed credential were kept", "origin", o, "alias", p.Alias, "err", err)
			}
		}
		return nil
	})
}

// unlocker is a presence provider whose vault is locked at rest (secret-service): writes run
// while the person has it unlocked, and it can create the vault.
type unlocker interface {
	Unlocked(ctx context.Context, create bool, use func(context.Context) error) error
	Init(ctx context.Context) (created bool, err error)
	Repair(ctx context.Context) (repaired bool, err error)
}

// prompts reports whether method may wait for a prompt: the keyring's (a vault locked at
// rest), or the passphrase that seals a new credential.
func (s *Server) prompts(method string) bool {
	if method == brokerapi.MethodFilesApprove {
		return true // a file's approval is the person's, under every provider
	}
	if _, ok := s.Presence.(sealer); ok && method == brokerapi.MethodCredentialsAdd {
		return true
	}
	_, ok := s.Presence.(unlocker)
	return ok && (method == brokerapi.MethodCredentialsAdd || method == brokerapi.MethodCredentialsRm || method == brokerapi.MethodCredentialsInit || method == brokerapi.MethodCredentialsRepair)
}

// write runs a vault write, inside the provider's unlock window when the vault is locked at
// rest (the keyring prompts the person); each vault call is bounded by VaultTimeout. Writes to
// an isolated session's in-memory store (session != "") need no unlock.
func (s *Server) write(ctx context.Context, session string, create bool, fn func(context.Context) error) error {
	bounded := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, VaultTimeout)
		defer cancel()
		return fn(ctx)
	}
	if u, ok := s.Presence.(unlocker); ok && session == "" {
		return u.Unlocked(ctx, create, bounded)
	}
	return bounded(ctx)
}

// init creates the locked credentials keyring of the secret-service provider.
func (s *Server) init(ctx context.Context) (brokerapi.InitResult, error) {
	u, ok := s.Presence.(unlocker)
	if _, sealing := s.Presence.(sealer); sealing {
		return brokerapi.InitResult{}, wire.Errorf(wire.CodeInvalidArgument,
			"with the passphrase presence provider there is nothing to create: the first 'credentials add' asks you to choose the passphrase").
			WithHint("save a credential: headless credentials add --origin O --account A --alias NAME")
	}
	if !ok {
		return brokerapi.InitResult{}, wire.Errorf(wire.CodeInvalidArgument,
			"'credentials init' creates the locked keyring of the secret-service presence provider; this brokerd uses %q", s.Presence.Name())
	}
	created, err := u.Init(ctx)
	return brokerapi.InitResult{Created: created, Provider: s.Presence.Name()}, err
}

// repair is the way out of PRESENCE_AUTO_UNLOCK (presence.SecretService.Repair): only the
// person at the keyring's own prompts can complete it, and nothing is read or released.
func (s *Server) repair(ctx context.Context) (brokerapi.RepairResult, error) {
	u, ok := s.Presence.(unlocker)
	if !ok {
		return brokerapi.RepairResult{}, wire.Errorf(wire.CodeInvalidArgument,
			"'credentials repair' repairs the locked keyring of the secret-service presence provider; this brokerd uses %q", s.Presence.Name())
	}
	repaired, err := u.Repair(ctx)
	return brokerapi.RepairResult{Repaired: repaired, Provider: s.Presence.Name()}, err
}

// listed is a record as credentials.list shows it.
func listed(r vault.Record) brokerapi.Credential {
	return brokerapi.Credential{Origin: r.Origin, Account: r.Account, Alias: r.Alias, Created: r.Created, TOTP: r.TOTP, Passkey: r.Passkey}
}
