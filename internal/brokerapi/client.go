package brokerapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"

	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// ErrUnreachable is in the chain of every failure to reach brokerd at all (as opposed to errors
// it returned), with rpc.ErrUnreachable: BROKER_UNAVAILABLE.
var ErrUnreachable = wire.Sentinel(wire.CodeBrokerUnavail, "broker unreachable")

// Client is a connection to brokerd.
type Client struct{ *rpc.Client }

// Dial connects to the broker socket at path.
func Dial(ctx context.Context, path string) (*Client, error) {
	c, err := rpc.Dial(ctx, path, ErrUnreachable)
	if err != nil {
		return nil, err
	}
	return &Client{c}, nil
}

// NewClient wraps an established connection.
func NewClient(c net.Conn) *Client { return &Client{rpc.NewClient(c, ErrUnreachable)} }

// Ping asks brokerd for nothing: a brokerd that answers it is alive and serving.
func (c *Client) Ping(ctx context.Context) error { return c.Call(ctx, MethodPing, nil, nil) }

// Version asks for brokerd's version.
func (c *Client) Version(ctx context.Context) (VersionResult, error) {
	var v VersionResult
	err := c.Call(ctx, MethodVersion, nil, &v)
	return v, err
}

// List lists credential metadata, filtered by origin when origin != "".
func (c *Client) List(ctx context.Context, origin string) ([]Credential, error) {
	return c.ListIn(ctx, "", origin)
}

// ListIn lists the isolated session's store (the vault when session is "").
func (c *Client) ListIn(ctx context.Context, session, origin string) ([]Credential, error) {
	var r ListResult
	if err := c.Call(ctx, MethodCredentialsList, ListParams{Origin: origin, Session: session}, &r); err != nil {
		return nil, err
	}
	return r.Credentials, nil
}

// Init creates the locked credentials keyring of the secret-service provider (the keyring
// prompts the person for its new password).
func (c *Client) Init(ctx context.Context) (InitResult, error) {
	var r InitResult
	err := c.Call(ctx, MethodCredentialsInit, struct{}{}, &r)
	return r, err
}

// Repair has the keyring change the 'headless' keyring's password through its own prompt and
// discard a stored auto-unlock password (the way out of PRESENCE_AUTO_UNLOCK).
func (c *Client) Repair(ctx context.Context) (RepairResult, error) {
	var r RepairResult
	err := c.Call(ctx, MethodCredentialsRepair, struct{}{}, &r)
	return r, err
}

// Remove removes a credential.
func (c *Client) Remove(ctx context.Context, origin, alias string) error {
	return c.RemoveIn(ctx, "", origin, alias)
}

// RemoveIn removes a credential from the isolated session's store (the vault when session is "").
func (c *Client) RemoveIn(ctx context.Context, session, origin, alias string) error {
	return c.Call(ctx, MethodCredentialsRm, RemoveParams{Session: session, Origin: origin, Alias: alias}, nil)
}

// OpenSession registers an isolated session; its store lives as long as this connection.
func (c *Client) OpenSession(ctx context.Context, session string) error {
	return c.Call(ctx, MethodSessionOpen, SessionOpenParams{Session: session, Isolated: true}, nil)
}

// CloseSession closes an isolated session this connection opened; brokerd zeroes its store.
// ProfileCleared tells brokerd the host cleared the durable profile (audited; isolated stores
// the connection still owns are zeroed).
// ProfileClearing asks brokerd, before a clear, to set aside the space of its audit record:
// an error (AUDIT_UNAVAILABLE) means the clear must not go ahead.
func (c *Client) ProfileClearing(ctx context.Context) error {
	return c.Call(ctx, MethodProfileCleared, ProfileClearedParams{Reserve: true}, nil)
}

func (c *Client) ProfileCleared(ctx context.Context, sessionsClosed int) error {
	return c.Call(ctx, MethodProfileCleared, ProfileClearedParams{SessionsClosed: sessionsClosed}, nil)
}

func (c *Client) CloseSession(ctx context.Context, session string) error {
	return c.Call(ctx, MethodSessionClose, SessionCloseParams{Session: session}, nil)
}

// Challenge asks for a release challenge.
func (c *Client) Challenge(ctx context.Context, p ChallengeParams) (ChallengeResult, error) {
	var r ChallengeResult
	err := c.Call(ctx, MethodChallengeIssue, p, &r)
	return r, err
}

// LearnPath tells brokerd that the form sign-in of challenge ended authenticated.
func (c *Client) LearnPath(ctx context.Context, challenge string) (LearnPathResult, error) {
	var r LearnPathResult
	err := c.Call(ctx, MethodLearnPath, LearnPathParams{Challenge: challenge}, &r)
	return r, err
}

// EgressRefused tells brokerd, for the audit, that a page's request carrying a typed secret
// was refused.
func (c *Client) EgressRefused(ctx context.Context, p EgressRefusedParams) error {
	return c.Call(ctx, MethodEgressRefused, p, nil)
}

// EchoSeen tells brokerd, for the audit, that a page showed a released secret.
func (c *Client) EchoSeen(ctx context.Context, p EchoSeenParams) error {
	return c.Call(ctx, MethodEchoSeen, p, nil)
}

// Add saves a credential. secret stays owned by the caller; Add zeroes its own copies.
func (c *Client) Add(ctx context.Context, origin, account, alias string, secret []byte) (Credential, error) {
	return c.AddTo(ctx, "", origin, account, alias, secret)
}

// AddTo saves a credential into the isolated session's store (the vault when session is "").
// secret stays owned by the caller; AddTo zeroes its own copies.
func (c *Client) AddTo(ctx context.Context, session, origin, account, alias string, secret []byte) (Credential, error) {
	return c.AddCredential(ctx, AddParams{Session: session, Origin: origin, Account: account, Alias: alias, Secret: secret})
}

// AddCredential saves the credential p describes, with what the person set at enrolment (its
// sign-in paths, the other origins its sign-in may post to). p.Secret stays owned by the
// caller; AddCredential zeroes its own copies.
func (c *Client) AddCredential(ctx context.Context, p AddParams) (Credential, error) {
	id, unlock := c.Lock()
	defer unlock()
	frame, err := SecretRequestFrame(id, MethodCredentialsAdd, struct {
		Session     string   `json:"session,omitempty"`
		Origin      string   `json:"origin"`
		Account     string   `json:"account"`
		Alias       string   `json:"alias"`
		LoginPaths  []string `json:"login_paths,omitempty"`
		AlsoOrigins []string `json:"also_origins,omitempty"`
	}{p.Session, p.Origin, p.Account, p.Alias, p.LoginPaths, p.AlsoOrigins}, p.Secret)
	if err != nil {
		return Credential{}, err
	}
	resp, err := c.RoundTrip(ctx, id, frame)
	clear(frame)
	if err != nil {
		return Credential{}, err
	}
	defer clear(resp)
	var r struct {
		ID     uint64      `json:"id"`
		Result *Credential `json:"result"`
		Error  *wire.Error `json:"error"`
	}
	if err := wire.DecodeStrict(resp, &r); err != nil {
		return Credential{}, c.Unreachable(fmt.Errorf("malformed reply: %w", err))
	}
	if r.Error != nil {
		return Credential{}, r.Error
	}
	if r.Result == nil {
		return Credential{}, c.Unreachable(errors.New("empty reply"))
	}
	return *r.Result, nil
}

// Release asks brokerd to release the secret for p. The returned secret is the caller's to
// use once and zero with credential.Zero.
func (c *Client) Release(ctx context.Context, p ReleaseParams) (Released, []byte, error) {
	id, unlock := c.Lock()
	defer unlock()
	params, err := json.Marshal(p)
	if err != nil {
		return Released{}, nil, err
	}
	frame, err := wire.Encode(wire.Request{ID: id, Method: MethodRelease, Params: params})
	if err != nil {
		return Released{}, nil, err
	}
	resp, err := c.RoundTrip(ctx, id, frame)
	if err != nil {
		return Released{}, nil, err
	}
	defer clear(resp)
	var r struct {
		ID     uint64 `json:"id"`
		Result *struct {
			Released
			Secret []byte `json:"secret"`
		} `json:"result"`
		Error *wire.Error `json:"error"`
	}
	if err := wire.DecodeStrict(resp, &r); err != nil {
		if r.Result != nil {
			credential.Zero(r.Result.Secret)
		}
		return Released{}, nil, c.Unreachable(errors.New("malformed reply"))
	}
	if r.Error != nil {
		return Released{}, nil, r.Error
	}
	if r.Result == nil || len(r.Result.Secret) == 0 {
		return Released{}, nil, c.Unreachable(errors.New("release reply without a secret"))
	}
	return r.Result.Released, r.Result.Secret, nil
}

// PasskeySigned reports the sign count a released passkey reached (MethodPasskeySigned).
func (c *Client) PasskeySigned(ctx context.Context, challenge string, count uint32, uses int) error {
	return c.Call(ctx, MethodPasskeySigned, PasskeySignedParams{Challenge: challenge, SignCount: count, Uses: uses}, nil)
}

// ApproveFile asks the person to approve a staged file for uploads (a prompt: it waits for
// them).
func (c *Client) ApproveFile(ctx context.Context, p FileApproveParams) (FileEntry, error) {
	var r FileEntry
	err := c.Call(ctx, MethodFilesApprove, p, &r)
	return r, err
}

// Files lists the files the person approved for uploads.
func (c *Client) Files(ctx context.Context) (FileList, error) {
	var r FileList
	err := c.Call(ctx, MethodFilesList, nil, &r)
	return r, err
}

// RemoveFile forgets an approved file.
func (c *Client) RemoveFile(ctx context.Context, name string) (FileEntry, error) {
	var r FileEntry
	err := c.Call(ctx, MethodFilesRemove, FileRemoveParams{Name: name}, &r)
	return r, err
}
