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
)

// VersionResult answers "version".
type VersionResult struct {
	Version  string `json:"version"`
	Protocol int    `json:"protocol"`
	PID      int    `json:"pid"`
	Presence string `json:"presence"`
}

// ListParams filters "credentials.list"; an empty Origin lists every origin.
type ListParams struct {
	Origin string `json:"origin,omitempty"`
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
	Origin string `json:"origin"`
	Alias  string `json:"alias"`
}

// ChallengeParams is "challenge.issue".
type ChallengeParams struct {
	Session  string `json:"session"`
	Document string `json:"document"`
	Origin   string `json:"origin"`
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
