package broker

import (
	"context"
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
	out := brokerapi.ListResult{Credentials: make([]brokerapi.Credential, 0, len(recs))}
	for _, r := range recs {
		out.Credentials = append(out.Credentials, listed(r))
	}
	return out, nil
}

func (s *Server) add(ctx context.Context, conn *rpc.Conn, p brokerapi.AddParams) (brokerapi.Credential, error) {
	if err := s.trusted("nothing was saved"); err != nil {
		return brokerapi.Credential{}, err
	}
	o, err := origin.Canonical(p.Origin)
	if err != nil {
		return brokerapi.Credential{}, err
	}
	store, err := s.storeFor(conn, p.Session)
	if err != nil {
		return brokerapi.Credential{}, err
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
	if err := s.write(ctx, p.Session, true, func(ctx context.Context) error { return store.Add(ctx, rec, saved) }); err != nil {
		return brokerapi.Credential{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, VaultTimeout)
	defer cancel()
	// Report what the store recorded (its creation time).
	recs, err := store.List(ctx, o)
	if err == nil {
		for _, r := range recs {
			if strings.EqualFold(r.Alias, p.Alias) {
				return listed(r), nil
			}
		}
	}
	return listed(rec), nil
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
	return struct{}{}, s.write(ctx, p.Session, false, func(ctx context.Context) error { return store.Remove(ctx, o, p.Alias) })
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
	return brokerapi.Credential{Origin: r.Origin, Account: r.Account, Alias: r.Alias, Created: r.Created, TOTP: r.TOTP}
}
