package broker

import "time"

// Protocol is the broker.sock protocol version, reported by "version".
const Protocol = 1

// Method names on broker.sock.
const (
	MethodVersion         = "version"
	MethodPing            = "ping"
	MethodCredentialsList = "credentials.list"
	MethodCredentialsAdd  = "credentials.add"
	MethodCredentialsRm   = "credentials.remove"
	MethodCredentialsInit = "credentials.init"
	MethodChallengeIssue  = "challenge.issue"
	MethodRelease         = "release"
	MethodSessionOpen     = "session.open"
	MethodSessionClose    = "session.close"
	// MethodProfileCleared is sent by the host after 'headless profile clear': brokerd zeroes
	// every isolated store the connection still owns and audits the clear.
	MethodProfileCleared = "profile.cleared"
)

// MaxIsolated bounds the isolated-session stores brokerd keeps at once (all connections).
const MaxIsolated = 64

// MaxIsolatedRecords bounds the records of one isolated-session store.
const MaxIsolatedRecords = 64

// SessionOpenParams is "session.open": the browser host registers an isolated session, which
// gets an empty in-memory credential store owned by the registering connection. Isolated must
// be true (normal sessions use the vault and are not registered).
type SessionOpenParams struct {
	Session  string `json:"session"`
	Isolated bool   `json:"isolated"`
}

// SessionCloseParams is "session.close": the registering connection closes its isolated
// session, and the session's store is zeroed.
type SessionCloseParams struct {
	Session string `json:"session"`
}

// VersionResult answers "version".
type VersionResult struct {
	Version  string `json:"version"`
	Protocol int    `json:"protocol"`
	PID      int    `json:"pid"`
	Presence string `json:"presence"`
}

// ListParams filters "credentials.list"; an empty Origin lists every origin. A non-empty
// Session names an isolated session, whose store is listed instead of the vault.
type ListParams struct {
	Origin  string `json:"origin,omitempty"`
	Session string `json:"session,omitempty"`
}

// Credential is listed metadata. It never holds a secret.
type Credential struct {
	Origin  string    `json:"origin"`
	Account string    `json:"account"`
	Alias   string    `json:"alias"`
	Created time.Time `json:"created"`
}

// ListResult answers "credentials.list".
type ListResult struct {
	Credentials []Credential `json:"credentials"`
}

// AddParams is "credentials.add". Secret travels base64-encoded on this socket only; clients
// build the frame with AddFrame so no JSON encoder buffer holds it.
type AddParams struct {
	Session string `json:"session,omitempty"` // an isolated session's store instead of the vault
	Origin  string `json:"origin"`
	Account string `json:"account"`
	Alias   string `json:"alias"`
	Secret  []byte `json:"secret"`
}

// InitResult answers "credentials.init": whether the keyring was created now (false: it
// existed already).
type InitResult struct {
	Created  bool   `json:"created"`
	Provider string `json:"provider"`
}

// RemoveParams is "credentials.remove".
type RemoveParams struct {
	Session string `json:"session,omitempty"` // an isolated session's store instead of the vault
	Origin  string `json:"origin"`
	Alias   string `json:"alias"`
}

// ChallengeParams is "challenge.issue". A registered isolated session's challenge lists and
// releases only that session's store; any other session's, only the vault. Isolated is the
// requester's claim that Session is isolated: brokerd then refuses (SESSION_UNKNOWN) rather than
// fall back to the vault when it has no store for it.
type ChallengeParams struct {
	Session  string `json:"session"`
	Document string `json:"document"`
	Origin   string `json:"origin"`
	Isolated bool   `json:"isolated,omitempty"`
}

// ChallengeResult answers "challenge.issue": the aliases saved for exactly that origin.
type ChallengeResult struct {
	Challenge string    `json:"challenge"`
	Origin    string    `json:"origin"`
	Aliases   []string  `json:"aliases"`
	ExpiresAt time.Time `json:"expires_at"`
}

// ReleaseParams is "release": the challenge, the alias, and the session and document the
// requester is looking at now (they must match the challenge).
type ReleaseParams struct {
	Challenge string `json:"challenge"`
	Alias     string `json:"alias"`
	Session   string `json:"session"`
	Document  string `json:"document"`
}

// Released is the non-secret part of a release reply; the reply also carries "secret".
type Released struct {
	Origin  string `json:"origin"`
	Account string `json:"account"`
	Alias   string `json:"alias"`
}

// ProfileClearedParams is "profile.cleared".
type ProfileClearedParams struct {
	SessionsClosed int `json:"sessions_closed"`
}
